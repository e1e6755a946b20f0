//! Turning out-of-fold scores into decisions: Platt scaling of the job score into a calibrated
//! probability, and the per-category thresholds of the category heads.

use serde::{Deserialize, Serialize};

/// Platt scaling: `P(job) = sigmoid(a * s + b)` of a raw score `s` (the logit of the model's
/// uncalibrated job probability). The identity (`a = 1, b = 0`) leaves the probability as is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Platt {
    pub a: f32,
    pub b: f32,
}

impl Default for Platt {
    fn default() -> Self {
        Self { a: 1.0, b: 0.0 }
    }
}

impl Platt {
    /// The calibrated probability of a raw score.
    pub(crate) fn apply(&self, s: f32) -> f32 {
        sigmoid(self.a * s + self.b)
    }

    /// Fits `a, b` by weighted maximum likelihood on `(score, is_positive, weight)` points
    /// (Newton's method with Platt's smoothed targets, so a separable sample does not push the
    /// slope to infinity). `None` when there are no positives or no negatives.
    pub(crate) fn fit(points: &[(f32, bool, f32)]) -> Option<Platt> {
        let pos: f64 = points.iter().filter(|p| p.1).map(|p| f64::from(p.2)).sum();
        let neg: f64 = points.iter().filter(|p| !p.1).map(|p| f64::from(p.2)).sum();
        if pos <= 0.0 || neg <= 0.0 {
            return None;
        }
        let t_pos = (pos + 1.0) / (pos + 2.0);
        let t_neg = 1.0 / (neg + 2.0);
        let (mut a, mut b) = (1.0f64, 0.0f64);
        // A light ridge on the slope keeps the Hessian invertible.
        let ridge = 1e-3;
        let loss = |a: f64, b: f64| -> f64 {
            let mut l = 0.5 * ridge * (a - 1.0) * (a - 1.0);
            for &(s, y, w) in points {
                let z = a * f64::from(s) + b;
                let t = if y { t_pos } else { t_neg };
                // -[t log p + (1-t) log(1-p)] with p = sigmoid(z), computed stably.
                l += f64::from(w) * (softplus(z) - t * z);
            }
            l
        };
        let mut current = loss(a, b);
        for _ in 0..100 {
            let (mut ga, mut gb, mut haa, mut hab, mut hbb) =
                (ridge * (a - 1.0), 0.0, ridge, 0.0, 0.0);
            for &(s, y, w) in points {
                let s = f64::from(s);
                let w = f64::from(w);
                let p = 1.0 / (1.0 + (-(a * s + b)).exp());
                let t = if y { t_pos } else { t_neg };
                let d = w * (p - t);
                ga += d * s;
                gb += d;
                let h = w * p * (1.0 - p);
                haa += h * s * s;
                hab += h * s;
                hbb += h;
            }
            let det = haa * hbb - hab * hab;
            if det.abs() < 1e-12 {
                break;
            }
            let da = (hbb * ga - hab * gb) / det;
            let db = (haa * gb - hab * ga) / det;
            // Backtracking: Newton steps can overshoot far from the optimum.
            let mut step = 1.0;
            let mut improved = false;
            while step > 1e-4 {
                let (na, nb) = (a - step * da, b - step * db);
                let l = loss(na, nb);
                if l < current {
                    a = na;
                    b = nb;
                    improved = current - l > 1e-10;
                    current = l;
                    break;
                }
                step *= 0.5;
            }
            if !improved {
                break;
            }
        }
        (a.is_finite() && b.is_finite()).then_some(Platt {
            a: a as f32,
            b: b as f32,
        })
    }
}

fn softplus(z: f64) -> f64 {
    if z > 30.0 { z } else { z.exp().ln_1p() }
}

pub(crate) fn sigmoid(z: f32) -> f32 {
    1.0 / (1.0 + (-z).exp())
}

/// The logit of a probability, bounded to ±16 (probabilities of exactly 0 or 1 stay finite).
pub(crate) fn logit(p: f32) -> f32 {
    let p = p.clamp(1e-7, 1.0 - 1e-7);
    (p / (1.0 - p)).ln()
}

/// The categories of a job from its category probabilities: the most likely one always,
/// then every other one whose probability reaches its threshold, most likely first, at most
/// `max` in all. Returns category indices.
pub(crate) fn choose_categories(p: &[f32], thresholds: &[f32], max: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| p[b].total_cmp(&p[a]).then(a.cmp(&b)));
    order
        .into_iter()
        .enumerate()
        .filter(|&(rank, c)| rank == 0 || p[c] >= thresholds[c])
        .take(max.max(1))
        .map(|(_, c)| c)
        .collect()
}

/// One job of the out-of-fold sample: category probabilities, true categories, weight.
pub(crate) struct CategoryPoint {
    pub p: Vec<f32>,
    pub truth: Vec<bool>,
    pub weight: f32,
}

/// Weighted micro-F1 of the category decisions with these thresholds.
fn micro_f1(points: &[CategoryPoint], thresholds: &[f32], max: usize) -> f64 {
    let (mut tp, mut fp, mut fn_) = (0.0f64, 0.0f64, 0.0f64);
    for pt in points {
        let chosen = choose_categories(&pt.p, thresholds, max);
        let w = f64::from(pt.weight);
        for (c, &t) in pt.truth.iter().enumerate() {
            match (t, chosen.contains(&c)) {
                (true, true) => tp += w,
                (false, true) => fp += w,
                (true, false) => fn_ += w,
                (false, false) => {}
            }
        }
    }
    if tp == 0.0 {
        0.0
    } else {
        2.0 * tp / (2.0 * tp + fp + fn_)
    }
}

/// Thresholds for the extra categories of a job, chosen on out-of-fold probabilities: first
/// one threshold for all categories, then, per category, a different one only where that
/// gains at least `min_gain` micro-F1 (a category with few examples keeps the common one).
/// Candidates run from 0.20 to 0.95; ties go to the higher threshold (fewer extra categories).
pub(crate) fn category_thresholds(
    points: &[CategoryPoint],
    n_categories: usize,
    max: usize,
    fallback: f32,
    min_gain: f64,
) -> Vec<f32> {
    if points.is_empty() || n_categories == 0 {
        return vec![fallback; n_categories];
    }
    let grid: Vec<f32> = (4..=19).map(|i| i as f32 * 0.05).collect();
    let mut best_t = fallback;
    let mut best = micro_f1(points, &vec![fallback; n_categories], max);
    for &t in &grid {
        let f = micro_f1(points, &vec![t; n_categories], max);
        if f > best || (f == best && t > best_t) {
            best = f;
            best_t = t;
        }
    }
    let mut thresholds = vec![best_t; n_categories];
    for c in 0..n_categories {
        let mut choice = (best, thresholds[c]);
        for &t in &grid {
            let mut trial = thresholds.clone();
            trial[c] = t;
            let f = micro_f1(points, &trial, max);
            if f >= choice.0 + min_gain {
                choice = (f, t);
            }
        }
        if choice.1 != thresholds[c] {
            thresholds[c] = choice.1;
            best = choice.0;
        }
    }
    thresholds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platt_recovers_a_known_slope_and_offset() {
        // Scores whose true probability is sigmoid(2s - 1), in proportion.
        let mut points = Vec::new();
        for i in -40..=40 {
            let s = i as f32 / 10.0;
            let p = sigmoid(2.0 * s - 1.0);
            let n_pos = (p * 100.0).round() as usize;
            for k in 0..100 {
                points.push((s, k < n_pos, 1.0));
            }
        }
        let fit = Platt::fit(&points).expect("both classes present");
        assert!((fit.a - 2.0).abs() < 0.1, "{fit:?}");
        assert!((fit.b + 1.0).abs() < 0.1, "{fit:?}");
        assert!(Platt::fit(&[(1.0, true, 1.0)]).is_none());
    }

    #[test]
    fn platt_tames_an_overconfident_score() {
        // Big scores, right only 80% of the time: the fitted probability at s = 10 is near 0.8.
        let mut points = Vec::new();
        for k in 0..100 {
            points.push((10.0, k < 80, 1.0));
            points.push((-10.0, k >= 80, 1.0));
        }
        let fit = Platt::fit(&points).expect("fits");
        assert!((fit.apply(10.0) - 0.8).abs() < 0.03, "{}", fit.apply(10.0));
        assert!((fit.apply(-10.0) - 0.2).abs() < 0.03);
    }

    #[test]
    fn weights_count_like_repeated_points() {
        let a = Platt::fit(&[(1.0, true, 2.0), (1.0, false, 1.0), (-1.0, false, 1.0)]);
        let b = Platt::fit(&[
            (1.0, true, 1.0),
            (1.0, true, 1.0),
            (1.0, false, 1.0),
            (-1.0, false, 1.0),
        ]);
        let (a, b) = (a.expect("fits"), b.expect("fits"));
        assert!((a.a - b.a).abs() < 1e-3 && (a.b - b.b).abs() < 1e-3);
    }

    #[test]
    fn the_top_category_is_always_chosen_and_the_cap_holds() {
        assert_eq!(choose_categories(&[0.1, 0.3, 0.2], &[0.5; 3], 3), [1]);
        assert_eq!(choose_categories(&[0.9, 0.8, 0.7], &[0.5; 3], 2), [0, 1]);
        assert_eq!(
            choose_categories(&[0.6, 0.9, 0.4], &[0.5, 0.5, 0.3], 3),
            [1, 0, 2]
        );
    }

    #[test]
    fn thresholds_follow_the_out_of_fold_evidence() {
        // Second categories at 0.6 are right, at 0.4 wrong: the threshold lands between.
        let pt = |p: [f32; 2], t: [bool; 2]| CategoryPoint {
            p: p.to_vec(),
            truth: t.to_vec(),
            weight: 1.0,
        };
        let points = vec![
            pt([0.9, 0.6], [true, true]),
            pt([0.9, 0.6], [true, true]),
            pt([0.9, 0.4], [true, false]),
            pt([0.8, 0.4], [true, false]),
        ];
        let t = category_thresholds(&points, 2, 3, 0.3, 0.0);
        assert!(t[1] > 0.4 && t[1] <= 0.6, "{t:?}");
        // With a small sample, a category's own threshold must earn its keep.
        let t = category_thresholds(&points[..3], 2, 3, 0.3, 0.5);
        assert_eq!(t[0], t[1], "{t:?}");
    }
}
