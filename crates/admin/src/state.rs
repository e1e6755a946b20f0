//! The admin's one state: what the configuration gives ([`AdminSettings`], known before the
//! database answers, so a bad token stops the start-up at once) and the store, put together
//! once by [`AdminSettings::build`] after the store connects. The JSON API and the panel are
//! both built from the same `Arc<AdminState>`; nothing in it is filled in later, so the
//! order of calls cannot matter.

use std::collections::HashSet;
use std::sync::Arc;

use jobwire_core::billing::Plan;
use jobwire_core::secret::Secret;
use jobwire_store::Store;

use crate::PromptLab;
use crate::api::failures::{
    FAILURE_WINDOW, FailedAttempts, MAX_FAILURES, MAX_TRACKED_CLIENTS, MAX_WAIT,
};
use crate::broadcasts::BroadcastSetup;

/// The environment variable holding the admin token.
pub const TOKEN_ENV: &str = "JOBWIRE_ADMIN_TOKEN";

/// The shortest admin token accepted, in characters.
pub const MIN_TOKEN_LEN: usize = 32;

/// The configured admin token is too short (the token itself is never shown).
#[derive(Debug, thiserror::Error)]
#[error(
    "{TOKEN_ENV} is too short: use at least {} characters \
     (e.g. `openssl rand -hex 32`), or unset it to disable the admin API",
    MIN_TOKEN_LEN
)]
pub struct AdminTokenError;

/// The configured token, as the API sees it.
#[derive(Debug)]
pub(crate) enum Token {
    /// Unset or empty: only a panel session opens the API.
    Unset,
    /// Shorter than [`MIN_TOKEN_LEN`]: refused at start-up; the API answers 503.
    TooShort,
    Valid(Secret),
}

/// What the admin side takes from the configuration, before the store connects.
#[derive(Debug)]
pub struct AdminSettings {
    token: Token,
    categories: Vec<String>,
    category_setup: CategorySetup,
    main_bot: Option<(teloxide::Bot, Secret)>,
    broadcasts: Option<BroadcastSetup>,
    prompt_lab: Option<Arc<dyn PromptLab>>,
    panel: PanelOptions,
    plans: Vec<Plan>,
    trial_days: u32,
}

impl AdminSettings {
    /// `token`: `None` (or empty) leaves the API to panel sessions; one shorter than
    /// [`MIN_TOKEN_LEN`] makes [`Self::check_token`] fail. `categories`: the
    /// configured slugs, in their configured order.
    pub fn new(token: Option<String>, categories: impl IntoIterator<Item = String>) -> Self {
        let token = match token.as_deref().map(str::trim) {
            None | Some("") => Token::Unset,
            Some(t) if t.chars().count() < MIN_TOKEN_LEN => Token::TooShort,
            Some(t) => Token::Valid(Secret::from(t)),
        };
        Self {
            token,
            categories: categories.into_iter().collect(),
            category_setup: CategorySetup::default(),
            main_bot: None,
            broadcasts: None,
            prompt_lab: None,
            panel: PanelOptions::default(),
            plans: Vec::new(),
            trial_days: 0,
        }
    }

    /// [`Self::new`] with the token from `JOBWIRE_ADMIN_TOKEN`.
    pub fn from_env(categories: impl IntoIterator<Item = String>) -> Self {
        let settings = Self::new(std::env::var(TOKEN_ENV).ok(), categories);
        if matches!(settings.token, Token::Unset) {
            tracing::info!("admin API bearer token disabled: set {TOKEN_ENV}");
        }
        settings
    }

    /// Fails when the configured token is too short; the server calls it before serving.
    pub fn check_token(&self) -> Result<(), AdminTokenError> {
        match self.token {
            Token::TooShort => Err(AdminTokenError),
            Token::Unset | Token::Valid(_) => Ok(()),
        }
    }

    /// The main bot (the one that took the payments), for refunds; without it refunds
    /// answer 503.
    pub fn main_bot(mut self, api_url: url::Url, token: Secret) -> Self {
        let bot = teloxide::Bot::new(token.expose()).set_api_url(api_url);
        self.main_bot = Some((bot, token));
        self
    }

    /// What broadcasts are created with (categories, plans, bots); without it broadcasts
    /// cannot be created (503).
    pub fn broadcasts(mut self, setup: BroadcastSetup) -> Self {
        self.broadcasts = Some(setup);
        self
    }

    /// The configured LLM, to try prompt versions with.
    pub fn prompt_lab(mut self, lab: Arc<dyn PromptLab>) -> Self {
        self.prompt_lab = Some(lab);
        self
    }

    /// The categories' configured order and the bots a category can be given (without it
    /// the panel lists the categories by slug and offers the bots they have).
    pub fn category_setup(mut self, setup: CategorySetup) -> Self {
        self.category_setup = setup;
        self
    }

    /// The plans the main bot sells (`[[billing.plans]]`) and the trial's length in days.
    pub fn plans(mut self, plans: Vec<Plan>, trial_days: u32) -> Self {
        self.plans = plans;
        self.trial_days = trial_days;
        self
    }

    /// How the panel is served (`Secure` cookies).
    pub fn panel_options(mut self, options: PanelOptions) -> Self {
        self.panel = options;
        self
    }

    /// The complete state, once the store answers.
    pub fn build(self, store: Arc<dyn Store>) -> Arc<AdminState> {
        Arc::new(AdminState {
            known_categories: self.categories.into_iter().collect(),
            category_setup: self.category_setup,
            token: self.token,
            store,
            failures: FailedAttempts::new(
                MAX_FAILURES,
                MAX_WAIT,
                FAILURE_WINDOW,
                MAX_TRACKED_CLIENTS,
            ),
            main_bot: self.main_bot,
            broadcasts: self.broadcasts,
            prompt_lab: self.prompt_lab,
            panel: self.panel,
            plans: self.plans,
            trial_days: self.trial_days,
        })
    }
}

/// How the panel is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PanelOptions {
    /// Mark the session cookie `Secure` (default; browsers accept it on `http://localhost`
    /// too). `[admin] secure_cookies = false` only for plain HTTP elsewhere.
    pub secure_cookies: bool,
}

impl Default for PanelOptions {
    fn default() -> Self {
        Self {
            secure_cookies: true,
        }
    }
}

/// What the panel needs to know of the configuration: the categories' order and the bots
/// (`[[bots]]` names) a category can be delivered by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CategorySetup {
    pub order: Vec<String>,
    pub bots: Vec<String>,
}

/// Everything the JSON API, the panel and the operations ([`crate::ops`]) use.
#[derive(Debug)]
pub struct AdminState {
    pub(crate) token: Token,
    pub(crate) store: Arc<dyn Store>,
    known_categories: HashSet<String>,
    category_setup: CategorySetup,
    /// Failed bearer tokens per client.
    pub(crate) failures: FailedAttempts,
    /// The main bot, for refunds (`refundStarPayment`); `None`: refunds answer 503.
    pub(crate) main_bot: Option<(teloxide::Bot, Secret)>,
    /// `None`: broadcasts cannot be created (503).
    pub(crate) broadcasts: Option<BroadcastSetup>,
    prompt_lab: Option<Arc<dyn PromptLab>>,
    panel: PanelOptions,
    plans: Vec<Plan>,
    trial_days: u32,
}

impl AdminState {
    /// Fails when the configured token is too short ([`AdminSettings::check_token`]).
    pub fn check_token(&self) -> Result<(), AdminTokenError> {
        match self.token {
            Token::TooShort => Err(AdminTokenError),
            Token::Unset | Token::Valid(_) => Ok(()),
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Whether `slug` is a configured category.
    pub fn knows_category(&self, slug: &str) -> bool {
        self.known_categories.contains(slug)
    }

    /// The configured category slugs, sorted.
    pub fn category_slugs(&self) -> Vec<String> {
        let mut c: Vec<String> = self.known_categories.iter().cloned().collect();
        c.sort();
        c
    }

    /// The categories' configured order and bots.
    pub fn category_setup(&self) -> &CategorySetup {
        &self.category_setup
    }

    /// The LLM prompt versions are tried with, when one is configured.
    pub fn prompt_lab(&self) -> Option<&Arc<dyn PromptLab>> {
        self.prompt_lab.as_ref()
    }

    /// How the panel is served.
    pub fn panel_options(&self) -> PanelOptions {
        self.panel
    }

    /// The plans the main bot sells, as configured.
    pub fn plans(&self) -> &[Plan] {
        &self.plans
    }

    /// The trial's length in days (0: no trial).
    pub fn trial_days(&self) -> u32 {
        self.trial_days
    }

    /// What broadcasts are created with, when configured.
    pub fn broadcast_setup(&self) -> Option<&BroadcastSetup> {
        self.broadcasts.as_ref()
    }
}
