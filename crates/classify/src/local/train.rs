//! Training: feature extraction of the labeled examples, the vocabulary and IDF, and the
//! heads (`is_job`, `kind`, one per category) fitted by AdaGrad SGD with seeded shuffling.

use std::collections::HashMap;
use std::sync::Arc;

use jobwire_core::CategorySlug;
use jobwire_core::dataset::{Label, LabeledPost};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;

use super::calibrate::{Platt, sigmoid};
use super::features;
use super::lexicon::{LEX_DIM, Lexicon};
use super::predict::{Vectors, prepare, softmax4};
use super::{
    Dense, Head, IdHash, KINDS, LocalModel, MODEL_FORMAT, ROW_CUE, ROW_TERM, ROW_TOPIC, Sparse,
    TrainOptions,
};
use crate::ClassifyError;

/// A labeled training example after feature extraction.
pub(crate) struct Prepared<'a> {
    pub(crate) raw: features::RawFeatures,
    pub(crate) label: &'a Label,
    pub(crate) weight: f32,
    /// Examples with the same key stay in the same inner fold (dup group or text).
    pub(crate) group: String,
    /// The channel the example was posted in (empty: unknown, e.g. a stored LLM answer).
    pub(crate) channel: &'a str,
    /// A label the service got from its own traffic (an LLM answer or a person's, see
    /// [`crate::retrain::training_set`]), not from the shipped dataset.
    pub(crate) traffic: bool,
}

impl LocalModel {
    /// Trains a model on the labeled examples (unlabeled ones are skipped), each counting
    /// once. Categories of the labels outside `categories` are ignored. Deterministic for a
    /// given `opts.seed`. See [`LocalModel::train_weighted`].
    pub fn train(
        examples: &[LabeledPost],
        categories: &[CategorySlug],
        opts: &TrainOptions,
    ) -> Result<LocalModel, ClassifyError> {
        let weighted: Vec<(&LabeledPost, f32)> = examples.iter().map(|e| (e, 1.0)).collect();
        Self::train_inner(&weighted, categories, opts)
    }

    /// Trains a model on weighted examples: an example of weight 2 counts like two copies,
    /// one of weight 0.5 like half a copy (LLM-labeled posts may count less than human
    /// labels, admin relabels more). Weights must be finite and non-negative; examples of
    /// weight 0 and unlabeled ones are skipped.
    ///
    /// Besides the final model, trains `opts.calibration_folds` models on parts of the
    /// examples to get out-of-fold scores, on which it fits the calibration of the job
    /// probability (Platt scaling) and chooses the category thresholds.
    pub fn train_weighted(
        examples: &[(LabeledPost, f32)],
        categories: &[CategorySlug],
        opts: &TrainOptions,
    ) -> Result<LocalModel, ClassifyError> {
        let weighted: Vec<(&LabeledPost, f32)> = examples.iter().map(|(e, w)| (e, *w)).collect();
        Self::train_inner(&weighted, categories, opts)
    }

    fn train_inner(
        examples: &[(&LabeledPost, f32)],
        categories: &[CategorySlug],
        opts: &TrainOptions,
    ) -> Result<LocalModel, ClassifyError> {
        if let Some((e, w)) = examples.iter().find(|(_, w)| !w.is_finite() || *w < 0.0) {
            return Err(ClassifyError::Invalid(format!(
                "example {:?} has weight {w}; weights must be finite and >= 0",
                e.id
            )));
        }
        if categories.is_empty() {
            return Err(ClassifyError::Invalid("no categories configured".into()));
        }
        let lexicon = Arc::new(Lexicon::new(&opts.features.topic_words));
        let prepared: Vec<Prepared> = examples
            .iter()
            .filter(|(_, w)| *w > 0.0)
            .filter_map(|(e, w)| {
                e.label.as_ref().map(|label| Prepared {
                    raw: features::extract(
                        &prepare(&e.text, &opts.features),
                        &opts.features,
                        &lexicon,
                    ),
                    label,
                    weight: *w,
                    group: match &e.dup_group {
                        Some(g) => format!("g:{g}"),
                        None => format!("t:{:016x}", features::fingerprint(&e.text)),
                    },
                    channel: e.channel.as_str(),
                    traffic: e.id.starts_with(crate::retrain::EXAMPLE_ID_PREFIX),
                })
            })
            .collect();
        if prepared.is_empty() {
            return Err(ClassifyError::Invalid(
                "no labeled examples to train on".into(),
            ));
        }
        // The final model and the inner folds are independent: trained side by side.
        let (mut model, calibration) =
            Self::fit_and_calibrate(&prepared, categories, opts, &lexicon);
        if let Some(c) = calibration {
            model.calibration = c.job;
            model.category_thresholds = c.thresholds;
            model.category_calibration = c.categories;
            model.traffic_calibration = c.traffic;
        }
        let mut fps: Vec<u64> = examples
            .iter()
            .filter(|(e, w)| *w > 0.0 && e.label.is_some())
            .map(|(e, _)| features::fingerprint(&e.text))
            .collect();
        fps.sort_unstable();
        fps.dedup();
        model.fingerprints = fps;
        Ok(model)
    }

    /// Trains the heads on the examples `idx` (sorted) of `prepared`, vocabulary and IDF from
    /// those examples only. No calibration, no fingerprints.
    pub(super) fn fit(
        prepared: &[Prepared],
        idx: &[usize],
        categories: &[CategorySlug],
        opts: &TrainOptions,
        lexicon: &Arc<Lexicon>,
    ) -> LocalModel {
        debug_assert!(idx.windows(2).all(|w| w[0] < w[1]), "idx must be sorted");
        // Vocabulary: features present in at least `min_df` posts.
        // Key: the feature hash, then its row kind in the low byte.
        let key = |h: u32, kind: u8| (u64::from(h) << 8) | u64::from(kind);
        let mut df: HashMap<u64, u32, IdHash> = HashMap::default();
        for &i in idx {
            let r = &prepared[i].raw;
            for &(h, _) in &r.terms {
                *df.entry(key(h, ROW_TERM)).or_default() += 1;
            }
            for &h in &r.cues {
                *df.entry(key(h, ROW_CUE)).or_default() += 1;
            }
            if opts.features.topic_weight != 0.0 {
                for &h in &r.topics {
                    *df.entry(key(h, ROW_TOPIC)).or_default() += 1;
                }
            }
        }
        let mut kept: Vec<(u64, u32)> = df
            .into_iter()
            .filter(|(_, n)| *n >= opts.min_df.max(1))
            .collect();
        kept.sort_unstable();
        let n_docs = idx.len() as f32;
        let category_lexicon: Vec<Option<usize>> = categories
            .iter()
            .map(|c| lexicon.slugs().iter().position(|s| s == c.as_str()))
            .collect();
        let mut model = LocalModel {
            format: MODEL_FORMAT.to_owned(),
            categories: categories.to_vec(),
            features: opts.features.clone(),
            job_threshold: opts.job_threshold,
            kind_blend: opts.kind_blend.clamp(0.0, 1.0),
            calibration: Platt::default(),
            category_thresholds: vec![opts.category_threshold; categories.len()],
            category_calibration: Vec::new(),
            traffic_calibration: None,
            max_categories: opts.max_categories.max(1),
            vocab: Vec::with_capacity(kept.len()),
            idf: Vec::with_capacity(kept.len()),
            row_kind: Vec::with_capacity(kept.len()),
            heads: Vec::new(),
            fingerprints: Vec::new(),
            index: HashMap::default(),
            lexicon: Arc::clone(lexicon),
            category_lexicon,
        };
        // Cue and n-gram hashes live in different namespaces of one hash, so a collision
        // between a cue and an n-gram key is as unlikely as any other; keep the first.
        for (k, n) in kept {
            let (h, kind) = ((k >> 8) as u32, (k & 0xff) as u8);
            if model.index.contains_key(&h) {
                continue;
            }
            model.index.insert(h, model.vocab.len() as u32);
            model.vocab.push(h);
            model.row_kind.push(kind);
            model
                .idf
                .push(round4(((1.0 + n_docs) / (1.0 + n as f32)).ln() + 1.0));
        }
        // Vectors of all prepared examples (those outside `idx` are never read).
        let mut xs: Vec<Sparse> = Vec::with_capacity(prepared.len());
        let mut xcs: Vec<Sparse> = Vec::with_capacity(prepared.len());
        let mut dense: Vec<Vec<Dense>> = vec![Vec::with_capacity(prepared.len()); categories.len()];
        for (i, p) in prepared.iter().enumerate() {
            let v = if idx.binary_search(&i).is_ok() {
                model.vectorize(&p.raw)
            } else {
                Vectors {
                    x: Vec::new(),
                    xc: Vec::new(),
                    dense: vec![[0.0; LEX_DIM]; categories.len()],
                }
            };
            xs.push(v.x);
            xcs.push(v.xc);
            for (c, d) in v.dense.into_iter().enumerate() {
                dense[c].push(d);
            }
        }
        let n_rows = model.vocab.len();
        let n_heads = 1 + KINDS.len() + categories.len();
        let use_dense = model.features.lexicon_weight != 0.0;
        model.heads = (0..n_heads)
            .map(|h| Head {
                bias: 0.0,
                weights: vec![0.0; n_rows],
                dense: if h > KINDS.len() && use_dense {
                    vec![0.0; LEX_DIM]
                } else {
                    Vec::new()
                },
            })
            .collect();

        let weights: Vec<f32> = prepared.iter().map(|p| p.weight).collect();
        let is_job: Vec<bool> = prepared.iter().map(|p| p.label.is_job).collect();
        let kinds: Vec<usize> = prepared
            .iter()
            .map(|p| KINDS.iter().position(|k| *k == p.label.kind).unwrap_or(3))
            .collect();
        let jobs: Vec<usize> = idx.iter().copied().filter(|&i| is_job[i]).collect();

        // Deterministic for a seed with the `rand` that Cargo.lock pins; a new `rand` may
        // shuffle otherwise, and so train a slightly different model.
        let mut rng = StdRng::seed_from_u64(opts.seed);
        let mut trainer = Trainer::new(opts, n_rows);
        // is_job head.
        let w = class_weights(idx, &is_job, &weights, opts.balance_classes);
        trainer.binary(
            &mut model.heads[0],
            Input {
                xs: &xs,
                dense: None,
                weights: &weights,
            },
            idx,
            &is_job,
            w,
            &mut rng,
        );
        // kind head (softmax over four rows of heads).
        {
            let (kind_heads, _) = model.heads[1..].split_at_mut(KINDS.len());
            trainer.softmax(kind_heads, &xs, &weights, idx, &kinds, &mut rng);
        }
        // category heads, trained on job posts.
        if !jobs.is_empty() {
            for (c, head) in model.heads[1 + KINDS.len()..].iter_mut().enumerate() {
                let target: Vec<bool> = prepared
                    .iter()
                    .map(|p| p.label.categories.contains(&categories[c]))
                    .collect();
                let w = class_weights(&jobs, &target, &weights, opts.balance_classes);
                trainer.binary(
                    head,
                    Input {
                        xs: &xcs,
                        dense: use_dense.then_some(dense[c].as_slice()),
                        weights: &weights,
                    },
                    &jobs,
                    &target,
                    w,
                    &mut rng,
                );
            }
        }
        // Four decimals are far below what changes a decision and halve the saved size.
        for head in &mut model.heads {
            head.bias = round4(head.bias);
            for w in head.weights.iter_mut().chain(head.dense.iter_mut()) {
                *w = round4(*w);
            }
        }
        model
    }
}

fn round4(x: f32) -> f32 {
    let r = (x * 1e4).round() / 1e4;
    if r == 0.0 { 0.0 } else { r }
}

/// (weight of a negative example, weight of a positive one), on top of the example weights.
fn class_weights(idx: &[usize], y: &[bool], weights: &[f32], balance: bool) -> (f32, f32) {
    let pos: f32 = idx.iter().filter(|&&i| y[i]).map(|&i| weights[i]).sum();
    let total: f32 = idx.iter().map(|&i| weights[i]).sum();
    let neg = total - pos;
    if !balance || pos <= 0.0 || neg <= 0.0 {
        return (1.0, 1.0);
    }
    (total / (2.0 * neg), total / (2.0 * pos))
}

/// What a binary head is trained on: sparse vectors, optional dense lexicon features, and
/// the weight of each example (all indexed by example).
#[derive(Clone, Copy)]
struct Input<'a> {
    xs: &'a [Sparse],
    dense: Option<&'a [Dense]>,
    weights: &'a [f32],
}

/// AdaGrad SGD for logistic and softmax heads.
struct Trainer {
    epochs: u32,
    lr: f32,
    l2: f32,
    /// Squared-gradient accumulators, reused between heads.
    acc: Vec<Vec<f32>>,
}

impl Trainer {
    fn new(opts: &TrainOptions, n_rows: usize) -> Self {
        Self {
            epochs: opts.epochs.max(1),
            lr: opts.learning_rate,
            l2: opts.l2,
            acc: vec![vec![0.0; n_rows]; KINDS.len()],
        }
    }

    fn reset(&mut self) {
        for a in &mut self.acc {
            a.fill(0.0);
        }
    }

    fn binary(
        &mut self,
        head: &mut Head,
        input: Input,
        idx: &[usize],
        y: &[bool],
        (w_neg, w_pos): (f32, f32),
        rng: &mut StdRng,
    ) {
        self.reset();
        let mut order = idx.to_vec();
        let mut bias_acc = 0.0f32;
        let mut dense_acc = [0.0f32; LEX_DIM];
        let acc = &mut self.acc[0];
        for _ in 0..self.epochs {
            order.shuffle(rng);
            for &i in &order {
                let x = &input.xs[i];
                let d = input.dense.map(|d| &d[i]);
                let p = sigmoid(LocalModel::score(head, x, d));
                let (t, cw) = if y[i] { (1.0, w_pos) } else { (0.0, w_neg) };
                let g = (p - t) * cw * input.weights[i];
                step(&mut head.weights, acc, x, g, self.lr, self.l2);
                if let Some(d) = d {
                    for ((w, a), &v) in head.dense.iter_mut().zip(&mut dense_acc).zip(d) {
                        let grad = g * v + self.l2 * *w;
                        *a += grad * grad;
                        *w -= self.lr * grad / (a.sqrt() + 1e-6);
                    }
                }
                bias_acc += g * g;
                head.bias -= self.lr * g / (bias_acc.sqrt() + 1e-6);
            }
        }
    }

    fn softmax(
        &mut self,
        heads: &mut [Head],
        xs: &[Sparse],
        weights: &[f32],
        idx: &[usize],
        y: &[usize],
        rng: &mut StdRng,
    ) {
        self.reset();
        let mut order = idx.to_vec();
        let mut bias_acc = [0.0f32; 4];
        for _ in 0..self.epochs {
            order.shuffle(rng);
            for &i in &order {
                let x = &xs[i];
                let mut z = [0.0f32; 4];
                for (k, zk) in z.iter_mut().enumerate() {
                    *zk = LocalModel::score(&heads[k], x, None);
                }
                let p = softmax4(z);
                for k in 0..4 {
                    let g = (p[k] - if y[i] == k { 1.0 } else { 0.0 }) * weights[i];
                    step(
                        &mut heads[k].weights,
                        &mut self.acc[k],
                        x,
                        g,
                        self.lr,
                        self.l2,
                    );
                    bias_acc[k] += g * g;
                    heads[k].bias -= self.lr * g / (bias_acc[k].sqrt() + 1e-6);
                }
            }
        }
    }
}

/// One AdaGrad step on the rows present in `x` (lazy L2: only touched rows decay).
fn step(w: &mut [f32], acc: &mut [f32], x: &Sparse, g: f32, lr: f32, l2: f32) {
    for &(r, v) in x {
        let r = r as usize;
        let grad = g * v + l2 * w[r];
        acc[r] += grad * grad;
        w[r] -= lr * grad / (acc[r].sqrt() + 1e-6);
    }
}
