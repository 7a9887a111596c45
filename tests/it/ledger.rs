//! The savings ledger through the real binary: hooks report what refrain added and the requests
//! that carried its tool list, tools record their replies, and `cache_stats` and `refrain report`
//! show the net with every line behind it.

use crate::support::{Env, text};
use serde_json::{Value, json};
use std::process::Stdio;
use tokio::io::AsyncWriteExt;

const TASK: &str = "add a `--verbose` flag to src/main.rs";

/// Runs `refrain hook AGENT EVENT` on the env's project with `payload`; returns stdout.
async fn hook(env: &Env, agent: &str, event: &str, payload: Value) -> String {
    let mut cmd = env.cmd(&["hook", agent, event]);
    cmd.current_dir(env.root()).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = cmd.spawn().expect("spawn hook");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(payload.to_string().as_bytes()).await.expect("payload");
    drop(stdin);
    let out = child.wait_with_output().await.expect("hook ran");
    assert!(out.status.success(), "hook {agent} {event} failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn payload(env: &Env, event: &str, extra: Value) -> Value {
    let mut v = json!({"session_id": "s-ledger", "cwd": env.root(), "hook_event_name": event,
        "transcript_path": env.root().join("no-transcript.jsonl")});
    if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
        o.extend(e);
    }
    v
}

#[tokio::test]
async fn hooks_and_tools_fill_the_ledger_and_stats_and_report_show_the_net_with_its_lines() {
    let env = Env::new();
    let s = env.serve().await;
    let trace = json!({"context": {"flag": "--verbose", "path": "src/main.rs"}, "steps": [
        {"tool": "Read", "inputs": {"file_path": "src/main.rs"}},
        {"tool": "Edit", "inputs": {"file_path": "src/main.rs", "new_string": "--verbose"}},
        {"tool": "Bash", "inputs": {"command": "cargo test"}}]});
    let stored = s.ok("plan_store", json!({"task": TASK, "trace": trace})).await;
    let plan_id = stored["plan_id"].as_str().expect("plan id").to_string();

    // The prompt hook injects the plan (an Injected line), a finished tool call counts a request.
    let out = hook(&env, "codex", "UserPromptSubmit", payload(&env, "UserPromptSubmit", json!({"prompt": TASK}))).await;
    let injected: Value = serde_json::from_str(out.trim()).expect("the hook answered with the plan");
    let context = injected["hookSpecificOutput"]["additionalContext"].as_str().expect("context text").to_string();
    let post = json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": "a b c"});
    hook(&env, "codex", "PostToolUse", payload(&env, "PostToolUse", post)).await;
    // A lookup through the tool is a reply the ledger counts too.
    let miss =
        s.call("plan_lookup", json!({"task": "rename the function `parse` to `parse_args` in src/cli.rs"})).await;
    assert!(text(&miss).starts_with("miss"), "{}", text(&miss));

    let stats = s.ok("cache_stats", json!({"ledger_lines": 50})).await;
    let l = &stats["ledger"];
    let per_request = refrain::tools::surface::per_request_tokens("codex", &Default::default());
    assert_eq!(l["tokenizer"], "o200k_base", "{l}");
    assert_eq!(l["requests"], 2, "the prompt and the tool call each precede a request: {l}");
    assert_eq!(l["fixed"], 2 * per_request, "{l}");
    assert_eq!(l["per_agent"]["codex"]["requests"], 2, "{l}");
    let injected_tokens = refrain::tokens::count(&context);
    assert_eq!(l["per_kind"]["injected"]["added"], injected_tokens, "the injected text is counted exactly: {l}");
    assert_eq!(l["per_kind"]["plan_miss"]["lines"], 1, "{l}");
    assert!(
        l["per_kind"].get("plan_hit").is_none(),
        "the hook's own lookup reaches no model, so it is not counted: {l}"
    );
    let (removed, added, fixed) =
        (l["removed"].as_i64().unwrap(), l["added"].as_i64().unwrap(), l["fixed"].as_i64().unwrap());
    assert_eq!(l["net"].as_i64().unwrap(), removed - added - fixed, "{l}");
    assert!(l["net"].as_i64().unwrap() < 0, "nothing was removed yet, so the net is a cost: {l}");
    let lines = l["lines"].as_array().expect("lines listed");
    assert!(
        lines.iter().any(|x| x["kind"] == "injected" && x["subject"] == plan_id.as_str() && x["agent"] == "codex"),
        "{l}"
    );
    assert!(text(&s.call("cache_stats", json!({})).await).contains("net -"), "the stats text says the net");

    // `refrain report --ledger` lists the same lines; the summary is net, never gross alone.
    let empty = tempfile::tempdir().unwrap();
    let out = env
        .cmd(&["report", "--ledger", "20"])
        .env("CLAUDE_CONFIG_DIR", empty.path())
        .env("CODEX_HOME", empty.path())
        .env("HOME", empty.path())
        .output()
        .await
        .expect("report ran");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    assert!(report.contains("REFRAIN SAVED, NET"), "{report}");
    let net = format!("-{}", refrain::report::text::num(fixed as u64 + added as u64 - removed as u64));
    assert!(report.contains(&net), "the report's net ({net}) is the ledger's: {report}");
    assert!(report.contains("injected") && report.contains(&plan_id), "every line can be audited: {report}");
}
