//! Everything the bots say, in Russian (first) and English. All functions return Telegram
//! HTML; anything that came from a user is escaped, and quoted at most [`MAX_QUOTE_CHARS`]
//! characters of it ([`quote`]).
//!
//! The texts live by who says them: `screens` (the main bot's menu, settings and help),
//! `replies` (its questions, confirmations and refusals), `category_bot` (what the category
//! bots say) and `commands` (the command menus); `format` holds the pieces they share
//! (amounts, budgets, lists). Everything is re-exported here.

/// `format!` in the reader's language: `tr!(lang, "Привет, {name}", "Hello, {name}")`.
/// (Format strings must be literals, so a plain function cannot choose between them.)
macro_rules! tr {
    ($lang:expr, $ru:literal, $en:literal $(,)?) => {
        match $lang {
            $crate::texts::Lang::Ru => format!($ru),
            $crate::texts::Lang::En => format!($en),
        }
    };
}

use jobwire_core::CategorySlug;

pub mod billing;
pub mod cards;
mod category_bot;
mod commands;
mod format;
pub mod placements;
mod replies;
mod screens;

pub use category_bot::{
    category_help, category_started, category_stopped, wrong_needs_reply, wrong_thanks,
};
pub use commands::{CATEGORY_COMMANDS, MAIN_COMMANDS, POST_COMMAND};
pub use format::{amount, budget};
pub use replies::{
    ask_budget, ask_exclude, ask_include, ask_quiet, ask_report, budget_saved, cancelled,
    exclude_saved, include_saved, input_error, paused, quiet_saved, report_limited,
    report_needs_text, report_thanks, temporary_error, unknown_input,
};
pub use screens::{
    MenuLabels, categories_screen, filters_screen, help_main, labels, menu, settings, start_the_bot,
};

/// The language a reply is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Ru,
    En,
}

impl Lang {
    /// The code stored for it.
    pub fn code(self) -> &'static str {
        match self {
            Self::Ru => "ru",
            Self::En => "en",
        }
    }

    /// Russian for users of the Russian-speaking world and for users whose client does not
    /// say; English for everyone else.
    pub fn from_code(code: Option<&str>) -> Self {
        let Some(code) = code else {
            return Self::Ru;
        };
        let primary = code
            .split(['-', '_'])
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        match primary.as_str() {
            "" | "ru" | "uk" | "be" | "kk" | "uz" | "ky" | "tg" | "hy" | "az" | "ka" | "tk"
            | "mo" => Self::Ru,
            _ => Self::En,
        }
    }

    fn pick(self, ru: &'static str, en: &'static str) -> &'static str {
        match self {
            Self::Ru => ru,
            Self::En => en,
        }
    }
}

/// Escapes text for Telegram's HTML parse mode (the one escape the cards use too).
pub use jobwire_core::format::escape;

/// The most characters of a user's input a reply quotes.
pub const MAX_QUOTE_CHARS: usize = 60;

/// A user's input as a reply quotes it: at most [`MAX_QUOTE_CHARS`] characters (cut on a
/// character boundary, `…` marking the cut), escaped. A reply quoting a whole 4,000-character
/// input would exceed Telegram's 4096-character limit and never be delivered.
pub fn quote(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTE_CHARS) {
        Some((i, _)) => format!("{}…", escape(&text[..i])),
        None => escape(text),
    }
}

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

#[cfg(test)]
mod tests;
