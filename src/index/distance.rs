//! The distance the graph uses: 1 - dot product of unit vectors, clamped at zero.
//!
//! hnsw_rs's `DistDot` asserts `1 - dot >= 0` and panics on a query equal to a stored vector when
//! rounding makes the dot product exceed 1; a cache sees repeated texts all the time.

use anndists::dist::Distance;

/// Cosine distance for unit-length f32 vectors, never negative.
#[derive(Debug, Clone, Copy, Default)]
pub struct UnitDot;

impl Distance<f32> for UnitDot {
    fn eval(&self, va: &[f32], vb: &[f32]) -> f32 {
        let dot: f32 = va.iter().zip(vb).map(|(a, b)| a * b).sum();
        (1.0 - dot).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_vectors_are_at_zero_not_below() {
        let v = vec![0.6f32, 0.8000001];
        assert_eq!(UnitDot.eval(&v, &v), 0.0);
    }
}
