//! The team plan library with a real PostgreSQL server (`pg`) and the real binary over MCP: two
//! members with separate homes and checkouts under other paths share plans of one repository (by
//! its git remote, however it is written), never of another; feedback from both at once is all
//! counted and a quarantine reaches everyone; the server down, killed and restarted, or never
//! reachable loses nothing and never stops local lookups; `team.accept` and `refrain plans review`
//! choose whose plans a member is served (`review`).

mod frame;
mod pg;
mod review;
mod rules;
mod search;

use crate::support::{Env, Server, sigkill};
use pg::{PASSWORD, PASSWORD_ENV, Pg};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// One team member: a home, a checkout with a git remote, and the user's own config naming the
/// team database.
struct Member {
    env: Env,
    config: PathBuf,
}

impl Member {
    fn new(remote: &str, url: &str) -> Member {
        Member::with(remote, url, "")
    }

    /// A member whose `[team]` table has `extra` lines too.
    fn with(remote: &str, url: &str, extra: &str) -> Member {
        Member::in_env(Env::without_model(), remote, url, extra)
    }

    /// A member with the real embedding model.
    fn with_model(remote: &str, url: &str) -> Member {
        Member::in_env(Env::new(), remote, url, "")
    }

    fn in_env(env: Env, remote: &str, url: &str, extra: &str) -> Member {
        let git = env.project.path().join(".git");
        std::fs::create_dir_all(&git).unwrap();
        std::fs::write(git.join("config"), format!("[core]\n\tbare = false\n[remote \"origin\"]\n\turl = {remote}\n"))
            .unwrap();
        let config = env.home.path().join("user-refrain.toml");
        std::fs::write(
            &config,
            format!("[team]\nurl = \"{url}\"\npassword_env = \"{PASSWORD_ENV}\"\npublish_after = 2\n{extra}"),
        )
        .unwrap();
        Member { env, config }
    }

    fn cmd(&self, args: &[&str]) -> tokio::process::Command {
        let mut c = self.env.cmd(args);
        c.env("REFRAIN_CONFIG", &self.config)
            .env(PASSWORD_ENV, PASSWORD)
            .env("REFRAIN_LOG_FILE", self.env.home.path().join("refrain.log"));
        c
    }

    async fn serve(&self) -> Server {
        Server::spawn(self.cmd(&["serve"])).await
    }

    async fn run(&self, args: &[&str]) -> std::process::Output {
        self.cmd(args).output().await.expect("run refrain")
    }

    /// Runs `refrain ARGS`, which must succeed; its stdout.
    async fn run_ok(&self, args: &[&str]) -> String {
        let out = self.run(args).await;
        assert!(out.status.success(), "refrain {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// Stores `template` for `task` on a member's server; the plan id.
async fn store(s: &Server, task: &str, template: Value) -> String {
    s.ok("plan_store", json!({"task": task, "template": template})).await["plan_id"].as_str().unwrap().to_string()
}

impl Drop for Member {
    /// A failing test shows what each member's refrain logged.
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log = std::fs::read_to_string(self.env.home.path().join("refrain.log")).unwrap_or_default();
            eprintln!("--- refrain log of {} ---\n{log}", self.env.project.path().display());
        }
    }
}

fn template(variant: usize) -> Value {
    json!({
        "steps": [
            {"tool": "Read", "inputs": {"path": "{{params.path}}"}, "outputs": ["source"]},
            {"tool": "Edit", "inputs": {"path": "{{params.path}}", "flag": "{{params.flag}}"}, "outputs": ["diff"], "side_effect": true}
        ],
        "slots": [{"name": "flag", "type": "flag"}, {"name": "path", "type": "path"}],
        "outputs": [{"name": "diff"}],
        "description": format!("variant {variant}")
    })
}

const TASK: &str = "add a `--verbose` flag to src/main.rs";
const OTHER_VALUES: &str = "add a --quiet flag to src/cli.rs";

/// Waits (generously: the machine may be loaded) until `check` gives a value.
async fn eventually<T, F: std::future::Future<Output = Option<T>>>(what: &str, mut check: impl FnMut() -> F) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "not within 120 s: {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn lookup(s: &Server, task: &str) -> Value {
    s.ok("plan_lookup", json!({"task": task, "explain": true})).await
}

async fn plans(s: &Server) -> Vec<Value> {
    s.ok("plan_list", json!({"limit": 1000})).await["plans"].as_array().cloned().unwrap_or_default()
}

async fn shared_rows(pg: &Pg, project: &str) -> i64 {
    let c = pg.client().await;
    match c.query_one("SELECT count(*) FROM refrain_plans WHERE project = $1", &[&project]).await {
        Ok(row) => row.get(0),
        Err(_) => 0, // no schema yet
    }
}

#[tokio::test]
async fn a_plan_that_worked_for_one_member_is_served_to_another_of_the_same_repository_only() {
    let pg = Pg::start();
    let a = Member::new("git@github.com:Acme/Billing.git", &pg.url());
    let b = Member::new("https://github.com/acme/billing", &pg.url());
    let other = Member::new("git@github.com:acme/payments.git", &pg.url());
    let sa = a.serve().await;
    let id = store(&sa, TASK, template(0)).await;
    // A migration from an empty database: the first member's sync made the schema.
    let c = pg.client().await;
    eventually("the schema is migrated", || async {
        let row = c.query_opt("SELECT max(version) FROM refinery_schema_history", &[]).await.ok()??;
        (row.get::<_, Option<i32>>(0) == Some(2)).then_some(())
    })
    .await;
    // One success is not enough to publish (team.publish_after = 2) ...
    sa.ok("plan_feedback", json!({"plan_id": id, "outcome": "success"})).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(shared_rows(&pg, "github.com/acme/billing").await, 0);
    // ... the second publishes it.
    sa.ok("plan_feedback", json!({"plan_id": id, "outcome": "success"})).await;
    eventually("A publishes", || async { (shared_rows(&pg, "github.com/acme/billing").await == 1).then_some(()) })
        .await;
    let row = c
        .query_one("SELECT id, task, successes, bucket, template->'steps'->1->>'tool' FROM refrain_plans", &[])
        .await
        .unwrap();
    assert_eq!((row.get::<_, String>(0), row.get::<_, String>(1)), (id.clone(), TASK.to_string()));
    assert_eq!(row.get::<_, i64>(2), 2);
    assert_eq!(row.get::<_, String>(4), "Edit");

    let sb = b.serve().await;
    let hit = eventually("B is served A's plan", || async {
        let l = lookup(&sb, OTHER_VALUES).await;
        (l["status"] == "hit").then_some(l)
    })
    .await;
    assert_eq!(hit["hit"]["plan_id"], id.as_str(), "{hit}");
    assert_eq!(hit["hit"]["steps"][1]["inputs"], json!({"path": "src/cli.rs", "flag": "--quiet"}));
    let on_b = plans(&sb).await;
    assert_eq!(on_b.len(), 1);
    assert_eq!(on_b[0]["counters"]["successes"], 2, "B holds the team's counters: {}", on_b[0]);

    // Another repository's member syncs too, and is never served this one's plans.
    let so = other.serve().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(lookup(&so, OTHER_VALUES).await["status"], "miss");
    assert!(plans(&so).await.is_empty());
}

#[tokio::test]
async fn feedback_from_two_members_at_once_is_all_counted_and_a_quarantine_reaches_everyone() {
    let pg = Pg::start();
    let a = Member::new("git@github.com:acme/billing.git", &pg.url());
    let b = Member::new("git@github.com:acme/billing.git", &pg.url());
    let sa = a.serve().await;
    let id = store(&sa, TASK, template(0)).await;
    // Published by hand, at once.
    let out = a.run(&["plans", "publish", &id]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 new to the team"), "{out:?}");
    let sb = b.serve().await;
    eventually("B has the plan", || async { (plans(&sb).await.len() == 1).then_some(()) }).await;
    eventually("A knows the team has it", || async {
        // A's sync reads its own publish back and from then on sends its feedback.
        (lookup(&sa, OTHER_VALUES).await["status"] == "hit").then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;

    let per_member = 8;
    let mut calls = Vec::new();
    for s in [&sa, &sb] {
        for _ in 0..per_member {
            calls.push(s.ok("plan_feedback", json!({"plan_id": id, "outcome": "success"})));
        }
    }
    futures::future::join_all(calls).await;
    let c = pg.client().await;
    let total = 2 * per_member as i64;
    eventually("every success is counted once", || async {
        let row = c.query_one("SELECT successes FROM refrain_plans WHERE id = $1", &[&id]).await.ok()?;
        (row.get::<_, i64>(0) == total).then_some(())
    })
    .await;
    for s in [&sa, &sb] {
        eventually("both members hold the team's count", || async {
            (plans(s).await[0]["counters"]["successes"] == total).then_some(())
        })
        .await;
    }
    // Three failures on B quarantine the plan for A too.
    for _ in 0..3 {
        sb.ok("plan_feedback", json!({"plan_id": id, "outcome": "failure", "reason": "wrong file"})).await;
    }
    eventually("A stops serving the quarantined plan", || async {
        let l = lookup(&sa, OTHER_VALUES).await;
        (l["status"] != "hit" && l["explain"]["candidates"][0]["failed"] == "quarantined").then_some(())
    })
    .await;
    let row = c.query_one("SELECT failures, quarantined FROM refrain_plans WHERE id = $1", &[&id]).await.unwrap();
    assert_eq!(row.get::<_, i64>(0), 3);
    assert!(row.get::<_, Option<String>>(1).unwrap().contains("wrong file"));
}

#[tokio::test]
async fn the_server_down_killed_or_restarted_loses_nothing_and_lookups_stay_local() {
    let mut pg = Pg::start();
    let a = Member::new("git@github.com:acme/billing.git", &pg.url());
    let b = Member::new("git@github.com:acme/billing.git", &pg.url());
    // A member with no server to reach: everything works locally, publishes wait in its store.
    pg.kill();
    let sa = a.serve().await;
    let id = store(&sa, TASK, template(0)).await;
    for _ in 0..2 {
        sa.ok("plan_feedback", json!({"plan_id": id, "outcome": "success"})).await;
    }
    assert_eq!(lookup(&sa, OTHER_VALUES).await["status"], "hit");
    let refused = a.run(&["plans", "publish", "--all"]).await;
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("cannot be reached"), "{err}");
    // The queue survives the member's restart (killed, not shut down).
    sigkill(sa.pid());
    drop(sa);
    let sa = a.serve().await;
    assert_eq!(lookup(&sa, OTHER_VALUES).await["status"], "hit");
    for i in 1..=30 {
        sa.ok("plan_store", json!({"task": format!("add a `--flag{i}` flag to src/main.rs"), "template": template(i)}))
            .await;
    }
    // The server comes back: the queued publish goes out, by itself.
    pg.restart();
    let c = pg.client().await;
    eventually("the queued publish reaches the team", || async {
        let row = c.query_opt("SELECT successes FROM refrain_plans WHERE id = $1", &[&id]).await.ok()??;
        (row.get::<_, i64>(0) == 2).then_some(())
    })
    .await;
    let out = a.run(&["plans", "publish", "--all"]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("30 new to the team, 1 it had"), "{out:?}");

    // B syncs 31 plans; the server is killed and restarted while it does.
    let sb = b.serve().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    pg.kill();
    assert!(plans(&sb).await.len() <= 31);
    pg.restart();
    eventually("B has every plan after the restart", || async { (plans(&sb).await.len() == 31).then_some(()) }).await;
    let hit = lookup(&sb, "add a `--flag7` flag to src/lib.rs").await;
    assert_eq!(hit["status"], "hit", "{hit}");
    // (The earlier client's connection died with the server.)
    let rows: i64 = pg.client().await.query_one("SELECT count(*) FROM refrain_plans", &[]).await.unwrap().get(0);
    assert_eq!(rows, 31, "one row per plan, nothing doubled");
}

#[tokio::test]
async fn tls_is_used_as_the_url_says_and_the_certificate_is_checked() {
    let pg = Pg::start_tls();
    let url = format!("{}?sslmode=require", pg.url());
    let ca = format!("ca_file = \"{}\"\n", pg.ca_file().display());
    let trusted = Member::with("git@github.com:acme/billing.git", &url, &ca);
    let s = trusted.serve().await;
    s.ok("plan_store", json!({"task": TASK, "template": template(0)})).await;
    let out = trusted.run(&["plans", "publish", "--all"]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 new to the team"), "{out:?}");
    // The server takes TLS connections only (hostssl), so that publish went over TLS.
    let plain = Member::new("git@github.com:acme/billing.git", &format!("{}?sslmode=disable", pg.url()));
    let _s = plain.serve().await;
    let out = plain.run(&["plans", "publish", "--all"]).await;
    assert!(!out.status.success());
    // Without the team's CA the server's certificate is refused.
    let untrusting = Member::new("git@github.com:acme/billing.git", &url);
    let _s = untrusting.serve().await;
    let out = untrusting.run(&["plans", "publish", "--all"]).await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot be reached") && err.to_lowercase().contains("certificate"), "{err}");
}
