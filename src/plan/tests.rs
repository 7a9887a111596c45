//! Plan cache behaviour through `service`, on a real store, without and with the canonicaliser.

use super::library::{Eviction, Outcome};
use super::service::{self, StoreRequest};
use super::validate::RuntimeCaps;
use crate::app::App;
use crate::config::Config;
use crate::project::Project;
use crate::store::Store;
use serde_json::{Map, Value, json};

fn app(dir: &std::path::Path, config: Config) -> App {
    let store = Store::open(&dir.join("db")).unwrap();
    let project = Project::at(dir.to_path_buf(), dir);
    App::start(config, project, store)
}

fn no_model() -> Config {
    let mut c = Config::default();
    c.model.enabled = false;
    c
}

fn flag_template() -> super::template::PlanTemplate {
    serde_json::from_value(json!({
        "steps": [
            {"tool": "Read", "inputs": {"path": "{{params.path}}"}, "outputs": ["source"], "family": "fs"},
            {"tool": "Edit", "inputs": {"path": "{{params.path}}", "add": "flag {{params.flag}}"}, "outputs": ["diff"], "side_effect": true, "family": "fs"}
        ],
        "slots": [{"name": "flag", "type": "flag"}, {"name": "path", "type": "path"}],
        "outputs": [{"name": "diff"}]
    }))
    .unwrap()
}

fn req(task: &str) -> StoreRequest {
    StoreRequest { task: task.into(), template: Some(flag_template()), trace: None, key: None, source: None }
}

async fn lookup(app: &App, task: &str) -> service::Lookup {
    service::lookup(app, task, &Map::new(), &RuntimeCaps::default()).await.unwrap()
}

#[tokio::test]
async fn without_a_model_the_same_wording_with_other_values_is_served_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path(), no_model());
    let stored = service::store(&app, req("add a `--verbose` flag to src/main.rs")).await.unwrap();
    assert!(stored.created && !stored.embedded);
    assert_eq!(stored.masked, "add a <flag> flag to <path>");
    let l = lookup(&app, "Add a --quiet flag to src/cli.rs.").await;
    let hit = l.hit.expect("hit");
    assert_eq!((hit.values["flag"].clone(), hit.method.as_str()), (json!("--quiet"), "exact"));
    assert_eq!(hit.steps[1].inputs, json!({"path": "src/cli.rs", "add": "flag --quiet"}));
    assert!(l.meaning.starts_with("exact wording only"));
    // Without embeddings the candidates are the same text, the same intent bucket and the tasks
    // sharing its words (found, then refused by a gate).
    for (negative, stage) in [
        ("remove the `--quiet` flag from src/cli.rs", Some("opposite")),
        ("add a flag to src/cli.rs", Some("required_slots")),
        ("add a `--quiet` flag to src/cli.rs and src/lib.rs", Some("coverage")),
        ("please add the --quiet option in src/cli.rs", Some("verifier")),
    ] {
        let l = lookup(&app, negative).await;
        assert!(l.hit.is_none(), "{negative}");
        assert_eq!(l.candidates.first().and_then(|c| c.failed.as_deref()), stage, "{negative}: {:?}", l.candidates);
        assert!(l.reason.is_some());
    }
}

#[tokio::test]
async fn any_phrasing_is_stored_and_its_own_text_always_hits() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path(), no_model());
    for task in
        ["Print the number of lines in notes.txt", "Getting the disk usage of /var/log", "the weather report for Paris"]
    {
        let t = serde_json::from_value(json!({"steps": [{"tool": "Bash", "inputs": {"command": "true"}}]})).unwrap();
        let r = StoreRequest { task: task.into(), template: Some(t), trace: None, key: None, source: None };
        let stored = service::store(&app, r).await.unwrap_or_else(|e| panic!("{task}: {e}"));
        let l = lookup(&app, task).await;
        assert_eq!(l.hit.map(|h| h.plan_id), Some(stored.plan_id), "{task}");
    }
}

#[tokio::test]
async fn failures_raise_the_plans_own_bar_then_quarantine_it() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path(), no_model());
    let id = service::store(&app, req("add a `--verbose` flag to src/main.rs")).await.unwrap().plan_id;
    let p = service::feedback(&app, &id, Outcome::Failure, Some("wrong file"), false).await.unwrap();
    assert!((p.counters.bias - 0.05).abs() < 1e-6 && p.quarantined.is_none(), "{:?}", p.counters);
    let head = super::library::head(&app.store, &id).unwrap().unwrap();
    assert!((head.bias - 0.05).abs() < 1e-6, "the head carries the bias to the verifier");
    let p = service::feedback(&app, &id, Outcome::Success, None, false).await.unwrap();
    assert!(p.counters.bias < 0.05 && p.counters.bias > 0.0);
}

#[tokio::test]
async fn feedback_on_an_accepted_plan_counts_but_never_moves_its_bar_or_quarantines_it() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path(), no_model());
    let id = service::store(&app, req("add a `--verbose` flag to src/main.rs")).await.unwrap().plan_id;
    for _ in 0..5 {
        let p = service::feedback(&app, &id, Outcome::Failure, Some("not my task"), true).await.unwrap();
        assert_eq!((p.counters.bias, p.counters.failure_streak, p.quarantined.is_some()), (0.0, 0, false));
    }
    let p = service::feedback(&app, &id, Outcome::Failure, Some("wrong file"), false).await.unwrap();
    assert_eq!((p.counters.failures, p.counters.failure_streak), (6, 1));
    let p = service::feedback(&app, &id, Outcome::Success, None, true).await.unwrap();
    assert!((p.counters.bias - 0.05).abs() < 1e-6, "an accepted success leaves the bar too: {:?}", p.counters);
    assert_eq!((p.counters.successes, p.counters.failure_streak), (1, 0));
}

#[tokio::test]
async fn storing_twice_is_one_plan_and_a_wrong_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path(), no_model());
    let a = service::store(&app, req("add a `--verbose` flag to src/main.rs")).await.unwrap();
    let b = service::store(&app, req("add a `--json` flag to src/x.rs")).await.unwrap();
    assert_eq!(a.plan_id, b.plan_id);
    assert!(!b.created);
    let mut bad = req("add a `--verbose` flag to src/main.rs");
    bad.key = Some("0000".into());
    let err = service::store(&app, bad).await.unwrap_err();
    assert!(matches!(err, super::Error::KeyMismatch { .. }), "{err}");
}

#[tokio::test]
async fn failures_quarantine_until_stored_again_and_eviction_removes() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path(), no_model());
    let id = service::store(&app, req("add a `--verbose` flag to src/main.rs")).await.unwrap().plan_id;
    for _ in 0..3 {
        service::feedback(&app, &id, Outcome::Failure, Some("did not compile"), false).await.unwrap();
    }
    let l = lookup(&app, "add a `--x` flag to src/a.rs").await;
    assert!(l.hit.is_none());
    assert_eq!(l.candidates[0].failed.as_deref(), Some("quarantined"));
    let again = service::store(&app, req("add a `--verbose` flag to src/main.rs")).await.unwrap();
    assert!(again.released);
    assert!(lookup(&app, "add a `--x` flag to src/a.rs").await.hit.is_some());
    let removed =
        service::evict(&app, &Eviction::Version { plan: Some("1".into()), normaliser: None, extractor: None })
            .await
            .unwrap();
    assert_eq!(removed, vec![id]);
    assert!(lookup(&app, "add a `--x` flag to src/a.rs").await.candidates.is_empty());
}

#[tokio::test]
async fn traces_become_plans_that_serve_new_values() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path(), no_model());
    let trace = serde_json::from_value(json!({"steps": [
        {"tool": "Edit", "inputs": {"file": "Cargo.toml", "set": "serde = \"1.0.200\""}, "side_effect": true},
        {"tool": "Bash", "inputs": {"cmd": "cargo update -p serde && cargo test"}}
    ]}))
    .unwrap();
    let r = StoreRequest {
        task: "bump serde to 1.0.200 in Cargo.toml".into(),
        template: None,
        trace: Some(trace),
        key: None,
        source: None,
    };
    service::store(&app, r).await.unwrap();
    let hit = lookup(&app, "bump tokio to 1.41 in crates/x/Cargo.toml").await.hit.expect("hit");
    assert_eq!(hit.steps[1].inputs, json!({"cmd": "cargo update -p tokio && cargo test"}));
    assert_eq!(hit.steps[0].inputs, json!({"file": "crates/x/Cargo.toml", "set": "tokio = \"1.41\""}));
}

/// A chat-completions endpoint on loopback that answers with `content` (or sleeps past timeouts).
async fn fake_llm(content: &'static str, delay_ms: u64) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use axum::{Json, Router, routing::post};
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = calls.clone();
    let app = Router::new().route(
        "/v1/chat/completions",
        post(move |Json(body): Json<Value>| {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                assert_eq!(body["messages"][1]["role"], "user");
                tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
                Json(json!({
                    "id": "x", "object": "chat.completion", "created": 1, "model": "m",
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]
                }))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/v1"), calls)
}

fn llm_config(base: String, timeout_ms: u64) -> Config {
    let mut c = no_model();
    c.llm.enabled = true;
    c.llm.base_url = Some(base);
    c.llm.model = Some("m".into());
    c.llm.timeout_ms = timeout_ms;
    c
}

#[tokio::test]
async fn canonicaliser_answers_are_used_and_cached() {
    let dir = tempfile::tempdir().unwrap();
    let (base, calls) = fake_llm("{\"action\": \"add\", \"kind\": \"flag\"}", 0).await;
    let app = app(dir.path(), llm_config(base, 5000));
    // Locally "we need a --x argument" has no verb; the canonicaliser supplies add/flag.
    let n = service::understand(&app, "we need a --verbose argument").await;
    assert_eq!((n.action.as_str(), n.kind.as_str()), ("add", "flag"));
    let again = service::understand(&app, "we need a --verbose argument").await;
    assert_eq!(again, n);
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn canonicaliser_failures_fall_back_to_the_local_normaliser() {
    let dir = tempfile::tempdir().unwrap();
    let (slow, _) = fake_llm("{\"action\": \"remove\", \"kind\": \"flag\"}", 2000).await;
    let app1 = app(&dir.path().join("a"), llm_config(slow, 200));
    let started = std::time::Instant::now();
    let n = service::understand(&app1, "add a `--x` flag").await;
    assert_eq!(n.action, "add");
    assert!(started.elapsed() < std::time::Duration::from_millis(1500));
    let (junk, _) = fake_llm("I think it is about flags", 0).await;
    let app2 = app(&dir.path().join("b"), llm_config(junk, 2000));
    assert_eq!(service::understand(&app2, "add a `--x` flag").await.action, "add");
    let app3 = app(&dir.path().join("c"), llm_config("http://127.0.0.1:9/v1".into(), 2000));
    assert_eq!(service::understand(&app3, "add a `--x` flag").await.action, "add");
}

#[tokio::test]
async fn hits_are_counted_in_memory_written_by_the_next_flush_and_survive_a_restart() {
    use super::library::{self, Record};
    use crate::store::trees;
    let dir = tempfile::tempdir().unwrap();
    let written = |store: &Store, id: &str| store.get::<Record>(trees::PLANS, id.as_bytes()).unwrap().unwrap().plan;
    let id = {
        let app = app(dir.path(), no_model());
        let id = service::store(&app, req("add a `--verbose` flag to src/main.rs")).await.unwrap().plan_id;
        for _ in 0..3 {
            assert!(lookup(&app, "add a `--quiet` flag to src/cli.rs").await.hit.is_some());
        }
        assert_eq!(written(&app.store, &id).counters.hits, 0, "held in memory, the record is not rewritten per hit");
        let read = library::get(&app.store, &id).unwrap().unwrap().plan;
        assert_eq!(read.counters.hits, 3, "reads count what is held");
        assert!(read.last_hit_at.is_some());
        let hit = lookup(&app, "add a `--quiet` flag to src/cli.rs").await.hit.unwrap();
        assert_eq!(hit.counters.hits, 3, "a hit reports the hits before it");
        // A plan read and written back (a re-store, a team sync) keeps its hits once.
        library::put(&app.store, &library::get(&app.store, &id).unwrap().unwrap()).unwrap();
        assert_eq!(library::get(&app.store, &id).unwrap().unwrap().plan.counters.hits, 4);
        app.store.flush().unwrap();
        assert_eq!(written(&app.store, &id).counters.hits, 4, "a flush writes them");
        assert!(lookup(&app, "add a `--quiet` flag to src/cli.rs").await.hit.is_some());
        id
    };
    // The last handle closed (the app's background tasks and sled's flusher let go of it a
    // moment later): what was held since the flush is written too.
    let mut store = None;
    for _ in 0..400 {
        match Store::open(&dir.path().join("db")) {
            Err(crate::store::Error::Locked { .. }) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
            other => {
                store = Some(other.unwrap());
                break;
            }
        }
    }
    let store = store.expect("the store reopens once the app is gone");
    let plan = written(&store, &id);
    assert_eq!(plan.counters.hits, 5);
    assert!(plan.last_hit_at.is_some());
}
