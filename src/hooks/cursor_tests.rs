//! Cursor's contract, event by event, on payloads in the shape Cursor documents (no Cursor build
//! runs offline): what refrain calls and what it answers, in Cursor's own form, whether Cursor runs
//! refrain's hooks.json or the Claude Code hooks it also reads.

use super::*;
use serde_json::json;
use std::cell::RefCell;

struct Fake {
    answers: Vec<(&'static str, Value)>,
    seen: RefCell<Vec<(String, Value)>>,
}

impl Caller for Fake {
    async fn call(&self, tool: &str, args: Value) -> Option<Value> {
        self.seen.borrow_mut().push((tool.to_string(), args));
        self.answers.iter().find(|(t, _)| *t == tool).map(|(_, v)| v.clone())
    }
}

fn payload(name: &str, project: &Path) -> Payload {
    let path = format!("{}/tests/fixtures/hooks/cursor/{name}", env!("CARGO_MANIFEST_DIR"));
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let root = project.to_string_lossy().into_owned();
    v["workspace_roots"] = json!([root]);
    if v.get("cwd").is_some() {
        v["cwd"] = json!(root);
    }
    for key in ["file_path"] {
        if let Some(f) = v.get(key).and_then(Value::as_str) {
            v[key] = json!(f.replace("/home/user/proj", &root));
        }
    }
    if let Some(f) = v.pointer("/tool_input/file_path").and_then(Value::as_str) {
        v["tool_input"]["file_path"] = json!(f.replace("/home/user/proj", &root));
    }
    Payload::parse(v.to_string().as_bytes()).unwrap().normalize()
}

struct Run {
    dir: tempfile::TempDir,
}

impl Run {
    fn new() -> Run {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proj")).unwrap();
        std::fs::write(dir.path().join("proj/notes.txt"), "Notes\nteh quick fox\n").unwrap();
        Run { dir }
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    fn hook(
        &self,
        agent: Agent,
        event: &str,
        file: &str,
        answers: Vec<(&'static str, Value)>,
    ) -> (Option<Value>, Vec<(String, Value)>) {
        let ctx = Context {
            config: HooksConfig { serve_cached_network_reads: true, ..HooksConfig::default() },
            journal_dir: Some(self.dir.path().join("journal")),
            home: Some(self.dir.path().join("home")),
        };
        let caller = Fake { answers, seen: RefCell::new(Vec::new()) };
        let event = Event::parse(agent, event).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        let out = rt.block_on(respond(agent, event, &payload(file, &self.project()), &ctx, &caller));
        (out, caller.seen.into_inner())
    }
}

fn hit() -> Value {
    json!({"status": "hit", "hit": {"plan_id": "p9", "score": 0.93, "steps": [{"tool": "Read", "inputs": {"file_path": "notes.txt"}}],
        "counters": {"hits": 0, "successes": 1, "failures": 0, "failure_streak": 0, "own_successes": 1},
        "provenance": {"source": "trace", "task": "Fix the typo in notes.txt"}}})
}

#[test]
fn before_submit_prompt_hands_the_plan_to_the_model_as_additional_context() {
    let r = Run::new();
    let (out, seen) =
        r.hook(Agent::Cursor, "beforeSubmitPrompt", "beforeSubmitPrompt.json", vec![(calls::PLAN_LOOKUP, hit())]);
    assert_eq!(seen[0], ("plan_lookup".to_string(), json!({"task": "Fix the typo in notes.txt", "via_hook": true})));
    let out = out.unwrap();
    assert_eq!(out["continue"], true);
    let ctx = out["additional_context"].as_str().unwrap();
    assert!(ctx.contains("plan_feedback plan_id \"p9\""), "{ctx}");
    assert!(out.get("hookSpecificOutput").is_none(), "Cursor would show Claude Code's shape to the user: {out}");
    let (miss, _) = r.hook(Agent::Cursor, "beforeSubmitPrompt", "beforeSubmitPrompt.json", vec![]);
    assert_eq!(miss, None);
}

#[test]
fn post_tool_use_records_reads_and_file_edits_invalidate() {
    let r = Run::new();
    let notes = r.project().join("notes.txt").to_string_lossy().into_owned();
    for file in ["postToolUse-Read.json", "postToolUse-Shell.json"] {
        let (out, seen) = r.hook(Agent::Cursor, "postToolUse", file, vec![]);
        assert_eq!(out, None, "Cursor has no way to replace an output: refrain never dedups there");
        assert_eq!(seen[0].0, "response_cache_put", "{file}");
        assert_eq!(seen[0].1["namespace"], "hooks/cursor");
        assert_eq!(seen[0].1["files"], json!([notes]), "{file}");
    }
    let (_, seen) = r.hook(Agent::Cursor, "postToolUse", "postToolUse-MCP.json", vec![]);
    assert_eq!(seen[0].0, "response_cache_put", "a read-verb MCP tool is recorded");
    let (out, seen) = r.hook(Agent::Cursor, "afterFileEdit", "afterFileEdit.json", vec![]);
    assert_eq!(out, None);
    assert_eq!(seen[0], ("response_cache_invalidate".to_string(), json!({"paths": [notes]})));
    assert_eq!((seen.len(), seen[1].1["event"].as_str()), (2, Some("Request")), "the request that follows is counted");
}

#[test]
fn stop_stores_the_turn_from_refrains_journal_and_pre_compact_is_noted() {
    let r = Run::new();
    r.hook(Agent::Cursor, "beforeSubmitPrompt", "beforeSubmitPrompt.json", vec![]);
    r.hook(Agent::Cursor, "postToolUse", "postToolUse-Read.json", vec![]);
    r.hook(Agent::Cursor, "afterFileEdit", "afterFileEdit.json", vec![]);
    let (out, seen) = r.hook(Agent::Cursor, "stop", "stop.json", vec![]);
    assert_eq!(out, None);
    assert_eq!(seen[0].0, "plan_store");
    assert_eq!(seen[0].1["task"], "Fix the typo in notes.txt");
    let tools: Vec<&str> =
        seen[0].1["trace"]["steps"].as_array().unwrap().iter().filter_map(|s| s["tool"].as_str()).collect();
    assert_eq!(tools, ["Read", "Edit"]);
    let (out, seen) = r.hook(Agent::Cursor, "preCompact", "preCompact.json", vec![]);
    assert_eq!(out, None);
    assert_eq!(
        (seen[0].0.as_str(), &seen[0].1["agent"], &seen[0].1["trigger"]),
        ("session_event", &json!("cursor"), &json!("auto"))
    );
}

#[test]
fn claude_code_hooks_run_by_cursor_answer_in_cursors_form_once() {
    let r = Run::new();
    let (out, _) =
        r.hook(Agent::Claude, "UserPromptSubmit", "beforeSubmitPrompt.json", vec![(calls::PLAN_LOOKUP, hit())]);
    let out = out.unwrap();
    assert!(out["additional_context"].as_str().is_some() && out.get("hookSpecificOutput").is_none(), "{out}");
    let cached = json!({"status": "hit", "result": "Example Domain"});
    let (out, _) =
        r.hook(Agent::Claude, "PreToolUse", "preToolUse-WebFetch.json", vec![(calls::RESPONSE_CACHE_GET, cached)]);
    let out = out.unwrap();
    assert_eq!(out["permission"], "deny");
    assert!(out["agent_message"].as_str().unwrap().contains("Example Domain"), "{out}");
    // With refrain in Cursor's own hooks.json, the Claude Code copy stays silent.
    let cursor = r.project().join(".cursor");
    std::fs::create_dir_all(&cursor).unwrap();
    std::fs::write(
        cursor.join("hooks.json"),
        r#"{"version":1,"hooks":{"stop":[{"command":"refrain hook cursor stop"}]}}"#,
    )
    .unwrap();
    let (out, seen) =
        r.hook(Agent::Claude, "UserPromptSubmit", "beforeSubmitPrompt.json", vec![(calls::PLAN_LOOKUP, hit())]);
    assert_eq!((out, seen.len()), (None, 0));
}

#[test]
fn read_dedup_is_off_when_the_config_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=40).map(|i| format!("line {i} of a file long enough for a note\n")).collect();
    let journal = dir.path().join("journal");
    let ctx = |on: bool| Context {
        config: HooksConfig { read_dedup: on, ..HooksConfig::default() },
        journal_dir: Some(journal.clone()),
        home: None,
    };
    let read = Payload {
        session_id: Some("ses_1".into()),
        cwd: Some("/p".into()),
        tool_name: Some("read".into()),
        tool_input: Some(json!({"filePath": "/p/a.txt"})),
        tool_response: Some(json!(text)),
        ..Payload::default()
    };
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    let caller = Fake { answers: vec![], seen: RefCell::new(Vec::new()) };
    let call = |id: &str, on: bool| {
        let p = Payload { tool_use_id: Some(id.into()), ..read.clone() };
        rt.block_on(respond(Agent::Opencode, Event::PostToolUse, &p, &ctx(on), &caller))
    };
    assert_eq!(call("c1", true), None, "a first read is shown");
    assert_eq!(call("c2", false), None, "hooks.read_dedup = false: the read is shown again");
    let out = call("c3", true).unwrap();
    assert!(out["output"].as_str().unwrap().starts_with("[refrain]"), "{out}");
}
