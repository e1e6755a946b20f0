//! The pieces the texts share: amounts, budgets, quiet hours, lists of words, names and
//! bots.

use jobwire_core::extract::BudgetBasis;
use jobwire_core::subscriber::MinBudget;
use jobwire_store::QuietHoursSpec;

use super::lang::Lang;
use super::view::CategoryView;

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

/// Groups the thousands of an amount: `5 000`, `12.5`.
pub fn amount(value: f64) -> String {
    let whole = value.trunc();
    let frac = value - whole;
    let digits = format!("{whole:.0}");
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push('\u{a0}');
        }
        grouped.push(c);
    }
    if frac.abs() > 1e-9 {
        let f = format!("{frac:.2}");
        grouped.push_str(f.trim_start_matches('0').trim_end_matches('0'));
    }
    grouped
}

pub fn budget(lang: Lang, b: &MinBudget) -> String {
    let per = match (lang, b.basis) {
        (Lang::Ru, BudgetBasis::Fixed) => "за проект",
        (Lang::Ru, BudgetBasis::Hourly) => "в час",
        (Lang::Ru, BudgetBasis::Monthly) => "в месяц",
        (Lang::En, BudgetBasis::Fixed) => "per job",
        (Lang::En, BudgetBasis::Hourly) => "per hour",
        (Lang::En, BudgetBasis::Monthly) => "per month",
    };
    format!(
        "{} {} {} {per}",
        lang.pick("от", "from"),
        amount(b.amount),
        b.currency
    )
}

pub(super) fn quiet(q: &QuietHoursSpec) -> String {
    format!("{}–{} ({})", q.start, q.end, escape(&q.time_zone))
}

/// Each item quoted ([`quote`]: cut short, escaped) and put between `open` and `close`,
/// joined with commas.
fn wrapped(items: &[String], open: &str, close: &str) -> String {
    items
        .iter()
        .map(|w| format!("{open}{}{close}", quote(w)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Keywords: `<code>a</code>, <code>b</code>`.
pub(super) fn words(list: &[String]) -> String {
    wrapped(list, "<code>", "</code>")
}

/// Category names: `«a», «b»`.
pub(super) fn quoted(names: &[String]) -> String {
    wrapped(names, "«", "»")
}

/// `@bot` of each category bot (other than the main bot) delivering one of `categories`,
/// once each, in their order.
pub(super) fn bot_mentions<'a>(
    categories: impl IntoIterator<Item = &'a CategoryView>,
) -> Vec<String> {
    let mut bots: Vec<String> = Vec::new();
    for c in categories {
        let b = format!("@{}", escape(&c.bot_username));
        if !c.delivered_by_main && !bots.contains(&b) {
            bots.push(b);
        }
    }
    bots
}
