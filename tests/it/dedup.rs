//! Read dedup through the real `refrain hook claude PostToolUse`: random files read again and
//! again through random edits (final newlines, trailing blank lines, CRLF, bare CRs inside lines)
//! in a Claude Code session and in its subagents, each with its own transcript laid out as Claude
//! Code lays them out. Whatever refrain puts in place of a read must be true in the conversation
//! it lands in: "unchanged" only when the text is byte for byte the earlier read the note names,
//! a diff only when GNU patch rebuilds the text the tool returned from that read with it, and
//! nothing at all for a subagent that never read the file (though its parent and a sibling did).

use proptest::prelude::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[path = "../../src/hooks/dedup/edits.rs"]
mod edits;
use edits::{apply, edit, file, patched};

/// Runs `refrain hook claude PostToolUse` with `payload`; returns what replaced the output (the
/// note) if anything, and the time the hook took.
fn hook(home: &Path, project: &Path, payload: &Value) -> (Option<String>, Duration) {
    let (stdout, took) = crate::hook::hook(home, project, "claude", "PostToolUse", payload.to_string().as_bytes());
    if stdout.trim().is_empty() {
        return (None, took);
    }
    let answer: Value = serde_json::from_str(stdout.trim()).unwrap();
    let note = answer["hookSpecificOutput"]["updatedToolOutput"]["file"]["content"].as_str();
    (Some(note.unwrap_or_else(|| panic!("an answer without a note: {answer}")).to_string()), took)
}

/// What Claude Code sends the model for a Read: the numbered lines.
fn numbered(text: &str) -> String {
    text.split('\n').enumerate().map(|(i, l)| format!("{}\t{l}", i + 1)).collect::<Vec<_>>().join("\n")
}

/// A Claude Code session on disk: the main transcript `<id>.jsonl` and its subagents' own
/// transcripts in `<id>/subagents/agent-<agent>.jsonl`.
struct Session {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    file: String,
    main: PathBuf,
    id: String,
}

impl Session {
    fn new() -> Session {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (home, project) = (root.join("refrain-home"), root.join("proj"));
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let id = "0f3c5a9e-5b8d-4e57-9a51-6f2b7d0c1e42".to_string();
        let transcripts = root.join("claude/projects/-proj");
        std::fs::create_dir_all(transcripts.join(&id).join("subagents")).unwrap();
        let main = transcripts.join(format!("{id}.jsonl"));
        let file = project.join("guide.md").to_string_lossy().into_owned();
        Session { _tmp: tmp, home, project, file, main, id }
    }

    /// A conversation of this session: the main one, or subagent `agent`'s own.
    fn conversation(&self, agent: Option<&str>) -> Conversation {
        let path = match agent {
            None => self.main.clone(),
            Some(a) => self.main.with_file_name(&self.id).join("subagents").join(format!("agent-{a}.jsonl")),
        };
        let mut c =
            Conversation { path, agent: agent.map(str::to_string), entries: Vec::new(), calls: 0, last_full: None };
        c.push(json!({"type": "user", "message": {"role": "user", "content": "Read the guide"}}));
        c
    }
}

/// One conversation's transcript, written as the calls go.
struct Conversation {
    path: PathBuf,
    agent: Option<String>,
    entries: Vec<Value>,
    calls: usize,
    /// The last text shown in full, and the message that showed it.
    last_full: Option<(String, usize)>,
}

impl Conversation {
    fn push(&mut self, mut entry: Value) {
        let n = self.entries.len();
        let tag = self.agent.as_deref().unwrap_or("main");
        entry["uuid"] = format!("{tag}-{n}").into();
        entry["parentUuid"] = if n == 0 { Value::Null } else { format!("{tag}-{}", n - 1).into() };
        entry["isSidechain"] = self.agent.is_some().into();
        entry["sessionId"] = "0f3c5a9e-5b8d-4e57-9a51-6f2b7d0c1e42".into();
        if let Some(a) = &self.agent {
            entry["agentId"] = a.as_str().into();
        }
        self.entries.push(entry);
        let text: String = self.entries.iter().map(|e| format!("{e}\n")).collect();
        std::fs::write(&self.path, text).unwrap();
    }

    /// Reads `file` again, the tool returning `now`: records the call, runs the hook as Claude
    /// Code would, records what the model got. Returns the note and the hook's time.
    fn read(&mut self, s: &Session, now: &str) -> (Option<String>, Duration) {
        self.calls += 1;
        let id = format!("toolu_{}_{}", self.agent.as_deref().unwrap_or("main"), self.calls);
        self.push(json!({"type": "assistant", "cwd": s.project, "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": s.file}}]}}));
        let lines = now.split('\n').count();
        let response = json!({"type": "text", "file": {"filePath": s.file, "content": now, "numLines": lines,
            "startLine": 1, "totalLines": lines}});
        let mut payload = json!({"session_id": s.id, "transcript_path": s.main, "cwd": s.project,
            "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": s.file},
            "tool_response": response, "tool_use_id": id});
        if let Some(a) = &self.agent {
            payload["agent_id"] = a.as_str().into();
            payload["agent_type"] = "general-purpose".into();
        }
        let (note, took) = hook(&s.home, &s.project, &payload);
        let shown = note.clone().unwrap_or_else(|| now.to_string());
        let mut result = json!({"type": "user", "cwd": s.project, "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id,
             "content": if note.is_some() { shown.clone() } else { numbered(&shown) }}]}});
        // The main transcript keeps the tool's own result beside what the model got; a
        // subagent's keeps only what the model got.
        if self.agent.is_none() {
            result["toolUseResult"] = json!({"type": "text", "file": {"filePath": s.file, "content": shown,
                "numLines": lines, "startLine": 1, "totalLines": lines}});
        }
        self.push(result);
        if note.is_none() && !now.is_empty() {
            self.last_full = Some((now.to_string(), self.entries.len()));
        }
        (note, took)
    }

    /// Reads the file and checks the note against what this conversation was shown.
    fn read_and_check(&mut self, s: &Session, now: &str) -> Result<Option<String>, TestCaseError> {
        let earlier = self.last_full.clone();
        let (note, _) = self.read(s, now);
        let Some(note) = &note else { return Ok(None) };
        let (before, message) =
            earlier.ok_or_else(|| TestCaseError::fail(format!("a note with no earlier read: {note}")))?;
        prop_assert!(note.contains(&format!("since your read at message {message}")), "{}", note);
        if note.contains(" is unchanged since your read") {
            prop_assert_eq!(&before, now, "called unchanged: {}", note);
        } else {
            let (_, body) = note.split_once('\n').ok_or_else(|| TestCaseError::fail(format!("no diff: {note}")))?;
            prop_assert_eq!(patched(&before, body), now.as_bytes().to_vec(), "{}", note);
        }
        Ok(Some(note.clone()))
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    /// The main conversation and subagent B read the file after every edit; subagent A, started
    /// by the same session, reads it for the first time each time (its own transcript holds only
    /// its calls). Every note the main conversation and B get is true against their own earlier
    /// read; A never gets one.
    #[test]
    fn every_note_rebuilds_what_the_tool_returned_and_only_where_it_was_read(
        start in file(10..40),
        edits in prop::collection::vec(edit(), 1..5),
    ) {
        let s = Session::new();
        let (mut main, mut b) = (s.conversation(None), s.conversation(Some("a1b2c3d4e5f60718b")));
        let mut text = start;
        prop_assert_eq!(main.read_and_check(&s, &text)?, None, "the first read is shown");
        prop_assert_eq!(b.read_and_check(&s, &text)?, None, "the subagent's first read is shown");
        for (i, e) in edits.iter().enumerate() {
            text = apply(&text, e);
            main.read_and_check(&s, &text)?;
            let mut a = s.conversation(Some(&format!("a9f8e7d6c5b4a392{i}")));
            let (note, _) = a.read(&s, &text);
            prop_assert_eq!(note, None, "a subagent that never read the file got a note");
            b.read_and_check(&s, &text)?;
        }
    }
}

/// The guide of the regression tests: long enough that a note is much shorter.
fn guide() -> String {
    (1..=30).map(|i| format!("{i}. Step {i} of the release guide: check the build, run the tests.\n")).collect()
}

/// Each case the issue named, through the real hook: changes at the end of a file are never
/// "unchanged", a bare CR keeps every hunk where patch expects it, and an unchanged read still
/// gets its note.
#[test]
fn end_of_file_changes_and_carriage_returns_get_exact_diffs() {
    let g = guide();
    let cr = g.replace("Step 3 of", "Step 3\rof");
    let cases = [
        ("three blank lines appended", g.clone(), format!("{g}\n\n\n")),
        ("a missing final newline fixed", g.trim_end().to_string(), g.clone()),
        ("trailing blank lines removed", format!("{g}\n\n"), g.clone()),
        ("the last line's LF turned CRLF", g.clone(), format!("{}\r\n", g.trim_end())),
        ("a bare CR inside a line, and a later line edited", cr.clone(), cr.replace("Step 20 of", "Step twenty of")),
    ];
    for (what, before, now) in cases {
        let s = Session::new();
        let mut main = s.conversation(None);
        assert_eq!(main.read(&s, &before).0, None, "{what}: the first read is shown");
        let same = main.read_and_check(&s, &before).unwrap().unwrap_or_else(|| panic!("{what}: no note"));
        assert!(same.contains(" is unchanged since your read at message 3"), "{what}: {same}");
        let note = main.read_and_check(&s, &now).unwrap_or_else(|e| panic!("{what}: {e}"));
        let note = note.unwrap_or_else(|| panic!("{what}: a small change got no diff"));
        assert!(note.contains(" changed since your read at message 3 "), "{what}: {note}");
        assert!(!note.contains("unchanged"), "{what}: {note}");
    }
}

/// The case found: the main agent reads the guide, then a subagent's first action reads it. The
/// subagent's payload names the main transcript; the note must not come from there, and the
/// answer must not wait for a call the main transcript will never record. The subagent's own
/// second read is answered from its own transcript.
#[test]
fn a_subagent_reading_what_its_parent_read_gets_the_file_at_once() {
    let s = Session::new();
    let mut main = s.conversation(None);
    assert_eq!(main.read(&s, &guide()).0, None);
    let mut sub = s.conversation(Some("aad04e7a11635a01e"));
    let (note, took) = sub.read(&s, &guide());
    assert_eq!(note, None, "the subagent was told it had a file it never saw");
    assert!(took < Duration::from_millis(1400), "the subagent's read waited {took:?}");
    let note = sub.read_and_check(&s, &guide()).unwrap();
    assert!(note.is_some_and(|n| n.contains("unchanged since your read at message 3")), "its own re-read");
    // A subagent whose transcript is not there at all: no note, at once.
    let lost = json!({"session_id": s.id, "transcript_path": s.main, "cwd": s.project, "agent_id": "ffffffffffffffff0",
        "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": s.file},
        "tool_response": {"type": "text", "file": {"filePath": s.file, "content": guide()}}, "tool_use_id": "toolu_x"});
    let (note, took) = hook(&s.home, &s.project, &lost);
    assert_eq!(note, None);
    assert!(took < Duration::from_millis(1400), "a call no transcript will record waited {took:?}");
}
