//! Codex CLI (0.169.0) end to end: two `codex exec` sessions through the hooks, and the
//! app-server listing refrain's tools and calling one.
//!
//! The mock model is described to Codex by a model catalog (`model_catalog_json`,
//! tests/agents/mock_catalog.json) that offers plain function tools: shell, freeform apply_patch,
//! MCP tools directly rather than behind tool search, and no websockets.
//! Codex 0.169 offers no update_plan tool in `exec`, so the plan is the turn's tool calls.

use super::clients::{Clients, opted_out};
use super::mock::{Api, Mock};
use super::*;
use serde_json::json;

/// The model catalog describing the mock model to Codex (tests/agents/mock_catalog.json).
fn catalog() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/mock_catalog.json")).unwrap()
}

/// Writes ~/.codex/config.toml pointing Codex at the mock (before install.sh adds refrain to it),
/// with the plugin feature off: Codex would otherwise sync its plugin marketplace from GitHub.
fn configure(s: &Scratch, port: u16) {
    let dir = s.home.join(".codex");
    std::fs::create_dir_all(&dir).unwrap();
    let catalog_file = dir.join("mock-catalog.json");
    std::fs::write(&catalog_file, catalog()).unwrap();
    let config = format!(
        "# the mock model server of refrain's tests\nmodel = \"mock-model\"\nmodel_provider = \"mock\"\n\
         model_catalog_json = \"{}\"\n\n[model_providers.mock]\nname = \"mock\"\n\
         base_url = \"http://127.0.0.1:{port}/v1\"\nwire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\n\n\
         # no plugin marketplace sync (it runs git ls-remote on github.com at startup)\n\
         [features]\nplugins = false\n",
        catalog_file.display()
    );
    std::fs::write(dir.join("config.toml"), config).unwrap();
}

/// Points an existing config at a new mock port.
fn repoint(s: &Scratch, port: u16) {
    let file = s.home.join(".codex/config.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    let start = text.find("base_url = ").unwrap();
    let end = start + text[start..].find('\n').unwrap();
    let text = format!("{}base_url = \"http://127.0.0.1:{port}/v1\"{}", &text[..start], &text[end..]);
    std::fs::write(file, text).unwrap();
}

/// The whole environment Codex runs with.
fn codex_env(s: &Scratch) -> Vec<(&'static str, String)> {
    vec![
        ("PATH", Clients::get().path()),
        ("HOME", s.home.to_string_lossy().into_owned()),
        ("CODEX_HOME", s.home.join(".codex").to_string_lossy().into_owned()),
        ("MOCK_API_KEY", "offline-test".into()),
    ]
}

fn codex(s: &Scratch, args: &[&str]) -> Command {
    let mut cmd = Command::new(Clients::get().bin("codex"));
    cmd.args(args).current_dir(&s.project).env_clear().envs(codex_env(s));
    cmd
}

/// Runs `codex exec PROMPT` against the mock; returns the JSON events and the wall time.
fn session(s: &Scratch, mock: &Mock, prompt: &str) -> (String, Duration) {
    let args = [
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--dangerously-bypass-hook-trust",
        "--dangerously-bypass-approvals-and-sandbox",
        prompt,
    ];
    let (out, took) = run_agent(codex(s, &args), &mock.log.join("codex"), SESSION_LIMIT);
    let events = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "codex failed: {}\n{events}", String::from_utf8_lossy(&out.stderr));
    (events, took)
}

fn cat_args() -> Value {
    json!({"namespace": "hooks/codex", "tool": "Bash", "args": {"command": "cat notes.txt"}})
}

#[test]
fn codex_sessions_reach_refrain_store_a_plan_and_get_it_back() {
    if opted_out("codex_sessions_reach_refrain_store_a_plan_and_get_it_back") {
        return;
    }
    let s = Scratch::new();
    let tmp = tempfile::tempdir().unwrap();
    let patch =
        "*** Begin Patch\n*** Update File: notes.txt\n@@\n Notes\n-teh quick fox\n+the quick fox\n*** End Patch\n";
    let script = json!({"steps": [
        {"name": "exec_command", "arguments": {"cmd": "cat notes.txt"}},
        {"name": "mcp__refrain__response_cache_get", "arguments": cat_args()},
        {"name": "exec_command", "arguments": {"cmd": format!("cat {GUIDE}")}},
        {"name": "exec_command", "arguments": {"cmd": format!("cat {GUIDE}")}},
        {"name": "apply_patch", "input": patch},
        {"name": "mcp__refrain__response_cache_get", "arguments": cat_args()},
        {"name": "mcp__refrain__cache_stats", "arguments": {}},
    ], "final": "Fixed the typo in notes.txt."});
    let mock = Mock::start(Api::Responses, &tmp.path().join("s1"), &script);
    configure(&s, mock.port);
    let log = s.install("codex");
    assert!(log.contains("config.toml") && log.contains("hooks.json"), "{log}");

    let (events, took) = session(&s, &mock, "Fix the typo in notes.txt");
    eprintln!("codex session 1: {} ms", took.as_millis());
    assert!(events.contains("Fixed the typo in notes.txt."), "{events}");
    let calls = mock.calls(Api::Responses);
    assert_eq!(calls.len(), 7, "the session did not run every scripted step: {calls:#?}");
    assert_second_read_deduplicated(&calls, "exec_command");
    let gets = results_of(&calls, "mcp__refrain__response_cache_get");
    assert_eq!(gets[0]["status"], "hit", "the shell read was not recorded by the PostToolUse hook: {}", gets[0]);
    assert_eq!(gets[1]["status"], "miss", "apply_patch did not invalidate the recorded read: {}", gets[1]);
    let stats = &results_of(&calls, "mcp__refrain__cache_stats")[0];
    assert_registered_settings_reached_the_server(stats, &s);
    assert_eq!(stats["counters"]["dedup"]["reads_deduplicated"], 1, "the dedup was not counted: {stats}");
    assert_eq!(std::fs::read_to_string(s.project.join(NOTES)).unwrap(), "Notes\nthe quick fox\n");

    let plans = s.plans();
    assert_eq!(plans.len(), 1, "the Stop hook stored no plan: {plans:?}");
    assert!(plans[0].contains("Fix the typo in notes.txt"), "{plans:?}");
    let plan_id = plans[0].split_whitespace().next().unwrap().to_string();

    let script = json!({"steps": [
        {"name": "mcp__refrain__plan_feedback", "arguments": {"plan_id": plan_id, "outcome": "success"}},
    ], "final": "Done."});
    // A hook offers only plans this user has seen work: report the first session's success.
    assert!(s.refrain(&["plans", "feedback", &plan_id, "success"]).contains("your reports 1 worked"));
    let mock2 = Mock::start(Api::Responses, &tmp.path().join("s2"), &script);
    repoint(&s, mock2.port);
    let (_, took) = session(&s, &mock2, "Please fix the typo in notes.txt");
    eprintln!("codex session 2: {} ms", took.as_millis());
    assert_plan_handed_back(&mock2, Api::Responses, &plan_id);
}

#[test]
fn codex_app_server_lists_refrains_tools_and_calls_one() {
    if opted_out("codex_app_server_lists_refrains_tools_and_calls_one") {
        return;
    }
    let s = Scratch::new();
    let tmp = tempfile::tempdir().unwrap();
    let mock = Mock::start(Api::Responses, &tmp.path().join("m"), &json!({"steps": []}));
    configure(&s, mock.port);
    s.install("codex");
    let clients = Clients::get();
    let probe = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/codex_appserver.py");
    let mut py = Command::new("python3");
    py.arg(probe)
        .arg(clients.bin("codex"))
        .args(["refrain", "cache_stats", "{}"])
        .arg(&s.project)
        .current_dir(&s.project)
        .env_clear()
        .envs(codex_env(&s));
    let (out, _) = run_agent(py, &tmp.path().join("probe"), Duration::from_secs(90));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "app-server probe failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap();
    let servers = report["servers"]["data"].as_array().cloned().unwrap_or_default();
    let refrain = servers.iter().find(|s| s["name"] == "refrain").unwrap_or_else(|| panic!("{report:#}"));
    let tools: Vec<String> = match &refrain["tools"] {
        Value::Object(m) => m.keys().cloned().collect(),
        Value::Array(a) => a.iter().filter_map(|t| t["name"].as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    };
    for t in ["cache_stats", "plan_lookup", "plan_store", "response_cache_get"] {
        assert!(tools.iter().any(|x| x == t), "app-server does not list {t}: {report:#}");
    }
    let call = &report["call"];
    let stats = call.get("structuredContent").or(call.get("structured_content")).unwrap_or(call);
    assert_registered_settings_reached_the_server(stats, &s);
}

/// The same short session without and with refrain: what refrain's default tool list and
/// instructions add to each request Codex sends (it sends MCP tools in full), within the budget.
#[test]
fn codex_requests_carry_at_most_the_budget_of_refrain() {
    if opted_out("codex_requests_carry_at_most_the_budget_of_refrain") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let script =
        json!({"steps": [{"name": "exec_command", "arguments": {"cmd": "cat notes.txt"}}], "final": "Read it."});
    let bare = Scratch::new();
    let m0 = Mock::start(Api::Responses, &tmp.path().join("bare"), &script);
    configure(&bare, m0.port);
    session(&bare, &m0, "Read notes.txt");
    let s = Scratch::new();
    s.default_tools();
    let m1 = Mock::start(Api::Responses, &tmp.path().join("with"), &script);
    configure(&s, m1.port);
    s.install("codex");
    session(&s, &m1, "Read notes.txt");
    Overhead::measure(&m0, &m1).assert_within("codex", refrain::tools::surface::BUDGET_TOKENS);
}

/// Issue 29's subagent case with the real Codex CLI: the main agent cats the guide, spawns a
/// subagent that cats it twice, and waits for it. A Codex subagent's payload carries its agent_id
/// and its own rollout: its first cat shows the file (its parent's read is not in its context),
/// its second gets refrain's note from its own rollout.
#[test]
fn codex_subagents_get_files_they_never_saw_and_notes_from_their_own_rollout() {
    if opted_out("codex_subagents_get_files_they_never_saw_and_notes_from_their_own_rollout") {
        return;
    }
    let s = Scratch::new();
    let marker = "SUBAGENT-READS-THE-GUIDE";
    let cat = json!({"name": "exec_command", "arguments": {"cmd": format!("cat {GUIDE}")}});
    let script = json!({"steps": [
        cat,
        {"name": "spawn_agent", "arguments": {"task_name": "check_guide",
            "message": format!("{marker}: read guide.md and say what step 30 is")}},
        {"name": "wait_agent", "arguments": {"targets": ["$SPAWNED_AGENT_ID"], "timeout_ms": 300_000}},
    ], "final": "Done.", "agents": {marker: {"steps": [cat, cat], "final": "Step 30 checks the build."}}});
    let tmp = tempfile::tempdir().unwrap();
    let mock = Mock::start(Api::Responses, &tmp.path().join("s"), &script);
    configure(&s, mock.port);
    s.install("codex");
    let (_, took) = session(&s, &mock, "Have a subagent check the release guide");
    eprintln!("codex subagent session: {} ms", took.as_millis());

    let main = mock.calls_in(Api::Responses, marker, false);
    let waited = main
        .iter()
        .find(|c| c["name"].as_str().is_some_and(|n| n.ends_with("wait_agent")))
        .and_then(|c| c["result"].as_str());
    assert!(waited.is_some_and(|w| w.contains("Step 30 checks the build.")), "the subagent did not finish: {main:#?}");
    let first = main.iter().find(|c| c["name"] == "exec_command").and_then(|c| c["result"].as_str());
    assert!(first.is_some_and(|t| t.contains("Step 30 of the release guide")), "the parent's read: {main:#?}");
    let sub = mock.calls_in(Api::Responses, marker, true);
    let texts: Vec<&str> =
        sub.iter().filter(|c| c["name"] == "exec_command").filter_map(|c| c["result"].as_str()).collect();
    assert_subagent_shown_then_noted(&texts, &sub);
}

/// The agent is the judge, end to end (`take_a_suggestion`): a reworded second `codex exec` gets
/// the stored plan as a suggestion through the UserPromptSubmit hook's additionalContext, the model
/// takes it by its id and reports success, and a third session in those words gets a verified hit.
#[test]
fn codex_takes_a_suggested_plan_and_its_wording_becomes_a_hit() {
    if opted_out("codex_takes_a_suggested_plan_and_its_wording_becomes_a_hit") {
        return;
    }
    let s = Scratch::new();
    // Each session points the config at its own mock (port 9 is no server: none runs before).
    configure(&s, 9);
    s.install("codex");
    s.lower_suggestion_floors();
    let tmp = tempfile::tempdir().unwrap();
    let patch =
        "*** Begin Patch\n*** Update File: notes.txt\n@@\n Notes\n-teh quick fox\n+the quick fox\n*** End Patch\n";
    let first = json!([
        {"name": "exec_command", "arguments": {"cmd": "cat notes.txt"}},
        {"name": "apply_patch", "input": patch},
    ]);
    let tools = Tools { api: Api::Responses, prefix: "mcp__refrain__", args: "arguments" };
    take_a_suggestion(&s, tools, first, |dir, script, prompt| {
        let mock = Mock::start(Api::Responses, &tmp.path().join(dir), script);
        repoint(&s, mock.port);
        let (_, took) = session(&s, &mock, prompt);
        eprintln!("codex suggestion {dir}: {} ms", took.as_millis());
        mock
    });
}
