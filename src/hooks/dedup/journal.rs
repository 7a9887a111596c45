//! refrain's own record of a session, for agents whose session file refrain cannot read
//! (opencode, through refrain's plugin; Cursor): the prompts, the tool calls with what read
//! calls showed, and compactions. It gives those agents what a transcript gives the others: the
//! plan a turn followed and the reads still in context.
//!
//! One JSONL file per session under the project's data directory, private to the user, bounded
//! in size. A read text is kept exactly (it is compared byte for byte), and only when it holds
//! nothing the redactor would hide. Files untouched for `KEEP_DAYS` are removed when a new one is
//! created.

use super::view;
use super::window::{Seen, Window};
use crate::hooks::Agent;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A journal stops growing at this size (dedup then stops for the session, plans stay small).
const MAX_BYTES: u64 = 16 * 1024 * 1024;
/// Largest read text kept per call.
const MAX_TEXT_BYTES: usize = 256 * 1024;
/// Journals of sessions idle this long are removed.
const KEEP_DAYS: u64 = 14;

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// The user's prompt (a turn starts).
    Prompt {
        /// The prompt text.
        text: String,
    },
    /// A finished tool call.
    Call {
        /// The agent's call id.
        id: String,
        /// The tool name.
        tool: String,
        /// The tool input.
        input: Value,
        /// The working directory.
        cwd: String,
        /// Bytes of output the model received.
        output_len: usize,
        /// For a read: the text it showed, exactly; None when the model was shown a note, or
        /// when the text holds a secret (refrain stores no secrets, and a redacted text is not
        /// what the model saw).
        text: Option<String>,
        /// True when `text` is the exact text (journals written before refrain kept only exact
        /// texts hold redacted ones, which are never compared).
        #[serde(default)]
        exact: bool,
    },
    /// The session was compacted: nothing before is in context.
    Compacted,
}

/// A session's journal file.
#[derive(Debug, Clone)]
pub struct Journal {
    path: PathBuf,
}

impl Journal {
    /// The journal of `session` of `agent` under `dir`.
    pub fn new(dir: &Path, agent: Agent, session: &str) -> Journal {
        let hash = hex::encode(Sha256::digest(session.as_bytes()));
        Journal { path: dir.join(format!("{}-{}.jsonl", agent.arg(), &hash[..16])) }
    }

    /// Appends an entry; a full or unwritable journal is left as it is.
    pub fn append(&self, entry: &Entry) -> std::io::Result<()> {
        let fresh = !self.path.exists();
        if fresh {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir)?;
                sweep(dir);
            }
        } else if std::fs::metadata(&self.path)?.len() > MAX_BYTES {
            return Ok(());
        }
        let mut line = serde_json::to_string(entry).map_err(std::io::Error::other)?;
        line.push('\n');
        let mut opts = std::fs::OpenOptions::new();
        opts.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        opts.open(&self.path)?.write_all(line.as_bytes())
    }

    /// Every entry, oldest first (unreadable lines are skipped).
    pub fn entries(&self) -> Vec<Entry> {
        let Ok(file) = std::fs::File::open(&self.path) else { return Vec::new() };
        BufReader::new(file).lines().map_while(Result::ok).filter_map(|l| serde_json::from_str(&l).ok()).collect()
    }

    /// The reads still in context, for an agent that clears tool outputs older than `budget`
    /// tokens of newer ones.
    pub fn seen(&self, agent: Agent, budget: Option<u64>) -> Vec<Seen> {
        let mut w = Window::new(budget);
        for e in self.entries() {
            match e {
                Entry::Prompt { .. } => w.message(),
                Entry::Compacted => w.boundary(),
                Entry::Call { id, tool, input, cwd, output_len, text, exact } => {
                    w.message();
                    match view::key(agent, &tool, &input, &cwd) {
                        Some(key) => w.read(&id, key, text.filter(|_| exact), output_len),
                        None => w.output(output_len),
                    }
                }
            }
        }
        w.finish()
    }
}

/// The journal line for a finished call (`deduped`: the model was shown a note, not the text).
pub fn call_entry(agent: Agent, p: &crate::hooks::Payload, deduped: bool) -> Option<Entry> {
    let tool = p.tool_name.clone()?;
    let input = p.tool_input.clone().unwrap_or(Value::Null);
    let cwd = p.cwd.clone().unwrap_or_default();
    let response = p.tool_response.as_ref();
    let output_len = response.map(|r| r.as_str().map_or_else(|| r.to_string().len(), str::len)).unwrap_or(0);
    let text = match (deduped, view::key(agent, &tool, &input, &cwd), response) {
        (false, Some(key), Some(r)) => view::payload_text(agent, key.via, r).and_then(|t| stored_text(&t)),
        _ => None,
    };
    Some(Entry::Call { id: p.tool_use_id.clone().unwrap_or_default(), tool, input, cwd, output_len, text, exact: true })
}

/// A read text as the journal keeps it: exactly, when it is bounded and holds nothing the
/// redactor would hide; else not at all (such a read is never answered by a note).
pub fn stored_text(text: &str) -> Option<String> {
    if text.len() > MAX_TEXT_BYTES {
        return None;
    }
    let (redacted, _) = crate::results::redactor().redact_str(text);
    (redacted == text).then(|| text.to_string())
}

/// Removes journals idle for `KEEP_DAYS`.
fn sweep(dir: &Path) {
    let Ok(list) = std::fs::read_dir(dir) else { return };
    let limit = Duration::from_secs(KEEP_DAYS * 24 * 3600);
    for e in list.flatten() {
        let idle =
            e.metadata().ok().and_then(|m| m.modified().ok()).and_then(|t| SystemTime::now().duration_since(t).ok());
        if idle.is_some_and(|d| d > limit) && e.path().extension().is_some_and(|x| x == "jsonl") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_journal_keeps_reads_until_a_compaction_and_redacts_what_it_keeps() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(dir.path(), Agent::Opencode, "ses_1");
        let read = |id: &str, text: Option<&str>| Entry::Call {
            id: id.into(),
            tool: "read".into(),
            input: json!({"filePath": "/p/a.txt"}),
            cwd: "/p".into(),
            output_len: 40,
            text: text.map(str::to_string),
            exact: true,
        };
        j.append(&Entry::Prompt { text: "look".into() }).unwrap();
        j.append(&read("c1", Some("alpha"))).unwrap();
        assert_eq!(j.seen(Agent::Opencode, None)[0].text.as_deref(), Some("alpha"));
        j.append(&Entry::Compacted).unwrap();
        j.append(&read("c2", None)).unwrap();
        let seen = j.seen(Agent::Opencode, None);
        assert_eq!((seen.len(), seen[0].call_id.as_str(), seen[0].text.as_deref()), (1, "c2", None));
        assert_eq!(Journal::new(dir.path(), Agent::Opencode, "ses_2").entries(), vec![]);
        assert_eq!(stored_text("key = AKIAIOSFODNN7EXAMPLE"), None, "a secret is never stored");
        assert_eq!(stored_text("a\r\nb\n\n").as_deref(), Some("a\r\nb\n\n"), "kept byte for byte");
        // A line written before texts were kept exactly: its (redacted) text is never compared.
        let old = r#"{"kind":"call","id":"c3","tool":"read","input":{"filePath":"/p/a.txt"},"cwd":"/p","output_len":9,"text":"key = [REDACTED]"}"#;
        let line: Entry = serde_json::from_str(old).unwrap();
        j.append(&line).unwrap();
        assert_eq!(j.seen(Agent::Opencode, None).last().map(|s| s.text.clone()), Some(None));
    }
}
