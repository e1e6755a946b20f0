//! Categories as data. The configuration names the set of categories (the classifier's
//! labels: the local model is trained on them and the LLM's answer schema lists them) and
//! seeds each one's name, description, bot and digest flag into the database on start-up;
//! afterwards the database is the truth about those four, edited in the admin panel. Every
//! process follows them with one single-row read a second ([`follow`]) and hands a change to
//! what uses them: fan-out's routes and card names, the LLM prompt's descriptions, the bots'
//! menus and the digest.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::Utc;
use jobwire_core::live::Live;
use jobwire_fanout::CategoryRoute;
use jobwire_store::{CategoryFields, CategoryRow, Store};
use tokio_util::sync::CancellationToken;

use crate::config::{Category, Settings};

/// How often a process looks at the categories' version.
pub const POLL: Duration = Duration::from_secs(1);

type Follower = Box<dyn Fn(&[Category]) + Send + Sync>;

/// A process's categories as they are now, and who wants to hear of a change.
#[derive(Clone)]
pub struct CategoryHub {
    current: Live<Vec<Category>>,
    routes: Live<Vec<CategoryRoute>>,
    followers: Arc<Mutex<Vec<Follower>>>,
}

impl std::fmt::Debug for CategoryHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CategoryHub")
            .field("current", &self.current)
            .finish_non_exhaustive()
    }
}

/// Fan-out's routes of `categories` (slug, name, bot).
pub fn routes_of(categories: &[Category]) -> Vec<CategoryRoute> {
    categories
        .iter()
        .map(|c| CategoryRoute {
            slug: c.slug.clone(),
            name: c.name.clone(),
            bot: c.bot.clone(),
        })
        .collect()
}

impl CategoryHub {
    pub fn new(categories: Vec<Category>) -> Self {
        Self {
            routes: Live::new(routes_of(&categories)),
            current: Live::new(categories),
            followers: Arc::default(),
        }
    }

    /// The categories now.
    pub fn current(&self) -> Arc<Vec<Category>> {
        self.current.get()
    }

    /// Fan-out's view, kept up to date.
    pub fn routes(&self) -> Live<Vec<CategoryRoute>> {
        self.routes.clone()
    }

    /// Calls `f` with the categories now and after every change.
    pub fn on_change(&self, f: impl Fn(&[Category]) + Send + Sync + 'static) {
        f(&self.current.get());
        self.followers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Box::new(f));
    }

    fn apply(&self, categories: Vec<Category>) {
        self.routes.set(routes_of(&categories));
        self.current.set(categories.clone());
        for f in self
            .followers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            f(&categories);
        }
    }
}

/// Writes the configured categories the database lacks; the rest stay as an admin left them.
pub async fn seed(settings: &Settings, store: &dyn Store) -> anyhow::Result<()> {
    let seeds: Vec<_> = settings
        .categories
        .iter()
        .map(|c| {
            (
                c.slug.clone(),
                CategoryFields {
                    name: c.name.clone(),
                    description: c.description.clone(),
                    bot: c.bot.clone(),
                    digest: c.digest,
                },
            )
        })
        .collect();
    let seeded = store.seed_categories(&seeds, Utc::now()).await?;
    if seeded > 0 {
        tracing::info!(seeded, "categories seeded from the configuration");
    }
    Ok(())
}

/// The configured categories, in the configured order, with what the database says of each.
/// A stored bot that `[[bots]]` does not name (the file changed since) is passed over for
/// the configured one, with a warning; a stored category the configuration no longer names
/// is left out.
pub fn merge(settings: &Settings, stored: &[CategoryRow]) -> Vec<Category> {
    settings
        .categories
        .iter()
        .map(|c| match stored.iter().find(|r| r.slug == c.slug) {
            Some(r) => {
                let known = settings.bots.is_empty() || settings.bots.iter().any(|b| b.name == r.bot);
                if !known {
                    tracing::warn!(category = %c.slug, bot = %r.bot, configured = %c.bot, "the stored bot is not in [[bots]]; the configured one delivers");
                }
                Category {
                    slug: c.slug.clone(),
                    name: r.name.clone(),
                    description: r.description.clone(),
                    bot: if known { r.bot.clone() } else { c.bot.clone() },
                    digest: r.digest,
                }
            }
            None => c.clone(),
        })
        .collect()
}

/// Reads the categories once and hands them to the hub when they differ.
pub async fn refresh(
    hub: &CategoryHub,
    settings: &Settings,
    store: &dyn Store,
) -> anyhow::Result<bool> {
    let merged = merge(settings, &store.categories().await?);
    let changed = *hub.current() != merged;
    if changed {
        hub.apply(merged);
    }
    Ok(changed)
}

/// Follows the categories while the process runs: reads them whenever the version an edit
/// bumps has moved (one single-row read per `every`).
pub async fn follow(
    hub: CategoryHub,
    settings: Arc<Settings>,
    store: Arc<dyn Store>,
    every: Duration,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let mut seen: Option<i64> = None;
    loop {
        match store.categories_version().await {
            Ok(v) if seen != Some(v) => match refresh(&hub, &settings, store.as_ref()).await {
                Ok(changed) => {
                    if changed {
                        tracing::info!(version = v, "categories changed; applied");
                    }
                    seen = Some(v);
                }
                Err(e) => tracing::warn!(error = %e, "could not read the categories"),
            },
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "could not read the categories' version"),
        }
        tokio::select! {
            _ = shutdown.cancelled() => return Ok(()),
            _ = tokio::time::sleep(every) => {}
        }
    }
}
