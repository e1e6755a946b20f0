//! k-fold cross-validation of the local model: stratified folds that keep duplicates
//! together, and the pooled held-out scores.

use std::collections::BTreeMap;

use jobwire_core::dataset::LabeledPost;
use jobwire_core::{CategorySlug, PostKind};

use super::{EvalReport, Scorer};
use crate::ClassifyError;
use crate::local::{LocalModel, TrainOptions};

/// Assigns every labeled post one of `k` folds (`None` for unlabeled posts), deterministically
/// for a `seed`: a dup group stays in one fold, and each kind of post is spread evenly.
pub fn assign_folds(data: &[LabeledPost], k: usize, seed: u64) -> Vec<Option<usize>> {
    let k = k.max(1);
    // Units: a dup group, or a single post.
    let mut units: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, p) in data.iter().enumerate() {
        if p.label.is_none() {
            continue;
        }
        let key = match &p.dup_group {
            Some(g) => format!("g:{g}"),
            None => format!("p:{i}"),
        };
        units.entry(key).or_default().push(i);
    }
    // Strata by the kind of the unit's first post; larger units first so they spread out.
    let mut strata: BTreeMap<PostKind, Vec<Vec<usize>>> = BTreeMap::new();
    for members in units.into_values() {
        let kind = data[members[0]]
            .label
            .as_ref()
            .map_or(PostKind::Chatter, |l| l.kind);
        strata.entry(kind).or_default().push(members);
    }
    let mut rng = seed ^ 0x5851_f42d_4c95_7f2d;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut folds = vec![None; data.len()];
    let mut sizes = vec![0usize; k];
    for (_, mut units) in strata {
        for i in (1..units.len()).rev() {
            let j = (next() % (i as u64 + 1)) as usize;
            units.swap(i, j);
        }
        units.sort_by_key(|u| std::cmp::Reverse(u.len()));
        let mut per_fold = vec![0usize; k];
        for unit in units {
            // The fold with the fewest posts of this stratum, then the fewest overall.
            let f = (0..k)
                .min_by_key(|&f| (per_fold[f], sizes[f], f))
                .unwrap_or(0);
            per_fold[f] += unit.len();
            sizes[f] += unit.len();
            for i in unit {
                folds[i] = Some(f);
            }
        }
    }
    folds
}

/// How posts are split into folds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FoldsBy {
    /// Stratified by kind, dup groups kept together ([`assign_folds`]).
    #[default]
    Post,
    /// No channel in two folds (nor a dup group): what an unseen channel looks like
    /// ([`assign_channel_folds`]).
    Channel,
}

impl FoldsBy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Post => "stratified by kind, dup groups together",
            Self::Channel => "grouped by channel (no channel in two folds)",
        }
    }
}

/// Assigns folds so that no channel is in two of them: the channels, largest first, each to
/// the fold with the fewest posts. A dup group (a vacancy cross-posted in several channels)
/// would leak a held-out post into training through its copy elsewhere; in a service the
/// copy is dropped as a near-duplicate before any classifier sees it, so here only the
/// group's first post keeps its fold and its copies in other folds are left out.
pub fn assign_channel_folds(data: &[LabeledPost], k: usize) -> Vec<Option<usize>> {
    let k = k.max(1);
    let mut channels: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, p) in data.iter().enumerate() {
        if p.label.is_some() {
            channels.entry(p.channel.as_str()).or_default().push(i);
        }
    }
    let mut units: Vec<Vec<usize>> = channels.into_values().collect();
    units.sort_by_key(|u| (std::cmp::Reverse(u.len()), u[0]));
    let mut sizes = vec![0usize; k];
    let mut folds = vec![None; data.len()];
    for unit in units {
        let f = (0..k).min_by_key(|&f| (sizes[f], f)).unwrap_or(0);
        sizes[f] += unit.len();
        for i in unit {
            folds[i] = Some(f);
        }
    }
    let mut group_fold: BTreeMap<&str, Option<usize>> = BTreeMap::new();
    for (i, p) in data.iter().enumerate() {
        if let Some(g) = p.dup_group.as_deref()
            && folds[i].is_some()
        {
            let first = *group_fold.entry(g).or_insert(folds[i]);
            if first != folds[i] {
                folds[i] = None;
            }
        }
    }
    folds
}

/// The folds of a cross-validation, which needs at least two.
pub(crate) fn checked_folds(
    data: &[LabeledPost],
    k: usize,
    seed: u64,
    by: FoldsBy,
) -> Result<Vec<Option<usize>>, ClassifyError> {
    if k < 2 {
        return Err(ClassifyError::Invalid(format!(
            "cross-validation needs k >= 2, got {k}"
        )));
    }
    let folds = match by {
        FoldsBy::Post => assign_folds(data, k, seed),
        FoldsBy::Channel => assign_channel_folds(data, k),
    };
    if (0..k).any(|f| !folds.contains(&Some(f))) {
        return Err(ClassifyError::Invalid(format!(
            "{k} folds {}: some fold would be empty (too few posts or channels)",
            by.as_str()
        )));
    }
    Ok(folds)
}

/// Indices of the posts in `fold` (held out from its model), ascending.
pub(crate) fn held_out(folds: &[Option<usize>], fold: usize) -> impl Iterator<Item = usize> + '_ {
    folds
        .iter()
        .enumerate()
        .filter(move |(_, f)| **f == Some(fold))
        .map(|(i, _)| i)
}

/// Indices of the labeled posts outside `fold` (what its model trains on), ascending.
pub(crate) fn trained_on(folds: &[Option<usize>], fold: usize) -> impl Iterator<Item = usize> + '_ {
    folds
        .iter()
        .enumerate()
        .filter(move |(_, f)| f.is_some_and(|f| f != fold))
        .map(|(i, _)| i)
}

/// The local model of `fold`: trained on every labeled post outside it, and on `extra`
/// (posts outside the evaluated data, e.g. `data/train.jsonl`; never scored).
pub(crate) fn train_without_fold(
    data: &[LabeledPost],
    extra: &[LabeledPost],
    folds: &[Option<usize>],
    fold: usize,
    categories: &[CategorySlug],
    opts: &TrainOptions,
) -> Result<LocalModel, ClassifyError> {
    let train: Vec<LabeledPost> = trained_on(folds, fold)
        .map(|i| data[i].clone())
        .chain(extra.iter().cloned())
        .collect();
    LocalModel::train(&train, categories, opts)
}

/// The posts of `extra` that may be trained on while `data` is scored: those whose text is
/// not in `data` (a post is never scored by a model that saw it).
pub fn extra_training(data: &[LabeledPost], extra: &[LabeledPost]) -> Vec<LabeledPost> {
    let scored: std::collections::HashSet<u64> = data
        .iter()
        .map(|p| LocalModel::fingerprint(&p.text))
        .collect();
    extra
        .iter()
        .filter(|p| p.label.is_some() && !scored.contains(&LocalModel::fingerprint(&p.text)))
        .cloned()
        .collect()
}

/// k-fold cross-validation of the local model on `data` (folds from [`assign_folds`]): trains
/// on k−1 folds, scores the held-out one, and pools the decisions of all folds.
pub fn cross_validate(
    data: &[LabeledPost],
    categories: &[CategorySlug],
    k: usize,
    seed: u64,
    opts: &TrainOptions,
) -> Result<EvalReport, ClassifyError> {
    cross_validate_with(data, &[], categories, k, seed, opts, FoldsBy::Post)
}

/// [`cross_validate`] with the folds made `by` posts or by channel, where every fold's model
/// also trains on `extra` (see [`extra_training`]): more labeled posts from other channels,
/// the evaluated folds staying the yardstick (no fold is ever trained on, only `extra` and
/// the other folds).
pub fn cross_validate_with(
    data: &[LabeledPost],
    extra: &[LabeledPost],
    categories: &[CategorySlug],
    k: usize,
    seed: u64,
    opts: &TrainOptions,
    by: FoldsBy,
) -> Result<EvalReport, ClassifyError> {
    let folds = checked_folds(data, k, seed, by)?;
    let extra = extra_training(data, extra);
    let mut scorer = Scorer::new(categories);
    for fold in 0..k {
        let model = train_without_fold(data, &extra, &folds, fold, categories, opts)?;
        for post in held_out(&folds, fold).map(|i| &data[i]) {
            if let Some(label) = &post.label {
                let verdict = model.predict(&post.text);
                scorer.add(label, &verdict, model.was_trained_on(&post.text));
            }
        }
    }
    Ok(scorer.report(Some(k)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn channel_folds_never_split_a_channel_or_a_dup_group() {
        // (a dup group's copies outside its first post's fold are left out)
        let dev = include_str!("../../../../data/dev.jsonl");
        let data = LabeledPost::parse_all(dev).unwrap();
        let folds = assign_channel_folds(&data, 5);
        let mut channel_fold: BTreeMap<&str, usize> = BTreeMap::new();
        let mut group_fold: BTreeMap<&str, usize> = BTreeMap::new();
        let left_out = folds.iter().filter(|f| f.is_none()).count();
        assert!(left_out < data.len() / 5, "{left_out} left out");
        for (p, f) in data.iter().zip(&folds) {
            let Some(f) = *f else {
                assert!(p.dup_group.is_some(), "only dup copies are left out");
                continue;
            };
            assert_eq!(
                *channel_fold.entry(&p.channel).or_insert(f),
                f,
                "{}",
                p.channel
            );
            if let Some(g) = &p.dup_group {
                assert_eq!(*group_fold.entry(g).or_insert(f), f, "{g}");
            }
        }
        let sizes: Vec<usize> = (0..5).map(|f| held_out(&folds, f).count()).collect();
        assert!(sizes.iter().all(|&n| n > 0), "{sizes:?}");
        assert!(
            checked_folds(&data, 40, 1, FoldsBy::Channel).is_err(),
            "more folds than channels"
        );
    }

    #[test]
    fn folds_keep_dup_groups_together_and_are_balanced() {
        let doc = (0..50)
            .map(|i| {
                let kind = if i % 3 == 0 { "resume" } else { "job" };
                let dup = if i < 6 { "\"g1\"".to_owned() } else { "null".to_owned() };
                format!(
                    r#"{{"id":"p{i}","channel":"@c","text":"t{i}","is_job":{},"kind":"{kind}","categories":[],"dup_group":{dup}}}"#,
                    kind == "job"
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        let data = LabeledPost::parse_all(&doc).unwrap();
        let folds = assign_folds(&data, 5, 1);
        let g: BTreeSet<_> = folds[..6].iter().collect();
        assert_eq!(g.len(), 1, "a dup group was split: {:?}", &folds[..6]);
        let mut sizes = [0usize; 5];
        for f in folds.iter().flatten() {
            sizes[*f] += 1;
        }
        assert!(sizes.iter().all(|&n| (8..=12).contains(&n)), "{sizes:?}");
        assert_eq!(assign_folds(&data, 5, 1), folds, "not deterministic");
    }
}
