//! `refrain-bench plans-eval`: the plan cache judged on family data sets (one JSON family per
//! line: members that ask for the same thing with their own values and answers, near-miss
//! negatives, and the plan stored for the first member), through the real binary over MCP.
//!
//! Per data set and split: store each family's plan for `members[0]` (a trace goes through the
//! trace route, as the Stop hook sends it), except one family in five, kept never-stored; look
//! up every other member (must hit that plan with the member's own values: the served steps must
//! equal the member's answer), every negative and every never-stored member (must get no plan,
//! unless the plan served is exactly their own answer). One JSON record per lookup, then totals.
//!
//! `--as-trace` stores a family that comes with a template as an agent's Stop hook would: the
//! first member's own command, run once, as a one-step trace (refrain finds the slots itself).

use crate::mcp::Server;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `plans-eval`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Family data sets (JSON lines); each is run in its own fresh project.
    #[arg(long, required = true)]
    pub data: Vec<PathBuf>,
    /// Which split to run: dev, test or all. `dev` is every non-test family; its records are
    /// labelled `train` or `dev` as the verifier's trainer divides them (30% `dev` by a hash), so
    /// `calibrate --splits train,dev` reads all of them and the default `--splits dev` a part.
    #[arg(long, default_value = "dev")]
    pub split: String,
    /// Model directory for the server (embedding model; a missing one runs without).
    #[arg(long)]
    pub models: Option<PathBuf>,
    /// Write one JSON record per lookup here.
    #[arg(long)]
    pub records: Option<PathBuf>,
    /// Only the first N families of each set (after the split filter and `--sample`).
    #[arg(long)]
    pub limit: Option<usize>,
    /// A seeded sample: the N families of each split first by sha256("SEED:id").
    #[arg(long)]
    pub sample: Option<usize>,
    /// Seed of `--sample`.
    #[arg(long, default_value = "sample")]
    pub seed: String,
    /// Keep each family's first K members (phrasings) only.
    #[arg(long)]
    pub members: Option<usize>,
    /// Keep each family's first K near misses only.
    #[arg(long)]
    pub negatives: Option<usize>,
    /// Print every wrong hit and missed paraphrase to stderr.
    #[arg(long)]
    pub verbose: bool,
    /// Store families that come with a template as the one-step trace of their first member's
    /// command instead (the route an agent's Stop hook takes).
    #[arg(long)]
    pub as_trace: bool,
}

/// One lookup's outcome.
#[derive(Debug, Default, Clone)]
struct Outcome {
    served: bool,
    right: bool,
    ms: f64,
    /// On a miss with a suggestion: whether it is the family's own plan (for a paraphrase, the
    /// plan it should have got).
    suggested: Option<bool>,
    /// A missed paraphrase whose suggestion was its own plan, accepted as an agent that judges
    /// right would accept it (`plan_lookup` with `plan_id`).
    accepted: Option<Accept>,
    /// When that accept needed values: what giving them made of it.
    completed: Option<Completed>,
}

impl Outcome {
    /// Whether the plan taken ended filled right: in one call, or after the values given for
    /// what it asked about (or the kept words it named) as `which` answers them.
    fn final_right(&self, which: impl Fn(&Completed) -> bool) -> bool {
        match &self.completed {
            Some(c) => which(c),
            None => self.accepted == Some(Accept::Right),
        }
    }
}

/// An accept that asked for values (or named the stored words it kept), answered.
#[derive(Debug, Default, Clone, Copy)]
struct Completed {
    /// Given the values the member's text states (matched by the stored member's values), else
    /// refrain's guesses: the steps were the member's own.
    told: bool,
    /// Given what an agent that knows its task answers where refrain asked (`asked`): the steps
    /// were the member's own.
    asked: bool,
    /// Every slot asked for came with a guess that was already that value (the ask only cost a
    /// call).
    confirms: bool,
}

/// What accepting the right suggestion gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Accept {
    /// The filled steps are the member's own trace.
    Right,
    /// Slots left for the agent to give (`needs_values`).
    Unfilled,
    /// Filled, but the steps differ from the member's own trace, and refrain said so
    /// (`caution`).
    WrongCautioned,
    /// Filled, the steps differ from the member's own trace, and nothing said so.
    Wrong,
    /// The server refused the accept.
    Refused,
}

/// Counters for one data set and split.
#[derive(Debug, Default)]
struct Tally {
    families: usize,
    stored: usize,
    refused: usize,
    para: Vec<Outcome>,
    negatives: Vec<Outcome>,
    never: Vec<Outcome>,
}

/// Runs the evaluation; prints one summary line per data set and split.
pub async fn run(args: Args) -> anyhow::Result<()> {
    // The global `--refrain` flag, else `$REFRAIN_BIN`, else `refrain` beside this binary.
    let bin = crate::driver::binary();
    let mut records = match &args.records {
        Some(p) => Some(std::io::BufWriter::new(std::fs::File::create(p)?)),
        None => None,
    };
    for path in &args.data {
        let text = std::fs::read_to_string(path)?;
        let families: Vec<Value> =
            text.lines().filter(|l| !l.trim().is_empty()).map(serde_json::from_str).collect::<Result<_, _>>()?;
        let splits: Vec<&str> = if args.split == "all" { vec!["dev", "test"] } else { vec![args.split.as_str()] };
        for split in splits {
            let fams = select(&families, split, &args);
            let fams: Vec<&Value> = fams.iter().collect();
            let dataset = fams.first().and_then(|f| f["set"].as_str()).unwrap_or("unknown").to_string();
            let server = Server::scratch(&bin, args.models.as_deref()).await?;
            let how = Store { as_trace: args.as_trace };
            let tally = eval(&server, (&dataset, split, how), &fams, &mut records, args.verbose).await?;
            summary(&dataset, split, &tally)?;
        }
    }
    if let Some(r) = records.as_mut() {
        r.flush()?;
    }
    Ok(())
}

/// The families of a split that `--sample`, `--limit`, `--members` and `--negatives` keep.
fn select(families: &[Value], split: &str, args: &Args) -> Vec<Value> {
    use sha2::Digest;
    let mut fams: Vec<&Value> = families.iter().filter(|f| f["split"] == split).collect();
    if let Some(n) = args.sample {
        let id = |f: &Value| f["id"].as_str().map(str::to_string).unwrap_or_else(|| f["id"].to_string());
        fams.sort_by_cached_key(|f| hex::encode(sha2::Sha256::digest(format!("{}:{}", args.seed, id(f)).as_bytes())));
        fams.truncate(n);
    }
    fams.truncate(args.limit.unwrap_or(usize::MAX));
    fams.into_iter()
        .map(|f| {
            let mut f = f.clone();
            for (key, keep) in [("members", args.members), ("negatives", args.negatives)] {
                if let (Some(k), Some(list)) = (keep, f[key].as_array_mut()) {
                    list.truncate(k);
                }
            }
            f
        })
        .collect()
}

/// One family in five (by a hash of its id) is never stored.
fn never_stored(id: &str) -> bool {
    id.bytes().fold(2166136261u32, |h, b| (h ^ u32::from(b)).wrapping_mul(16777619)) % 5 == 0
}

/// How families are stored.
#[derive(Debug, Clone, Copy)]
struct Store {
    as_trace: bool,
}

/// The one-step trace of a member's own command, as a Stop hook sends a turn that ran it.
fn command_trace(member: &Value) -> Option<Value> {
    let command = member["answer"]["command"].as_str()?;
    Some(json!({"steps": [{"tool": "Bash", "inputs": {"command": command}, "side_effect": true, "family": "shell"}]}))
}

async fn eval(
    server: &Server,
    (dataset, split, how): (&str, &str, Store),
    fams: &[&Value],
    records: &mut Option<impl Write>,
    verbose: bool,
) -> anyhow::Result<Tally> {
    let mut t = Tally { families: fams.len(), ..Tally::default() };
    let mut plan_of: BTreeMap<String, String> = BTreeMap::new();
    for f in fams {
        let id = f["id"].as_str().unwrap_or_default();
        if never_stored(id) {
            continue;
        }
        let task = f["members"][0]["text"].as_str().unwrap_or_default();
        let mut args = json!({"task": task});
        match (&f["plan"]["trace"], &f["plan"]["template"]) {
            (Value::Object(_), _) => args["trace"] = f["plan"]["trace"].clone(),
            (_, Value::Object(_)) if how.as_trace && command_trace(&f["members"][0]).is_some() => {
                args["trace"] = command_trace(&f["members"][0]).unwrap_or_default();
            }
            (_, Value::Object(_)) => args["template"] = f["plan"]["template"].clone(),
            _ => anyhow::bail!("family {id} has no plan"),
        }
        let (err, out) = server.call_raw("plan_store", args).await?;
        if err {
            t.refused += 1;
            if verbose {
                eprintln!("REFUSED {id} {task:?}: {}", out["text"]);
            }
        } else {
            t.stored += 1;
            plan_of.insert(id.to_string(), out["plan_id"].as_str().unwrap_or_default().to_string());
        }
    }
    // Warm up (index rebuild, model load) before timing.
    for _ in 0..3 {
        server.call_raw("plan_lookup", json!({"task": "warm up the cache"})).await?;
    }
    for f in fams {
        let id = f["id"].as_str().unwrap_or_default();
        let own = plan_of.get(id).map(String::as_str);
        let members: Vec<&Value> = f["members"].as_array().map(|m| m.iter().collect()).unwrap_or_default();
        let extra: Vec<&Value> = f["same_plan"].as_array().map(|m| m.iter().collect()).unwrap_or_default();
        for (i, m) in members.iter().chain(extra.iter()).enumerate() {
            if own.is_some() && i == 0 {
                continue;
            }
            let expect_hit = own.is_some();
            // The stored member's values, so an accept that needs values can be given them.
            let mut m = (*m).clone();
            m["stored_values"] = f["members"][0]["values"].clone();
            let o = look(server, &m, own, expect_hit, (dataset, split, id), records, verbose).await?;
            if expect_hit { t.para.push(o) } else { t.never.push(o) }
        }
        if own.is_some() {
            for n in f["negatives"].as_array().into_iter().flatten() {
                let o = look(server, n, own, false, (dataset, split, id), records, verbose).await?;
                t.negatives.push(o);
            }
        }
    }
    Ok(t)
}

/// Looks one text up and judges the answer.
async fn look(
    server: &Server,
    item: &Value,
    own: Option<&str>,
    expect_hit: bool,
    (dataset, split, family): (&str, &str, &str),
    records: &mut Option<impl Write>,
    verbose: bool,
) -> anyhow::Result<Outcome> {
    let query = item["text"].as_str().unwrap_or_default();
    let started = Instant::now();
    let (err, out) = server.call_raw("plan_lookup", json!({"task": query, "explain": true})).await?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let served = !err && out["status"] == "hit";
    let served_id = out["hit"]["plan_id"].as_str();
    let same_answer = served && answers_match(&out["hit"]["steps"], &item["answer"]);
    let right =
        if expect_hit { served && served_id == own && same_answer } else { served && served_id != own && same_answer };
    let best = out["explain"]["candidates"].get(0);
    // The agent sees up to three suggestions: right when the family's own plan is among them.
    let ids: Vec<&str> =
        out["suggestions"].as_array().into_iter().flatten().filter_map(|s| s["plan_id"].as_str()).collect();
    let suggested = (!served && !ids.is_empty()).then(|| ids.iter().any(|id| Some(*id) == own));
    let (accepted, completed) = match (expect_hit, suggested) {
        (true, Some(true)) => accept(server, query, own.unwrap_or_default(), item, verbose).await?,
        _ => (None, None),
    };
    if verbose && ((served && !right) || (expect_hit && !served)) {
        let why = if served { "WRONG" } else { "MISS" };
        let detail = best.map(|b| format!("{} {}", b["failed"], b["detail"])).unwrap_or_default();
        eprintln!(
            "{why} {family} {query:?} -> {} | {}",
            out["hit"]["steps"].to_string().chars().take(200).collect::<String>(),
            detail
        );
    }
    if let Some(r) = records.as_mut() {
        // Serving a candidate is right when it is the family's own plan for a paraphrase (and,
        // for the one served, when its filled steps are the member's answer).
        let cand_right = |c: &Value| {
            expect_hit && c["plan_id"].as_str() == own && (c["plan_id"].as_str() != served_id || same_answer)
        };
        let candidates: Vec<Value> = out["explain"]["candidates"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["cosine"].is_number() || c["exact"] == true)
            .map(|c| {
                let gate = &c["gate"];
                json!({
                    "text": c["masked"], "task": c["task"], "failed": c["failed"], "plan_id": c["plan_id"],
                    "right": cand_right(c), "cosine": c["cosine"].as_f64().unwrap_or(0.0),
                    "verifier": c["model_score"], "gate": gate,
                    "exact": c["exact"] == true && gate.is_null(),
                })
            })
            .collect();
        let rec = json!({
            "dataset": dataset, "split": label(dataset, split, family), "kind": "plan", "family": family,
            "query": query, "expect": if expect_hit { "hit" } else { "miss" },
            "best": best.map(|b| b["task"].clone()).unwrap_or(Value::Null),
            "best_right": best.is_some_and(cand_right),
            "cosine": best.map(|b| b["cosine"].clone()).unwrap_or(Value::Null),
            "score": best.map(|b| b["verifier"]["score"].clone()).unwrap_or(Value::Null),
            "method": best.map(|b| b["verifier"]["method"].clone()).unwrap_or(Value::Null),
            "failed": best.map(|b| b["failed"].clone()).unwrap_or(Value::Null),
            "served": served, "right": right, "refused": err, "latency_ms": ms,
            "suggestions": out["suggestions"], "suggestion_right": suggested,
            "accepted": accepted.map(|a| format!("{a:?}").to_lowercase()), "completed": completed.map(|c| c.told),
            "completed_asked": completed.map(|c| c.asked), "ask_confirms": completed.map(|c| c.confirms),
            "candidates": candidates,
        });
        writeln!(r, "{rec}")?;
    }
    Ok(Outcome { served, right, ms, suggested, accepted, completed })
}

/// Accepts a suggested plan for a query and judges the filled steps against the item's answer.
/// When values are asked for, answers twice and judges each: *told* gives the member's own value
/// where the slot's stored example is a value of the stored member (at the same place in its
/// `values`), else confirms refrain's guess; *asked* gives what the member's own steps hold at
/// the places refrain asked about (`asked`: an agent that knows its task), else as told.
async fn accept(
    server: &Server,
    query: &str,
    plan_id: &str,
    item: &Value,
    verbose: bool,
) -> anyhow::Result<(Option<Accept>, Option<Completed>)> {
    let answer = &item["answer"];
    let (err, out) = server.call_raw("plan_lookup", json!({"task": query, "plan_id": plan_id})).await?;
    let got = judge_accept(err, &out, answer);
    if verbose && got != Accept::Right {
        eprintln!("ACCEPT {got:?} {query:?}: {}", first_difference(&out, answer));
    }
    if verbose && let Some(c) = out["accepted"]["caution"].as_str() {
        let guessed = out["accepted"]["unfilled"].as_array().is_some_and(|u| u.iter().all(|u| !u["guess"].is_null()));
        let right = answers_match(&out["accepted"]["steps"], answer);
        eprintln!("CAUTION guessed={guessed} right={right} {c}");
    }
    // An answer in one call that names stored words it kept (`kept`) is a question the agent
    // answers only where its own value differs.
    let list = |key: &str| out["accepted"][key].as_array().cloned().unwrap_or_default();
    let kept: Vec<Value> =
        list("kept").into_iter().map(|w| json!({"name": w, "kind": "word", "example": w, "guess": w})).collect();
    let questions = match got {
        Accept::Unfilled => list("unfilled"),
        Accept::Refused => return Ok((Some(got), None)),
        _ if kept.is_empty() => return Ok((Some(got), None)),
        _ => kept,
    };
    let (stored, own) = (item["stored_values"].as_array(), item["values"].as_array());
    // What an agent that knows its task would give where refrain asked (`asked`).
    let read = crate::asked::values(&out["accepted"]["steps"], &questions, &answer_steps(answer));
    let mut told = serde_json::Map::new();
    let mut knows = serde_json::Map::new();
    let mut confirms = true;
    for u in &questions {
        let Some(name) = u["name"].as_str() else { return Ok((Some(got), None)) };
        let at = stored.and_then(|v| v.iter().position(|x| *x == u["example"]));
        let stated = at.and_then(|i| own.and_then(|o| o.get(i))).cloned();
        let guess = Some(u["guess"].clone()).filter(|g| !g.is_null());
        // The member's own value where the slot's stored example is one of the stored member's
        // values; else refrain's guess, confirmed (an agent that cannot tell would do no better).
        if let Some(v) = stated.clone().or(guess.clone()) {
            told.insert(name.to_string(), v);
        }
        // What the agent's own steps hold there first: the data lists a member's values in the
        // order its text says them, which need not be the stored member's.
        let known = read.get(name).map(|v| Value::String(v.clone())).or(stated).or(guess.clone());
        confirms &= guess.is_some() && known == guess;
        if let Some(v) = known {
            knows.insert(name.to_string(), v);
        }
    }
    if verbose {
        let asked: Vec<String> = questions
            .iter()
            .map(|u| format!("{}:{}={}", u["kind"].as_str().unwrap_or("?"), u["name"], u["guess"]))
            .collect();
        eprintln!("ASKED confirms={confirms} {query:?}: {}", asked.join(" "));
    }
    let mut after = Completed { confirms, ..Completed::default() };
    for (context, right) in [(&told, &mut after.told), (&knows, &mut after.asked)] {
        if context.len() < questions.len() {
            continue;
        }
        // Kept words each given back as they were: the agent does not call again.
        let same = questions.iter().all(|u| u["name"].as_str().and_then(|k| context.get(k)) == Some(&u["guess"]));
        if got != Accept::Unfilled && same {
            *right = got == Accept::Right;
            continue;
        }
        let args = json!({"task": query, "plan_id": plan_id, "context": context});
        let (err, out) = server.call_raw("plan_lookup", args).await?;
        *right = judge_accept(err, &out, answer) == Accept::Right;
        if verbose && !*right {
            eprintln!("GIVEN {context:?} {query:?}: {}", first_difference(&out, answer));
        }
    }
    Ok((Some(got), Some(after)))
}

/// The first step an accept's answer differs from the member's own in (for `--verbose`).
fn first_difference(out: &Value, answer: &Value) -> String {
    let steps = out["accepted"]["steps"].as_array().cloned().unwrap_or_default();
    let want = answer_steps(answer);
    let differs = steps.iter().zip(&want).find(|(a, b)| a["inputs"] != b["inputs"] || a["tool"] != b["tool"]);
    let shown = differs
        .map(|(a, b)| format!("got {} want {}", a["inputs"], b["inputs"]))
        .unwrap_or_else(|| format!("{} steps, want {}; {}", steps.len(), want.len(), out["accepted"]["unfilled"]));
    shown.chars().take(400).collect()
}

/// The member's own steps: a trace's tool calls, or a shell command as one step.
fn answer_steps(answer: &Value) -> Vec<Value> {
    match (answer["trace"]["steps"].as_array(), answer["command"].as_str()) {
        (Some(s), _) => s.clone(),
        (None, Some(cmd)) => vec![json!({"tool": "Bash", "inputs": {"command": cmd}})],
        _ => Vec::new(),
    }
}

/// What an accept answered, against the member's own steps.
fn judge_accept(err: bool, out: &Value, answer: &Value) -> Accept {
    match (err, out["status"].as_str()) {
        (true, _) => Accept::Refused,
        (false, Some("needs_values")) => Accept::Unfilled,
        (false, _) if answers_match(&out["accepted"]["steps"], answer) => Accept::Right,
        (false, _) if out["accepted"]["caution"].is_string() => Accept::WrongCautioned,
        (false, _) => Accept::Wrong,
    }
}

/// The record's split as the verifier's trainer divides families: test stays test, and 30% of
/// the development families (by a hash of set and id) are `dev`, the rest `train`.
fn label(dataset: &str, split: &str, family: &str) -> &'static str {
    if split == "test" { "test" } else { crate::sets::split_of(&format!("{dataset}:{family}"), 0.3, 0.0) }
}

/// Whether served steps are the item's answer: a shell command, or a trace's tool calls.
fn answers_match(steps: &Value, answer: &Value) -> bool {
    let steps = steps.as_array().cloned().unwrap_or_default();
    if let Some(cmd) = answer["command"].as_str() {
        return steps.len() == 1 && steps[0]["inputs"]["command"].as_str() == Some(cmd);
    }
    let want: Vec<Value> = match answer["trace"]["steps"].as_array() {
        Some(s) => s.iter().map(|s| json!([s["tool"], s["inputs"]])).collect(),
        None => {
            let todos = answer["steps"].as_array().cloned().unwrap_or_default();
            let got: Vec<Value> =
                steps.iter().filter(|s| s["tool"] == "todo").map(|s| s["inputs"]["text"].clone()).collect();
            return !todos.is_empty() && got == todos;
        }
    };
    let got: Vec<Value> = steps.iter().map(|s| json!([s["tool"], s["inputs"]])).collect();
    got == want
}

/// Suggestions on misses: for missed paraphrases, how many came with their own plan (and what
/// accepting it gave) or another; for near misses and never-stored tasks, how many came with one
/// at all (what an agent must reject).
fn suggestions(t: &Tally) -> Value {
    let missed: Vec<&Outcome> = t.para.iter().filter(|o| !o.served).collect();
    let with = |v: &[&Outcome], right: bool| v.iter().filter(|o| o.suggested == Some(right)).count();
    let acc = |a: Accept| missed.iter().filter(|o| o.accepted == Some(a)).count();
    let any = |v: &[Outcome]| v.iter().filter(|o| !o.served && o.suggested.is_some()).count();
    let own = |v: &[Outcome]| v.iter().filter(|o| !o.served && o.suggested == Some(true)).count();
    json!({
        "paraphrases_missed": missed.len(),
        "missed_with_right_suggestion": with(&missed, true),
        "missed_with_other_suggestion": with(&missed, false),
        "accepted_values_right": acc(Accept::Right),
        "accepted_unfilled": acc(Accept::Unfilled),
        "unfilled_then_given_values_right":
            missed.iter().filter(|o| o.accepted == Some(Accept::Unfilled) && o.completed.is_some_and(|c| c.told)).count(),
        "unfilled_then_asked_values_right":
            missed.iter().filter(|o| o.accepted == Some(Accept::Unfilled) && o.completed.is_some_and(|c| c.asked)).count(),
        "filled_right_told": missed.iter().filter(|o| o.final_right(|c| c.told)).count(),
        "filled_right_asked": missed.iter().filter(|o| o.final_right(|c| c.asked)).count(),
        "asks_only_confirming":
            missed.iter().filter(|o| o.accepted == Some(Accept::Unfilled) && o.completed.is_some_and(|c| c.confirms)).count(),
        "accepted_wrongly_filled": acc(Accept::Wrong) + acc(Accept::WrongCautioned),
        "accepted_wrongly_filled_with_caution": acc(Accept::WrongCautioned),
        "accept_refused": acc(Accept::Refused),
        "near_misses_with_suggestion": any(&t.negatives),
        "near_misses_suggested_their_family_plan": own(&t.negatives),
        "never_stored_with_suggestion": any(&t.never),
    })
}

fn summary(dataset: &str, split: &str, t: &Tally) -> anyhow::Result<()> {
    let rate = |n: usize, d: usize| if d == 0 { 0.0 } else { n as f64 / d as f64 };
    let served = |v: &[Outcome]| v.iter().filter(|o| o.served).count();
    let right = |v: &[Outcome]| v.iter().filter(|o| o.served && o.right).count();
    let wrong = |v: &[Outcome]| v.iter().filter(|o| o.served && !o.right).count();
    let mut ms: Vec<f64> = t.para.iter().chain(&t.negatives).chain(&t.never).map(|o| o.ms).collect();
    ms.sort_by(f64::total_cmp);
    let pct = |p: f64| ms.get(((ms.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0);
    let line = json!({
        "dataset": dataset, "split": split, "families": t.families, "stored": t.stored, "refused": t.refused,
        "refused_rate": rate(t.refused, t.stored + t.refused),
        "paraphrases": t.para.len(), "paraphrase_hit_rate": rate(served(&t.para), t.para.len()),
        "hits_right_rate": rate(right(&t.para), served(&t.para)), "paraphrase_wrong_hits": wrong(&t.para),
        "negatives": t.negatives.len(), "negatives_wrong_rate": rate(wrong(&t.negatives), t.negatives.len()),
        "negatives_served_own_answer": right(&t.negatives),
        "never_stored": t.never.len(), "never_stored_wrong_rate": rate(wrong(&t.never), t.never.len()),
        "suggestions": suggestions(t),
        "lookup_ms_p50": pct(0.5), "lookup_ms_p99": pct(0.99), "lookups": ms.len(),
    });
    writeln!(std::io::stdout().lock(), "{line}")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(sample: Option<usize>, seed: &str, members: Option<usize>, negatives: Option<usize>) -> Args {
        Args {
            data: Vec::new(),
            split: "dev".into(),
            models: None,
            records: None,
            limit: None,
            sample,
            seed: seed.into(),
            members,
            negatives,
            verbose: false,
            as_trace: false,
        }
    }

    #[test]
    fn a_seeded_sample_keeps_the_same_families_and_cuts_members_and_near_misses() {
        let fam = |id: usize, split: &str| {
            json!({"id": format!("f-{id}"), "split": split,
                   "members": [{"text": "a"}, {"text": "b"}, {"text": "c"}], "negatives": [{"text": "x"}, {"text": "y"}]})
        };
        let families: Vec<Value> = (0..50).map(|i| fam(i, if i % 5 == 0 { "test" } else { "dev" })).collect();
        let all = select(&families, "dev", &args(None, "sample", None, None));
        assert_eq!(all.len(), 40, "the split filter alone");
        let a = select(&families, "dev", &args(Some(10), "sample", Some(2), Some(1)));
        let b = select(&families, "dev", &args(Some(10), "sample", Some(2), Some(1)));
        let ids = |v: &[Value]| v.iter().map(|f| f["id"].as_str().unwrap_or_default().to_string()).collect::<Vec<_>>();
        assert_eq!(ids(&a), ids(&b), "seeded: the same sample every run");
        assert_eq!(a.len(), 10);
        assert!(a.iter().all(|f| f["split"] == "dev"));
        assert!(a.iter().all(|f| f["members"].as_array().map(Vec::len) == Some(2)));
        assert!(a.iter().all(|f| f["negatives"].as_array().map(Vec::len) == Some(1)));
        // The sample is the first families by sha256("seed:id"), not the file's order.
        let mut want: Vec<String> = ids(&all);
        want.sort_by_cached_key(|id| {
            hex::encode(<sha2::Sha256 as sha2::Digest>::digest(format!("sample:{id}").as_bytes()))
        });
        want.truncate(10);
        assert_eq!(ids(&a), want);
        assert_ne!(ids(&a), ids(&all)[..10].to_vec());
        let other = select(&families, "dev", &args(Some(10), "another", None, None));
        assert_ne!(ids(&a), ids(&other), "another seed, another sample");
    }
}
