//! Cheap gates run before the model: a candidate that fails one is not scored at all.
//!
//! Numbers and versions must agree between a question and a stored question ("python 3.11" is not
//! "python 3.12"; "port 8080" is not "port 80"): a cross-encoder reads digits as word pieces and
//! is easily fooled by them, and the check costs nothing. Plans compare values themselves (their
//! texts arrive masked), so this gate is for results.

use std::collections::BTreeSet;

/// Candidates below this cosine similarity are not worth scoring.
pub const FLOOR: f32 = 0.5;

/// Why a candidate was not scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Its cosine similarity is below the floor worth scoring.
    Floor,
    /// A number or version differs.
    Values,
}

impl Gate {
    /// The reason in words.
    pub fn reason(self) -> &'static str {
        match self {
            Gate::Floor => "not similar enough to score",
            Gate::Values => "a number or version differs",
        }
    }
}

/// The numbers and versions a text mentions (tokens with a digit; a leading `v` dropped).
pub fn values(text: &str) -> BTreeSet<String> {
    let inner = |c: char| c.is_alphanumeric() || c == '_';
    text.split(|c: char| !(inner(c) || matches!(c, '.' | '-' | '/' | '\'')))
        .map(|raw| raw.trim_matches(|c: char| !inner(c)))
        .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
        .map(|w| w.to_lowercase().trim_start_matches('v').to_string())
        .collect()
}

/// True when both texts mention the same numbers and versions.
pub fn values_agree(a: &str, b: &str) -> bool {
    values(a) == values(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_versions_must_agree() {
        assert!(!values_agree("install python 3.12 on ubuntu", "install python 3.11 on ubuntu"));
        assert!(values_agree("install python 3.12 on ubuntu?", "how can I install Python v3.12 on Ubuntu"));
        assert!(!values_agree("what runs on port 8080", "what runs on port 80"));
        assert!(values_agree("how do I undo a commit", "undo my last commit"));
    }
}
