//! The one verification stage for plans and results: given a new request and the few nearest
//! stored ones, which of them asks for the same thing (and would get the same answer)?
//!
//! The nearest candidates come from the vector index; here they are checked in one batch: the
//! same normalised text is an exact match; cheap gates drop what cannot match (numbers that
//! differ, too little similarity); a cross-encoder scores the rest, and a candidate is accepted
//! when its score reaches the threshold derived from `matching.max_wrong_rate` through the
//! calibration (plus the entry's own raise from feedback). Without the verifier model the method
//! is plain cosine at its own calibrated, strict threshold. Infrastructure like `embed`: no rmcp
//! types, no knowledge of plans or results beyond their `Kind`.

pub mod calib;
pub mod gate;
mod handle;
pub mod llm;
pub mod model;
pub mod terms;
pub mod text;
mod words;

pub use gate::Gate;
pub use handle::{Assessed, Report, VerifierFiles, VerifyHandle};

use serde::{Deserialize, Serialize};

/// What is being matched (each kind has its own calibration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A task (values masked) against stored plans' tasks.
    Plan,
    /// A question or query against stored results' queries.
    Result,
}

impl Kind {
    /// The kind's name in calibration files and reports.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Plan => "plan",
            Kind::Result => "result",
        }
    }
}

/// A stored request near the new one.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    /// The stored request's text (masked for plans).
    pub stored: &'a str,
    /// Cosine similarity of the two embeddings.
    pub cosine: f32,
    /// This entry's own raise of the threshold from failure reports (>= 0).
    pub bias: f32,
}

/// How a verdict was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Same normalised text.
    Exact,
    /// The verifier model.
    CrossEncoder,
    /// Plain cosine similarity (no verifier model available).
    Cosine,
    /// The configured LLM endpoint judged a borderline candidate.
    Llm,
}

impl Method {
    /// The method's name in calibration files and reports.
    pub fn name(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::CrossEncoder => "cross_encoder",
            Method::Cosine => "cosine",
            Method::Llm => "llm",
        }
    }
}

/// The decision on one candidate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// The score the decision was made on (P(same request) for the model, cosine for `Cosine`,
    /// 1 for `Exact`, 0 for a candidate a gate dropped).
    pub score: f32,
    /// The threshold it had to reach (the entry's bias included).
    pub threshold: f32,
    /// Whether it may be served.
    pub accepted: bool,
    /// How the decision was made.
    pub method: Method,
}

/// Verification errors (never fatal to a lookup: the caller falls back or misses).
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// No verifier model (and why, with the fix).
    #[error("verifier model unavailable: {0}")]
    Unavailable(String),
    /// The model failed on this input.
    #[error("verification failed: {0}")]
    Failed(String),
}
