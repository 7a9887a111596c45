//! When two requests are the same text: the normal form compared for exact matches.
//!
//! Deliberately small: surrounding and repeated whitespace and trailing sentence punctuation do
//! not change what a request asks, so they are dropped; case is kept (`-v` and `-V` are different
//! flags, `String` and `string` different types). Anything more is the verifier's job.

/// The normal form of a request's text.
pub fn normalise(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    joined.trim_end_matches(['?', '.', '!', ' ']).to_string()
}

/// True when two texts have the same normal form (and it is not empty).
pub fn same(a: &str, b: &str) -> bool {
    let na = normalise(a);
    !na.is_empty() && na == normalise(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_and_trailing_punctuation_do_not_count() {
        assert!(same("How do I  install Rust?", "  How do I install Rust "));
        assert!(same("list files\n\tin src.", "list files in src"));
    }

    #[test]
    fn case_and_inner_punctuation_count() {
        assert!(!same("what does git -v print", "what does git -V print"));
        assert!(!same("rename a.b", "rename ab"));
        assert!(!same("", "  "), "empty texts are never the same request");
    }
}
