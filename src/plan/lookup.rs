//! Plan lookup: candidates are plans stored for the same text or masked text, the nearest
//! neighbours of the masked task's embedding, and the task's intent bucket; cheap gates on each
//! compact head (quarantine, opposite wording, required slots, value coverage, tool families,
//! side effects) cut them before any record is read; the survivors go to the verifier in one
//! batch; the accepted ones are filled and validated, and the first that passes is the hit.
//!
//! The same masked task with every value filled is an exact match and needs no model. A near
//! match the verifier rejects may come back as a suggestion, never as a hit. Team plans the
//! user's `team.accept` or review does not serve (`review`) are dropped before any gate.

use super::Error;
use super::align::{Alignment, NewTask, align};
use super::coverage;
use super::fill::fill_aligned;
use super::head::Head;
use super::heads;
use super::hits;
use super::intake::check_task;
use super::key::IntentKey;
use super::library::{self, SCOPE};
use super::mask;
use super::report::{CandidateReport, Differs, Hit, Lookup, Suggestion, VerifierReport};
use super::spelling;
use super::template::now;
use super::validate::{RuntimeCaps, first_failure, validate};
use crate::app::App;
use crate::stats;
use crate::verify::{Candidate, Kind};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// One candidate on its way through the gates.
struct Cand {
    head: Head,
    cosine: Option<f32>,
    alignment: Option<Alignment>,
    masked_new: String,
    masked_stored: String,
    exact: bool,
    verdict: Option<VerifierReport>,
    failed: Option<(String, String)>,
    /// The verifier model's score, when it scored this candidate.
    model_score: Option<f32>,
    /// The gate (plan-side stage or the verifier's own) that dropped it before it was scored.
    gate: Option<String>,
    /// The stored task's own text: only such candidates may be served for it.
    own: bool,
    /// Beyond the nearest few: gated for an explaining lookup's report only.
    beyond: bool,
    /// For a candidate only a value gate refused: its verifier score when no meaning gate
    /// refused it either (it may come back as a suggestion the agent can accept).
    suggest_score: Option<f32>,
    /// Found by the words it shares with the task (`terms`): shown by its rank, whatever its score.
    worded: bool,
}

impl Cand {
    /// A candidate no gate has looked at yet.
    fn of(head: Head, cosine: Option<f32>) -> Cand {
        Cand {
            head,
            cosine,
            alignment: None,
            masked_new: String::new(),
            masked_stored: String::new(),
            exact: false,
            verdict: None,
            failed: None,
            model_score: None,
            gate: None,
            own: false,
            beyond: false,
            suggest_score: None,
            worded: false,
        }
    }
}

/// Looks up a plan for a task.
pub async fn lookup(app: &App, task: &str, context: &Map<String, Value>, caps: &RuntimeCaps) -> Result<Lookup, Error> {
    lookup_explained(app, task, context, caps, false).await
}

/// `lookup`; with `explain`, every candidate is scored by the verifier, the gated ones too, and
/// all are reported (for evaluations: the decisions are the same, the lookup is slower).
pub async fn lookup_explained(
    app: &App,
    task: &str,
    context: &Map<String, Value>,
    caps: &RuntimeCaps,
    explain: bool,
) -> Result<Lookup, Error> {
    lookup_with(app, task, context, caps, explain, false).await
}

/// Looks up like `lookup` but writes and sends nothing: no hit, miss or suggestion counters, no
/// hit recorded on the plan, the local normaliser only (no canonicaliser call, whose answers are
/// cached) and no LLM judge. For reports that ask what past prompts would have hit.
pub async fn lookup_dry(
    app: &App,
    task: &str,
    context: &Map<String, Value>,
    caps: &RuntimeCaps,
) -> Result<Lookup, Error> {
    lookup_with(app, task, context, caps, false, true).await
}

async fn lookup_with(
    app: &App,
    task: &str,
    context: &Map<String, Value>,
    caps: &RuntimeCaps,
    explain: bool,
    dry: bool,
) -> Result<Lookup, Error> {
    check_task(app, task)?;
    let mut clock = Clock::start();
    // Redacted as `store` does, so both see the same text (and no secret reaches a canonicaliser).
    let (clean, _) = crate::results::redactor().redact_str(task);
    let n = if dry {
        super::normalise::normalise(&clean)
    } else {
        super::canon::refine(app, &clean, super::normalise::normalise(&clean)).await
    };
    let key = IntentKey::of(&n);
    let new = NewTask::new(&clean);
    clock.lap("read");
    // A reply to the conversation ("yes", "push") is no task of its own: nothing stored for the
    // same words in another conversation is served or suggested for it.
    if let Some(why) = super::standalone::refusal(&clean) {
        if !dry {
            stats::bump(&app.store, "plans", "not_standalone", None, 1)?;
        }
        let masked = new.masked.text.clone();
        let (suggestion, suggestions, candidates) = (None, Vec::new(), Vec::new());
        let meaning = "none: the task does not stand alone".to_string();
        return Ok(Lookup {
            hit: None,
            suggestion,
            suggestions,
            task: n,
            key,
            masked,
            reason: Some(why),
            candidates,
            meaning,
        });
    }
    let Gathered { mut found, same, mut read, query, meaning, embed_ms, worded } = gather(app, &new, &key).await?;
    clock.lap("gather");
    clock.laps.push(("of which embedding", embed_ms));
    // A team plan this user's settings do not serve (`review`) is no candidate at all: no hit, no
    // suggestion, not even its task among the candidates reported, nor a place among the nearest.
    let policy = super::review::Policy::of(&app.config.team);
    let mut allowed = Vec::with_capacity(found.len());
    for f in found {
        if policy.refusal(&app.store, &f.0)?.is_none() {
            allowed.push(f);
        }
    }
    found = allowed;
    let mut near = nearest(app, query.as_deref(), &mut found, &read, &same.masked, app.config.matching.candidates);
    near.extend(same.own);
    let mut cands = Vec::with_capacity(found.len());
    for (id, cosine) in found {
        // Beyond the nearest few, a candidate costs a head read and the text gates, and is never
        // served: it may still be suggested, when its words bring it near (`suggest`).
        let beyond = !near.contains(&id);
        let by_words = worded.contains(&id);
        if beyond && !explain && !by_words && cosine.is_none_or(|c| c < app.config.plans.suggest_min_score) {
            continue;
        }
        let head = match read.remove(&id) {
            Some(h) => Some(h),
            None => library::head(&app.store, &id)?,
        };
        if let Some(head) = head {
            // Beyond the nearest, a candidate is never served: its gates only name why in a
            // suggestion, so they run for the few suggested (`suggest`), not for every one.
            let mut c =
                if beyond && !explain { Cand::of(head, cosine) } else { gate(head, cosine, &new, context, caps) };
            c.beyond = beyond;
            c.worded = by_words;
            if beyond && c.failed.is_none() {
                c.failed = Some(("not_nearest".into(), "not among the nearest stored tasks".into()));
            }
            cands.push(c);
        }
    }
    fill_cosines(app, query.as_deref(), &mut cands, explain);
    clock.lap("gates");
    // A task asked again word for word gets its own plan or nothing: another plan filled with
    // guessed values would answer a task the user did not write.
    if cands.iter().any(|c| c.own) {
        for c in cands.iter_mut().filter(|c| !c.own && c.failed.is_none()) {
            c.failed = Some(("own_text".into(), "the task is word for word another stored plan's task".into()));
        }
    }
    for c in cands.iter_mut() {
        c.gate = c.failed.as_ref().map(|f| f.0.clone());
    }
    verify(app, &mut cands, &new.masked.text, explain, dry).await;
    clock.lap("verifier");
    cands.sort_by(|a, b| rank(b).total_cmp(&rank(a)).then_with(|| a.head.id.cmp(&b.head.id)));
    let mut hit = None;
    for c in cands.iter_mut().filter(|c| c.failed.is_none()) {
        match serve(app, c, &new, caps, dry)? {
            Ok(h) => {
                hit = Some(h);
                break;
            }
            Err(f) => c.failed = Some(f),
        }
    }
    // A phrasing the agent took a suggestion for, and reported success with, is the plan's alias.
    if hit.is_none() {
        hit = super::alias::serve(app, &clean, context, caps, dry)?;
    }
    clock.lap("serve");
    let served = hit.as_ref().map(|h: &Hit| h.plan_id.clone());
    let shown = if explain { cands.len() } else { app.config.plans.report_candidates.max(1) };
    // Without explaining, only the nearest are reported, as they were all the gates saw.
    let candidates: Vec<CandidateReport> =
        cands.iter().filter(|c| explain || !c.beyond).take(shown).map(report).collect();
    let masked = new.masked.text.clone();
    if hit.is_some() {
        if !dry {
            stats::bump(&app.store, "plans", "hits", None, 1)?;
        }
        clock.lap("answer");
        clock.log(cands.len());
        return Ok(Lookup {
            hit,
            suggestion: None,
            suggestions: Vec::new(),
            task: n,
            key,
            masked,
            reason: None,
            candidates,
            meaning,
        });
    }
    if !dry {
        stats::bump(&app.store, "plans", "misses", None, 1)?;
    }
    let suggestions = suggest(&cands, app.config.plans.suggest_min_score, served.as_deref(), (context, caps), &new);
    if !suggestions.is_empty() && !dry {
        stats::bump(&app.store, "plans", "suggestions", None, 1)?;
    }
    let reason = Some(miss_reason(cands.iter().filter(|c| explain || !c.beyond)));
    let suggestion = suggestions.first().cloned();
    clock.lap("answer");
    clock.log(cands.len());
    Ok(Lookup { hit: None, suggestion, suggestions, task: n, key, masked, reason, candidates, meaning })
}

/// Gathers the candidates: the task's own text, the index's neighbours, the buckets' heads.
async fn gather(app: &App, new: &NewTask, key: &IntentKey) -> Result<Gathered, Error> {
    let cfg = &app.config.plans;
    let mut found: Vec<(String, Option<f32>)> = Vec::new();
    let push = |found: &mut Vec<(String, Option<f32>)>, id: String, cos: Option<f32>| match found
        .iter_mut()
        .find(|(x, _)| *x == id)
    {
        Some(f) => f.1 = f.1.or(cos),
        None => found.push((id, cos)),
    };
    let same = library::same_text(&app.store, &new.text, cfg.bucket_candidates)?;
    for id in same.own.iter().chain(&same.masked) {
        push(&mut found, id.clone(), None);
    }
    let started = std::time::Instant::now();
    let embedded = embed(app, &new.masked.text).await;
    let embed_ms = started.elapsed().as_secs_f64() * 1000.0;
    let (query, meaning) = match embedded {
        Ok(v) => {
            let index = app.index().await?;
            let (q, k) = (v.clone(), cfg.neighbours);
            let hits = crate::budget::spawn_blocking(move || index.search(SCOPE, &q, k, 0.0))
                .await
                .map_err(|e| Error::Invalid(format!("index search failed: {e}")))?
                .map_err(|e| Error::Invalid(format!("index search failed: {e}")))?;
            for h in hits {
                push(&mut found, String::from_utf8_lossy(&h.target).into_owned(), Some(h.score));
            }
            (Some(v), "embeddings".to_string())
        }
        Err(why) => (None, format!("exact wording only ({why})")),
    };
    let mut read = HashMap::new();
    for b in key.lookup_buckets() {
        for h in heads::bucket(&app.store, &b, cfg.bucket_candidates)? {
            push(&mut found, h.id.clone(), None);
            read.insert(h.id.clone(), h);
        }
    }
    // Stored tasks that share the task's telling words, wherever their embedding put them: they
    // may be suggested, never served (they are not among the nearest unless their cosine is).
    let mut worded = HashSet::new();
    for id in super::terms::sharing(&app.store, &new.text, WORDED)? {
        if !found.iter().any(|(x, _)| *x == id)
            && let Some(h) = library::head(&app.store, &id)?
        {
            push(&mut found, id.clone(), None);
            read.insert(id.clone(), h);
        }
        worded.insert(id);
    }
    Ok(Gathered { found, same, read, query, meaning, embed_ms, worded })
}

/// What `gather` found.
struct Gathered {
    /// Candidate ids with their cosine when known.
    found: Vec<(String, Option<f32>)>,
    /// The plans stored for the task's own text (they always go through the gates) and for its
    /// masked text.
    same: library::SameText,
    /// The heads already read (the buckets').
    read: HashMap<String, Head>,
    /// The masked task's vector, when the model is ready.
    query: Option<Vec<f32>>,
    /// How meaning was found.
    meaning: String,
    /// Milliseconds the embedding took.
    embed_ms: f64,
    /// The candidates found by the words they share with the task (`terms`).
    worded: HashSet<String>,
}

/// Candidates gathered by shared words, beyond the nearest embeddings.
const WORDED: usize = 8;

/// Where a lookup's time goes, logged at debug level (`REFRAIN_LOG=refrain::plan::lookup=debug`):
/// how `plan_lookup`'s time beyond the embedding was found.
struct Clock {
    last: std::time::Instant,
    first: std::time::Instant,
    laps: Vec<(&'static str, f64)>,
}

impl Clock {
    fn start() -> Clock {
        let now = std::time::Instant::now();
        Clock { last: now, first: now, laps: Vec::new() }
    }

    fn lap(&mut self, name: &'static str) {
        let now = std::time::Instant::now();
        self.laps.push((name, (now - self.last).as_secs_f64() * 1000.0));
        self.last = now;
    }

    fn log(&self, candidates: usize) {
        if tracing::enabled!(tracing::Level::DEBUG) {
            let total = self.first.elapsed().as_secs_f64() * 1000.0;
            let laps: Vec<String> = self.laps.iter().map(|(n, ms)| format!("{n} {ms:.3}")).collect();
            tracing::debug!(total_ms = total, candidates, laps = %laps.join(", "), "plan lookup timings (ms)");
        }
    }
}

/// The masked task's embedding, unless the model is not ready (a lookup never waits for it).
/// How long a lookup waits for an embedding model still loading (it loads in about a second, and
/// a session's first prompt reaches the hook about then): after that it matches by exact wording.
const MODEL_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

async fn embed(app: &App, masked: &str) -> Result<Vec<f32>, String> {
    if let crate::embed::ModelState::Loading = app.embed.state() {
        let _ = tokio::time::timeout(MODEL_WAIT, app.embed.settled()).await;
    }
    match app.embed.state() {
        crate::embed::ModelState::Ready(_) => app.embed.embed_one(masked).await.map_err(|e| e.to_string()),
        crate::embed::ModelState::Unavailable(r) => Err(format!("no embedding model: {r}")),
        crate::embed::ModelState::Loading => Err("the embedding model is still loading".to_string()),
    }
}

/// The cheap gates, on the head alone.
fn gate(head: Head, cosine: Option<f32>, new: &NewTask, context: &Map<String, Value>, caps: &RuntimeCaps) -> Cand {
    let mut c = Cand::of(head, cosine);
    let fail = |stage: &str, detail: String| Some((stage.to_string(), detail));
    if let Some(why) = &c.head.quarantined {
        c.failed = fail("quarantined", why.clone());
        return c;
    }
    // The stored task's own text: its own plan with its own values, no guessing.
    if let Some(a) = super::align::own(&c.head, new, context) {
        c.own = true;
        c.exact = true;
        c.masked_new = c.head.masked.clone();
        c.masked_stored = c.head.masked.clone();
        if !a.missing.is_empty() {
            c.failed = fail("required_slots", format!("no value in the task for slot(s) {}", a.missing.join(", ")));
        } else if let Some(f) = caps_failure(&c.head, caps) {
            c.failed = Some(f);
        }
        c.alignment = Some(a);
        return c;
    }
    if let Some((a, b)) = coverage::opposite(&c.head.words, new) {
        c.failed = fail("opposite", format!("the plan is for a task that says `{a}`, this one says `{b}`"));
        return c;
    }
    let a = align(&c.head, new, context);
    c.masked_new = a.masked_new(new);
    c.masked_stored = a.masked_stored(&c.head);
    let (cn, cs) = (mask::canonical(&c.masked_new), mask::canonical(&c.masked_stored));
    c.exact = polite(&cn) == polite(&cs);
    if !a.missing.is_empty() {
        c.failed = fail("required_slots", format!("no value in the task for slot(s) {}", a.missing.join(", ")));
    } else if let Err((stage, detail)) = coverage::check(&c.head, new, &a) {
        c.failed = fail(stage, detail);
    } else if let Some(f) = caps_failure(&c.head, caps) {
        c.failed = Some(f);
    }
    c.alignment = Some(a);
    c
}

/// The runtime's limits a plan breaks: tool families it lacks, side effects it forbids.
fn caps_failure(head: &Head, caps: &RuntimeCaps) -> Option<(String, String)> {
    if let Some(have) = &caps.tool_families
        && let Some(f) = head.families.iter().find(|f| !have.contains(f))
    {
        return Some(("tool_families".into(), format!("the plan needs the `{f}` tools")));
    }
    (caps.allow_side_effects == Some(false) && head.side_effects)
        .then(|| ("side_effects".into(), "the plan has steps with side effects and they are not allowed".into()))
}

/// A canonical masked text without a polite opening ("please", "can you").
fn polite(s: &str) -> &str {
    let mut t = s;
    for p in ["please ", "pls ", "kindly ", "can you ", "could you ", "would you ", "will you ", "please "] {
        t = t.strip_prefix(p).unwrap_or(t);
    }
    t.trim_end_matches(" please")
}

/// Cosines for survivors and candidates only a value gate refused (every candidate when
/// explaining) found without one (same text or bucket), from their stored vectors.
fn fill_cosines(app: &App, query: Option<&[f32]>, cands: &mut [Cand], all: bool) {
    let Some(q) = query else { return };
    let Some(index) = app.index_now() else { return };
    for c in cands.iter_mut().filter(|c| (all || c.failed.is_none() || value_gated(c)) && c.cosine.is_none()) {
        if let Some(v) = c.head.vector.and_then(|id| index.stored_vector(SCOPE, id)) {
            c.cosine = Some(crate::embed::cosine(q, &v));
        }
    }
}

/// The candidates that go through the gates besides the task's own text: the `limit` nearest,
/// those with the same masked text first (their cosine is 1 by construction), then by cosine.
/// Bucket heads get their cosine from the loaded scope's codes, so ranking costs no store read;
/// the index's neighbours carry theirs. Without a query vector (no model) every candidate goes
/// on; with one, a candidate that has no cosine and another masked text could not pass anyway.
fn nearest(
    app: &App,
    query: Option<&[f32]>,
    found: &mut [(String, Option<f32>)],
    read: &HashMap<String, Head>,
    masked: &[String],
    limit: usize,
) -> HashSet<String> {
    let (Some(q), Some(index)) = (query, app.index_now()) else {
        return found.iter().map(|(id, _)| id.clone()).collect();
    };
    for (id, cos) in found.iter_mut().filter(|(_, c)| c.is_none()) {
        if let Some(v) = read.get(id).and_then(|h| h.vector).and_then(|v| index.stored_vector(SCOPE, v)) {
            *cos = Some(crate::embed::cosine(q, &v));
        }
    }
    let mut ranked: Vec<(&String, f32)> = found
        .iter()
        .filter_map(|(id, c)| if masked.contains(id) { Some((id, 2.0)) } else { c.map(|c| (id, c)) })
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    ranked.into_iter().take(limit.max(1)).map(|(id, _)| id.clone()).collect()
}

/// Exact matches are accepted as they are; the others go to the verifier, one batch per
/// distinct masked query (usually one). Explaining, the gated candidates are scored too (their
/// decision stays the gate's). Candidates only a value gate refused are scored for a suggestion
/// only (without explaining, in their own batch that never asks the LLM judge).
async fn verify(app: &App, cands: &mut [Cand], masked_new: &str, explain: bool, dry: bool) {
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut for_suggestion: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, c) in cands.iter_mut().enumerate() {
        if c.failed.is_some() {
            if explain && c.cosine.is_some() {
                if c.masked_new.is_empty() {
                    (c.masked_new, c.masked_stored) = (masked_new.to_string(), c.head.masked.clone());
                }
                groups.entry(c.masked_new.clone()).or_default().push(i);
            } else if value_gated(c) && !c.beyond && c.cosine.is_some() {
                for_suggestion.entry(c.masked_new.clone()).or_default().push(i);
            }
        } else if c.exact {
            c.verdict = Some(VerifierReport { score: 1.0, threshold: 0.0, accepted: true, method: "exact".into() });
        } else if c.cosine.is_none() {
            c.failed = Some((
                "verifier".into(),
                "without the embedding model only the same wording with other values is served".into(),
            ));
        } else {
            groups.entry(c.masked_new.clone()).or_default().push(i);
        }
    }
    for (query, idx) in groups {
        let batch = batch_of(cands, &idx);
        let assessed = if dry {
            app.verify.assess_local(Kind::Plan, &query, &batch, explain).await
        } else {
            app.verify.assess(Kind::Plan, &query, &batch, explain).await
        };
        for (&i, a) in idx.iter().zip(assessed) {
            let (c, v) = (&mut cands[i], a.verdict);
            c.model_score = a.model_score;
            if c.failed.is_some() {
                note_suggestion(c, &a);
                continue;
            }
            c.gate = a.gate.map(|g| g.reason().to_string());
            c.verdict = Some(VerifierReport {
                score: v.score,
                threshold: v.threshold,
                accepted: v.accepted,
                method: v.method.name().into(),
            });
            if !v.accepted {
                c.failed = Some((
                    "verifier".into(),
                    format!("verifier score {:.3} is below its threshold {:.3}", v.score, v.threshold),
                ));
            }
        }
    }
    for (query, idx) in for_suggestion {
        let batch = batch_of(cands, &idx);
        let assessed = app.verify.assess_local(Kind::Plan, &query, &batch, false).await;
        for (&i, a) in idx.iter().zip(assessed) {
            note_suggestion(&mut cands[i], &a);
        }
    }
}

/// The verifier's inputs for some candidates.
fn batch_of<'a>(cands: &'a [Cand], idx: &[usize]) -> Vec<Candidate<'a>> {
    idx.iter()
        .map(|&i| Candidate {
            stored: cands[i].masked_stored.as_str(),
            cosine: cands[i].cosine.unwrap_or(0.0),
            bias: cands[i].head.bias,
        })
        .collect()
}

/// Refused by a value gate only (`VALUE_GATES`), not by a meaning gate.
fn value_gated(c: &Cand) -> bool {
    c.failed.as_ref().is_some_and(|f| VALUE_GATES.contains(&f.0.as_str()))
}

/// The value gates whose candidates may be suggested: the agent judges them, seeing the values the
/// two tasks do not share. `required_slots`: the plan needs a value the task does not give, which
/// an agent that takes the plan supplies in `context`. `coverage`: a value of one task has no place
/// in the other; taken, such a plan may keep the stored task's value, and `caution` says so. On the
/// coding families' development split, suggesting `coverage` candidates too brought the right plan
/// into the three shown for 155 of 378 missed paraphrases instead of 91; taking it then gave the
/// member's own steps 31 times, asked for values 37 times and filled 87 wrongly (78 of them named
/// by `caution`). Such candidates are scored by the verifier for their suggestion; the others a
/// gate refused are shown by their cosine (see `suggest`).
const VALUE_GATES: &[&str] = &["required_slots", "coverage"];

/// Keeps a value-gated candidate's score for a suggestion when no meaning gate of the verifier
/// (negation, direction, opposite, tool, day...) refused it.
fn note_suggestion(c: &mut Cand, a: &crate::verify::Assessed) {
    if value_gated(c) && !c.beyond && a.gate.is_none() {
        c.suggest_score = Some(a.verdict.score);
    }
}

/// Order: exact and accepted first, then by verifier score, then by cosine.
fn rank(c: &Cand) -> f32 {
    let passed = if c.failed.is_none() { 10.0 } else { 0.0 } + if c.own { 5.0 } else { 0.0 };
    let score = c.verdict.as_ref().map_or(0.0, |v| v.score);
    passed + 2.0 * score + c.cosine.unwrap_or(0.0) * 0.01
}

/// Reads the record, fills and validates; the hit, or the stage that failed.
fn serve(
    app: &App,
    c: &Cand,
    new: &NewTask,
    caps: &RuntimeCaps,
    dry: bool,
) -> Result<Result<Hit, (String, String)>, Error> {
    let Some(rec) = library::get(&app.store, &c.head.id)? else {
        return Ok(Err(("gone".into(), "the plan was evicted during the lookup".into())));
    };
    let Some(a) = &c.alignment else { return Ok(Err(("required_slots".into(), "not aligned".into()))) };
    let filled = fill_aligned(&rec.plan.template, a, new);
    let stages = validate(&rec.plan.template, &filled, caps);
    if let Some(f) = first_failure(&stages) {
        return Ok(Err((f.stage.to_string(), f.detail.clone().unwrap_or_default())));
    }
    if let Some(why) = spelling::stale(&rec.plan.template, &filled) {
        return Ok(Err(("stale_values".into(), why)));
    }
    let counters = rec.plan.counters.clone();
    // A full store still serves plans; their hit counters wait until there is room again.
    // Counted in memory and written in batches (`hits`).
    if !dry && app.store.check_room().is_ok() {
        hits::record(&app.store, &rec.plan.id, now())?;
    }
    let v = c.verdict.clone().unwrap_or_default();
    Ok(Ok(Hit {
        plan_id: rec.plan.id,
        score: v.score,
        method: v.method,
        steps: filled.steps,
        values: filled.values,
        sources: filled.sources,
        stages,
        outputs: rec.plan.template.outputs.iter().map(|o| o.name.clone()).collect(),
        versions: rec.plan.versions,
        provenance: rec.plan.provenance,
        stored_at: rec.plan.stored_at,
        counters,
    }))
}

fn report(c: &Cand) -> CandidateReport {
    CandidateReport {
        plan_id: c.head.id.clone(),
        task: c.head.task.clone(),
        masked: c.head.masked.clone(),
        action: c.head.key.action.clone(),
        kind: c.head.key.kind.clone(),
        cosine: c.cosine,
        exact: c.exact,
        verifier: c.verdict.clone(),
        model_score: c.model_score,
        gate: c.gate.clone(),
        failed: c.failed.as_ref().map(|f| f.0.clone()),
        detail: c.failed.as_ref().map(|f| f.1.clone()),
    }
}

/// Most suggestions a miss carries.
pub const MAX_SUGGESTIONS: usize = 3;

/// The near stored tasks a miss shows the agent, at or above `min`. Gates decide hits, never what
/// is shown: the agent judges, and each suggestion says why it was no hit (`failed`, `detail`) and
/// which values differ. Its `score` is the verifier's when no gate refused it (below its
/// threshold, or only a value gate refused it), else (`gated`) the masked tasks' cosine. Never the
/// served plan, never one the runtime's caps rule out. Candidates beyond the nearest few are never
/// served but may be shown (gated, `not_nearest` when no other gate refused them).
///
/// The order is `lexical::fused`: the masked tasks' cosine plus the stored task's words shared with
/// this one (`lexical`), whether or not a gate refused it, so the plan of a family that shares
/// the task's words outranks one that only reads alike. On the coding families' development split
/// it brought the right plan into the three shown for 304 of 378 missed paraphrases instead of
/// 262 (what no gate refused first, then the gated, each by score; test split, run once: 210 of
/// 253, was 177), and the hook, which reads only what no gate refused, shows no more often.
fn suggest(
    cands: &[Cand],
    min: f32,
    served: Option<&str>,
    (context, caps): (&Map<String, Value>, &RuntimeCaps),
    new: &NewTask,
) -> Vec<Suggestion> {
    let found: Vec<(&Cand, &String, &String, f32, bool)> = cands
        .iter()
        .filter(|c| Some(c.head.id.as_str()) != served)
        .filter_map(|c| {
            let (stage, detail) = c.failed.as_ref()?;
            if caps_failure(&c.head, caps).is_some() {
                return None;
            }
            let (score, gated) = match stage.as_str() {
                "verifier" if c.gate.is_none() => (c.verdict.as_ref().map(|v| v.score), false),
                _ if value_gated(c) && c.suggest_score.is_some() => (c.suggest_score, false),
                _ => (c.cosine, true),
            };
            Some((c, stage, detail, score?, gated))
        })
        .filter(|(c, _, _, s, _)| *s >= min || c.worded)
        .collect();
    let tasks: Vec<&str> = found.iter().map(|f| f.0.head.task.as_str()).collect();
    let cosines: Vec<f32> = found.iter().map(|f| f.0.cosine.unwrap_or(f.3)).collect();
    super::lexical::fused(&new.text, &tasks, &cosines)
        .into_iter()
        .map(|i| found[i])
        .take(MAX_SUGGESTIONS)
        .map(|(c, stage, detail, score, gated)| {
            // A candidate beyond the nearest that no gate looked at yet: the gate that refuses it,
            // if any, says more than "not among the nearest".
            let named = (c.beyond && stage == "not_nearest")
                .then(|| gate(c.head.clone(), c.cosine, new, context, caps).failed)
                .flatten();
            let (stage, detail) = named.unwrap_or_else(|| (stage.clone(), detail.clone()));
            Suggestion {
                plan_id: c.head.id.clone(),
                task: c.head.task.clone(),
                score,
                // A verifier gate's reason says more than the threshold it never reached.
                detail: match (stage.as_str(), &c.gate) {
                    ("verifier", Some(reason)) => reason.clone(),
                    _ => detail,
                },
                failed: stage,
                gated,
                differs: differs(&c.head, new),
            }
        })
        .collect()
}

/// The values the stored task and the new one do not share.
fn differs(head: &Head, new: &NewTask) -> Differs {
    let stored: Vec<String> =
        head.slots.iter().filter_map(|s| s.example.clone()).chain(head.constants.clone()).collect();
    let yours: Vec<String> = new.masked.spans.iter().map(|s| s.value.clone()).collect();
    let only = |a: &[String], b: &[String]| -> Vec<String> {
        let mut out: Vec<String> = a.iter().filter(|v| !b.contains(v)).cloned().collect();
        out.dedup();
        out.truncate(4);
        out
    };
    Differs { stored: only(&stored, &yours), yours: only(&yours, &stored) }
}

fn miss_reason<'a>(cands: impl Iterator<Item = &'a Cand>) -> String {
    let cands: Vec<&Cand> = cands.collect();
    let Some(best) = cands.first() else {
        return "no stored plan is near this task".into();
    };
    let (stage, detail) = best.failed.clone().unwrap_or_default();
    format!("{} candidate(s), none passed; the nearest ({:?}) failed `{stage}`: {detail}", cands.len(), best.head.task)
}
