//! Qwen Code (0.24.4) end to end: two `qwen -p` sessions through its Claude-format hooks, against
//! refrain's OpenAI-compatible mock on loopback.
//!
//! Qwen Code reads `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `OPENAI_MODEL` with OpenAI auth selected
//! in its settings; usage statistics, telemetry and update checks are off there, and MCP tools
//! are offered directly rather than behind its tool search. Qwen Code answers a repeated
//! `read_file` with its own note, so the repeated read here is a shell `cat`, which refrain
//! answers by stopping the call with its note as the result (Qwen Code's only route).
//!
//! Qwen Code's shell tool stops waiting for a command's pipes a fixed time after the process exits,
//! so on a loaded machine a fast `cat` may come back as `Output: (empty)` (such a call is no read
//! for refrain either). The guide is therefore read four times: after a `cat` that showed it, the
//! next one whose output Qwen Code kept must carry refrain's note. (Three reads were not always
//! enough under a full `cargo test` on 2 cores: empty, shown, empty.)

use super::clients::{Clients, opted_out};
use super::mock::{Api, Mock};
use super::*;
use serde_json::json;

/// Qwen Code's user settings for an offline test machine (before install.sh adds refrain).
fn configure(s: &Scratch) {
    let dir = s.home.join(".qwen");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = json!({
        "security": {"auth": {"selectedType": "openai"}},
        "privacy": {"usageStatisticsEnabled": false},
        "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
        "telemetry": {"enabled": false},
        "model": {"name": "mock-model"},
        "tools": {"toolSearch": {"enabled": false}},
    });
    std::fs::write(dir.join("settings.json"), serde_json::to_vec_pretty(&settings).unwrap()).unwrap();
}

/// Runs `qwen -p PROMPT --yolo` in the project; returns stdout and the wall time.
fn session(s: &Scratch, mock: &Mock, prompt: &str) -> (String, Duration) {
    let clients = Clients::get();
    let mut cmd = Command::new(clients.bin("qwen"));
    cmd.args(["-p", prompt, "--yolo", "--output-format", "json"])
        .current_dir(&s.project)
        .env_clear()
        .env("PATH", clients.path())
        .env("HOME", &s.home)
        .env("OPENAI_BASE_URL", format!("http://127.0.0.1:{}/v1", mock.port))
        .env("OPENAI_API_KEY", "offline-test")
        .env("OPENAI_MODEL", "mock-model")
        .env("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1");
    let (out, took) = run_agent(cmd, &mock.log.join("qwen"), SESSION_LIMIT);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "qwen failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    (stdout, took)
}

/// A `cat` of the guide showed it, and the next one whose output Qwen Code kept carries refrain's
/// note instead of the file; returns how many carried the note.
fn assert_a_repeated_cat_is_deduplicated(calls: &[Value]) -> usize {
    let texts: Vec<&str> = calls
        .iter()
        .filter(|c| c["name"] == "run_shell_command" && c["input"].to_string().contains(GUIDE))
        .map(|c| c["result"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(texts.len(), 4, "the guide was not read four times: {calls:#?}");
    let shown = texts.iter().position(|t| t.contains("Step 30 of the release guide"));
    let first = shown.unwrap_or_else(|| panic!("no cat of the guide showed it: {texts:#?}"));
    let next = texts[first + 1..].iter().find(|t| !t.contains("Output: (empty)"));
    assert!(
        next.is_some_and(|t| t.contains("[refrain]")
            && t.contains("unchanged since your read at message")
            && !t.contains("Step 30 of the release guide")),
        "the repeated read was not answered by refrain's note: {texts:#?}"
    );
    texts.iter().filter(|t| t.contains("[refrain]")).count()
}

#[test]
fn qwen_code_sessions_reach_refrain_dedup_a_read_store_a_plan_and_get_it_back() {
    if opted_out("qwen_code_sessions_reach_refrain_dedup_a_read_store_a_plan_and_get_it_back") {
        return;
    }
    let s = Scratch::new();
    configure(&s);
    let log = s.install("qwen");
    assert!(log.contains(".qwen/settings.json"), "{log}");

    let notes = s.file(NOTES);
    let cache_get =
        json!({"namespace": "hooks/qwen-code", "tool": "run_shell_command", "args": {"command": "cat notes.txt"}});
    let cat = |f: &str| json!({"name": "run_shell_command", "arguments": {"command": format!("cat {f}")}});
    let script = json!({"steps": [
        cat(NOTES),
        cat(GUIDE),
        cat(GUIDE),
        cat(GUIDE),
        cat(GUIDE),
        {"name": "mcp__refrain__response_cache_get", "arguments": cache_get},
        {"name": "read_file", "arguments": {"file_path": notes}},
        {"name": "edit", "arguments": {"file_path": notes, "old_string": "teh", "new_string": "the"}},
        {"name": "mcp__refrain__response_cache_get", "arguments": cache_get},
        {"name": "mcp__refrain__cache_stats", "arguments": {}},
    ], "final": "Fixed the typo in notes.txt."});
    let tmp = tempfile::tempdir().unwrap();
    let mock = Mock::start(Api::Chat, &tmp.path().join("s1"), &script);
    let (_, took) = session(&s, &mock, "Fix the typo in notes.txt");
    eprintln!("qwen session 1: {} ms", took.as_millis());

    let calls = mock.calls(Api::Chat);
    assert_eq!(calls.len(), 10, "the session did not run every scripted step: {calls:#?}");
    let notes = assert_a_repeated_cat_is_deduplicated(&calls);
    let gets = results_of(&calls, "mcp__refrain__response_cache_get");
    assert_eq!(gets[0]["status"], "hit", "the PostToolUse hook did not record the cat: {}", gets[0]);
    assert_eq!(gets[1]["status"], "miss", "the edit did not invalidate the recorded read: {}", gets[1]);
    let stats = &results_of(&calls, "mcp__refrain__cache_stats")[0];
    assert_registered_settings_reached_the_server(stats, &s);
    assert_eq!(stats["counters"]["dedup"]["reads_deduplicated"], notes, "the dedup was not counted: {stats}");
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
    let mock2 = Mock::start(Api::Chat, &tmp.path().join("s2"), &script);
    let (_, took) = session(&s, &mock2, "Please fix the typo in notes.txt");
    eprintln!("qwen session 2: {} ms", took.as_millis());
    assert_plan_handed_back(&mock2, Api::Chat, &plan_id);
}

/// The same short session without and with refrain: what refrain adds to each request Qwen Code
/// sends (MCP tools offered directly, as the sessions configure it), within the budget.
#[test]
fn qwen_code_requests_carry_at_most_the_budget_of_refrain() {
    if opted_out("qwen_code_requests_carry_at_most_the_budget_of_refrain") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cat = json!({"name": "run_shell_command", "arguments": {"command": "cat notes.txt"}});
    let script = json!({"steps": [cat], "final": "Read it."});
    let bare = Scratch::new();
    configure(&bare);
    let m0 = Mock::start(Api::Chat, &tmp.path().join("bare"), &script);
    session(&bare, &m0, "Read notes.txt");
    let s = Scratch::new();
    s.default_tools();
    configure(&s);
    s.install("qwen");
    let m1 = Mock::start(Api::Chat, &tmp.path().join("with"), &script);
    session(&s, &m1, "Read notes.txt");
    Overhead::measure(&m0, &m1).assert_within("qwen-code", refrain::tools::surface::BUDGET_TOKENS);
}

/// Issue 29's subagent case with the real Qwen Code: the main agent cats the guide, then starts a
/// subagent (in the foreground) whose every action cats the guide too. Qwen Code gives the
/// subagent's hook payloads its agent_id and the main session's transcript, where the parent's
/// read is: the subagent must be shown the file, never refrain's note.
#[test]
fn qwen_code_subagents_are_never_told_they_have_a_file_their_parent_read() {
    if opted_out("qwen_code_subagents_are_never_told_they_have_a_file_their_parent_read") {
        return;
    }
    let s = Scratch::new();
    configure(&s);
    s.install("qwen");
    let marker = "SUBAGENT-READS-THE-GUIDE";
    let cat = json!({"name": "run_shell_command", "arguments": {"command": format!("cat {GUIDE}")}});
    // The parent cats three times and the subagent four: any one `cat` may come back empty (above).
    let script = json!({"steps": [
        cat, cat, cat,
        {"name": "agent", "arguments": {"description": "Check the guide", "run_in_background": false,
            "prompt": format!("{marker}: read guide.md and say what step 30 is")}},
    ], "final": "Done.", "agents": {marker: {"steps": [cat, cat, cat, cat], "final": "Step 30 checks the build."}}});
    let tmp = tempfile::tempdir().unwrap();
    let mock = Mock::start(Api::Chat, &tmp.path().join("s"), &script);
    let (_, took) = session(&s, &mock, "Have a subagent check the release guide");
    eprintln!("qwen subagent session: {} ms", took.as_millis());

    let main = mock.calls_in(Api::Chat, marker, false);
    assert!(main.iter().any(|c| c["name"] == "agent"), "the subagent was not started: {main:#?}");
    let shown =
        |c: &&Value| c["name"] == "run_shell_command" && c["result"].to_string().contains("Step 30 of the release");
    assert!(main.iter().any(|c| shown(&c)), "no read of the parent's showed the guide: {main:#?}");
    let sub = mock.calls_in(Api::Chat, marker, true);
    let texts: Vec<&str> = sub.iter().filter_map(|c| c["result"].as_str()).collect();
    assert_eq!(texts.len(), 4, "the subagent did not run its four reads: {sub:#?}");
    assert!(!texts.iter().any(|t| t.contains("[refrain]")), "the subagent was told it had the file: {texts:#?}");
    assert!(texts.iter().any(|t| t.contains("Step 30 of the release guide")), "no read showed the file: {texts:#?}");
}

/// The agent is the judge, end to end (`take_a_suggestion`): a reworded second `qwen -p` gets the
/// stored plan as a suggestion through the UserPromptSubmit hook's additionalContext, the model
/// takes it by its id and reports success, and a third session in those words gets a verified hit.
#[test]
fn qwen_code_takes_a_suggested_plan_and_its_wording_becomes_a_hit() {
    if opted_out("qwen_code_takes_a_suggested_plan_and_its_wording_becomes_a_hit") {
        return;
    }
    let s = Scratch::new();
    configure(&s);
    s.install("qwen");
    s.lower_suggestion_floors();
    let tmp = tempfile::tempdir().unwrap();
    let notes = s.file(NOTES);
    let first = json!([
        {"name": "read_file", "arguments": {"file_path": notes}},
        {"name": "edit", "arguments": {"file_path": notes, "old_string": "teh", "new_string": "the"}},
    ]);
    let tools = Tools { api: Api::Chat, prefix: "mcp__refrain__", args: "arguments" };
    take_a_suggestion(&s, tools, first, |dir, script, prompt| {
        let mock = Mock::start(Api::Chat, &tmp.path().join(dir), script);
        let (_, took) = session(&s, &mock, prompt);
        eprintln!("qwen suggestion {dir}: {} ms", took.as_millis());
        mock
    });
}
