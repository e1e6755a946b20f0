//! A category as the menus show it.

use jobwire_core::CategorySlug;

/// A category as the menus show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryView {
    pub slug: CategorySlug,
    pub name: String,
    /// The configured name of the bot that delivers it (`[bots.<name>]`).
    pub bot: String,
    /// `@username` of the bot that delivers it.
    pub bot_username: String,
    /// Whether that bot is the main bot itself (then there is nothing else to start).
    pub delivered_by_main: bool,
    /// Whether the daily public digest includes it.
    pub digest: bool,
}

impl CategoryView {
    /// `https://t.me/<bot>?start=<slug>`: opens the category bot and subscribes on Start.
    pub fn start_link(&self) -> String {
        format!("https://t.me/{}?start={}", self.bot_username, self.slug)
    }
}
