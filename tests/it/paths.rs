//! Paths outside the project over MCP with the real binary: `../`, absolute paths, a symlink out,
//! a dangling symlink out, a directory symlink out and `/proc/self/environ`, given as `files`,
//! `trees`, a Read's or Grep's own arguments, a hook payload, or a transcript path. Each is
//! refused with the same answer whether the target exists or not, nothing is recorded, and the
//! entries stored before are still served.

use crate::support::{Env, Server, write};
use serde_json::{Value, json};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

/// A project with symlinks pointing out of it, and the outside directory they point at.
struct Scene {
    env: Env,
    _outside: tempfile::TempDir,
    out: PathBuf,
}

fn scene() -> Scene {
    let env = Env::without_model();
    let root = env.root();
    write(&root, "src/lib.rs", "pub fn a() {}\n");
    let outside = tempfile::TempDir::new().unwrap();
    let out = outside.path().canonicalize().unwrap();
    std::fs::write(out.join("secret.txt"), "outside-canary-bytes").unwrap();
    std::fs::write(out.join("session.jsonl"), "{\"type\":\"user\"}\n").unwrap();
    symlink(out.join("secret.txt"), root.join("link-file")).unwrap();
    symlink(out.join("missing.txt"), root.join("link-dangling")).unwrap();
    symlink(&out, root.join("link-dir")).unwrap();
    Scene { env, _outside: outside, out }
}

/// Pairs of outside paths, spelled alike: the first exists, the second does not.
fn pairs(root: &Path, out: &Path) -> Vec<(String, String)> {
    let name = out.file_name().unwrap().to_string_lossy().into_owned();
    let up = root.components().count() - 1;
    let dots = "../".repeat(up);
    let out_s = out.display().to_string();
    vec![
        (format!("../{name}/secret.txt"), format!("../{name}/missing.txt")),
        (format!("src/../../{name}/secret.txt"), format!("src/../../{name}/missing.txt")),
        (
            format!("{dots}{}/secret.txt", out_s.trim_start_matches('/')),
            format!("{dots}{}/missing.txt", out_s.trim_start_matches('/')),
        ),
        (format!("{out_s}/secret.txt"), format!("{out_s}/missing.txt")),
        ("link-file".into(), "link-dangling".into()),
        ("link-dir/secret.txt".into(), "link-dir/missing.txt".into()),
        ("link-dir".into(), "link-dir/no-such-dir".into()),
        ("/proc/self/environ".into(), "/proc/self/no-such-entry".into()),
        ("/etc/passwd".into(), "/etc/no-such-file-here".into()),
        ("/etc".into(), "/no-such-dir-here".into()),
    ]
}

/// Every way a put can name a dependency path.
fn puts(path: &str, i: usize) -> Vec<(&'static str, Value)> {
    let result = format!("result {i}");
    vec![
        (
            "files",
            json!({"tool": "mcp__x__get_doc", "read_only": true, "args": {"n": i}, "result": result, "files": [path]}),
        ),
        (
            "trees",
            json!({"tool": "mcp__x__get_doc", "read_only": true, "args": {"n": i}, "result": result, "trees": [path]}),
        ),
        ("Read args", json!({"tool": "Read", "args": {"file_path": path}, "result": result})),
        ("Grep args", json!({"tool": "Grep", "args": {"pattern": "x", "path": path}, "result": result})),
    ]
}

/// The put's whole answer with the path replaced, so two answers can be compared.
fn masked(out: &Value, path: &str) -> String {
    out.to_string().replace(&serde_json::to_string(path).unwrap().trim_matches('"').to_string(), "<path>")
}

async fn stored_before(s: &Server) {
    let read = json!({"tool": "Read", "args": {"file_path": "src/lib.rs"}, "result": "pub fn a() {}"});
    assert_eq!(s.ok("response_cache_put", read).await["stored"], true);
    let web = json!({"tool": "WebSearch", "args": {"query": "q"}, "result": "answer"});
    assert_eq!(s.ok("response_cache_put", web).await["stored"], true);
}

async fn still_served(s: &Server) {
    let a = s.ok("response_cache_get", json!({"tool": "Read", "args": {"file_path": "src/lib.rs"}})).await;
    assert_eq!(a["status"], "hit", "{a}");
    let b = s.ok("response_cache_get", json!({"tool": "WebSearch", "args": {"query": "q"}})).await;
    assert_eq!(b["status"], "hit", "{b}");
    let stats = s.ok("cache_stats", json!({})).await;
    assert_eq!(stats["records"]["responses"], 2, "nothing else was stored: {stats}");
}

#[tokio::test]
async fn dependency_paths_outside_the_project_are_refused_alike_whether_they_exist_or_not() {
    let sc = scene();
    let root = sc.env.root();
    let s = sc.env.serve().await;
    stored_before(&s).await;
    let mut tried = 0;
    for (i, (exists, missing)) in pairs(&root, &sc.out).iter().enumerate() {
        for ((how, a), (_, b)) in puts(exists, i).into_iter().zip(puts(missing, i)) {
            let (ra, rb) = (s.ok("response_cache_put", a).await, s.ok("response_cache_put", b).await);
            for (r, p) in [(&ra, exists), (&rb, missing)] {
                assert_eq!(r["stored"], false, "{how} {p}: {r}");
                let reason = r["reason"].as_str().unwrap();
                assert!(
                    reason.contains(&format!("{p} is outside the project")) && reason.contains("results.allowed_roots"),
                    "{how} {p}: {reason}"
                );
                assert!(!r.to_string().contains("absent"), "{how} {p}: {r}");
            }
            assert_eq!(masked(&ra, exists), masked(&rb, missing), "{how}: the answer tells {exists} from {missing}");
            tried += 2;
        }
    }
    assert_eq!(tried, 80);
    // A path inside the project still works, missing ones included ("absent" is only said inside).
    let inside = json!({"tool": "mcp__x__get_doc", "read_only": true, "args": {"n": "in"}, "result": "r", "files": ["src/lib.rs", "src/new.rs"]});
    let r = s.ok("response_cache_put", inside).await;
    assert_eq!(r["depends_on"], json!(["src/lib.rs", "src/new.rs (absent)"]), "{r}");
    s.ok("cache_evict", json!({"what": {"target": "response_key", "key": r["key"]}})).await;
    still_served(&s).await;
}

/// Runs `refrain hook claude PostToolUse` against the running server with a Read payload.
fn post_tool_use(env: &Env, tool_input: Value, response: &str) {
    let payload = json!({
        "session_id": "s1", "cwd": env.root(), "hook_event_name": "PostToolUse",
        "tool_name": tool_input["tool"], "tool_input": tool_input["input"],
        "tool_response": {"type": "text", "file": {"filePath": "x", "content": response}},
    });
    crate::hook::hook(env.home.path(), &env.root(), "claude", "PostToolUse", payload.to_string().as_bytes());
}

#[tokio::test]
async fn hook_payloads_reading_outside_the_project_record_nothing() {
    let sc = scene();
    let root = sc.env.root();
    let s = sc.env.serve().await;
    stored_before(&s).await;
    let mut tried = 0;
    for (exists, missing) in pairs(&root, &sc.out) {
        for p in [&exists, &missing] {
            post_tool_use(&sc.env, json!({"tool": "Read", "input": {"file_path": p}}), "outside-canary-bytes");
            post_tool_use(
                &sc.env,
                json!({"tool": "Grep", "input": {"pattern": "x", "path": p}}),
                "outside-canary-bytes",
            );
            tried += 2;
        }
        let get = json!({"namespace": "hooks/claude-code", "tool": "Read", "args": {"file_path": exists}});
        let miss = s.ok("response_cache_get", get).await;
        assert_eq!(miss["status"], "miss", "{exists}: {miss}");
    }
    assert_eq!(tried, 40);
    // The hook path works for a read inside the project (so the refusals above mean something).
    post_tool_use(&sc.env, json!({"tool": "Read", "input": {"file_path": root.join("src/lib.rs")}}), "pub fn a() {}\n");
    let get = json!({"namespace": "hooks/claude-code", "tool": "Read", "args": {"file_path": root.join("src/lib.rs")}});
    let hit = s.ok("response_cache_get", get).await;
    assert_eq!(hit["status"], "hit", "the hook recorded nothing at all: {hit}");
    let stats = s.ok("cache_stats", json!({})).await;
    assert_eq!(stats["records"]["responses"], 3, "{stats}");
    let a = s.ok("response_cache_get", json!({"tool": "WebSearch", "args": {"query": "q"}})).await;
    assert_eq!(a["status"], "hit", "{a}");
}

#[tokio::test]
async fn transcript_paths_outside_the_roots_are_refused_alike_and_relative_ones_resolve_in_the_project() {
    let sc = scene();
    let root = sc.env.root();
    std::fs::copy(
        crate::support::repo().join("tests/fixtures/hooks/claude-transcript-mcp-call.jsonl"),
        root.join("session.jsonl"),
    )
    .unwrap();
    let s = sc.env.serve().await;
    stored_before(&s).await;
    let out = sc.out.display().to_string();
    let cases = [
        (format!("{out}/session.jsonl"), format!("{out}/missing.jsonl")),
        ("link-dir/session.jsonl".to_string(), "link-dir/missing.jsonl".to_string()),
        ("link-file".into(), "link-dangling".into()),
        ("/etc/passwd".into(), "/etc/no-such.jsonl".into()),
        ("/proc/self/environ".into(), "/proc/self/no-such".into()),
    ];
    for (exists, missing) in &cases {
        for tool in ["compact_preview", "explain_cache_break"] {
            let ea = s.err(tool, json!({"transcript": exists})).await;
            let eb = s.err(tool, json!({"transcript": missing})).await;
            assert!(ea.contains("outside the allowed directories"), "{tool} {exists}: {ea}");
            assert_eq!(ea.replace(exists.as_str(), "<p>"), eb.replace(missing.as_str(), "<p>"), "{tool}");
        }
    }
    // Inside the project, a relative path reads the project's file.
    let ok = s.call("compact_preview", json!({"transcript": "session.jsonl"})).await;
    assert_ne!(ok.is_error, Some(true), "{}", crate::support::text(&ok));
    still_served(&s).await;
}
