//! Two gates on the names a request is about, for pairs that embed almost alike but ask about
//! different things:
//!
//! - **Another term.** Two requests that differ in one word only, where one word extends the
//!   other into another term (`localdate` / `localdatetime`, `hash` / `hashmap`, `date` /
//!   `datetime`), ask about two things: technical names are built by compounding, and the
//!   embedding of the shorter name sits next to the longer one. An extension that is only an
//!   ending (`file` / `files`, `str` / `string`, `int` / `integer`, `config` / `configuration`)
//!   is the same word, and a compound the other text spells apart (`file name` / `filename`) is
//!   the same term.
//! - **Another language, platform or tool.** "read a file to a string in Go" is not "... in
//!   Rust": one text names a language, operating system, package manager or database and the
//!   other names another of the same kind (and not the first). Names that are common words too
//!   (`go`, `node`, `mac`, `shell`) are left out: a gate may miss, it must not refuse a rewording.

use super::words::words;
use std::collections::BTreeSet;

/// Words that say nothing about what is asked for, left out when looking for the one word two
/// requests differ in.
const FUNCTION_WORDS: &[&str] = &[
    "vs", "versus", "and", "or", "of", "in", "on", "for", "with", "is", "are", "how", "do", "does", "i", "to", "what",
    "can", "you", "please", "me",
];

/// Endings that make a longer word the same word or its abbreviation's full form (inflection,
/// derivation: `integer` for `int`, `configuration` for `config`, `boolean` for `bool`).
const ENDINGS: &[&str] = &[
    "ation", "tion", "sion", "ion", "ment", "ory", "ary", "ity", "ies", "ence", "ance", "ing", "ed", "er", "or", "ive",
    "ize", "ise", "ic", "ics", "al", "ous", "ful", "ness", "ly", "able", "ible", "ure", "ate", "ute", "ean", "ent",
    "ant", "est", "ess", "us",
];

/// The shortest word a compound is built on, and the shortest part it adds.
const MIN_BASE: usize = 4;
const MIN_ADDED: usize = 3;

/// The words of a request that carry its meaning.
fn content(text: &str) -> BTreeSet<String> {
    words(text).into_iter().filter(|w| !FUNCTION_WORDS.contains(&w.as_str())).collect()
}

/// Whether `long` is `short` with another word added (`localdatetime` is `localdate` + `time`).
fn compounds(long: &str, short: &str) -> bool {
    let alpha = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_alphabetic());
    if short.chars().count() < MIN_BASE || !alpha(short) || !alpha(long) {
        return false;
    }
    let Some(added) = long.strip_prefix(short) else { return false };
    let stem = added.strip_suffix('s').unwrap_or(added);
    stem.chars().count() >= MIN_ADDED && !ENDINGS.iter().any(|e| added.ends_with(e))
}

/// True when the two requests differ in one word only and one of the two words is the other
/// with another word added, which neither text has on its own.
pub fn other_term(a: &str, b: &str) -> bool {
    let (ca, cb) = (content(a), content(b));
    let (only_a, only_b): (Vec<&String>, Vec<&String>) = (ca.difference(&cb).collect(), cb.difference(&ca).collect());
    let ([x], [y]) = (only_a.as_slice(), only_b.as_slice()) else { return false };
    let (long, short) = if x.len() > y.len() { (x, y) } else { (y, x) };
    compounds(long, short)
}

/// Kinds of named things, each a list of names that stand for one thing (aliases together).
const KINDS: &[&[&[&str]]] = &[
    // Programming languages and shells.
    &[
        &["python", "python3", "py"],
        &["javascript", "js", "nodejs", "node.js"],
        &["typescript", "ts"],
        &["java"],
        &["kotlin"],
        &["scala"],
        &["golang"],
        &["rust"],
        &["ruby"],
        &["php"],
        &["perl"],
        &["swift"],
        &["csharp"],
        &["cpp"],
        &["haskell"],
        &["elixir"],
        &["lua"],
        &["dart"],
        &["julia"],
        &["bash", "sh", "zsh"],
        &["powershell"],
    ],
    // Operating systems.
    &[&["linux", "ubuntu", "debian", "fedora", "centos"], &["windows"], &["macos", "osx"]],
    // Package managers.
    &[
        &["npm"],
        &["yarn"],
        &["pnpm"],
        &["pip", "pip3"],
        &["conda"],
        &["poetry"],
        &["apt", "apt-get"],
        &["brew", "homebrew"],
    ],
    // Databases.
    &[
        &["postgres", "postgresql", "psql"],
        &["mysql", "mariadb"],
        &["sqlite", "sqlite3"],
        &["mongodb", "mongo"],
        &["redis"],
    ],
];

/// Days, each a list of words for one day. "may", "march" and "sun" are not read (common words
/// too), nor parts of a day ("this morning" and "in the morning" are the same request more often
/// than not).
const DAYS: &[&[&[&str]]] = &[
    &[&["today"], &["tonight"], &["tomorrow", "tmrw"], &["yesterday"]],
    &[
        &["monday", "mon"],
        &["tuesday", "tue", "tues"],
        &["wednesday", "wed"],
        &["thursday", "thu", "thurs"],
        &["friday", "fri"],
        &["saturday", "sat"],
        &["sunday"],
    ],
    &[
        &["january", "jan"],
        &["february", "feb"],
        &["april", "apr"],
        &["june", "jun"],
        &["july", "jul"],
        &["august", "aug"],
        &["september", "sep", "sept"],
        &["october", "oct"],
        &["november", "nov"],
        &["december", "dec"],
    ],
];

/// Which things of one kind a text names (indexes into the kind's list).
fn named(kind: &[&[&str]], words: &BTreeSet<String>) -> BTreeSet<usize> {
    (0..kind.len()).filter(|&i| kind[i].iter().any(|n| words.contains(*n))).collect()
}

/// True when, for some kind, each text names something of it and they name nothing in common.
fn names_another(kinds: &[&[&[&str]]], a: &str, b: &str) -> bool {
    let (wa, wb): (BTreeSet<String>, BTreeSet<String>) =
        (words(a).into_iter().collect(), words(b).into_iter().collect());
    kinds.iter().any(|kind| {
        let (na, nb) = (named(kind, &wa), named(kind, &wb));
        !na.is_empty() && !nb.is_empty() && na.is_disjoint(&nb)
    })
}

/// True when one text names a language, OS, package manager or database and the other another
/// of the same kind.
pub fn other_tool(a: &str, b: &str) -> bool {
    names_another(KINDS, a, b)
}

/// True when one text names a day (today, a weekday, a month) and the other another one ("will I
/// need an umbrella today" is not "... tomorrow": cosine 0.973, served before this gate).
pub fn other_day(a: &str, b: &str) -> bool {
    names_another(DAYS, a, b)
}

#[cfg(test)]
mod tests {
    use crate::verify::Gate;

    #[test]
    fn a_longer_compound_term_is_another_term() {
        assert!(Gate::Term.refuses("java string to localdatetime", "java string to LocalDate"));
        assert!(Gate::Term.refuses("python date to string", "python datetime to string"));
        assert!(Gate::Term.refuses("iterate over a java hashmap", "iterate over a java hash"));
    }

    #[test]
    fn an_ending_or_an_abbreviation_is_the_same_term() {
        assert!(!Gate::Term.refuses("java string to int", "java string to integer"));
        assert!(!Gate::Term.refuses("python reverse a str", "python reverse a string"));
        assert!(!Gate::Term.refuses("list docker container", "list docker containers"));
        assert!(!Gate::Term.refuses("edit the nginx config", "edit the nginx configuration"));
        assert!(!Gate::Term.refuses("python bool to string", "python boolean to string"));
    }

    #[test]
    fn a_compound_spelled_apart_or_more_than_one_change_is_not_judged_here() {
        assert!(!Gate::Term.refuses("git config user name", "git config username"));
        // Two words differ: whether that is another request is the threshold's call.
        assert!(!Gate::Term.refuses("how do I parse a date string in java", "java string to localdate"));
    }

    #[test]
    fn another_language_platform_or_tool_is_refused() {
        assert!(Gate::Tool.refuses("golang read file to string", "rust read file to string"));
        assert!(Gate::Tool.refuses("which process uses port 8080 on windows", "which process uses port 8080 on linux"));
        assert!(Gate::Tool.refuses("install a package with yarn", "install a package with npm"));
        assert!(Gate::Tool.refuses("javascript deep copy object", "java deep copy object"));
    }

    #[test]
    fn another_day_is_refused_the_same_day_or_none_is_not() {
        assert!(Gate::Day.refuses("will i need an umbrella today", "will i need an umbrella tomorrow"));
        assert!(Gate::Day.refuses("commits since monday", "commits since friday"));
        assert!(Gate::Day.refuses("release notes for january", "release notes for feb"));
        assert!(
            !Gate::Day.refuses("set alarm for tomorrow morning at six", "set an alarm for tmrw at six in the morning")
        );
        assert!(!Gate::Day.refuses("what is the weather", "what is the weather today"));
        // Common words that are also month names are not read.
        assert!(!Gate::Day.refuses("you may need sudo", "you will need sudo in march"));
    }

    #[test]
    fn aliases_and_unnamed_tools_are_not_refused() {
        assert!(!Gate::Tool.refuses("python3 reverse a string", "how to reverse a str in python"));
        assert!(!Gate::Tool.refuses("js deep clone object", "javascript deep copy object"));
        assert!(!Gate::Tool.refuses("find what listens on a port on ubuntu", "linux which process uses a port"));
        assert!(!Gate::Tool.refuses("reverse a string", "python reverse a string"));
        // Names that are common words too are not read as tools.
        assert!(!Gate::Tool.refuses("go read entire file", "rust read file to string"));
        assert!(!Gate::Tool.refuses("delete a node from a linked list in python", "delete a linked list node"));
    }
}
