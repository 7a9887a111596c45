//! The order of a miss's suggestions, over MCP with the real binary and the real embedding model:
//! a paraphrase whose own plan reads further away than other plans by embedding cosine alone
//! still gets it among the three shown, because it shares the stored task's words.

use crate::fixtures::one_step;
use crate::support::Env;
use serde_json::json;

/// Four plans of a project's library; the last is the release the paraphrase below asks for.
const STORED: [(&str, &str); 4] = [
    ("Add the binaries to the GitHub release v0.4.0 as assets", "gh release upload v0.4.0 dist/*"),
    ("remove the unused regex dependency (1.10) from Cargo.toml", "cargo remove regex"),
    ("add github.com/natefinch/lumberjack v2.0.0 as a dependency", "go get github.com/natefinch/lumberjack@v2.0.0"),
    (
        "bump the python package version to 0.3.0 (pyproject + __version__) and add a changelog entry",
        "git commit -am 'Release 0.3.0'",
    ),
];

const PARAPHRASE: &str = "We're cutting 0.12.0 of the library today. Please do the version bump in pyproject.toml \
     and __init__.py and move the unreleased notes under a 0.12.0 heading in CHANGELOG.md";

#[tokio::test]
async fn a_plan_sharing_the_tasks_words_is_shown_though_three_others_read_nearer() {
    let env = Env::new();
    let s = env.serve().await;
    let mut ids = Vec::new();
    for (task, command) in STORED {
        let stored = s.ok("plan_store", json!({"task": task, "trace": one_step(command)})).await;
        ids.push(stored["plan_id"].as_str().unwrap().to_string());
    }
    let own = ids[3].as_str();
    let l = s.ok("plan_lookup", json!({"task": PARAPHRASE, "explain": true})).await;
    assert_eq!(l["status"], "miss", "{l}");
    // By cosine alone the release plan is the fourth: the other three read nearer.
    let cosine = |id: &str| {
        l["explain"]["candidates"].as_array().unwrap().iter().find(|c| c["plan_id"] == id).unwrap()["cosine"]
            .as_f64()
            .unwrap()
    };
    let nearer = ids[..3].iter().filter(|id| cosine(id) > cosine(own)).count();
    assert_eq!(nearer, 3, "the premise: three plans nearer by cosine: {l}");
    let shown: Vec<&str> =
        l["suggestions"].as_array().unwrap().iter().map(|s| s["plan_id"].as_str().unwrap()).collect();
    assert_eq!(shown.len(), 3, "all four are near enough to show; three are: {l}");
    assert!(shown.contains(&own), "the plan sharing the task's words is among the three shown: {l}");
}

#[tokio::test]
async fn a_plan_beyond_the_nearest_embeddings_is_found_by_the_words_it_shares() {
    let env = Env::new();
    // Two neighbours by embedding only, so the premise below is cheap to set up: in a large
    // library the same happens with the default sixteen.
    let s = env.serve_with("REFRAIN__PLANS__NEIGHBOURS", "2").await;
    let mut ids = Vec::new();
    for (task, command) in STORED.iter().take(3).chain([&("eslint: enable the `no-console` rule", "npx eslint .")]) {
        let stored = s.ok("plan_store", json!({"task": task, "trace": one_step(command)})).await;
        ids.push(stored["plan_id"].as_str().unwrap().to_string());
    }
    let own = ids[3].as_str();
    let task = "Could you switch on @typescript-eslint/no-explicit-any and clean up what it finds?";
    let explained = s.ok("plan_lookup", json!({"task": task, "explain": true})).await;
    let cosine = |id: &str| {
        explained["explain"]["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["plan_id"] == id)
            .map(|c| c["cosine"].as_f64().unwrap())
    };
    // The premise: the two nearest by embedding are other plans (without its words the eslint
    // plan is not even gathered).
    if let Some(own_cosine) = cosine(own) {
        let nearer = ids[..3].iter().filter(|id| cosine(id).is_some_and(|c| c > own_cosine)).count();
        assert!(nearer >= 2, "two plans nearer by embedding: {explained}");
    }
    let l = s.ok("plan_lookup", json!({"task": task})).await;
    assert_eq!(l["status"], "miss", "{l}");
    let shown: Vec<&str> =
        l["suggestions"].as_array().unwrap().iter().map(|s| s["plan_id"].as_str().unwrap()).collect();
    assert!(shown.contains(&own), "the plan sharing `eslint` is among the three shown: {l}");
}
