//! The verification stage: is a stored request the same request as a new one (same plan, same
//! answer)? One batch per lookup, after the index and the cheap gates.
//!
//! This is the interface the plan and result caches code against. Until the learned
//! cross-encoder is wired in, `judge` compares the embeddings' cosine with a strict threshold
//! (raised by each candidate's feedback bias); identical texts are an exact match.

/// What is being compared: masked plan tasks, or raw result requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Plan tasks, values masked.
    Plan,
    /// Result requests (questions, queries), raw text.
    Result,
}

/// One stored request to judge against the query.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    /// The stored request (masked for plans).
    pub stored: &'a str,
    /// Cosine similarity of the two embeddings.
    pub cosine: f32,
    /// Per-entry raise of the threshold from feedback (>= 0).
    pub bias: f32,
}

/// How a verdict was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// The texts are identical.
    Exact,
    /// The learned cross-encoder.
    CrossEncoder,
    /// Embedding cosine against a calibrated threshold (no verifier model).
    Cosine,
    /// The user's LLM endpoint.
    Llm,
}

impl Method {
    /// The name reports use.
    pub fn name(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::CrossEncoder => "cross_encoder",
            Method::Cosine => "cosine",
            Method::Llm => "llm",
        }
    }
}

/// The verdict on one candidate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// Score in [0, 1] (or the cosine for `Method::Cosine`).
    pub score: f32,
    /// The threshold it was held to (bias included).
    pub threshold: f32,
    /// score >= threshold.
    pub accepted: bool,
    /// How.
    pub method: Method,
}

/// The cosine threshold for plans without a verifier model (strict: precision first).
pub const PLAN_COSINE_THRESHOLD: f32 = 0.93;
/// The cosine threshold for results without a verifier model.
pub const RESULT_COSINE_THRESHOLD: f32 = 0.95;

/// A cheap-to-clone handle to the verifier.
#[derive(Debug, Clone, Default)]
pub struct VerifyHandle {}

impl VerifyHandle {
    /// A verifier for this configuration.
    pub fn new(_config: &crate::config::Config) -> VerifyHandle {
        VerifyHandle {}
    }

    /// Judges every candidate against `query` in one batch, in the candidates' order.
    pub async fn judge(&self, kind: Kind, query: &str, cands: &[Candidate<'_>]) -> Vec<Verdict> {
        let base = match kind {
            Kind::Plan => PLAN_COSINE_THRESHOLD,
            Kind::Result => RESULT_COSINE_THRESHOLD,
        };
        cands
            .iter()
            .map(|c| {
                if c.stored == query {
                    return Verdict { score: 1.0, threshold: 0.0, accepted: true, method: Method::Exact };
                }
                let threshold = (base + c.bias.max(0.0)).min(1.0);
                Verdict { score: c.cosine, threshold, accepted: c.cosine >= threshold, method: Method::Cosine }
            })
            .collect()
    }
}
