//! Saving and loading: the JSON wire form of a model and the consistency checks on load.

use std::io::{Read, Write};
use std::sync::Arc;

use jobwire_core::CategorySlug;
use serde::{Deserialize, Serialize};

use super::calibrate::Platt;
use super::features::FeatureOptions;
use super::lexicon::{LEX_DIM, Lexicon};
use super::{Head, KINDS, LocalModel, MODEL_FORMAT, ROW_TOPIC};
use crate::ClassifyError;

impl LocalModel {
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
    /// Absent in files of older versions: the identity (no calibration).
    #[serde(default)]
    calibration: Platt,
    category_thresholds: Vec<f32>,
    /// Absent in files of older versions: category confidence from raw margins.
    #[serde(default)]
    category_calibration: Vec<Platt>,
    /// Absent in files of older versions: none.
    #[serde(default)]
    traffic_calibration: Option<Platt>,
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
            calibration: self.calibration,
            category_thresholds: self.category_thresholds.clone(),
            category_calibration: self.category_calibration.clone(),
            traffic_calibration: self.traffic_calibration,
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
            || w.heads
                .iter()
                .any(|h| !h.dense.is_empty() && h.dense.len() != LEX_DIM)
        {
            return bad("weight matrix does not match the vocabulary and categories");
        }
        if w.category_thresholds.len() != categories.len() {
            return bad("one threshold per category expected");
        }
        if !(w.calibration.a.is_finite() && w.calibration.b.is_finite()) {
            return bad("calibration is not finite");
        }
        if w.traffic_calibration
            .is_some_and(|p| !p.a.is_finite() || !p.b.is_finite())
        {
            return bad("the traffic calibration is not finite");
        }
        if !w.category_calibration.is_empty()
            && (w.category_calibration.len() != categories.len()
                || w.category_calibration
                    .iter()
                    .any(|c| !(c.a.is_finite() && c.b.is_finite())))
        {
            return bad("category calibration does not match the categories");
        }
        let index = w
            .vocab
            .iter()
            .enumerate()
            .map(|(i, &h)| (h, i as u32))
            .collect();
        let lexicon = Arc::new(Lexicon::new(&w.features.topic_words));
        let category_lexicon = categories
            .iter()
            .map(|c| lexicon.slugs().iter().position(|s| s == c.as_str()))
            .collect();
        Ok(LocalModel {
            format: w.format,
            categories,
            features: w.features,
            job_threshold: w.job_threshold,
            kind_blend: w.kind_blend,
            calibration: w.calibration,
            category_thresholds: w.category_thresholds,
            category_calibration: w.category_calibration,
            traffic_calibration: w.traffic_calibration,
            max_categories: w.max_categories.max(1),
            vocab: w.vocab,
            idf: w.idf,
            row_kind: w.row_kind,
            heads: w.heads,
            fingerprints: w.fingerprints,
            index,
            lexicon,
            category_lexicon,
        })
    }
}
