//! Settings refrain no longer reads. A config that still sets one fails to load with an error
//! naming the key, where it was set and what to do instead, rather than being silently ignored:
//! a user who tuned a removed key would otherwise believe it still does something.

use super::{Error, dotted};
use toml::Table;

/// A removed key and what to do instead.
pub struct Removed {
    /// The dotted key, e.g. `results.semantic_threshold`.
    pub key: &'static str,
    /// What replaces it, in one sentence.
    pub instead: &'static str,
}

/// Every removed key.
pub const REMOVED: &[Removed] = &[
    Removed {
        key: "results.semantic_threshold",
        instead: "lookups by meaning are now held to `matching.max_wrong_rate` (default 0.01: at most about 1 \
                  wrong answer in 100 served) through the shipped calibration, never to a hand-set cosine; \
                  delete the line, or lower matching.max_wrong_rate to be stricter",
    },
    Removed {
        key: "results.semantic_verify",
        instead: "every lookup by meaning is now verified before it is served; delete the line \
                  (turn lookups by meaning down with matching.max_wrong_rate)",
    },
];

/// The error for the first removed key `table` sets, if any; `origin` names the file, variable or
/// flag that held it.
pub fn check(table: &Table, origin: &str) -> Result<(), Error> {
    for r in REMOVED {
        if dotted::get(table, r.key).is_some() {
            return Err(Error::Removed { origin: origin.to_string(), key: r.key, instead: r.instead });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_key_is_named_with_its_origin_and_what_to_do() {
        let table: Table = "[results]\nsemantic_threshold = 0.85\n".parse().unwrap();
        let err = check(&table, "file /home/u/refrain.toml").unwrap_err().to_string();
        assert!(err.contains("results.semantic_threshold"), "{err}");
        assert!(err.contains("file /home/u/refrain.toml"), "{err}");
        assert!(err.contains("matching.max_wrong_rate"), "{err}");
        let fine: Table = "[results]\ndefault_ttl_secs = 60\n".parse().unwrap();
        assert!(check(&fine, "x").is_ok());
    }

    #[test]
    fn every_removed_key_is_gone_from_the_config() {
        for r in REMOVED {
            assert!(super::super::screen::default_of(r.key).is_none(), "{} still has a default", r.key);
            assert!(super::super::keys::rule(r.key).is_none(), "{} still has a trust row", r.key);
        }
    }
}
