//! opencode (1.18.33) end to end: two sessions through refrain's plugin, against refrain's
//! OpenAI-compatible mock on loopback. Each runs `opencode run --attach` on an `opencode serve`,
//! which stays up after the turn as the TUI does: a one-shot `opencode run` stops refrain's server
//! as the session goes idle, before the plugin's end-of-turn hook can store the turn.
//!
//! opencode is pointed at the mock through its bundled openai-compatible provider with a local
//! `baseURL`. Offline settings: no models.dev fetch, no autoupdate, no sharing, no LSP downloads,
//! no default plugins, and npm set offline (opencode installs its plugin SDK into every config
//! directory in the background; offline, that fails at once without touching the network).

use super::clients::{Clients, opted_out};
use super::mock::{Api, Mock};
use super::*;
use serde_json::json;

/// opencode's user config pointing at the mock (before install.sh adds refrain to it).
fn configure(s: &Scratch, port: u16) {
    let dir = s.home.join(".config/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": false,
        "share": "disabled",
        "model": "mock/mock-model",
        "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
            "options": {"baseURL": format!("http://127.0.0.1:{port}/v1"), "apiKey": "offline-test"},
            "models": {"mock-model": {"name": "Mock model"}}}},
    });
    std::fs::write(dir.join("opencode.json"), serde_json::to_vec_pretty(&config).unwrap()).unwrap();
}

/// Points the config at a new mock port, keeping what install.sh added.
fn repoint(s: &Scratch, port: u16) {
    let file = s.home.join(".config/opencode/opencode.json");
    let mut config: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    config["provider"]["mock"]["options"]["baseURL"] = json!(format!("http://127.0.0.1:{port}/v1"));
    std::fs::write(file, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
}

/// opencode's environment for an offline test machine.
fn opencode(s: &Scratch, args: &[&str]) -> Command {
    let clients = Clients::get();
    let mut cmd = Command::new(clients.bin("opencode"));
    cmd.args(args)
        .current_dir(&s.project)
        .env_clear()
        .env("PATH", clients.path())
        .env("HOME", &s.home)
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_SHARE", "1")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
        .env("OPENCODE_DISABLE_CLAUDE_CODE", "1")
        .env("npm_config_offline", "true");
    cmd
}

/// A running `opencode serve` on a loopback port; killed on drop.
struct Server {
    child: std::process::Child,
    url: String,
}

impl Server {
    fn start(s: &Scratch, log: &Path) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        std::fs::create_dir_all(log).unwrap();
        let child = opencode(s, &["serve", "--hostname", "127.0.0.1", "--port", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(log.join("serve.stdout")).unwrap())
            .stderr(std::fs::File::create(log.join("serve.stderr")).unwrap())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(60), "opencode serve did not listen on {port}");
            std::thread::sleep(Duration::from_millis(100));
        }
        Server { child, url: format!("http://127.0.0.1:{port}") }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `opencode run --attach URL PROMPT` in the project; returns stdout and the wall time.
fn session(s: &Scratch, server: &Server, mock: &Mock, prompt: &str) -> (String, Duration) {
    let mut args = vec!["run", "--attach", &server.url, "--format", "json"];
    args.extend(prompt.split_whitespace());
    let (out, took) = run_agent(opencode(s, &args), &mock.log.join("opencode"), SESSION_LIMIT);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "opencode failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    (stdout, took)
}

/// The plans stored, waiting a little: `opencode run` ends as soon as the session is idle, and the
/// plugin's idle hook may still be storing the turn.
fn plans_after_idle(s: &Scratch) -> Vec<String> {
    let started = std::time::Instant::now();
    loop {
        let plans = s.plans();
        if !plans.is_empty() || started.elapsed() > Duration::from_secs(20) {
            return plans;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn opencode_sessions_reach_refrain_dedup_a_read_store_a_plan_and_get_it_back() {
    if opted_out("opencode_sessions_reach_refrain_dedup_a_read_store_a_plan_and_get_it_back") {
        return;
    }
    let s = Scratch::new();
    let tmp = tempfile::tempdir().unwrap();
    let (notes, guide) = (s.file(NOTES), s.file(GUIDE));
    let cache_get = json!({"namespace": "hooks/opencode", "tool": "read", "args": {"filePath": notes}});
    let script = json!({"steps": [
        {"name": "read", "arguments": {"filePath": notes}},
        {"name": "read", "arguments": {"filePath": guide}},
        {"name": "read", "arguments": {"filePath": guide}},
        {"name": "refrain_response_cache_get", "arguments": cache_get},
        {"name": "edit", "arguments": {"filePath": notes, "oldString": "teh", "newString": "the"}},
        {"name": "refrain_response_cache_get", "arguments": cache_get},
        {"name": "refrain_cache_stats", "arguments": {}},
    ], "final": "Fixed the typo in notes.txt."});
    let mock = Mock::start(Api::Chat, &tmp.path().join("s1"), &script);
    configure(&s, mock.port);
    let log = s.install("opencode");
    assert!(log.contains("opencode.json") && log.contains("plugin/refrain.js"), "{log}");

    let server = Server::start(&s, &mock.log.join("serve"));
    let (_, took) = session(&s, &server, &mock, "Fix the typo in notes.txt");
    eprintln!("opencode session 1: {} ms", took.as_millis());
    let calls = mock.calls(Api::Chat);
    assert_eq!(calls.len(), 7, "the session did not run every scripted step: {calls:#?}");
    assert_second_read_deduplicated(&calls, "read");
    // opencode shows the model the text of MCP results only.
    let gets = texts_of(&calls, "refrain_response_cache_get");
    assert!(gets[0].starts_with("hit"), "the plugin did not record the read: {}", gets[0]);
    assert!(gets[1].starts_with("miss"), "the edit did not invalidate the recorded read: {}", gets[1]);
    assert_stats_text(&texts_of(&calls, "refrain_cache_stats")[0], &s);
    assert_eq!(std::fs::read_to_string(s.project.join(NOTES)).unwrap(), "Notes\nthe quick fox\n");

    let plans = plans_after_idle(&s);
    assert_eq!(plans.len(), 1, "the session.idle hook stored no plan: {plans:?}");
    assert!(plans[0].contains("Fix the typo in notes.txt"), "{plans:?}");
    let plan_id = plans[0].split_whitespace().next().unwrap().to_string();
    drop(server);

    let script = json!({"steps": [
        {"name": "refrain_plan_feedback", "arguments": {"plan_id": plan_id, "outcome": "success"}},
    ], "final": "Done."});
    // A hook offers only plans this user has seen work: report the first session's success.
    assert!(s.refrain(&["plans", "feedback", &plan_id, "success"]).contains("your reports 1 worked"));
    let mock2 = Mock::start(Api::Chat, &tmp.path().join("s2"), &script);
    repoint(&s, mock2.port);
    let server = Server::start(&s, &mock2.log.join("serve"));
    let (_, took) = session(&s, &server, &mock2, "Please fix the typo in notes.txt");
    eprintln!("opencode session 2: {} ms", took.as_millis());
    assert_plan_handed_back(&mock2, Api::Chat, &plan_id);
}

/// The same short session without and with refrain: what refrain adds to each request opencode
/// sends, within the budget.
#[test]
fn opencode_requests_carry_at_most_the_budget_of_refrain() {
    if opted_out("opencode_requests_carry_at_most_the_budget_of_refrain") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut mocks = Vec::new();
    for with in [false, true] {
        let s = Scratch::new();
        s.default_tools();
        let script =
            json!({"steps": [{"name": "read", "arguments": {"filePath": s.file(NOTES)}}], "final": "Read it."});
        let mock = Mock::start(Api::Chat, &tmp.path().join(if with { "with" } else { "bare" }), &script);
        configure(&s, mock.port);
        if with {
            s.install("opencode");
        }
        let server = Server::start(&s, &mock.log.join("serve"));
        session(&s, &server, &mock, "Read notes.txt");
        drop(server);
        mocks.push((s, mock));
    }
    Overhead::measure(&mocks[0].1, &mocks[1].1).assert_within("opencode", refrain::tools::surface::BUDGET_TOKENS);
}

/// Issue 29's subagent case with the real opencode: the main agent reads the guide, then starts a
/// subagent (the task tool) that reads it twice. opencode runs a subagent in a child session of
/// its own, and refrain's plugin reports each call under its session: the subagent's first read
/// shows the file (its parent's read is not in its context), its second gets the note.
#[test]
fn opencode_subagents_get_files_they_never_saw_and_notes_from_their_own_session() {
    if opted_out("opencode_subagents_get_files_they_never_saw_and_notes_from_their_own_session") {
        return;
    }
    let s = Scratch::new();
    let tmp = tempfile::tempdir().unwrap();
    let guide = s.file(GUIDE);
    let marker = "SUBAGENT-READS-THE-GUIDE";
    let read = json!({"name": "read", "arguments": {"filePath": guide}});
    let script = json!({"steps": [
        read,
        {"name": "task", "arguments": {"description": "Check the guide", "subagent_type": "general",
            "prompt": format!("{marker}: read guide.md and say what step 30 is")}},
    ], "final": "Done.", "agents": {marker: {"steps": [read, read], "final": "Step 30 checks the build."}}});
    let mock = Mock::start(Api::Chat, &tmp.path().join("s"), &script);
    configure(&s, mock.port);
    s.install("opencode");
    let server = Server::start(&s, &mock.log.join("serve"));
    let (_, took) = session(&s, &server, &mock, "Have a subagent check the release guide");
    eprintln!("opencode subagent session: {} ms", took.as_millis());

    let main = mock.calls_in(Api::Chat, marker, false);
    assert!(main.iter().any(|c| c["name"] == "task"), "the subagent was not started: {main:#?}");
    let sub = mock.calls_in(Api::Chat, marker, true);
    let texts: Vec<&str> = sub.iter().filter(|c| c["name"] == "read").filter_map(|c| c["result"].as_str()).collect();
    assert_subagent_shown_then_noted(&texts, &sub);
}

/// The agent is the judge, end to end (`take_a_suggestion`): a reworded second session gets the
/// stored plan as a suggestion through the plugin's chat.message hook (a synthetic part of the
/// prompt), the model takes it by its id and reports success, and a third session in those words
/// gets a verified hit. Each session has its own `opencode serve`, kept up until the first's
/// session.idle hook has stored the turn.
#[test]
fn opencode_takes_a_suggested_plan_and_its_wording_becomes_a_hit() {
    if opted_out("opencode_takes_a_suggested_plan_and_its_wording_becomes_a_hit") {
        return;
    }
    let s = Scratch::new();
    // Each session points the config at its own mock (port 9 is no server: none runs before).
    configure(&s, 9);
    s.install("opencode");
    s.lower_suggestion_floors();
    let tmp = tempfile::tempdir().unwrap();
    let notes = s.file(NOTES);
    let first = json!([
        {"name": "read", "arguments": {"filePath": notes}},
        {"name": "edit", "arguments": {"filePath": notes, "oldString": "teh", "newString": "the"}},
    ]);
    let tools = Tools { api: Api::Chat, prefix: "refrain_", args: "arguments" };
    take_a_suggestion(&s, tools, first, |dir, script, prompt| {
        let mock = Mock::start(Api::Chat, &tmp.path().join(dir), script);
        repoint(&s, mock.port);
        let server = Server::start(&s, &mock.log.join("serve"));
        let (_, took) = session(&s, &server, &mock, prompt);
        eprintln!("opencode suggestion {dir}: {} ms", took.as_millis());
        plans_after_idle(&s);
        drop(server);
        mock
    });
}
