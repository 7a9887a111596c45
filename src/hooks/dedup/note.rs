//! The text that stands in for a repeated read: a short note when nothing changed, or a unified
//! diff against the earlier read when only a little did. Both start with `[refrain]` so a later
//! pass never mistakes them for file content.

use super::view::{NOTE_MARK, Range, ReadKey};
use similar::DiffTag;

/// A diff is sent only when it is at most this share of the full output.
const MAX_DIFF_SHARE: f64 = 0.5;

/// How the read is named in a note: the path, and the part read when not the whole file.
fn what(key: &ReadKey) -> String {
    let part = match &key.range {
        Range::Whole => String::new(),
        Range::Window(o, l) => match (o, l) {
            (Some(o), Some(l)) => format!(" (offset {o}, limit {l})"),
            (Some(o), None) => format!(" (from offset {o})"),
            (None, Some(l)) => format!(" (first {l} lines)"),
            (None, None) => String::new(),
        },
        Range::Head(n) => format!(" (first {n} lines)"),
        Range::Tail(n) => format!(" (last {n} lines)"),
        Range::Lines(a, 0) => format!(" (from line {a})"),
        Range::Lines(a, b) => format!(" (lines {a}-{b})"),
    };
    format!("{}{part}", key.path)
}

/// The note for an unchanged read.
pub fn unchanged(key: &ReadKey, message: usize, text: &str) -> String {
    format!(
        "{NOTE_MARK} {} is unchanged since your read at message {message}; {} lines. That output is still in your \
         context above, so it is not repeated here.",
        what(key),
        lines(text).len()
    )
}

/// The note for a read that changed a little since: a unified diff against the earlier read, or
/// None when the diff would not be much shorter than the output itself, or cannot be exact.
pub fn changed(key: &ReadKey, message: usize, before: &str, now: &str) -> Option<String> {
    let body = diff(before, now)?;
    if body.len() as f64 > now.len() as f64 * MAX_DIFF_SHARE {
        return None;
    }
    Some(format!(
        "{NOTE_MARK} {} changed since your read at message {message} ({} lines then, {} now). Only the changes \
         are shown, as a unified diff against that read:\n{body}",
        what(key),
        lines(before).len(),
        lines(now).len()
    ))
}

/// The lines of a text as `patch` takes them: each ends after its `\n` (a CR, bare or before the
/// `\n`, stays part of its line), the last one without `\n` when the text does not end in one.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// A unified diff that rebuilds `now` from `before` byte for byte (`patch` applies it): lines
/// split at `\n` only, every byte of a line kept, a last line without `\n` marked
/// `\ No newline at end of file`. None when the texts are equal or hold a NUL (`patch` takes such
/// a file for binary and will not apply a text diff to it).
pub fn diff(before: &str, now: &str) -> Option<String> {
    if before == now || before.contains('\0') || now.contains('\0') {
        return None;
    }
    let (old, new) = (lines(before), lines(now));
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new);
    let mut out = String::from("--- your earlier read\n+++ now\n");
    for hunk in similar::group_diff_ops(ops, CONTEXT) {
        // Each side of the hunk starts where its first op does and holds all the ops' lines
        // (similar can give an op that holds no line of a side an index past the hunk's start).
        let side = |r: fn(&similar::DiffOp) -> std::ops::Range<usize>| {
            let start = hunk.iter().map(|op| r(op).start).min().unwrap_or(0);
            (start, hunk.iter().map(|op| r(op).len()).sum::<usize>())
        };
        out.push_str(&format!("@@ -{} +{} @@\n", span(side(|op| op.old_range())), span(side(|op| op.new_range()))));
        for op in &hunk {
            let (tag, o, n) = op.as_tag_tuple();
            let (gone, came) = match tag {
                DiffTag::Equal => {
                    o.clone().for_each(|i| push_line(&mut out, ' ', old[i]));
                    continue;
                }
                DiffTag::Delete => (o, 0..0),
                DiffTag::Insert => (0..0, n),
                DiffTag::Replace => (o, n),
            };
            gone.for_each(|i| push_line(&mut out, '-', old[i]));
            came.for_each(|i| push_line(&mut out, '+', new[i]));
        }
    }
    Some(out)
}

/// Lines of context around each change.
const CONTEXT: usize = 2;

/// A hunk's `start,count`: 1-based, or the line before when the hunk holds none of that side.
fn span((start, len): (usize, usize)) -> String {
    match len {
        0 => format!("{start},0"),
        n => format!("{},{n}", start + 1),
    }
}

fn push_line(out: &mut String, sign: char, line: &str) {
    out.push(sign);
    out.push_str(line);
    if !line.ends_with('\n') {
        out.push_str("\n\\ No newline at end of file\n");
    }
}

#[cfg(test)]
mod tests {
    use super::super::edits::{apply, edit, file, patched};
    use super::super::view::Via;
    use super::*;
    use proptest::prelude::*;

    fn key() -> ReadKey {
        ReadKey { via: Via::ReadTool, path: "/p/src/lib.rs".into(), range: Range::Lines(10, 40) }
    }

    fn guide() -> String {
        (1..=30).map(|i| format!("line {i} of the guide, long enough to be worth a note\n")).collect()
    }

    #[test]
    fn an_unchanged_read_names_the_message_and_the_lines() {
        let note = unchanged(&key(), 7, "a\nb\nc");
        assert!(
            note.starts_with(
                "[refrain] /p/src/lib.rs (lines 10-40) is unchanged since your read at message 7; 3 lines"
            )
        );
    }

    #[test]
    fn a_small_change_is_a_diff_and_a_big_one_is_nothing() {
        let before: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let now = before.replace("line 20\n", "line twenty\n");
        let note = changed(&key(), 3, &before, &now).unwrap();
        assert!(note.contains("-line 20\n+line twenty\n"), "{note}");
        assert!(!note.contains("line 5\n"), "only the context around the change is shown: {note}");
        let rewritten: String = (1..=40).map(|i| format!("other {i}\n")).collect();
        assert_eq!(changed(&key(), 3, &before, &rewritten), None);
    }

    /// Each change at the end of a file that was once called "unchanged" (the comparison trimmed
    /// trailing newlines), and a bare CR that once split a line and shifted every later hunk:
    /// a diff that GNU patch applies to the earlier text to give the new one exactly.
    #[test]
    fn changes_at_the_end_and_carriage_returns_are_exact_diffs() {
        let g = guide();
        let cr = g.replace("line 3 of", "line 3\rof");
        let cases = [
            ("three blank lines appended", g.clone(), format!("{g}\n\n\n")),
            ("a missing final newline fixed", g.trim_end().to_string(), g.clone()),
            ("the final newline removed", g.clone(), g.trim_end().to_string()),
            ("trailing blank lines removed", format!("{g}\n\n"), g.clone()),
            ("the last line's LF turned CRLF", g.clone(), format!("{}\r\n", g.trim_end())),
            ("every LF turned CRLF", g.clone(), g.replace('\n', "\r\n")),
            ("a bare CR inside a line, then a later edit", cr.clone(), cr.replace("line 20 of", "line twenty of")),
            ("a bare CR added inside a line", g.clone(), cr.clone()),
            ("a last line ending in a bare CR", g.trim_end().to_string(), format!("{}\r", g.trim_end())),
        ];
        for (what, before, now) in cases {
            let body = diff(&before, &now).unwrap_or_else(|| panic!("{what}: no diff"));
            assert_eq!(patched(&before, &body), now.as_bytes(), "{what}:\n{body}");
            // A change to every line is no small change: the read is shown in full.
            let note = changed(&key(), 3, &before, &now);
            assert_eq!(note.is_some(), what != "every LF turned CRLF", "{what}: {note:?}");
        }
    }

    #[test]
    fn hunks_after_a_bare_cr_are_numbered_as_patch_counts_lines() {
        let before: String =
            (1..=40).map(|i| format!("line {i}\n")).collect::<String>().replace("line 2\n", "li\rne 2\n");
        let now = before.replace("line 30\n", "line thirty\n");
        let body = diff(&before, &now).unwrap();
        assert!(body.contains("@@ -28,5 +28,5 @@"), "{body}");
    }

    #[test]
    fn a_text_with_a_nul_gets_no_diff() {
        assert_eq!(diff("a\0b\n", "a\0c\n"), None, "patch takes it for binary");
        assert_eq!(diff("same\n", "same\n"), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Every diff refrain builds rebuilds the new text with GNU patch, byte for byte, through
        /// any sequence of edits (whitespace and line endings included).
        #[test]
        fn every_diff_rebuilds_the_new_text_with_patch(start in file(0..30), edits in prop::collection::vec(edit(), 1..5)) {
            let mut before = start;
            for e in &edits {
                let now = apply(&before, e);
                match diff(&before, &now) {
                    Some(body) => prop_assert_eq!(patched(&before, &body), now.as_bytes().to_vec(), "{}", body),
                    None => prop_assert_eq!(&before, &now),
                }
                before = now;
            }
        }
    }
}
