//! `refrain report` and `refrain dashboard` through the real binary: figures over real
//! transcripts, repeated tasks found in a project's store (through its running server and
//! directly), the dry plan lookup that writes nothing, and the dashboard's access rules.

use crate::support::{Env, bin, repo, text};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::io::AsyncBufReadExt;
use tokio::process::Command;

/// An agent-history home: Claude Code's config dir and Codex's home, with these files.
pub struct History {
    pub dir: tempfile::TempDir,
}

impl History {
    pub fn new(claude: &[&str], codex: &[&str]) -> History {
        let h = History { dir: tempfile::tempdir().unwrap() };
        for (i, f) in claude.iter().enumerate() {
            h.add_claude(&format!("session-{i}.jsonl"), &std::fs::read_to_string(fixture(f)).unwrap());
        }
        let sessions = h.codex_home().join("sessions/2026/05/13");
        std::fs::create_dir_all(&sessions).unwrap();
        for (i, f) in codex.iter().enumerate() {
            std::fs::copy(fixture(f), sessions.join(format!("rollout-{i}.jsonl"))).unwrap();
        }
        h
    }

    pub fn claude_dir(&self) -> PathBuf {
        self.dir.path().join("claude")
    }

    pub fn codex_home(&self) -> PathBuf {
        self.dir.path().join("codex")
    }

    pub fn add_claude(&self, name: &str, text: &str) -> PathBuf {
        let d = self.claude_dir().join("projects/-p");
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// `refrain <cmd> --claude-dir .. --codex-home .. --home HOME [extra]`.
    pub fn cmd(&self, cmd: &str, home: &Path, extra: &[&str]) -> Command {
        let mut c = Command::new(bin());
        c.arg(cmd)
            .arg("--claude-dir")
            .arg(self.claude_dir())
            .arg("--codex-home")
            .arg(self.codex_home())
            .arg("--home")
            .arg(home)
            .args(extra)
            .env_remove("REFRAIN_PROJECT")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env("REFRAIN_MODEL_DIR", crate::support::model_dir())
            .kill_on_drop(true);
        c
    }

    pub async fn json(&self, home: &Path, extra: &[&str]) -> Value {
        let mut args = vec!["--json"];
        args.extend_from_slice(extra);
        let out = self.cmd("report", home, &args).output().await.unwrap();
        assert!(out.status.success(), "report failed: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
    }
}

pub fn fixture(rel: &str) -> PathBuf {
    repo().join("tests/fixtures/transcripts").join(rel)
}

/// The fixtures every report test reads: one Claude Code file and one Codex rollout with
/// hand-worked figures (see the report module's unit tests for the arithmetic).
pub const CLAUDE: [&str; 2] =
    ["ccusage/claude-project-alpha-chat.jsonl", "captured/claude-transcript-mcp-call-then-compact.jsonl"];
pub const CODEX: [&str; 1] = ["captured/codex-rollout-with-compaction.jsonl"];

#[tokio::test]
async fn report_json_adds_up_the_hand_worked_files_and_the_summary_fits_a_screen() {
    let h = History::new(&CLAUDE, &CODEX);
    let home = tempfile::tempdir().unwrap();
    let r = h.json(home.path(), &[]).await;
    // Requests: 3 (alpha) + 2 (captured Claude Code) + 3 (Codex) = 8.
    assert_eq!(r["totals"]["tokens"]["requests"], 8);
    // Breaks: 2 model changes (alpha) + 1 logged drop (Claude Code) = 3; none in the Codex file;
    // tokens lost 15 + 30 + 3000 = 3045.
    assert_eq!(r["totals"]["waste"]["breaks"], 3);
    assert_eq!(r["totals"]["waste"]["break_tokens"], 3045);
    let usd = r["totals"]["waste"]["break_usd"].as_f64().unwrap();
    assert!((usd - (0.00025875 + 0.0001035 + 0.01725)).abs() < 1e-9, "{usd}");
    assert_eq!(r["history"]["files"], 3);
    assert_eq!(r["refrain"], json!([]), "no store in an empty refrain home");
    let out = h.cmd("report", home.path(), &[]).output().await.unwrap();
    let summary = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    assert!(summary.lines().count() <= 40, "{summary}");
    for needle in ["WASTED", "cache breaks", "WHY THE CACHE BROKE", "the model changed mid-session", "REFRAIN SAVED"] {
        assert!(summary.contains(needle), "missing {needle}:\n{summary}");
    }
    let codex_only = h.json(home.path(), &["--agent", "codex"]).await;
    assert_eq!(codex_only["totals"]["tokens"]["requests"], 3);
    let page = home.path().join("report.html");
    let out = h.cmd("report", home.path(), &["--html", page.to_str().unwrap()]).output().await.unwrap();
    assert!(out.status.success());
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<svg id=\"chart-causes\"") && !html.contains("<script"));
}

#[tokio::test]
async fn bad_filters_are_explained() {
    let h = History::new(&[], &[]);
    let home = tempfile::tempdir().unwrap();
    let out = h.cmd("report", home.path(), &["--since", "yesterday-ish"]).output().await.unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--since") && err.contains("30d"), "{err}");
    let r = h.json(home.path(), &[]).await;
    assert_eq!(r["history"]["files"], 0);
    assert!(r["notes"].to_string().contains("no history found"), "{}", r["notes"]);
}

/// A Claude Code session in `root` whose one prompt is `prompt`.
fn session_in(root: &Path, prompt: &str) -> String {
    let cwd = root.display().to_string();
    [
        json!({"type": "user", "timestamp": "2026-03-01T09:00:00Z", "cwd": cwd, "sessionId": "s1", "message": {"role": "user", "content": prompt}}),
        json!({"type": "assistant", "timestamp": "2026-03-01T09:00:05Z", "cwd": cwd, "sessionId": "s1", "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "on it"}], "usage": {"input_tokens": 50, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 4000}}}),
        json!({"type": "assistant", "timestamp": "2026-03-01T09:00:09Z", "cwd": cwd, "sessionId": "s1", "message": {"id": "m2", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "done"}], "usage": {"input_tokens": 20, "cache_read_input_tokens": 4000, "cache_creation_input_tokens": 100}}}),
    ]
    .iter()
    .map(Value::to_string)
    .collect::<Vec<_>>()
    .join("\n")
}

const TEMPLATE: &str = r#"{"steps": [
    {"tool": "Read", "inputs": {"path": "{{params.path}}"}, "outputs": ["source"], "family": "fs"},
    {"tool": "Edit", "inputs": {"path": "{{params.path}}", "add": "flag {{params.flag}}"}, "outputs": ["diff"], "side_effect": true, "family": "fs"}],
  "slots": [{"name": "flag", "type": "flag"}, {"name": "path", "type": "path"}], "outputs": [{"name": "diff"}]}"#;

#[tokio::test]
async fn repeated_tasks_are_found_through_the_running_server_and_directly_without_writing() {
    let env = Env::new();
    let server = env.serve().await;
    let template: Value = serde_json::from_str(TEMPLATE).unwrap();
    let stored =
        server.ok("plan_store", json!({"task": "add a `--verbose` flag to src/main.rs", "template": template})).await;
    let plan_id = stored["plan_id"].as_str().unwrap().to_string();
    let h = History::new(&[], &[]);
    h.add_claude("s1.jsonl", &session_in(&env.root(), "add a `--quiet` flag to src/cli.rs"));
    let through_owner = h.json(env.home.path(), &[]).await;
    let store = &through_owner["refrain"][0];
    assert_eq!(store["status"], "owner", "{through_owner:#}");
    assert_eq!(store["plans"], 1);
    let tasks = through_owner["repeated_tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "{through_owner:#}");
    assert_eq!(tasks[0]["plan_id"], plan_id);
    // The prompt's requests: (50 + 0 + 4000) + (20 + 4000 + 100) = 8170 prompt tokens.
    assert_eq!(tasks[0]["tokens"], 8170);
    assert_eq!(through_owner["totals"]["repeated_tasks"], 1);
    // The dry lookups wrote nothing: no hit or miss counted, no hit on the plan.
    let stats = server.ok("cache_stats", json!({})).await;
    assert_eq!(stats["counters"]["plans"].get("hits"), None, "{stats:#}");
    assert_eq!(stats["counters"]["plans"].get("misses"), None, "{stats:#}");
    let listed = server.ok("plan_list", json!({"plan_id": plan_id})).await;
    assert_eq!(listed["plans"][0]["counters"]["hits"], 0);
    // A dry lookup through the tool is a hit too, and still writes nothing.
    let dry = server.ok("plan_lookup", json!({"task": "add a `--quiet` flag to src/cli.rs", "dry_run": true})).await;
    assert_eq!(dry["status"], "hit");
    assert_eq!(server.ok("cache_stats", json!({})).await["counters"]["plans"].get("hits"), None);
    let wet = server.ok("plan_lookup", json!({"task": "add a `--quiet` flag to src/cli.rs"})).await;
    assert_eq!(wet["status"], "hit");
    assert_eq!(server.ok("cache_stats", json!({})).await["counters"]["plans"]["hits"], 1);
    // Counters are flushed by sled's own timer (every 500 ms); give it that before the kill.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    server.stop().await;
    let direct = h.json(env.home.path(), &[]).await;
    assert_eq!(direct["refrain"][0]["status"], "read", "{direct:#}");
    assert_eq!(direct["refrain"][0]["plan_hits"], 1);
    assert_eq!(direct["repeated_tasks"][0]["plan_id"], plan_id);
    // And the store still works for the next server: nothing was left locked.
    let again = env.serve().await;
    let stats = again.ok("cache_stats", json!({})).await;
    assert_eq!(stats["counters"]["plans"]["hits"], 1, "{}", text(&again.call("cache_stats", json!({})).await));
}

/// Starts `refrain dashboard` and returns the child and the URL it printed.
pub async fn dashboard(h: &History, home: &Path, extra: &[&str]) -> (tokio::process::Child, String) {
    let mut args = vec!["--refresh-secs", "1"];
    args.extend_from_slice(extra);
    let mut child = h
        .cmd("dashboard", home, &args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(120), lines.next_line()).await.unwrap().unwrap().unwrap();
    let url = line.split_whitespace().last().unwrap().to_string();
    assert!(url.starts_with("http://127.0.0.1:") && url.contains("?token="), "{line}");
    (child, url)
}

#[tokio::test]
async fn dashboard_refuses_strangers_and_refreshes_as_history_grows() {
    let h = History::new(&CLAUDE[..1], &[]);
    let home = tempfile::tempdir().unwrap();
    let (_child, url) = dashboard(&h, home.path(), &["--no-stores"]).await;
    let base = url.split('?').next().unwrap().to_string();
    let token = url.split("token=").nth(1).unwrap().to_string();
    crate::http::server::crypto();
    let http = reqwest::Client::new();
    let get = |u: String| http.get(u);
    assert_eq!(get(base.clone()).send().await.unwrap().status(), 401, "no token");
    assert_eq!(get(format!("{base}?token=wrong")).send().await.unwrap().status(), 401);
    let foreign_host = get(url.clone()).header("Host", "evil.example:80").send().await.unwrap();
    assert_eq!(foreign_host.status(), 403);
    let foreign_origin = get(url.clone()).header("Origin", "http://evil.example").send().await.unwrap();
    assert_eq!(foreign_origin.status(), 403);
    let page = get(url.clone()).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["cache-control"], "no-store");
    assert!(page.text().await.unwrap().contains("chart-tokens"));
    let gen_url = format!("{base}api/generation?token={token}");
    let generation = |v: Value| v["generation"].as_u64().unwrap();
    let g1 = generation(get(gen_url.clone()).send().await.unwrap().json().await.unwrap());
    let r1: Value = get(format!("{base}api/report?token={token}")).send().await.unwrap().json().await.unwrap();
    assert_eq!(r1["totals"]["tokens"]["requests"], 3);
    // An agent writes: a new session appears; the page's generation moves on with its figures.
    h.add_claude("later.jsonl", &std::fs::read_to_string(fixture("ccusage/claude-project-beta-chat.jsonl")).unwrap());
    let started = Instant::now();
    loop {
        let g = generation(get(gen_url.clone()).send().await.unwrap().json().await.unwrap());
        if g > g1 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(90), "the dashboard did not notice the new session");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let r2: Value = get(format!("{base}api/report?token={token}")).send().await.unwrap().json().await.unwrap();
    assert_eq!(r2["totals"]["tokens"]["requests"], 5);
}

#[tokio::test]
async fn the_server_asked_for_instructions_tells_agents_where_their_user_can_see_the_report() {
    let env = Env::without_model();
    let s = env.serve_with("REFRAIN__SERVER__INSTRUCTIONS", "true").await;
    let instructions = s.client.peer_info().expect("server info").instructions.clone().unwrap_or_default();
    assert!(instructions.contains("refrain report") && instructions.contains("refrain dashboard"), "{instructions}");
}

#[tokio::test]
async fn a_history_line_too_long_to_hold_is_skipped_and_said_so() {
    // One line of each agent over the 16 MB cap: a tool output that size.
    let big = "y".repeat((16 << 20) + 1);
    let h = History::new(&CLAUDE[..1], &CODEX);
    let claude = std::fs::read_to_string(fixture(CLAUDE[0])).unwrap();
    let long = json!({"type": "user", "timestamp": "2025-06-14T10:00:00Z", "message": {"role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t", "content": big}]}});
    h.add_claude("session-0.jsonl", &format!("{long}\n{claude}"));
    let rollout = h.codex_home().join("sessions/2026/05/13/rollout-0.jsonl");
    let codex = std::fs::read_to_string(&rollout).unwrap();
    let long = json!({"timestamp": "2026-11-22T01:38:10.000Z", "type": "response_item",
        "payload": {"type": "function_call_output", "call_id": "c", "output": big}});
    std::fs::write(&rollout, format!("{codex}\n{long}\n")).unwrap();
    let home = tempfile::tempdir().unwrap();
    let r = h.json(home.path(), &["--no-stores"]).await;
    assert_eq!(r["history"]["long_lines"], 2, "{}", r["history"]);
    // Every other line still counts: 3 requests in the Claude Code file, 3 in the rollout.
    assert_eq!(r["totals"]["tokens"]["requests"], 6);
    assert!(r["notes"].to_string().contains("2 history lines over 16 MB skipped unread"), "{}", r["notes"]);
    let out = h.cmd("report", home.path(), &["--no-stores"]).output().await.unwrap();
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains("over 16 MB skipped unread"), "{summary}");
}

#[tokio::test]
async fn dashboard_closes_connections_that_send_nothing() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let h = History::new(&CLAUDE[..1], &[]);
    let home = tempfile::tempdir().unwrap();
    // --refresh-secs 1: the page polls every second, so connections may idle 1 + 5 seconds.
    let (_child, url) = dashboard(&h, home.path(), &["--no-stores"]).await;
    let addr = url.trim_start_matches("http://").split('/').next().unwrap().to_string();
    let token = url.split("token=").nth(1).unwrap().to_string();
    let started = Instant::now();
    let mut silent = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let mut kept = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let request = format!("GET /api/generation?token={token} HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    kept.write_all(request.as_bytes()).await.unwrap();
    let mut buf = [0u8; 1024];
    let n = tokio::time::timeout(Duration::from_secs(20), silent.read(&mut buf))
        .await
        .expect("a connection that sent nothing was still open after 20 s")
        .unwrap();
    assert_eq!(n, 0, "closed without an answer");
    assert!(started.elapsed() >= Duration::from_secs(5), "closed before its idle time: {:?}", started.elapsed());
    // A kept-alive connection is answered, then closed once it idles as long.
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), kept.read_to_end(&mut answer))
        .await
        .expect("an idle kept-alive connection was still open after 20 s")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200") && answer.contains("generation"), "{answer}");
}
