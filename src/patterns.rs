//! Regex tables that are checked, never skipped: every built-in pattern is a [`Pattern`] carrying
//! its source and a sample text it must match, and `refrain` compiles and tries every table
//! before it starts (`cli`), refusing to start when one fails.
//!
//! A pattern that silently failed to compile would turn a secret rule or a value parser into a
//! no-op; this module makes that a startup error instead. It knows no table itself: the modules
//! that own patterns declare them with [`pattern_table!`] and `cli` checks each of them.

use regex::Regex;
use std::sync::OnceLock;

/// A built-in pattern that does not compile or does not match its own sample (a bug in refrain).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The pattern does not compile.
    #[error(
        "built-in pattern {table}::{name} does not compile ({message}); refrain refuses to run without it, please report this"
    )]
    Compile {
        /// The table.
        table: &'static str,
        /// The pattern's name.
        name: &'static str,
        /// The regex crate's message.
        message: String,
    },
    /// The pattern compiles but misses the sample it was written for.
    #[error("built-in pattern {table}::{name} does not match its own sample {sample:?}; please report this")]
    Sample {
        /// The table.
        table: &'static str,
        /// The pattern's name.
        name: &'static str,
        /// The sample.
        sample: &'static str,
    },
}

/// One named regex, compiled on first use, with a sample text it must match.
pub struct Pattern {
    table: &'static str,
    name: &'static str,
    source: &'static str,
    sample: &'static str,
    cell: OnceLock<Result<Regex, String>>,
}

impl Pattern {
    /// A pattern of `table` named `name`; `sample` is a text it must match.
    pub const fn new(table: &'static str, name: &'static str, source: &'static str, sample: &'static str) -> Pattern {
        Pattern { table, name, source, sample, cell: OnceLock::new() }
    }

    /// The pattern's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The text this pattern was written to match.
    pub fn sample(&self) -> &'static str {
        self.sample
    }

    /// The compiled regex, or why it does not compile.
    pub fn compiled(&self) -> Result<&Regex, Error> {
        match self.cell.get_or_init(|| Regex::new(self.source).map_err(|e| e.to_string())) {
            Ok(re) => Ok(re),
            Err(message) => Err(Error::Compile { table: self.table, name: self.name, message: message.clone() }),
        }
    }

    /// Compiles the pattern and tries it on its sample.
    pub fn check(&self) -> Result<(), Error> {
        if self.compiled()?.is_match(self.sample) {
            Ok(())
        } else {
            Err(Error::Sample { table: self.table, name: self.name, sample: self.sample })
        }
    }
}

impl std::ops::Deref for Pattern {
    type Target = Regex;

    /// The compiled regex. Every table is checked before refrain runs (see [`check_all`]), so the
    /// fallback — a regex that matches nothing — is unreachable in a started refrain; it exists so
    /// that library code cannot panic.
    fn deref(&self) -> &Regex {
        match self.compiled() {
            Ok(re) => re,
            Err(e) => {
                tracing::error!(error = %e, "unchecked pattern table used");
                never()
            }
        }
    }
}

fn never() -> &'static Regex {
    static NEVER: OnceLock<Regex> = OnceLock::new();
    NEVER.get_or_init(|| Regex::new(r"[^\s\S]").unwrap_or_else(|_| unreachable!("a fixed pattern")))
}

/// Compiles every pattern and tries each on its sample; how many were checked, or the first failure.
pub fn check_all<'a>(patterns: impl IntoIterator<Item = &'a Pattern>) -> Result<usize, Error> {
    let mut n = 0;
    for p in patterns {
        p.check()?;
        n += 1;
    }
    Ok(n)
}

/// Declares `static NAME: Pattern` items and one `static TABLE: &[&Pattern]` listing them all, so
/// no pattern can be left out of the startup check:
///
/// ```
/// refrain::pattern_table! { pub(crate) PATTERNS in "params";
///     URL_RE = r"https?://\S+", "see https://example.com";
/// }
/// // The startup check compiles each pattern and matches it against its sample.
/// assert_eq!(refrain::patterns::check_all(PATTERNS.iter().copied()).unwrap(), 1);
/// ```
#[macro_export]
macro_rules! pattern_table {
    ($vis:vis $table:ident in $label:literal; $($(#[$meta:meta])* $ivis:vis $name:ident = $pat:expr, $sample:expr;)+) => {
        $($(#[$meta])* $ivis static $name: $crate::patterns::Pattern =
            $crate::patterns::Pattern::new($label, stringify!($name), $pat, $sample);)+
        /// Every pattern of this module, checked at startup.
        $vis static $table: &[&$crate::patterns::Pattern] = &[$(&$name),+];
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_pattern_is_an_error_naming_it_not_a_silent_skip() {
        let bad = Pattern::new("t", "BAD", r"(unclosed", "x");
        let err = check_all([&bad]).unwrap_err().to_string();
        assert!(err.contains("t::BAD") && err.contains("does not compile"), "{err}");
        assert!(!bad.is_match("(unclosed"), "the fallback matches nothing");
    }

    #[test]
    fn a_pattern_missing_its_sample_is_an_error() {
        let p = Pattern::new("t", "DIGITS", r"^\d+$", "abc");
        assert!(matches!(p.check(), Err(Error::Sample { name: "DIGITS", .. })));
        let ok = Pattern::new("t", "DIGITS", r"^\d+$", "123");
        assert_eq!(check_all([&ok]).unwrap(), 1);
    }
}
