//! Which subscribers get a job: an index over all subscribers that answers without looking at
//! each of them.
//!
//! [`SubscriberIndex`] gives exactly the answer of [`scan_matches`] (the plain per-subscriber
//! check, [`Subscriber::wants`]) but does work proportional to what the job touches:
//!
//! * subscribers live in *slots* (`u32`, in id order); paused and blocked ones are not indexed;
//! * per category, the slots of its members *without* include terms (they get every job of
//!   the category unless an exclude term hits);
//! * one Aho-Corasick automaton over every distinct pattern of every include and exclude term
//!   of every subscriber; each pattern points to its terms (a word and a hashtag can share a
//!   pattern), and each term, per category, to the slots that include it and those that
//!   exclude it.
//!
//! For a job, the automaton runs once over the normalized text (overlapping matches, so every
//! occurrence of every pattern is seen) and each raw hit is confirmed with
//! [`Term::accepts_match`]. The result, collected in a bitmap of one bit per slot (so it comes
//! out in id order without sorting), is
//! `(open members of the job's categories ∪ their members with an include hit) − their members
//! with an exclude hit − members whose minimum budget the job's budget fails`.
//!
//! **Minimum budgets** ([`crate::subscriber::MinBudget`]): the index converts each floor to
//! the base currency once, when it is built, with the [`Rates`] it is built with
//! ([`SubscriberIndex::build_with_rates`]); a job's budget is converted once per job. The
//! floors are checked only for the slots already chosen, while the answer is collected, and
//! not at all when nobody has a floor. [`SubscriberIndex::matches`] and [`scan_matches`] treat
//! the job as stating no budget; [`SubscriberIndex::matches_with_budget`] and
//! [`scan_matches_with_budget`] take the extracted one.

mod index;
pub mod synthetic;

#[cfg(test)]
mod tests;

use crate::CategorySlug;
use crate::extract::{Budget, Rates};
use crate::subscriber::{Subscriber, SubscriberId};

pub use index::SubscriberIndex;

/// What the index needs to know about a job's text and categories. (Its budget, for
/// minimum-budget floors, is passed next to it: [`SubscriberIndex::matches_with_budget`].)
#[derive(Debug, Clone, Copy)]
pub struct JobFacts<'a> {
    /// The job's categories.
    pub categories: &'a [CategorySlug],
    /// The job's text, [normalized](crate::normalize::normalize).
    pub normalized_text: &'a str,
}

/// The plain baseline: checks every subscriber with [`Subscriber::wants`] (a job that states
/// no budget). Returns the ids of those who get the job, sorted, each once.
pub fn scan_matches(subscribers: &[Subscriber], job: &JobFacts<'_>) -> Vec<SubscriberId> {
    scan_matches_with_budget(subscribers, job, None, &Rates::empty())
}

/// The plain baseline for a job with this extracted budget (`None`: not stated): checks
/// every subscriber with [`Subscriber::wants_with_budget`]. Returns the ids of those who get
/// the job, sorted, each once.
pub fn scan_matches_with_budget(
    subscribers: &[Subscriber],
    job: &JobFacts<'_>,
    budget: Option<&Budget>,
    rates: &Rates,
) -> Vec<SubscriberId> {
    let mut out: Vec<SubscriberId> = subscribers
        .iter()
        .filter(|s| s.wants_with_budget(job.categories, job.normalized_text, budget, rates))
        .map(|s| s.id)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}
