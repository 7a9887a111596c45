//! Read dedup: when an agent reads again what it already read in its current context window and
//! the tool returns byte for byte the same text, the post-tool hook replaces the output with a
//! short note; when only a little changed, with a diff against the earlier read that rebuilds the
//! new text exactly (`patch` applies it).
//!
//! What the model still has in context comes from the session file of the conversation the call
//! was made in (a subagent's own, never its parent's or a sibling's; or refrain's journal for
//! agents without one), read fresh at every call: reads before a compaction, on a rewound branch,
//! before the prompt shrank, or buried under enough newer tool output for the agent to clear them
//! never count, and when refrain cannot tell which conversation the call belongs to, nothing
//! does. Only the same file, the same tool and the same range is compared. The call itself has
//! already run, so nothing that depends on it having run (Claude Code's read-before-edit check)
//! is affected: refrain replaces output, never denies a call.

#[cfg(test)]
mod edits;
pub mod journal;
pub mod note;
pub mod view;
pub mod window;

mod claude;
mod codex;
pub mod gemini;
pub mod qwen;
mod replay;

pub use replay::{Replayed, replay};

use super::{Agent, Payload};
use crate::prompt::estimate_tokens;
use journal::Journal;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use view::ReadKey;
use window::Seen;

/// Session files larger than this are not read by a hook (it must stay fast).
const MAX_TRANSCRIPT_BYTES: u64 = 64 * 1024 * 1024;
/// opencode clears tool outputs older than its newest 40,000 tokens of them; refrain stays inside.
const OPENCODE_BUDGET: u64 = 30_000;

/// A repeated read answered by a note.
#[derive(Debug, Clone, PartialEq)]
pub struct Dedup {
    /// What the model receives instead of the output.
    pub note: String,
    /// The file read.
    pub path: String,
    /// Estimated tokens the note saves against the full output.
    pub tokens_saved: u64,
    /// True when the note is a diff (the file changed a little).
    pub changed: bool,
    /// The text the tool returned, which the note replaces.
    pub replaced: String,
}

/// The note for this finished call, or None when it is not a repeated read still in context.
pub fn decide(agent: Agent, p: &Payload, journal: Option<&Journal>) -> Option<Dedup> {
    let tool = p.tool_name.as_deref()?;
    let cwd = p.cwd.as_deref().unwrap_or_default();
    let key = view::key(agent, tool, p.tool_input.as_ref()?, cwd)?;
    let now = view::payload_text(agent, key.via, p.tool_response.as_ref()?)?;
    match agent {
        Agent::Opencode => {
            let seen = journal?.seen(agent, Some(OPENCODE_BUDGET));
            decide_with(&key, &journal::stored_text(&now)?, &seen)
        }
        Agent::Cursor => None,
        _ => decide_with(&key, &now, &transcript_seen(agent, p)?),
    }
}

/// The note for a read of `key` showing `now`, given the reads in context.
pub fn decide_with(key: &ReadKey, now: &str, seen: &[Seen]) -> Option<Dedup> {
    let earlier = seen.iter().rev().find(|s| &s.key == key && s.text.is_some())?;
    let before = earlier.text.as_deref()?;
    let (note, changed) = if before == now {
        (note::unchanged(key, earlier.message, now), false)
    } else {
        (note::changed(key, earlier.message, before, now)?, true)
    };
    let tokens_saved = estimate_tokens(now).checked_sub(estimate_tokens(&note)).filter(|s| *s > 0)?;
    Some(Dedup { note, path: key.path.clone(), tokens_saved, changed, replaced: now.to_string() })
}

/// How long a hook waits for the session file to record the call it answers: Claude Code and
/// Qwen Code append to it on their own schedule (Qwen Code through a queue of writes it does not
/// wait for), and on a loaded machine the entries of the calls just made (the earlier read among
/// them) can land after the hook has started. Only a file that will record the call is waited for.
const RECORD_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

/// The reads in context according to the session file of the call's own conversation; None
/// (no note, and no waiting) when refrain cannot tell which conversation that is, or the call
/// never shows up in it.
fn transcript_seen(agent: Agent, p: &Payload) -> Option<Vec<Seen>> {
    let path = conversation(agent, p)?;
    let path = path.to_str()?;
    let mut lines = read_lines(path)?;
    let current = match agent {
        Agent::Claude => Some(p.tool_use_id.as_deref()?),
        Agent::Qwen => Some(p.tool_call_id.as_deref()?),
        _ => None,
    };
    if let Some(id) = current {
        // Entries are appended in order: once the current call is recorded, so is every read
        // before it. Until then (never for long), read the file again. A call that never shows
        // up is in another conversation: nothing here is proven to be in its context.
        let started = std::time::Instant::now();
        while !records_call(&lines, id) {
            if started.elapsed() >= RECORD_WAIT {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            lines = read_lines(path)?;
        }
    }
    Some(seen_in(
        agent,
        &lines,
        p.tool_use_id.as_deref(),
        p.tool_call_id.as_deref(),
        p.cwd.as_deref().unwrap_or_default(),
    ))
}

/// The session file holding the conversation the call was made in, or None when the payload
/// does not say which one that is.
///
/// A Claude Code subagent's payload carries its `agent_id` and the *main* session's transcript
/// path; Claude Code keeps each subagent's own conversation beside the main transcript, in
/// `<session>/subagents/agent-<agent_id>.jsonl`: that file, never the parent's or a sibling's.
/// A Codex subagent's payload carries its `agent_id` and its own rollout, whose `session_meta`
/// names the thread: used only when that thread is the agent. Qwen Code subagents are refused
/// (their own files record no tool status). Gemini CLI's payloads do not say whether a subagent
/// made the call at all; its subagents record their chats in a folder named after the session
/// beside the main recording, so once one exists no call of the session gets a note.
fn conversation(agent: Agent, p: &Payload) -> Option<std::path::PathBuf> {
    let main = std::path::Path::new(p.transcript_path.as_deref().filter(|t| !t.is_empty())?);
    match (agent, p.agent_id.as_deref()) {
        (Agent::Gemini, _) => (!gemini_subagents_ran(main, p.session_id.as_deref()?)).then(|| main.to_path_buf()),
        (_, None) => Some(main.to_path_buf()),
        (Agent::Claude, Some(id)) => {
            if let Some(own) = p.agent_transcript_path.as_deref().filter(|t| !t.is_empty()) {
                return Some(own.into());
            }
            let plain = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            let session = main.file_stem()?.to_str()?;
            (plain(id) && plain(session))
                .then(|| main.with_file_name(session).join("subagents").join(format!("agent-{id}.jsonl")))
        }
        (Agent::Codex, Some(id)) => (rollout_thread(main).as_deref() == Some(id)).then(|| main.to_path_buf()),
        (_, Some(_)) => None,
    }
}

/// The thread a Codex rollout records: its first line's `session_meta` id.
fn rollout_thread(path: &std::path::Path) -> Option<String> {
    let mut first = String::new();
    BufReader::new(std::fs::File::open(path).ok()?).take(MAX_TRANSCRIPT_BYTES).read_line(&mut first).ok()?;
    let meta: Value = serde_json::from_str(&first).ok()?;
    (meta.get("type")?.as_str()? == "session_meta").then_some(())?;
    Some(meta.pointer("/payload/id")?.as_str()?.to_string())
}

/// True when Gemini CLI subagents have recorded chats for `session` (or when that cannot be
/// ruled out): a folder beside the main recording named after the session (Gemini CLI names it
/// after the session id, or the prompt id that starts with it, with other characters than
/// letters, digits, `-` and `_` made `_`).
fn gemini_subagents_ran(main: &std::path::Path, session: &str) -> bool {
    let safe: String = session.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    let Some(dir) = main.parent() else { return true };
    let Ok(list) = std::fs::read_dir(dir) else { return true };
    safe.is_empty()
        || list.flatten().any(|e| {
            e.file_type().is_ok_and(|t| t.is_dir()) && e.file_name().to_string_lossy().starts_with(safe.as_str())
        })
}

/// Whether a session file's lines hold the tool call `id`: a Claude Code `tool_use` block or a
/// Qwen Code `functionCall` part.
fn records_call(lines: &[Value], id: &str) -> bool {
    let has_id = |b: &Value| b.get("id").and_then(Value::as_str) == Some(id);
    lines.iter().rev().any(|e| {
        let claude = e.pointer("/message/content").and_then(Value::as_array).is_some_and(|c| c.iter().any(has_id));
        let qwen = e
            .pointer("/message/parts")
            .and_then(Value::as_array)
            .is_some_and(|parts| parts.iter().filter_map(|p| p.get("functionCall")).any(has_id));
        claude || qwen
    })
}

/// The reads in context in a session file's lines, leaving out the call being answered.
fn seen_in(agent: Agent, lines: &[Value], use_id: Option<&str>, call_id: Option<&str>, cwd: &str) -> Vec<Seen> {
    match agent {
        Agent::Claude => claude::seen(lines, use_id, cwd),
        Agent::Codex => codex::seen(lines, use_id, cwd),
        Agent::Gemini => gemini::seen(lines, cwd),
        Agent::Qwen => qwen::seen(lines, call_id, cwd),
        Agent::Opencode | Agent::Cursor => Vec::new(),
    }
}

/// The JSON lines of a session file (unparseable lines skipped); None when absent or too large.
pub fn read_lines(path: &str) -> Option<Vec<Value>> {
    let file = std::fs::File::open(path).ok()?;
    if file.metadata().ok()?.len() > MAX_TRANSCRIPT_BYTES {
        return None;
    }
    Some(BufReader::new(file).lines().map_while(Result::ok).filter_map(|l| serde_json::from_str(&l).ok()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A Claude Code transcript holding one Read of `path` that showed `content`, then the
    /// assistant entry asking for the next Read (call `t2`).
    fn transcript(dir: &std::path::Path, path: &str, content: &str, extra: &[Value]) -> String {
        let mut lines = vec![
            json!({"type": "user", "uuid": "u0", "parentUuid": null, "message": {"content": "look at the guide"}}),
            json!({"type": "assistant", "uuid": "a1", "parentUuid": "u0", "message": {"content": [
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": path}}]}}),
            json!({"type": "user", "uuid": "r1", "parentUuid": "a1", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": content}]},
                "toolUseResult": {"type": "text", "file": {"filePath": path, "content": content}}}),
        ];
        lines.extend(extra.iter().cloned());
        let parent = lines.last().and_then(|l| l["uuid"].as_str()).unwrap_or("r1").to_string();
        lines.push(json!({"type": "assistant", "uuid": "a2", "parentUuid": parent, "message": {"content": [
            {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": path}}]}}));
        let file = dir.join("t.jsonl");
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&file, text).unwrap();
        file.to_string_lossy().into_owned()
    }

    fn read_payload(transcript: &str, path: &str, content: &str, input: Value) -> Payload {
        Payload {
            transcript_path: Some(transcript.into()),
            cwd: Some("/p".into()),
            tool_name: Some("Read".into()),
            tool_input: Some(input),
            tool_response: Some(json!({"type": "text", "file": {"filePath": path, "content": content}})),
            tool_use_id: Some("t2".into()),
            ..Payload::default()
        }
    }

    fn guide(n: usize) -> String {
        (1..=n).map(|i| format!("line {i} of the guide, long enough to be worth a note\n")).collect()
    }

    #[test]
    fn an_unchanged_reread_gets_a_note_and_a_small_change_a_diff() {
        let dir = tempfile::tempdir().unwrap();
        let t = transcript(dir.path(), "/p/g.md", &guide(40), &[]);
        let d = decide(Agent::Claude, &read_payload(&t, "/p/g.md", &guide(40), json!({"file_path": "/p/g.md"})), None)
            .unwrap();
        assert!(d.note.contains("unchanged since your read at message 3; 40 lines"), "{}", d.note);
        assert!(!d.changed && d.tokens_saved > 300, "{d:?}");
        let edited = guide(40).replace("line 7 of", "line seven of");
        let d = decide(Agent::Claude, &read_payload(&t, "/p/g.md", &edited, json!({"file_path": "/p/g.md"})), None)
            .unwrap();
        assert!(d.changed && d.note.contains("+line seven of the guide"), "{}", d.note);
    }

    #[test]
    fn a_session_file_that_records_the_calls_late_still_gets_its_note() {
        let dir = tempfile::tempdir().unwrap();
        let t = transcript(dir.path(), "/p/g.md", &guide(40), &[]);
        let full = std::fs::read_to_string(&t).unwrap();
        // The hook starts while the agent has written only the prompt; the rest lands 300 ms later.
        std::fs::write(&t, full.lines().next().unwrap().to_string() + "\n").unwrap();
        let (path, rest) = (t.clone(), full.clone());
        let writer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            std::fs::write(&path, rest).unwrap();
        });
        let d = decide(Agent::Claude, &read_payload(&t, "/p/g.md", &guide(40), json!({"file_path": "/p/g.md"})), None);
        writer.join().unwrap();
        assert!(d.is_some_and(|d| d.note.contains("unchanged since your read")));
    }

    #[test]
    fn a_qwen_recording_written_late_still_shows_the_earlier_read() {
        let dir = tempfile::tempdir().unwrap();
        let lines = [
            json!({"uuid": "u", "parentUuid": null, "type": "user", "cwd": "/p", "message": {"parts": [{"text": "read it"}]}}),
            json!({"uuid": "a", "parentUuid": "u", "type": "assistant", "cwd": "/p",
                "message": {"parts": [{"functionCall": {"id": "c1", "name": "read_file", "args": {"file_path": "/p/g.md"}}}]}}),
            json!({"uuid": "b", "parentUuid": "a", "type": "tool_result", "cwd": "/p", "toolCallResult": {"status": "success"},
                "message": {"parts": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "x\n"}}}]}}),
            json!({"uuid": "c", "parentUuid": "b", "type": "assistant", "cwd": "/p",
                "message": {"parts": [{"functionCall": {"id": "c2", "name": "read_file", "args": {"file_path": "/p/g.md"}}}]}}),
        ];
        let t = dir.path().join("chat.jsonl");
        // Qwen Code queues its writes: the hook of call c2 starts with only the prompt on disk.
        std::fs::write(&t, format!("{}\n", lines[0])).unwrap();
        let (path, full) = (t.clone(), lines.iter().map(|l| format!("{l}\n")).collect::<String>());
        let writer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            std::fs::write(&path, full).unwrap();
        });
        let p = Payload {
            transcript_path: Some(t.to_string_lossy().into_owned()),
            cwd: Some("/p".into()),
            tool_call_id: Some("c2".into()),
            ..Payload::default()
        };
        let seen = transcript_seen(Agent::Qwen, &p).unwrap();
        writer.join().unwrap();
        assert_eq!(seen.len(), 1, "the earlier read was not seen: {seen:?}");
        assert_eq!(seen[0].text.as_deref(), Some("x\n"));
    }

    #[test]
    fn no_note_for_another_range_after_a_compaction_or_when_nothing_was_read() {
        let dir = tempfile::tempdir().unwrap();
        let t = transcript(dir.path(), "/p/g.md", &guide(40), &[]);
        let part = json!({"file_path": "/p/g.md", "offset": 5, "limit": 10});
        assert_eq!(decide(Agent::Claude, &read_payload(&t, "/p/g.md", &guide(10), part), None), None);
        let compacted = [
            json!({"type": "system", "subtype": "compact_boundary", "uuid": "c1", "parentUuid": null}),
            json!({"type": "user", "uuid": "s1", "parentUuid": "c1", "isCompactSummary": true, "message": {"content": "summary"}}),
        ];
        let t = transcript(dir.path(), "/p/g.md", &guide(40), &compacted);
        assert_eq!(
            decide(Agent::Claude, &read_payload(&t, "/p/g.md", &guide(40), json!({"file_path": "/p/g.md"})), None),
            None
        );
        let other = transcript(dir.path(), "/p/other.md", &guide(40), &[]);
        assert_eq!(
            decide(Agent::Claude, &read_payload(&other, "/p/g.md", &guide(40), json!({"file_path": "/p/g.md"})), None),
            None
        );
    }

    /// A subagent's payload names the main transcript, where its parent read the file: Claude
    /// Code's subagent gets no note from there (its own file is elsewhere), a Codex subagent's
    /// rollout must be its own thread, a Qwen Code subagent gets none at all, and none of them
    /// waits for a call that cannot show up.
    #[test]
    fn a_subagent_never_gets_a_note_from_its_parents_reads_and_never_waits() {
        let dir = tempfile::tempdir().unwrap();
        let t = transcript(dir.path(), "/p/g.md", &guide(40), &[]);
        let mut p = read_payload(&t, "/p/g.md", &guide(40), json!({"file_path": "/p/g.md"}));
        assert!(decide(Agent::Claude, &p, None).is_some(), "the main conversation's own re-read");
        p.agent_id = Some("aad04e7a11635a01e".into());
        let started = std::time::Instant::now();
        assert_eq!(decide(Agent::Claude, &p, None), None, "the parent's read is not in the subagent's context");
        assert_eq!(transcript_seen(Agent::Codex, &p), None, "a rollout that is not the agent's own thread");
        assert_eq!(transcript_seen(Agent::Qwen, &Payload { tool_call_id: Some("t2".into()), ..p.clone() }), None);
        assert!(started.elapsed() < RECORD_WAIT / 2, "waited {:?}", started.elapsed());
        // Its own transcript, beside the main one, is the one read.
        let own = dir.path().join("t/subagents");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::copy(&t, own.join("agent-aad04e7a11635a01e.jsonl")).unwrap();
        assert!(decide(Agent::Claude, &p, None).is_some(), "the subagent's own re-read");
        p.agent_id = Some("../../t".into());
        assert_eq!(transcript_seen(Agent::Claude, &p), None, "an agent id that is no plain name");
    }

    #[test]
    fn a_call_the_transcript_never_records_gets_no_note() {
        let dir = tempfile::tempdir().unwrap();
        let t = transcript(dir.path(), "/p/g.md", &guide(40), &[]);
        let p = read_payload(&t, "/p/g.md", &guide(40), json!({"file_path": "/p/g.md"}));
        let elsewhere = Payload { tool_use_id: Some("t9".into()), ..p.clone() };
        assert_eq!(decide(Agent::Claude, &elsewhere, None), None, "the last entry's branch is not proven ours");
        assert_eq!(decide(Agent::Claude, &Payload { tool_use_id: None, ..p }, None), None);
    }

    #[test]
    fn gemini_gives_no_note_once_a_subagent_of_the_session_recorded_a_chat() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("session-2026-11-28T16-00-0f3c5a9e.jsonl");
        let lines = [
            json!({"sessionId": "0f3c5a9e-5b8d", "projectHash": "h"}),
            json!({"id": "g1", "type": "gemini", "toolCalls": [{"id": "c1", "name": "read_file",
                "args": {"file_path": "/p/g.md"}, "status": "success",
                "result": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": guide(40)}}}]}]}),
        ];
        std::fs::write(&main, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
        let p = Payload {
            session_id: Some("0f3c5a9e-5b8d".into()),
            transcript_path: Some(main.to_string_lossy().into_owned()),
            cwd: Some("/p".into()),
            tool_name: Some("read_file".into()),
            tool_input: Some(json!({"file_path": "/p/g.md"})),
            tool_response: Some(json!({"llmContent": guide(40), "returnDisplay": ""})),
            ..Payload::default()
        };
        assert!(decide(Agent::Gemini, &p, None).is_some(), "no subagent ran: the re-read gets its note");
        // Gemini CLI's subagents record under <chats>/<session or prompt id>/; their tool calls
        // reach the hook with the main session's payload, which cannot tell them apart.
        std::fs::create_dir_all(dir.path().join("0f3c5a9e-5b8d________1")).unwrap();
        assert_eq!(decide(Agent::Gemini, &p, None), None);
    }
}
