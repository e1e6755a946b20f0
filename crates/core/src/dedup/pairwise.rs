//! Evaluation helpers: clustering posts by found duplicate links ([`clusters_from_links`])
//! and scoring the clusters against labeled duplicate groups over pairs of posts
//! ([`pairwise_scores`]). Used by the evaluation tools and the tests, not by the pipeline.

use std::collections::HashMap;
use std::hash::Hash;

/// Pairwise quality of a duplicate clustering against labeled groups.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairwiseScores {
    /// Predicted duplicate pairs that are true pairs / predicted pairs (1.0 when none).
    pub precision: f64,
    /// True pairs that were predicted / true pairs (1.0 when none).
    pub recall: f64,
    /// Pairs of posts sharing a label.
    pub true_pairs: usize,
    /// Pairs of posts in one predicted cluster.
    pub predicted_pairs: usize,
    /// Pairs both labeled and predicted.
    pub correct_pairs: usize,
}

/// Scores predicted clusters against true duplicate groups, over pairs of posts.
///
/// Index `i` is one post: `truth[i]` its duplicate group (`None` when unique) and
/// `predicted[i]` the id of the cluster it ended in (for example from
/// [`clusters_from_links`]). Posts beyond the shorter slice are ignored.
pub fn pairwise_scores<G: Eq + Hash>(truth: &[Option<G>], predicted: &[usize]) -> PairwiseScores {
    let n = truth.len().min(predicted.len());
    let pairs = |k: usize| k * k.saturating_sub(1) / 2;
    let mut by_group: HashMap<&G, usize> = HashMap::new();
    let mut by_cluster: HashMap<usize, usize> = HashMap::new();
    let mut by_both: HashMap<(&G, usize), usize> = HashMap::new();
    for i in 0..n {
        *by_cluster.entry(predicted[i]).or_default() += 1;
        if let Some(g) = &truth[i] {
            *by_group.entry(g).or_default() += 1;
            *by_both.entry((g, predicted[i])).or_default() += 1;
        }
    }
    let true_pairs: usize = by_group.values().map(|&k| pairs(k)).sum();
    let predicted_pairs: usize = by_cluster.values().map(|&k| pairs(k)).sum();
    let correct_pairs: usize = by_both.values().map(|&k| pairs(k)).sum();
    let ratio = |num: usize, den: usize| {
        if den == 0 {
            1.0
        } else {
            num as f64 / den as f64
        }
    };
    PairwiseScores {
        precision: ratio(correct_pairs, predicted_pairs),
        recall: ratio(correct_pairs, true_pairs),
        true_pairs,
        predicted_pairs,
        correct_pairs,
    }
}

/// Clusters `n` posts by duplicate links `(i, j)` (union-find): returns, per post, the
/// index of its cluster's representative (the smallest index in the cluster). Links with an
/// index `>= n` are ignored.
pub fn clusters_from_links(n: usize, links: &[(usize, usize)]) -> Vec<usize> {
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut parent: Vec<usize> = (0..n).collect();
    for &(a, b) in links {
        if a >= n || b >= n {
            continue;
        }
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        let (lo, hi) = (ra.min(rb), ra.max(rb));
        parent[hi] = lo;
    }
    (0..n).map(|i| root(&mut parent, i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairwise_scores_count_pairs() {
        // Truth: {0,1,2} and {3,4}; 5 unique. Predicted: {0,1}, {2}, {3,4,5}.
        let truth = [Some("a"), Some("a"), Some("a"), Some("b"), Some("b"), None];
        let predicted = clusters_from_links(6, &[(0, 1), (3, 4), (5, 4), (9, 1)]);
        assert_eq!(predicted, [0, 0, 2, 3, 3, 3]);
        let s = pairwise_scores(&truth, &predicted);
        assert_eq!(
            (s.true_pairs, s.predicted_pairs, s.correct_pairs),
            (4, 4, 2)
        );
        assert!((s.precision - 0.5).abs() < 1e-9 && (s.recall - 0.5).abs() < 1e-9);
        let none: [Option<&str>; 0] = [];
        assert_eq!(pairwise_scores(&none, &[]).precision, 1.0);
    }
}
