//! The local classifier: a small linear model trained in pure Rust.
//!
//! # Model
//!
//! Text is normalized line by line ([`jobwire_core::normalize::normalize`]) and turned into
//! sparse features: character 3–4-grams inside words (robust to Russian inflection and typos),
//! words and word bigrams (digits collapsed, handles and links replaced by placeholders), all
//! keyed by a stable 32-bit FNV hash and weighted by sublinear TF-IDF with L2 normalization;
//! plus generic "kind of text" cues (money and rates, contacts, hiring words, someone offering
//! themselves or describing their own work, first person, promotion, easy-money and scam
//! signs, channel rules, questions, lists, length). Only features seen in at least `min_df`
//! training posts are kept, so the model stores a small vocabulary instead of a full hash
//! space.
//!
//! Each category also has a domain lexicon (`lexicon.rs`, RU + EN stems a freelancer would
//! recognise: `логотип`, `figma`, `монтаж`, `озвучк`, `{lang} на {lang}`, …). Its evidence in a
//! post becomes five dense features that only that category's head sees: whether the lexicon
//! matched, how much (log), its share of all lexicon evidence in the post, whether it is the
//! strongest, and whether it is mentioned first. With a few dozen examples per category the
//! n-grams alone cannot learn the vocabulary of a trade; the lexicon carries it, the n-grams
//! correct it.
//!
//! Three kinds of heads share the features, each a logistic regression with L2 penalty
//! trained by AdaGrad SGD (seeded shuffling, so training is deterministic), every example's
//! gradient scaled by its weight ([`LocalModel::train_weighted`]):
//!
//! * `is_job` — binary, over n-grams and cues;
//! * `kind` — softmax over job / resume / ad / chatter; names the kind of a non-job, and its
//!   P(job) is blended with the `is_job` head's into the raw job score;
//! * one-vs-rest per configured category, over n-grams and that category's lexicon features,
//!   trained on job posts only.
//!
//! # Calibration and decisions
//!
//! [`LocalModel::train`] also runs an inner k-fold cross-validation on its own training set
//! (`calibration_folds`, dup groups and identical texts kept in one fold; the folds and the final
//! model trained two at a time). On the out-of-fold scores it fits Platt scaling of the raw job
//! score, so [`LocalModel::job_probability`] is a calibrated P(job) and a verdict's `confidence` —
//! `max(p, 1 − p)` — is the probability that its `is_job` is right (what the cascade compares with
//! its threshold). On the same out-of-fold scores it chooses the category thresholds: one common
//! threshold, and a category's own one only where that clearly pays off. A job always gets its most
//! likely category, then every other one at or above its threshold, at most `max_categories`.
//! Calibration and thresholds are saved with the model.
//!
//! # Why hand-written
//!
//! The model is a few thousand features times seventeen outputs and trains on a few hundred
//! posts in a fraction of a second (a couple of seconds for two thousand, calibration
//! included). An ML crate (linfa, smartcore, candle, tch) would add minutes of build time,
//! native dependencies or a large dependency tree for what is a few hundred lines of
//! arithmetic, and would make the saved format and determinism someone else's decision.
//! Everything here is plain `f32` arithmetic with no unsafe code.

mod calibrate;
mod cues;
mod features;
mod inner_cv;
mod lexicon;
mod persist;
mod predict;
mod train;

use std::collections::HashMap;
use std::sync::Arc;

use jobwire_core::{CategorySlug, PostKind};
use serde::{Deserialize, Serialize};

pub use features::{FeatureOptions, default_topic_words};

use calibrate::Platt;
use lexicon::{LEX_DIM, Lexicon};

/// The format tag written into saved models and reported as `prompt_version`.
pub const MODEL_FORMAT: &str = "local.v1";

/// Hyper-parameters of [`LocalModel::train`]. The defaults were chosen by 5-fold
/// cross-validation on the development set (see `jobwire_classify::eval::cross_validate`);
/// fields missing from a serialized form take their default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
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
    /// Share of the kind head's P(job) in the job score (0 = binary head only).
    pub kind_blend: f32,
    /// Calibrated probability at which a post is called a job.
    pub job_threshold: f32,
    /// Probability at which a job gets a category besides its most likely one, when no
    /// thresholds could be chosen by inner cross-validation (too few examples).
    pub category_threshold: f32,
    /// At most this many categories per job.
    pub max_categories: usize,
    /// Folds of the inner cross-validation on the training set that calibrates the job
    /// probability and chooses the category thresholds (below 2: no calibration, the
    /// probability is the raw score and every category uses `category_threshold`).
    pub calibration_folds: usize,
    /// Make the inner folds of the calibration by channel (no channel in two of them), so
    /// the job probability and the category thresholds are fitted on channels each fold's
    /// model never saw, as in the service; falls back to folds by dup group and text when
    /// the training set has fewer than `2 × calibration_folds` channels.
    pub calibration_by_channel: bool,
    /// Micro-F1 a category's own threshold must gain over the common one on the inner
    /// cross-validation to be used.
    pub threshold_min_gain: f32,
    /// How text becomes features.
    pub features: FeatureOptions,
}

impl Default for TrainOptions {
    fn default() -> Self {
        Self {
            seed: 7,
            epochs: 15,
            learning_rate: 0.2,
            l2: 1e-4,
            min_df: 2,
            balance_classes: true,
            kind_blend: 0.5,
            job_threshold: 0.5,
            category_threshold: 0.45,
            max_categories: 3,
            calibration_folds: 4,
            calibration_by_channel: true,
            threshold_min_gain: 0.03,
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
    /// Maps the logit of the raw job score to a calibrated probability.
    calibration: Platt,
    category_thresholds: Vec<f32>,
    /// Per category head, Platt scaling of its distance to its threshold
    /// (`logit(p) - logit(t)`) into the probability that the category applies, fitted on
    /// the inner folds' out-of-fold scores. Empty: uncalibrated (older model files).
    category_calibration: Vec<Platt>,
    /// Platt scaling of the category certainty (its logit) into the probability that the
    /// whole category set is right, fitted on the out-of-fold verdicts of the examples the
    /// service learned from its own traffic (the LLM's and people's answers on the posts the
    /// local model was unsure of) when there are enough of them: how sure the model may be on
    /// the channels it actually reads. `None`: the certainty as the heads give it.
    traffic_calibration: Option<Platt>,
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
    lexicon: Arc<Lexicon>,
    /// For each category head, the position of its lexicon in `lexicon` (if it has one).
    category_lexicon: Vec<Option<usize>>,
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
    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ (n >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Head {
    bias: f32,
    weights: Vec<f32>,
    /// Weights of the dense lexicon features (category heads only; empty elsewhere).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    dense: Vec<f32>,
}

/// A sparse, weighted feature vector: (row, value).
type Sparse = Vec<(u32, f32)>;
/// The dense lexicon features one category head sees for one text.
type Dense = [f32; LEX_DIM];

impl LocalModel {
    /// The categories this model was trained for, in head order.
    pub fn categories(&self) -> &[CategorySlug] {
        &self.categories
    }

    /// The threshold of each category (in [`LocalModel::categories`] order) a job's
    /// probability of that category must reach for it to be given besides the most likely one.
    pub fn category_thresholds(&self) -> &[f32] {
        &self.category_thresholds
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

    /// A short id of this model's weights and calibration, for `Classified::model`
    /// (`local:<8 hex>`).
    pub fn id(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for head in &self.heads {
            h.update(head.bias.to_le_bytes());
            for w in head.weights.iter().chain(&head.dense) {
                h.update(w.to_le_bytes());
            }
        }
        h.update(self.calibration.a.to_le_bytes());
        h.update(self.calibration.b.to_le_bytes());
        for t in &self.category_thresholds {
            h.update(t.to_le_bytes());
        }
        format!("local:{}", hex::encode(&h.finalize()[..4]))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::calibrate::sigmoid;
    use super::*;
    use crate::ClassifyError;
    use crate::eval::assign_folds;
    use crate::eval::cross_validation::{held_out, train_without_fold};
    use jobwire_core::dataset::{Label, LabeledPost};

    fn categories() -> Vec<CategorySlug> {
        jobwire_core::category::standard()
    }

    fn dev_set() -> Vec<LabeledPost> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/dev.jsonl");
        LabeledPost::parse_all(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn post(id: &str, text: &str, is_job: bool) -> LabeledPost {
        LabeledPost {
            id: id.to_owned(),
            channel: "@test".to_owned(),
            text: text.to_owned(),
            label: Some(Label {
                is_job,
                kind: if is_job {
                    PostKind::Job
                } else {
                    PostKind::Chatter
                },
                categories: if is_job {
                    vec![CategorySlug::parse("web").unwrap()]
                } else {
                    Vec::new()
                },
            }),
            dup_group: None,
        }
    }

    /// (confidence, is_job right) of every dev post, each scored by a model that did not
    /// see it (5 folds).
    fn held_out_confidences() -> Vec<(f32, bool)> {
        let data = dev_set();
        let cats = categories();
        let folds = assign_folds(&data, 5, 7);
        let mut out = Vec::new();
        for fold in 0..5 {
            let model =
                train_without_fold(&data, &[], &folds, fold, &cats, &TrainOptions::default())
                    .unwrap();
            for p in held_out(&folds, fold).map(|i| &data[i]) {
                let v = model.predict(&p.text);
                let truth = p.label.as_ref().unwrap().is_job;
                out.push((v.confidence, v.is_job == truth));
            }
        }
        out
    }

    #[test]
    fn confident_verdicts_are_right_far_more_often_than_unsure_ones() {
        let points = held_out_confidences();
        assert_eq!(points.len(), 240);
        let bucket = |keep: &dyn Fn(f32) -> bool| {
            let b: Vec<&(f32, bool)> = points.iter().filter(|(c, _)| keep(*c)).collect();
            let right = b.iter().filter(|(_, ok)| *ok).count() as f32;
            let mean_conf = b.iter().map(|(c, _)| c).sum::<f32>() / b.len().max(1) as f32;
            (b.len(), right / b.len().max(1) as f32, mean_conf)
        };
        let (n_high, acc_high, conf_high) = bucket(&|c| c >= 0.9);
        let (n_low, acc_low, conf_low) = bucket(&|c| c < 0.7);
        println!(
            "confidence >= 0.9: {n_high} posts, {acc_high:.3} right (mean confidence \
             {conf_high:.3}); < 0.7: {n_low} posts, {acc_low:.3} right (mean {conf_low:.3})"
        );
        // Most posts are easy and the model says so.
        assert!(n_high >= 120, "only {n_high} confident verdicts");
        assert!(acc_high >= 0.97, "confident verdicts right {acc_high:.3}");
        // The unsure ones exist, are wrong often, and are the ones to send to the LLM.
        assert!(n_low >= 8, "only {n_low} unsure verdicts");
        assert!(acc_low <= 0.85, "unsure verdicts right {acc_low:.3}");
        assert!(
            1.0 - acc_low >= 5.0 * (1.0 - acc_high),
            "unsure verdicts are not wrong much more often"
        );
        // Calibrated: in both buckets the stated confidence is close to the observed accuracy.
        assert!(
            (acc_high - conf_high).abs() < 0.06,
            "{acc_high} vs {conf_high}"
        );
        assert!((acc_low - conf_low).abs() < 0.2, "{acc_low} vs {conf_low}");
    }

    #[test]
    fn a_digest_of_gigs_gets_every_trade_its_items_ask_for() {
        let model = LocalModel::train(&dev_set(), &categories(), &TrainOptions::default()).unwrap();
        let slugs = |v: &jobwire_core::Verdict| -> Vec<String> {
            let mut s: Vec<String> = v.categories.iter().map(|c| c.to_string()).collect();
            s.sort();
            s
        };
        let digest = "Подборка заказов на сегодня\n\
            1. Нарисовать логотип и фирменный стиль для кофейни — 15 000 ₽, пишите @coffee_owner\n\
            2. Смонтировать ролик для YouTube-канала о путешествиях, 10 минут — 4 000 руб, @travel_vlog\n\
            3. Перевести сайт клиники с русского на английский — 9 000 ₽, t.me/clinic_hr";
        let v = model.predict(digest);
        assert!(v.is_job, "{v:?}");
        assert_eq!(slugs(&v), ["design", "translation", "video"], "{v:?}");
        // A vacancy's numbered requirements are not gigs of their own: no item has a contact
        // or a price, and the post keeps the categories the whole text gives.
        let vacancy = "Ищем веб-разработчика на сайт интернет-магазина, бюджет 80 000 ₽\n\
            1. Опыт с Laravel от двух лет\n\
            2. Умение верстать по макетам из Figma\n\
            Отклики: @shop_hr";
        assert!(predict::digest_items(vacancy).is_empty());
        assert_eq!(predict::digest_items(digest).len(), 3);
        // One numbered line is not a digest.
        assert!(predict::digest_items("1. Логотип для кофейни — 5 000 ₽, @a").is_empty());
    }

    #[test]
    fn job_probability_is_what_predict_decides_on() {
        let data = dev_set();
        let model = LocalModel::train(&data, &categories(), &TrainOptions::default()).unwrap();
        assert_ne!(
            model.calibration,
            Platt::default(),
            "calibration was fitted"
        );
        for text in [
            "Нужен лендинг на Тильде, бюджет 20к, пишите в лс",
            "Делаю лендинги на Тильде, портфолио в профиле",
            "Подскажите, где искать заказчиков?",
            "",
        ] {
            let p = model.job_probability(text);
            let v = model.predict(text);
            assert!((0.0..=1.0).contains(&p));
            assert_eq!(v.is_job, p >= 0.5, "{text}: {p}");
            assert!((v.confidence - p.max(1.0 - p)).abs() < 1e-6, "{text}");
        }
        assert!(model.job_probability("Нужен лендинг на Тильде, бюджет 20к, пишите в лс") > 0.8);
        assert!(model.job_probability("Делаю лендинги на Тильде, портфолио в профиле") < 0.5);
    }

    #[test]
    fn calibration_and_thresholds_survive_save_and_load_and_old_files_still_load() {
        let data = dev_set();
        let model = LocalModel::train(&data, &categories(), &TrainOptions::default()).unwrap();
        let mut bytes = Vec::new();
        model.save(&mut bytes).unwrap();
        let loaded = LocalModel::load(bytes.as_slice()).unwrap();
        assert_eq!(loaded.calibration, model.calibration);
        assert_eq!(loaded.category_thresholds(), model.category_thresholds());
        let text = "Need a logo and a banner for our coffee shop, $200";
        assert_eq!(loaded.job_probability(text), model.job_probability(text));
        // A file written before calibration existed loads with the identity calibration.
        let mut json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        json.as_object_mut().unwrap().remove("calibration");
        let old = LocalModel::load(json.to_string().as_bytes()).unwrap();
        assert_eq!(old.calibration, Platt::default());
        let raw = sigmoid(model.scores(text).job_logit);
        assert!((old.job_probability(text) - raw).abs() < 1e-5);
    }

    #[test]
    fn the_traffic_calibration_raises_category_certainty_and_survives_save_and_load() {
        let data = dev_set();
        let mut model = LocalModel::train(&data, &categories(), &TrainOptions::default()).unwrap();
        // Trained on the dataset alone: no traffic, no traffic calibration.
        assert_eq!(model.traffic_calibration, None);
        let text = "Нужен лендинг на Tilda и пара баннеров для рекламы в VK, бюджет 30к";
        let before = model.predict(text);
        assert!(before.is_job);
        model.traffic_calibration = Some(Platt { a: 0.7, b: 0.8 });
        let after = model.predict(text);
        assert_eq!(after.categories, before.categories);
        assert!(
            after.category_confidence > before.category_confidence,
            "{before:?} {after:?}"
        );
        let mut bytes = Vec::new();
        model.save(&mut bytes).unwrap();
        let loaded = LocalModel::load(bytes.as_slice()).unwrap();
        assert_eq!(loaded.traffic_calibration, model.traffic_calibration);
        assert_eq!(loaded.predict(text), after);
        // A file whose traffic calibration is not a number is refused, not half-used.
        let mut json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        json["traffic_calibration"]["a"] = serde_json::json!("NaN");
        assert!(LocalModel::load(json.to_string().as_bytes()).is_err());
    }

    #[test]
    fn weights_decide_between_conflicting_labels() {
        let data = dev_set();
        let cats = categories();
        let opts = TrainOptions::default();
        // The same post, labeled a job by one source and chatter by another.
        let text = "Коллеги, кто-нибудь делал выгрузку фида для Яндекс Маркета из самописной CMS?";
        let with = |w_job: f32, w_chat: f32| {
            let mut set: Vec<(LabeledPost, f32)> = data.iter().map(|p| (p.clone(), 1.0)).collect();
            set.push((post("x-job", text, true), w_job));
            set.push((post("x-chat", text, false), w_chat));
            LocalModel::train_weighted(&set, &cats, &opts).unwrap()
        };
        let admin_says_job = with(2.0, 0.5);
        let admin_says_chatter = with(0.5, 2.0);
        let (p_job, p_chat) = (
            admin_says_job.job_probability(text),
            admin_says_chatter.job_probability(text),
        );
        assert!(p_job > p_chat + 0.2, "{p_job} vs {p_chat}");
        assert!(admin_says_job.predict(text).is_job);
        assert!(!admin_says_chatter.predict(text).is_job);
    }

    #[test]
    fn unit_weights_are_plain_training_and_zero_weights_are_skipped() {
        let data = dev_set();
        let cats = categories();
        let opts = TrainOptions::default();
        let plain = LocalModel::train(&data, &cats, &opts).unwrap();
        let mut set: Vec<(LabeledPost, f32)> = data.iter().map(|p| (p.clone(), 1.0)).collect();
        assert_eq!(
            LocalModel::train_weighted(&set, &cats, &opts).unwrap().id(),
            plain.id()
        );
        let ignored = "Нужен бот, который будет отвечать в чате вместо меня, бюджет 5000₽";
        set.push((post("x0", ignored, false), 0.0));
        let with_zero = LocalModel::train_weighted(&set, &cats, &opts).unwrap();
        assert_eq!(with_zero.id(), plain.id());
        assert!(!with_zero.was_trained_on(ignored));
        for bad in [-1.0, f32::NAN, f32::INFINITY] {
            set.push((post("bad", "text", true), bad));
            assert!(matches!(
                LocalModel::train_weighted(&set, &cats, &opts),
                Err(ClassifyError::Invalid(_))
            ));
            set.pop();
        }
    }

    #[test]
    fn fresh_orders_get_the_category_a_freelancer_would_give() {
        // Posts written for this test (not in the dev set), one per category.
        let model = LocalModel::train(&dev_set(), &categories(), &TrainOptions::default()).unwrap();
        let cases = [
            (
                "web",
                "Требуется доработать интернет-магазин на Битриксе: корзина и личный кабинет. Бюджет 40к, пишите @shop_owner",
            ),
            (
                "bots",
                "Нужен парсер цен конкурентов с выгрузкой в телеграм раз в день, оплата 7000₽, пишите в лс",
            ),
            (
                "mobile",
                "Need an Android developer to fix crashes in our Kotlin app before release, $30/h, DM me",
            ),
            (
                "design",
                "Ищу дизайнера: нарисовать логотип и фирменный стиль для студии йоги, бюджет 12 000₽",
            ),
            (
                "video",
                "Нужен монтажер для еженедельных роликов на ютуб, 15 минут, 2000₽ за ролик, пишите",
            ),
            (
                "texts",
                "Ищем копирайтера: 10 статей в месяц для блога клиники, 4-5 тыс. знаков, 150₽ за 1000 знаков",
            ),
            (
                "marketing",
                "Нужен таргетолог: запустить рекламу в VK для школы танцев, бюджет на рекламу 30к, оплата 15к",
            ),
            (
                "ai",
                "Looking for someone to set up Stable Diffusion with a custom LoRA for product photos, $300 fixed, DM",
            ),
            (
                "assistant",
                "Ищу ассистента на 3 часа в день: вести календарь, отвечать клиентам в директе, 20к/мес, пишите",
            ),
            (
                "translation",
                "Need a translator from German to English for a 30-page technical manual, $0.06/word, DM",
            ),
            (
                "audio",
                "Ищу диктора с приятным женским голосом для озвучки аудиокниги, 8 часов, оплата договорная, пишите",
            ),
            (
                "data",
                "Нужно свести данные из 12 Excel-файлов в одну таблицу и сделать дашборд в Google Sheets, 5000₽",
            ),
        ];
        let mut wrong = Vec::new();
        for (want, text) in cases {
            let v = model.predict(text);
            if !v.is_job || v.categories.first().map(CategorySlug::as_str) != Some(want) {
                wrong.push(format!("{want}: {v:?}"));
            }
        }
        assert!(wrong.len() <= 1, "wrong: {wrong:#?}");
    }
}
