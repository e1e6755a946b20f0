//! What a job says about itself: a one-line title, the budget, the deadline, where the work
//! is done, the main skills and how to reach the client.
//!
//! The types are shared by both classifiers (the LLM returns them in its JSON answer, the
//! local path fills them with [`extract`]), stored with the classification as JSON, shown on
//! the delivered card and read by personal filters (minimum budget).
//!
//! [`extract`] is rule-based and tuned for the vocabulary of Russian and English
//! freelance channels, not for any one channel: it never fails and never panics, whatever the
//! text (it reads at most [`MAX_INPUT_CHARS`] characters of it). Each field can also be read
//! on its own ([`extract_budget`], [`extract_deadline`], …).
//!
//! ## What counts as a budget
//!
//! An amount with a currency (`15 000 ₽`, `$500`, `500 usd`, `€1,200`, `3000 грн`, `50 000 тг`,
//! `100 USDT`, `500 звёзд`), or a bare amount right after a pay word (`Бюджет: 25 000`,
//! `зп 80к`), or — in Russian text — a bare `30к` / `8-10 тыс.` that no noun follows (`5к`, not
//! `180к подписчиков`). Ranges (`от X до Y`, `X–Y`, `20-30$/час`) keep both ends; a bound
//! alone (`до 50 тыс.`, `under $100`, `от 80к`) is recorded as that amount. A price per piece
//! of work (`700₽ за ролик`, `$25 each`) is a fixed budget of that amount; a rate per volume
//! of text or audio (`$0.05/word`, `120₽/1000 зн.`, `1500₽/10 мин`) and a weekly rate are not
//! budgets (the type cannot say "per word"), nor are ad spend, turnover and audience sizes.
//! `оплата договорная` and `бюджет обсуждается` state no budget. Without a currency the
//! amount is in roubles when the text is mostly Cyrillic, else in US dollars.

mod budget;
mod contact;
mod deadline;
mod money;
mod skills;
mod text;
mod title;
mod work_mode;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use money::{Budget, BudgetBasis, DEFAULT_RATES, Rates, RatesError, budget_matches};
pub use skills::SKILLS;
pub use work_mode::WorkMode;

use budget::budget_of;
use contact::contact_of;
use deadline::deadline_of;
use skills::skills_of;
use text::prepare;
use title::title_of;
use work_mode::work_mode_of;

/// Everything extracted from one job post. Every field may be unknown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Extraction {
    /// A one-line title (at most [`MAX_TITLE_CHARS`] characters).
    pub title: Option<String>,
    /// The budget; `None` when the post does not state one.
    pub budget: Option<Budget>,
    /// The deadline as stated ("до пятницы", "3 days", "2026-12-01").
    pub deadline: Option<String>,
    /// Remote, on-site or hybrid; `None` when not stated.
    pub work_mode: Option<WorkMode>,
    /// The main skills or tools asked for (at most [`MAX_SKILLS`]).
    pub skills: Vec<String>,
    /// How to reach the client: a `@username` or a link.
    pub contact: Option<String>,
}

/// The longest title kept, in characters.
pub const MAX_TITLE_CHARS: usize = 120;
/// The most skills kept.
pub const MAX_SKILLS: usize = 8;

/// The most characters of a post that [`extract`] reads (Telegram posts have at most 4096).
pub const MAX_INPUT_CHARS: usize = 16_384;
/// The longest deadline phrase kept, in characters.
pub const MAX_DEADLINE_CHARS: usize = 60;

impl Extraction {
    /// Whether nothing at all was extracted.
    pub fn is_empty(&self) -> bool {
        self.title.is_none()
            && self.budget.is_none()
            && self.deadline.is_none()
            && self.work_mode.is_none()
            && self.skills.is_empty()
            && self.contact.is_none()
    }
}

/// Extracts every field from a post's text (as posted: emoji, hashtags, links and line breaks
/// kept). Never panics; unknown fields are `None` or empty.
pub fn extract(text: &str) -> Extraction {
    let text = prepare(text);
    Extraction {
        title: title_of(&text),
        budget: budget_of(&text),
        deadline: deadline_of(&text),
        work_mode: work_mode_of(&text),
        skills: skills_of(&text),
        contact: contact_of(&text),
    }
}

/// The title alone; see [`extract`].
pub fn extract_title(text: &str) -> Option<String> {
    title_of(&prepare(text))
}

/// The budget alone; see [`extract`] and the module docs for what counts.
pub fn extract_budget(text: &str) -> Option<Budget> {
    budget_of(&prepare(text))
}

/// The deadline alone: the short phrase that states it (`до пятницы`, `3 дня`, `within 2
/// weeks`, `срочно`), at most [`MAX_DEADLINE_CHARS`] characters.
pub fn extract_deadline(text: &str) -> Option<String> {
    deadline_of(&prepare(text))
}

/// The work mode alone; see [`extract`].
pub fn extract_work_mode(text: &str) -> Option<WorkMode> {
    work_mode_of(&prepare(text))
}

/// The skills alone: canonical names from [`SKILLS`], in order of first appearance, at most
/// [`MAX_SKILLS`].
pub fn extract_skills(text: &str) -> Vec<String> {
    skills_of(&prepare(text))
}

/// The contact alone: a `@username`, a `https://t.me/…` or `https://wa.me/…` link, or an
/// e-mail address. The first one that follows a contact word (`пишите`, `контакт`, `DM`,
/// `apply`, `→`, …) wins; otherwise the first one in the text.
pub fn extract_contact(text: &str) -> Option<String> {
    contact_of(&prepare(text))
}
