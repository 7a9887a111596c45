//! Repeated reads: the same file (same range) read again in the same context window, the tool
//! returning byte for byte the text it returned before. Such a read only repeats what the context
//! already holds; refrain's read dedup answers exactly these with a short note, by the same rule:
//! the text, not the file's history, decides. So a file another process or a subagent changed in
//! between, or a log that grew, is no repeat, and a shell command or a write to another file in
//! between does not hide one. A compaction starts a new context window.

use std::collections::HashMap;

/// What one read asked for: the file and the range.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReadKey {
    /// The file (absolute when the agent gave it so, else as written).
    pub path: String,
    /// Range asked for (`offset:limit`, a sed range...), empty for the whole file.
    pub range: String,
}

/// A read that repeated an earlier one.
#[derive(Debug, Clone, PartialEq)]
pub struct Repeat {
    /// The file.
    pub path: String,
    /// Tokens of the repeated result.
    pub tokens: u64,
}

/// Tracks the reads of one context window.
#[derive(Debug, Default)]
pub struct Tracker {
    /// Reads seen in this window: the hash of the text each returned last.
    seen: HashMap<ReadKey, [u8; 16]>,
    /// Calls whose result has not arrived yet: call id -> what it reads.
    pending: HashMap<String, ReadKey>,
}

impl Tracker {
    /// A read call was made; its result comes later under `call_id`.
    pub fn call(&mut self, call_id: &str, key: ReadKey) {
        if self.pending.len() > 10_000 {
            self.pending.clear();
        }
        self.pending.insert(call_id.to_string(), key);
    }

    /// A call's result arrived, with the text the tool returned; returns the repeat when that
    /// text is byte for byte what the same read returned before in this window.
    pub fn result(&mut self, call_id: &str, text: &str, tokens: u64, is_error: bool) -> Option<Repeat> {
        let key = self.pending.remove(call_id)?;
        if is_error {
            return None;
        }
        let hash = digest(text);
        let repeat = (self.seen.get(&key) == Some(&hash)).then(|| Repeat { path: key.path.clone(), tokens });
        self.seen.insert(key, hash);
        repeat
    }

    /// A compaction: the context window starts empty.
    pub fn reset(&mut self) {
        self.seen.clear();
        self.pending.clear();
    }
}

fn digest(text: &str) -> [u8; 16] {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(text.as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&d[..16]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(p: &str) -> ReadKey {
        ReadKey { path: p.into(), range: String::new() }
    }

    #[test]
    fn only_a_byte_identical_text_in_the_same_window_repeats() {
        let mut t = Tracker::default();
        t.call("1", key("/p/a.rs"));
        assert_eq!(t.result("1", "fn a() {}\n", 100, false), None);
        t.call("2", key("/p/a.rs"));
        assert_eq!(t.result("2", "fn a() {}\n", 100, false), Some(Repeat { path: "/p/a.rs".into(), tokens: 100 }));
        t.call("3", key("/p/a.rs"));
        assert_eq!(t.result("3", "fn a() {}\n\n", 100, false), None, "a trailing blank line is a change");
        t.call("4", key("/p/log.txt"));
        assert_eq!(t.result("4", "line 1\n", 10, false), None);
        t.call("5", key("/p/log.txt"));
        assert_eq!(t.result("5", "line 1\nline 2\n", 10, false), None, "a growing log is no repeat");
        t.call("6", key("/p/a.rs"));
        assert!(t.result("6", "fn a() {}\n\n", 100, false).is_some(), "whatever ran in between");
        t.reset();
        t.call("7", key("/p/a.rs"));
        assert_eq!(t.result("7", "fn a() {}\n\n", 100, false), None, "new context window");
        t.call("8", ReadKey { path: "/p/a.rs".into(), range: "1:50".into() });
        assert_eq!(t.result("8", "fn a() {}\n\n", 50, false), None, "another range is another read");
        t.call("9", key("/p/a.rs"));
        assert_eq!(t.result("9", "fn a() {}\n\n", 1, true), None, "errors are not reads");
    }
}
