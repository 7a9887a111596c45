//! A prompt that only answers its conversation ("yes", "push") is no task of its own, through the
//! real binary and its hooks: the Stop hook stores no plan for such a turn, `plan_store` refuses
//! one with how to fix it, and the prompt hook and `plan_lookup` serve and suggest nothing for it,
//! while a task that says what to do is stored and handed back as before.

use crate::plan_frame::{PROMPT, STOP, hook, transcript};
use crate::support::Env;
use serde_json::json;

const TASK: &str = "push the release branch to origin";
const COMMAND: &str = "git push origin release";

#[tokio::test]
async fn a_reply_to_the_conversation_gets_no_plan_stored_served_or_suggested() {
    let env = Env::without_model();
    let server = env.serve().await;
    let tmp = tempfile::tempdir().unwrap();
    // Two turns that ran the same command: one asked from scratch, one a bare "yes".
    let asked = transcript(tmp.path(), "asked.jsonl", Some((TASK, COMMAND)));
    for (n, reply) in ["yes", "push", "1"].into_iter().enumerate() {
        let t = transcript(tmp.path(), &format!("reply{n}.jsonl"), Some((reply, COMMAND)));
        assert_eq!(hook(&env, "Stop", STOP, &t, None).await, "");
    }
    assert_eq!(hook(&env, "Stop", STOP, &asked, None).await, "");
    let plans = server.ok("plan_list", json!({})).await["plans"].as_array().cloned().unwrap_or_default();
    let tasks: Vec<&str> = plans.iter().filter_map(|p| p["provenance"]["task"].as_str()).collect();
    assert_eq!(tasks, [TASK], "only the task asked from scratch is stored: {plans:#?}");
    let id = plans[0]["id"].as_str().unwrap().to_string();

    // Stored by hand, a reply is refused with what to do instead; nothing stored is lost.
    let step = json!({"steps": [{"tool": "Bash", "inputs": {"command": COMMAND}}]});
    let refused = server.err("plan_store", json!({"task": "yes", "template": step})).await;
    assert!(refused.contains("does not say what to do on its own") && refused.contains("from scratch"), "{refused}");
    assert_eq!(server.ok("plan_list", json!({})).await["plans"].as_array().map(Vec::len), Some(1));

    // The asked task comes back through the prompt hook once it worked; the reply gets nothing.
    server.ok("plan_feedback", json!({"plan_id": id, "outcome": "success"})).await;
    let given = hook(&env, "UserPromptSubmit", PROMPT, &asked, Some(TASK)).await;
    assert!(given.contains(&id) && given.contains(COMMAND), "{given}");
    assert_eq!(hook(&env, "UserPromptSubmit", PROMPT, &asked, Some("yes")).await, "");
    let looked = server.ok("plan_lookup", json!({"task": "push"})).await;
    assert_eq!(looked["status"], "miss", "{looked}");
    assert!(looked["suggestions"].as_array().is_none_or(Vec::is_empty), "{looked}");
    assert!(looked["reason"].as_str().is_some_and(|r| r.contains("answers the conversation")), "{looked}");
    server.stop().await;
}
