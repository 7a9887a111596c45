//! The sharing rules at their edges: a member's own counts of a plan the team already has are
//! added once; storing again a plan the team quarantined does not release it for anyone; old
//! operation ids are pruned; a broken `team.*` setting is told to the user, not only logged.

use super::pg::Pg;
use super::{Member, OTHER_VALUES, TASK, eventually, lookup, plans, store, template};
use serde_json::{Value, json};
use std::time::Duration;

const REMOTE: &str = "git@github.com:acme/billing.git";

async fn team_successes(pg: &Pg, id: &str) -> Option<i64> {
    let c = pg.client().await;
    Some(c.query_opt("SELECT successes FROM refrain_plans WHERE id = $1", &[&id]).await.ok()??.get(0))
}

#[tokio::test]
async fn a_members_own_counts_of_a_plan_the_team_has_are_added_once() {
    let pg = Pg::start();
    let a = Member::new(REMOTE, &pg.url());
    let b = Member::new(REMOTE, &pg.url());
    // B stores the plan and counts one success of its own (publish_after = 2: not shared yet).
    let sb = b.serve().await;
    let id = store(&sb, TASK, template(0)).await;
    sb.ok("plan_feedback", json!({"plan_id": id, "outcome": "success"})).await;
    // A stores the same plan and shares it after two successes.
    let sa = a.serve().await;
    sa.ok("plan_store", json!({"task": TASK, "template": template(0)})).await;
    for _ in 0..2 {
        sa.ok("plan_feedback", json!({"plan_id": id, "outcome": "success"})).await;
    }
    // B's own success joins A's two on the team, and both members come to hold 3.
    eventually("the team counts 3", || async { (team_successes(&pg, &id).await == Some(3)).then_some(()) }).await;
    for s in [&sa, &sb] {
        eventually("each member holds the team's 3", || async {
            (plans(s).await[0]["counters"]["successes"] == 3).then_some(())
        })
        .await;
    }
    // Publishing again by hand adds nothing; later feedback counts once.
    let out = b.run(&["plans", "publish", "--all"]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("0 new to the team, 1 it had"), "{out:?}");
    sb.ok("plan_feedback", json!({"plan_id": id, "outcome": "success"})).await;
    eventually("the team counts 4", || async { (team_successes(&pg, &id).await == Some(4)).then_some(()) }).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(team_successes(&pg, &id).await, Some(4), "counted once");
    for s in [&sa, &sb] {
        eventually("each member holds 4", || async { (plans(s).await[0]["counters"]["successes"] == 4).then_some(()) })
            .await;
    }
}

#[tokio::test]
async fn storing_again_a_plan_the_team_quarantined_keeps_it_quarantined_until_released() {
    let pg = Pg::start();
    let a = Member::new(REMOTE, &pg.url());
    let b = Member::new(REMOTE, &pg.url());
    let sa = a.serve().await;
    let store = json!({"task": TASK, "template": template(0)});
    let id = sa.ok("plan_store", store.clone()).await["plan_id"].as_str().unwrap().to_string();
    a.run_ok(&["plans", "publish", &id]).await;
    let sb = b.serve().await;
    eventually("B has the plan", || async { (plans(&sb).await.len() == 1).then_some(()) }).await;
    for _ in 0..3 {
        sb.ok("plan_feedback", json!({"plan_id": id, "outcome": "failure", "reason": "wrong file"})).await;
    }
    let quarantined = |l: &Value| l["status"] != "hit" && l["explain"]["candidates"][0]["failed"] == "quarantined";
    eventually("A has the team's quarantine", || async { quarantined(&lookup(&sa, OTHER_VALUES).await).then_some(()) })
        .await;
    // A's agent stores the plan again: it stays quarantined, for A and the team, and A is told why.
    let r = sa.call("plan_store", store.clone()).await;
    let answer = crate::support::text(&r);
    assert!(answer.contains("still quarantined for the whole team") && answer.contains("release"), "{answer}");
    let v: Value = r.structured_content.clone().unwrap_or_default();
    assert_eq!(v["released"], false, "{v}");
    assert!(v["quarantined"].as_str().is_some_and(|q| q.contains("wrong file")), "{v}");
    assert!(quarantined(&lookup(&sa, OTHER_VALUES).await));
    tokio::time::sleep(Duration::from_secs(1)).await;
    let c = pg.client().await;
    let row = c.query_one("SELECT quarantined FROM refrain_plans WHERE id = $1", &[&id]).await.unwrap();
    assert!(row.get::<_, Option<String>>(0).is_some());
    // A release serves it again for everyone.
    sa.ok("plan_feedback", json!({"plan_id": id, "outcome": "release"})).await;
    eventually("B serves it again", || async { (lookup(&sb, OTHER_VALUES).await["status"] == "hit").then_some(()) })
        .await;
}

#[tokio::test]
async fn operation_ids_older_than_the_bound_are_pruned_and_sync_goes_on() {
    let pg = Pg::start();
    let a = Member::new(REMOTE, &pg.url());
    let sa = a.serve().await;
    let id = store(&sa, TASK, template(0)).await;
    a.run_ok(&["plans", "publish", &id]).await;
    let c = pg.client().await;
    let count = |sql: &'static str| {
        let c = &c;
        async move { c.query_one(sql, &[]).await.map(|r| r.get::<_, i64>(0)).unwrap_or(-1) }
    };
    eventually("A's sync sent its own publish", || async {
        (count("SELECT count(*) FROM refrain_ops").await >= 2).then_some(())
    })
    .await;
    c.execute("UPDATE refrain_ops SET applied_at = now() - interval '40 days'", &[]).await.unwrap();
    // A member that starts prunes them; the plans stay and a new member syncs them.
    let b = Member::new(REMOTE, &pg.url());
    let sb = b.serve().await;
    eventually("the old ids are pruned", || async {
        (count("SELECT count(*) FROM refrain_ops").await == 0).then_some(())
    })
    .await;
    eventually("B has the plan", || async { (lookup(&sb, OTHER_VALUES).await["status"] == "hit").then_some(()) }).await;
    sb.ok("plan_feedback", json!({"plan_id": id, "outcome": "success"})).await;
    eventually("new ids are kept", || async { (count("SELECT count(*) FROM refrain_ops").await == 1).then_some(()) })
        .await;
}

#[tokio::test]
async fn a_broken_team_setting_is_told_to_the_user() {
    let pg = Pg::start();
    let unset = "REFRAIN_TEST_TEAM_PASSWORD_NEVER_SET";
    let m = Member::with(REMOTE, &pg.url(), "");
    // The user's config names a password variable this environment does not have.
    let config = std::fs::read_to_string(&m.config).unwrap().replace(super::PASSWORD_ENV, unset);
    std::fs::write(&m.config, config).unwrap();
    let status = m.run(&["team", "status"]).await;
    assert_eq!(status.status.code(), Some(1), "{status:?}");
    let out = String::from_utf8_lossy(&status.stdout);
    assert!(out.contains(&format!("{unset} (NOT SET")), "{out}");
    assert!(out.contains("problem") && out.contains("export it or remove team.password_env"), "{out}");
    let s = m.serve().await;
    let stored = s.call("plan_store", json!({"task": TASK, "template": template(0)})).await;
    let answer = crate::support::text(&stored);
    assert!(answer.contains("team library off") && answer.contains(unset), "{answer}");
    let id = stored.structured_content.clone().unwrap_or_default()["plan_id"].as_str().unwrap().to_string();
    let fb = s.ok("plan_feedback", json!({"plan_id": id, "outcome": "success"})).await;
    assert!(fb["team"].as_str().is_some_and(|t| t.contains(unset) && t.contains("refrain team status")), "{fb}");

    // A URL that is no URL.
    let bad = Member::new(REMOTE, "not a url at all");
    let status = bad.run(&["team", "status"]).await;
    assert_eq!(status.status.code(), Some(1), "{status:?}");
    assert!(String::from_utf8_lossy(&status.stdout).contains("not a PostgreSQL URL"), "{status:?}");
}
