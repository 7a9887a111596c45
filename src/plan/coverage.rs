//! The value-coverage gate, before any model: every value of the new task must fill a slot or
//! equal a fixed value of the stored task, every fixed value of the stored task must be in the
//! new task, and a number must count the same thing ("100 MB" is not "30 days"). Otherwise the
//! plan cannot be for this task, and the gate says which value is why.
//!
//! Also the one word-level veto: a task that says the opposite of the stored one ("remove" for
//! "add", "without" for "with") is never its paraphrase.

use super::align::{Alignment, NewTask, Source};
use super::head::{Head, class};
use super::lexicon;
use super::mask::whole_word;
use super::params::ParamKind;

/// Words that never mean the same as their partner. Both directions are checked.
const OPPOSITES: &[(&str, &str)] = &[
    ("add", "remove"),
    ("add", "delete"),
    ("add", "drop"),
    ("create", "delete"),
    ("create", "remove"),
    ("insert", "delete"),
    ("install", "uninstall"),
    ("enable", "disable"),
    ("upgrade", "downgrade"),
    ("increase", "decrease"),
    ("raise", "lower"),
    ("encrypt", "decrypt"),
    ("encode", "decode"),
    ("compress", "decompress"),
    ("zip", "unzip"),
    ("serialize", "deserialize"),
    ("import", "export"),
    ("push", "pull"),
    ("upload", "download"),
    ("show", "hide"),
    ("lock", "unlock"),
    ("mount", "unmount"),
    ("start", "stop"),
    ("open", "close"),
    ("include", "exclude"),
    ("allow", "deny"),
    ("allow", "block"),
    ("accept", "reject"),
    ("keep", "discard"),
    ("keep", "delete"),
    ("with", "without"),
    ("larger", "smaller"),
    ("bigger", "smaller"),
    ("more", "less"),
    ("more", "fewer"),
    ("older", "newer"),
    ("before", "after"),
    ("first", "last"),
    ("ascending", "descending"),
    ("min", "max"),
    ("minimum", "maximum"),
    ("uppercase", "lowercase"),
    ("public", "private"),
    ("sync", "async"),
    ("synchronous", "asynchronous"),
    ("inclusive", "exclusive"),
    ("success", "failure"),
    ("valid", "invalid"),
    ("visible", "hidden"),
    ("head", "tail"),
    ("prepend", "append"),
    ("merge", "split"),
    ("staged", "unstaged"),
    // Modifiers that change the command ("case-sensitively" is not "ignoring case", "skipping
    // hidden files" is not "including hidden files").
    ("sensitive", "insensitive"),
    ("case-sensitive", "case-insensitive"),
    ("case-sensitive", "ignore"),
    ("include", "skip"),
    ("include", "ignore"),
    ("keep", "remove"),
    ("recursive", "non-recursive"),
    // Qualifiers of one kind ("where a is 1 or b is 2" is not "... and b is 2").
    ("and", "or"),
    ("oldest", "newest"),
    ("older", "newer"),
    ("largest", "smallest"),
    ("larger", "smaller"),
    ("more", "less"),
    ("more", "fewer"),
    ("before", "after"),
    ("above", "below"),
    ("top", "bottom"),
    ("leading", "trailing"),
    ("uppercase", "lowercase"),
    ("minimum", "maximum"),
    ("odd", "even"),
    ("tcp", "udp"),
    ("ipv4", "ipv6"),
    ("local", "remote"),
    ("local", "global"),
];

/// Ordinals: a task about the third line is not about the first.
const ORDINALS: &[&str] =
    &["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "last"];

/// A gate that failed: its name and a sentence saying which value is why.
pub type Failure = (&'static str, String);

/// Checks the values of an aligned candidate.
pub fn check(head: &Head, new: &NewTask, a: &Alignment) -> Result<(), Failure> {
    check_placed(head, new, a, &[])
}

/// `check`, where `placed` are stored words the agent gave the plan values for besides its slots
/// when it took it (`(stored word, value)`): the values count as filled, the words as replaced.
pub fn check_placed(head: &Head, new: &NewTask, a: &Alignment, placed: &[(String, String)]) -> Result<(), Failure> {
    if let Some((p, other)) = head.programs.iter().find_map(|p| other_program(head, new, p).map(|o| (p, o))) {
        return Err(("program", format!("the plan runs `{p}`, which the stored task names; this one says `{other}`")));
    }
    let filled: Vec<String> = a
        .sources
        .iter()
        .filter_map(|s| match s {
            Some(Source::Task(t)) => Some(new.value_of(*t)),
            Some(Source::Context(v) | Source::Stored(v)) => v.as_str().map(str::to_string),
            _ => None,
        })
        .chain(placed.iter().map(|(_, v)| v.clone()))
        .collect();
    if let Some(why) = other_format(head, new, a) {
        return Err(("coverage", why));
    }
    let used = a.used_tokens();
    for t in new.value_tokens() {
        let v = new.value_of(t);
        let known = |x: &String| x.eq_ignore_ascii_case(&v);
        if !used.contains(&t) && !filled.iter().any(known) && !head.constants.iter().any(known) {
            return Err((
                "coverage",
                format!("`{v}` in the task fills no slot of this plan and is not one of its fixed values"),
            ));
        }
    }
    let lower = new.text.to_lowercase();
    for c in head.constants.iter().filter(|c| !placed.iter().any(|(w, _)| w.eq_ignore_ascii_case(c))) {
        let cl = c.to_lowercase();
        let said = lower.match_indices(&cl).any(|(i, _)| whole_word(&lower, i, i + cl.len()));
        if !said {
            return Err(("coverage", format!("the plan is for `{c}`, which the task does not mention")));
        }
    }
    units(head, new, a)
}

/// Extensions that decide which program reads a file (`gzip -d` for `.gz`, `unzstd` for `.zst`).
const FORMATS: &[&str] = &["gz", "bz2", "xz", "zst", "zip", "tar", "tgz", "7z", "lz4", "rar"];

/// The archive or compression format a path ends in, lowercase.
fn format_of(path: &str) -> Option<String> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    FORMATS.contains(&ext.as_str()).then_some(ext)
}

/// A path slot whose stored value was one archive or compression format and whose new value is
/// another (or none): the plan's program would not read it.
fn other_format(head: &Head, new: &NewTask, a: &Alignment) -> Option<String> {
    head.slots.iter().zip(&a.sources).find_map(|(slot, src)| {
        let Some(Source::Task(t)) = src else { return None };
        let stored = format_of(slot.example.as_deref()?)?;
        let value = new.value_of(*t);
        (format_of(&value).as_deref() != Some(stored.as_str()))
            .then(|| format!("the plan is for .{stored} files; `{value}` is not one"))
    })
}

/// A number slot's unit (the word after it) must be the task's unit too.
fn units(head: &Head, new: &NewTask, a: &Alignment) -> Result<(), Failure> {
    for (slot, src) in head.slots.iter().zip(&a.sources) {
        let (Some(at), Some(Source::Task(t))) = (slot.at, src) else { continue };
        if class(slot.kind) != class(ParamKind::Number) {
            continue;
        }
        let stored = head.words.get(at + 1).filter(|w| is_unit(w));
        let given = new.tokens.get(t + 1).filter(|n| !n.after_break).map(|n| &n.lower).filter(|w| is_unit(w));
        if let (Some(s), Some(g)) = (stored, given)
            && singular(s) != singular(g)
        {
            return Err((
                "coverage",
                format!("the task's `{}` counts {g}, the plan's {} counts {s}", new.value_of(*t), slot.name),
            ));
        }
    }
    Ok(())
}

fn is_unit(w: &str) -> bool {
    !w.starts_with('<') && w.chars().all(char::is_alphabetic) && !lexicon::STOPWORDS.contains(&w)
}

fn singular(w: &str) -> &str {
    w.strip_suffix('s').filter(|s| s.len() >= 2).unwrap_or(w)
}

/// The pair of opposite words that sets the two tasks apart, if any: one says `a` and not `b`,
/// the other `b` and not `a`.
pub fn opposite(stored: &[String], new: &NewTask) -> Option<(&'static str, &'static str)> {
    let new_words: Vec<&str> = new.tokens.iter().map(|t| t.lower.as_str()).collect();
    let stored_words: Vec<&str> = stored.iter().map(String::as_str).collect();
    let has = |words: &[&str], w: &str| words.iter().any(|x| lemma_is(x, w));
    for (a, b) in OPPOSITES {
        let (sa, sb) = (has(&stored_words, a), has(&stored_words, b));
        let (na, nb) = (has(&new_words, a), has(&new_words, b));
        if sa && !sb && nb && !na {
            return Some((a, b));
        }
        if sb && !sa && na && !nb {
            return Some((b, a));
        }
    }
    // Ordinals: both tasks say some, and not the same ones ("every third line from the first"
    // is not "every third line from the third").
    let ordinals =
        |words: &[&str]| -> Vec<&'static str> { ORDINALS.iter().copied().filter(|o| words.contains(o)).collect() };
    let (so, no) = (ordinals(&stored_words), ordinals(&new_words));
    if so.is_empty() || no.is_empty() || so == no {
        return None;
    }
    let only = |a: &[&'static str], b: &[&'static str]| a.iter().copied().find(|o| !b.contains(o));
    match (only(&so, &no), only(&no, &so)) {
        (Some(a), Some(b)) => Some((a, b)),
        (Some(a), None) => Some((a, no[0])),
        (None, Some(b)) => Some((so[0], b)),
        (None, None) => None,
    }
}

/// The word the new task says where the stored task named `program` (same neighbour on one
/// side, a word the stored task does not have): "with yarn" for "with pnpm". None when the new
/// task names the program too or names nothing in its place.
fn other_program(head: &Head, new: &NewTask, program: &str) -> Option<String> {
    if new.tokens.iter().any(|t| t.value.is_none() && t.lower == program) {
        return None;
    }
    let at = head.words.iter().position(|w| w == program)?;
    let word = |i: Option<usize>| i.and_then(|i| head.words.get(i)).map(String::as_str);
    let (before, after) = (word(at.checked_sub(1)), word(Some(at + 1)));
    new.tokens.iter().enumerate().find_map(|(i, t)| {
        let fresh = t.value.is_none() && super::names::plain(t) && !head.words.contains(&t.lower);
        let prev = i.checked_sub(1).map(|j| new.tokens[j].lower.as_str());
        let next = new.tokens.get(i + 1).map(|n| n.lower.as_str());
        (fresh && ((before.is_some() && prev == before) || (after.is_some() && next == after))).then(|| t.text.clone())
    })
}

/// Whether `word` is an inflection of `base` ("removed", "removing" -> "remove").
fn lemma_is(word: &str, base: &str) -> bool {
    if word == base {
        return true;
    }
    let Some(rest) = word.strip_prefix(base.trim_end_matches('e')) else { return false };
    matches!(rest, "e" | "es" | "ed" | "ing" | "s" | "d" | "ly" | "ely")
        || (base.ends_with(|c: char| !"aeiou".contains(c))
            && rest.len() > 1
            && rest.starts_with(base.chars().last().unwrap_or(' '))
            && matches!(&rest[1..], "ed" | "ing"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::align::align;
    use crate::plan::key::IntentKey;
    use crate::plan::template::*;
    use serde_json::{Map, json};

    fn head(task: &str, slots: serde_json::Value) -> Head {
        head_of(task, json!({"steps": [{"tool": "Bash", "inputs": "x"}], "slots": slots}))
    }

    fn head_of(task: &str, template: serde_json::Value) -> Head {
        let template: PlanTemplate = serde_json::from_value(template).unwrap();
        Head::of(&StoredPlan::for_test(task, IntentKey::new("a", "b"), template), None)
    }

    fn gate(h: &Head, task: &str) -> Result<(), String> {
        let new = NewTask::new(task);
        if let Some((a, b)) = opposite(&h.words, &new) {
            return Err(format!("opposite {a}/{b}"));
        }
        check(h, &new, &align(h, &new, &Map::new())).map_err(|e| e.1)
    }

    #[test]
    fn a_literal_plan_is_not_for_other_values() {
        let h = head("find all .txt files in the current directory", json!([]));
        assert_eq!(gate(&h, "find all .txt files here"), Ok(()));
        let err = gate(&h, "find all .py files in the current directory").unwrap_err();
        assert!(err.contains("`.py`"), "{err}");
    }

    #[test]
    fn numbers_keep_their_units() {
        let h = head(
            "find files modified more than 30 days ago",
            json!([{"name": "n", "type": "number", "example": "30"}]),
        );
        assert_eq!(gate(&h, "find files modified more than 7 days ago"), Ok(()));
        let err = gate(&h, "find files larger than 100 MB").unwrap_err();
        assert!(err.contains("MB") || err.contains("mb"), "{err}");
    }

    #[test]
    fn opposites_are_never_paraphrases() {
        let h = head(
            "add a `--verbose` flag to src/main.rs",
            json!([{"name": "f", "type": "flag"}, {"name": "p", "type": "path"}]),
        );
        assert!(gate(&h, "removing the `--quiet` flag from src/cli.rs").unwrap_err().contains("add/remove"));
        assert_eq!(gate(&h, "please add the --quiet option in src/cli.rs"), Ok(()));
        let h = head("commit the staged changes with a message", json!([]));
        assert!(gate(&h, "commit the staged changes without a message").is_err());
    }

    #[test]
    fn modifiers_that_change_the_command_are_never_paraphrases() {
        let h = head("Search for TODO case-sensitively in src", json!([]));
        assert!(gate(&h, "Search for TODO in src, ignoring case").is_err());
        let h = head("List files in the directory, skipping hidden ones", json!([]));
        assert!(gate(&h, "List files in the directory, including hidden ones").is_err());
        let h = head("Print the file starting from the third line", json!([]));
        assert!(gate(&h, "Print the file starting from the first line").unwrap_err().contains("third/first"));
        // The same modifier in other words is still a paraphrase.
        assert_eq!(gate(&h, "show the file from its third line on"), Ok(()));
        let h = head("List files in the directory, ignoring case", json!([]));
        assert_eq!(gate(&h, "List files in the directory, ignore the case"), Ok(()));
        // Two ordinals in one task: the other task must say the same two.
        let h = head("Print every third line of list.txt, starting from the first line", json!([]));
        assert!(gate(&h, "Print every third line of list.txt, starting from the third line").is_err());
        assert_eq!(gate(&h, "starting at the first line, print every third line of list.txt"), Ok(()));
        // A qualifier swapped for another of its kind.
        let h = head("Print the objects in products.json where key1 is value1 and key2 is value2", json!([]));
        assert!(
            gate(&h, "Print the objects in products.json where key1 is value1 or key2 is value2")
                .unwrap_err()
                .contains("and/or")
        );
    }

    #[test]
    fn a_file_of_another_archive_format_is_not_for_the_plan() {
        let h = head("Decompress db.dump.zst", json!([{"name": "archive", "type": "path"}]));
        assert_eq!(gate(&h, "Decompress events.json.zst"), Ok(()));
        assert!(gate(&h, "Decompress corpus.txt.bz2").unwrap_err().contains(".zst"));
        let h = head("Compress report.csv", json!([{"name": "file", "type": "path"}]));
        assert_eq!(gate(&h, "Compress notes.txt"), Ok(()), "a plain file of another type is still a file");
    }

    #[test]
    fn a_program_the_stored_task_names_must_be_named_again() {
        let h = head_of(
            "Install turbo globally with pnpm",
            json!({
                "steps": [{"tool": "Bash", "inputs": {"command": "pnpm add {{params.p}} -g"}}],
                "slots": [{"name": "p", "type": "string"}]}),
        );
        assert_eq!(h.programs, vec!["pnpm".to_string()]);
        assert_eq!(gate(&h, "Install turbo globally with pnpm"), Ok(()));
        assert_eq!(gate(&h, "Install turbo globally"), Ok(()), "naming no program is no other program");
        let err = gate(&h, "Install turbo globally with yarn").unwrap_err();
        assert!(err.contains("`pnpm`"), "{err}");
    }
}
