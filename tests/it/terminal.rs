//! Text from history files and stored records printed by the real binary: paths, working
//! directories and tasks holding a clear-screen sequence, an OSC 52 clipboard write and colours
//! reach stdout written out (`\x1b`), never as raw escape bytes, in text and in JSON.

use crate::report::History;
use crate::support::Env;
use serde_json::{Value, json};

/// Clear screen, an OSC 52 clipboard write (`rm -rf ~` in base64), red, a C1 CSI and DEL.
const HOSTILE: &str = "\u{1b}[2J\u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{1b}[31mred\u{9b}0m\u{7f}";

/// True when `out` holds a byte a terminal would act on (`\n` and `\t` aside).
fn raw_control(out: &[u8]) -> bool {
    String::from_utf8_lossy(out).chars().any(|c| c.is_control() && c != '\n' && c != '\t')
}

/// A Claude Code session run in a hostile directory that reads a hostile path twice, unchanged.
fn hostile_session() -> String {
    let cwd = format!("/nonexistent/{HOSTILE}proj");
    let path = format!("{cwd}/{HOSTILE}.rs");
    let mut lines = Vec::new();
    for id in ["1", "2"] {
        lines.push(json!({"type": "assistant", "timestamp": "2026-02-01T10:00:00Z", "cwd": cwd, "message": {
            "id": format!("m{id}"), "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": path}}],
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}}));
        lines.push(json!({"type": "user", "timestamp": "2026-02-01T10:00:01Z", "cwd": cwd, "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "y".repeat(800)}]}}));
    }
    lines.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
}

#[tokio::test]
async fn report_prints_hostile_paths_escaped() {
    let h = History::new(&[], &[]);
    h.add_claude("s.jsonl", &hostile_session());
    let home = tempfile::tempdir().unwrap();
    let out = h.cmd("report", home.path(), &["--no-stores"]).output().await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!raw_control(&out.stdout), "raw control bytes in:\n{text:?}");
    // The path and the project are still there, written out.
    assert!(text.contains("FILES READ AGAIN UNCHANGED") && text.contains("\\x1b[31mred"), "{text}");
    let json = h.cmd("report", home.path(), &["--no-stores", "--json"]).output().await.unwrap();
    assert!(!raw_control(&json.stdout), "raw control bytes in the JSON");
    let r: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(r["repeated_files"][0]["path"].as_str().unwrap().contains(HOSTILE), "JSON keeps the path exact");
}

#[tokio::test]
async fn plans_list_and_show_print_hostile_tasks_escaped() {
    let env = Env::without_model();
    let task = format!("fix the flaky test {HOSTILE} in src/lib.rs");
    let template = json!({"steps": [{"tool": "Read", "inputs": {"path": "src/lib.rs", "why": HOSTILE}}]});
    let file = env.home.path().join("plans.jsonl");
    std::fs::write(&file, json!({"task": task, "template": template}).to_string()).unwrap();
    let import = env.cmd(&["plans", "import", file.to_str().unwrap()]).output().await.unwrap();
    assert!(import.status.success(), "{}", String::from_utf8_lossy(&import.stderr));
    let list = env.cmd(&["plans", "list"]).output().await.unwrap();
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(list.status.success() && text.contains("fix the flaky test"), "{text}");
    assert!(!raw_control(&list.stdout), "raw control bytes in:\n{text:?}");
    let id = text.split_whitespace().next().unwrap();
    let show = env.cmd(&["plans", "show", id]).output().await.unwrap();
    assert!(show.status.success(), "{}", String::from_utf8_lossy(&show.stderr));
    assert!(!raw_control(&show.stdout), "raw control bytes in:\n{:?}", String::from_utf8_lossy(&show.stdout));
    let shown: Value = serde_json::from_slice(&show.stdout).unwrap();
    assert!(shown.to_string().contains("\\u001b[2J"), "the JSON still holds the task exactly: {shown}");
}
