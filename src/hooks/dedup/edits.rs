//! Random files and the edits agents and linters make to them (final newlines, trailing blank
//! lines, CRLF, bare CRs inside lines), and GNU patch as the independent judge of a diff, for the
//! property tests of read dedup. One model serves the diff's unit test (`note`) and the
//! whole-hook test in `tests/it/dedup.rs`, which includes this file by path; it is compiled only
//! for tests.

use proptest::prelude::*;
use std::ops::Range;

/// A line: words, and sometimes a bare CR, a tab or spaces inside.
pub fn line() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![4 => "[a-z]{1,9}", 1 => Just("\r".to_string()), 1 => Just("\t".to_string()), 2 => Just(" ".to_string())],
        0..9,
    )
    .prop_map(|w| w.concat())
}

/// A file of `lines` lines ending in LF or CRLF, trailing blank lines, with or without a final
/// newline.
pub fn file(lines: Range<usize>) -> impl Strategy<Value = String> {
    (prop::collection::vec((line(), prop_oneof![4 => Just("\n"), 1 => Just("\r\n")]), lines), 0..4usize, any::<bool>())
        .prop_map(|(lines, blanks, last_newline)| {
            let mut s: String = lines.into_iter().map(|(l, end)| l + end).collect();
            s.push_str(&"\n".repeat(blanks));
            if !last_newline && s.ends_with('\n') {
                s.pop();
            }
            s
        })
}

/// An edit, as an agent or a linter makes them (indexes wrap around the file's lines).
#[derive(Debug, Clone)]
pub enum Edit {
    None,
    AppendBlank(usize),
    TrimTrailingBlank,
    ToggleFinalNewline,
    LastLineCrlf,
    AllCrlf,
    AllLf,
    BareCr(usize),
    Replace(usize, String),
    Insert(usize, String),
    Delete(usize),
}

pub fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        Just(Edit::None),
        (1..4usize).prop_map(Edit::AppendBlank),
        Just(Edit::TrimTrailingBlank),
        Just(Edit::ToggleFinalNewline),
        Just(Edit::LastLineCrlf),
        Just(Edit::AllCrlf),
        Just(Edit::AllLf),
        any::<usize>().prop_map(Edit::BareCr),
        (any::<usize>(), line()).prop_map(|(i, l)| Edit::Replace(i, l)),
        (any::<usize>(), line()).prop_map(|(i, l)| Edit::Insert(i, l)),
        any::<usize>().prop_map(Edit::Delete),
    ]
}

/// Applies an edit (lines as `patch` sees them).
pub fn apply(text: &str, e: &Edit) -> String {
    let mut l: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    let n = l.len().max(1);
    match e {
        Edit::None => return text.to_string(),
        Edit::AppendBlank(k) => return format!("{text}{}", "\n".repeat(*k)),
        Edit::TrimTrailingBlank => return format!("{}\n", text.trim_end_matches(['\n', '\r'])),
        Edit::ToggleFinalNewline => {
            return match text.strip_suffix('\n') {
                Some(t) => t.to_string(),
                None => format!("{text}\n"),
            };
        }
        Edit::LastLineCrlf => {
            return match text.strip_suffix('\n') {
                Some(t) if !t.ends_with('\r') => format!("{t}\r\n"),
                _ => format!("{text}\r\n"),
            };
        }
        Edit::AllCrlf => return text.replace("\r\n", "\n").replace('\n', "\r\n"),
        Edit::AllLf => return text.replace("\r\n", "\n"),
        Edit::BareCr(i) => {
            if let Some(line) = l.get_mut(i % n) {
                let at = line.len() / 2;
                if line.is_char_boundary(at) {
                    line.insert(at, '\r');
                }
            }
        }
        Edit::Replace(i, new) => {
            if let Some(line) = l.get_mut(i % n) {
                *line = format!("{new}\n");
            }
        }
        Edit::Insert(i, new) => l.insert(i % (l.len() + 1), format!("{new}\n")),
        Edit::Delete(i) => {
            if !l.is_empty() {
                l.remove(i % l.len());
            }
        }
    }
    l.concat()
}

/// What GNU patch makes of `before` with `diff` applied: the tests' independent check that a diff
/// refrain sends rebuilds the new text byte for byte.
pub fn patched(before: &str, diff: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let (old, out, d) = (dir.path().join("old"), dir.path().join("out"), dir.path().join("d.diff"));
    std::fs::write(&old, before).unwrap();
    std::fs::write(&d, diff).unwrap();
    let run = std::process::Command::new("patch")
        .args(["--quiet", "--force", "-o"])
        .arg(&out)
        .arg(&old)
        .arg("-i")
        .arg(&d)
        .output()
        .expect("GNU patch is needed for the dedup diff tests");
    assert!(run.status.success(), "patch refused the diff:\n{diff}\n{}", String::from_utf8_lossy(&run.stdout));
    std::fs::read(&out).unwrap()
}
