//! The words the gates read: one tokeniser for every gate, so "a String" is split the same way
//! whichever gate reads it.

/// Word tokens: runs of letters, digits and `_`, keeping inner `.`, `-`, `/` and `'`.
pub fn tokens(text: &str) -> Vec<&str> {
    let inner = |c: char| c.is_alphanumeric() || c == '_';
    text.split(|c: char| !(inner(c) || matches!(c, '.' | '-' | '/' | '\'')))
        .map(|raw| raw.trim_matches(|c: char| !inner(c)))
        .filter(|w| !w.is_empty())
        .collect()
}

/// Words that only point at what follows ("a String" is "String").
const ARTICLES: &[&str] = &["a", "an", "the", "my", "your", "its", "this", "that", "some"];

/// A text's words, lowercased, articles skipped.
pub fn words(text: &str) -> Vec<String> {
    tokens(text).into_iter().map(str::to_lowercase).filter(|w| !ARTICLES.contains(&w.as_str())).collect()
}
