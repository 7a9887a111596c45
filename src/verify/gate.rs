//! Cheap gates run before the model: a candidate that fails one is not scored at all. Gates can
//! only refuse, never accept, so they cost recall at most, never precision.
//!
//! - Numbers and versions must agree ("python 3.11" is not "python 3.12"; "port 8080" is not
//!   "port 80"): embeddings and word-piece models are easily fooled by digits.
//! - Negation must agree ("... without a password" is not "... with a password").
//! - A direction must not be reversed ("convert a String to an i32" is not "convert an i32 to a
//!   String"; "format a date as a string" is not "a string to a date"; "an enum member to its
//!   string value" is not "an enum from a string value"): the same words in another order embed
//!   almost identically.
//! - The action must not be its opposite ("enable the firewall" is not "disable the firewall";
//!   "... and discard the changes" is not "... but keep the changes").
//! - Quoted strings and identifiers must agree ("what does `Vec::drain` do" is not "what does
//!   `Vec::retain` do"): each one in either text must appear in the other (quotes may be dropped).
//! - One term must not stand for a longer one ("string to LocalDate" is not "string to
//!   LocalDateTime"), nor a language, platform or tool for another, nor a day for another
//!   ("... today" is not "... tomorrow"; `terms`).
//!
//! Which gates run is `GATES`, chosen for results on the development figures of `refrain-bench
//! calibrate --compare-gates`. Plans compare values and opposite words themselves on masked text
//! (`plan::coverage`) and run the same `GATES` on the two masked tasks, since what they read
//! (another tool, an opposite action, another term, a reversed direction) are words that masking
//! keeps. The order decides only which gate a refusal is reported under (the first that refuses),
//! never whether a pair is refused.

use super::terms;
use super::words::{tokens, words};
use std::collections::BTreeSet;

/// Candidates below this cosine similarity are not worth scoring.
pub const FLOOR: f32 = 0.5;

/// Why a candidate was not scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Gate {
    /// Its cosine similarity is below the floor worth scoring.
    Floor,
    /// A number or version differs.
    Values,
    /// One text is negated and the other is not.
    Negation,
    /// The same two things in the opposite direction (A to B against B to A).
    Direction,
    /// A quoted string or an identifier of one text is missing from the other.
    Quoted,
    /// One text asks for an action, the other for its opposite.
    Opposite,
    /// The texts differ in one word only, and one of the two words extends the other into another
    /// term (`localdate` / `localdatetime`).
    Term,
    /// One text names a language, platform or tool and the other another of the same kind.
    Tool,
    /// One text names a day (today, a weekday, a month) and the other another.
    Day,
}

/// The gates lookups run (besides the floor), in the order a refusal is named: on results, and
/// on the two masked tasks of plans ("move ... asking before overwriting" is not "move ...
/// without asking before overwriting"; "add <name> with yarn" is not "... with npm"). On the
/// plans' development families (coding, and a seeded sample of 110 shell families, stored both
/// ways) the gates added after negation refused 4 candidates, all wrong, and no paraphrase.
pub const GATES: &[Gate] =
    &[Gate::Values, Gate::Negation, Gate::Direction, Gate::Quoted, Gate::Opposite, Gate::Term, Gate::Tool, Gate::Day];

impl Gate {
    /// The reason in words (also how evaluation records name the gate).
    pub fn reason(self) -> &'static str {
        match self {
            Gate::Floor => "not similar enough to score",
            Gate::Values => "a number or version differs",
            Gate::Negation => "one is negated, the other is not",
            Gate::Direction => "the direction is reversed",
            Gate::Quoted => "a quoted string or identifier differs",
            Gate::Opposite => "one asks for the opposite action",
            Gate::Term => "one names a longer, different term",
            Gate::Tool => "another language, platform or tool",
            Gate::Day => "another day",
        }
    }

    /// Whether this gate refuses the pair (the floor is checked on the cosine, not here).
    pub fn refuses(self, a: &str, b: &str) -> bool {
        match self {
            Gate::Floor => false,
            Gate::Values => !values_agree(a, b),
            Gate::Negation => negated(a) != negated(b),
            Gate::Direction => reversed(a, b),
            Gate::Quoted => !names_agree(a, b),
            Gate::Opposite => opposite(a, b),
            Gate::Term => terms::other_term(a, b),
            Gate::Tool => terms::other_tool(a, b),
            Gate::Day => terms::other_day(a, b),
        }
    }
}

/// Numbers written as words, with the digits they stand for ("mute for two hours" is not "mute
/// for one hour"; "2 hours" is "two hours").
const NUMBER_WORDS: &[(&str, &str)] = &[
    ("zero", "0"),
    ("one", "1"),
    ("two", "2"),
    ("three", "3"),
    ("four", "4"),
    ("five", "5"),
    ("six", "6"),
    ("seven", "7"),
    ("eight", "8"),
    ("nine", "9"),
    ("ten", "10"),
    ("eleven", "11"),
    ("twelve", "12"),
    ("thirteen", "13"),
    ("fourteen", "14"),
    ("fifteen", "15"),
    ("sixteen", "16"),
    ("seventeen", "17"),
    ("eighteen", "18"),
    ("nineteen", "19"),
    ("twenty", "20"),
    ("thirty", "30"),
    ("forty", "40"),
    ("fifty", "50"),
    ("sixty", "60"),
    ("seventy", "70"),
    ("eighty", "80"),
    ("ninety", "90"),
    ("hundred", "100"),
    ("thousand", "1000"),
    ("twice", "2"),
    ("half", "0.5"),
    ("dozen", "12"),
];

/// Words before "one" that make it a pronoun ("which one", "the one", "this one"), not a count.
const ONE_AS_PRONOUN_AFTER: &[&str] = &[
    "which", "the", "this", "that", "each", "every", "any", "no", "some", "another", "only", "new", "old", "last",
    "right", "wrong", "other", "a", "same", "better", "latest", "current", "first", "second", "next",
];

/// Words after "one" that make it a pronoun or an idiom ("one of the files", "one another").
const ONE_AS_PRONOUN_BEFORE: &[&str] = &["of", "another", "by", "liners", "liner", "line", "shot", "go"];

/// Words that count everything: "one" said against them is another count ("make one property
/// optional" is not "make all properties optional", cosine 0.963).
const ALL_WORDS: &[&str] = &["all", "every"];

fn says_all(text: &str) -> bool {
    words(text).iter().any(|w| ALL_WORDS.contains(&w.as_str()))
}

/// The numbers and versions a text mentions: tokens with a digit (a leading `v` dropped) and
/// numbers written as words ("one" only where it counts something).
pub fn values(text: &str) -> BTreeSet<String> {
    numbers(text).0
}

/// Numbers in words that often count nothing ("one of", "in one place", "a zero matrix"): said
/// against a text with no number at all, they do not make it another request.
const WEAK_NUMBER_WORDS: &[&str] = &["one", "zero", "half"];

/// `values`, and whether any of them is more than a weak number word (see `WEAK_NUMBER_WORDS`).
fn numbers(text: &str) -> (BTreeSet<String>, bool) {
    let words = tokens(text);
    let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    let mut out = BTreeSet::new();
    let mut strong = false;
    for (i, w) in lower.iter().enumerate() {
        if w.chars().any(|c| c.is_ascii_digit()) {
            out.insert(w.trim_start_matches('v').to_string());
            strong = true;
            continue;
        }
        let Some((_, digits)) = NUMBER_WORDS.iter().find(|(word, _)| word == w) else { continue };
        if w == "one" {
            let before = i.checked_sub(1).map(|j| lower[j].as_str());
            let after = lower.get(i + 1).map(String::as_str);
            if before.is_some_and(|b| ONE_AS_PRONOUN_AFTER.contains(&b))
                || after.is_none_or(|a| ONE_AS_PRONOUN_BEFORE.contains(&a))
            {
                continue;
            }
        }
        out.insert((*digits).to_string());
        strong |= !WEAK_NUMBER_WORDS.contains(&w.as_str());
    }
    (out, strong)
}

/// True when both texts mention the same numbers and versions, or one mentions none and the
/// other only a weak number word ("backup of one database" is "database backup").
pub fn values_agree(a: &str, b: &str) -> bool {
    let ((va, strong_a), (vb, strong_b)) = (numbers(a), numbers(b));
    if va == vb {
        return true;
    }
    // A lone "one" against "all" / "every" (said only by the other text) counts differently.
    let one_against_all = |v: &BTreeSet<String>, own: &str, other: &str| {
        v.len() == 1 && v.contains("1") && says_all(other) && !says_all(own)
    };
    if one_against_all(&va, a, b) || one_against_all(&vb, b, a) {
        return false;
    }
    va.is_empty() && !strong_b || vb.is_empty() && !strong_a
}

const NEGATIONS: &[&str] =
    &["not", "never", "none", "nobody", "nothing", "nowhere", "neither", "nor", "cannot", "without", "no"];

/// True when a text is negated an odd number of times (a leading "No," answers, it does not negate).
pub fn negated(text: &str) -> bool {
    let toks = tokens(text);
    let mut n = toks
        .iter()
        .map(|w| w.to_lowercase())
        .filter(|w| NEGATIONS.contains(&w.as_str()) || w.ends_with("n't") || w.ends_with("nt'"))
        .count();
    let leading_no = toks.first().is_some_and(|w| w.eq_ignore_ascii_case("no"))
        && text.trim_start().get(2..).is_some_and(|r| r.trim_start().starts_with(','));
    if leading_no {
        n -= 1;
    }
    n % 2 == 1
}

/// Words that end "to" into a compound preposition ("in addition to", "according to", "next to"):
/// what follows is not where something goes.
const BEFORE_TO_NOT_A_TARGET: &[&str] =
    &["addition", "according", "due", "thanks", "next", "close", "prior", "similar", "compared", "relative", "equal"];

/// Words that end "from" into a compound preposition ("apart from", "aside from", "away from").
const BEFORE_FROM_NOT_A_SOURCE: &[&str] = &["apart", "aside", "away", "far", "different", "free"];

/// The (from, to) pairs of "X to Y" / "X into Y" / "X as Y" / "from X to Y", articles skipped.
fn directions(words: &[String]) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if matches!(w.as_str(), "to" | "into" | "as") && i > 0 && i + 1 < words.len() {
            out.push((words[i - 1].as_str(), words[i + 1].as_str()));
        }
    }
    out
}

/// The words a text goes from ("from Y") and to ("to Y", "into Y", "as Y"), articles skipped.
fn roles(words: &[String]) -> (BTreeSet<&str>, BTreeSet<&str>) {
    let (mut sources, mut targets) = (BTreeSet::new(), BTreeSet::new());
    for (i, w) in words.iter().enumerate() {
        let Some(next) = words.get(i + 1) else { continue };
        let before = i.checked_sub(1).map(|j| words[j].as_str());
        match w.as_str() {
            "to" | "into" | "as" if before.is_some_and(|b| !BEFORE_TO_NOT_A_TARGET.contains(&b)) => {
                targets.insert(next.as_str());
            }
            "from" if !before.is_some_and(|b| BEFORE_FROM_NOT_A_SOURCE.contains(&b)) => {
                sources.insert(next.as_str());
            }
            _ => {}
        }
    }
    (sources, targets)
}

/// True when one text goes from X to Y and the other from Y to X, or a word is where one text
/// goes and where the other comes from ("an enum member to its string value" against "an enum
/// from a string value").
pub fn reversed(a: &str, b: &str) -> bool {
    let (wa, wb) = (words(a), words(b));
    let (da, db) = (directions(&wa), directions(&wb));
    if da.iter().any(|(x, y)| x != y && db.iter().any(|(p, q)| p == y && q == x)) {
        return true;
    }
    let ((sa, ta), (sb, tb)) = (roles(&wa), roles(&wb));
    let flips = |t: &BTreeSet<&str>, s: &BTreeSet<&str>, other_s: &BTreeSet<&str>, other_t: &BTreeSet<&str>| {
        t.iter().any(|y| other_s.contains(y) && !s.contains(y) && !other_t.contains(y))
    };
    flips(&ta, &sa, &sb, &tb) || flips(&tb, &sb, &sa, &ta)
}

/// Actions and their opposites (word stems: a word matches when it starts with the stem).
const OPPOSITES: &[(&str, &str)] = &[
    ("enabl", "disabl"),
    ("discard", "keep"),
    ("install", "uninstall"),
    ("lock", "unlock"),
    ("mount", "unmount"),
    ("encrypt", "decrypt"),
    ("compress", "decompress"),
    ("increas", "decreas"),
    ("upload", "download"),
    ("show", "hide"),
    ("allow", "deny"),
    ("includ", "exclud"),
    ("ascending", "descending"),
    ("serializ", "deserializ"),
    ("encod", "decod"),
    ("zoom in", "zoom out"),
];

/// Whether `text` has a word starting with `stem` (a stem of two words matches the phrase).
fn has_stem(words: &[String], stem: &str) -> bool {
    if let Some((a, b)) = stem.split_once(' ') {
        return words.windows(2).any(|w| w[0].starts_with(a) && w[1] == b);
    }
    words.iter().any(|w| w.starts_with(stem))
}

/// True when one text asks for an action and the other for its opposite (and not for both).
pub fn opposite(a: &str, b: &str) -> bool {
    let words = |t: &str| -> Vec<String> { tokens(t).into_iter().map(str::to_lowercase).collect() };
    let (wa, wb) = (words(a), words(b));
    OPPOSITES.iter().any(|(x, y)| {
        let (ax, ay, bx, by) = (has_stem(&wa, x), has_stem(&wa, y), has_stem(&wb, x), has_stem(&wb, y));
        (ax && !ay && by && !bx) || (ay && !ax && bx && !by)
    })
}

/// Quoted spans (`...`, "...", '...') and identifier-shaped words (`a_b`, `a::b`, `a.b()`,
/// camelCase), lowercased.
pub fn names(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for q in ['`', '"'] {
        let parts: Vec<&str> = text.split(q).collect();
        if parts.len() >= 3 {
            for inner in parts.iter().skip(1).step_by(2).take((parts.len() - 1) / 2) {
                let inner = inner.trim();
                if !inner.is_empty() && inner.len() <= 80 {
                    out.insert(inner.to_lowercase());
                }
            }
        }
    }
    for w in text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '?' | '!' | '`' | '"' | '(' | ')')) {
        let w = w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
        let inner_upper = w.chars().skip(1).any(|c| c.is_uppercase()) && w.chars().any(|c| c.is_lowercase());
        let dotted = w.contains('.')
            && w.split('.').all(|p| p.len() >= 2 && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
            && !w.chars().all(|c| c.is_ascii_digit() || c == '.');
        if w.len() > 1 && (w.contains('_') || w.contains("::") || inner_upper || dotted) {
            out.insert(w.to_lowercase());
        }
    }
    out
}

/// True when every quoted string and identifier of each text appears in the other.
pub fn names_agree(a: &str, b: &str) -> bool {
    let (la, lb) = (a.to_lowercase(), b.to_lowercase());
    names(a).iter().all(|n| lb.contains(n.as_str())) && names(b).iter().all(|n| la.contains(n.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_versions_must_agree() {
        assert!(Gate::Values.refuses("install python 3.12 on ubuntu", "install python 3.11 on ubuntu"));
        assert!(!Gate::Values.refuses("install python 3.12 on ubuntu?", "how can I install Python v3.12 on Ubuntu"));
        assert!(Gate::Values.refuses("what runs on port 8080", "what runs on port 80"));
        assert!(!Gate::Values.refuses("how do I undo a commit", "undo my last commit"));
    }

    #[test]
    fn numbers_written_as_words_count_as_numbers() {
        assert!(Gate::Values.refuses("mute for two hours", "mute for one hour"));
        assert!(!Gate::Values.refuses("mute for two hours", "mute notifications for 2 hours"));
        assert!(Gate::Values.refuses("set a timer for fifteen minutes", "set a timer for 50 minutes"));
        assert!(!Gate::Values.refuses("remind me in one hour", "remind me in 1 hour"));
        // "one" as a pronoun or in an idiom counts nothing.
        assert!(!Gate::Values.refuses("which one is faster, rg or grep", "is rg faster than grep"));
        assert!(!Gate::Values.refuses("delete one of the branches", "delete a branch"));
        assert!(!Gate::Values.refuses("a bash one liner to count lines", "count lines in bash"));
        // A weak number word against a text with no number says nothing new; against another
        // number it does.
        assert!(!Gate::Values.refuses("how do I make a backup of one Postgres database", "postgres backup database"));
        assert!(!Gate::Values.refuses("create a zero matrix numpy", "numpy array of zeros"));
        assert!(!Gate::Values.refuses("mute for one hour", "mute for an hour"));
        assert!(Gate::Values.refuses("mute for one hour", "mute for 2 hours"));
        assert!(Gate::Values.refuses("make coffee at six am", "make coffee at seven am"));
        assert!(Gate::Values.refuses("make coffee at six am", "make coffee in the morning"));
    }

    #[test]
    fn one_against_all_is_another_count() {
        assert!(
            Gate::Values.refuses("typescript make one property optional", "typescript make all properties optional")
        );
        assert!(Gate::Values.refuses("delete every branch merged into main", "delete one branch merged into main"));
        // Both say all, or "one" is an idiom.
        assert!(!Gate::Values.refuses("run all tests in one file", "run all the tests of one file"));
        assert!(!Gate::Values.refuses(
            "make all of project/{src,tests}/{unit,e2e} with brace expansion",
            "Create the nested directories project/{src,tests}/{unit,e2e} in one go"
        ));
        assert!(!Gate::Values.refuses("list all branches", "list the branches"));
    }

    #[test]
    fn negation_must_agree_and_answer_particles_do_not_count() {
        assert!(Gate::Negation.refuses("connect without a password", "connect with a password"));
        assert!(Gate::Negation.refuses("why doesn't cargo build", "why does cargo build"));
        assert!(!Gate::Negation.refuses("No, it exists in version 2", "it exists in version 2"));
        assert!(!Gate::Negation.refuses("how do I not print output", "how can I never print output"));
    }

    #[test]
    fn a_reversed_direction_is_refused_and_a_reworded_one_is_not() {
        assert!(Gate::Direction.refuses("convert a String to an i32", "convert an i32 to a String"));
        assert!(Gate::Direction.refuses("how to cast int into float", "cast a float to an int"));
        assert!(!Gate::Direction.refuses("convert a String to an i32", "turn a String into an i32"));
        assert!(!Gate::Direction.refuses("how to go to bed early", "how do I get to bed early"));
        // "X as Y" goes from X to Y too.
        assert!(Gate::Direction.refuses("java format a localdate as a string", "java string to localdate"));
        assert!(!Gate::Direction.refuses("java format a localdate as a string", "java localdate to string"));
    }

    #[test]
    fn a_word_that_is_a_target_in_one_and_a_source_in_the_other_is_a_reversal() {
        assert!(Gate::Direction.refuses("python enum member to its string value", "python enum from string value"));
        assert!(Gate::Direction.refuses("copy a file from the server", "copy a file to the server"));
        assert!(
            !Gate::Direction.refuses("how do I convert a string to an Enum member", "python enum from string value")
        );
        assert!(
            !Gate::Direction.refuses("copy a file from the server", "download a file from the server to my laptop")
        );
        // Compound prepositions name no source or target.
        assert!(!Gate::Direction.refuses(
            "apart from metrics, what tools assess models",
            "in addition to metrics, which tools evaluate models"
        ));
    }

    #[test]
    fn an_action_is_not_its_opposite() {
        assert!(
            Gate::Opposite.refuses("how to enable the firewall on ubuntu", "how to disable the firewall on ubuntu")
        );
        assert!(Gate::Opposite.refuses(
            "undo the last git commit and discard the changes",
            "undo the last git commit but keep the changes"
        ));
        assert!(Gate::Opposite.refuses("uninstall a package with pip", "install a package with pip"));
        assert!(!Gate::Opposite.refuses("how do I enable dark mode", "turn on dark mode, how is it enabled"));
        assert!(!Gate::Opposite.refuses("enable or disable a feature flag", "how to disable or enable feature flags"));
        assert!(!Gate::Opposite.refuses("how do I list docker containers", "show me the running docker containers"));
    }

    #[test]
    fn quoted_strings_and_identifiers_must_agree_and_dropped_quotes_do_not_count() {
        assert!(Gate::Quoted.refuses("what does `Vec::drain` do", "what does `Vec::retain` do"));
        assert!(Gate::Quoted.refuses("why is my_var undefined", "why is other_var undefined"));
        assert!(Gate::Quoted.refuses("grep for \"TODO\" in files", "grep for \"FIXME\" in files"));
        assert!(!Gate::Quoted.refuses("What does `cargo vendor` do", "what does cargo vendor do?"));
        assert!(!Gate::Quoted.refuses("how do I use os.path.join", "using os.path.join in python"));
        assert!(!Gate::Quoted.refuses("how do I undo a commit.", "undo my last commit, e.g. a merge"));
    }
}
