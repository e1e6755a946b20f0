//! What the bots do with one update: the main bot's menus and dialogues, the category
//! bots' subscribe/unsubscribe and reports.
//!
//! Every handler is safe to run again for the same update: settings are written as explicit
//! target values (a toggle's callback data carries the state it sets), and the one write
//! that is not idempotent, filing a report, is the last thing that can fail — after it,
//! errors are logged and not returned, so the caller's retry never files it twice.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use jobwire_core::CategorySlug;
use jobwire_core::subscriber::MinBudget;
use jobwire_store::{NewReport, ReportKind, SubscriberSpec};
use teloxide::prelude::*;
use teloxide::types::{
    ChatId, ChatMemberKind, InlineKeyboardButton, InlineKeyboardMarkup, LinkPreviewOptions,
    MessageEntityKind, MessageId, MessageOrigin, ParseMode, UpdateKind,
};
use teloxide::{ApiError, RequestError};

use crate::BotError;
use crate::dialogue::DialogueState;
use crate::input::{self, InputError};
use crate::runtime::{BotRuntime, Inner};
use crate::texts::{self, CategoryView, Lang};

/// What became of an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Processed {
    /// Handled (including updates that need no answer).
    Handled,
    /// The same update was handled before (a redelivery): skipped.
    Duplicate,
    /// Handling failed after retries; the user was told to try again.
    Failed,
}

/// The metrics label of an update.
pub(crate) fn update_kind(update: &Update) -> &'static str {
    match &update.kind {
        UpdateKind::Message(m) if m.text().is_some_and(|t| t.starts_with('/')) => "command",
        UpdateKind::Message(_) => "message",
        UpdateKind::CallbackQuery(_) => "callback",
        UpdateKind::MyChatMember(_) => "my_chat_member",
        UpdateKind::Error(_) => "unparsed",
        _ => "other",
    }
}

/// The chat an update belongs to, to keep one chat's updates in order.
pub(crate) fn update_chat(update: &Update) -> Option<i64> {
    match &update.kind {
        UpdateKind::Message(m) | UpdateKind::EditedMessage(m) => Some(m.chat.id.0),
        UpdateKind::CallbackQuery(q) => Some(
            q.message
                .as_ref()
                .map_or_else(|| user_chat(q.from.id.0), |m| m.chat().id.0),
        ),
        UpdateKind::MyChatMember(u) => Some(u.chat.id.0),
        _ => None,
    }
}

fn user_chat(user_id: u64) -> i64 {
    i64::try_from(user_id).unwrap_or(i64::MAX)
}

/// Claims, handles (retrying transient failures) and records one update.
pub(crate) async fn process_update(
    inner: Arc<Inner>,
    rt: Arc<BotRuntime>,
    update: Update,
) -> Processed {
    let kind = update_kind(&update);
    let bot = rt.name.clone();
    metrics::counter!("bot_updates_total", "bot" => bot.clone(), "kind" => kind).increment(1);
    match inner.dedup.claim(&rt.name, update.id.0).await {
        Ok(true) => {}
        Ok(false) => {
            metrics::counter!("bot_duplicate_updates_total", "bot" => bot).increment(1);
            tracing::debug!(bot = %rt.name, update_id = update.id.0, "update handled before; skipped");
            return Processed::Duplicate;
        }
        Err(e) => {
            // Losing the user's input is worse than the rare double handling.
            tracing::warn!(bot = %rt.name, update_id = update.id.0, error = %e, "update dedup unavailable; handling anyway");
        }
    }
    let started = Instant::now();
    let chat = update_chat(&update);
    let _turn = match chat {
        Some(c) => Some(inner.chat_locks.lock(c).await),
        None => None,
    };
    let mut attempt: u32 = 0;
    let outcome = loop {
        match handle(&inner, &rt, &update).await {
            Ok(()) => break Processed::Handled,
            Err(e) if attempt < 2 && e.is_transient() => {
                attempt += 1;
                tracing::warn!(bot = %rt.name, chat_id = ?chat, attempt, error = %e, "handling an update failed; retrying");
                tokio::time::sleep(Duration::from_millis(200 * 4u64.pow(attempt - 1))).await;
            }
            Err(e) => {
                tracing::error!(bot = %rt.name, chat_id = ?chat, update_id = update.id.0, error = %e, "handling an update failed");
                metrics::counter!("bot_update_failures_total", "bot" => bot.clone()).increment(1);
                // Tell a user who wrote or tapped (not one who just blocked the bot).
                let from_user = matches!(
                    update.kind,
                    UpdateKind::Message(_) | UpdateKind::CallbackQuery(_)
                );
                if let Some(chat_id) = chat.filter(|c| *c > 0 && from_user) {
                    let lang = Lang::from_code(update_language(&update));
                    send(&rt, chat_id, texts::temporary_error(lang), None).await;
                }
                break Processed::Failed;
            }
        }
    };
    metrics::histogram!("bot_update_duration_seconds", "bot" => bot)
        .record(started.elapsed().as_secs_f64());
    outcome
}

fn update_language(update: &Update) -> Option<&str> {
    match &update.kind {
        UpdateKind::Message(m) => m.from.as_ref()?.language_code.as_deref(),
        UpdateKind::CallbackQuery(q) => q.from.language_code.as_deref(),
        _ => None,
    }
}

async fn handle(inner: &Inner, rt: &BotRuntime, update: &Update) -> Result<(), BotError> {
    match &update.kind {
        UpdateKind::Message(m) => on_message(inner, rt, m).await,
        UpdateKind::CallbackQuery(q) => on_callback(inner, rt, q).await,
        UpdateKind::MyChatMember(u) => on_my_chat_member(inner, rt, u).await,
        UpdateKind::Error(raw) => {
            tracing::warn!(bot = %rt.name, update_id = update.id.0, bytes = raw.to_string().len(), "update teloxide could not parse; ignored");
            Ok(())
        }
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------
// Telegram calls

/// Renders a teloxide error without the token (reqwest errors carry the request URL,
/// which contains it).
pub(crate) fn describe(err: &RequestError, token: &str) -> String {
    // With the causes: "error sending request: … Connection refused" says what to fix.
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    if token.is_empty() {
        text
    } else {
        text.replace(token, "<token>")
    }
}

fn no_preview() -> LinkPreviewOptions {
    LinkPreviewOptions {
        is_disabled: true,
        url: None,
        prefer_small_media: false,
        prefer_large_media: false,
        show_above_text: false,
    }
}

/// Sends an HTML message; waits out a 429 (up to twice, at most 10 s each). Failures are
/// logged (the user cannot be told anyway) and give `None`.
pub(crate) async fn send(
    rt: &BotRuntime,
    chat_id: i64,
    text: String,
    keyboard: Option<InlineKeyboardMarkup>,
) -> Option<MessageId> {
    let mut attempt = 0;
    loop {
        let mut req = rt
            .bot
            .send_message(ChatId(chat_id), text.clone())
            .parse_mode(ParseMode::Html)
            .link_preview_options(no_preview());
        if let Some(kb) = &keyboard {
            req = req.reply_markup(kb.clone());
        }
        match req.await {
            Ok(m) => return Some(m.id),
            Err(RequestError::RetryAfter(wait)) if attempt < 2 => {
                attempt += 1;
                tokio::time::sleep(wait.duration().min(Duration::from_secs(10))).await;
            }
            Err(e) => {
                tracing::warn!(bot = %rt.name, chat_id, error = %describe(&e, &rt.token), "sending a reply failed");
                return None;
            }
        }
    }
}

/// Replaces a message's text and keyboard (a menu screen); sends a new message when there
/// is none to edit or it cannot be edited. "Not modified" (a redelivered tap) is success.
async fn show(
    rt: &BotRuntime,
    chat_id: i64,
    edit: Option<MessageId>,
    text: String,
    keyboard: InlineKeyboardMarkup,
) {
    if let Some(message_id) = edit {
        let res = rt
            .bot
            .edit_message_text(ChatId(chat_id), message_id, text.clone())
            .parse_mode(ParseMode::Html)
            .link_preview_options(no_preview())
            .reply_markup(keyboard.clone())
            .await;
        match res {
            Ok(_) | Err(RequestError::Api(ApiError::MessageNotModified)) => return,
            Err(e) => {
                tracing::debug!(bot = %rt.name, chat_id, error = %describe(&e, &rt.token), "editing a menu failed; sending it anew");
            }
        }
    }
    send(rt, chat_id, text, Some(keyboard)).await;
}

// ---------------------------------------------------------------------------------------
// Callback data

/// A screen of the main bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Screen {
    Main,
    Categories,
    Filters,
    Status,
    Help,
}

/// What a button does. Encoded in ≤ 64 bytes of callback data; toggles carry the state they
/// set (`cat:web:1`), so a redelivered tap changes nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Callback {
    Screen(Screen),
    Category { slug: String, on: bool },
    Pause(bool),
    Ask(DialogueState),
}

impl Callback {
    fn encode(&self) -> String {
        match self {
            Self::Screen(s) => format!(
                "menu:{}",
                match s {
                    Screen::Main => "main",
                    Screen::Categories => "cats",
                    Screen::Filters => "filters",
                    Screen::Status => "status",
                    Screen::Help => "help",
                }
            ),
            Self::Category { slug, on } => format!("cat:{slug}:{}", u8::from(*on)),
            Self::Pause(p) => format!("pause:{}", u8::from(*p)),
            Self::Ask(state) => format!("ask:{}", ask_name(*state)),
        }
    }

    fn decode(data: &str) -> Option<Self> {
        let mut parts = data.split(':');
        let head = parts.next()?;
        let a = parts.next()?;
        let b = parts.next();
        if parts.next().is_some() {
            return None;
        }
        let flag = |v: Option<&str>| match v {
            Some("1") => Some(true),
            Some("0") => Some(false),
            _ => None,
        };
        match head {
            "menu" if b.is_none() => Some(Self::Screen(match a {
                "main" => Screen::Main,
                "cats" => Screen::Categories,
                "filters" => Screen::Filters,
                "status" => Screen::Status,
                "help" => Screen::Help,
                _ => return None,
            })),
            "cat" => Some(Self::Category {
                slug: CategorySlug::parse(a).ok()?.as_str().to_owned(),
                on: flag(b)?,
            }),
            "pause" if b.is_none() => Some(Self::Pause(flag(Some(a))?)),
            "ask" if b.is_none() => Some(Self::Ask(match a {
                "include" => DialogueState::Include,
                "exclude" => DialogueState::Exclude,
                "budget" => DialogueState::MinBudget,
                "quiet" => DialogueState::QuietHours,
                "report" => DialogueState::Report,
                _ => return None,
            })),
            _ => None,
        }
    }
}

fn ask_name(state: DialogueState) -> &'static str {
    match state {
        DialogueState::Include => "include",
        DialogueState::Exclude => "exclude",
        DialogueState::MinBudget => "budget",
        DialogueState::QuietHours => "quiet",
        DialogueState::Report => "report",
    }
}

fn button(text: impl Into<String>, cb: &Callback) -> InlineKeyboardButton {
    InlineKeyboardButton::callback(text.into(), cb.encode())
}

fn main_keyboard(lang: Lang, paused: bool) -> InlineKeyboardMarkup {
    let l = texts::labels(lang);
    let pause = if paused {
        button(l.resume, &Callback::Pause(false))
    } else {
        button(l.pause, &Callback::Pause(true))
    };
    InlineKeyboardMarkup::new(vec![
        vec![
            button(l.categories, &Callback::Screen(Screen::Categories)),
            button(l.filters, &Callback::Screen(Screen::Filters)),
        ],
        vec![pause, button(l.status, &Callback::Screen(Screen::Status))],
        vec![
            button(l.report, &Callback::Ask(DialogueState::Report)),
            button(l.help, &Callback::Screen(Screen::Help)),
        ],
    ])
}

fn back_keyboard(lang: Lang) -> InlineKeyboardMarkup {
    InlineKeyboardMarkup::new(vec![vec![button(
        texts::labels(lang).back,
        &Callback::Screen(Screen::Main),
    )]])
}

fn filters_keyboard(lang: Lang) -> InlineKeyboardMarkup {
    let l = texts::labels(lang);
    InlineKeyboardMarkup::new(vec![
        vec![
            button(l.include, &Callback::Ask(DialogueState::Include)),
            button(l.exclude, &Callback::Ask(DialogueState::Exclude)),
        ],
        vec![
            button(l.budget, &Callback::Ask(DialogueState::MinBudget)),
            button(l.quiet, &Callback::Ask(DialogueState::QuietHours)),
        ],
        vec![button(l.back, &Callback::Screen(Screen::Main))],
    ])
}

fn categories_keyboard(
    lang: Lang,
    views: &[CategoryView],
    selected: &[String],
) -> InlineKeyboardMarkup {
    let l = texts::labels(lang);
    let mut rows = Vec::new();
    for v in views {
        let on = selected.contains(&v.slug);
        let label = format!("{} {}", if on { "✅" } else { "▫️" }, v.name);
        let mut row = vec![button(
            label,
            &Callback::Category {
                slug: v.slug.clone(),
                on: !on,
            },
        )];
        if on
            && !v.delivered_by_main
            && let Ok(url) = url::Url::parse(&v.start_link())
        {
            row.push(InlineKeyboardButton::url(
                format!("{} @{}", l.open_bot, v.bot_username),
                url,
            ));
        }
        rows.push(row);
    }
    rows.push(vec![button(l.back, &Callback::Screen(Screen::Main))]);
    InlineKeyboardMarkup::new(rows)
}

// ---------------------------------------------------------------------------------------
// One conversation turn

/// The chat, bot and user an update is about.
struct Turn<'a> {
    inner: &'a Inner,
    rt: &'a BotRuntime,
    chat_id: i64,
    lang: Lang,
    /// How the user is called (`@username` or first and last name).
    user_name: Option<String>,
}

fn display_name(user: &teloxide::types::User) -> String {
    match &user.username {
        Some(u) => format!("@{u}"),
        None => match &user.last_name {
            Some(l) => format!("{} {l}", user.first_name),
            None => user.first_name.clone(),
        },
    }
}

/// The subscriber as stored (or a fresh one) to change, and whether it is blocked.
struct Loaded {
    spec: SubscriberSpec,
    /// As stored, `None` for a new subscriber.
    stored: Option<SubscriberSpec>,
    blocked: bool,
}

impl Loaded {
    fn exists(&self) -> bool {
        self.stored.is_some()
    }
}

impl Turn<'_> {
    async fn load(&self) -> Result<Loaded, BotError> {
        let row = self.inner.store.subscriber_by_chat(self.chat_id).await?;
        Ok(match row {
            Some(row) => {
                let stored = row.to_spec();
                let mut spec = stored.clone();
                if spec.name.is_none() {
                    spec.name.clone_from(&self.user_name);
                }
                Loaded {
                    spec,
                    stored: Some(stored),
                    blocked: row.blocked,
                }
            }
            None => Loaded {
                spec: SubscriberSpec {
                    chat_id: self.chat_id,
                    name: self.user_name.clone(),
                    categories: Vec::new(),
                    include: Vec::new(),
                    exclude: Vec::new(),
                    paused: false,
                    quiet_hours: None,
                    min_budget: None,
                },
                stored: None,
                blocked: false,
            },
        })
    }

    /// Writes the subscriber when it is new or changed. (Every write makes the dispatchers
    /// rebuild their subscriber index, so writes that change nothing are skipped.)
    async fn save(&self, loaded: &Loaded) -> Result<(), BotError> {
        if loaded.stored.as_ref() != Some(&loaded.spec) {
            self.inner
                .store
                .upsert_subscriber(&loaded.spec, Utc::now())
                .await?;
        }
        Ok(())
    }

    async fn send(&self, text: String, keyboard: Option<InlineKeyboardMarkup>) {
        send(self.rt, self.chat_id, text, keyboard).await;
    }

    fn settings(&self, loaded: &Loaded) -> String {
        let budget = budget_of(&loaded.spec);
        texts::settings(
            self.lang,
            &loaded.spec,
            loaded.blocked,
            budget.as_ref(),
            &self.inner.views,
        )
    }

    /// Keeps the categories in the configured order (unknown ones last).
    fn sort_categories(&self, list: &mut [String]) {
        list.sort_by_key(|slug| {
            self.inner
                .views
                .iter()
                .position(|v| &v.slug == slug)
                .unwrap_or(usize::MAX)
        });
    }

    async fn screen(&self, screen: Screen, edit: Option<MessageId>) -> Result<(), BotError> {
        let loaded = self.load().await?;
        let (text, keyboard) = match screen {
            Screen::Main => (
                texts::menu(self.lang, &self.settings(&loaded)),
                main_keyboard(self.lang, loaded.spec.paused),
            ),
            Screen::Categories => (
                texts::categories_screen(self.lang, &self.inner.views, &loaded.spec.categories),
                categories_keyboard(self.lang, &self.inner.views, &loaded.spec.categories),
            ),
            Screen::Filters => (
                texts::filters_screen(self.lang, &self.settings(&loaded)),
                filters_keyboard(self.lang),
            ),
            Screen::Status => (self.settings(&loaded), back_keyboard(self.lang)),
            Screen::Help => (
                texts::help_main(self.lang, &self.inner.views),
                back_keyboard(self.lang),
            ),
        };
        show(self.rt, self.chat_id, edit, text, keyboard).await;
        Ok(())
    }

    async fn clear_dialogue(&self) -> Result<Option<DialogueState>, BotError> {
        let d = &self.inner.dialogues;
        let state = d.get(&self.rt.name, self.chat_id).await?;
        if state.is_some() {
            d.clear(&self.rt.name, self.chat_id).await?;
        }
        Ok(state)
    }

    // ---- main bot ----

    async fn main_start(&self, payload: &str) -> Result<(), BotError> {
        let mut loaded = self.load().await?;
        if let Some(v) = self.inner.views.iter().find(|v| v.slug == payload)
            && !loaded.spec.categories.contains(&v.slug)
        {
            loaded.spec.categories.push(v.slug.clone());
            self.sort_categories(&mut loaded.spec.categories);
        }
        self.save(&loaded).await?;
        if loaded.blocked {
            self.inner
                .store
                .set_subscriber_blocked(self.chat_id, false, Utc::now())
                .await?;
            loaded.blocked = false;
        }
        if !loaded.exists() {
            tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, "new subscriber");
        }
        self.send(
            texts::menu(self.lang, &self.settings(&loaded)),
            Some(main_keyboard(self.lang, loaded.spec.paused)),
        )
        .await;
        Ok(())
    }

    async fn set_paused(&self, paused: bool, edit: Option<MessageId>) -> Result<String, BotError> {
        let mut loaded = self.load().await?;
        loaded.spec.paused = paused;
        self.save(&loaded).await?;
        let note = texts::paused(self.lang, paused);
        match edit {
            Some(_) => {
                show(
                    self.rt,
                    self.chat_id,
                    edit,
                    texts::menu(self.lang, &self.settings(&loaded)),
                    main_keyboard(self.lang, paused),
                )
                .await;
            }
            None => {
                self.send(note.clone(), Some(main_keyboard(self.lang, paused)))
                    .await;
            }
        }
        Ok(note)
    }

    async fn ask(&self, state: DialogueState) -> Result<(), BotError> {
        let loaded = self.load().await?;
        let o = &self.inner.options;
        let prompt = match state {
            DialogueState::Include => {
                texts::ask_include(self.lang, &loaded.spec.include, o.max_keywords)
            }
            DialogueState::Exclude => {
                texts::ask_exclude(self.lang, &loaded.spec.exclude, o.max_keywords)
            }
            DialogueState::MinBudget => {
                texts::ask_budget(self.lang, budget_of(&loaded.spec).as_ref())
            }
            DialogueState::QuietHours => {
                texts::ask_quiet(self.lang, loaded.spec.quiet_hours.as_ref())
            }
            DialogueState::Report => texts::ask_report(self.lang),
        };
        self.inner
            .dialogues
            .set(&self.rt.name, self.chat_id, state)
            .await?;
        self.send(prompt, None).await;
        Ok(())
    }

    /// The answer to a pending question.
    async fn input(&self, state: DialogueState, m: &Message) -> Result<(), BotError> {
        let text = m.text().or_else(|| m.caption()).unwrap_or("");
        let o = &self.inner.options;
        let mut loaded = self.load().await?;
        let reply = match state {
            DialogueState::Include | DialogueState::Exclude => {
                match input::parse_keywords(text, o.max_keywords, o.max_keyword_chars) {
                    Err(e) => return self.refuse(&e).await,
                    Ok(list) => {
                        let list = list.unwrap_or_default();
                        if state == DialogueState::Include {
                            loaded.spec.include.clone_from(&list);
                            texts::include_saved(self.lang, &list)
                        } else {
                            loaded.spec.exclude.clone_from(&list);
                            texts::exclude_saved(self.lang, &list)
                        }
                    }
                }
            }
            DialogueState::MinBudget => {
                let default_currency = match self.lang {
                    Lang::Ru => "RUB",
                    Lang::En => "USD",
                };
                match input::parse_min_budget(text, default_currency) {
                    Err(e) => return self.refuse(&e).await,
                    Ok(mut budget) => {
                        // A stricter setting made elsewhere (e.g. by an admin) is kept.
                        let strict = budget_of(&loaded.spec).is_some_and(|b| b.require_stated);
                        if let Some(b) = budget.as_mut() {
                            b.require_stated = strict;
                        }
                        loaded.spec.min_budget = budget.as_ref().map(budget_json);
                        texts::budget_saved(self.lang, budget.as_ref())
                    }
                }
            }
            DialogueState::QuietHours => {
                let previous = loaded
                    .spec
                    .quiet_hours
                    .as_ref()
                    .map(|q| q.time_zone.clone());
                match input::parse_quiet_hours(text, previous.as_deref()) {
                    Err(e) => return self.refuse(&e).await,
                    Ok(q) => {
                        loaded.spec.quiet_hours.clone_from(&q);
                        texts::quiet_saved(self.lang, q.as_ref())
                    }
                }
            }
            DialogueState::Report => return self.report_missed(m).await,
        };
        self.save(&loaded).await?;
        self.inner
            .dialogues
            .clear(&self.rt.name, self.chat_id)
            .await?;
        tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, setting = ask_name(state), "setting changed");
        self.send(reply, Some(filters_keyboard(self.lang))).await;
        Ok(())
    }

    /// A refused input: explain, keep the question open.
    async fn refuse(&self, e: &InputError) -> Result<(), BotError> {
        self.send(texts::input_error(self.lang, e), None).await;
        Ok(())
    }

    async fn report_missed(&self, m: &Message) -> Result<(), BotError> {
        let Some(text) = message_text(m) else {
            self.send(texts::report_needs_text(self.lang), None).await;
            return Ok(());
        };
        let report = NewReport {
            chat_id: self.chat_id,
            post_id: None,
            kind: ReportKind::Missed,
            text: truncate(text, self.inner.options.max_report_chars),
            link: link_of(m),
        };
        let id = self.inner.store.insert_report(&report, Utc::now()).await?;
        // The report exists now: nothing below may fail the update (a retry would file it
        // again).
        tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, report_id = id, "missed vacancy reported");
        metrics::counter!("bot_reports_total", "kind" => "missed").increment(1);
        if let Err(e) = self
            .inner
            .dialogues
            .clear(&self.rt.name, self.chat_id)
            .await
        {
            tracing::warn!(bot = %self.rt.name, chat_id = self.chat_id, error = %e, "could not end the report dialogue");
        }
        self.send(
            texts::report_thanks(self.lang, id),
            Some(back_keyboard(self.lang)),
        )
        .await;
        Ok(())
    }

    // ---- category bots ----

    /// The categories a `/start` or `/stop` is about: the one named by a deep link, or
    /// every category the bot delivers.
    fn target_categories(&self, payload: &str) -> Vec<String> {
        let served: Vec<String> = self
            .rt
            .categories
            .iter()
            .map(|c| c.as_str().to_owned())
            .collect();
        if served.iter().any(|s| s == payload) {
            vec![payload.to_owned()]
        } else {
            served
        }
    }

    fn category_names(&self, slugs: &[String]) -> Vec<String> {
        slugs
            .iter()
            .map(|s| {
                self.inner
                    .views
                    .iter()
                    .find(|v| &v.slug == s)
                    .map_or_else(|| s.clone(), |v| v.name.clone())
            })
            .collect()
    }

    async fn category_start(&self, payload: &str) -> Result<(), BotError> {
        let targets = self.target_categories(payload);
        let mut loaded = self.load().await?;
        for slug in &targets {
            if !loaded.spec.categories.contains(slug) {
                loaded.spec.categories.push(slug.clone());
            }
        }
        self.sort_categories(&mut loaded.spec.categories);
        self.save(&loaded).await?;
        if loaded.blocked {
            self.inner
                .store
                .set_subscriber_blocked(self.chat_id, false, Utc::now())
                .await?;
        }
        tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, categories = ?targets, "subscribed through a category bot");
        self.send(
            texts::category_started(
                self.lang,
                &self.category_names(&targets),
                self.inner.main_username.as_deref(),
            ),
            None,
        )
        .await;
        Ok(())
    }

    async fn category_stop(&self, payload: &str) -> Result<(), BotError> {
        let targets = self.target_categories(payload);
        let mut loaded = self.load().await?;
        if loaded.exists() && loaded.spec.categories.iter().any(|c| targets.contains(c)) {
            loaded.spec.categories.retain(|c| !targets.contains(c));
            self.save(&loaded).await?;
            tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, categories = ?targets, "unsubscribed through a category bot");
        }
        self.send(
            texts::category_stopped(self.lang, &self.category_names(&targets)),
            None,
        )
        .await;
        Ok(())
    }

    fn category_help(&self) -> String {
        let served: Vec<String> = self
            .rt
            .categories
            .iter()
            .map(|c| c.as_str().to_owned())
            .collect();
        texts::category_help(
            self.lang,
            &self.category_names(&served),
            self.inner.main_username.as_deref(),
        )
    }

    /// `/wrong` (or `/report`) in reply to a delivered message.
    async fn report_wrong(&self, m: &Message, comment: &str) -> Result<(), BotError> {
        let Some(replied) = m.reply_to_message() else {
            self.send(texts::wrong_needs_reply(self.lang), None).await;
            return Ok(());
        };
        let Some(text) = message_text(replied) else {
            self.send(texts::wrong_needs_reply(self.lang), None).await;
            return Ok(());
        };
        let mut text = truncate(text, self.inner.options.max_report_chars);
        let comment = comment.trim();
        if !comment.is_empty() {
            text.push_str("\n\n// ");
            text.push_str(&truncate(comment, 500));
        }
        // The delivered post, so an accepted report teaches the post's own text.
        let post_id = match self
            .inner
            .store
            .post_of_message(&self.rt.name, self.chat_id, i64::from(replied.id.0))
            .await
        {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(bot = %self.rt.name, error = %e, "could not look up the reported message's post; filed without it");
                None
            }
        };
        let report = NewReport {
            chat_id: self.chat_id,
            post_id,
            kind: ReportKind::Wrong,
            text,
            link: link_of(replied),
        };
        let id = self.inner.store.insert_report(&report, Utc::now()).await?;
        tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, report_id = id, replied_message_id = replied.id.0, "wrong delivery reported");
        metrics::counter!("bot_reports_total", "kind" => "wrong").increment(1);
        self.send(texts::wrong_thanks(self.lang, id), None).await;
        Ok(())
    }
}

/// The text (or caption) of a message, if it has any non-blank one.
fn message_text(m: &Message) -> Option<&str> {
    m.text()
        .or_else(|| m.caption())
        .filter(|t| !t.trim().is_empty())
}

/// Cuts `text` to `max` characters.
fn truncate(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((i, _)) => text[..i].to_owned(),
        None => text.to_owned(),
    }
}

/// A link to the original of a message: the channel post it was forwarded from, a link
/// under its text, or the first URL in it.
fn link_of(m: &Message) -> Option<String> {
    if let Some(MessageOrigin::Channel {
        chat, message_id, ..
    }) = m.forward_origin()
        && let Some(username) = chat.username()
    {
        return Some(format!("https://t.me/{username}/{}", message_id.0));
    }
    let entities = m.entities().or_else(|| m.caption_entities()).unwrap_or(&[]);
    for e in entities {
        if let MessageEntityKind::TextLink { url } = &e.kind {
            return Some(url.to_string());
        }
    }
    let text = m.text().or_else(|| m.caption())?;
    text.split_whitespace()
        .find(|w| w.starts_with("https://") || w.starts_with("http://"))
        .map(|w| {
            w.trim_end_matches([')', ']', '.', ',', ';', '!', '?', '»', '"'])
                .to_owned()
        })
}

/// Splits `/cmd@bot args` into the lower-cased command and the rest. Commands addressed
/// to another bot are not ours.
fn parse_command<'t>(text: &'t str, username: &str) -> Option<(String, &'t str)> {
    let rest = text.strip_prefix('/')?;
    let (head, args) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    let (cmd, target) = match head.split_once('@') {
        Some((c, t)) => (c, Some(t)),
        None => (head, None),
    };
    if target.is_some_and(|t| !t.eq_ignore_ascii_case(username)) {
        return None;
    }
    if cmd.is_empty()
        || cmd.len() > 32
        || !cmd.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return None;
    }
    Some((cmd.to_ascii_lowercase(), args))
}

// ---------------------------------------------------------------------------------------
// Minimum budget as stored

/// The stored JSON of a minimum budget (what fan-out reads back).
fn budget_json(b: &MinBudget) -> String {
    serde_json::to_string(b).unwrap_or_default()
}

/// The subscriber's minimum budget, if set and readable.
fn budget_of(spec: &SubscriberSpec) -> Option<MinBudget> {
    let raw = spec.min_budget.as_deref()?;
    match serde_json::from_str(raw) {
        Ok(b) => Some(b),
        Err(e) => {
            tracing::warn!(chat_id = spec.chat_id, error = %e, "unreadable minimum budget; shown as none");
            None
        }
    }
}

// ---------------------------------------------------------------------------------------
// Update kinds

async fn on_message(inner: &Inner, rt: &BotRuntime, m: &Message) -> Result<(), BotError> {
    if !m.chat.is_private() {
        return Ok(());
    }
    let from = m.from.as_ref();
    let turn = Turn {
        inner,
        rt,
        chat_id: m.chat.id.0,
        lang: Lang::from_code(from.and_then(|u| u.language_code.as_deref())),
        user_name: from.map(display_name),
    };
    let serves_categories = !rt.categories.is_empty();
    if let Some((cmd, args)) = m.text().and_then(|t| parse_command(t, &rt.username)) {
        tracing::debug!(bot = %rt.name, chat_id = turn.chat_id, command = %cmd, "command");
        if cmd == "cancel" {
            let was = if rt.is_main {
                turn.clear_dialogue().await?
            } else {
                None
            };
            turn.send(texts::cancelled(turn.lang, was.is_some()), None)
                .await;
            return Ok(());
        }
        // Any other command ends a pending question.
        if rt.is_main {
            turn.clear_dialogue().await?;
        }
        let is_reply = m.reply_to_message().is_some();
        return match (cmd.as_str(), rt.is_main) {
            ("start", true) => turn.main_start(args).await,
            ("start", false) => turn.category_start(args).await,
            ("stop", _) if serves_categories => turn.category_stop(args).await,
            ("stop" | "pause", true) => turn.set_paused(true, None).await.map(drop),
            ("resume", true) => turn.set_paused(false, None).await.map(drop),
            ("menu", true) => turn.screen(Screen::Main, None).await,
            ("categories", true) => turn.screen(Screen::Categories, None).await,
            ("filters", true) => turn.screen(Screen::Filters, None).await,
            ("status" | "settings", true) => turn.screen(Screen::Status, None).await,
            ("include", true) => turn.ask(DialogueState::Include).await,
            ("exclude", true) => turn.ask(DialogueState::Exclude).await,
            ("budget", true) => turn.ask(DialogueState::MinBudget).await,
            ("quiet", true) => turn.ask(DialogueState::QuietHours).await,
            ("wrong", _) => turn.report_wrong(m, args).await,
            ("report", _) if is_reply || !rt.is_main => turn.report_wrong(m, args).await,
            ("report", true) => turn.ask(DialogueState::Report).await,
            ("help", true) => turn.screen(Screen::Help, None).await,
            (_, true) => {
                turn.send(texts::unknown_input(turn.lang), None).await;
                Ok(())
            }
            (_, false) => {
                turn.send(turn.category_help(), None).await;
                Ok(())
            }
        };
    }
    if rt.is_main {
        if let Some(state) = inner.dialogues.get(&rt.name, turn.chat_id).await? {
            return turn.input(state, m).await;
        }
        turn.send(texts::unknown_input(turn.lang), None).await;
    } else {
        turn.send(turn.category_help(), None).await;
    }
    Ok(())
}

async fn on_callback(
    inner: &Inner,
    rt: &BotRuntime,
    q: &teloxide::types::CallbackQuery,
) -> Result<(), BotError> {
    let chat_id = q
        .message
        .as_ref()
        .map_or_else(|| user_chat(q.from.id.0), |m| m.chat().id.0);
    let message_id = q.message.as_ref().map(|m| m.id());
    let turn = Turn {
        inner,
        rt,
        chat_id,
        lang: Lang::from_code(q.from.language_code.as_deref()),
        user_name: Some(display_name(&q.from)),
    };
    let action = q.data.as_deref().and_then(Callback::decode);
    let toast: Option<String> = match action {
        _ if chat_id <= 0 || !rt.is_main => None,
        None => {
            tracing::debug!(bot = %rt.name, chat_id, "unknown callback data");
            None
        }
        Some(Callback::Screen(screen)) => {
            turn.clear_dialogue().await?;
            turn.screen(screen, message_id).await?;
            None
        }
        Some(Callback::Pause(paused)) => Some(turn.set_paused(paused, message_id).await?),
        Some(Callback::Ask(state)) => {
            turn.ask(state).await?;
            None
        }
        Some(Callback::Category { slug, on }) => {
            match inner.views.iter().find(|v| v.slug == slug) {
                None => None,
                Some(view) => {
                    let mut loaded = turn.load().await?;
                    let has = loaded.spec.categories.contains(&slug);
                    if on != has {
                        if on {
                            loaded.spec.categories.push(slug.clone());
                            turn.sort_categories(&mut loaded.spec.categories);
                        } else {
                            loaded.spec.categories.retain(|c| c != &slug);
                        }
                        turn.save(&loaded).await?;
                        tracing::info!(bot = %rt.name, chat_id, category = %slug, on, "category toggled");
                    }
                    show(
                        rt,
                        chat_id,
                        message_id,
                        texts::categories_screen(turn.lang, &inner.views, &loaded.spec.categories),
                        categories_keyboard(turn.lang, &inner.views, &loaded.spec.categories),
                    )
                    .await;
                    Some(format!("{} {}", if on { "✅" } else { "▫️" }, view.name))
                }
            }
        }
    };
    let mut answer = rt.bot.answer_callback_query(q.id.clone());
    if let Some(t) = toast {
        answer = answer.text(truncate(&t, 190));
    }
    if let Err(e) = answer.await {
        tracing::debug!(bot = %rt.name, chat_id, error = %describe(&e, &rt.token), "answering a callback failed");
    }
    Ok(())
}

async fn on_my_chat_member(
    inner: &Inner,
    rt: &BotRuntime,
    u: &teloxide::types::ChatMemberUpdated,
) -> Result<(), BotError> {
    // Only the bots that deliver decide whether a subscriber can be reached.
    if !u.chat.is_private() || rt.categories.is_empty() {
        return Ok(());
    }
    let chat_id = u.chat.id.0;
    let blocked = match &u.new_chat_member.kind {
        ChatMemberKind::Banned(_) => true,
        ChatMemberKind::Member(_) => false,
        _ => return Ok(()),
    };
    let known = inner
        .store
        .set_subscriber_blocked(chat_id, blocked, Utc::now())
        .await?;
    tracing::info!(bot = %rt.name, chat_id, blocked, known, "the user {} the bot", if blocked { "blocked" } else { "unblocked" });
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn callback_data_round_trips_and_fits() {
        let all = [
            Callback::Screen(Screen::Main),
            Callback::Screen(Screen::Categories),
            Callback::Screen(Screen::Filters),
            Callback::Screen(Screen::Status),
            Callback::Screen(Screen::Help),
            Callback::Category {
                slug: "x".repeat(32),
                on: true,
            },
            Callback::Category {
                slug: "web".into(),
                on: false,
            },
            Callback::Pause(true),
            Callback::Pause(false),
            Callback::Ask(DialogueState::Include),
            Callback::Ask(DialogueState::Exclude),
            Callback::Ask(DialogueState::MinBudget),
            Callback::Ask(DialogueState::QuietHours),
            Callback::Ask(DialogueState::Report),
        ];
        for cb in all {
            let data = cb.encode();
            assert!(data.len() <= 64, "{data}");
            assert_eq!(Callback::decode(&data), Some(cb));
        }
        assert_eq!(
            Callback::encode(&Callback::Category {
                slug: "web".into(),
                on: true
            }),
            "cat:web:1"
        );
        for bad in [
            "",
            "cat:web",
            "cat:Web!:1",
            "cat:web:2",
            "menu:x",
            "pause:1:1",
            "x:y",
        ] {
            assert_eq!(Callback::decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn commands_are_split_and_addressed() {
        assert_eq!(parse_command("/start", "b"), Some(("start".into(), "")));
        assert_eq!(
            parse_command("/Start web", "b"),
            Some(("start".into(), "web"))
        );
        assert_eq!(
            parse_command("/wrong@B  not a job ", "b"),
            Some(("wrong".into(), "not a job"))
        );
        assert_eq!(parse_command("/wrong@other", "b"), None);
        assert_eq!(parse_command("hello", "b"), None);
        assert_eq!(parse_command("/ hi", "b"), None);
        assert_eq!(parse_command("/путь", "b"), None);
    }

    #[test]
    fn truncation_counts_characters() {
        assert_eq!(truncate("  привет мир ", 6), "привет");
        assert_eq!(truncate("abc", 10), "abc");
    }
}
