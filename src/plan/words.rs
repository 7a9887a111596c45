//! Words of a task with their byte offsets, for masking and alignment: plain words between the
//! typed values, and the values themselves as single tokens.
//!
//! A token remembers whether punctuation separates it from the one before, so a rule that reads
//! neighbours ("the function `main`") never reaches across a comma or a full stop.

use super::params::Span;

/// One token of a task: a word, or a value span.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// The text as written.
    pub text: String,
    /// Lowercase text (the value's placeholder for value tokens).
    pub lower: String,
    /// Index of the value span this token stands for.
    pub value: Option<usize>,
    /// Punctuation (not only spaces) separates it from the previous token, or it starts a
    /// sentence.
    pub after_break: bool,
}

/// Characters a plain word may hold besides letters and digits.
fn word_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '$' | '@' | '\'' | '+' | '*')
}

/// Tokenises `text`: value spans (sorted, non-overlapping) are single tokens, the rest is split
/// into words, trimmed of sentence punctuation.
pub fn tokens(text: &str, spans: &[Span]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut gap = String::new();
    let push_words = |seg_start: usize, seg: &str, out: &mut Vec<Token>, gap: &mut String| {
        let mut i = 0;
        let chars: Vec<(usize, char)> = seg.char_indices().collect();
        while i < chars.len() {
            if !word_char(chars[i].1) {
                gap.push(chars[i].1);
                i += 1;
                continue;
            }
            let s = i;
            while i < chars.len() && word_char(chars[i].1) {
                i += 1;
            }
            let (bs, be) = (chars[s].0, chars.get(i).map_or(seg.len(), |c| c.0));
            let raw = &seg[bs..be];
            let lead = raw.len() - raw.trim_start_matches(['.', ':', '-', '\'', '+', '*']).len();
            let word = raw.trim_matches(['.', ':', '-', '\'', '+', '*']);
            if word.is_empty() {
                gap.push_str(raw);
                continue;
            }
            // `*.py` keeps its star in the gap; sentence dots stay punctuation.
            gap.push_str(&raw[..lead]);
            let start = seg_start + bs + lead;
            out.push(Token {
                start,
                end: start + word.len(),
                text: word.to_string(),
                lower: word.to_lowercase(),
                value: None,
                after_break: out.is_empty() || is_break(gap),
            });
            gap.clear();
            gap.push_str(&raw[lead + word.len()..]);
        }
    };
    for (i, s) in spans.iter().enumerate() {
        if s.start < at || s.end > text.len() || !text.is_char_boundary(s.start) || !text.is_char_boundary(s.end) {
            continue;
        }
        push_words(at, &text[at..s.start], &mut out, &mut gap);
        out.push(Token {
            start: s.start,
            end: s.end,
            text: text[s.start..s.end].to_string(),
            lower: super::params::placeholder(s.kind).to_string(),
            value: Some(i),
            after_break: out.is_empty() || is_break(&gap),
        });
        gap.clear();
        at = s.end;
    }
    push_words(at, &text[at..], &mut out, &mut gap);
    out
}

/// Whether the characters between two tokens end a clause.
fn is_break(gap: &str) -> bool {
    gap.chars().any(|c| matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | '\n' | '(' | ')' | '[' | ']'))
}

/// Whether `t` starts a sentence (the first token, or after `.`, `!`, `?`, a newline or a colon).
pub fn sentence_start(text: &str, toks: &[Token], i: usize) -> bool {
    if i == 0 {
        return true;
    }
    let between = &text[toks[i - 1].end.min(toks[i].start)..toks[i].start];
    let prev = toks[i - 1].text.as_str();
    between.contains(['.', '!', '?', '\n', ':', '-', '*', '#']) || prev.ends_with('.')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::params::spans;

    #[test]
    fn values_are_single_tokens_and_punctuation_breaks() {
        let text = "rename fn run_server to serve, then bump serde to 1.0.200.";
        let toks = tokens(text, &spans(text));
        let words: Vec<&str> = toks.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(words, ["rename", "fn", "run_server", "to", "serve", "then", "bump", "serde", "to", "1.0.200"]);
        assert!(toks[5].after_break && !toks[4].after_break);
        assert_eq!(toks[9].value, Some(1), "{toks:?}");
    }

    #[test]
    fn hostile_text_tokenises_without_panicking() {
        for text in ["", " ", "...", "`", "é è ü 日本語 🙂", "*.py", "a\u{0}b", &"x".repeat(10_000)] {
            let _ = tokens(text, &spans(text));
        }
    }
}
