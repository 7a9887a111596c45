//! Accepting a plan suggestion over MCP with the real binary and model: an agent that judges a
//! suggested plan's task to be its own calls plan_lookup again with the suggestion's `plan_id`
//! and gets the steps filled with its own values, or the slots it must give in `context`;
//! never a hit (hit counters and the plan's hit stamp stay as they were), counted apart, and an
//! unknown, quarantined or other project's id is refused with the fix.

use crate::fixtures::{OLD_LOGS, cosine_at, one_step, store_old_logs};
use crate::support::{Env, Server};
use serde_json::{Value, json};

/// A calibration that serves no rephrasing (plain cosine must reach 0.99), so near matches come
/// back as suggestions.
fn strict() -> Value {
    cosine_at("plan", 0.99)
}

async fn serve_with_old_logs(env: &Env) -> (Server, String) {
    let mut cmd = env.cmd(&["serve"]);
    cmd.env("REFRAIN__PLANS__SUGGEST_MIN_SCORE", "0.5");
    let s = Server::spawn(cmd).await;
    let id = store_old_logs(&s).await;
    (s, id)
}

fn plan_counters(stats: &Value) -> &Value {
    &stats["counters"]["plans"]
}

#[tokio::test]
async fn an_accepted_suggestion_carries_the_new_tasks_values_and_is_never_a_hit() {
    let env = Env::with_calibration(&strict());
    let (s, id) = serve_with_old_logs(&env).await;
    let task = "which files under /srv/www were modified more than 7 days ago";
    let miss = s.ok("plan_lookup", json!({"task": task, "explain": true})).await;
    assert_eq!(miss["status"], "miss", "{miss}");
    assert_eq!(miss["suggestions"][0]["plan_id"], id.as_str(), "{miss}");
    assert_eq!(miss["suggestions"][0]["failed"], "verifier", "{miss}");
    let a = s.ok("plan_lookup", json!({"task": task, "plan_id": id})).await;
    assert_eq!(a["status"], "accepted", "{a}");
    assert!(a.get("hit").is_none_or(Value::is_null), "an accepted plan is not a hit: {a}");
    assert_eq!(a["accepted"]["steps"][0]["inputs"]["command"], "find /srv/www -mtime +7", "{a}");
    assert_eq!(a["accepted"]["task"], OLD_LOGS, "{a}");
    assert_eq!(a["accepted"]["unfilled"], json!([]), "{a}");
    let again = s.ok("plan_lookup", json!({"task": task, "plan_id": id})).await;
    assert_eq!(again["accepted"]["counters"]["hits"], 0, "no hit stamp on the plan: {again}");
    let stats = s.ok("cache_stats", json!({"area": "plans"})).await;
    let c = plan_counters(&stats);
    assert!(c.get("hits").is_none(), "accepting is never a hit: {stats}");
    assert_eq!((c["suggestions_accepted"].as_u64(), c["misses"].as_u64()), (Some(2), Some(1)), "{stats}");
    let summary = crate::support::text(&s.call("cache_stats", json!({"area": "plans"})).await);
    assert!(summary.contains("2 suggestions accepted"), "{summary}");

    // A failure reported on an accepted plan counts, but neither raises its bar nor quarantines it.
    for _ in 0..3 {
        let out = s.ok("plan_feedback", json!({"plan_id": id, "outcome": "failure", "accepted": true})).await;
        assert!(out["quarantined"].is_null(), "{out}");
        let c = &out["counters"];
        assert_eq!((c["bias"].as_f64(), c["failure_streak"].as_u64()), (Some(0.0), Some(0)), "{out}");
    }
    let l = s.ok("plan_lookup", json!({"task": task, "explain": true})).await;
    let cand =
        l["explain"]["candidates"].as_array().unwrap().iter().find(|c| c["plan_id"] == id.as_str()).unwrap().clone();
    assert!((cand["verifier"]["threshold"].as_f64().unwrap() - 0.99).abs() < 1e-3, "the bar did not move: {l}");
    let hit = s.ok("plan_lookup", json!({"task": OLD_LOGS, "explain": true})).await;
    assert_eq!(hit["status"], "hit", "still served for its own task: {hit}");
}

#[tokio::test]
async fn a_slot_the_task_cannot_fill_is_listed_then_filled_from_context() {
    let env = Env::with_calibration(&strict());
    let (s, id) = serve_with_old_logs(&env).await;
    let task = "find files modified more than 14 days ago";
    let miss = s.ok("plan_lookup", json!({"task": task, "explain": true})).await;
    assert_eq!(miss["status"], "miss", "{miss}");
    // Only the value gate refused it: it comes back as a suggestion the agent can complete.
    assert_eq!(miss["suggestions"][0]["plan_id"], id.as_str(), "{miss}");
    assert_eq!(miss["suggestions"][0]["failed"], "required_slots", "{miss}");
    let a = s.ok("plan_lookup", json!({"task": task, "plan_id": id})).await;
    assert_eq!(a["status"], "needs_values", "{a}");
    let unfilled = a["accepted"]["unfilled"].as_array().unwrap();
    assert_eq!(unfilled.len(), 1, "{a}");
    assert_eq!(
        (unfilled[0]["kind"].as_str(), unfilled[0]["example"].as_str()),
        (Some("path"), Some("/var/log")),
        "{a}"
    );
    let name = unfilled[0]["name"].as_str().unwrap().to_string();
    let command = a["accepted"]["steps"][0]["inputs"]["command"].as_str().unwrap();
    assert!(command.contains(&format!("{{{{params.{name}}}}}")) && command.contains("+14"), "no guess: {a}");
    let stats = s.ok("cache_stats", json!({"area": "plans"})).await;
    assert_eq!(plan_counters(&stats)["accepts_need_values"], 1, "{stats}");
    assert!(plan_counters(&stats).get("suggestions_accepted").is_none(), "{stats}");

    let done = s.ok("plan_lookup", json!({"task": task, "plan_id": id, "context": {name.clone(): "/srv"}})).await;
    assert_eq!(done["status"], "accepted", "{done}");
    assert_eq!(done["accepted"]["steps"][0]["inputs"]["command"], "find /srv -mtime +14", "{done}");
    assert_eq!(done["accepted"]["sources"][&name], "context", "{done}");
}

#[tokio::test]
async fn unknown_quarantined_and_unusable_ids_are_refused_with_the_fix() {
    let env = Env::with_calibration(&strict());
    let (s, id) = serve_with_old_logs(&env).await;
    let task = "which files under /srv/www were modified more than 7 days ago";
    let err = s.err("plan_lookup", json!({"task": task, "plan_id": "p-nope"})).await;
    assert!(err.contains("no plan with id p-nope") && err.contains("suggestion.plan_id"), "{err}");
    let caps = json!({"tool_families": ["fs"]});
    let err = s.err("plan_lookup", json!({"task": task, "plan_id": id, "caps": caps})).await;
    assert!(err.contains("tool_families") && err.contains("shell"), "{err}");
    for _ in 0..3 {
        s.ok("plan_feedback", json!({"plan_id": id, "outcome": "failure"})).await;
    }
    let err = s.err("plan_lookup", json!({"task": task, "plan_id": id})).await;
    assert!(err.contains("quarantined") && err.contains("release"), "{err}");
    let stats = s.ok("cache_stats", json!({"area": "plans"})).await;
    assert!(plan_counters(&stats).get("suggestions_accepted").is_none(), "{stats}");
}

#[tokio::test]
async fn a_plan_id_from_another_project_is_refused() {
    let env = Env::with_calibration(&strict());
    let (s, id) = serve_with_old_logs(&env).await;
    let other = tempfile::TempDir::new().unwrap();
    // The same home and model, another project: its own plan library.
    let mut cmd = tokio::process::Command::new(crate::support::bin());
    cmd.args(["serve", "--project"])
        .arg(other.path())
        .env("REFRAIN_HOME", env.home.path())
        .env("REFRAIN_MODEL_DIR", &env.models)
        .env_remove("REFRAIN_PROJECT")
        .kill_on_drop(true);
    let b = Server::spawn(cmd).await;
    let task = "which files under /srv/www were modified more than 7 days ago";
    let err = b.err("plan_lookup", json!({"task": task, "plan_id": id})).await;
    assert!(err.contains("in this project's plan library"), "{err}");
    let a = s.ok("plan_lookup", json!({"task": task, "plan_id": id})).await;
    assert_eq!(a["status"], "accepted", "its own project accepts it: {a}");
}

#[tokio::test]
async fn a_stored_value_spelled_another_way_in_the_accepted_steps_takes_the_new_value() {
    let env = Env::with_calibration(&strict());
    let s = env.serve().await;
    let trace = json!({"steps": [
        {"tool": "Grep", "inputs": {"pattern": "\\brun_server\\b", "path": "src"}, "side_effect": false, "family": "fs"},
        {"tool": "Edit", "inputs": {"file_path": "src/lib.rs", "old_string": "fn run_server(", "new_string": "fn serve("}, "side_effect": true, "family": "fs"}
    ]});
    let stored = s.ok("plan_store", json!({"task": "rename fn run_server to serve", "trace": trace})).await;
    let a = s.ok("plan_lookup", json!({"task": "rename fn start to launch", "plan_id": stored["plan_id"]})).await;
    assert_eq!(a["status"], "accepted", "{a}");
    assert_eq!(a["accepted"]["steps"][1]["inputs"]["old_string"], "fn start(", "{a}");
    // The grep pattern spelled the stored name in another way (`\brun_server\b`): the agent took
    // the plan, so that spelling takes the new name too, and nothing stale is left to name.
    assert_eq!(a["accepted"]["steps"][0]["inputs"]["pattern"], "\\bstart\\b", "the pattern kept the old name: {a}");
    let caution = a["accepted"]["caution"].as_str().unwrap_or_default();
    assert!(!caution.contains("run_server"), "{a}");
}

/// A plain word the stored task chose (`helpers`, no backticks, so no slot) and the steps still
/// say is not silently kept for a task that does not say it: an accept already asking asks for its
/// value with the word itself as the guess, and the value given replaces it where the steps say
/// it; a fill nothing else doubts is answered in one call with the word named in `kept`.
#[tokio::test]
async fn a_stored_word_the_steps_keep_is_asked_for_and_rewritten_with_the_value_given() {
    let env = Env::with_calibration(&strict());
    let s = env.serve().await;
    let trace = json!({"steps": [
        {"tool": "Bash", "inputs": {"command": "git mv app/utils.py app/helpers.py", "description": "Move the module"},
            "side_effect": true, "family": "shell"},
        {"tool": "Grep", "inputs": {"pattern": "import utils", "path": "app"}, "side_effect": false, "family": "fs"}
    ]});
    let stored = s.ok("plan_store", json!({"task": "rename the `utils` module to helpers", "trace": trace})).await;
    let id = stored["plan_id"].as_str().unwrap().to_string();
    let task = "rename the `functions` module to `tools`";
    let a = s.ok("plan_lookup", json!({"task": task, "plan_id": id})).await;
    assert_eq!(a["status"], "needs_values", "the plan would move functions.py to helpers.py: {a}");
    let asked = a["accepted"]["unfilled"].as_array().unwrap();
    let word = asked.iter().find(|u| u["name"] == "helpers").unwrap_or_else(|| panic!("helpers not asked: {a}"));
    assert_eq!((word["kind"].as_str(), word["guess"].as_str()), (Some("word"), Some("helpers")), "{a}");
    assert!(a["accepted"]["caution"].as_str().unwrap_or_default().contains("`helpers`"), "{a}");

    let context = json!({"helpers": "tools"});
    let b = s.ok("plan_lookup", json!({"task": task, "plan_id": id, "context": context})).await;
    assert_eq!(b["status"], "accepted", "{b}");
    assert_eq!(b["accepted"]["steps"][0]["inputs"]["command"], "git mv app/functions.py app/tools.py", "{b}");
    // A fill nothing else doubts is answered in this call, naming the word it keeps.
    let trace = json!({"steps": [
        {"tool": "todo", "inputs": {"text": "Register /healthz on the server mux"}, "side_effect": false},
        {"tool": "Bash", "inputs": {"command": "curl -fsS localhost:8080/healthz"}, "side_effect": false, "family": "shell"}
    ]});
    let health = s.ok("plan_store", json!({"task": "add a /healthz endpoint to the server", "trace": trace})).await;
    let livez = "add a /livez endpoint";
    let k = s.ok("plan_lookup", json!({"task": livez, "plan_id": health["plan_id"]})).await;
    assert_eq!(k["status"], "accepted", "{k}");
    assert_eq!(k["accepted"]["kept"], json!(["server"]), "{k}");
    assert!(k["accepted"]["caution"].as_str().unwrap_or_default().contains("`server`"), "{k}");
    assert_eq!(k["accepted"]["steps"][1]["inputs"]["command"], "curl -fsS localhost:8080/livez", "{k}");

    // Given back as it was while the task names `tools`: still a question, not an answer.
    let same = json!({"helpers": "helpers"});
    let c = s.ok("plan_lookup", json!({"task": task, "plan_id": id, "context": same})).await;
    assert_eq!(c["status"], "needs_values", "{c}");
    assert!(c["accepted"]["caution"].as_str().unwrap_or_default().contains("`tools`"), "{c}");
}

/// The agent is the judge: a phrasing it took a suggestion for and then reported success with is
/// served as a verified hit the next time it is asked in those words, with its own values; other
/// words still get a suggestion, and a failure takes the alias back.
#[tokio::test]
async fn a_taken_suggestion_that_worked_makes_its_phrasing_a_verified_hit() {
    let env = Env::with_calibration(&strict());
    let (s, id) = serve_with_old_logs(&env).await;
    let task = "which files under /srv/www were modified more than 7 days ago";
    let before = s.ok("plan_lookup", json!({"task": task})).await;
    assert_eq!((&before["status"], &before["suggestions"][0]["plan_id"]), (&json!("miss"), &json!(id)), "{before}");
    let taken = s.ok("plan_lookup", json!({"task": task, "plan_id": id})).await;
    assert_eq!(taken["status"], "accepted", "{taken}");
    // Until the agent says it worked, the phrasing is no hit.
    assert_eq!(s.ok("plan_lookup", json!({"task": task})).await["status"], "miss");
    let fb = s.ok("plan_feedback", json!({"plan_id": id, "outcome": "success", "accepted": true})).await;
    assert!(fb["quarantined"].is_null(), "{fb}");

    let hit =
        s.ok("plan_lookup", json!({"task": "Which files under /srv/www were modified more than 7 days ago?"})).await;
    assert_eq!(hit["status"], "hit", "{hit}");
    assert_eq!(hit["hit"]["method"], "alias", "{hit}");
    assert_eq!(hit["hit"]["plan_id"], id.as_str(), "{hit}");
    assert_eq!(hit["hit"]["steps"][0]["inputs"]["command"], "find /srv/www -mtime +7", "{hit}");
    let other =
        s.ok("plan_lookup", json!({"task": "which files under /srv/www were changed in the last 7 days"})).await;
    assert_eq!(other["status"], "miss", "only the words the agent judged are an alias: {other}");
    let stats = s.ok("cache_stats", json!({"area": "plans"})).await;
    assert_eq!(plan_counters(&stats)["aliases"], 1, "{stats}");

    // A failure on the plan takes its aliases back.
    s.ok("plan_feedback", json!({"plan_id": id, "outcome": "failure"})).await;
    assert_eq!(s.ok("plan_lookup", json!({"task": task})).await["status"], "miss");
}

/// A miss shows up to three near plans, one line each with what differs, at a small cost.
#[tokio::test]
async fn a_miss_shows_up_to_three_near_plans_one_line_each_with_what_differs() {
    let env = Env::with_calibration(&strict());
    let (s, id) = serve_with_old_logs(&env).await;
    for (task, cmd) in [
        ("find files modified more than 3 days ago in /tmp", "find /tmp -mtime +3"),
        ("find files accessed more than 10 days ago in /home", "find /home -atime +10"),
        ("find files larger than 5 MB in /opt", "find /opt -size +5M"),
        ("delete empty directories in /srv", "find /srv -type d -empty -delete"),
    ] {
        s.ok("plan_store", json!({"task": task, "trace": one_step(cmd)})).await;
    }
    let task = "which files under /srv/www were modified more than 7 days ago";
    let r = s.call("plan_lookup", json!({"task": task})).await;
    let out = r.structured_content.clone().unwrap();
    let sug = out["suggestions"].as_array().unwrap();
    assert!((1..=3).contains(&sug.len()), "{out}");
    assert!(sug.iter().any(|x| x["plan_id"] == id.as_str()), "the right plan is among them: {out}");
    let own = sug.iter().find(|x| x["plan_id"] == id.as_str()).unwrap();
    assert_eq!(own["differs"]["stored"], json!(["30", "/var/log"]), "{own}");
    assert_eq!(own["differs"]["yours"], json!(["/srv/www", "7"]), "{own}");
    let text = crate::support::text(&r);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + sug.len(), "one line per suggestion: {text}");
    assert!(
        lines.iter().any(|l| l.contains(&id[..8]) && l.contains("`/var/log`") && l.contains("`/srv/www`")),
        "{text}"
    );
    let tokens = refrain::tokens::count(&text);
    assert!(tokens <= 20 + 40 * sug.len() as u64, "{tokens} tokens for {} suggestions: {text}", sug.len());
    assert!(out.get("explain").is_none() && out.get("suggestion").is_none(), "no duplicate, no detail: {out}");
}

/// The short id a suggestion line shows is enough to take the plan.
#[tokio::test]
async fn a_suggestions_short_id_takes_the_plan() {
    let env = Env::with_calibration(&strict());
    let (s, id) = serve_with_old_logs(&env).await;
    let task = "which files under /srv/www were modified more than 7 days ago";
    let a = s.ok("plan_lookup", json!({"task": task, "plan_id": &id[..8]})).await;
    assert_eq!((&a["status"], &a["accepted"]["plan_id"]), (&json!("accepted"), &json!(id)), "{a}");
    let err = s.err("plan_lookup", json!({"task": task, "plan_id": &id[..5]})).await;
    assert!(err.contains(&id[..5]), "too short a prefix is refused with the fix: {err}");
}
