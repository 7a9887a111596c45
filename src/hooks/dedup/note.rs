//! The text that stands in for a repeated read: a short note when nothing changed, or a unified
//! diff against the earlier read when only a little did. Both start with `[refrain]` so a later
//! pass never mistakes them for file content.

use super::view::{NOTE_MARK, Range, ReadKey};
use similar::TextDiff;

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
        text.lines().count()
    )
}

/// The note for a read that changed a little since: a unified diff against the earlier read, or
/// None when the diff would not be much shorter than the output itself.
pub fn changed(key: &ReadKey, message: usize, before: &str, now: &str) -> Option<String> {
    let (before, now) = (with_newline(before), with_newline(now));
    let diff = TextDiff::from_lines(&before, &now);
    let body = diff.unified_diff().context_radius(2).header("your earlier read", "now").to_string();
    if body.is_empty() || body.len() as f64 > now.len() as f64 * MAX_DIFF_SHARE {
        return None;
    }
    Some(format!(
        "{NOTE_MARK} {} changed since your read at message {message} ({} lines then, {} now). Only the changes \
         are shown, as a unified diff against that read:\n{body}",
        what(key),
        before.lines().count(),
        now.lines().count()
    ))
}

fn with_newline(s: &str) -> String {
    if s.ends_with('\n') { s.to_string() } else { format!("{s}\n") }
}

#[cfg(test)]
mod tests {
    use super::super::view::Via;
    use super::*;

    fn key() -> ReadKey {
        ReadKey { via: Via::ReadTool, path: "/p/src/lib.rs".into(), range: Range::Lines(10, 40) }
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
}
