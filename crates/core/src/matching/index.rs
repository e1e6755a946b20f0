//! [`SubscriberIndex`]: the subscribers indexed by category and keyword, answering which of
//! them get a job with work proportional to what the job touches (see the parent module).

use std::collections::HashMap;

use super::JobFacts;
use crate::CategorySlug;
use crate::extract::{Budget, BudgetBasis, Rates};
use crate::rules::{PatternSet, Term};
use crate::subscriber::{Subscriber, SubscriberId, floor_admits};

/// The slots that use one term in one category: `slots[include.0..include.1]` include it,
/// `slots[exclude.0..exclude.1]` exclude it (each ascending).
#[derive(Debug, Clone, Copy)]
struct Posting {
    category: u32,
    include: (u32, u32),
    exclude: (u32, u32),
}

/// One distinct term; `postings[postings.0..postings.1]` are its per-category postings.
#[derive(Debug, Clone)]
struct TermEntry {
    term: Term,
    postings: (u32, u32),
}

/// While building: a term's including and excluding slots per category id.
type TermSlots = (Term, Vec<(u32, Vec<u32>, Vec<u32>)>);

/// A subscriber's minimum budget, converted for the index.
#[derive(Debug, Clone, Copy)]
struct Floor {
    basis: BudgetBasis,
    /// The floor in the rates' base currency; `None` when its currency has no rate.
    in_base: Option<f64>,
    require_stated: bool,
}

impl Floor {
    /// Same rules as [`crate::subscriber::MinBudget::admits`], on pre-converted amounts.
    fn admits(&self, job: Option<(BudgetBasis, Option<f64>)>) -> bool {
        match job {
            None => !self.require_stated,
            Some((basis, top)) => basis != self.basis || floor_admits(top, self.in_base),
        }
    }
}

/// All subscribers, indexed for [`SubscriberIndex::matches`]. Immutable: rebuild it (about
/// 0.1-0.2 s for 100,000 subscribers in a release build) when subscribers change.
///
/// Memory is a few `u32`s per (subscriber, category, keyword) plus one copy of each distinct
/// term: about 3 MB for 100,000 synthetic subscribers (1-3 categories, 0-3 + 0-2 keywords).
#[derive(Debug, Clone)]
pub struct SubscriberIndex {
    /// Subscriber id per slot, ascending.
    ids: Vec<SubscriberId>,
    /// Dense category ids.
    category_ids: HashMap<CategorySlug, u32>,
    /// Per category id: active member slots without include terms, ascending.
    open: Vec<Vec<u32>>,
    /// Distinct patterns of every subscriber's keywords.
    patterns: PatternSet,
    /// Term ids of each pattern: `pattern_terms[pattern_term_start[p]..[p + 1]]`.
    pattern_terms: Vec<u32>,
    pattern_term_start: Vec<u32>,
    terms: Vec<TermEntry>,
    postings: Vec<Posting>,
    /// Slot lists referenced by `postings`.
    slots: Vec<u32>,
    /// Per slot, its minimum budget; empty when no indexed subscriber has one.
    floors: Vec<Option<Floor>>,
    /// The rates floors were converted with; jobs' budgets are converted with them too.
    rates: Rates,
}

impl SubscriberIndex {
    /// Builds the index with the default, approximate [`Rates`]. If several subscribers share
    /// an id, the last one wins.
    pub fn build(subscribers: impl IntoIterator<Item = Subscriber>) -> SubscriberIndex {
        SubscriberIndex::build_with_rates(subscribers, Rates::default())
    }

    /// Builds the index, converting minimum budgets with `rates`. If several subscribers share
    /// an id, the last one wins.
    pub fn build_with_rates(
        subscribers: impl IntoIterator<Item = Subscriber>,
        rates: Rates,
    ) -> SubscriberIndex {
        let mut all: Vec<(usize, Subscriber)> = subscribers.into_iter().enumerate().collect();
        // By id; for equal ids the later entry first, so `dedup` keeps it.
        all.sort_unstable_by(|(ia, a), (ib, b)| a.id.cmp(&b.id).then(ib.cmp(ia)));
        all.dedup_by_key(|(_, s)| s.id);

        let mut category_ids: HashMap<CategorySlug, u32> = HashMap::new();
        let mut open: Vec<Vec<u32>> = Vec::new();
        let mut ids = Vec::with_capacity(all.len());
        let mut term_ids: HashMap<Term, usize> = HashMap::new();
        let mut term_slots: Vec<TermSlots> = Vec::new();
        let mut cats: Vec<u32> = Vec::new();
        let mut floors: Vec<Option<Floor>> = Vec::new();

        for (slot, (_, sub)) in all.iter().enumerate() {
            let slot = slot as u32;
            ids.push(sub.id);
            if !sub.is_active() || sub.categories.is_empty() {
                continue;
            }
            if let Some(min) = &sub.min_budget {
                if floors.is_empty() {
                    floors = vec![None; all.len()];
                }
                floors[slot as usize] = Some(Floor {
                    basis: min.basis,
                    in_base: min.floor_in_base(&rates),
                    require_stated: min.require_stated,
                });
            }
            cats.clear();
            for category in &sub.categories {
                let next = category_ids.len() as u32;
                let cat = *category_ids.entry(category.clone()).or_insert(next);
                if cat == next {
                    open.push(Vec::new());
                }
                if !cats.contains(&cat) {
                    cats.push(cat);
                }
            }
            // A term with an empty pattern never matches, but still makes the subscriber one
            // with include terms (exactly as `Subscriber::wants` sees it).
            if sub.include.is_empty() {
                for &cat in &cats {
                    open[cat as usize].push(slot);
                }
            }
            let sided = sub
                .include
                .iter()
                .map(|t| (t, true))
                .chain(sub.exclude.iter().map(|t| (t, false)));
            for (term, include) in sided {
                if term.pattern().is_empty() {
                    continue;
                }
                let id = match term_ids.get(term) {
                    Some(&id) => id,
                    None => {
                        term_slots.push((term.clone(), Vec::new()));
                        term_ids.insert(term.clone(), term_slots.len() - 1);
                        term_slots.len() - 1
                    }
                };
                let per_category = &mut term_slots[id].1;
                for &cat in &cats {
                    let at = match per_category.iter().position(|(c, _, _)| *c == cat) {
                        Some(at) => at,
                        None => {
                            per_category.push((cat, Vec::new(), Vec::new()));
                            per_category.len() - 1
                        }
                    };
                    let (_, inc, exc) = &mut per_category[at];
                    push_once(if include { inc } else { exc }, slot);
                }
            }
        }

        // Flatten; group terms by pattern.
        let mut slots = Vec::new();
        let mut postings = Vec::new();
        let mut terms = Vec::with_capacity(term_slots.len());
        let mut pattern_ids: HashMap<String, usize> = HashMap::new();
        let mut patterns: Vec<String> = Vec::new();
        let mut terms_of_pattern: Vec<Vec<u32>> = Vec::new();
        for (term, mut per_category) in term_slots {
            per_category.sort_unstable_by_key(|(c, _, _)| *c);
            let first = postings.len() as u32;
            for (category, include, exclude) in per_category {
                let inc_start = slots.len() as u32;
                slots.extend_from_slice(&include);
                let exc_start = slots.len() as u32;
                slots.extend_from_slice(&exclude);
                postings.push(Posting {
                    category,
                    include: (inc_start, exc_start),
                    exclude: (exc_start, slots.len() as u32),
                });
            }
            let pattern = term.pattern().to_owned();
            let p = *pattern_ids.entry(pattern.clone()).or_insert_with(|| {
                patterns.push(pattern);
                terms_of_pattern.push(Vec::new());
                patterns.len() - 1
            });
            terms_of_pattern[p].push(terms.len() as u32);
            terms.push(TermEntry {
                term,
                postings: (first, postings.len() as u32),
            });
        }
        let mut pattern_terms = Vec::new();
        let mut pattern_term_start = vec![0];
        for list in terms_of_pattern {
            pattern_terms.extend(list);
            pattern_term_start.push(pattern_terms.len() as u32);
        }
        for list in &mut open {
            list.shrink_to_fit();
        }
        slots.shrink_to_fit();

        SubscriberIndex {
            ids,
            category_ids,
            open,
            patterns: PatternSet::new(patterns),
            pattern_terms,
            pattern_term_start,
            terms,
            postings,
            slots,
            floors,
            rates,
        }
    }

    /// The rates minimum budgets are compared with.
    pub fn rates(&self) -> &Rates {
        &self.rates
    }

    /// Number of subscribers in the index (paused and blocked ones included).
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the index holds no subscribers.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Number of distinct keyword patterns.
    pub fn pattern_count(&self) -> usize {
        self.patterns.len()
    }

    /// The ids of the subscribers who get this job, which states no budget, sorted, each once.
    /// Same answer as [`scan_matches`](super::scan_matches) over the subscribers the index was built from.
    pub fn matches(&self, job: &JobFacts<'_>) -> Vec<SubscriberId> {
        self.matches_with_budget(job, None)
    }

    /// The ids of the subscribers who get this job with this extracted budget (`None`: not
    /// stated), sorted, each once. Same answer as [`scan_matches_with_budget`](super::scan_matches_with_budget) with the
    /// index's [`rates`](SubscriberIndex::rates) over the subscribers it was built from.
    ///
    /// Work: one automaton pass over the text, plus the open members of the job's
    /// categories, plus the postings of the matched terms *in the job's categories*, plus a
    /// bitmap of one bit per slot that collects the answer in id order (checking the floors
    /// of the chosen slots, if anyone has one).
    pub fn matches_with_budget(
        &self,
        job: &JobFacts<'_>,
        budget: Option<&Budget>,
    ) -> Vec<SubscriberId> {
        let mut job_categories: Vec<u32> = job
            .categories
            .iter()
            .filter_map(|c| self.category_ids.get(c).copied())
            .collect();
        job_categories.sort_unstable();
        job_categories.dedup();
        if job_categories.is_empty() {
            return Vec::new();
        }

        let mut chosen = vec![0u64; self.ids.len().div_ceil(64)];
        for &cat in &job_categories {
            for &slot in &self.open[cat as usize] {
                chosen[slot as usize / 64] |= 1 << (slot % 64);
            }
        }
        let hits = self.hit_terms(job.normalized_text);
        let relevant = || {
            hits.iter().flat_map(|&t| {
                let (from, to) = self.terms[t as usize].postings;
                self.postings[from as usize..to as usize]
                    .iter()
                    .filter(|p| job_categories.binary_search(&p.category).is_ok())
            })
        };
        for posting in relevant() {
            for &slot in self.slot_list(posting.include) {
                chosen[slot as usize / 64] |= 1 << (slot % 64);
            }
        }
        // Excludes last: they win over everything.
        for posting in relevant() {
            for &slot in self.slot_list(posting.exclude) {
                chosen[slot as usize / 64] &= !(1 << (slot % 64));
            }
        }

        let count = chosen.iter().map(|w| w.count_ones() as usize).sum();
        let mut out = Vec::with_capacity(count);
        let job_budget = budget.map(|b| (b.basis, b.top_in_base(&self.rates)));
        let check_floors = !self.floors.is_empty();
        for (w, &word) in chosen.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let slot = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if check_floors && self.floors[slot].is_some_and(|f| !f.admits(job_budget)) {
                    continue;
                }
                out.push(self.ids[slot]);
            }
        }
        out
    }

    /// Ids of the terms that really match (raw pattern hit accepted by its boundary check).
    fn hit_terms(&self, text: &str) -> Vec<u32> {
        let mut seen = vec![0u64; self.terms.len().div_ceil(64)];
        let mut hits = Vec::new();
        let mut on_hit = |pattern: usize, start: usize, end: usize| {
            let from = self.pattern_term_start[pattern] as usize;
            let to = self.pattern_term_start[pattern + 1] as usize;
            for &t in &self.pattern_terms[from..to] {
                let (word, bit) = (t as usize / 64, 1u64 << (t % 64));
                if seen[word] & bit == 0
                    && self.terms[t as usize].term.accepts_match(text, start, end)
                {
                    seen[word] |= bit;
                    hits.push(t);
                }
            }
        };
        for (pattern, start, end) in self.patterns.find_all(text) {
            on_hit(pattern, start, end);
        }
        hits
    }

    fn slot_list(&self, (from, to): (u32, u32)) -> &[u32] {
        &self.slots[from as usize..to as usize]
    }
}

/// Slots arrive in ascending order, so a repeat can only be the last element.
fn push_once(list: &mut Vec<u32>, slot: u32) {
    if list.last() != Some(&slot) {
        list.push(slot);
    }
}
