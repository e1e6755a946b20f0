//! The inner cross-validation of training: folds that keep dup groups and identical texts
//! together, out-of-fold scores, and from them the Platt calibration of the job score and
//! the category thresholds.

use std::collections::HashMap;
use std::sync::Arc;

use jobwire_core::CategorySlug;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;

use super::calibrate::{self, CategoryPoint, Platt};
use super::lexicon::Lexicon;
use super::predict::Scores;
use super::train::Prepared;
use super::{KINDS, LocalModel, TrainOptions};

/// What the inner cross-validation fits (see [`LocalModel::fit_and_calibrate`]).
pub(super) struct Calibration {
    /// The job score's Platt scaling.
    pub(super) job: Platt,
    /// The threshold of each category head.
    pub(super) thresholds: Vec<f32>,
    /// Each category head's Platt scaling of its distance to its threshold.
    pub(super) categories: Vec<Platt>,
    /// The category certainty's scaling learned from the traffic examples (see
    /// [`LocalModel::traffic_calibration`]), when there are enough of them.
    pub(super) traffic: Option<Platt>,
}

/// What one of training's fits produced.
enum Fitted {
    /// The model on every example.
    Final(Box<LocalModel>),
    /// A fold's out-of-fold scores (example index, scores).
    Fold(Vec<(usize, Scores)>),
}

/// Most of training's fits (the final model, the inner folds) alive at once: each holds its
/// own vocabulary and heads. On two cores two at a time take as long as all at once; on five
/// cores or more the default's five fits take three rounds instead of one (a second or two
/// at start-up), for a memory peak that does not grow with the machine.
const MAX_FITS_AT_ONCE: usize = 2;

/// Fewest traffic jobs, and fewest of them with a right and with a wrong category set, the
/// traffic calibration is fitted on: below that, its two parameters would follow noise.
const MIN_TRAFFIC_JOBS: usize = 40;
const MIN_TRAFFIC_OUTCOMES: usize = 8;
/// Below this slope the traffic calibration is not used (see [`traffic_calibration`]).
const MIN_TRAFFIC_SLOPE: f32 = 0.2;

impl LocalModel {
    /// The model on every example, and the inner cross-validation on them: the Platt
    /// calibration of the job score and the category thresholds, from out-of-fold scores
    /// (`None` when there are too few examples, or only one class, to do this honestly).
    pub(super) fn fit_and_calibrate(
        prepared: &[Prepared],
        categories: &[CategorySlug],
        opts: &TrainOptions,
        lexicon: &Arc<Lexicon>,
    ) -> (LocalModel, Option<Calibration>) {
        let all: Vec<usize> = (0..prepared.len()).collect();
        let k = opts.calibration_folds;
        let n_jobs = prepared.iter().filter(|p| p.label.is_job).count();
        if k < 2 || n_jobs < 2 * k || prepared.len() - n_jobs < 2 * k {
            tracing::debug!(
                folds = k,
                jobs = n_jobs,
                examples = prepared.len(),
                "too few examples for inner cross-validation; job score left uncalibrated"
            );
            return (Self::fit(prepared, &all, categories, opts, lexicon), None);
        }
        // A panic in the calibration's own code (not in a fit) leaves the model uncalibrated,
        // as a failed fold does, instead of failing the training.
        let folds = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if opts.calibration_by_channel {
                channel_folds(prepared, k).unwrap_or_else(|| inner_folds(prepared, k, opts.seed))
            } else {
                inner_folds(prepared, k, opts.seed)
            }
        }));
        let Ok(folds) = folds else {
            tracing::warn!("the inner folds could not be made; job score left uncalibrated");
            return (Self::fit(prepared, &all, categories, opts, lexicon), None);
        };
        // The final model and the k folds are trained by at most [`MAX_FITS_AT_ONCE`] threads
        // (fewer on a machine with fewer cores), each taking the next fit when it is done, the
        // final and largest one first. With a thread per fit, every fit's vocabulary and
        // heads were alive together and the training was the start-up's memory peak
        // (BENCHMARKS.md, "The training's peak").
        let workers = std::thread::available_parallelism()
            .map_or(1, std::num::NonZeroUsize::get)
            .clamp(1, MAX_FITS_AT_ONCE.min(k + 1));
        let next = std::sync::atomic::AtomicUsize::new(0);
        let mut fits: Vec<(usize, Fitted)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    let (folds, next, all) = (&folds, &next, &all);
                    s.spawn(move || {
                        let mut done = Vec::new();
                        loop {
                            let job = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            if job > k {
                                return done;
                            }
                            if job == 0 {
                                let model = Self::fit(prepared, all, categories, opts, lexicon);
                                done.push((job, Fitted::Final(Box::new(model))));
                                continue;
                            }
                            let f = job - 1;
                            let train: Vec<usize> =
                                (0..prepared.len()).filter(|&i| folds[i] != f).collect();
                            let model = Self::fit(prepared, &train, categories, opts, lexicon);
                            let scores = (0..prepared.len())
                                .filter(|&i| folds[i] == f)
                                .map(|i| (i, model.scores_raw(&prepared[i].raw)))
                                .collect::<Vec<_>>();
                            done.push((job, Fitted::Fold(scores)));
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        });
        // In fold order, as when every fold had its own thread: the same fits, the same result.
        fits.sort_unstable_by_key(|(job, _)| *job);
        let mut model = None;
        let mut out: Vec<Vec<(usize, Scores)>> = Vec::with_capacity(k);
        for (_, fitted) in fits {
            match fitted {
                Fitted::Final(m) => model = Some(*m),
                Fitted::Fold(scores) => out.push(scores),
            }
        }
        // A thread that failed lost its fits: the final model is trained again here, and
        // the calibration is left out (better uncalibrated than calibrated on a part).
        let model = model.unwrap_or_else(|| {
            tracing::warn!("a training thread failed with the final model; training it again");
            Self::fit(prepared, &all, categories, opts, lexicon)
        });
        let calibration = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Self::calibration_from(prepared, categories, opts, out)
        }))
        .unwrap_or_else(|_| {
            tracing::warn!("the calibration failed; job score left uncalibrated");
            None
        });
        (model, calibration)
    }

    /// The calibration from the folds' out-of-fold scores (see [`Self::fit_and_calibrate`]).
    fn calibration_from(
        prepared: &[Prepared],
        categories: &[CategorySlug],
        opts: &TrainOptions,
        out: Vec<Vec<(usize, Scores)>>,
    ) -> Option<Calibration> {
        let mut job_points = Vec::with_capacity(prepared.len());
        let mut cat_points = Vec::new();
        let mut traffic_jobs = Vec::new();
        for (i, scores) in out.into_iter().flatten() {
            if prepared[i].traffic && prepared[i].label.is_job {
                traffic_jobs.push(cat_points.len());
            }
            let p = &prepared[i];
            job_points.push((scores.job_logit, p.label.is_job, p.weight));
            if p.label.is_job {
                cat_points.push(CategoryPoint {
                    truth: categories
                        .iter()
                        .map(|c| p.label.categories.contains(c))
                        .collect(),
                    p: scores.categories,
                    weight: p.weight,
                });
            }
        }
        if job_points.len() != prepared.len() {
            // A fold's thread failed; better uncalibrated than calibrated on a part.
            tracing::warn!("an inner training fold failed; job score left uncalibrated");
            return None;
        }
        let platt = Platt::fit(&job_points)?;
        let thresholds = calibrate::category_thresholds(
            &cat_points,
            categories.len(),
            opts.max_categories.max(1),
            opts.category_threshold,
            f64::from(opts.threshold_min_gain),
        );
        // Each head's distance to its threshold, calibrated on whether the category applies:
        // heads differ in scale (a rare category's scores are flatter), so raw distances do
        // not compare across heads. A head without positives (or negatives) keeps the
        // identity.
        let category_calibration: Vec<Platt> = (0..categories.len())
            .map(|c| {
                let t = calibrate::logit(thresholds[c]);
                let points: Vec<(f32, bool, f32)> = cat_points
                    .iter()
                    .map(|pt| (calibrate::logit(pt.p[c]) - t, pt.truth[c], pt.weight))
                    .collect();
                Platt::fit(&points).unwrap_or_default()
            })
            .collect();
        let traffic = traffic_calibration(
            &cat_points,
            &traffic_jobs,
            &category_calibration,
            &thresholds,
            opts.max_categories.max(1),
        );
        Some(Calibration {
            job: platt,
            thresholds,
            categories: category_calibration,
            traffic,
        })
    }
}

/// The traffic calibration: for each traffic job of the out-of-fold sample (`traffic`:
/// indices into `points`), the certainty the model's heads gave its category set, and whether
/// that set was the one the LLM (or a person) gave; a Platt scaling of the certainty's logit
/// fitted on those. They are the posts the service actually reads, and the ones near the
/// cascade's threshold (that is why the LLM was asked), so this is where the certainty's
/// scale matters. `None` below [`MIN_TRAFFIC_JOBS`] / [`MIN_TRAFFIC_OUTCOMES`].
fn traffic_calibration(
    points: &[CategoryPoint],
    traffic: &[usize],
    calibration: &[Platt],
    thresholds: &[f32],
    max: usize,
) -> Option<Platt> {
    let sample: Vec<(f32, bool, f32)> = traffic
        .iter()
        .filter_map(|&j| points.get(j))
        .map(|pt| {
            let chosen = calibrate::choose_categories(&pt.p, thresholds, max);
            let certainty = super::predict::set_certainty(&pt.p, calibration, thresholds, &chosen);
            let right = pt
                .truth
                .iter()
                .enumerate()
                .all(|(c, &t)| t == chosen.contains(&c));
            (calibrate::logit(certainty), right, 1.0)
        })
        .collect();
    let right = sample.iter().filter(|s| s.1).count();
    if sample.len() < MIN_TRAFFIC_JOBS
        || right < MIN_TRAFFIC_OUTCOMES
        || sample.len() - right < MIN_TRAFFIC_OUTCOMES
    {
        return None;
    }
    let fit = Platt::fit(&sample)?;
    tracing::debug!(
        jobs = sample.len(),
        right,
        a = fit.a,
        b = fit.b,
        "category certainty calibrated on the traffic examples"
    );
    // A flat or falling slope: on this traffic the certainty does not order right from
    // wrong sets, and a scaling of it would only move every post to one side.
    (fit.a >= MIN_TRAFFIC_SLOPE).then_some(fit)
}

/// Inner folds grouped by channel, for [`LocalModel::fit_and_calibrate`]: no channel in two folds,
/// so the out-of-fold scores the calibration and thresholds are fitted on are those of channels the
/// fold's model never saw (what the service meets). Examples of one dup group follow the channel of
/// the group's first example; examples without a channel are units of their own (dup group or
/// text). Units go, largest first, to the fold with the fewest examples. `None` when fewer than
/// `2k` channels are known, or a fold would lack jobs or non-jobs: then the folds of
/// [`inner_folds`] are used.
fn channel_folds(prepared: &[Prepared], k: usize) -> Option<Vec<usize>> {
    let mut group_channel: HashMap<&str, &str> = HashMap::new();
    for p in prepared {
        if !p.channel.is_empty() && p.group.starts_with("g:") {
            group_channel.entry(p.group.as_str()).or_insert(p.channel);
        }
    }
    let mut units: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, p) in prepared.iter().enumerate() {
        let key = match group_channel.get(p.group.as_str()) {
            Some(c) => format!("c:{c}"),
            None if !p.channel.is_empty() => format!("c:{}", p.channel),
            None => p.group.clone(),
        };
        units.entry(key).or_default().push(i);
    }
    let channels = units.keys().filter(|u| u.starts_with("c:")).count();
    if channels < 2 * k {
        return None;
    }
    let mut units: Vec<(String, Vec<usize>)> = units.into_iter().collect();
    units.sort_unstable_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    let mut folds = vec![0usize; prepared.len()];
    let mut sizes = vec![0usize; k];
    for (_, members) in units {
        let f = (0..k).min_by_key(|&f| (sizes[f], f)).unwrap_or(0);
        sizes[f] += members.len();
        for i in members {
            folds[i] = f;
        }
    }
    let both = (0..k).all(|f| {
        let jobs = (0..prepared.len()).filter(|&i| folds[i] == f && prepared[i].label.is_job);
        let n_jobs = jobs.count();
        n_jobs > 0 && n_jobs < sizes[f]
    });
    both.then_some(folds)
}

/// Inner folds for [`LocalModel::fit_and_calibrate`]: examples of one group (dup group, or the same
/// text) share a fold; groups are dealt out kind by kind in a seeded random order, each to the fold
/// with the fewest examples of that kind (then the fewest overall), so every fold gets its share of
/// each kind.
fn inner_folds(prepared: &[Prepared], k: usize, seed: u64) -> Vec<usize> {
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, p) in prepared.iter().enumerate() {
        groups.entry(p.group.as_str()).or_default().push(i);
    }
    let kind_of = |i: usize| {
        KINDS
            .iter()
            .position(|k| *k == prepared[i].label.kind)
            .unwrap_or(3)
    };
    // Sorted first, so the shuffle (and the folds) do not depend on hash-map order.
    let mut units: Vec<(&str, Vec<usize>)> = groups.into_iter().collect();
    units.sort_unstable();
    units.shuffle(&mut StdRng::seed_from_u64(seed ^ 0x0ca1_1b7a_7e5e_ed00));
    units.sort_by_key(|(_, members)| kind_of(members[0]));
    let mut folds = vec![0usize; prepared.len()];
    let mut sizes = vec![0usize; k];
    let mut per_kind = vec![[0usize; 4]; k];
    for (_, members) in units {
        let kind = kind_of(members[0]);
        let f = (0..k)
            .min_by_key(|&f| (per_kind[f][kind], sizes[f], f))
            .unwrap_or(0);
        per_kind[f][kind] += members.len();
        sizes[f] += members.len();
        for i in members {
            folds[i] = f;
        }
    }
    folds
}

#[cfg(test)]
mod tests {
    use super::*;
    use jobwire_core::PostKind;
    use jobwire_core::dataset::Label;

    fn label(is_job: bool) -> Label {
        Label {
            is_job,
            kind: if is_job {
                PostKind::Job
            } else {
                PostKind::Chatter
            },
            categories: Vec::new(),
        }
    }

    #[test]
    fn calibration_folds_keep_every_channel_and_its_cross_posts_in_one_fold() {
        let (job, other) = (label(true), label(false));
        let mut prepared = Vec::new();
        for c in 0..12 {
            for i in 0..6 {
                let group = if c == 0 && i == 0 {
                    "g:shared".to_owned()
                } else {
                    format!("t:{c}-{i}")
                };
                prepared.push(Prepared {
                    raw: Default::default(),
                    label: if i % 2 == 0 { &job } else { &other },
                    weight: 1.0,
                    group,
                    channel: [
                        "@a", "@b", "@c", "@d", "@e", "@f", "@g", "@h", "@i", "@j", "@k", "@l",
                    ][c],
                    traffic: false,
                });
            }
        }
        // A cross-post of @a's first post in @l follows @a; an example without a channel is
        // a unit of its own.
        prepared.push(Prepared {
            raw: Default::default(),
            label: &job,
            weight: 1.0,
            group: "g:shared".into(),
            channel: "@l",
            traffic: false,
        });
        prepared.push(Prepared {
            raw: Default::default(),
            label: &job,
            weight: 0.5,
            group: "t:llm".into(),
            channel: "",
            traffic: true,
        });
        let folds = channel_folds(&prepared, 4).expect("12 channels make 4 folds");
        let mut fold_of: HashMap<&str, usize> = HashMap::new();
        for (p, &f) in prepared.iter().zip(&folds) {
            if p.group == "g:shared" {
                assert_eq!(f, folds[0], "the cross-post stays with its first post");
            } else if !p.channel.is_empty() {
                assert_eq!(*fold_of.entry(p.channel).or_insert(f), f, "{}", p.channel);
            }
        }
        assert!((0..4).all(|f| folds.contains(&f)));
        // Too few channels for channel folds: the caller falls back to the grouped folds.
        assert!(channel_folds(&prepared[..30], 4).is_none());
    }

    /// Traffic jobs near the threshold: the first category chosen, the second not, with a
    /// certainty of 0.7 × (1 − p) (identity head calibrations, thresholds 0.5); the set is
    /// right for all but every `wrong_every`-th, and the wrong ones lean to the less certain.
    fn traffic_points(n: usize, wrong_every: usize) -> Vec<CategoryPoint> {
        (0..n)
            .map(|i| {
                let p1 = 0.2 + 0.28 * (i as f32 / n as f32);
                let wrong = i % wrong_every == 0 || (p1 > 0.44 && i % 2 == 0);
                CategoryPoint {
                    p: vec![0.7, p1],
                    truth: vec![true, wrong],
                    weight: 1.0,
                }
            })
            .collect()
    }

    #[test]
    fn traffic_calibration_raises_the_certainty_the_traffic_shows_too_low() {
        let points = traffic_points(80, 4);
        let all: Vec<usize> = (0..points.len()).collect();
        let identity = [Platt::default(), Platt::default()];
        let t = traffic_calibration(&points, &all, &identity, &[0.5, 0.5], 3)
            .expect("80 traffic jobs, right and wrong ones");
        // The heads say 0.42 for a set that is right about 3 times in 4 on this traffic.
        let certainty =
            super::super::predict::set_certainty(&[0.7, 0.4], &identity, &[0.5, 0.5], &[0]);
        assert!((certainty - 0.42).abs() < 1e-3, "{certainty}");
        let calibrated = t.apply(calibrate::logit(certainty));
        assert!(calibrated > 0.6, "{certainty} became {calibrated} ({t:?})");
        // Order is kept: a less certain set stays less certain.
        let lower =
            super::super::predict::set_certainty(&[0.7, 0.47], &identity, &[0.5, 0.5], &[0]);
        assert!(t.apply(calibrate::logit(lower)) < calibrated);
    }

    #[test]
    fn traffic_calibration_needs_enough_jobs_of_both_outcomes() {
        let identity = [Platt::default(), Platt::default()];
        let few = traffic_points(30, 4);
        let all: Vec<usize> = (0..few.len()).collect();
        assert_eq!(
            traffic_calibration(&few, &all, &identity, &[0.5, 0.5], 3),
            None
        );
        // Every set right: nothing to learn the scale from.
        let right: Vec<CategoryPoint> = (0..80)
            .map(|i| CategoryPoint {
                p: vec![0.7, 0.2 + 0.003 * i as f32],
                truth: vec![true, false],
                weight: 1.0,
            })
            .collect();
        let all: Vec<usize> = (0..right.len()).collect();
        assert_eq!(
            traffic_calibration(&right, &all, &identity, &[0.5, 0.5], 3),
            None
        );
        // Only the traffic jobs count: the same points not marked as traffic give nothing.
        let points = traffic_points(80, 4);
        assert_eq!(
            traffic_calibration(&points, &[], &identity, &[0.5, 0.5], 3),
            None
        );
    }
}
