//! Subscribers and the rule that decides whether one of them gets a job.

use std::fmt;

use crate::CategorySlug;
use crate::quiet::QuietHours;
use crate::rules::Term;

/// A subscriber's id (the store's user id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SubscriberId(pub i64);

impl fmt::Display for SubscriberId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A subscriber's delivery settings, as fan-out needs them.
///
/// A subscriber gets a job when ([`Subscriber::wants`]):
/// * they are neither paused nor blocked,
/// * the job shares at least one category with them,
/// * at least one of their `include` terms matches the job's normalized text (when they have
///   include terms at all), and
/// * none of their `exclude` terms matches it.
///
/// Quiet hours do not decide *whether* a job is delivered, only *when*
/// ([`QuietHours::release_at`]), so matching ignores them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscriber {
    /// The subscriber's id.
    pub id: SubscriberId,
    /// The Telegram chat to deliver to.
    pub chat_id: i64,
    /// The categories they subscribed to.
    pub categories: Vec<CategorySlug>,
    /// Personal include keywords: if any, a job must match one of them.
    pub include: Vec<Term>,
    /// Personal exclude keywords: a job matching any of them is not delivered.
    pub exclude: Vec<Term>,
    /// Paused by the subscriber: nothing is delivered.
    pub paused: bool,
    /// The subscriber blocked the bot (Telegram answered 403): nothing is delivered.
    pub blocked: bool,
    /// When deliveries are held back, if ever.
    pub quiet_hours: Option<QuietHours>,
}

impl Subscriber {
    /// A subscriber with no categories, no keywords, not paused, not blocked, no quiet hours.
    pub fn new(id: SubscriberId, chat_id: i64) -> Self {
        Self {
            id,
            chat_id,
            categories: Vec::new(),
            include: Vec::new(),
            exclude: Vec::new(),
            paused: false,
            blocked: false,
            quiet_hours: None,
        }
    }

    /// Whether anything can be delivered to them at all (not paused, not blocked).
    pub fn is_active(&self) -> bool {
        !self.paused && !self.blocked
    }

    /// Whether this subscriber gets a job with these categories and this
    /// [normalized](crate::normalize::normalize) text. The straightforward check that
    /// [`crate::matching::SubscriberIndex`] answers for many subscribers at once.
    pub fn wants(&self, categories: &[CategorySlug], normalized_text: &str) -> bool {
        self.is_active()
            && self.categories.iter().any(|c| categories.contains(c))
            && (self.include.is_empty()
                || self
                    .include
                    .iter()
                    .any(|t| term_matches(t, normalized_text)))
            && !self
                .exclude
                .iter()
                .any(|t| term_matches(t, normalized_text))
    }
}

/// Whether `term` matches anywhere in `normalized_text`: some occurrence of
/// [`Term::pattern`] (overlapping occurrences included) that [`Term::accepts_match`] accepts.
/// A term with an empty pattern never matches.
pub fn term_matches(term: &Term, normalized_text: &str) -> bool {
    let pattern = term.pattern();
    if pattern.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(found) = normalized_text
        .get(from..)
        .and_then(|rest| rest.find(pattern))
    {
        let start = from + found;
        if term.accepts_match(normalized_text, start, start + pattern.len()) {
            return true;
        }
        from = start
            + normalized_text[start..]
                .chars()
                .next()
                .map_or(1, char::len_utf8);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::normalize;

    fn slug(s: &str) -> CategorySlug {
        CategorySlug::parse(s).expect("valid slug")
    }

    fn terms(raw: &[&str]) -> Vec<Term> {
        raw.iter()
            .map(|r| Term::parse(r).expect("valid term"))
            .collect()
    }

    fn sub(cats: &[&str], include: &[&str], exclude: &[&str]) -> Subscriber {
        let mut s = Subscriber::new(SubscriberId(1), 100);
        s.categories = cats.iter().map(|c| slug(c)).collect();
        s.include = terms(include);
        s.exclude = terms(exclude);
        s
    }

    #[test]
    fn category_and_state_decide_first() {
        let text = normalize("Нужен дизайнер лендинга");
        let web = [slug("web")];
        assert!(sub(&["web", "design"], &[], &[]).wants(&web, &text));
        assert!(!sub(&["design"], &[], &[]).wants(&web, &text));
        assert!(!sub(&[], &[], &[]).wants(&web, &text));
        let mut paused = sub(&["web"], &[], &[]);
        paused.paused = true;
        assert!(!paused.wants(&web, &text));
        let mut blocked = sub(&["web"], &[], &[]);
        blocked.blocked = true;
        assert!(!blocked.wants(&web, &text));
    }

    #[test]
    fn keywords_match_word_starts_and_exclude_wins() {
        let web = [slug("web")];
        let text = normalize("Ищем ДИЗАЙНЕРА для Telegram-bots, #Remote, без опыта");
        assert!(sub(&["web"], &["дизайн"], &[]).wants(&web, &text));
        assert!(sub(&["web"], &["bot"], &[]).wants(&web, &text));
        assert!(sub(&["web"], &["python", "#remote"], &[]).wants(&web, &text));
        assert!(!sub(&["web"], &["python"], &[]).wants(&web, &text));
        assert!(!sub(&["web"], &["#remotework"], &[]).wants(&web, &text));
        assert!(!sub(&["web"], &["дизайн"], &["без опыта"]).wants(&web, &text));
        assert!(!sub(&["web"], &[], &["#remote"]).wants(&web, &text));

        let robot = normalize("robot wanted");
        assert!(!sub(&["web"], &["bot"], &[]).wants(&web, &robot));
    }

    #[test]
    fn overlapping_occurrences_are_all_checked() {
        // The first occurrence of "a a" starts inside a word; the second one, overlapping it,
        // starts a word.
        let t = Term::Word("a a".into());
        assert!(term_matches(&t, "xa a a"));
        assert!(!term_matches(&t, "xa a"));
        assert!(!term_matches(&Term::Word(String::new()), "anything"));
    }
}
