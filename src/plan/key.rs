//! Intent keys: the structure of a task (canonical action + primary target kind) and its bucket
//! hash. Values never enter the hash, so every task of one kind shares a bucket whatever its
//! paths, names or versions.

use super::NORMALISER_VERSION;
use super::normalise::Normalised;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The structure of a task, and the bucket it routes to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct IntentKey {
    /// Canonical action.
    pub action: String,
    /// Primary target kind.
    pub kind: String,
    /// The bucket: hex sha256 (first 16 bytes) of the normaliser version, action and kind.
    pub bucket: String,
}

impl IntentKey {
    /// The key of an (action, kind) pair.
    pub fn new(action: &str, kind: &str) -> IntentKey {
        IntentKey { action: action.to_string(), kind: kind.to_string(), bucket: bucket(action, kind) }
    }

    /// The key of a normalised task.
    pub fn of(n: &Normalised) -> IntentKey {
        IntentKey::new(&n.action, &n.kind)
    }

    /// Buckets a lookup reads: its own, plus those of the generic/specific kinds it relates to.
    pub fn lookup_buckets(&self) -> Vec<String> {
        let mut out = vec![self.bucket.clone()];
        for k in super::lexicon::related_kinds(&self.kind) {
            out.push(bucket(&self.action, k));
        }
        out
    }

    /// Whether a plan stored under `other` may serve a task with this key: same action, and the
    /// same kind or one of its generic/specific relatives.
    pub fn compatible(&self, other: &IntentKey) -> bool {
        self.action == other.action
            && (self.kind == other.kind || super::lexicon::related_kinds(&self.kind).contains(&other.kind.as_str()))
    }
}

/// The bucket hash of an (action, kind) pair.
pub fn bucket(action: &str, kind: &str) -> String {
    let mut h = Sha256::new();
    h.update(format!("refrain-plan-bucket\0n{NORMALISER_VERSION}\0{action}\0{kind}").as_bytes());
    hex::encode(&h.finalize()[..16])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::normalise::normalise;
    use rstest::rstest;

    fn key(t: &str) -> String {
        IntentKey::of(&normalise(t)).bucket
    }

    #[rstest]
    #[case("bump serde to 1.0.200 in Cargo.toml", "bump tokio to 1.41 in crates/x/Cargo.toml")]
    #[case("add a flag `--verbose` to src/main.rs", "add the --quiet flag to src/cli.rs")]
    #[case("rename `a` to `b`", "please rename `parse` to `parse_all`")]
    #[case("fix issue #12", "resolve issue #340")]
    fn same_structure_other_values_share_a_key(#[case] a: &str, #[case] b: &str) {
        assert_eq!(key(a), key(b));
    }

    #[rstest]
    #[case("bump serde to 1.0.200 in Cargo.toml", "remove tokio")]
    #[case("add a flag `--verbose` to src/main.rs", "remove the flag `--verbose` from src/main.rs")]
    #[case("add a flag `--verbose`", "add a test for `--verbose`")]
    #[case("enable the `--fast` flag", "disable the `--fast` flag")]
    #[case("bump serde to 1.0.200", "downgrade serde to 1.0.100")]
    fn different_structure_gets_another_key(#[case] a: &str, #[case] b: &str) {
        assert_ne!(key(a), key(b));
    }

    #[test]
    fn generic_kinds_look_in_specific_buckets() {
        let k = IntentKey::new("rename", "symbol");
        assert!(k.lookup_buckets().contains(&bucket("rename", "function")));
        assert!(k.compatible(&IntentKey::new("rename", "function")));
        assert!(!k.compatible(&IntentKey::new("remove", "function")));
        assert!(!IntentKey::new("add", "flag").compatible(&IntentKey::new("add", "test")));
    }
}
