//! The current context window, built while walking a session in order: reads the model saw,
//! forgotten at every compaction boundary, when the prompt shrank (something was cleared), and,
//! for agents that clear old tool outputs, once newer tool output pushed them out of the
//! protected recent part of the context.

use super::view::ReadKey;

/// A read the model still has in context.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// The agent's call id.
    pub call_id: String,
    /// What was read.
    pub key: ReadKey,
    /// The text shown, or None when the output was not the file's content (a note, an error).
    pub text: Option<String>,
    /// The conversation message the read answered (1-based, counted in the current window).
    pub message: usize,
    /// Tool output tokens seen before this read's output (for aging).
    at_output: u64,
}

/// A prompt smaller than this share of the previous one means content was removed.
const SHRINK: f64 = 0.9;

/// The window being built.
#[derive(Debug, Default)]
pub struct Window {
    reads: Vec<Seen>,
    messages: usize,
    last_prompt: u64,
    output: u64,
    /// Only reads within this many tokens of the newest tool output count (agents that prune).
    budget: Option<u64>,
}

impl Window {
    /// An empty window; with `budget`, older tool outputs than that many tokens back are treated
    /// as cleared by the agent.
    pub fn new(budget: Option<u64>) -> Window {
        Window { budget, ..Window::default() }
    }

    /// A conversation message (prompt, answer or tool result) went by.
    pub fn message(&mut self) {
        self.messages += 1;
    }

    /// A tool output went by (any tool): it ages the reads before it.
    pub fn output(&mut self, text_len: usize) {
        self.output += estimate_tokens_len(text_len);
    }

    /// A read's output went by.
    pub fn read(&mut self, call_id: &str, key: ReadKey, text: Option<String>, output_len: usize) {
        self.reads.retain(|r| r.call_id != call_id);
        self.reads.push(Seen {
            call_id: call_id.to_string(),
            key,
            text,
            message: self.messages,
            at_output: self.output,
        });
        self.output += estimate_tokens_len(output_len);
    }

    /// A compaction (or a rewind past everything): nothing before it is in context.
    pub fn boundary(&mut self) {
        self.reads.clear();
        self.messages = 0;
    }

    /// The prompt size the provider reported for a request.
    pub fn usage(&mut self, prompt_tokens: u64) {
        if prompt_tokens == 0 {
            return;
        }
        if (prompt_tokens as f64) < self.last_prompt as f64 * SHRINK {
            self.reads.clear();
        }
        self.last_prompt = prompt_tokens;
    }

    /// The reads still in context, oldest first.
    pub fn finish(self) -> Vec<Seen> {
        let total = self.output;
        match self.budget {
            Some(b) => self.reads.into_iter().filter(|r| total - r.at_output <= b).collect(),
            None => self.reads,
        }
    }
}

/// About 4 bytes per token, as refrain estimates everywhere.
fn estimate_tokens_len(len: usize) -> u64 {
    crate::results::estimate_tokens(len as u64)
}

#[cfg(test)]
mod tests {
    use super::super::view::{Range, Via};
    use super::*;

    fn key(p: &str) -> ReadKey {
        ReadKey { via: Via::ReadTool, path: p.into(), range: Range::Whole }
    }

    #[test]
    fn compaction_and_a_shrinking_prompt_forget_earlier_reads() {
        let mut w = Window::new(None);
        w.message();
        w.usage(1000);
        w.read("a", key("/a"), Some("x".into()), 1);
        w.usage(1200);
        w.read("b", key("/b"), Some("y".into()), 1);
        assert_eq!(w.finish().len(), 2);
        let mut w = Window::new(None);
        w.read("a", key("/a"), Some("x".into()), 1);
        w.boundary();
        w.read("b", key("/b"), Some("y".into()), 1);
        assert_eq!(w.finish().iter().map(|s| s.call_id.as_str()).collect::<Vec<_>>(), ["b"]);
        let mut w = Window::new(None);
        w.usage(50_000);
        w.read("a", key("/a"), Some("x".into()), 1);
        w.usage(20_000);
        assert!(w.finish().is_empty(), "the prompt shrank: something was cleared");
    }

    #[test]
    fn a_budget_forgets_reads_buried_under_newer_tool_output() {
        let mut w = Window::new(Some(1000));
        w.read("old", key("/a"), Some("x".into()), 400);
        w.output(8000);
        w.read("new", key("/b"), Some("y".into()), 400);
        let kept: Vec<String> = w.finish().into_iter().map(|s| s.call_id).collect();
        assert_eq!(kept, ["new"]);
    }
}
