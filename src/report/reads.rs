//! Repeated reads: the same file (same range) read again in the same context window with no
//! write to it in between. Such a read only repeats what the context already holds; refrain's
//! result cache (and read dedup) would have answered it with a short note.
//!
//! A write is any edit tool on the path, or a shell command that may write it (the hooks'
//! conservative rules: an unknown command counts as a write to the whole working directory).
//! A compaction starts a new context window.

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
    /// Reads seen in this window, with the write generation they were made at.
    seen: HashMap<ReadKey, u64>,
    /// Calls whose result has not arrived yet: call id -> what it reads.
    pending: HashMap<String, ReadKey>,
    /// Last write generation per path.
    writes: HashMap<String, u64>,
    /// Bumped on every write; a write to a directory (unknown shell command) bumps `tree_gen`.
    generation: u64,
    tree_writes: Vec<(String, u64)>,
}

impl Tracker {
    /// A read call was made; its result comes later under `call_id`.
    pub fn call(&mut self, call_id: &str, key: ReadKey) {
        if self.pending.len() > 10_000 {
            self.pending.clear();
        }
        self.pending.insert(call_id.to_string(), key);
    }

    /// A call's result arrived; returns the repeat when this read repeated an unchanged one.
    pub fn result(&mut self, call_id: &str, tokens: u64, is_error: bool) -> Option<Repeat> {
        let key = self.pending.remove(call_id)?;
        if is_error {
            return None;
        }
        let changed_at = self.last_change(&key.path);
        let repeat = match self.seen.get(&key) {
            Some(&at) if changed_at <= at => Some(Repeat { path: key.path.clone(), tokens }),
            _ => None,
        };
        self.seen.insert(key, self.generation);
        repeat
    }

    /// A write to these paths; `recursive` for a directory whose whole tree may have changed.
    pub fn write(&mut self, paths: &[String], recursive: bool) {
        self.generation += 1;
        for p in paths {
            if recursive {
                self.tree_writes.retain(|(t, _)| !t.starts_with(p.as_str()));
                self.tree_writes.push((p.clone(), self.generation));
            } else {
                self.writes.insert(p.clone(), self.generation);
            }
        }
    }

    /// A compaction: the context window starts empty.
    pub fn reset(&mut self) {
        self.seen.clear();
        self.pending.clear();
    }

    fn last_change(&self, path: &str) -> u64 {
        let direct = self.writes.get(path).copied().unwrap_or(0);
        let tree = self
            .tree_writes
            .iter()
            .filter(|(t, _)| t.is_empty() || path.starts_with(t.as_str()) || !path.starts_with('/'))
            .map(|(_, g)| *g)
            .max()
            .unwrap_or(0);
        direct.max(tree)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(p: &str) -> ReadKey {
        ReadKey { path: p.into(), range: String::new() }
    }

    #[test]
    fn a_second_unchanged_read_repeats_and_a_write_or_compaction_resets() {
        let mut t = Tracker::default();
        t.call("1", key("/p/a.rs"));
        assert_eq!(t.result("1", 100, false), None);
        t.call("2", key("/p/a.rs"));
        assert_eq!(t.result("2", 100, false), Some(Repeat { path: "/p/a.rs".into(), tokens: 100 }));
        t.write(&["/p/a.rs".into()], false);
        t.call("3", key("/p/a.rs"));
        assert_eq!(t.result("3", 100, false), None, "changed in between");
        t.call("4", key("/p/a.rs"));
        assert!(t.result("4", 100, false).is_some());
        t.write(&["/p".into()], true);
        t.call("5", key("/p/a.rs"));
        assert_eq!(t.result("5", 100, false), None, "a shell command may have changed the tree");
        t.reset();
        t.call("6", key("/p/a.rs"));
        assert_eq!(t.result("6", 100, false), None, "new context window");
        t.call("7", ReadKey { path: "/p/a.rs".into(), range: "1:50".into() });
        assert_eq!(t.result("7", 50, false), None, "another range is another read");
        t.call("8", key("/p/a.rs"));
        assert_eq!(t.result("8", 1, true), None, "errors are not reads");
    }
}
