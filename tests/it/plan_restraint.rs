//! The prompt hook stops offering near plans in a project whose agent does not take them, and
//! starts again once it takes one: the real binary and model over MCP, making the calls the
//! prompt hook makes (`plan_lookup` with `via_hook`, then the `Injected` session event that puts
//! the block in the ledger).

use crate::fixtures::{cosine_at, store_old_logs};
use crate::support::{Env, Server};
use serde_json::{Value, json};

/// A near task the strict calibration never serves: it comes back as a suggestion.
const NEAR: &str = "which files under /srv/www were modified more than 7 days ago";

/// The hook's lookup; the first suggested plan id, if the hook is offered one.
async fn hook_lookup(s: &Server) -> Option<String> {
    let out = s.ok("plan_lookup", json!({"task": NEAR, "via_hook": true})).await;
    assert_eq!(out["status"], "miss", "{out}");
    out["suggestions"][0]["plan_id"].as_str().map(str::to_string)
}

/// The hook's ledger event for the block it injected.
async fn injected(s: &Server, n: usize, plan_id: &str) {
    let event = json!({"agent": "claude-code", "event": "Injected", "session_id": format!("s{n}"),
        "at_ms": 1_790_000_000_000u64 + n as u64,
        "added_text": "[refrain] maybe unrelated: a stored task came close", "subject": format!("suggested {plan_id}")});
    s.ok("session_event", event).await;
}

#[tokio::test]
async fn the_hook_stops_offering_near_plans_its_agent_never_takes_until_it_takes_one() {
    let env = Env::with_calibration(&cosine_at("plan", 0.99));
    let mut cmd = env.cmd(&["serve"]);
    cmd.env("REFRAIN__PLANS__SUGGEST_MIN_SCORE", "0.5").env("REFRAIN__HOOKS__SUGGEST_PER_TAKE", "3");
    let s = Server::spawn(cmd).await;
    let id = store_old_logs(&s).await;
    for n in 0..3 {
        assert_eq!(hook_lookup(&s).await.as_deref(), Some(id.as_str()), "block {n} is offered");
        injected(&s, n, &id).await;
    }
    assert_eq!(hook_lookup(&s).await, None, "three blocks offered, none taken: the hook is offered no more");
    // The agent asking still gets near plans, and the same retried event is not a fourth block.
    let asked = s.ok("plan_lookup", json!({"task": NEAR})).await;
    assert_eq!(asked["suggestions"][0]["plan_id"], id.as_str(), "{asked}");
    injected(&s, 2, &id).await;
    let stats = crate::support::text(&s.call("cache_stats", json!({"area": "plans"})).await);
    assert!(stats.contains("3 blocks of near plans offered by the prompt hook"), "{stats}");
    // Taking a plan earns three more blocks.
    let taken: Value = s.ok("plan_lookup", json!({"task": NEAR, "plan_id": id})).await;
    assert_eq!(taken["status"], "accepted", "{taken}");
    assert_eq!(hook_lookup(&s).await.as_deref(), Some(id.as_str()), "offered again after a take");
}
