//! Text bound for a terminal: what a file, a transcript or a stored record holds is printed with
//! its control characters written out (`\x1b`, `\r`, `\u{9b}`), so a path or a task cannot clear
//! the screen, recolour the output, set the window title or write the clipboard (OSC 52).
//!
//! Every text output of the CLI passes stored or history text through here; JSON printed to
//! stdout passes through `json` (serde_json leaves DEL and C1 raw); HTML has escaping of its own.

use std::borrow::Cow;
use std::fmt::Write;

/// One value on a line (a path, a task, a key): every control character escaped, line breaks
/// included, tabs kept.
pub fn field(s: &str) -> Cow<'_, str> {
    escape(s, Style::Field)
}

/// A block of lines: like `field`, but `\n` stays a line break.
pub fn text(s: &str) -> Cow<'_, str> {
    escape(s, Style::Text)
}

/// JSON as serde_json writes it, which escapes C0 controls but leaves DEL, C1 controls and
/// bidirectional overrides raw: those become `\u` escapes, so the JSON reads the same.
pub fn json(s: &str) -> Cow<'_, str> {
    escape(s, Style::Json)
}

#[derive(Clone, Copy, PartialEq)]
enum Style {
    Field,
    Text,
    Json,
}

/// Escapes C0 controls but tab (and `\n` unless a field), DEL, C1 controls and the
/// bidirectional overrides that reorder what a terminal shows.
fn escape(s: &str, style: Style) -> Cow<'_, str> {
    let unsafe_char = |c: char| match c {
        '\t' => false,
        '\n' => style == Style::Field,
        c => c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'),
    };
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if !unsafe_char(c) {
            o.push(c);
            continue;
        }
        let _ = match c {
            c if style == Style::Json => write!(o, "\\u{:04x}", c as u32),
            '\n' => write!(o, "\\n"),
            '\r' => write!(o, "\\r"),
            c if (c as u32) < 0x80 => write!(o, "\\x{:02x}", c as u32),
            c => write!(o, "\\u{{{:x}}}", c as u32),
        };
    }
    Cow::Owned(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::clear_screen("a\u{1b}[2Jb", "a\\x1b[2Jb")]
    #[case::osc52_clipboard("\u{1b}]52;c;Y3VybA==\u{7}x", "\\x1b]52;c;Y3VybA==\\x07x")]
    #[case::colour("\u{1b}[31mred\u{1b}[0m", "\\x1b[31mred\\x1b[0m")]
    #[case::c1_csi("\u{9b}2J", "\\u{9b}2J")]
    #[case::del_and_cr("a\u{7f}\rb", "a\\x7f\\rb")]
    #[case::bidi_override("x\u{202e}cod.exe", "x\\u{202e}cod.exe")]
    #[case::newline_in_a_field("one\ntwo", "one\\ntwo")]
    #[case::tab_kept("a\tb", "a\tb")]
    #[case::plain_unicode("src/été/日本.rs", "src/été/日本.rs")]
    fn fields_print_no_control_character(#[case] raw: &str, #[case] shown: &str) {
        assert_eq!(field(raw), shown);
        assert!(!field(raw).chars().any(|c| c.is_control() && c != '\t'));
    }

    #[test]
    fn text_keeps_its_lines_and_borrows_clean_input() {
        assert_eq!(text("a\n\u{1b}[2J\n"), "a\n\\x1b[2J\n");
        assert!(matches!(field("clean/path.rs"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_stays_the_same_json() {
        let v = serde_json::json!({"task": "a\u{1b}[2J\u{9b}2J\u{7f}\u{202e}b\nc"});
        let out = json(&serde_json::to_string_pretty(&v).unwrap()).into_owned();
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out}");
        assert!(!out.contains('\u{202e}'));
        assert_eq!(serde_json::from_str::<serde_json::Value>(&out).unwrap(), v);
    }
}
