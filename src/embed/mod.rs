//! Text embeddings: the `Embedder` trait, the fastembed implementation, and a handle that loads the
//! model in the background so the server answers `initialize` at once.
//!
//! Requests that need embeddings wait for the load; when no model can be loaded they get
//! `Error::Unavailable` with the reason, and everything else keeps working.

mod fast;
mod handle;
pub mod heap;
pub mod tables;

pub use fast::{FastEmbedder, MODEL_NAME, ModelFiles, Tables, cpu_without_arena, init_runtime};
pub use handle::{EmbedHandle, ModelState};

/// Embedding errors.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// No model is loaded (and why).
    #[error("embedding model unavailable: {0}")]
    Unavailable(String),
    /// The model failed on this input.
    #[error("embedding failed: {0}")]
    Failed(String),
}

/// Turns texts into unit-length vectors.
pub trait Embedder: Send + Sync {
    /// Embeds a batch; every vector has `dim()` entries and unit length.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Error>;
    /// Vector length.
    fn dim(&self) -> usize;
    /// Model name for stats and provenance.
    fn name(&self) -> &str;
}

/// Cosine similarity of two unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Scales a vector to unit length (zero vectors stay zero).
pub fn normalise(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}
