//! [`DuplicateIndex`]: the in-memory index of recent posts' fingerprints that finds the earlier
//! post a new one duplicates. An inverted index from feature to posts, probed rarest feature
//! first within a budget, whose best candidates are confirmed with the comparison rules;
//! old posts are evicted by time.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use chrono::{DateTime, Utc};

use super::DedupConfig;
use super::compare::compare_features;
use super::feature_set::Fingerprint;

/// How many best-sharing candidates [`DuplicateIndex::find`] confirms with
/// [`compare`](super::compare).
const MAX_VERIFY: usize = 24;

/// A hasher for keys that already are hashes (feature hashes, slot numbers).
#[derive(Debug, Default, Clone, Copy)]
struct PremixedHasher(u64);

impl Hasher for PremixedHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ u64::from(n)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<PremixedHasher>>;

/// One indexed post.
#[derive(Debug, Clone)]
struct Entry {
    post_id: i64,
    at: DateTime<Utc>,
    features: Box<[u32]>,
}

/// An in-memory index of recent posts' fingerprints that finds the earlier post a new one
/// duplicates. See the [module documentation](super) for how lookups work.
///
/// Posts are numbered by insertion (`seq`); each posting list holds the low 32 bits of the
/// sequence numbers of the posts with that feature, oldest first. Call
/// [`DuplicateIndex::evict_older_than`] regularly (say, every minute with `now - window`) to
/// keep memory bounded by the window; [`DuplicateIndex::find`] ignores posts outside the
/// window either way.
#[derive(Debug, Clone)]
pub struct DuplicateIndex {
    config: DedupConfig,
    /// `entries[k]` has sequence number `base + k`; evicted ones are `None` until the front
    /// catches up.
    entries: VecDeque<Option<Entry>>,
    base: u64,
    live: usize,
    /// Feature hash → sequence numbers (low 32 bits) of the posts that have it, ascending.
    postings: FastMap<u32, VecDeque<u32>>,
    /// Eviction order: `(posted at, seq)`, oldest on top.
    by_time: BinaryHeap<Reverse<(DateTime<Utc>, u64)>>,
}

impl DuplicateIndex {
    /// An empty index.
    pub fn new(config: DedupConfig) -> Self {
        Self {
            config,
            entries: VecDeque::new(),
            base: 0,
            live: 0,
            postings: FastMap::default(),
            by_time: BinaryHeap::new(),
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &DedupConfig {
        &self.config
    }

    /// The id of the earlier post that `fp` (posted at `at`) duplicates, if one within the
    /// window (`|at - its time| <= window`) is indexed; the closest one when several are.
    pub fn find(&self, fp: &Fingerprint, at: DateTime<Utc>) -> Option<i64> {
        if fp.is_empty() || self.live == 0 {
            return None;
        }
        let lo = at
            .checked_sub_signed(self.config.window)
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        let hi = at
            .checked_add_signed(self.config.window)
            .unwrap_or(DateTime::<Utc>::MAX_UTC);

        let mut lists: Vec<&VecDeque<u32>> = fp
            .features
            .iter()
            .filter_map(|v| self.postings.get(&(v >> 3)))
            .collect();
        lists.sort_unstable_by_key(|l| l.len());
        let mut counts: FastMap<u32, u32> = FastMap::default();
        counts.reserve(256);
        let mut budget = self.config.max_probe_postings.max(1);
        for list in lists {
            if budget == 0 {
                break;
            }
            let take = list.len().min(budget);
            budget -= take;
            // A shared rare feature (a contact, a specific noun) says more than a common one.
            let weight = (1u32 << 16) / u32::try_from(list.len()).unwrap_or(u32::MAX).max(1) + 1;
            for &seq in list.iter().rev().take(take) {
                *counts.entry(seq).or_insert(0) += weight;
            }
        }
        let mut candidates: Vec<(u32, u32)> = counts.into_iter().collect();
        // Most (rarity-weighted) shared probed features first; newest first among equals.
        candidates.sort_unstable_by_key(|&(seq, n)| (Reverse(n), Reverse(self.age_rank(seq))));
        let mut best: Option<(f32, i64)> = None;
        for &(seq, _) in candidates.iter().take(MAX_VERIFY) {
            let Some(entry) = self.entry(seq) else {
                continue;
            };
            if entry.at < lo || entry.at > hi {
                continue;
            }
            let cmp = compare_features(&fp.features, &entry.features);
            if cmp.is_duplicate(&self.config) && best.is_none_or(|(s, _)| cmp.score() > s) {
                best = Some((cmp.score(), entry.post_id));
            }
        }
        best.map(|(_, id)| id)
    }

    /// Adds a post. Posts with an empty fingerprint are not indexed (nothing can match them).
    pub fn insert(&mut self, post_id: i64, at: DateTime<Utc>, fp: Fingerprint) {
        if fp.is_empty() {
            return;
        }
        let seq = self.base + self.entries.len() as u64;
        for v in &fp.features {
            self.postings
                .entry(v >> 3)
                .or_default()
                .push_back(seq as u32);
        }
        self.entries.push_back(Some(Entry {
            post_id,
            at,
            features: fp.features.into_boxed_slice(),
        }));
        self.by_time.push(Reverse((at, seq)));
        self.live += 1;
    }

    /// Removes every post older than `cutoff`.
    pub fn evict_older_than(&mut self, cutoff: DateTime<Utc>) {
        let mut touched: Vec<u32> = Vec::new();
        while let Some(&Reverse((at, seq))) = self.by_time.peek() {
            if at >= cutoff {
                break;
            }
            self.by_time.pop();
            let Some(slot) = seq
                .checked_sub(self.base)
                .and_then(|k| self.entries.get_mut(k as usize))
            else {
                continue;
            };
            if let Some(entry) = slot.take() {
                touched.extend(entry.features.iter().map(|v| v >> 3));
                self.live -= 1;
            }
        }
        while let Some(None) = self.entries.front() {
            self.entries.pop_front();
            self.base += 1;
        }
        touched.sort_unstable();
        touched.dedup();
        for hash in touched {
            let Some(list) = self.postings.get_mut(&hash) else {
                continue;
            };
            while let Some(&seq) = list.front() {
                if is_live(&self.entries, self.base, seq) {
                    break;
                }
                list.pop_front();
            }
            if list.is_empty() {
                self.postings.remove(&hash);
            }
        }
        if self.entries.is_empty() {
            self.entries.shrink_to(1024);
        }
    }

    /// Number of indexed posts.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether no post is indexed.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Heap memory held by the index, approximately (allocations, not allocator overhead).
    pub fn approx_memory_bytes(&self) -> usize {
        use std::mem::size_of;
        let entries = self.entries.capacity() * size_of::<Option<Entry>>()
            + self
                .entries
                .iter()
                .flatten()
                .map(|e| e.features.len() * size_of::<u32>())
                .sum::<usize>();
        // hashbrown: one control byte per bucket plus the (key, value) pair.
        let postings = self.postings.capacity() * (size_of::<(u32, VecDeque<u32>)>() + 1)
            + self
                .postings
                .values()
                .map(|l| l.capacity() * size_of::<u32>())
                .sum::<usize>();
        let heap = self.by_time.capacity() * size_of::<Reverse<(DateTime<Utc>, u64)>>();
        size_of::<Self>() + entries + postings + heap
    }

    fn entry(&self, seq: u32) -> Option<&Entry> {
        let k = seq.wrapping_sub(self.base as u32) as usize;
        self.entries.get(k)?.as_ref()
    }

    /// Position of `seq` from the oldest live entry (larger is newer).
    fn age_rank(&self, seq: u32) -> u32 {
        seq.wrapping_sub(self.base as u32)
    }
}

fn is_live(entries: &VecDeque<Option<Entry>>, base: u64, seq: u32) -> bool {
    let k = seq.wrapping_sub(base as u32) as usize;
    entries.get(k).is_some_and(Option::is_some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dedup::fingerprint;
    use crate::dedup::tests::{EN_POST, RU_POST, add_emoji, forwarded, reorder, t0};
    use chrono::Duration;

    #[test]
    fn index_finds_the_earlier_post_within_the_window_only() {
        let mut index = DuplicateIndex::new(DedupConfig::default());
        index.insert(1, t0(), fingerprint(RU_POST));
        index.insert(2, t0(), fingerprint(EN_POST));
        assert_eq!(index.len(), 2);
        let repost = fingerprint(&forwarded(RU_POST));
        assert_eq!(index.find(&repost, t0() + Duration::days(6)), Some(1));
        assert_eq!(
            index.find(&fingerprint(&reorder(EN_POST)), t0() + Duration::hours(1)),
            Some(2)
        );
        // Outside the window: not a duplicate any more, even before eviction.
        assert_eq!(index.find(&repost, t0() + Duration::days(8)), None);
        // A template variant is not found.
        assert_eq!(
            index.find(&fingerprint(&RU_POST.replace("25 000", "60 000")), t0()),
            None
        );

        index.insert(
            3,
            t0() + Duration::days(2),
            fingerprint(&add_emoji(RU_POST)),
        );
        index.evict_older_than(t0() + Duration::days(1));
        assert_eq!(index.len(), 1);
        assert_eq!(index.find(&repost, t0() + Duration::days(3)), Some(3));
        assert_eq!(
            index.find(&fingerprint(EN_POST), t0() + Duration::days(3)),
            None
        );
        index.evict_older_than(t0() + Duration::days(3));
        assert!(index.is_empty());
        assert_eq!(index.find(&repost, t0() + Duration::days(3)), None);
        assert!(
            index.postings.is_empty(),
            "evicted posts leave no postings behind"
        );
    }

    #[test]
    fn eviction_handles_posts_inserted_out_of_time_order() {
        let mut index = DuplicateIndex::new(DedupConfig::default());
        index.insert(1, t0() + Duration::days(5), fingerprint(EN_POST));
        index.insert(2, t0(), fingerprint(RU_POST));
        index.evict_older_than(t0() + Duration::days(1));
        assert_eq!(index.len(), 1);
        assert_eq!(index.find(&fingerprint(RU_POST), t0()), None);
        assert_eq!(
            index.find(&fingerprint(EN_POST), t0() + Duration::days(5)),
            Some(1)
        );
        let before = index.approx_memory_bytes();
        assert!(before > 0);
    }
}
