//! The normaliser's vocabulary, as data: verbs and phrases -> canonical actions, nouns -> target
//! kinds, and the generic kind each specific kind falls back to.
//!
//! Changing these tables changes bucket keys: bump `NORMALISER_VERSION` when you do.

use std::collections::HashMap;
use std::sync::LazyLock;

/// Multi-word phrases checked before single verbs (longest first wins at a position).
pub const PHRASES: &[(&str, &str)] = &[
    ("change the name of", "rename"),
    ("change the name", "rename"),
    ("give a new name to", "rename"),
    ("get rid of", "remove"),
    ("do away with", "remove"),
    ("clean up", "refactor"),
    ("tidy up", "refactor"),
    ("set up", "configure"),
    ("hook up", "configure"),
    ("wire up", "configure"),
    ("speed up", "optimise"),
    ("roll back", "revert"),
    ("look into", "investigate"),
    ("figure out why", "investigate"),
    ("find out why", "investigate"),
    ("turn on", "enable"),
    ("switch on", "enable"),
    ("turn off", "disable"),
    ("switch off", "disable"),
    ("write up", "document"),
    ("pull out", "refactor"),
    ("what does", "explain"),
    ("how does", "explain"),
    ("walk me through", "explain"),
    ("code review", "review"),
];

/// Single verbs (base forms) -> canonical action. Inflections are generated.
pub const VERBS: &[(&str, &str)] = &[
    ("fix", "fix"),
    ("repair", "fix"),
    ("resolve", "fix"),
    ("correct", "fix"),
    ("patch", "fix"),
    ("solve", "fix"),
    ("address", "fix"),
    ("debug", "fix"),
    ("add", "add"),
    ("create", "add"),
    ("implement", "add"),
    ("introduce", "add"),
    ("write", "add"),
    ("insert", "add"),
    ("append", "add"),
    ("define", "add"),
    ("expose", "add"),
    ("install", "add"),
    ("scaffold", "add"),
    ("generate", "add"),
    ("remove", "remove"),
    ("delete", "remove"),
    ("drop", "remove"),
    ("eliminate", "remove"),
    ("erase", "remove"),
    ("purge", "remove"),
    ("uninstall", "remove"),
    ("strip", "remove"),
    ("rename", "rename"),
    ("retitle", "rename"),
    ("move", "move"),
    ("relocate", "move"),
    ("transfer", "move"),
    ("refactor", "refactor"),
    ("restructure", "refactor"),
    ("simplify", "refactor"),
    ("reorganise", "refactor"),
    ("reorganize", "refactor"),
    ("extract", "refactor"),
    ("split", "refactor"),
    ("inline", "refactor"),
    ("dedupe", "refactor"),
    ("deduplicate", "refactor"),
    ("test", "test"),
    ("document", "document"),
    ("annotate", "document"),
    ("review", "review"),
    ("audit", "review"),
    ("inspect", "review"),
    ("explain", "explain"),
    ("describe", "explain"),
    ("summarise", "explain"),
    ("summarize", "explain"),
    ("update", "update"),
    ("upgrade", "update"),
    ("bump", "update"),
    ("change", "update"),
    ("modify", "update"),
    ("edit", "update"),
    ("adjust", "update"),
    ("increase", "update"),
    ("raise", "update"),
    ("set", "update"),
    ("tweak", "update"),
    ("alter", "update"),
    ("downgrade", "downgrade"),
    ("pin", "pin"),
    ("configure", "configure"),
    ("setup", "configure"),
    ("integrate", "configure"),
    ("enable", "enable"),
    ("activate", "enable"),
    ("disable", "disable"),
    ("deactivate", "disable"),
    ("run", "run"),
    ("execute", "run"),
    ("launch", "run"),
    ("invoke", "run"),
    ("build", "build"),
    ("compile", "build"),
    ("deploy", "deploy"),
    ("ship", "deploy"),
    ("publish", "deploy"),
    ("release", "deploy"),
    ("investigate", "investigate"),
    ("diagnose", "investigate"),
    ("find", "investigate"),
    ("search", "investigate"),
    ("locate", "investigate"),
    ("profile", "investigate"),
    ("optimise", "optimise"),
    ("optimize", "optimise"),
    ("revert", "revert"),
    ("undo", "revert"),
    ("rollback", "revert"),
    ("merge", "merge"),
    ("rebase", "rebase"),
    ("format", "format"),
    ("reformat", "format"),
    ("lint", "lint"),
    ("translate", "translate"),
    ("convert", "convert"),
    ("port", "convert"),
    ("replace", "replace"),
    ("swap", "replace"),
    ("deprecate", "deprecate"),
    ("cache", "cache"),
    ("log", "log"),
    ("validate", "validate"),
    ("check", "check"),
    ("verify", "check"),
    ("ensure", "check"),
    ("benchmark", "benchmark"),
    ("measure", "benchmark"),
    ("commit", "commit"),
    ("tag", "tag"),
    ("open", "open"),
    ("close", "close"),
    ("triage", "triage"),
    ("backport", "backport"),
    ("mock", "mock"),
    ("seed", "seed"),
    ("paginate", "paginate"),
    ("parallelise", "parallelise"),
    ("parallelize", "parallelise"),
];

/// Verbs that are also common nouns: they count as the action only as the first word of the
/// request (after polite prefixes), so "add a test" is `add`, while "test `parse`" is `test`.
pub const NOUN_VERBS: &[&str] = &[
    "test",
    "document",
    "log",
    "cache",
    "release",
    "tag",
    "commit",
    "patch",
    "benchmark",
    "build",
    "format",
    "lint",
    "profile",
    "port",
    "run",
    "setup",
    "seed",
    "mock",
    "review",
    "split",
    "change",
    "update",
    "set",
    "open",
    "close",
    "check",
    "search",
    "find",
    "merge",
    "inline",
    "strip",
    "drop",
    "install",
    "move",
    "address",
    "pin",
    "debug",
];

/// Words skipped at the start of a request before looking for the action.
pub const POLITE: &[&str] = &[
    "please", "pls", "can", "could", "would", "will", "you", "we", "i", "need", "needs", "want", "wanna", "to",
    "let's", "lets", "let", "us", "should", "must", "go", "ahead", "and", "kindly", "now", "then", "quickly", "just",
    "also", "help", "me", "try", "like", "hey", "ok", "okay", "so", "'d", "i'd", "we'd", "you'd", "it's", "time",
];

/// Nouns (singular) -> target kind. Plurals are handled by the normaliser.
pub const KINDS: &[(&str, &str)] = &[
    ("file", "file"),
    ("function", "function"),
    ("fn", "function"),
    ("func", "function"),
    ("method", "function"),
    ("helper", "function"),
    ("closure", "function"),
    ("module", "module"),
    ("submodule", "module"),
    ("test", "test"),
    ("unit test", "test"),
    ("integration test", "test"),
    ("test case", "test"),
    ("testcase", "test"),
    ("spec", "test"),
    ("dependency", "dependency"),
    ("dep", "dependency"),
    ("crate", "dependency"),
    ("package", "dependency"),
    ("library", "dependency"),
    ("lib", "dependency"),
    ("gem", "dependency"),
    ("flag", "flag"),
    ("option", "flag"),
    ("switch", "flag"),
    ("argument", "flag"),
    ("arg", "flag"),
    ("endpoint", "endpoint"),
    ("route", "endpoint"),
    ("api", "endpoint"),
    ("pr", "pr"),
    ("pull request", "pr"),
    ("merge request", "pr"),
    ("issue", "issue"),
    ("ticket", "issue"),
    ("branch", "branch"),
    ("commit", "commit"),
    ("class", "type"),
    ("struct", "type"),
    ("type", "type"),
    ("enum", "type"),
    ("trait", "interface"),
    ("interface", "interface"),
    ("protocol", "interface"),
    ("variable", "variable"),
    ("var", "variable"),
    ("constant", "variable"),
    ("const", "variable"),
    ("field", "field"),
    ("property", "field"),
    ("attribute", "field"),
    ("column", "column"),
    ("table", "table"),
    ("config", "config"),
    ("configuration", "config"),
    ("setting", "config"),
    ("env var", "env"),
    ("environment variable", "env"),
    ("migration", "migration"),
    ("docs", "docs"),
    ("documentation", "docs"),
    ("readme", "docs"),
    ("docstring", "docs"),
    ("doc comment", "docs"),
    ("comment", "docs"),
    ("changelog", "changelog"),
    ("log", "log"),
    ("logging", "log"),
    ("logger", "log"),
    ("error", "error"),
    ("exception", "error"),
    ("panic", "error"),
    ("crash", "error"),
    ("bug", "bug"),
    ("regression", "bug"),
    ("defect", "bug"),
    ("ci", "ci"),
    ("workflow", "ci"),
    ("pipeline", "ci"),
    ("github action", "ci"),
    ("script", "script"),
    ("query", "query"),
    ("component", "component"),
    ("widget", "component"),
    ("page", "component"),
    ("screen", "component"),
    ("view", "component"),
    ("benchmark", "benchmark"),
    ("bench", "benchmark"),
    ("lint", "lint"),
    ("warning", "lint"),
    ("clippy", "lint"),
    ("macro", "macro"),
    ("version", "release"),
    ("release", "release"),
    ("tag", "release"),
    ("feature", "feature"),
    ("feature flag", "feature"),
    ("dockerfile", "container"),
    ("container", "container"),
    ("image", "container"),
    ("docker image", "container"),
    ("cache", "cache"),
    ("caching", "cache"),
    ("memoization", "cache"),
    ("command", "command"),
    ("subcommand", "command"),
    ("hook", "hook"),
    ("secret", "secret"),
    ("token", "secret"),
    ("credential", "secret"),
    ("service", "service"),
    ("server", "service"),
    ("job", "job"),
    ("cron job", "job"),
    ("metric", "metric"),
    ("index", "index"),
    ("timeout", "timeout"),
    ("limit", "limit"),
    ("rate limit", "limit"),
    ("retry", "retry"),
    ("symbol", "symbol"),
    ("identifier", "symbol"),
    ("fixture", "fixture"),
    ("type annotation", "annotation"),
    ("type hint", "annotation"),
    ("import", "import"),
    ("license", "license"),
    ("translation", "translation"),
    ("event", "event"),
    ("handler", "handler"),
    ("middleware", "middleware"),
    ("model", "model"),
    ("schema", "schema"),
    ("port", "port"),
    ("directory", "directory"),
    ("folder", "directory"),
];

/// Specific kinds that a generic kind stands for: a request that names only `symbol` (a bare
/// backticked name) may reuse a plan stored for a function, type or variable, and back.
pub const GENERIC: &[(&str, &[&str])] =
    &[("symbol", &["function", "type", "variable", "field", "macro", "interface", "module"]), ("issue", &["bug"])];

/// Words ignored when comparing the wording of two tasks.
pub const STOPWORDS: &[&str] = &[
    "a", "an", "the", "to", "of", "in", "on", "for", "and", "or", "with", "that", "this", "it", "its", "is", "be",
    "so", "as", "at", "by", "from", "into", "our", "my", "your", "new", "please", "can", "you", "we", "i", "me",
    "should", "would", "could", "need", "needs", "some", "up", "there", "which", "called", "named", "inside", "under",
    "within", "also", "then", "just", "now", "all", "any", "make", "sure", "let's", "lets", "us", "will", "when",
    "where", "how",
];

/// The canonical action for a (lowercase) word, trying its inflections.
pub fn verb(word: &str) -> Option<&'static str> {
    lemma_candidates(word).into_iter().find_map(|w| VERB_INDEX.get(w.as_str()).copied())
}

/// Whether a word (any inflection) is a verb that is also a common noun.
pub fn is_noun_verb(word: &str) -> bool {
    lemma_candidates(word).into_iter().any(|w| NOUN_VERBS.contains(&w.as_str()))
}

/// The target kind for a (lowercase) noun, singular or plural.
pub fn kind(word: &str) -> Option<&'static str> {
    let mut cands = vec![word.to_string()];
    if let Some(s) = word.strip_suffix("ies") {
        cands.push(format!("{s}y"));
    }
    if let Some(s) = word.strip_suffix("es") {
        cands.push(s.to_string());
    }
    if let Some(s) = word.strip_suffix('s') {
        cands.push(s.to_string());
    }
    cands.into_iter().find_map(|w| KIND_INDEX.get(w.as_str()).copied())
}

/// `VERBS` by word (the first entry of a word wins, as a scan of the table would find it): every
/// task's words are looked up, in every lookup's candidates too.
static VERB_INDEX: LazyLock<HashMap<&'static str, &'static str>> = LazyLock::new(|| first_of(VERBS));
/// `KINDS` by noun, likewise.
static KIND_INDEX: LazyLock<HashMap<&'static str, &'static str>> = LazyLock::new(|| first_of(KINDS));

fn first_of(table: &[(&'static str, &'static str)]) -> HashMap<&'static str, &'static str> {
    let mut m = HashMap::with_capacity(table.len());
    for (k, v) in table {
        m.entry(*k).or_insert(*v);
    }
    m
}

/// The specific kinds a generic kind covers, or the generic kind a specific one belongs to.
pub fn related_kinds(kind: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    for (generic, specifics) in GENERIC {
        if *generic == kind {
            out.extend_from_slice(specifics);
        } else if specifics.contains(&kind) {
            out.push(*generic);
        }
    }
    out
}

/// Base-form candidates for an inflected word (runs -> run, fixed -> fix, renaming -> rename).
fn lemma_candidates(word: &str) -> Vec<String> {
    let mut out = vec![word.to_string()];
    let irregular = [
        ("wrote", "write"),
        ("written", "write"),
        ("ran", "run"),
        ("built", "build"),
        ("found", "find"),
        ("split", "split"),
    ];
    if let Some((_, base)) = irregular.iter().find(|(w, _)| *w == word) {
        out.push((*base).to_string());
    }
    for suffix in ["ing", "ed", "es", "s", "d"] {
        if let Some(stem) = word.strip_suffix(suffix) {
            if stem.len() < 2 {
                continue;
            }
            out.push(stem.to_string());
            out.push(format!("{stem}e"));
            let b = stem.as_bytes();
            if b.len() >= 3 && b[b.len() - 1] == b[b.len() - 2] {
                out.push(stem[..stem.len() - 1].to_string());
            }
        }
    }
    if let Some(stem) = word.strip_suffix("ied") {
        out.push(format!("{stem}y"));
    }
    if let Some(stem) = word.strip_suffix("ies") {
        out.push(format!("{stem}y"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("fixed", Some("fix"))]
    #[case("renaming", Some("rename"))]
    #[case("bumps", Some("update"))]
    #[case("dropped", Some("remove"))]
    #[case("wrote", Some("add"))]
    #[case("simplified", Some("refactor"))]
    #[case("banana", None)]
    fn verbs_are_found_through_inflections(#[case] word: &str, #[case] want: Option<&str>) {
        assert_eq!(verb(word), want);
    }

    #[rstest]
    #[case("dependencies", Some("dependency"))]
    #[case("tests", Some("test"))]
    #[case("classes", Some("type"))]
    #[case("flags", Some("flag"))]
    #[case("zebra", None)]
    fn kinds_are_found_in_plural(#[case] word: &str, #[case] want: Option<&str>) {
        assert_eq!(kind(word), want);
    }

    #[test]
    fn generic_and_specific_kinds_relate_both_ways() {
        assert!(related_kinds("symbol").contains(&"function"));
        assert_eq!(related_kinds("function"), vec!["symbol"]);
        assert!(related_kinds("file").is_empty());
    }
}
