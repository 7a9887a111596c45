//! Thresholds from one number: the calibration file and the rule that turns
//! `matching.max_wrong_rate` into a threshold per kind and method.
//!
//! The rule: for each development dataset, the lowest threshold at which the one-sided 95%
//! Clopper-Pearson upper bound on the share of negative lookups (requests whose answer is not
//! stored) served anything is at most the rate; the strictest dataset wins. The file keeps, per
//! dataset, how many negative lookups there were and the best candidate score of each (highest
//! first), so the rule can run for whatever rate the user sets. `refrain-bench calibrate` writes
//! it; nothing here is tuned by hand.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The calibration compiled into the binary (used when the model directory has none).
pub const SHIPPED: &str = include_str!("../../models/verifier/calibration.json");

/// Confidence of the upper bound.
pub const CONFIDENCE: f64 = 0.95;

/// The calibration file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Calibration {
    /// File format version.
    pub version: u32,
    /// The rule, in words.
    pub rule: String,
    /// The embedding model cosine scores came from.
    pub embedding_model: String,
    /// The verifier model cross-encoder scores came from (its `model.onnx` sha256).
    pub verifier_sha256: Option<String>,
    /// Kind (`plan`, `result`) -> method (`cross_encoder`, `cosine`) -> dataset -> negatives.
    pub kinds: BTreeMap<String, BTreeMap<String, BTreeMap<String, Negatives>>>,
}

/// The negative lookups of one development dataset.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Negatives {
    /// Negative lookups.
    pub n: usize,
    /// How many of them had any candidate scored.
    pub scored: usize,
    /// The best candidate score of each scored negative, highest first (possibly cut short).
    pub top: Vec<f32>,
}

/// A threshold and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    /// Lowest accepted score.
    pub value: f32,
    /// The dataset that set it (the strictest).
    pub dataset: String,
    /// False when that dataset has too few negatives to show the rate even at zero served.
    pub certified: bool,
}

impl Calibration {
    /// Parses a calibration file.
    pub fn parse(text: &str) -> Result<Calibration, String> {
        let c: Calibration = serde_json::from_str(text).map_err(|e| format!("calibration file is unreadable: {e}"))?;
        if c.version != 1 {
            return Err(format!("calibration file version {} is not supported (expected 1)", c.version));
        }
        Ok(c)
    }

    /// The threshold for a kind and method at `rate`: the strictest over the kind's datasets.
    pub fn threshold(&self, kind: &str, method: &str, rate: f64) -> Option<Derived> {
        let sets = self.kinds.get(kind)?.get(method)?;
        sets.iter()
            .map(|(name, neg)| {
                let (value, certified) = neg.threshold(rate);
                Derived { value, dataset: name.clone(), certified }
            })
            .max_by(|a, b| a.value.total_cmp(&b.value))
    }
}

impl Negatives {
    /// Builds the summary from every negative lookup's best score (`None`: nothing scored).
    pub fn from_scores(scores: &[Option<f32>]) -> Negatives {
        let mut top: Vec<f32> = scores.iter().flatten().copied().filter(|s| s.is_finite()).collect();
        top.sort_by(|a, b| b.total_cmp(a));
        Negatives { n: scores.len(), scored: top.len(), top }
    }

    /// The lowest threshold whose upper bound on the served share is at most `rate`, and whether
    /// the bound holds at all (it cannot with too few negatives: then nothing they scored passes).
    pub fn threshold(&self, rate: f64) -> (f32, bool) {
        let allowed = max_served(self.n, rate);
        let certified = allowed.is_some();
        let k = allowed.unwrap_or(0);
        if k >= self.scored {
            // Every scored negative may pass; the threshold is not limited by this dataset.
            return (0.0, certified);
        }
        // Serving at most k: the threshold sits just above the (k+1)-th best negative; when the
        // list was cut short, just above its lowest kept score (stricter, never looser).
        let at = self.top.get(k).or(self.top.last()).copied().unwrap_or(0.0);
        (next_up(at), certified)
    }
}

/// The largest number of served negatives out of `n` whose upper bound is still <= `rate`.
pub fn max_served(n: usize, rate: f64) -> Option<usize> {
    if n == 0 || upper_bound(0, n, CONFIDENCE) > rate {
        return None;
    }
    // The bound grows with k: binary search the last k that passes.
    let (mut lo, mut hi) = (0usize, n);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if upper_bound(mid, n, CONFIDENCE) <= rate { lo = mid } else { hi = mid - 1 }
    }
    Some(lo)
}

/// One-sided Clopper-Pearson upper bound on a proportion after `k` successes in `n` trials: the
/// p at which P(Binomial(n, p) <= k) = 1 - confidence.
pub fn upper_bound(k: usize, n: usize, confidence: f64) -> f64 {
    if k >= n {
        return 1.0;
    }
    let alpha = 1.0 - confidence;
    let (mut lo, mut hi) = (k as f64 / n as f64, 1.0f64);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if binomial_cdf(k, n, mid) > alpha { lo = mid } else { hi = mid }
    }
    hi
}

/// P(Binomial(n, p) <= k), summed in log space so large n does not underflow.
fn binomial_cdf(k: usize, n: usize, p: f64) -> f64 {
    if p <= 0.0 {
        return 1.0;
    }
    if p >= 1.0 {
        return if k >= n { 1.0 } else { 0.0 };
    }
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    // ln P(X = i) by the ratio P(i+1)/P(i) = (n-i)/(i+1) * p/q.
    let mut ln_term = n as f64 * lq;
    let mut terms = Vec::with_capacity(k + 1);
    for i in 0..=k {
        terms.push(ln_term);
        ln_term += ((n - i) as f64).ln() - ((i + 1) as f64).ln() + lp - lq;
    }
    let max = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (max + terms.iter().map(|t| (t - max).exp()).sum::<f64>().ln()).exp().min(1.0)
}

/// The next float above `x` (a threshold that `x` itself does not reach).
fn next_up(x: f32) -> f32 {
    if x.is_nan() || x == f32::INFINITY {
        return x;
    }
    let bits = x.to_bits();
    let up = if x == 0.0 {
        1
    } else if x > 0.0 {
        bits + 1
    } else {
        bits - 1
    };
    f32::from_bits(up)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_served_gives_the_rule_of_three_bound() {
        // With k = 0 the bound is 1 - alpha^(1/n).
        for n in [10usize, 300, 5000] {
            let want = 1.0 - 0.05f64.powf(1.0 / n as f64);
            assert!((upper_bound(0, n, 0.95) - want).abs() < 1e-9, "n = {n}");
        }
    }

    #[test]
    fn known_clopper_pearson_values() {
        // Beta(k+1, n-k) 0.95 quantiles, from published tables.
        assert!((upper_bound(1, 100, 0.95) - 0.0466).abs() < 5e-4, "{}", upper_bound(1, 100, 0.95));
        assert!((upper_bound(5, 100, 0.95) - 0.1024).abs() < 5e-4, "{}", upper_bound(5, 100, 0.95));
        assert!((upper_bound(10, 1000, 0.95) - 0.01690).abs() < 1e-4, "{}", upper_bound(10, 1000, 0.95));
    }

    #[test]
    fn too_few_negatives_cannot_certify_a_small_rate() {
        assert_eq!(max_served(100, 0.01), None);
        assert_eq!(max_served(300, 0.01), Some(0));
        let k = max_served(5000, 0.01).unwrap();
        assert!(upper_bound(k, 5000, 0.95) <= 0.01 && upper_bound(k + 1, 5000, 0.95) > 0.01);
    }

    #[test]
    fn the_threshold_sits_above_the_negatives_it_must_refuse() {
        let mut scores: Vec<Option<f32>> = (0..1000).map(|i| Some(i as f32 / 1000.0)).collect();
        scores.push(None);
        let neg = Negatives::from_scores(&scores);
        let (t, certified) = neg.threshold(0.01);
        assert!(certified);
        let served = neg.top.iter().filter(|s| **s >= t).count();
        assert_eq!(Some(served), max_served(1001, 0.01));
        // Stricter rates give higher thresholds.
        assert!(neg.threshold(0.005).0 > t);
    }

    #[test]
    fn the_strictest_dataset_wins() {
        let mut c = Calibration { version: 1, ..Default::default() };
        let low = Negatives::from_scores(&vec![Some(0.2); 400]);
        let high = Negatives::from_scores(&vec![Some(0.9); 400]);
        let sets = BTreeMap::from([("a".to_string(), low), ("b".to_string(), high)]);
        c.kinds.insert("result".into(), BTreeMap::from([("cosine".to_string(), sets)]));
        let d = c.threshold("result", "cosine", 0.01).unwrap();
        assert_eq!(d.dataset, "b");
        assert!(d.value > 0.9);
        assert!(c.threshold("plan", "cosine", 0.01).is_none());
    }

    #[test]
    fn the_shipped_calibration_parses() {
        Calibration::parse(SHIPPED).unwrap();
    }
}
