//! The semantic tier's decision: which stored query, if any, answers a new query.
//!
//! Plain cosine similarity cannot reach a high hit rate without serving wrong answers (measured
//! on GPTCache's paraphrase pairs: no threshold gives >= 90% hits with <= 1% wrong). After the
//! cosine threshold, a verifier re-scores the nearest candidates with what the texts actually
//! say: shared content words, shared names (backticked or quoted strings, identifiers), numbers
//! that must agree, and negations; the best candidate must also stand clear of the runner-up,
//! because two near-identical stored queries make any choice between them a guess.

use std::collections::BTreeSet;

/// Nearest stored queries fetched from the index per lookup.
pub const CANDIDATES: usize = 5;
/// Candidates this far below the threshold still count as runners-up for the margin.
const FLOOR_BELOW: f32 = 0.10;
/// Weight of the content-word Jaccard overlap in the re-score.
const W_WORDS: f32 = 0.4;
/// Weight of the name overlap (backticks, quotes, identifiers).
const W_NAMES: f32 = 0.2;
/// Penalty when one text is negated and the other is not.
const NEGATION_PENALTY: f32 = 0.05;
/// The best re-scored candidate must beat the runner-up by this much.
const MARGIN: f32 = 0.05;

/// A stored query near the new one.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    /// The stored natural-language query.
    pub text: &'a str,
    /// Cosine similarity to the new query.
    pub score: f32,
}

/// The semantic decision rule.
#[derive(Debug, Clone)]
pub struct Verifier {
    /// Lowest cosine similarity for a hit.
    pub threshold: f32,
    /// Whether the verifier runs (false = plain cosine, for comparison).
    pub verify: bool,
}

/// What the verifier reads from a text.
struct Features {
    words: BTreeSet<String>,
    names: BTreeSet<String>,
    numbers: BTreeSet<String>,
    negated: bool,
}

impl Verifier {
    /// The verified rule at a threshold.
    pub fn new(threshold: f32) -> Verifier {
        Verifier { threshold, verify: true }
    }

    /// Plain cosine at a threshold (what other semantic caches do).
    pub fn plain(threshold: f32) -> Verifier {
        Verifier { threshold, verify: false }
    }

    /// The lowest similarity worth fetching from the index (below the threshold, so the margin to
    /// the runner-up can be judged).
    pub fn floor(&self) -> f32 {
        if self.verify { (self.threshold - FLOOR_BELOW).max(0.0) } else { self.threshold }
    }

    /// The index of the candidate that answers `query`, if any. `cands` are best first by cosine.
    pub fn choose(&self, query: &str, cands: &[Candidate<'_>]) -> Option<usize> {
        if !self.verify {
            return cands.first().filter(|c| c.score >= self.threshold).map(|_| 0);
        }
        let q = features(query);
        let mut scored: Vec<(f32, usize)> = cands
            .iter()
            .enumerate()
            .filter(|(_, c)| c.score >= self.floor())
            .map(|(i, c)| (c.score + bonus(&q, &features(c.text)), i))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let &(best, i) = scored.first()?;
        if cands[i].score < self.threshold || features(cands[i].text).numbers != q.numbers {
            return None;
        }
        match scored.get(1) {
            Some(&(second, _)) if best - second < MARGIN => None,
            _ => Some(i),
        }
    }
}

/// The lexical part of the re-score.
fn bonus(q: &Features, c: &Features) -> f32 {
    let names = if q.names.is_empty() && c.names.is_empty() { 1.0 } else { jaccard(&q.names, &c.names) };
    let neg = if q.negated != c.negated { NEGATION_PENALTY } else { 0.0 };
    W_WORDS * jaccard(&q.words, &c.words) + W_NAMES * names - neg
}

fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f32 {
    let inter = a.intersection(b).count();
    let union = a.len() + b.len() - inter;
    if union == 0 { 0.0 } else { inter as f32 / union as f32 }
}

const STOP: &[&str] = &[
    "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "is", "are", "was", "were", "be", "been", "being",
    "it", "its", "this", "that", "these", "those", "with", "by", "as", "at", "from", "can", "could", "will", "would",
    "should", "may", "might", "do", "does", "did", "you", "your", "we", "our", "they", "their", "i", "he", "she",
    "his", "her", "them", "there", "here", "what", "which", "who", "whom", "whose", "how", "why", "when", "where",
    "if", "then", "than", "so", "such", "into", "about", "over", "under", "also", "just", "only", "very", "more",
    "most", "some", "any", "each", "all", "both", "other", "own", "same", "too", "not", "no", "nor",
];
const NEGATIONS: &[&str] =
    &["not", "never", "none", "nobody", "nothing", "nowhere", "neither", "nor", "cannot", "without", "no"];

/// Words: runs of letters, digits and `_`, keeping inner `.`, `-`, `/` and `'` (versions, paths).
fn tokens(t: &str) -> Vec<&str> {
    let inner = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    for raw in t.split(|c: char| !(inner(c) || matches!(c, '.' | '-' | '/' | '\''))) {
        let w = raw.trim_matches(|c: char| !inner(c));
        if !w.is_empty() {
            out.push(w);
        }
    }
    out
}

fn stem(w: &str) -> String {
    for suf in ["ations", "ation", "ings", "ing", "edly", "ed", "es", "ly", "s"] {
        if let Some(s) = w.strip_suffix(suf)
            && s.chars().count() >= 3
        {
            return s.to_string();
        }
    }
    w.to_string()
}

fn features(t: &str) -> Features {
    let toks = tokens(t);
    let mut f = Features { words: BTreeSet::new(), names: BTreeSet::new(), numbers: BTreeSet::new(), negated: false };
    let mut negations = 0;
    for w in &toks {
        let lower = w.to_lowercase();
        if w.chars().any(|c| c.is_ascii_digit()) {
            f.numbers.insert(lower.trim_start_matches('v').to_string());
        }
        if NEGATIONS.contains(&lower.as_str()) || lower.ends_with("n't") {
            negations += 1;
        }
        let code_like = w.contains('_') || w.contains('.') || w.chars().skip(1).any(|c| c.is_uppercase());
        if code_like {
            f.names.insert(lower.clone());
        }
        if lower.chars().count() > 1 && !STOP.contains(&lower.as_str()) {
            f.words.insert(stem(&lower));
        }
    }
    for quoted in t.split('`').skip(1).step_by(2).chain(t.split('"').skip(1).step_by(2)) {
        f.names.insert(quoted.to_lowercase());
    }
    // A leading "No," / "Yes," answers the question; it does not negate the statement.
    let lead = toks.first().map(|w| w.to_lowercase());
    if lead.as_deref() == Some("no") && t.trim_start().get(2..).is_some_and(|r| r.trim_start().starts_with(',')) {
        negations -= 1;
    }
    f.negated = negations % 2 == 1;
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(text: &str, score: f32) -> Candidate<'_> {
        Candidate { text, score }
    }

    #[test]
    fn plain_cosine_takes_the_best_above_the_threshold() {
        let v = Verifier::plain(0.8);
        assert_eq!(v.choose("q", &[c("a", 0.85), c("b", 0.84)]), Some(0));
        assert_eq!(v.choose("q", &[c("a", 0.79)]), None);
    }

    #[test]
    fn numbers_must_agree() {
        let v = Verifier::new(0.7);
        let q = "how do I install python 3.12 on ubuntu";
        assert_eq!(v.choose(q, &[c("how do I install python 3.11 on ubuntu", 0.97)]), None);
        assert_eq!(v.choose(q, &[c("how can I install python 3.12 on ubuntu", 0.95)]), Some(0));
    }

    #[test]
    fn near_identical_runners_up_make_it_a_miss() {
        let v = Verifier::new(0.7);
        let q = "what does the load_dataset function return";
        let cands = [
            c("what does the load_dataset function return", 0.90),
            c("what does the load_dataset function return?", 0.90),
        ];
        assert_eq!(v.choose(q, &cands), None);
    }

    #[test]
    fn shared_words_and_names_pick_the_right_candidate() {
        let v = Verifier::new(0.7);
        let q = "how do I read a parquet file with `pandas.read_parquet`";
        let cands = [
            c("how do I write a csv file with pandas", 0.83),
            c("reading a parquet file using `pandas.read_parquet`", 0.82),
        ];
        assert_eq!(v.choose(q, &cands), Some(1));
    }

    #[test]
    fn negation_counts_and_answer_particles_do_not() {
        assert!(features("it does not exist").negated);
        assert!(!features("No, it exists in version 2").negated);
        assert!(features("No, it doesn't exist").negated);
    }
}
