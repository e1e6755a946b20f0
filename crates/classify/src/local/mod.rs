//! The local classifier: a small linear model trained in pure Rust.
//!
//! # Model
//!
//! Text is normalized ([`jobwire_core::normalize::normalize`]) and turned into sparse
//! features: character 3–4-grams inside words (robust to Russian inflection and typos), words
//! and word bigrams (digits collapsed, handles and links replaced by placeholders), all keyed by
//! a stable 32-bit FNV hash and weighted by sublinear TF-IDF with L2 normalization; plus a
//! dozen generic "kind of text" cues (money and rates, contacts, hiring words, someone offering
//! themselves, first person, promotion, easy-money adverts, questions, length). Only features
//! seen in at least `min_df` training posts are kept, so the model stores a small vocabulary
//! instead of a full hash space.
//!
//! Three heads share the features, each a logistic regression with L2 penalty trained by
//! AdaGrad SGD (seeded shuffling, so training is deterministic):
//!
//! * `is_job` — binary; its sigmoid (optionally blended with the kind head's P(job)) is the
//!   verdict's `confidence` basis;
//! * `kind` — softmax over job / resume / ad / chatter; names the kind of a non-job;
//! * one-vs-rest per configured category, trained on job posts only; a job gets every category
//!   whose probability reaches that category's threshold, and at least the most likely one.
//!
//! # Why hand-written
//!
//! The model is a few thousand features times seventeen outputs and trains on a few hundred
//! posts in well under a second. An ML crate (linfa, smartcore, candle, tch) would add
//! minutes of build time, native dependencies or a large dependency tree for what is ~300
//! lines of arithmetic, and would make the saved format and determinism someone else's
//! decision. Everything here is plain `f32` arithmetic with no unsafe code.

mod features;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use jobwire_core::dataset::LabeledPost;
use jobwire_core::{CategorySlug, PostKind, Verdict};
use serde::{Deserialize, Serialize};

pub use features::FeatureOptions;

use crate::{Classified, Classifier, ClassifyError, ClassifyInput};

/// The format tag written into saved models and reported as `prompt_version`.
pub const MODEL_FORMAT: &str = "local.v1";

/// Hyper-parameters of [`LocalModel::train`]. The defaults were chosen by 5-fold
/// cross-validation on the development set (see `jobwire_classify::eval::cross_validate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainOptions {
    /// Seed of the example shuffling (training is deterministic for a given seed).
    pub seed: u64,
    /// Passes over the training data.
    pub epochs: u32,
    /// AdaGrad base learning rate.
    pub learning_rate: f32,
    /// L2 penalty on weights (not on biases).
    pub l2: f32,
    /// Keep only features present in at least this many training posts.
    pub min_df: u32,
    /// Weigh classes inversely to their frequency (binary heads).
    pub balance_classes: bool,
    /// Share of the kind head's P(job) in the job probability (0 = binary head only).
    pub kind_blend: f32,
    /// Probability at which a post is called a job.
    pub job_threshold: f32,
    /// Probability at which a job gets a category (besides its most likely one).
    pub category_threshold: f32,
    /// At most this many categories per job.
    pub max_categories: usize,
    /// How text becomes features.
    pub features: FeatureOptions,
}

impl Default for TrainOptions {
    fn default() -> Self {
        Self {
            seed: 7,
            epochs: 10,
            learning_rate: 0.2,
            l2: 1e-4,
            min_df: 2,
            balance_classes: true,
            kind_blend: 0.5,
            job_threshold: 0.5,
            category_threshold: 0.45,
            max_categories: 3,
            features: FeatureOptions::default(),
        }
    }
}

const KINDS: [PostKind; 4] = PostKind::ALL;
const ROW_TERM: u8 = 0;
const ROW_CUE: u8 = 1;
const ROW_TOPIC: u8 = 2;

/// A trained local model. Cheap to share behind an `Arc`; prediction takes `&self`.
#[derive(Debug, Clone)]
pub struct LocalModel {
    format: String,
    categories: Vec<CategorySlug>,
    features: FeatureOptions,
    job_threshold: f32,
    kind_blend: f32,
    category_thresholds: Vec<f32>,
    max_categories: usize,
    /// Feature hash of each row, in row order.
    vocab: Vec<u32>,
    /// Inverse document frequency of each row (for n-gram rows; cue rows use `cue_weight`).
    idf: Vec<f32>,
    /// What each row is: [`ROW_TERM`], [`ROW_CUE`] or [`ROW_TOPIC`].
    row_kind: Vec<u8>,
    /// Heads: `is_job`, then the four kinds, then one per category.
    heads: Vec<Head>,
    /// Fingerprints of the training texts, sorted.
    fingerprints: Vec<u64>,
    index: HashMap<u32, u32, IdHash>,
    topics: features::TopicMatcher,
}

/// Hasher for keys that already are hashes: one multiply instead of SipHash.
#[derive(Debug, Clone, Copy, Default)]
struct IdHash;

impl std::hash::BuildHasher for IdHash {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher(0)
    }
}

#[derive(Debug, Clone, Copy)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Head {
    bias: f32,
    weights: Vec<f32>,
}

/// A sparse, weighted feature vector: (row, value).
type Sparse = Vec<(u32, f32)>;

impl LocalModel {
    /// Trains a model on the labeled examples (unlabeled ones are skipped). Categories of the
    /// labels outside `categories` are ignored. Deterministic for a given `opts.seed`.
    pub fn train(
        examples: &[LabeledPost],
        categories: &[CategorySlug],
        opts: &TrainOptions,
    ) -> Result<LocalModel, ClassifyError> {
        let labeled: Vec<(&LabeledPost, &jobwire_core::dataset::Label)> = examples
            .iter()
            .filter_map(|e| e.label.as_ref().map(|l| (e, l)))
            .collect();
        if labeled.is_empty() {
            return Err(ClassifyError::Invalid(
                "no labeled examples to train on".into(),
            ));
        }
        if categories.is_empty() {
            return Err(ClassifyError::Invalid("no categories configured".into()));
        }
        let topics = features::TopicMatcher::new(&opts.features.topic_words);
        let raw: Vec<features::RawFeatures> = labeled
            .iter()
            .map(|(e, _)| {
                features::extract(&prepare(&e.text, &opts.features), &opts.features, &topics)
            })
            .collect();

        // Vocabulary: features present in at least `min_df` posts.
        let mut df: HashMap<(u32, u8), u32> = HashMap::new();
        for r in &raw {
            for &(h, _) in &r.terms {
                *df.entry((h, ROW_TERM)).or_default() += 1;
            }
            for &h in &r.cues {
                *df.entry((h, ROW_CUE)).or_default() += 1;
            }
            for &h in &r.topics {
                *df.entry((h, ROW_TOPIC)).or_default() += 1;
            }
        }
        let mut kept: Vec<((u32, u8), u32)> = df
            .into_iter()
            .filter(|(_, n)| *n >= opts.min_df.max(1))
            .collect();
        kept.sort_unstable();
        let n_docs = raw.len() as f32;
        let mut model = LocalModel {
            format: MODEL_FORMAT.to_owned(),
            categories: categories.to_vec(),
            features: opts.features.clone(),
            job_threshold: opts.job_threshold,
            kind_blend: opts.kind_blend.clamp(0.0, 1.0),
            category_thresholds: vec![opts.category_threshold; categories.len()],
            max_categories: opts.max_categories.max(1),
            vocab: Vec::with_capacity(kept.len()),
            idf: Vec::with_capacity(kept.len()),
            row_kind: Vec::with_capacity(kept.len()),
            heads: Vec::new(),
            fingerprints: Vec::new(),
            index: HashMap::default(),
            topics,
        };
        // Cue and n-gram hashes live in different namespaces of one hash, so a collision
        // between a cue and an n-gram key is as unlikely as any other; keep the first.
        for ((h, kind), n) in kept {
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
        let (xs, xcs): (Vec<Sparse>, Vec<Sparse>) = raw.iter().map(|r| model.vectorize(r)).unzip();
        let n_rows = model.vocab.len();
        let n_heads = 1 + KINDS.len() + categories.len();
        model.heads = (0..n_heads)
            .map(|_| Head {
                bias: 0.0,
                weights: vec![0.0; n_rows],
            })
            .collect();

        let is_job: Vec<bool> = labeled.iter().map(|(_, l)| l.is_job).collect();
        let kinds: Vec<usize> = labeled
            .iter()
            .map(|(_, l)| KINDS.iter().position(|k| *k == l.kind).unwrap_or(3))
            .collect();
        let jobs: Vec<usize> = (0..labeled.len()).filter(|&i| is_job[i]).collect();
        let cat_targets: Vec<Vec<bool>> = categories
            .iter()
            .map(|c| {
                (0..labeled.len())
                    .map(|i| labeled[i].1.categories.contains(c))
                    .collect()
            })
            .collect();

        let mut rng = SplitMix64(opts.seed);
        let mut trainer = Trainer::new(opts, n_rows);
        // is_job head.
        {
            let all: Vec<usize> = (0..xs.len()).collect();
            let w = class_weights(&all, &is_job, opts.balance_classes);
            trainer.binary(&mut model.heads[0], &xs, &all, &is_job, w, &mut rng);
        }
        // kind head (softmax over four rows of heads).
        {
            let (kind_heads, _) = model.heads[1..].split_at_mut(KINDS.len());
            trainer.softmax(kind_heads, &xs, &kinds, &mut rng);
        }
        // category heads, trained on job posts.
        if !jobs.is_empty() {
            for (c, head) in model.heads[1 + KINDS.len()..].iter_mut().enumerate() {
                let w = class_weights(&jobs, &cat_targets[c], opts.balance_classes);
                trainer.binary(head, &xcs, &jobs, &cat_targets[c], w, &mut rng);
            }
        }
        // Four decimals are far below what changes a decision and halve the saved size.
        for head in &mut model.heads {
            head.bias = round4(head.bias);
            for w in &mut head.weights {
                *w = round4(*w);
            }
        }
        let mut fps: Vec<u64> = labeled
            .iter()
            .map(|(e, _)| features::fingerprint(&e.text))
            .collect();
        fps.sort_unstable();
        fps.dedup();
        model.fingerprints = fps;
        Ok(model)
    }

    /// The feature vectors of one text: (for the job and kind heads: n-grams and cues; for
    /// the category heads: n-grams and topics). Cues describe the genre of a text and only
    /// add noise to the topic decision, topics the other way round.
    fn vectorize(&self, raw: &features::RawFeatures) -> (Sparse, Sparse) {
        let mut v: Sparse = Vec::with_capacity(raw.terms.len() + raw.cues.len());
        let mut norm = 0.0f32;
        for &(h, tf) in &raw.terms {
            if let Some(&row) = self.index.get(&h)
                && self.row_kind[row as usize] == ROW_TERM
            {
                let x = (1.0 + tf.ln()) * self.idf[row as usize];
                norm += x * x;
                v.push((row, x));
            }
        }
        if norm > 0.0 {
            let inv = norm.sqrt().recip();
            for (_, x) in &mut v {
                *x *= inv;
            }
        }
        let mut cat = v.clone();
        let extend = |out: &mut Sparse, hashes: &[u32], kind: u8, value: f32| {
            for h in hashes {
                if let Some(&row) = self.index.get(h)
                    && self.row_kind[row as usize] == kind
                {
                    out.push((row, value));
                }
            }
        };
        extend(&mut v, &raw.cues, ROW_CUE, self.features.cue_weight);
        extend(&mut cat, &raw.topics, ROW_TOPIC, self.features.topic_weight);
        (v, cat)
    }

    fn score(head: &Head, x: &Sparse) -> f32 {
        let mut z = head.bias;
        for &(r, v) in x {
            z += head.weights[r as usize] * v;
        }
        z
    }

    /// Probabilities for one text: (P(job), P(kind) in [`PostKind::ALL`] order, P(category)).
    fn probabilities(&self, text: &str) -> (f32, [f32; 4], Vec<f32>) {
        let raw = features::extract(&prepare(text, &self.features), &self.features, &self.topics);
        let (x, xc) = self.vectorize(&raw);
        let p_bin = sigmoid(Self::score(&self.heads[0], &x));
        let mut zs = [0.0f32; 4];
        for (k, z) in zs.iter_mut().enumerate() {
            *z = Self::score(&self.heads[1 + k], &x);
        }
        let pk = softmax4(zs);
        let p_job = (1.0 - self.kind_blend) * p_bin + self.kind_blend * pk[0];
        let pc = self.heads[1 + KINDS.len()..]
            .iter()
            .map(|h| sigmoid(Self::score(h, &xc)))
            .collect();
        (p_job, pk, pc)
    }

    /// Classifies one text. Never fails and never panics; categories are always members of
    /// the configured set, and only jobs get categories.
    pub fn predict(&self, text: &str) -> Verdict {
        let (p_job, pk, pc) = self.probabilities(text);
        let is_job = p_job >= self.job_threshold;
        let kind = if is_job {
            PostKind::Job
        } else {
            let mut best = 1;
            for k in 2..4 {
                if pk[k] > pk[best] {
                    best = k;
                }
            }
            KINDS[best]
        };
        let categories = if is_job {
            let mut order: Vec<usize> = (0..pc.len()).collect();
            order.sort_by(|&a, &b| pc[b].total_cmp(&pc[a]));
            order
                .iter()
                .enumerate()
                .filter(|&(rank, &c)| rank == 0 || pc[c] >= self.category_thresholds[c])
                .take(self.max_categories)
                .map(|(_, &c)| self.categories[c].clone())
                .collect()
        } else {
            Vec::new()
        };
        let confidence = if is_job { p_job } else { 1.0 - p_job };
        Verdict {
            is_job,
            kind,
            categories,
            confidence: confidence.clamp(0.0, 1.0),
        }
    }

    /// The categories this model was trained for, in head order.
    pub fn categories(&self) -> &[CategorySlug] {
        &self.categories
    }

    /// Sorted fingerprints of the training texts (see [`LocalModel::fingerprint`]).
    pub fn training_fingerprints(&self) -> &[u64] {
        &self.fingerprints
    }

    /// Whether this exact text (up to surrounding whitespace) was in the training set.
    pub fn was_trained_on(&self, text: &str) -> bool {
        self.fingerprints
            .binary_search(&features::fingerprint(text))
            .is_ok()
    }

    /// The fingerprint [`LocalModel::training_fingerprints`] holds for a text: the first
    /// 8 bytes of SHA-256 of the trimmed text, little-endian.
    pub fn fingerprint(text: &str) -> u64 {
        features::fingerprint(text)
    }

    /// Number of features kept (rows of the weight matrix).
    pub fn n_features(&self) -> usize {
        self.vocab.len()
    }

    /// A short id of this model's weights, for `Classified::model` (`local:<8 hex>`).
    pub fn id(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for head in &self.heads {
            h.update(head.bias.to_le_bytes());
            for w in &head.weights {
                h.update(w.to_le_bytes());
            }
        }
        format!("local:{}", hex::encode(&h.finalize()[..4]))
    }

    /// Writes the model as JSON.
    pub fn save(&self, w: impl Write) -> Result<(), ClassifyError> {
        serde_json::to_writer(w, &self.to_wire()).map_err(|e| {
            if e.is_io() {
                ClassifyError::Io(std::io::Error::other(e))
            } else {
                ClassifyError::Invalid(format!("cannot encode model: {e}"))
            }
        })
    }

    /// Reads a model written by [`LocalModel::save`], checking its consistency.
    pub fn load(r: impl Read) -> Result<LocalModel, ClassifyError> {
        let wire: WireModel = serde_json::from_reader(r)
            .map_err(|e| ClassifyError::Invalid(format!("not a local model file: {e}")))?;
        Self::from_wire(wire)
    }
}

/// The saved form: categories as strings, the rest as is.
#[derive(Serialize, Deserialize)]
struct WireModel {
    format: String,
    categories: Vec<String>,
    features: FeatureOptions,
    job_threshold: f32,
    kind_blend: f32,
    category_thresholds: Vec<f32>,
    max_categories: usize,
    vocab: Vec<u32>,
    idf: Vec<f32>,
    row_kind: Vec<u8>,
    heads: Vec<Head>,
    fingerprints: Vec<u64>,
}

impl LocalModel {
    fn to_wire(&self) -> WireModel {
        WireModel {
            format: self.format.clone(),
            categories: self
                .categories
                .iter()
                .map(|c| c.as_str().to_owned())
                .collect(),
            features: self.features.clone(),
            job_threshold: self.job_threshold,
            kind_blend: self.kind_blend,
            category_thresholds: self.category_thresholds.clone(),
            max_categories: self.max_categories,
            vocab: self.vocab.clone(),
            idf: self.idf.clone(),
            row_kind: self.row_kind.clone(),
            heads: self.heads.clone(),
            fingerprints: self.fingerprints.clone(),
        }
    }

    fn from_wire(w: WireModel) -> Result<LocalModel, ClassifyError> {
        let bad = |m: &str| Err(ClassifyError::Invalid(format!("corrupt local model: {m}")));
        if w.format != MODEL_FORMAT {
            return bad(&format!("format {:?}, expected {MODEL_FORMAT:?}", w.format));
        }
        let categories = w
            .categories
            .iter()
            .map(|c| CategorySlug::parse(c))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ClassifyError::Invalid(format!("corrupt local model: {e}")))?;
        let n = w.vocab.len();
        if w.idf.len() != n || w.row_kind.len() != n || w.row_kind.iter().any(|&k| k > ROW_TOPIC) {
            return bad("vocabulary arrays differ in length");
        }
        if w.heads.len() != 1 + KINDS.len() + categories.len()
            || w.heads.iter().any(|h| h.weights.len() != n)
        {
            return bad("weight matrix does not match the vocabulary and categories");
        }
        if w.category_thresholds.len() != categories.len() {
            return bad("one threshold per category expected");
        }
        let index = w
            .vocab
            .iter()
            .enumerate()
            .map(|(i, &h)| (h, i as u32))
            .collect();
        let topics = features::TopicMatcher::new(&w.features.topic_words);
        Ok(LocalModel {
            format: w.format,
            categories,
            features: w.features,
            job_threshold: w.job_threshold,
            kind_blend: w.kind_blend,
            category_thresholds: w.category_thresholds,
            max_categories: w.max_categories.max(1),
            vocab: w.vocab,
            idf: w.idf,
            row_kind: w.row_kind,
            heads: w.heads,
            fingerprints: w.fingerprints,
            index,
            topics,
        })
    }
}

/// Bounds and normalizes a text before feature extraction.
fn prepare(text: &str, opts: &FeatureOptions) -> String {
    let end = text
        .char_indices()
        .nth(opts.max_chars)
        .map_or(text.len(), |(i, _)| i);
    jobwire_core::normalize::normalize(&text[..end])
}

fn round4(x: f32) -> f32 {
    let r = (x * 1e4).round() / 1e4;
    if r == 0.0 { 0.0 } else { r }
}

fn sigmoid(z: f32) -> f32 {
    1.0 / (1.0 + (-z).exp())
}

fn softmax4(z: [f32; 4]) -> [f32; 4] {
    let m = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut e = z.map(|v| (v - m).exp());
    let s: f32 = e.iter().sum();
    for v in &mut e {
        *v /= s;
    }
    e
}

/// (weight of a negative example, weight of a positive one).
fn class_weights(idx: &[usize], y: &[bool], balance: bool) -> (f32, f32) {
    let pos = idx.iter().filter(|&&i| y[i]).count() as f32;
    let neg = idx.len() as f32 - pos;
    if !balance || pos == 0.0 || neg == 0.0 {
        return (1.0, 1.0);
    }
    let n = idx.len() as f32;
    (n / (2.0 * neg), n / (2.0 * pos))
}

/// SplitMix64: a tiny, stable PRNG for shuffling (stable across crate versions, unlike
/// `rand`'s `StdRng`, so a seed always means the same model).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
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
        xs: &[Sparse],
        idx: &[usize],
        y: &[bool],
        (w_neg, w_pos): (f32, f32),
        rng: &mut SplitMix64,
    ) {
        self.reset();
        let mut order = idx.to_vec();
        let mut bias_acc = 0.0f32;
        let acc = &mut self.acc[0];
        for _ in 0..self.epochs {
            rng.shuffle(&mut order);
            for &i in &order {
                let x = &xs[i];
                let p = sigmoid(LocalModel::score(head, x));
                let (t, cw) = if y[i] { (1.0, w_pos) } else { (0.0, w_neg) };
                let g = (p - t) * cw;
                step(&mut head.weights, acc, x, g, self.lr, self.l2);
                bias_acc += g * g;
                head.bias -= self.lr * g / (bias_acc.sqrt() + 1e-6);
            }
        }
    }

    fn softmax(&mut self, heads: &mut [Head], xs: &[Sparse], y: &[usize], rng: &mut SplitMix64) {
        self.reset();
        let mut order: Vec<usize> = (0..xs.len()).collect();
        let mut bias_acc = [0.0f32; 4];
        for _ in 0..self.epochs {
            rng.shuffle(&mut order);
            for &i in &order {
                let x = &xs[i];
                let mut z = [0.0f32; 4];
                for (k, zk) in z.iter_mut().enumerate() {
                    *zk = LocalModel::score(&heads[k], x);
                }
                let p = softmax4(z);
                for k in 0..4 {
                    let g = p[k] - if y[i] == k { 1.0 } else { 0.0 };
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

/// [`Classifier`] over a shared [`LocalModel`].
#[derive(Debug, Clone)]
pub struct LocalClassifier {
    model: Arc<LocalModel>,
    model_id: String,
}

impl LocalClassifier {
    /// Wraps a trained model.
    pub fn new(model: Arc<LocalModel>) -> Self {
        let model_id = model.id();
        Self { model, model_id }
    }

    /// The wrapped model.
    pub fn model(&self) -> &Arc<LocalModel> {
        &self.model
    }
}

#[async_trait]
impl Classifier for LocalClassifier {
    async fn classify(&self, post: &ClassifyInput) -> Result<Classified, ClassifyError> {
        let started = Instant::now();
        let verdict = self.model.predict(&post.text);
        Ok(Classified {
            verdict,
            model: self.model_id.clone(),
            prompt_version: MODEL_FORMAT.to_owned(),
            tokens_in: 0,
            tokens_out: 0,
            latency_ms: u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX),
        })
    }

    fn name(&self) -> &str {
        "local"
    }

    fn was_trained_on(&self, text: &str) -> bool {
        self.model.was_trained_on(text)
    }
}
