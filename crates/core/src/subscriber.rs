//! Subscribers and the rule that decides whether one of them gets a job.

use crate::CategorySlug;
use crate::extract::{Budget, BudgetBasis, Rates};
use crate::quiet::QuietHours;
use crate::rules::Term;

pub use crate::ids::SubscriberId;

/// A subscriber's delivery settings, as fan-out needs them.
///
/// A subscriber gets a job when ([`Subscriber::wants`]):
/// * they are neither paused nor blocked,
/// * the job shares at least one category with them,
/// * at least one of their `include` terms matches the job's normalized text (when they have
///   include terms at all),
/// * none of their `exclude` terms matches it, and
/// * the job's budget passes their [`MinBudget`], if they set one
///   ([`Subscriber::wants_with_budget`]).
///
/// Quiet hours do not decide *whether* a job is delivered, only *when*
/// ([`QuietHours::release_at`]), so matching ignores them.
#[derive(Debug, Clone, PartialEq)]
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
    /// The least a job must pay to be delivered, if they set a floor.
    pub min_budget: Option<MinBudget>,
}

/// A subscriber's floor for job budgets: "don't send me jobs paying less than this".
///
/// [`MinBudget::admits`] decides, for a job's extracted [`Budget`]:
/// * **No stated budget** (`None`, including `оплата договорная`): the job passes, unless
///   [`require_stated`](MinBudget::require_stated) is set.
/// * **A budget of another basis** passes: an hourly rate and a fixed price are not
///   comparable, so a fixed-price floor says nothing about hourly jobs (and vice versa). A
///   subscriber who cares about both bases needs the floor of the basis they care about most.
/// * **A budget of the same basis** is compared by its top ([`Budget::top`]: the upper end of
///   a range, else the amount — what the client is willing to pay at most), converted to the
///   floor's currency with approximate [`Rates`]; below [`amount`](MinBudget::amount) it is
///   not delivered, at or above it is. (The comparison is made in the rates' base currency —
///   `top × rate(job currency) < amount × rate(floor currency)` — which is the same up to
///   rounding and lets the matching index convert each floor once.)
/// * **A currency without a rate**, on either side, cannot be compared: the job passes.
///
/// A floor whose amount is zero, negative or not a number never rejects a stated budget.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MinBudget {
    /// The least acceptable amount, in [`currency`](MinBudget::currency).
    pub amount: f64,
    /// ISO 4217 code (`RUB`, `USD`, …) or `USDT`/`XTR`, as in [`Budget::currency`].
    pub currency: String,
    /// The basis the floor applies to; budgets of another basis are not compared.
    pub basis: BudgetBasis,
    /// Whether jobs that state no budget are held back too.
    #[serde(default)]
    pub require_stated: bool,
}

impl MinBudget {
    /// A floor of `amount` `currency` for budgets of `basis`; jobs without a budget pass.
    pub fn new(amount: f64, currency: impl Into<String>, basis: BudgetBasis) -> MinBudget {
        MinBudget {
            amount,
            currency: currency.into(),
            basis,
            require_stated: false,
        }
    }

    /// Whether a job with this budget (`None`: not stated) passes the floor. See the type's
    /// documentation for the rules.
    pub fn admits(&self, budget: Option<&Budget>, rates: &Rates) -> bool {
        match budget {
            None => !self.require_stated,
            Some(budget) => {
                budget.basis != self.basis
                    || floor_admits(budget.top_in_base(rates), self.floor_in_base(rates))
            }
        }
    }

    /// The floor in the rates' base currency; `None` when its currency has no rate.
    pub fn floor_in_base(&self, rates: &Rates) -> Option<f64> {
        rates.to_base(self.amount, &self.currency)
    }
}

/// The one comparison behind both [`MinBudget::admits`] and the matching index, so both
/// give the same answer: a stated top below the floor (both in the base currency) fails;
/// anything that cannot be compared passes.
pub(crate) fn floor_admits(top_in_base: Option<f64>, floor_in_base: Option<f64>) -> bool {
    match (top_in_base, floor_in_base) {
        (Some(top), Some(floor)) => top.partial_cmp(&floor) != Some(std::cmp::Ordering::Less),
        _ => true,
    }
}

impl Subscriber {
    /// A subscriber with no categories, no keywords, not paused, not blocked, no quiet hours
    /// and no minimum budget.
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
            min_budget: None,
        }
    }

    /// Whether anything can be delivered to them at all (not paused, not blocked).
    pub fn is_active(&self) -> bool {
        !self.paused && !self.blocked
    }

    /// Whether this subscriber gets a job with these categories and this
    /// [normalized](crate::normalize::normalize) text that states no budget (so only a
    /// [`MinBudget::require_stated`] floor matters). See [`Subscriber::wants_with_budget`].
    pub fn wants(&self, categories: &[CategorySlug], normalized_text: &str) -> bool {
        self.wants_with_budget(categories, normalized_text, None, &Rates::empty())
    }

    /// Whether this subscriber gets a job with these categories, this
    /// [normalized](crate::normalize::normalize) text and this extracted budget (`None`: not
    /// stated), comparing currencies with `rates`. The straightforward check that
    /// [`crate::matching::SubscriberIndex`] answers for many subscribers at once.
    pub fn wants_with_budget(
        &self,
        categories: &[CategorySlug],
        normalized_text: &str,
        budget: Option<&Budget>,
        rates: &Rates,
    ) -> bool {
        self.is_active()
            && self
                .min_budget
                .as_ref()
                .is_none_or(|floor| floor.admits(budget, rates))
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

    fn budget(min: f64, max: Option<f64>, currency: &str, basis: BudgetBasis) -> Budget {
        Budget {
            min,
            max,
            currency: currency.into(),
            basis,
        }
    }

    #[test]
    fn minimum_budget_compares_the_top_in_the_floor_currency() {
        let rates = Rates::default();
        let floor = MinBudget::new(10_000.0, "RUB", BudgetBasis::Fixed);
        let fixed = |min, max, cur| budget(min, max, cur, BudgetBasis::Fixed);
        // Below, at and above the floor.
        assert!(!floor.admits(Some(&fixed(5_000.0, None, "RUB")), &rates));
        assert!(floor.admits(Some(&fixed(10_000.0, None, "RUB")), &rates));
        assert!(floor.admits(Some(&fixed(15_000.0, None, "rub")), &rates));
        // A range counts by its upper end: "5–12k" may pay 12k.
        assert!(floor.admits(Some(&fixed(5_000.0, Some(12_000.0), "RUB")), &rates));
        assert!(!floor.admits(Some(&fixed(5_000.0, Some(8_000.0), "RUB")), &rates));
        // Other currencies are converted: $100 ≈ 9 000 ₽ < 10 000 ₽; $150 ≈ 13 500 ₽.
        assert!(!floor.admits(Some(&fixed(100.0, None, "USD")), &rates));
        assert!(floor.admits(Some(&fixed(150.0, None, "USDT")), &rates));
        assert!(!floor.admits(Some(&fixed(3_000.0, None, "UAH")), &rates));
        assert!(floor.admits(Some(&fixed(60_000.0, None, "KZT")), &rates));
        // A currency nobody has a rate for cannot be compared: it passes.
        assert!(floor.admits(Some(&fixed(1.0, None, "BTC")), &rates));
        assert!(floor.admits(Some(&fixed(1.0, None, "RUB")), &Rates::empty()));
        // A dollar floor, the other way round.
        let usd = MinBudget::new(200.0, "USD", BudgetBasis::Fixed);
        assert!(!usd.admits(Some(&fixed(15_000.0, None, "RUB")), &rates));
        assert!(usd.admits(Some(&fixed(20_000.0, None, "RUB")), &rates));
    }

    #[test]
    fn minimum_budget_leaves_other_bases_and_unstated_budgets_alone() {
        let rates = Rates::default();
        let hourly_floor = MinBudget::new(20.0, "USD", BudgetBasis::Hourly);
        // $15/h is below a $20/h floor; a $300 fixed job is not compared with it.
        assert!(!hourly_floor.admits(
            Some(&budget(15.0, None, "USD", BudgetBasis::Hourly)),
            &rates
        ));
        assert!(hourly_floor.admits(
            Some(&budget(25.0, None, "USD", BudgetBasis::Hourly)),
            &rates
        ));
        assert!(hourly_floor.admits(
            Some(&budget(300.0, None, "USD", BudgetBasis::Fixed)),
            &rates
        ));
        assert!(hourly_floor.admits(
            Some(&budget(1.0, None, "USD", BudgetBasis::Monthly)),
            &rates
        ));
        // No stated budget passes, unless the subscriber requires one.
        assert!(hourly_floor.admits(None, &rates));
        let strict = MinBudget {
            require_stated: true,
            ..hourly_floor.clone()
        };
        assert!(!strict.admits(None, &rates));
        assert!(strict.admits(
            Some(&budget(300.0, None, "USD", BudgetBasis::Fixed)),
            &rates
        ));
        // A floor that is not a positive number never rejects a stated budget.
        for amount in [0.0, -5.0, f64::NAN] {
            let odd = MinBudget::new(amount, "USD", BudgetBasis::Hourly);
            assert!(odd.admits(Some(&budget(0.5, None, "USD", BudgetBasis::Hourly)), &rates));
        }
    }

    #[test]
    fn wants_applies_the_floor_after_the_other_rules() {
        let text = normalize("Нужен лендинг на Тильде, бюджет 5000 ₽");
        let web = [slug("web")];
        let cheap = budget(5_000.0, None, "RUB", BudgetBasis::Fixed);
        let rates = Rates::default();
        let mut s = sub(&["web"], &[], &[]);
        assert!(s.wants_with_budget(&web, &text, Some(&cheap), &rates));
        s.min_budget = Some(MinBudget::new(100.0, "USD", BudgetBasis::Fixed));
        assert!(!s.wants_with_budget(&web, &text, Some(&cheap), &rates));
        assert!(s.wants_with_budget(&web, &text, None, &rates));
        assert!(s.wants(&web, &text));
        if let Some(m) = s.min_budget.as_mut() {
            m.require_stated = true;
        }
        assert!(!s.wants(&web, &text));
        // The floor never lets through what the other rules refuse.
        let rich = budget(1e6, None, "RUB", BudgetBasis::Fixed);
        assert!(s.wants_with_budget(&web, &text, Some(&rich), &rates));
        assert!(!s.wants_with_budget(&[slug("design")], &text, Some(&rich), &rates));
        s.paused = true;
        assert!(!s.wants_with_budget(&web, &text, Some(&rich), &rates));
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
