//! A task asked again word for word is served its own plan, filled exactly as it was stored,
//! over MCP with the real binary and the real embedding model: globs and regexes in the text are
//! values the plan keeps, never words that turn a neighbour into a name; and tasks that differ by
//! a modifier or by the program they name are never served each other's plans.

use crate::support::{Env, Server};
use serde_json::{Value, json};

/// A one-step shell template with typed slots, as a data set or an agent stores it.
fn template(command: &str, slots: &[(&str, &str)]) -> Value {
    let slots: Vec<Value> = slots.iter().map(|(n, t)| json!({"name": n, "type": t})).collect();
    json!({"steps": [{"tool": "Bash", "inputs": {"command": command}, "side_effect": false, "family": "shell"}],
           "slots": slots})
}

/// A stored task, its command template, its slots (name, type) and the command its own text gets.
type Own = (&'static str, &'static str, &'static [(&'static str, &'static str)], &'static str);

/// Stored tasks with globs and patterns, each with the command its own text must be served.
const OWN: &[Own] = &[
    (
        "Find directories under /usr whose name matches *lib*, ignoring case",
        "find {{params.directory}} -type d -iname '{{params.lib}}'",
        &[("directory", "path"), ("lib", "string")],
        "find /usr -type d -iname '*lib*'",
    ),
    (
        "Recursively find files matching ^test_ in the current directory",
        "fd \"{{params.regex}}\"",
        &[("regex", "string")],
        "fd \"^test_\"",
    ),
    (
        "Run the tests in files whose name matches *spec* under spec/models",
        "rspec --pattern '{{params.glob}}' {{params.dir}}",
        &[("glob", "string"), ("dir", "path")],
        "rspec --pattern '*spec*' spec/models",
    ),
    (
        "Search lib/ for lines matching [0-9]+ at the end",
        "rg '{{params.regex}}' {{params.path}}",
        &[("regex", "string"), ("path", "path")],
        "rg '[0-9]+' lib/",
    ),
    (
        "Gzip all *.log files at once, using all cores",
        "parallel gzip ::: {{params.files}}",
        &[("files", "path")],
        "parallel gzip ::: *.log",
    ),
    ("Decompress wiki.xml.bz2", "bzip2 -d {{params.archive}}", &[("archive", "path")], "bzip2 -d wiki.xml.bz2"),
];

async fn store(s: &Server, task: &str, t: Value) -> String {
    let out = s.ok("plan_store", json!({"task": task, "template": t})).await;
    out["plan_id"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn a_stored_task_asked_again_word_for_word_gets_its_own_plan_with_its_own_values() {
    let env = Env::new();
    let s = env.serve().await;
    let mut ids = Vec::new();
    for (task, command, slots, _) in OWN {
        ids.push(store(&s, task, template(command, slots)).await);
    }
    for ((task, _, _, want), id) in OWN.iter().zip(&ids) {
        for asked in [task.to_string(), format!("  {}. ", task.to_lowercase())] {
            let l = s.ok("plan_lookup", json!({"task": asked})).await;
            assert_eq!(l["status"], "hit", "{asked}: {l}");
            assert_eq!(l["hit"]["plan_id"].as_str(), Some(id.as_str()), "{asked}: {l}");
            assert_eq!(l["hit"]["steps"][0]["inputs"]["command"], *want, "{asked}: {l}");
        }
    }
    // The glob is a value: the same words with another glob fill the plan with it.
    let l = s
        .ok("plan_lookup", json!({"task": "Find directories under /opt whose name matches *bin*, ignoring case"}))
        .await;
    assert_eq!(l["status"], "hit", "{l}");
    assert_eq!(l["hit"]["steps"][0]["inputs"]["command"], "find /opt -type d -iname '*bin*'", "{l}");
}

#[tokio::test]
async fn a_stored_task_whose_value_its_text_never_shows_is_not_served_with_a_guess() {
    let env = Env::new();
    let s = env.serve().await;
    // "matching build": the word after "matching" is the pattern, a value of the plan.
    let dirs = store(
        &s,
        "Find only directories matching build",
        template("fd \"{{params.regex}}\" -t d", &[("regex", "identifier")]),
    )
    .await;
    let l = s.ok("plan_lookup", json!({"task": "Find only directories matching build"})).await;
    assert_eq!(l["hit"]["plan_id"].as_str(), Some(dirs.as_str()), "{l}");
    assert_eq!(l["hit"]["steps"][0]["inputs"]["command"], "fd \"build\" -t d", "{l}");
    // A slot whose value the stored text never says: its own text is a miss, not another plan
    // of the same words filled with a guess.
    store(&s, "Show what is listening on the usual port", template("lsof -i :{{params.port}}", &[("port", "number")]))
        .await;
    store(&s, "Show what is listening on port 8080", template("lsof -nP -i :{{params.port}}", &[("port", "number")]))
        .await;
    let l = s.ok("plan_lookup", json!({"task": "Show what is listening on the usual port"})).await;
    assert_eq!(l["status"], "miss", "{l}");
    assert!(l["reason"].as_str().unwrap_or_default().contains("required_slots"), "{l}");
    // The value given by the caller fills it.
    let l = s
        .ok("plan_lookup", json!({"task": "Show what is listening on the usual port", "context": {"port": "3000"}}))
        .await;
    assert_eq!(l["status"], "hit", "{l}");
    assert_eq!(l["hit"]["steps"][0]["inputs"]["command"], "lsof -i :3000", "{l}");
}

#[tokio::test]
async fn a_modifier_or_another_program_is_another_task() {
    let env = Env::new();
    let s = env.serve().await;
    let pairs = [
        ("Search for TODO in src case-sensitively", "rg -s TODO src", "Search for TODO in src, ignoring case"),
        ("List the files in docs, skipping hidden ones", "ls docs", "List the files in docs, including hidden ones"),
        (
            "Print notes.txt starting from the third line",
            "tail -n +3 notes.txt",
            "Print notes.txt starting from the first line",
        ),
        ("Install turbo globally with pnpm", "pnpm add turbo -g", "Install turbo globally with yarn"),
        (
            "Move new.cfg to app.cfg without asking before overwriting",
            "mv -f new.cfg app.cfg",
            "Move new.cfg to app.cfg, asking before overwriting",
        ),
        (
            "Print the objects in products.json where key1 is value1 and key2 is value2",
            "jq 'select(.key1 == \"value1\" and .key2 == \"value2\")' products.json",
            "Print the objects in products.json where key1 is value1 or key2 is value2",
        ),
    ];
    for (task, command, _) in pairs {
        store(&s, task, template(command, &[])).await;
    }
    for (stored, command, other) in pairs {
        let l = s.ok("plan_lookup", json!({"task": other})).await;
        assert_ne!(l["status"], "hit", "{other:?} was served the plan of {stored:?}: {l}");
        let l = s.ok("plan_lookup", json!({"task": stored})).await;
        assert_eq!(l["hit"]["steps"][0]["inputs"]["command"], command, "{stored}: {l}");
    }
}

#[tokio::test]
async fn what_the_command_says_and_the_archive_format_are_part_of_the_task() {
    let env = Env::new();
    let s = env.serve().await;
    store(
        &s,
        "List the closed issues opened by octocat",
        template("gh issue ls -s closed -A {{params.username}}", &[("username", "string")]),
    )
    .await;
    store(&s, "Decompress db.dump.zst", template("zstd -d {{params.archive}}", &[("archive", "path")])).await;
    for other in ["List the open issues opened by octocat", "Decompress corpus.txt.bz2"] {
        let l = s.ok("plan_lookup", json!({"task": other})).await;
        assert_ne!(l["status"], "hit", "{other:?} was served a plan: {l}");
    }
    let l = s.ok("plan_lookup", json!({"task": "Decompress events.json.zst"})).await;
    assert_eq!(l["hit"]["steps"][0]["inputs"]["command"], "zstd -d events.json.zst", "{l}");
}

#[tokio::test]
async fn plan_store_shows_the_value_each_slot_takes_so_a_wrong_guess_can_be_corrected() {
    let env = Env::new();
    let s = env.serve().await;
    let task = "Create a symbolic link /opt/app/current to /opt/app/releases/v2";
    let guessed = template("ln -s {{params.target}} {{params.link}}", &[("target", "path"), ("link", "path")]);
    let out = s.ok("plan_store", json!({"task": task, "template": guessed})).await;
    // Without examples the two paths are taken in order: the output says so, value by value.
    assert_eq!(out["values"], json!({"target": "/opt/app/current", "link": "/opt/app/releases/v2"}), "{out}");
    let mut fixed = template("ln -s {{params.target}} {{params.link}}", &[]);
    fixed["slots"] = json!([{"name": "target", "type": "path", "example": "/opt/app/releases/v2"},
                            {"name": "link", "type": "path", "example": "/opt/app/current"}]);
    // Stored with each slot's example in a project of its own, the plan serves them in place.
    let env = Env::new();
    let s = env.serve().await;
    let out = s.ok("plan_store", json!({"task": task, "template": fixed})).await;
    assert_eq!(out["values"], json!({"target": "/opt/app/releases/v2", "link": "/opt/app/current"}), "{out}");
    let l = s.ok("plan_lookup", json!({"task": task})).await;
    assert_eq!(l["hit"]["steps"][0]["inputs"]["command"], "ln -s /opt/app/releases/v2 /opt/app/current", "{l}");
}
