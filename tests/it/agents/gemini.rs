//! Gemini CLI (0.61.0) end to end: two `gemini -p` sessions through the hooks, against refrain's
//! mock of the Gemini API on loopback.
//!
//! Gemini CLI is pointed at the mock with `GOOGLE_GEMINI_BASE_URL` and a fake `GEMINI_API_KEY`
//! (API-key auth selected in settings); usage statistics, telemetry and update checks are off in
//! its settings. The project is a trusted folder, as a user would mark it: Gemini CLI ignores a
//! project's settings and refuses `--yolo` elsewhere. Gemini CLI shows MCP tool results to the
//! model as text, so the checks read refrain's human text rather than its JSON.

use super::clients::{Clients, opted_out};
use super::mock::{Api, Mock};
use super::*;
use serde_json::json;

/// Gemini CLI's user settings for an offline test machine (before install.sh adds refrain).
fn configure(s: &Scratch) {
    let dir = s.home.join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = json!({
        "privacy": {"usageStatisticsEnabled": false},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "telemetry": {"enabled": false},
        "security": {"auth": {"selectedType": "gemini-api-key"}},
    });
    std::fs::write(dir.join("settings.json"), serde_json::to_vec_pretty(&settings).unwrap()).unwrap();
    let trusted = json!({s.project.to_string_lossy(): "TRUST_FOLDER"});
    std::fs::write(dir.join("trustedFolders.json"), trusted.to_string()).unwrap();
}

/// Runs `gemini -p PROMPT --yolo` in the project against the mock; returns stdout and the wall time.
fn session(s: &Scratch, mock: &Mock, prompt: &str) -> (String, Duration) {
    let clients = Clients::get();
    let mut cmd = Command::new(clients.bin("gemini"));
    cmd.args(["-p", prompt, "--yolo", "--output-format", "json"])
        .current_dir(&s.project)
        .env_clear()
        .env("PATH", clients.path())
        .env("HOME", &s.home)
        .env("GOOGLE_GEMINI_BASE_URL", format!("http://127.0.0.1:{}", mock.port))
        .env("GEMINI_API_KEY", "offline-test");
    let (out, took) = run_agent(cmd, &mock.log.join("gemini"), SESSION_LIMIT);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "gemini failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    (stdout, took)
}

fn cache_get_notes() -> Value {
    json!({"namespace": "hooks/gemini-cli", "tool": "read_file", "args": {"file_path": NOTES}})
}

#[test]
fn gemini_cli_sessions_reach_refrain_dedup_a_read_store_a_plan_and_get_it_back() {
    if opted_out("gemini_cli_sessions_reach_refrain_dedup_a_read_store_a_plan_and_get_it_back") {
        return;
    }
    let s = Scratch::new();
    configure(&s);
    let log = s.install("gemini");
    assert!(log.contains(".gemini/settings.json"), "{log}");

    let script = json!({"steps": [
        {"name": "read_file", "args": {"file_path": NOTES}},
        {"name": "read_file", "args": {"file_path": GUIDE}},
        {"name": "read_file", "args": {"file_path": GUIDE}},
        {"name": "mcp_refrain_response_cache_get", "args": cache_get_notes()},
        {"name": "replace", "args": {"file_path": NOTES, "old_string": "teh", "new_string": "the",
            "instruction": "Fix the typo teh -> the"}},
        {"name": "mcp_refrain_response_cache_get", "args": cache_get_notes()},
        {"name": "mcp_refrain_cache_stats", "args": {}},
    ], "final": "Fixed the typo in notes.txt."});
    let tmp = tempfile::tempdir().unwrap();
    let mock = Mock::start(Api::Gemini, &tmp.path().join("s1"), &script);
    let (_, took) = session(&s, &mock, "Fix the typo in notes.txt");
    eprintln!("gemini session 1: {} ms", took.as_millis());

    let calls = mock.calls(Api::Gemini);
    assert_eq!(calls.len(), 7, "the session did not run every scripted step: {calls:#?}");
    assert_second_read_deduplicated(&calls, "read_file");
    let gets = texts_of(&calls, "mcp_refrain_response_cache_get");
    assert!(gets[0].starts_with("hit"), "the AfterTool hook did not record the read: {}", gets[0]);
    assert!(gets[1].starts_with("miss"), "the replace did not invalidate the recorded read: {}", gets[1]);
    assert_stats_text(&texts_of(&calls, "mcp_refrain_cache_stats")[0], &s);
    assert_eq!(std::fs::read_to_string(s.project.join(NOTES)).unwrap(), "Notes\nthe quick fox\n");

    let plans = s.plans();
    assert_eq!(plans.len(), 1, "the AfterAgent hook stored no plan: {plans:?}");
    assert!(plans[0].contains("Fix the typo in notes.txt"), "{plans:?}");
    let plan_id = plans[0].split_whitespace().next().unwrap().to_string();

    let script = json!({"steps": [
        {"name": "mcp_refrain_plan_feedback", "args": {"plan_id": plan_id, "outcome": "success"}},
    ], "final": "Done."});
    // A hook offers only plans this user has seen work: report the first session's success.
    assert!(s.refrain(&["plans", "feedback", &plan_id, "success"]).contains("your reports 1 worked"));
    let mock2 = Mock::start(Api::Gemini, &tmp.path().join("s2"), &script);
    let (_, took) = session(&s, &mock2, "Please fix the typo in notes.txt");
    eprintln!("gemini session 2: {} ms", took.as_millis());
    assert_plan_handed_back(&mock2, Api::Gemini, &plan_id);
}

/// The same short session without and with refrain: what refrain adds to each request Gemini CLI
/// sends, within the budget.
#[test]
fn gemini_cli_requests_carry_at_most_the_budget_of_refrain() {
    if opted_out("gemini_cli_requests_carry_at_most_the_budget_of_refrain") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let script = json!({"steps": [{"name": "read_file", "args": {"file_path": NOTES}}], "final": "Read it."});
    let bare = Scratch::new();
    configure(&bare);
    let m0 = Mock::start(Api::Gemini, &tmp.path().join("bare"), &script);
    session(&bare, &m0, "Read notes.txt");
    let s = Scratch::new();
    s.default_tools();
    configure(&s);
    s.install("gemini");
    let m1 = Mock::start(Api::Gemini, &tmp.path().join("with"), &script);
    session(&s, &m1, "Read notes.txt");
    Overhead::measure(&m0, &m1).assert_within("gemini-cli", refrain::tools::surface::BUDGET_TOKENS);
}

/// Issue 29's subagent case with the real Gemini CLI: the main agent reads the guide, then starts
/// the generalist subagent (`invoke_agent`), whose reads of the guide reach the AfterTool hook with the main
/// session's payload (nothing in it says a subagent made the call). The subagent must be shown
/// the file, never refrain's note.
#[test]
fn gemini_cli_subagents_are_never_told_they_have_a_file_their_parent_read() {
    if opted_out("gemini_cli_subagents_are_never_told_they_have_a_file_their_parent_read") {
        return;
    }
    let s = Scratch::new();
    configure(&s);
    s.install("gemini");
    let marker = "SUBAGENT-READS-THE-GUIDE";
    let read = json!({"name": "read_file", "args": {"file_path": GUIDE}});
    let script = json!({"steps": [
        read,
        {"name": "invoke_agent", "args": {"agent_name": "generalist",
            "prompt": format!("{marker}: read guide.md and say what step 30 is")}},
    ], "final": "Done.", "agents": {marker: {"steps": [
        read,
        read,
        {"name": "complete_task", "args": {"result": {"response": "Step 30 checks the build."}}},
    ], "final": "Step 30 checks the build."}}});
    let tmp = tempfile::tempdir().unwrap();
    let mock = Mock::start(Api::Gemini, &tmp.path().join("s"), &script);
    let (_, took) = session(&s, &mock, "Have a subagent check the release guide");
    eprintln!("gemini subagent session: {} ms", took.as_millis());

    let main = mock.calls_in(Api::Gemini, marker, false);
    assert!(main.iter().any(|c| c["name"] == "invoke_agent"), "the subagent was not started: {main:#?}");
    let first = main.iter().find(|c| c["name"] == "read_file").and_then(|c| c["result"].as_str());
    assert!(first.is_some_and(|t| t.contains("Step 30 of the release guide")), "the parent's read: {main:#?}");
    let sub = mock.calls_in(Api::Gemini, marker, true);
    let texts: Vec<&str> =
        sub.iter().filter(|c| c["name"] == "read_file").filter_map(|c| c["result"].as_str()).collect();
    assert_eq!(texts.len(), 2, "the subagent did not run its two reads: {sub:#?}");
    assert!(!texts.iter().any(|t| t.contains("[refrain]")), "the subagent was told it had the file: {texts:#?}");
    assert!(texts[0].contains("Step 30 of the release guide"), "the subagent's first read: {texts:#?}");
}

/// The agent is the judge, end to end (`take_a_suggestion`): a reworded second `gemini -p` gets
/// the stored plan as a suggestion through the BeforeAgent hook's additionalContext, the model
/// takes it by its id and reports success, and a third session in those words gets a verified hit.
#[test]
fn gemini_cli_takes_a_suggested_plan_and_its_wording_becomes_a_hit() {
    if opted_out("gemini_cli_takes_a_suggested_plan_and_its_wording_becomes_a_hit") {
        return;
    }
    let s = Scratch::new();
    configure(&s);
    s.install("gemini");
    s.lower_suggestion_floors();
    let tmp = tempfile::tempdir().unwrap();
    let first = json!([
        {"name": "read_file", "args": {"file_path": NOTES}},
        {"name": "replace", "args": {"file_path": NOTES, "old_string": "teh", "new_string": "the",
            "instruction": "Fix the typo teh -> the"}},
    ]);
    let tools = Tools { api: Api::Gemini, prefix: "mcp_refrain_", args: "args" };
    take_a_suggestion(&s, tools, first, |dir, script, prompt| {
        let mock = Mock::start(Api::Gemini, &tmp.path().join(dir), script);
        let (_, took) = session(&s, &mock, prompt);
        eprintln!("gemini suggestion {dir}: {} ms", took.as_millis());
        mock
    });
}
