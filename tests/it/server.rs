//! The server as an agent meets it: initialize, the tool list, stats, bad input, several
//! processes on one project, and an owner killed midway.

use crate::support::{Env, Server, sigkill, text};
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

/// Waits until `cache_stats` reports the model as something other than `loading`.
async fn model_state(s: &Server) -> Value {
    for _ in 0..200 {
        let stats = s.ok("cache_stats", json!({})).await;
        if stats["model"]["state"] != "loading" {
            return stats["model"].clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("model never finished loading");
}

#[tokio::test]
async fn initialize_names_refrain_and_sends_instructions_only_when_asked() {
    let env = Env::new();
    let s = env.serve().await;
    let info = s.client.peer_info().expect("server info");
    let server = info.server_info.clone().expect("serverInfo");
    assert_eq!(server.name, "refrain");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
    // No instructions by default: Claude Code would add them to every request.
    assert_eq!(info.instructions, None);
    s.stop().await;
    let s = env.serve_with("REFRAIN__SERVER__INSTRUCTIONS", "true").await;
    let instructions = s.client.peer_info().expect("server info").instructions.clone().unwrap_or_default();
    assert!(instructions.contains("plan_lookup") && instructions.contains("response_cache_get"), "{instructions}");
}

#[tokio::test]
async fn tool_list_is_identical_across_servers_and_annotated() {
    let env = Env::new();
    let a = env.serve().await;
    let other = Env::new();
    let b = other.serve().await;
    let ta = a.client.list_all_tools().await.expect("list");
    let tb = b.client.list_all_tools().await.expect("list");
    let names = |t: &Vec<rmcp::model::Tool>| t.iter().map(|t| t.name.to_string()).collect::<Vec<_>>();
    assert_eq!(names(&ta), names(&tb));
    assert_eq!(serde_json::to_string(&ta).unwrap(), serde_json::to_string(&tb).unwrap());
    // The default list: the design's five plus plan_feedback, sorted, each with an output schema.
    assert_eq!(
        names(&ta),
        ["compact_preview", "explain_cache_break", "plan_feedback", "plan_lookup", "plan_store", "response_cache_get"]
    );
    let lookup = ta.iter().find(|t| t.name == "plan_lookup").expect("plan_lookup listed");
    assert_eq!(lookup.annotations.as_ref().and_then(|a| a.read_only_hint), Some(true));
    assert!(ta.iter().all(|t| t.output_schema.is_some()), "every listed tool has an output schema");
    drop((a, b));
    let full = env.serve_all().await;
    let ta = full.client.list_all_tools().await.expect("list");
    assert_eq!(ta.len(), 14, "{:?}", names(&ta));
    let stats = ta.iter().find(|t| t.name == "cache_stats").expect("cache_stats listed");
    assert_eq!(stats.annotations.as_ref().and_then(|a| a.read_only_hint), Some(true));
    assert!(stats.output_schema.is_some(), "cache_stats has an output schema");
    let evict = ta.iter().find(|t| t.name == "cache_evict").expect("cache_evict listed");
    assert_eq!(evict.annotations.as_ref().and_then(|a| a.read_only_hint), Some(false));
}

#[tokio::test]
async fn cache_stats_reports_the_project_store_and_a_loaded_model() {
    let env = Env::new();
    let s = env.serve().await;
    let stats = s.ok("cache_stats", json!({})).await;
    assert_eq!(stats["project"], env.root().display().to_string());
    assert!(stats["store_path"].as_str().unwrap().starts_with(&env.home.path().display().to_string()));
    let model = model_state(&s).await;
    assert_eq!(model["state"], "ready", "{model}");
}

#[tokio::test]
async fn without_a_model_the_server_still_answers_and_says_why() {
    let env = Env::without_model();
    let s = env.serve().await;
    let model = model_state(&s).await;
    assert_eq!(model["state"], "unavailable");
    assert!(model["detail"].as_str().unwrap().contains("install.sh"), "{model}");
    let stats = s.ok("cache_stats", json!({})).await;
    assert_eq!(stats["records"]["plans"], 0);
}

#[tokio::test]
async fn unknown_tools_and_bad_arguments_get_clear_errors() {
    let env = Env::new();
    let s = env.serve().await;
    let mut p = rmcp::model::CallToolRequestParams::new("no_such_tool");
    p.arguments = Some(serde_json::Map::new());
    let err = s.client.call_tool(p).await.expect_err("unknown tool must fail");
    assert!(err.to_string().contains("tool not found"), "{err}");
    let r = s.call("cache_evict", json!({"what": {"target": "everything_please"}})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("everything_please") || text(&r).contains("unknown variant"), "{}", text(&r));
}

/// A raw stdio session for byte-level checks.
struct Raw {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Raw {
    fn spawn(env: &Env) -> Raw {
        let mut cmd = env.cmd(&["serve"]);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child = cmd.spawn().expect("spawn");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Raw { child, stdin, lines }
    }

    async fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("answer in time")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carried a non-JSON line {line:?}: {e}"))
    }
}

#[tokio::test]
async fn malformed_json_gets_a_parse_error_and_the_session_goes_on() {
    let env = Env::new();
    let mut raw = Raw::spawn(&env);
    raw.send("{this is not json").await;
    let e = raw.recv().await;
    assert_eq!(e["error"]["code"], -32700, "{e}");
    raw.send(r#"{"id":3,"method":"x"}"#).await;
    let e = raw.recv().await;
    assert_eq!(e["error"]["code"], -32600, "{e}");
    assert_eq!(e["id"], 3);
    raw.send(INIT).await;
    let init = raw.recv().await;
    assert_eq!(init["result"]["serverInfo"]["name"], "refrain", "{init}");
    let _ = raw.child.kill().await;
}

#[tokio::test]
async fn oversized_messages_are_refused_with_the_limit_named() {
    let env = Env::new();
    let mut raw = {
        let mut cmd = env.cmd(&["serve"]);
        cmd.env("REFRAIN__SERVER__MAX_MESSAGE_BYTES", "4096");
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Raw { child, stdin, lines }
    };
    raw.send(INIT).await;
    let _ = raw.recv().await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"cache_stats","arguments":{{"area":"{}"}}}}}}"#,
        "x".repeat(10_000)
    );
    raw.send(&big).await;
    let e = raw.recv().await;
    assert_eq!(e["error"]["code"], -32600, "{e}");
    assert!(e["error"]["message"].as_str().unwrap().contains("4096"), "{e}");
    let _ = raw.child.kill().await;
}

#[tokio::test]
async fn nothing_but_protocol_reaches_stdout() {
    let env = Env::new();
    let mut raw = Raw::spawn(&env);
    raw.send(INIT).await;
    let _ = raw.recv().await;
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"cache_stats","arguments":{}}}"#).await;
    let r = raw.recv().await;
    assert_eq!(r["id"], 2, "{r}");
    drop(raw.stdin);
    let mut rest = Vec::new();
    while let Ok(Some(l)) = raw.lines.next_line().await {
        rest.push(l);
    }
    for l in rest {
        serde_json::from_str::<Value>(&l).unwrap_or_else(|e| panic!("stray stdout line {l:?}: {e}"));
    }
}

#[tokio::test]
async fn a_second_server_on_the_project_shares_the_store_and_survives_the_owner_dying() {
    let env = Env::new();
    let owner = env.serve().await;
    let first = owner.ok("cache_stats", json!({})).await;
    let follower = env.serve().await;
    let seen = follower.ok("cache_stats", json!({})).await;
    assert_eq!(first["store_path"], seen["store_path"]);
    sigkill(owner.pid());
    // The follower's next request re-establishes the link (taking over the store) and succeeds.
    let after = follower.ok("cache_stats", json!({})).await;
    assert_eq!(after["store_path"], first["store_path"]);
    assert!(after["uptime_secs"].as_u64().unwrap() < 30);
}

#[tokio::test]
async fn a_corrupt_store_is_reported_and_left_untouched() {
    let env = Env::new();
    let s = env.serve().await;
    let store = s.ok("cache_stats", json!({})).await["store_path"].as_str().unwrap().to_string();
    s.stop().await;
    let conf = std::path::Path::new(&store).join("conf");
    std::fs::write(&conf, b"\x00garbage that is not a sled config\xff").unwrap();
    let before = std::fs::read(&conf).unwrap();
    let out = env.cmd(&["serve"]).stdin(Stdio::null()).output().await.unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot be opened"), "{stderr}");
    assert_eq!(std::fs::read(&conf).unwrap(), before, "the store files were changed");
}

#[tokio::test]
async fn initialize_is_answered_while_the_store_is_still_opening_and_a_tool_call_waits_for_it() {
    let env = Env::without_model();
    let s = env.serve().await;
    s.ok(
        "response_cache_put",
        json!({"namespace": "open", "tool": "WebFetch", "args": {"url": "https://example.com/a"},
        "result": "page a", "read_only": true}),
    )
    .await;
    let store = s.ok("cache_stats", json!({})).await["store_path"].as_str().unwrap().to_string();
    s.stop().await;
    // The store is held elsewhere (as by a previous owner still exiting, or a store slow to
    // open): the new server cannot open it until it is let go.
    let held = refrain::store::Store::open(std::path::Path::new(&store)).expect("hold the store");
    let started = std::time::Instant::now();
    let s = env.serve().await;
    let waited = started.elapsed();
    // Before, the start waited up to 10 s for the store; now `initialize` waits for nothing.
    assert!(waited < Duration::from_secs(5), "initialize waited {waited:?} for a store that could not be opened yet");
    let get = json!({"namespace": "open", "tool": "WebFetch", "args": {"url": "https://example.com/a"}});
    let call = tokio::spawn(async move {
        let out = s.ok("response_cache_get", get).await;
        (s, out)
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!call.is_finished(), "a tool call was answered while the store was still held");
    drop(held);
    let (s, out) = call.await.expect("the tool call");
    assert_eq!(out["status"], "hit", "{out}");
    assert_eq!(out["result"], "page a", "{out}");
    s.stop().await;
}

#[tokio::test]
async fn acknowledged_writes_survive_the_owner_being_killed_mid_burst() {
    let env = Env::without_model();
    let owner = env.serve().await;
    owner.ok("cache_stats", json!({})).await;
    let follower = env.serve().await;
    let put = |i: usize| {
        json!({"namespace": "crash", "tool": "WebFetch", "args": {"url": format!("https://example.com/{i}")},
               "result": format!("page {i}"), "read_only": true})
    };
    let mut acknowledged = Vec::new();
    for i in 0..60 {
        if i == 25 {
            sigkill(owner.pid());
        }
        let out = follower.ok("response_cache_put", put(i)).await;
        assert_eq!(out["stored"], true, "{out}");
        acknowledged.push(i);
    }
    drop(follower);
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A fresh server (the next owner) finds every acknowledged write.
    let fresh = env.serve().await;
    for i in acknowledged {
        let got = fresh
            .ok(
                "response_cache_get",
                json!({"namespace": "crash", "tool": "WebFetch", "args": {"url": format!("https://example.com/{i}")}}),
            )
            .await;
        assert_eq!(got["status"], "hit", "write {i} was acknowledged but is gone: {got}");
        assert_eq!(got["result"], format!("page {i}"));
    }
}

/// A model directory whose embedding model file is a named pipe: its load waits until the test
/// writes the model into it. Everything else links to the provisioned files.
fn slow_model_dir(env: &Env) -> (std::path::PathBuf, std::path::PathBuf) {
    let (shipped, dir) = (crate::support::model_dir(), env.home.path().join("slow-models"));
    let name = refrain::embed::MODEL_NAME;
    std::fs::create_dir_all(dir.join(name)).unwrap();
    for e in std::fs::read_dir(&shipped).unwrap().flatten().filter(|e| e.file_name() != name) {
        std::os::unix::fs::symlink(e.path(), dir.join(e.file_name())).unwrap();
    }
    for e in std::fs::read_dir(shipped.join(name)).unwrap().flatten().filter(|e| e.file_name() != "model.onnx") {
        std::os::unix::fs::symlink(e.path(), dir.join(name).join(e.file_name())).unwrap();
    }
    let fifo = dir.join(name).join("model.onnx");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo is needed for this test");
    (dir, fifo)
}

/// A CLI command that becomes the store's owner for one quick call starts loading the models; it
/// waits for a load in flight before it exits, however long the load takes, instead of leaving
/// the process under the loading runtime (on a loaded machine `refrain plans list` then ended
/// with a failing status and no message).
#[tokio::test]
async fn a_cli_command_that_owned_the_store_waits_for_a_model_load_before_it_exits() {
    let mut env = Env::new();
    let (dir, fifo) = slow_model_dir(&env);
    env.models = dir;
    let mut child = env.cmd(&["plans", "list"]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let (owned_tx, owned_rx) = tokio::sync::oneshot::channel();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let log = tokio::spawn(async move {
        let (mut log, mut owned_tx) = (String::new(), Some(owned_tx));
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("this process owns the project store")
                && let Some(t) = owned_tx.take()
            {
                let _ = t.send(());
            }
            log.push_str(&line);
            log.push('\n');
        }
        log
    });
    // The model is handed over once the command has done its work and waited longer than the
    // runtime's own 2 s grace at shutdown.
    tokio::time::timeout(Duration::from_secs(120), owned_rx).await.expect("the command became the owner").unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let model = std::fs::read(crate::support::model_dir().join(refrain::embed::MODEL_NAME).join("model.onnx")).unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        // Opening for reading and writing never waits for a reader; a load that is reading
        // gets the whole model, one that is gone leaves it unread.
        let mut f = std::fs::OpenOptions::new().read(true).write(true).open(&fifo).unwrap();
        let _ = f.write_all(&model);
    });
    let status =
        tokio::time::timeout(Duration::from_secs(120), child.wait()).await.expect("the command exited").unwrap();
    let log = log.await.unwrap();
    assert!(status.success(), "{status:?}\n{log}");
    assert!(log.contains("embedding model loaded"), "the command exited while the model was loading:\n{log}");
    drop(writer);
}
