//! `VerifyHandle`: the verifier model loading in the background, the thresholds derived once from
//! `matching.max_wrong_rate`, and `judge`, which decides a lookup's candidates in one batch.
//!
//! The model runs on the blocking pool. A lookup waits for the load to settle (well under a
//! second), then uses the model when it is loaded and the calibration was made for it, and plain
//! cosine at the cosine calibration otherwise; the reason is logged once and shown in `report`.
//! When the calibration names no model, the model decides nothing, so it is not loaded at start
//! (no memory, no hashing): only a lookup that asks for every score (an evaluation's `explain`)
//! loads it, once.

use super::calib::{self, Calibration, Derived};
use super::llm::LlmJudge;
use super::model::{self, CrossEncoder};
use super::{Candidate, Error, Gate, Kind, Method, Verdict, gate, text};
use crate::config::MatchingConfig;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::watch;

/// Where the verifier's files are.
#[derive(Debug, Clone)]
pub struct VerifierFiles {
    /// `<model dir>/verifier`: the model, its tokenizer, `manifest.json`, `calibration.json`.
    pub dir: PathBuf,
    /// The ONNX runtime library (shared with the embedder).
    pub runtime: PathBuf,
}

impl VerifierFiles {
    /// The standard layout under a models directory.
    pub fn under(models: &Path, runtime: PathBuf) -> VerifierFiles {
        VerifierFiles { dir: models.join(model::DIR), runtime }
    }
}

#[derive(Clone)]
enum State {
    Loading,
    /// Loaded; `calibrated` is false when the calibration was made for another model.
    Ready {
        model: Arc<CrossEncoder>,
        calibrated: bool,
    },
    Unavailable(String),
    /// Not loaded: the calibration names no model. Loaded by the first lookup that asks for
    /// every score.
    Idle,
}

/// What loading the model needs, kept until a lookup asks for it.
struct Loader {
    files: VerifierFiles,
    threads: usize,
    want: Option<String>,
    tx: watch::Sender<State>,
}

impl Loader {
    /// Loads the model on the blocking pool at normal priority (it is often first asked for inside
    /// a tool call) and publishes the outcome.
    fn start(self) {
        let Loader { files, threads, want, tx } = self;
        let _ = tx.send(State::Loading);
        crate::threads::spawn_blocking_detached(move || {
            let started = Instant::now();
            let state = match CrossEncoder::load(&files.dir, &files.runtime, threads) {
                Ok(m) => {
                    let calibrated = want.as_deref().is_some_and(|w| w.eq_ignore_ascii_case(&m.sha256));
                    let elapsed_ms = started.elapsed().as_millis() as u64;
                    if calibrated {
                        tracing::info!(version = %m.version, elapsed_ms, "verifier model loaded");
                    } else if want.is_some() {
                        tracing::warn!(version = %m.version, "verifier model loaded but the calibration was made for another model: matching uses plain cosine at its calibrated threshold; run refrain-bench calibrate or ./install.sh");
                    } else {
                        tracing::info!(version = %m.version, elapsed_ms, "verifier model loaded for scores only (the calibration names no model)");
                    }
                    State::Ready { model: Arc::new(m), calibrated }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "no verifier model: matching uses plain cosine at its calibrated (strict) threshold");
                    State::Unavailable(e.to_string())
                }
            };
            let _ = tx.send(state);
        });
    }
}

struct Inner {
    rx: watch::Receiver<State>,
    /// Set while the model waits to be loaded on demand (`State::Idle`).
    loader: Mutex<Option<Loader>>,
    calibration: Calibration,
    calibration_from: String,
    rate: f64,
    thresholds: HashMap<(Kind, Method), Derived>,
    llm: Option<LlmJudge>,
}

/// How close to its threshold (either side) a score must be for the LLM judge to decide it.
fn llm_band(method: Method) -> f32 {
    if method == Method::CrossEncoder { 0.15 } else { 0.05 }
}

/// A cheap-to-clone handle to the verification stage.
#[derive(Clone)]
pub struct VerifyHandle(Arc<Inner>);

/// One candidate's verdict with what led to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Assessed {
    /// The decision.
    pub verdict: Verdict,
    /// The gate that dropped it before scoring, if one did.
    pub gate: Option<Gate>,
    /// The verifier model's score, when the model scored it.
    pub model_score: Option<f32>,
}

/// What `cache_stats` shows about verification.
#[derive(Debug, Clone)]
pub struct Report {
    /// `cross_encoder`, `cosine` or `loading`.
    pub method: String,
    /// The model (name, version) or why plain cosine is used.
    pub detail: String,
    /// The configured rate.
    pub max_wrong_rate: f64,
    /// `kind/method` -> threshold and the dataset that set it.
    pub thresholds: Vec<(String, f32, String)>,
    /// Where the calibration came from.
    pub calibration: String,
}

impl VerifyHandle {
    /// Starts loading the verifier on a blocking thread (None: no model, cosine only, `no_model`
    /// says why) and derives the thresholds. Must be called inside a tokio runtime when `files`
    /// is given.
    pub fn spawn(
        files: Option<VerifierFiles>,
        cfg: &MatchingConfig,
        no_model: &str,
        llm: Option<LlmJudge>,
    ) -> VerifyHandle {
        let (calibration, from) = load_calibration(files.as_ref().map(|f| f.dir.as_path()));
        let Some(files) = files else {
            return Self::with_state(State::Unavailable(no_model.to_string()), calibration, from, cfg, llm);
        };
        let want = calibration.verifier_sha256.clone();
        let (tx, rx) = watch::channel(if want.is_some() { State::Loading } else { State::Idle });
        let loader = Loader { files, threads: cfg.threads, want, tx };
        let loader = if matches!(*rx.borrow(), State::Idle) {
            Some(loader)
        } else {
            loader.start();
            None
        };
        VerifyHandle(Arc::new(Inner {
            rx,
            loader: Mutex::new(loader),
            thresholds: derive(&calibration, rate(cfg)),
            calibration,
            calibration_from: from,
            rate: rate(cfg),
            llm,
        }))
    }

    /// A handle without a model (plain cosine at its calibrated threshold).
    pub fn cosine_only(cfg: &MatchingConfig, why: &str) -> VerifyHandle {
        Self::spawn(None, cfg, why, None)
    }

    fn with_state(
        state: State,
        calibration: Calibration,
        from: String,
        cfg: &MatchingConfig,
        llm: Option<LlmJudge>,
    ) -> VerifyHandle {
        let (_tx, rx) = watch::channel(state);
        let rate = rate(cfg);
        let thresholds = derive(&calibration, rate);
        VerifyHandle(Arc::new(Inner {
            rx,
            loader: Mutex::new(None),
            thresholds,
            calibration,
            calibration_from: from,
            rate,
            llm,
        }))
    }

    /// Decides every candidate of one lookup in one batch; verdicts in input order.
    pub async fn judge(&self, kind: Kind, query: &str, cands: &[Candidate<'_>]) -> Vec<Verdict> {
        self.assess(kind, query, cands, false).await.into_iter().map(|a| a.verdict).collect()
    }

    /// `assess` without asking the optional LLM judge (which sends text out and caches answers):
    /// for dry lookups that must write and send nothing.
    pub async fn assess_local(
        &self,
        kind: Kind,
        query: &str,
        cands: &[Candidate<'_>],
        score_all: bool,
    ) -> Vec<Assessed> {
        self.assess_with(kind, query, cands, score_all, false).await
    }

    /// `judge` with the gate and model score of each candidate. `score_all` also scores what the
    /// gates dropped (and scores with an uncalibrated model) so evaluations can see every score;
    /// the decisions stay the same.
    pub async fn assess(&self, kind: Kind, query: &str, cands: &[Candidate<'_>], score_all: bool) -> Vec<Assessed> {
        self.assess_with(kind, query, cands, score_all, true).await
    }

    async fn assess_with(
        &self,
        kind: Kind,
        query: &str,
        cands: &[Candidate<'_>],
        score_all: bool,
        ask_llm: bool,
    ) -> Vec<Assessed> {
        let gates: Vec<Option<Gate>> = cands.iter().map(|c| gate_of(query, c)).collect();
        let exact: Vec<bool> = cands.iter().map(|c| text::same(query, c.stored)).collect();
        if score_all {
            self.load_on_demand();
        }
        let (model, calibrated) = match self.state().await {
            State::Ready { model, calibrated } => (Some(model), calibrated),
            _ => (None, false),
        };
        let method = if calibrated { Method::CrossEncoder } else { Method::Cosine };
        let wanted: Vec<usize> =
            (0..cands.len()).filter(|&i| !exact[i] && (score_all || (calibrated && gates[i].is_none()))).collect();
        let mut model_scores: Vec<Option<f32>> = vec![None; cands.len()];
        let mut method = method;
        if let Some(m) = model.filter(|_| !wanted.is_empty()) {
            let texts: Vec<(String, f32)> =
                wanted.iter().map(|&i| (cands[i].stored.to_string(), cands[i].cosine)).collect();
            match score(m, query.to_string(), texts).await {
                Ok(s) => wanted.iter().zip(s).for_each(|(&i, s)| model_scores[i] = Some(s)),
                Err(e) => {
                    tracing::warn!(error = %e, "verifier failed on this lookup; deciding by cosine");
                    method = Method::Cosine;
                }
            }
        }
        let threshold = self.threshold(kind, method);
        let mut out: Vec<Assessed> = (0..cands.len())
            .map(|i| {
                let c = &cands[i];
                if exact[i] {
                    let verdict = Verdict { score: 1.0, threshold: 1.0, accepted: true, method: Method::Exact };
                    return Assessed { verdict, gate: None, model_score: model_scores[i] };
                }
                let score = match method {
                    Method::CrossEncoder => model_scores[i].unwrap_or(0.0),
                    _ => c.cosine,
                };
                let limit = threshold + c.bias.max(0.0);
                let accepted = gates[i].is_none() && score >= limit;
                let shown = if gates[i].is_some() && !score_all { 0.0 } else { score };
                let verdict = Verdict { score: shown, threshold: limit, accepted, method };
                Assessed { verdict, gate: gates[i], model_score: model_scores[i] }
            })
            .collect();
        if let Some(judge) = self.0.llm.as_ref().filter(|_| ask_llm) {
            let band = llm_band(method);
            let border: Vec<usize> = (0..out.len())
                .filter(|&i| {
                    let v = out[i].verdict;
                    out[i].gate.is_none() && v.method != Method::Exact && (v.score - v.threshold).abs() <= band
                })
                .collect();
            if !border.is_empty() {
                let stored: Vec<&str> = border.iter().map(|&i| cands[i].stored).collect();
                for (&i, same) in border.iter().zip(judge.judge(kind.name(), query, &stored).await) {
                    if let Some(same) = same {
                        out[i].verdict.accepted = same;
                        out[i].verdict.method = Method::Llm;
                    }
                }
            }
        }
        out
    }

    /// The threshold a kind's candidates must reach with a method (before any entry's bias).
    pub fn threshold(&self, kind: Kind, method: Method) -> f32 {
        match method {
            Method::Exact => 1.0,
            Method::Llm => self.threshold(kind, Method::CrossEncoder),
            _ => self.0.thresholds.get(&(kind, method)).map_or(f32::INFINITY, |d| d.value),
        }
    }

    /// The method lookups use now (`None` while the model is loading).
    pub fn method_now(&self) -> Option<Method> {
        match &*self.0.rx.borrow() {
            State::Loading => None,
            State::Ready { calibrated: true, .. } => Some(Method::CrossEncoder),
            State::Idle => Some(Method::Cosine),
            _ => Some(Method::Cosine),
        }
    }

    /// The state for `cache_stats`, without waiting.
    pub fn report(&self) -> Report {
        let state = self.0.rx.borrow().clone();
        let (method, detail) = match state {
            State::Loading => ("loading".to_string(), "the verifier model is loading".to_string()),
            State::Ready { model, calibrated: true } => {
                ("cross_encoder".into(), format!("verifier model {} (sha256 {:.12})", model.version, model.sha256))
            }
            State::Ready { model, calibrated: false } if self.0.calibration.verifier_sha256.is_none() => (
                "cosine".into(),
                format!(
                    "verifier model {} loaded for scores only: the calibration names no model, plain cosine at its calibrated threshold decides",
                    model.version
                ),
            ),
            State::Ready { model, calibrated: false } => (
                "cosine".into(),
                format!(
                    "verifier model {} (sha256 {:.12}) is not the one the calibration was made for: plain cosine at its calibrated threshold",
                    model.version, model.sha256
                ),
            ),
            State::Unavailable(why) => ("cosine".into(), format!("plain cosine at its calibrated threshold: {why}")),
            State::Idle => (
                "cosine".into(),
                "plain cosine at its calibrated threshold: the calibration names no verifier model, so it is not loaded".into(),
            ),
        };
        let mut thresholds: Vec<(String, f32, String)> = self
            .0
            .thresholds
            .iter()
            .map(|((k, m), d)| {
                let note = if d.certified {
                    d.dataset.clone()
                } else {
                    format!("{} (too few negatives to certify)", d.dataset)
                };
                (format!("{}/{}", k.name(), m.name()), d.value, note)
            })
            .collect();
        thresholds.sort_by(|a, b| a.0.cmp(&b.0));
        Report { method, detail, max_wrong_rate: self.0.rate, thresholds, calibration: self.0.calibration_from.clone() }
    }

    /// The calibration in use.
    pub fn calibration(&self) -> &Calibration {
        &self.0.calibration
    }

    /// Starts loading a model that waits for a lookup asking for every score (once).
    fn load_on_demand(&self) {
        let loader = self.0.loader.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(loader) = loader {
            loader.start();
        }
    }

    /// Waits until no model load is in flight (a model waiting to be asked for is not loading).
    pub async fn settled(&self) {
        let _ = self.state().await;
    }

    async fn state(&self) -> State {
        let mut rx = self.0.rx.clone();
        rx.wait_for(|s| !matches!(s, State::Loading))
            .await
            .map(|s| s.clone())
            .unwrap_or_else(|_| State::Unavailable("verifier loader stopped".into()))
    }
}

fn gate_of(query: &str, c: &Candidate<'_>) -> Option<Gate> {
    if text::same(query, c.stored) {
        return None;
    }
    gate::GATES.iter().copied().find(|g| g.refuses(query, c.stored)).or((c.cosine < gate::FLOOR).then_some(Gate::Floor))
}

async fn score(model: Arc<CrossEncoder>, query: String, texts: Vec<(String, f32)>) -> Result<Vec<f32>, Error> {
    // Under the calling request's budget, and giving way to other calls when it is a slow one.
    crate::budget::spawn_blocking(move || {
        let refs: Vec<(&str, f32)> = texts.iter().map(|(t, c)| (t.as_str(), *c)).collect();
        model.score(&query, &refs)
    })
    .await
    .map_err(|e| Error::Failed(e.to_string()))?
}

fn rate(cfg: &MatchingConfig) -> f64 {
    let r = cfg.max_wrong_rate;
    if r.is_finite() && r > 0.0 && r < 1.0 {
        r
    } else {
        tracing::warn!(max_wrong_rate = r, "matching.max_wrong_rate must be above 0 and below 1; using 0.01");
        0.01
    }
}

/// Thresholds per kind and method; a kind without its own calibration takes the strictest other.
fn derive(c: &Calibration, rate: f64) -> HashMap<(Kind, Method), Derived> {
    let mut out = HashMap::new();
    for method in [Method::CrossEncoder, Method::Cosine] {
        let own: Vec<(Kind, Option<Derived>)> =
            [Kind::Plan, Kind::Result].into_iter().map(|k| (k, c.threshold(k.name(), method.name(), rate))).collect();
        let strictest = own.iter().filter_map(|(_, d)| d.clone()).max_by(|a, b| a.value.total_cmp(&b.value));
        for (kind, d) in own {
            if let Some(d) = d.or_else(|| strictest.clone()) {
                out.insert((kind, method), d);
            }
        }
    }
    out
}

/// The calibration beside the model when there is a readable one, else the shipped one.
fn load_calibration(dir: Option<&Path>) -> (Calibration, String) {
    if let Some(path) = dir.map(|d| d.join("calibration.json")).filter(|p| p.is_file()) {
        match std::fs::read_to_string(&path).map_err(|e| e.to_string()).and_then(|t| Calibration::parse(&t)) {
            Ok(c) => return (c, path.display().to_string()),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "ignoring this calibration; using the shipped one")
            }
        }
    }
    match Calibration::parse(calib::SHIPPED) {
        Ok(c) => (c, "shipped with refrain".into()),
        Err(e) => {
            tracing::error!(error = %e, "the shipped calibration is unreadable: nothing is served by meaning");
            (Calibration::default(), format!("none ({e})"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Candidate, Gate, gate_of};

    fn gate(query: &str, stored: &str) -> Option<Gate> {
        gate_of(query, &Candidate { stored, cosine: 0.95, bias: 0.0 })
    }

    #[test]
    fn masked_plan_tasks_run_the_results_gates_too() {
        // Another language or package manager, an opposite action, another term and a reversed
        // direction survive masking (they are words, not values).
        assert_eq!(
            gate("add <name> as a dependency with yarn", "add <name> as a dependency with npm"),
            Some(Gate::Tool)
        );
        assert_eq!(gate("enable <name> in <path>", "disable <name> in <path>"), Some(Gate::Opposite));
        assert_eq!(gate("convert a date to a string", "convert a string to a date"), Some(Gate::Direction));
        assert_eq!(gate("parse <string> as a localdatetime", "parse <string> as a localdate"), Some(Gate::Term));
    }

    #[test]
    fn a_pair_two_gates_refuse_is_named_by_the_first_of_the_gates_for_plans_and_results_alike() {
        // "one" against "every", and a negation: `Values` comes first in `GATES`.
        let (q, s) = ("delete one branch not merged into <name>", "delete every branch merged into <name>");
        assert!(Gate::Values.refuses(q, s) && Gate::Negation.refuses(q, s));
        assert_eq!(gate(q, s), Some(Gate::Values));
    }

    #[test]
    fn a_reworded_masked_plan_task_is_not_gated() {
        for (q, s) in [
            ("Create a symbolic link <path> to <path>", "make a symlink <path> pointing to <path>"),
            ("add <path> <version> as a dependency", "depend on <path> version <version>"),
            ("Benchmark <url> for at most <number> seconds", "spend up to <number> seconds benchmarking <url>"),
        ] {
            assert_eq!(gate(q, s), None, "{q:?} / {s:?}");
        }
        // Identical text is never gated.
        assert_eq!(gate("enable <name>", "enable <name>"), None);
    }
}
