//! Everything the bots say, in Russian (first) and English. All functions return Telegram
//! HTML; anything that came from a user is escaped, and quoted at most [`MAX_QUOTE_CHARS`]
//! characters of it ([`quote`]).
//!
//! The texts live by who says them: `screens` (the main bot's menu, settings and help),
//! `replies` (its questions, confirmations and refusals), `category_bot` (what the category
//! bots say) and `commands` (the command menus); `format` holds the pieces they share
//! (escaping, quotes, amounts, budgets, lists), `lang` the reader's language and `view` a
//! category as the menus show it. Everything is re-exported here; the files import each
//! other directly, never through this one.

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

pub mod billing;
pub mod cards;
mod category_bot;
mod commands;
mod format;
mod lang;
pub mod placements;
mod replies;
mod screens;
mod view;

pub use category_bot::{
    category_help, category_started, category_stopped, wrong_needs_reply, wrong_thanks,
};
pub use commands::{CATEGORY_COMMANDS, MAIN_COMMANDS, POST_COMMAND};
pub use format::{MAX_QUOTE_CHARS, amount, budget, escape, quote};
pub use lang::Lang;
pub use replies::{
    ask_budget, ask_exclude, ask_include, ask_quiet, ask_report, budget_saved, cancelled,
    exclude_saved, include_saved, input_error, paused, quiet_saved, report_limited,
    report_needs_text, report_thanks, temporary_error, unknown_input,
};
pub use screens::{
    MenuLabels, categories_screen, filters_screen, help_main, labels, menu, settings, start_the_bot,
};
pub use view::CategoryView;

#[cfg(test)]
mod tests;
