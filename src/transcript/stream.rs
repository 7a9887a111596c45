//! Reading a transcript line by line: the format is decided by the first line a reader
//! understands, and the transcript read so far can be looked at (and its old parts freed) at any
//! point, so a caller streams a large history without holding any file whole.

use super::{Messages, Transcript, claude, codex};
use serde_json::Value;

/// A transcript read line by line: feed it lines (a Claude Code transcript or a Codex rollout,
/// told apart by the first line either reader understands) and look at what was read so far at
/// any point. Memory holds the conversation, never the file's lines.
pub struct Stream {
    reader: Option<Reader>,
    /// Lines seen (blank lines excluded).
    pub lines: usize,
    /// Lines that were not JSON.
    pub bad_lines: usize,
    /// Lines over the reader's cap, skipped unread (`lines::MAX_LINE_BYTES`).
    pub long_lines: usize,
    line_no: usize,
    forgotten: usize,
}

enum Reader {
    Claude(Box<claude::Reader>),
    Codex(Box<codex::Reader>),
}

impl Default for Stream {
    fn default() -> Self {
        Stream::new()
    }
}

impl Stream {
    /// An empty stream.
    pub fn new() -> Stream {
        Stream { reader: None, lines: 0, bad_lines: 0, long_lines: 0, line_no: 0, forgotten: 0 }
    }

    /// Reads one raw line: parsed here, skipped and counted when it is not JSON.
    pub fn feed_line(&mut self, line: &str) -> Option<Value> {
        self.line_no += 1;
        if line.trim().is_empty() {
            return None;
        }
        self.lines += 1;
        match serde_json::from_str::<Value>(line) {
            Ok(v) => {
                self.dispatch(self.line_no, &v);
                Some(v)
            }
            Err(_) => {
                self.bad_lines += 1;
                None
            }
        }
    }

    /// Counts a line the caller found unreadable (`bad`) or blank, keeping line numbers right.
    pub fn skip_line(&mut self, bad: bool) {
        self.line_no += 1;
        if bad {
            self.lines += 1;
            self.bad_lines += 1;
        }
    }

    /// Counts a line the caller read past because it was over its cap, keeping line numbers right.
    pub fn skip_long_line(&mut self) {
        self.line_no += 1;
        self.lines += 1;
        self.long_lines += 1;
    }

    /// Reads one line the caller already parsed.
    pub fn feed_value(&mut self, v: &Value) {
        self.line_no += 1;
        self.lines += 1;
        self.dispatch(self.line_no, v);
    }

    /// The 1-based number of the last line fed.
    pub fn line_no(&self) -> usize {
        self.line_no
    }

    fn dispatch(&mut self, n: usize, v: &Value) {
        if self.reader.is_none() {
            if codex::Reader::recognises(v) {
                self.reader = Some(Reader::Codex(Box::new(codex::Reader::new())));
            } else if claude::Reader::recognises(v) {
                self.reader = Some(Reader::Claude(Box::new(claude::Reader::new())));
            }
        }
        match &mut self.reader {
            Some(Reader::Claude(r)) => r.feed(n, v),
            Some(Reader::Codex(r)) => r.feed(n, v),
            None => {}
        }
    }

    /// The transcript read so far (None until a line was recognised). Its `lines` counts are
    /// only filled in by `finish`.
    pub fn transcript(&self) -> Option<&Transcript> {
        match &self.reader {
            Some(Reader::Claude(r)) => Some(r.transcript()),
            Some(Reader::Codex(r)) => Some(r.transcript()),
            None => None,
        }
    }

    /// Frees what turns before `turn` need to be rebuilt (their request bodies, and conversation
    /// segments no later turn uses). Those turns stay listed but can no longer be explained: for
    /// streaming callers that are done with them.
    pub fn forget_before(&mut self, turn: usize) {
        let t = match &mut self.reader {
            Some(Reader::Claude(r)) => r.transcript_mut(),
            Some(Reader::Codex(r)) => r.transcript_mut(),
            None => return,
        };
        let keep_epoch = t.turns.get(turn..).into_iter().flatten().find_map(|x| match x.messages {
            Messages::Segment { epoch, .. } => Some(epoch),
            _ => None,
        });
        let keep_epoch = keep_epoch.unwrap_or(t.segments.len().saturating_sub(1));
        for seg in t.segments.iter_mut().take(keep_epoch).filter(|s| !s.is_empty()) {
            *seg = Vec::new();
        }
        let from = self.forgotten.min(turn);
        for x in t.turns.iter_mut().take(turn).skip(from) {
            if matches!(x.messages, Messages::Body(_)) {
                x.messages = Messages::None;
            }
        }
        self.forgotten = self.forgotten.max(turn.min(t.turns.len()));
    }

    /// The whole transcript; None when no line was recognised.
    pub fn finish(self) -> Option<Transcript> {
        let mut t = match self.reader? {
            Reader::Claude(r) => r.finish(),
            Reader::Codex(r) => r.finish(),
        }?;
        t.lines = self.lines;
        t.bad_lines = self.bad_lines;
        Some(t)
    }
}
