//! The result cache: read-only tool results and LLM answers, found again by exact key or by
//! meaning, never served stale and never holding a secret.
//!
//! Plain Rust over the store, the embedder and the vector index (no rmcp types): `put` stores a
//! result after the policy, error and size checks, with secrets redacted and its dependencies
//! captured; `get` finds it by exact key or, for natural-language queries, by meaning, and
//! re-checks freshness first (`semantic` decides lookups by meaning through the verification
//! stage, `texts` finds the same query text exactly, `feedback` raises a wrongly served entry's
//! threshold); `invalidate_paths` drops what depends on written paths; `evict` removes by key,
//! tool, staleness or everything.

pub mod bulk;
pub mod entry;
pub mod evict;
pub mod feedback;
pub mod fresh;
pub mod get;
pub mod key;
pub mod policy;
pub mod put;
pub mod secret_keys;
pub mod secrets;
pub mod semantic;
pub mod texts;

pub use evict::{EvictWhat, evict, invalidate_paths};
pub use get::{GetOutcome, GetRequest, Hit, MatchKind, get};
pub use put::{PutOutcome, PutRequest, put};

use std::sync::OnceLock;

/// The stats area of the result cache.
pub const AREA: &str = "results";
/// The namespace used when the caller gives none.
pub const DEFAULT_NAMESPACE: &str = "default";

/// Result cache errors: infrastructure failures, and the limits a caller hits (a result the
/// policy refuses is an outcome, not an error).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The store failed (or is full).
    #[error(transparent)]
    Store(#[from] crate::store::Error),
    /// The vector index failed.
    #[error(transparent)]
    Index(#[from] crate::index::Error),
    /// Arguments or query above `results.max_args_bytes`.
    #[error("{0}")]
    TooLarge(String),
}

impl Error {
    /// Whether the caller can fix it (a size limit, a full store) rather than a failure of ours.
    pub fn is_caller_fixable(&self) -> bool {
        matches!(self, Error::TooLarge(_) | Error::Store(crate::store::Error::Full { .. }))
    }
}

/// A result with a result-cache error.
pub type Result<T> = std::result::Result<T, Error>;

/// The shared redactor (its patterns are compiled once).
pub fn redactor() -> &'static secrets::Redactor {
    static R: OnceLock<secrets::Redactor> = OnceLock::new();
    R.get_or_init(secrets::Redactor::new)
}

/// Tokens a text of `bytes` bytes is estimated to cost (about 4 characters per token).
pub fn estimate_tokens(bytes: u64) -> u64 {
    bytes.div_ceil(4)
}
