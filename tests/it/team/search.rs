//! `refrain team search`: served by the team database where it has pgvector (a PostgreSQL 16
//! with the extension, from the `pgserver` wheel), and with a clear message and this machine's
//! copy of the plans where it has not (Debian's server).

use super::pg::Pg;
use super::{Member, TASK, eventually, store, template};
use serde_json::json;

const REMOTE: &str = "git@github.com:acme/billing.git";
const QUERY: &str = "add a --debug flag to src/lib.rs";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[tokio::test]
async fn team_search_is_served_by_a_database_with_pgvector() {
    let pg = Pg::start_pgvector();
    let a = Member::with_model(REMOTE, &pg.url());
    let sa = a.serve().await;
    let id = store(&sa, TASK, template(0)).await;
    sa.ok("plan_store", json!({"task": "rename the function parse_args to read_args", "template": template(1)})).await;
    a.run_ok(&["plans", "publish", "--all"]).await;
    // A's sync embeds what the table lacks (the migration made it: the extension is installed).
    let c = pg.client().await;
    eventually("both plans have their vector on the server", || async {
        let row = c.query_one("SELECT count(*) FROM refrain_vectors", &[]).await.ok()?;
        (row.get::<_, i64>(0) == 2).then_some(())
    })
    .await;

    // A member with an empty store and no server running searches: only the database can answer.
    let b = Member::with_model("https://github.com/acme/billing", &pg.url());
    let out = b.run(&["team", "search", QUERY]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("2 plan(s) of github.com/acme/billing, searched on the team database (pgvector)"),
        "{stdout}"
    );
    let first = stdout.lines().nth(1).unwrap_or_default();
    assert!(first.contains(&id) && first.contains(TASK), "the flag plan is nearest: {stdout}");
    let similarity: f64 = first.split_whitespace().next().unwrap().parse().unwrap();
    let second: f64 = stdout.lines().nth(2).unwrap().split_whitespace().next().unwrap().parse().unwrap();
    assert!(similarity > 0.6 && similarity > second + 0.1, "{stdout}");
    assert!(!text(&out.stderr).contains("instead"), "{}", text(&out.stderr));

    let status = b.run(&["team", "status"]).await;
    assert!(status.status.success(), "{}", text(&status.stdout));
    assert!(
        text(&status.stdout).contains("team search         on the database (pgvector)"),
        "{}",
        text(&status.stdout)
    );
}

#[tokio::test]
async fn without_pgvector_team_search_says_so_and_searches_this_machines_copy() {
    let pg = Pg::start();
    let a = Member::with_model(REMOTE, &pg.url());
    let sa = a.serve().await;
    let id = store(&sa, TASK, template(0)).await;
    a.run_ok(&["plans", "publish", "--all"]).await;
    let c = pg.client().await;
    let vectors: bool = c.query_one("SELECT to_regclass('refrain_vectors') IS NOT NULL", &[]).await.unwrap().get(0);
    assert!(!vectors, "no vectors table without the extension");

    let out = a.run(&["team", "search", QUERY]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("has no pgvector extension") && stderr.contains("install pgvector"), "{stderr}");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("searched on this machine"), "{stdout}");
    assert!(stdout.lines().nth(1).is_some_and(|l| l.contains(&id)), "{stdout}");

    let status = a.run(&["team", "status"]).await;
    assert!(status.status.success(), "{}", text(&status.stdout));
    let s = text(&status.stdout);
    assert!(s.contains("this machine's copy only: the database has no pgvector extension"), "{s}");
    assert!(s.contains("team plans          1 (0 quarantined)"), "{s}");
}
