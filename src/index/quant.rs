//! Vectors as int8 codes: each unit vector is stored once, as `dim` signed bytes scaled so its
//! largest component is ±127, followed by the 4-byte little-endian f32 step that turns a code
//! back into the vector (`x[i] ≈ code[i] * step`). A code is a quarter of the f32 vector, and the
//! same bytes serve the store, the exact scan and the graph.
//!
//! Cosine similarity of two codes is `dot(a, b) * step_a * step_b`; against an f32 query (the
//! final re-score) it is `dot(q, b) * step_b`. On 384-d sentence embeddings the error is about
//! 1e-3, well below the gaps between a paraphrase and a near miss.

/// Bytes a code of `dim` dimensions takes.
pub fn stride(dim: usize) -> usize {
    dim + 4
}

/// The dimensions of a code of `len` bytes (None when too short to be one).
pub fn dim_of(len: usize) -> Option<usize> {
    len.checked_sub(4).filter(|d| *d > 0)
}

/// Encodes a vector (expected unit length; zero vectors give a zero code).
pub fn encode(v: &[f32]) -> Vec<i8> {
    let max = v.iter().fold(0f32, |m, x| if x.is_finite() { m.max(x.abs()) } else { m });
    let step = if max > 0.0 { max / 127.0 } else { 0.0 };
    let inv = if step > 0.0 { 1.0 / step } else { 0.0 };
    let mut out: Vec<i8> = Vec::with_capacity(stride(v.len()));
    out.extend(v.iter().map(|x| if x.is_finite() { (x * inv).round().clamp(-127.0, 127.0) as i8 } else { 0 }));
    out.extend(step.to_le_bytes().map(|b| b as i8));
    out
}

/// The f32 step stored at the end of a code.
pub fn step(code: &[i8]) -> f32 {
    let n = code.len();
    if n < 4 {
        return 0.0;
    }
    f32::from_le_bytes([code[n - 4] as u8, code[n - 3] as u8, code[n - 2] as u8, code[n - 1] as u8])
}

/// The vector a code stands for.
pub fn decode(code: &[i8]) -> Vec<f32> {
    let s = step(code);
    code[..code.len().saturating_sub(4)].iter().map(|c| f32::from(*c) * s).collect()
}

/// Dot product of two int8 slices, written so the compiler vectorises it (16 lanes of i32).
fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0i32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..16 {
            acc[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    let tail: i32 = ra.iter().zip(rb).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum();
    acc.iter().sum::<i32>() + tail
}

/// Cosine similarity of two codes of the same length.
pub fn cosine(a: &[i8], b: &[i8]) -> f32 {
    let d = a.len().min(b.len()).saturating_sub(4);
    dot_i8(&a[..d], &b[..d]) as f32 * step(a) * step(b)
}

/// Cosine similarity of an f32 query and a code (the precise re-score of a few candidates).
pub fn cosine_f32(q: &[f32], code: &[i8]) -> f32 {
    let d = code.len().saturating_sub(4).min(q.len());
    let mut acc = [0f32; 8];
    let (cq, cc) = (q[..d].chunks_exact(8), code[..d].chunks_exact(8));
    let tail: f32 = cq.remainder().iter().zip(cc.remainder()).map(|(x, c)| x * f32::from(*c)).sum();
    for (x, c) in cq.zip(cc) {
        for i in 0..8 {
            acc[i] += x[i] * f32::from(c[i]);
        }
    }
    (acc.iter().sum::<f32>() + tail) * step(code)
}

/// The graph's distance: 1 - cosine of two codes, never negative (hnsw_rs's own dot distance
/// asserts on a query equal to a stored vector, which a cache sees all the time).
#[derive(Debug, Clone, Copy, Default)]
pub struct CodeDistance;

impl anndists::dist::Distance<i8> for CodeDistance {
    fn eval(&self, a: &[i8], b: &[i8]) -> f32 {
        (1.0 - cosine(a, b)).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u64, dim: usize) -> Vec<f32> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut v: Vec<f32> = (0..dim)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 20_000) as f32 / 10_000.0 - 1.0
            })
            .collect();
        crate::embed::normalise(&mut v);
        v
    }

    #[test]
    fn codes_keep_cosine_within_a_thousandth_on_embedding_sized_vectors() {
        let mut worst = 0f32;
        for s in 0..200 {
            let (a, b) = (unit(s, 384), unit(s + 1000, 384));
            // A paraphrase-like neighbour: mostly a, some b.
            let mut near: Vec<f32> = a.iter().zip(&b).map(|(x, y)| 0.9 * x + 0.3 * y).collect();
            crate::embed::normalise(&mut near);
            let (ca, cb, cn) = (encode(&a), encode(&b), encode(&near));
            for (exact, code, f32q) in [
                (crate::embed::cosine(&a, &b), cosine(&ca, &cb), cosine_f32(&a, &cb)),
                (crate::embed::cosine(&a, &near), cosine(&ca, &cn), cosine_f32(&a, &cn)),
            ] {
                worst = worst.max((exact - code).abs()).max((exact - f32q).abs());
            }
        }
        assert!(worst < 0.004, "worst cosine error {worst}");
    }

    #[test]
    fn a_code_is_a_quarter_of_the_vector_and_decodes_back() {
        let v = unit(7, 384);
        let c = encode(&v);
        assert_eq!(c.len(), 388);
        assert_eq!(dim_of(c.len()), Some(384));
        let back = decode(&c);
        assert!(crate::embed::cosine(&v, &back) > 0.999);
        assert!((cosine(&c, &c) - 1.0).abs() < 0.003);
    }

    #[test]
    fn zero_and_non_finite_vectors_give_zero_codes_not_nans() {
        let z = encode(&[0.0; 8]);
        assert_eq!(cosine(&z, &z), 0.0);
        let bad = encode(&[f32::NAN, 1.0, f32::INFINITY, 0.0]);
        assert!(cosine(&bad, &bad).is_finite());
    }
}
