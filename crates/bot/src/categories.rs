//! The categories as the bots show them, shared by every room: names, delivering bots and
//! digest flags in the configured order, replaced while running when an admin edits them.

use std::collections::HashMap;

use jobwire_core::CategorySlug;
use jobwire_core::live::Live;

use crate::texts::CategoryView;

/// A category as the admin panel leaves it: what [`crate::Bots::set_categories`] takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveCategory {
    pub slug: CategorySlug,
    pub name: String,
    /// The `[[bots]]` name of the bot that delivers it.
    pub bot: String,
    /// Whether the daily public digest includes it.
    pub digest: bool,
}

/// Every category, and the running bots that deliver them.
#[derive(Debug)]
pub(crate) struct Categories {
    /// Every category, in the configured order.
    views: Live<Vec<CategoryView>>,
    /// `[[bots]]` name → Telegram username, of every running bot.
    usernames: HashMap<String, String>,
    /// The main bot's configured name.
    main_name: Option<String>,
}

impl Categories {
    pub(crate) fn new(
        categories: Vec<LiveCategory>,
        usernames: HashMap<String, String>,
        main_name: Option<String>,
    ) -> Self {
        let views = categories
            .into_iter()
            .map(|c| view(&usernames, main_name.as_deref(), c))
            .collect();
        Self {
            views: Live::new(views),
            usernames,
            main_name,
        }
    }

    /// Every category now, in the configured order.
    pub(crate) fn views(&self) -> std::sync::Arc<Vec<CategoryView>> {
        self.views.get()
    }

    /// The main bot's Telegram username.
    pub(crate) fn main_username(&self) -> Option<&str> {
        self.main_name
            .as_ref()
            .and_then(|n| self.usernames.get(n))
            .map(String::as_str)
    }

    /// The categories bot `name` delivers now, in the configured order.
    pub(crate) fn of_bot(&self, bot: &str) -> Vec<CategorySlug> {
        self.views
            .get()
            .iter()
            .filter(|v| v.bot == bot)
            .map(|v| v.slug.clone())
            .collect()
    }

    /// The names of `slugs` (a slug without a category stands for itself).
    pub(crate) fn names(&self, slugs: &[CategorySlug]) -> Vec<String> {
        let views = self.views.get();
        slugs
            .iter()
            .map(|s| {
                views
                    .iter()
                    .find(|v| &v.slug == s)
                    .map_or_else(|| s.to_string(), |v| v.name.clone())
            })
            .collect()
    }

    /// Keeps the categories in the configured order (unknown ones last).
    pub(crate) fn sort(&self, list: &mut [CategorySlug]) {
        let views = self.views.get();
        list.sort_by_key(|slug| {
            views
                .iter()
                .position(|v| &v.slug == slug)
                .unwrap_or(usize::MAX)
        });
    }

    /// Takes the categories as an admin edited them. A category moved to a bot that is not
    /// running keeps its bot (logged).
    pub(crate) fn set(&self, categories: &[LiveCategory]) {
        let previous = self.views.get();
        let views: Vec<CategoryView> = categories
            .iter()
            .map(|c| {
                let mut c = c.clone();
                if !self.usernames.contains_key(&c.bot) {
                    let before = previous.iter().find(|v| v.slug == c.slug);
                    let kept = before.map_or_else(String::new, |v| v.bot.clone());
                    tracing::warn!(category = %c.slug, bot = %c.bot, kept = %kept, "the category's new bot is not running in this process; it keeps its bot until the bot role restarts");
                    c.bot = kept;
                }
                view(&self.usernames, self.main_name.as_deref(), c)
            })
            .collect();
        if *previous != views {
            tracing::info!(categories = views.len(), "categories changed");
            self.views.set(views);
        }
    }
}

/// How the menus show category `c`, delivered by one of the running bots (`usernames`:
/// `[[bots]]` name → Telegram username).
fn view(usernames: &HashMap<String, String>, main: Option<&str>, c: LiveCategory) -> CategoryView {
    CategoryView {
        bot_username: usernames.get(&c.bot).cloned().unwrap_or_default(),
        delivered_by_main: main == Some(c.bot.as_str()),
        slug: c.slug,
        name: c.name,
        bot: c.bot,
        digest: c.digest,
    }
}
