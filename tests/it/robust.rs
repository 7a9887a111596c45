//! No request can stall refrain: the owner stopped (SIGSTOP, as Ctrl-Z does) or no longer reading
//! while a new server and a follower call it, the owner killed mid-request, and requests that
//! would build gigabytes from legal inputs. After each, the servers answer and every entry stored
//! before is still served.

use crate::support::{Env, Server, sigkill, text};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The entry every test stores first and checks last.
fn kept_put() -> Value {
    json!({"tool": "Grep", "args": {"pattern": "kept"}, "result": "kept result"})
}

async fn assert_kept(s: &Server) {
    let got = tokio::time::timeout(
        Duration::from_secs(60),
        s.ok("response_cache_get", json!({"tool": "Grep", "args": {"pattern": "kept"}})),
    )
    .await
    .expect("the get was answered");
    assert_eq!(got["status"], "hit", "an entry stored before was lost: {got}");
    assert_eq!(got["result"], "kept result");
}

/// A tool call that must fail at the protocol level within `within`; returns the error text.
async fn call_fails(s: &Server, tool: &str, args: Value, within: Duration) -> (String, Duration) {
    let started = Instant::now();
    let mut p = CallToolRequestParams::new(tool.to_string());
    p.arguments = args.as_object().cloned();
    let out = tokio::time::timeout(within, s.client.call_tool(p)).await.expect("answered within the deadline");
    let err = match out {
        Err(e) => e.to_string(),
        Ok(r) => panic!("{tool} was expected to fail, got {}", text(&r)),
    };
    (err, started.elapsed())
}

fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill").arg(format!("-{sig}")).arg(pid.to_string()).status().unwrap();
    assert!(ok.success(), "kill -{sig} {pid}");
}

fn serve_cmd(env: &Env, timeout_ms: &str) -> tokio::process::Command {
    let mut cmd = env.cmd(&["serve"]);
    cmd.env("REFRAIN__SERVER__REQUEST_TIMEOUT_MS", timeout_ms);
    cmd
}

#[tokio::test]
async fn a_stopped_owner_freezes_neither_a_new_server_nor_a_follower() {
    let env = Env::without_model();
    let owner = Server::spawn(serve_cmd(&env, "3000")).await;
    owner.ok("response_cache_put", kept_put()).await;
    let follower = Server::spawn(serve_cmd(&env, "3000")).await;
    follower.ok("cache_stats", json!({})).await;
    signal(owner.pid(), "STOP");

    let started = Instant::now();
    let newcomer = tokio::time::timeout(Duration::from_secs(20), Server::spawn(serve_cmd(&env, "3000")))
        .await
        .expect("initialize was answered while the owner is stopped");
    let init = started.elapsed();
    // At once: no wait for the stopped owner (the margin is for a loaded machine).
    assert!(init < Duration::from_secs(5), "initialize took {init:?}");
    let get = json!({"tool": "Grep", "args": {"pattern": "kept"}});
    let (err, took) = call_fails(&newcomer, "response_cache_get", get.clone(), Duration::from_secs(60)).await;
    let pid = format!("pid {}", owner.pid());
    assert!(err.contains("is not answering") && err.contains(&pid), "{err}");
    let (ferr, ftook) = call_fails(&follower, "response_cache_get", get, Duration::from_secs(60)).await;
    assert!(ferr.contains("is not answering") && ferr.contains(&pid), "{ferr}");
    eprintln!(
        "stopped owner: initialize {init:?}, new server's call failed after {took:?}, follower's after {ftook:?}"
    );

    // Ending the stopped owner releases its lock: one of them takes over, the other follows it.
    sigkill(owner.pid());
    assert_kept(&newcomer).await;
    assert_kept(&follower).await;
}

#[tokio::test]
async fn an_owner_that_accepted_and_stopped_reading_gets_a_clear_error_then_a_takeover() {
    let env = Env::without_model();
    let s = env.serve().await;
    s.ok("response_cache_put", kept_put()).await;
    s.stop().await;
    // Stand in for an owner that holds the lock and accepts connections but never reads them.
    let project = refrain::project::Project::at(env.root(), env.home.path());
    let lock = std::fs::OpenOptions::new().write(true).create(true).truncate(true).open(project.lock_path()).unwrap();
    lock.try_lock().unwrap();
    std::fs::write(project.lock_path(), "4242").unwrap();
    let _ = std::fs::remove_file(project.socket_path());
    let listener = std::os::unix::net::UnixListener::bind(project.socket_path()).unwrap();
    let silent = std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().take(8) {
            held.push(conn);
        }
        std::thread::sleep(Duration::from_secs(120));
    });

    let started = Instant::now();
    let newcomer = tokio::time::timeout(Duration::from_secs(20), Server::spawn(serve_cmd(&env, "3000")))
        .await
        .expect("initialize was answered while the owner is silent");
    assert!(started.elapsed() < Duration::from_secs(20));
    let get = json!({"tool": "Grep", "args": {"pattern": "kept"}});
    let (err, _) = call_fails(&newcomer, "response_cache_get", get, Duration::from_secs(60)).await;
    assert!(err.contains("is not answering") && err.contains("pid 4242"), "{err}");
    drop(lock);
    assert_kept(&newcomer).await;
    drop(silent);
}

#[tokio::test]
async fn a_follower_rides_through_the_owner_killed_mid_request() {
    let env = Env::without_model();
    let owner = env.serve().await;
    owner.ok("response_cache_put", kept_put()).await;
    let follower = env.serve().await;
    // A request with real work in it: a long conversation to compact.
    let messages: Vec<Value> = (0..3000)
        .map(|i| {
            if i % 2 == 0 {
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("t{i}"), "content": "x".repeat(400)}]})
            } else {
                json!({"role": "assistant", "content": [{"type": "tool_use", "id": format!("t{}", i + 1), "name": "Read", "input": {"path": "a"}}]})
            }
        })
        .collect();
    let call = follower.call("compact_preview", json!({"messages": messages}));
    let killer = async {
        tokio::time::sleep(Duration::from_millis(30)).await;
        sigkill(owner.pid());
    };
    let (answer, ()) = tokio::time::timeout(Duration::from_secs(90), async { tokio::join!(call, killer) })
        .await
        .expect("the follower answered after the owner died");
    assert!(!text(&answer).is_empty(), "{answer:?}");
    assert_kept(&follower).await;
}

/// Peak resident memory of a process, in bytes (VmHWM).
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

/// The worst legal inputs: each is within every input limit, but without a budget would build
/// gigabytes (a long slot name put in place of each of 80k short values; an 4 MB value copied
/// into each of 20k placeholders; a transcript parsed whole). Each is refused naming the limit,
/// the next request is served, and the server's peak memory stays bounded.
#[tokio::test]
async fn requests_that_would_build_gigabytes_are_refused_and_memory_stays_bounded() {
    let env = Env::without_model();
    let mut cmd = env.cmd(&["serve"]);
    cmd.env("REFRAIN__SERVER__REQUEST_MEMORY_BYTES", (64u64 << 20).to_string());
    let s = Server::spawn(cmd).await;
    s.ok("response_cache_put", kept_put()).await;
    let baseline = peak_rss(s.pid());

    // Extraction: a 100 KB slot name replaces each of ~40k occurrences of "ab" (4 GB).
    let slot = "n".repeat(100 * 1024);
    let trace = json!({
        "context": {slot: "ab"},
        "steps": [{"tool": "Bash", "inputs": {"cmd": "ab ".repeat(40_000)}}, {"tool": "Bash", "inputs": "ab"}]
    });
    let r = s.call("plan_store", json!({"task": "run ab on the tree", "trace": trace})).await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    assert!(
        text(&r).contains("server.request_memory_bytes") && text(&r).contains("extracted template"),
        "{}",
        text(&r)
    );

    // Hydration: a template whose step holds 18k placeholders, looked up with a 4 MB value (72 GB).
    let template = json!({
        "steps": [
            {"tool": "Bash", "inputs": {"cmd": "{{params.v}} ".repeat(18_000)}},
            {"tool": "Bash", "inputs": {"cmd": "echo {{params.path}}"}}
        ],
        "slots": [{"name": "v", "type": "any", "required": false}, {"name": "path", "type": "path"}]
    });
    s.ok("plan_store", json!({"task": "check the files in src/main.rs", "template": template})).await;
    let r = s
        .call("plan_lookup", json!({"task": "check the files in src/lib.rs", "context": {"v": "v".repeat(4 << 20)}}))
        .await;
    let t = text(&r);
    assert!(t.contains("server.request_memory_bytes") && t.contains("hydrated plan"), "{t}");

    // The server goes on: stats answer, the entry stored before is served.
    s.ok("cache_stats", json!({})).await;
    assert_kept(&s).await;
    let peak = peak_rss(s.pid());
    eprintln!("peak RSS: {} MB at start, {} MB after the worst legal inputs", baseline >> 20, peak >> 20);
    assert!(peak < baseline + (600 << 20), "peak RSS grew from {baseline} to {peak} bytes");
}

/// A Claude Code session of 8000 turns in the project, the slowest legal input to
/// `explain_cache_break` (each turn's request is rebuilt: quadratic work).
fn long_session(env: &Env) -> std::path::PathBuf {
    let mut lines = String::new();
    for i in 0..8000 {
        lines.push_str(&format!(
            "{{\"type\":\"user\",\"isSidechain\":false,\"message\":{{\"role\":\"user\",\"content\":\"question {i}\"}}}}\n"
        ));
        lines.push_str(&format!(
            "{{\"type\":\"assistant\",\"isSidechain\":false,\"message\":{{\"id\":\"m{i}\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[{{\"type\":\"text\",\"text\":\"answer {i}\"}}]}}}}\n"
        ));
    }
    crate::support::write(&env.root(), "long-session.jsonl", &lines)
}

/// A long session is quadratic work for `explain_cache_break` (each turn's request is rebuilt):
/// with a 1 s deadline it is stopped and answered naming the limit, and the same server serves
/// the next request normally.
#[tokio::test]
async fn a_request_past_its_deadline_is_answered_and_the_next_is_served() {
    let env = Env::without_model();
    let transcript = long_session(&env);
    let mut cmd = env.cmd(&["serve"]);
    cmd.env("REFRAIN__SERVER__REQUEST_TIMEOUT_MS", "1000");
    let s = Server::spawn(cmd).await;
    s.ok("response_cache_put", kept_put()).await;
    let started = Instant::now();
    let r = s.call("explain_cache_break", json!({"transcript": transcript})).await;
    let t = text(&r);
    assert_eq!(r.is_error, Some(true), "{t}");
    assert!(t.contains("server.request_timeout_ms"), "{t}");
    assert!(started.elapsed() < Duration::from_secs(30), "answered after {:?}", started.elapsed());
    assert_kept(&s).await;
}

/// Many agents hitting one entry at once: every hit is counted (the counters and the entry's
/// usage row are atomic updates) and the entry stays served.
#[tokio::test]
async fn concurrent_hits_from_many_clients_lose_no_count() {
    let env = Env::without_model();
    let owner = env.serve().await;
    owner.ok("response_cache_put", kept_put()).await;
    let mut clients = vec![owner];
    for _ in 0..5 {
        clients.push(env.serve().await);
    }
    let per_client = 30;
    let runs = clients.iter().map(|s| async move {
        for _ in 0..per_client {
            let got = s.ok("response_cache_get", json!({"tool": "Grep", "args": {"pattern": "kept"}})).await;
            assert_eq!(got["status"], "hit", "{got}");
        }
    });
    tokio::time::timeout(Duration::from_secs(180), futures::future::join_all(runs)).await.expect("hits in time");
    let stats = clients[0].ok("cache_stats", json!({})).await;
    assert_eq!(stats["counters"]["results"]["hits"], (clients.len() * per_client) as u64, "{stats}");
    assert_kept(&clients[3]).await;
}

/// Every file under `dir`, recursively.
fn files_under(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() { files_under(&p, out) } else { out.push(p) }
    }
}

/// Redaction builds a new copy of a result for each rule that matches, plus a marker per secret:
/// a result of nothing but `.env`-style secrets, legal in size, goes over a 1 MiB budget. The put
/// is refused naming the limit, neither the result nor the entry it would replace is lost or kept
/// half-redacted, no byte of its secrets reaches the disk, and the next put is served.
#[tokio::test]
async fn redaction_over_the_budget_is_refused_and_keeps_nothing_of_the_secrets() {
    let env = Env::without_model();
    let mut cmd = env.cmd(&["serve"]);
    cmd.env("REFRAIN__SERVER__REQUEST_MEMORY_BYTES", (1u64 << 20).to_string());
    let s = Server::spawn(cmd).await;
    s.ok("response_cache_put", kept_put()).await;
    let args = json!({"pattern": "TOKEN"});
    s.ok("response_cache_put", json!({"tool": "Grep", "args": args, "result": "before"})).await;
    let secrets: String = (0..40_000).map(|i| format!("K{i}_TOKEN=zq{i:06}x\n")).collect();
    assert!(secrets.len() < 1 << 20, "within results.max_entry_bytes");
    let r = s.call("response_cache_put", json!({"tool": "Grep", "args": args, "result": secrets})).await;
    let t = text(&r);
    assert_eq!(r.is_error, Some(true), "{t}");
    assert!(t.contains("server.request_memory_bytes") && t.contains("redacted text"), "{t}");

    let got = s.ok("response_cache_get", json!({"tool": "Grep", "args": args})).await;
    assert_eq!(got["result"], "before", "the refused put replaced or lost the entry before it: {got}");
    let clean = s
        .ok("response_cache_put", json!({"tool": "Read", "args": {"file_path": ".env"}, "result": "A_TOKEN=zq123456x"}))
        .await;
    assert_eq!(clean["redactions"], 1, "the next put is served and redacted: {clean}");
    assert_kept(&s).await;
    drop(s);
    let mut files = Vec::new();
    files_under(env.home.path(), &mut files);
    for f in files {
        let bytes = std::fs::read(&f).unwrap_or_default();
        let found = bytes.windows(8).any(|w| w == b"zq000042" || w == b"zq123456");
        assert!(!found, "a secret of the refused put reached {}", f.display());
    }
}

/// Compaction copies the conversation and records a decision per result: a conversation of 40k
/// small tool results, legal in size, goes over a 2 MiB budget, is refused naming the limit,
/// and the next preview is served.
#[tokio::test]
async fn a_compaction_over_the_budget_is_refused_and_the_next_is_served() {
    let env = Env::without_model();
    let mut cmd = env.cmd(&["serve"]);
    cmd.env("REFRAIN__SERVER__REQUEST_MEMORY_BYTES", (2u64 << 20).to_string());
    let s = Server::spawn(cmd).await;
    s.ok("response_cache_put", kept_put()).await;
    let conversation = |n: usize| {
        let mut m = vec![json!({"role": "user", "content": "tidy the repo"})];
        for i in 0..n {
            let id = format!("toolu_{i:06}");
            m.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": format!("f{i}")}}]}));
            m.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "x".repeat(120)}]}));
        }
        Value::Array(m)
    };
    let big = conversation(20_000);
    assert!(big.to_string().len() < 8 << 20, "within server.max_message_bytes");
    let policy = json!({"keep_tool_uses": 1, "trigger_tokens": 0});
    let r = s.call("compact_preview", json!({"messages": big, "policy": policy, "include_messages": false})).await;
    let t = text(&r);
    assert_eq!(r.is_error, Some(true), "{t}");
    assert!(t.contains("server.request_memory_bytes") && t.contains("compaction"), "{t}");

    let small = s.ok("compact_preview", json!({"messages": conversation(5), "policy": policy})).await["plan"].clone();
    assert!(small["tokens_after"].as_u64() < small["tokens_before"].as_u64(), "{small}");
    assert_kept(&s).await;
}

/// A thread as /proc shows it: its id, nice value and CPU time used (in clock ticks).
#[cfg(target_os = "linux")]
#[derive(Debug, Clone, Copy)]
struct ThreadStat {
    tid: u32,
    nice: i64,
    ticks: u64,
}

/// The nice value of a process's main thread, and its request threads ("refrain-call").
#[cfg(target_os = "linux")]
fn call_threads(pid: u32) -> (i64, Vec<ThreadStat>) {
    // After the ")" closing the thread name come fields 3 (state) onwards: utime and stime are
    // fields 14 and 15, nice is field 19.
    let parse = |stat: &str| -> Option<(String, i64, u64)> {
        let (head, rest) = stat.rsplit_once(')')?;
        let name = head.split_once('(')?.1.to_string();
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
        Some((name, f.get(16)?.parse().ok()?, ticks))
    };
    let main =
        std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().and_then(|s| parse(&s)).expect("server stat").1;
    let mut calls = Vec::new();
    for t in std::fs::read_dir(format!("/proc/{pid}/task")).expect("server threads").flatten() {
        let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
        if let (Some((name, nice, ticks)), Ok(tid)) = (parse(&stat), t.file_name().to_string_lossy().parse())
            && name == "refrain-call"
        {
            calls.push(ThreadStat { tid, nice, ticks });
        }
    }
    (main, calls)
}

/// A request that runs long gives way to the others: past 50 ms its thread drops to the lowest CPU
/// priority while cheap requests go on being served, and once it has ended that thread is gone
/// (a thread cannot raise its priority back, so it never serves another request).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_slow_request_gives_way_and_its_thread_serves_nothing_after() {
    let env = Env::without_model();
    let transcript = long_session(&env);
    let s = Server::spawn(serve_cmd(&env, "5000")).await;
    s.ok("response_cache_put", kept_put()).await;
    let (normal, _) = call_threads(s.pid());
    let slow = s.call("explain_cache_break", json!({"transcript": transcript}));
    let watch = async {
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            assert_kept(&s).await;
            let (_, calls) = call_threads(s.pid());
            // The slow request's thread: lowered, and with far more CPU time than a cheap call uses.
            if let Some(t) = calls.iter().find(|t| t.nice == 19 && t.ticks >= 10) {
                return t.tid;
            }
            assert!(Instant::now() < until, "no request thread was lowered: {calls:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let (r, lowered) = tokio::join!(slow, watch);
    let t = text(&r);
    assert!(t.contains("server.request_timeout_ms"), "the slow request ran to its deadline: {t}");
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        assert_kept(&s).await;
        let (_, calls) = call_threads(s.pid());
        if calls.iter().all(|t| t.tid != lowered && t.nice == normal) {
            break;
        }
        assert!(Instant::now() < until, "the lowered thread {lowered} is still serving: {calls:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
