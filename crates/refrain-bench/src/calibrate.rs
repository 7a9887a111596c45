//! `refrain-bench calibrate`: turns evaluation records into `calibration.json` and reports what the
//! resulting thresholds do, per dataset: on its development split, on its test split, and
//! leave-one-dataset-out (thresholds from every other dataset's development split, measured on
//! this one's test split: the figures that count).
//!
//! The rule is refrain's own (`refrain::verify::calib`): per development dataset, the lowest
//! threshold whose one-sided 95% Clopper-Pearson upper bound on the share of negative lookups
//! served anything is at most the rate; the strictest dataset wins.

use crate::record::{self, Record};
use refrain::verify::calib::{self, Calibration, Negatives};
use refrain::verify::{Gate, Method};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Flags of `calibrate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Record files written by `results-eval` (and the plan runner).
    #[arg(required = true)]
    pub records: Vec<PathBuf>,
    /// Write the calibration here (e.g. models/verifier/calibration.json).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The verifier model directory the records were made with: the calibration names its
    /// model.onnx sha256 and carries the model's thresholds, so refrain judges by the model. Without
    /// it the calibration is the rule's (plain cosine and the gates) and the model is not used.
    #[arg(long)]
    pub verifier: Option<PathBuf>,
    /// The rate the report is computed at (`matching.max_wrong_rate`).
    #[arg(long, default_value_t = 0.01)]
    pub rate: f64,
    /// Also report the development figures of other sets of cheap gates, to show what each earns.
    #[arg(long)]
    pub compare_gates: bool,
    /// Also write the calibration records: the development negatives only, each reduced to the
    /// candidates that decide it, without any text (public sets' texts stay out of the repository).
    /// The calibration rebuilt from them is the same file.
    #[arg(long)]
    pub minimal: Option<PathBuf>,
}

/// How candidates are scored when recomputing a decision.
#[derive(Debug, Clone, Copy)]
pub struct Opts {
    /// Scores come from this method.
    pub method: Method,
    /// The cheap gates results run (plans run none here: they gate on values themselves).
    pub gates: &'static [Gate],
}

impl Opts {
    /// The gates the shipped binary runs.
    pub fn shipped(method: Method) -> Opts {
        Opts { method, gates: refrain::verify::gate::RESULT_GATES }
    }

    fn refuses(&self, r: &Record, c: &crate::record::Cand) -> bool {
        if r.kind == "plan" {
            // Plans gate on values themselves (slots, coverage, opposite actions...): the server
            // never scores a candidate one of those stages dropped, so neither does calibration.
            return c.gate.is_some();
        }
        if r.kind != "result" {
            return false;
        }
        if c.text.is_empty() {
            return c.gate.as_deref().is_some_and(|g| self.gates.iter().any(|x| x.reason() == g));
        }
        self.gates.iter().any(|g| g.refuses(&r.query, &c.text))
    }
}

/// Gate sets compared by `--compare-gates`.
const GATE_SETS: &[&[Gate]] = &[
    &[],
    &[Gate::Values],
    &[Gate::Values, Gate::Negation],
    &[Gate::Values, Gate::Direction],
    &[Gate::Values, Gate::Negation, Gate::Direction],
    &[Gate::Values, Gate::Negation, Gate::Direction, Gate::Quoted],
    &[Gate::Values, Gate::Negation, Gate::Direction, Gate::Quoted, Gate::Opposite],
    &[Gate::Values, Gate::Negation, Gate::Direction, Gate::Quoted, Gate::Opposite, Gate::Term],
    &[Gate::Values, Gate::Negation, Gate::Direction, Gate::Quoted, Gate::Opposite, Gate::Tool],
    &[Gate::Values, Gate::Negation, Gate::Direction, Gate::Quoted, Gate::Opposite, Gate::Term, Gate::Tool],
];

/// The best candidate's score and whether serving it is right, as the server would decide.
pub fn best(r: &Record, o: Opts) -> Option<(f32, bool)> {
    if r.candidates.is_empty() {
        // Records without candidates (plan runners): the record's own best.
        let s = match o.method {
            Method::Cosine => r.cosine,
            _ if r.method.as_deref() == Some("exact") => Some(1.0),
            _ if r.method.as_deref() == Some(o.method.name()) => r.score,
            _ => None,
        };
        return s.map(|s| (s, r.best_right));
    }
    r.candidates
        .iter()
        .filter_map(|c| {
            if c.exact {
                return Some((1.0, c.right));
            }
            if o.refuses(r, c) || (o.method == Method::CrossEncoder && c.cosine < refrain::verify::gate::FLOOR) {
                return None;
            }
            let s = if o.method == Method::Cosine { Some(c.cosine) } else { c.verifier };
            s.map(|s| (s, c.right))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// Figures at one threshold.
#[derive(Debug, Default, Clone, Copy)]
pub struct Figures {
    positives: usize,
    right: usize,
    wrong: usize,
    negatives: usize,
    served: usize,
}

fn measure(records: &[&Record], o: Opts, t: f32) -> Figures {
    let mut f = Figures::default();
    for r in records {
        let b = best(r, o).filter(|(s, _)| *s >= t);
        if r.expect == "hit" {
            f.positives += 1;
            match b {
                Some((_, true)) => f.right += 1,
                Some((_, false)) => f.wrong += 1,
                None => {}
            }
        } else {
            f.negatives += 1;
            f.served += usize::from(b.is_some());
        }
    }
    f
}

fn pct(n: usize, d: usize) -> String {
    if d == 0 { "-".to_string() } else { format!("{:.1}%", 100.0 * n as f64 / d as f64) }
}

/// "right / wrong of positives" for a table cell.
fn hits_cell(f: &Figures) -> String {
    format!("{} right, {} wrong of {}", pct(f.right, f.positives), pct(f.wrong, f.positives), f.positives)
}

/// "served of negatives (upper bound)" for a table cell.
fn negatives_cell(f: &Figures) -> String {
    if f.negatives == 0 {
        return "-".into();
    }
    let ub = 100.0 * calib::upper_bound(f.served, f.negatives, calib::CONFIDENCE);
    format!("{} of {} (<= {ub:.1}%)", pct(f.served, f.negatives), f.negatives)
}

type Groups<'a> = BTreeMap<(String, String), BTreeMap<String, Vec<&'a Record>>>;

/// Records grouped by (kind, dataset) then split.
fn group(records: &[Record]) -> Groups<'_> {
    let mut g: Groups<'_> = BTreeMap::new();
    for r in records {
        g.entry((r.kind.clone(), r.dataset.clone())).or_default().entry(r.split.clone()).or_default().push(r);
    }
    g
}

/// The development negatives' best scores. A lookup whose text is a stored text (public sets hold
/// the same question under two ids) is served that entry whatever the threshold, so it says
/// nothing about where the threshold belongs and is left out of the sample.
fn negatives(dev: &[&Record], o: Opts) -> Negatives {
    let scores: Vec<Option<f32>> =
        dev.iter().filter(|r| r.expect == "miss" && !exact_text(r)).map(|r| best(r, o).map(|(s, _)| s)).collect();
    Negatives::from_scores(&scores)
}

/// The lookup's text is a stored text.
fn exact_text(r: &Record) -> bool {
    r.method.as_deref() == Some("exact") || r.candidates.iter().any(|c| c.exact)
}

fn methods(records: &[Record]) -> Vec<Method> {
    let has_model = records.iter().any(|r| r.candidates.iter().any(|c| c.verifier.is_some()))
        || records.iter().any(|r| r.method.as_deref() == Some("cross_encoder"));
    if has_model { vec![Method::CrossEncoder, Method::Cosine] } else { vec![Method::Cosine] }
}

/// The methods a calibration is made for: the model's only when it names the model (a calibration
/// without one is the rule's, whatever scores the records carry), and always plain cosine.
fn calibrated_methods(records: &[Record], with_model: bool) -> Vec<Method> {
    if with_model { methods(records) } else { vec![Method::Cosine] }
}

/// Builds the calibration from the records' development splits.
pub fn build(records: &[Record], verifier_sha256: Option<String>) -> Calibration {
    let ms = calibrated_methods(records, verifier_sha256.is_some());
    let mut c = Calibration {
        version: 1,
        rule: "per development dataset, the lowest threshold whose one-sided 95% Clopper-Pearson upper bound on the share of negative lookups served anything is at most matching.max_wrong_rate; the strictest dataset wins (lookups whose text is a stored text are served it at any threshold and left out)".into(),
        embedding_model: refrain::embed::MODEL_NAME.into(),
        verifier_sha256,
        kinds: BTreeMap::new(),
    };
    for ((kind, dataset), splits) in group(records) {
        let Some(dev) = splits.get("dev") else { continue };
        for &m in &ms {
            let neg = negatives(dev, Opts::shipped(m));
            if neg.n == 0 {
                continue;
            }
            c.kinds.entry(kind.clone()).or_default().entry(m.name().into()).or_default().insert(dataset.clone(), neg);
        }
    }
    c
}

/// The records `build` needs, and nothing else: development negatives, each with its best candidate
/// under every method (texts and family names removed: those candidates passed the gates already).
pub fn minimal(records: &[Record], with_model: bool) -> Vec<Record> {
    let ms = calibrated_methods(records, with_model);
    records
        .iter()
        .filter(|r| r.split == "dev" && r.expect == "miss")
        .map(|r| {
            let mut keep: Vec<crate::record::Cand> = Vec::new();
            for &m in &ms {
                let o = Opts::shipped(m);
                let chosen = r
                    .candidates
                    .iter()
                    .filter(|c| {
                        c.exact
                            || !(o.refuses(r, c)
                                || (m == Method::CrossEncoder && c.cosine < refrain::verify::gate::FLOOR))
                    })
                    .filter_map(|c| {
                        let s = if c.exact {
                            Some(1.0)
                        } else if m == Method::Cosine {
                            Some(c.cosine)
                        } else {
                            c.verifier
                        };
                        s.map(|s| (s, c))
                    })
                    .max_by(|a, b| a.0.total_cmp(&b.0));
                if let Some((_, c)) = chosen {
                    let mut c = c.clone();
                    c.text.clear();
                    c.gate = None;
                    keep.push(c);
                }
            }
            // Every candidate gated: nothing to fall back on (the record's own best is for plan
            // runners that list no candidates).
            let none_left = !r.candidates.is_empty() && keep.is_empty();
            Record {
                dataset: r.dataset.clone(),
                split: r.split.clone(),
                kind: r.kind.clone(),
                expect: r.expect.clone(),
                best_right: r.best_right,
                cosine: r.cosine.filter(|_| !none_left),
                score: r.score.filter(|_| !none_left),
                served: r.served,
                right: r.right,
                refused: r.refused,
                method: r.method.clone().filter(|_| !none_left),
                candidates: keep,
                ..Record::default()
            }
        })
        .collect()
}

/// Runs the command: writes the calibration and prints the report (Markdown) on stdout.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let mut records = Vec::new();
    for p in &args.records {
        records.extend(record::read(p)?);
    }
    let sha = match &args.verifier {
        Some(dir) => {
            let bytes = std::fs::read(dir.join("model.onnx"))
                .map_err(|e| anyhow::anyhow!("cannot read {}/model.onnx: {e}", dir.display()))?;
            use sha2::Digest;
            Some(hex::encode(sha2::Sha256::digest(&bytes)))
        }
        None => None,
    };
    let c = build(&records, sha);
    if let Some(path) = &args.minimal {
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        record::write(&mut out, &minimal(&records, c.verifier_sha256.is_some()))?;
        std::io::Write::flush(&mut out)?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(out) = &args.out {
        std::fs::write(out, serde_json::to_string_pretty(&c)? + "\n")?;
        eprintln!("wrote {}", out.display());
    }
    report(&records, args)
}

fn report(records: &[Record], args: &Args) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let groups = group(records);
    for m in methods(records) {
        let o = Opts::shipped(m);
        writeln!(out, "\n### {} at max_wrong_rate {}\n", m.name(), args.rate)?;
        writeln!(
            out,
            "| kind | dataset | threshold (set by) | dev: hits | dev: negatives served | test: hits | test: negatives served | leave-one-out threshold | leave-one-out test: hits | leave-one-out test: negatives served |"
        )?;
        writeln!(out, "|---|---|---|---|---|---|---|---|---|---|")?;
        for ((kind, dataset), splits) in &groups {
            let all = threshold(&groups, kind, None, o, args.rate);
            let loo = threshold(&groups, kind, Some(dataset), o, args.rate);
            let get = |s: &str| splits.get(s).map(Vec::as_slice).unwrap_or_default();
            let (dev, test) = (measure(get("dev"), o, all.0), measure(get("test"), o, all.0));
            let left_out = measure(get("test"), o, loo.0);
            writeln!(
                out,
                "| {kind} | {dataset} | {:.3} ({}) | {} | {} | {} | {} | {:.3} ({}) | {} | {} |",
                all.0,
                all.1,
                hits_cell(&dev),
                negatives_cell(&dev),
                hits_cell(&test),
                negatives_cell(&test),
                loo.0,
                loo.1,
                hits_cell(&left_out),
                negatives_cell(&left_out)
            )?;
        }
    }
    if args.compare_gates {
        compare_gates(&groups, records, args.rate, &mut out)?;
    }
    Ok(())
}

/// Development figures of each gate set, per method and dataset (thresholds recalibrated per set).
fn compare_gates(
    groups: &Groups<'_>,
    records: &[Record],
    rate: f64,
    out: &mut impl std::io::Write,
) -> anyhow::Result<()> {
    writeln!(out, "\n### Cheap gates compared on the development splits (max_wrong_rate {rate})\n")?;
    writeln!(out, "| method | gates | dataset | threshold | hits | negatives served |")?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    for m in methods(records) {
        for &gates in GATE_SETS {
            let o = Opts { method: m, gates };
            let names: Vec<&str> = gates.iter().map(|g| g.reason()).collect();
            let names = if names.is_empty() { "none".to_string() } else { names.join("; ") };
            for ((kind, dataset), splits) in groups.iter().filter(|((k, _), _)| k == "result") {
                let t = threshold(groups, kind, None, o, rate);
                let dev = measure(splits.get("dev").map(Vec::as_slice).unwrap_or_default(), o, t.0);
                writeln!(
                    out,
                    "| {} | {names} | {dataset} | {:.3} | {} | {} |",
                    m.name(),
                    t.0,
                    hits_cell(&dev),
                    negatives_cell(&dev)
                )?;
            }
        }
    }
    Ok(())
}

/// The threshold of a kind from every development dataset except `leave_out` (strictest wins).
fn threshold(groups: &Groups<'_>, kind: &str, leave_out: Option<&str>, o: Opts, rate: f64) -> (f32, String) {
    groups
        .iter()
        .filter(|((k, d), _)| k == kind && Some(d.as_str()) != leave_out)
        .filter_map(|((_, d), splits)| {
            let neg = negatives(splits.get("dev")?, o);
            (neg.n > 0).then(|| {
                let (t, certified) = neg.threshold(rate);
                (t, if certified { d.clone() } else { format!("{d}, uncertified") })
            })
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .unwrap_or((f32::INFINITY, "no development data".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHIPPED_RECORDS: &str =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/verifier/calibration-records.jsonl");

    #[test]
    fn the_shipped_calibration_is_what_calibrate_makes_of_the_committed_records() {
        let shipped = Calibration::parse(refrain::verify::calib::SHIPPED).unwrap();
        let records = record::read(std::path::Path::new(SHIPPED_RECORDS)).unwrap();
        assert!(!records.is_empty(), "no calibration records are committed");
        let rebuilt = build(&records, shipped.verifier_sha256.clone());
        assert_eq!(serde_json::to_value(&rebuilt).unwrap(), serde_json::to_value(&shipped).unwrap());
        // And the thresholds refrain derives from it are finite for results at the default rate.
        assert!(shipped.threshold("result", "cosine", 0.01).is_some_and(|d| d.value.is_finite() && d.value < 1.0));
    }

    #[test]
    fn minimal_records_calibrate_exactly_as_the_full_ones() {
        let cand = |text: &str, cosine: f32, right: bool| crate::record::Cand {
            text: text.into(),
            right,
            cosine,
            verifier: None,
            gate: None,
            exact: false,
        };
        let rec = |split: &str, expect: &str, q: &str, cands: Vec<crate::record::Cand>| Record {
            dataset: "d".into(),
            split: split.into(),
            kind: "result".into(),
            query: q.into(),
            expect: expect.into(),
            cosine: cands.first().map(|c| c.cosine),
            candidates: cands,
            ..Record::default()
        };
        let records = vec![
            rec(
                "dev",
                "miss",
                "install python 3.12",
                vec![cand("install python 3.11", 0.97, false), cand("set up python 3.12 in a venv", 0.6, false)],
            ),
            rec("dev", "miss", "install python 3.12 now", vec![cand("install python 3.11 now", 0.95, false)]),
            rec("dev", "miss", "what is a monad", vec![cand("what is a functor", 0.8, false)]),
            rec("dev", "hit", "what is rust", vec![cand("what's rust", 0.9, true)]),
            rec("test", "miss", "what is go", vec![cand("what is rust", 0.85, false)]),
        ];
        let small = minimal(&records, false);
        assert_eq!(small.len(), 3, "development negatives only");
        assert!(small.iter().all(|r| r.query.is_empty() && r.candidates.iter().all(|c| c.text.is_empty())));
        let (a, b) = (build(&records, None), build(&small, None));
        assert_eq!(serde_json::to_value(&a).unwrap(), serde_json::to_value(&b).unwrap());
        assert_eq!(a.kinds["result"]["cosine"]["d"].top, vec![0.8, 0.6]);
    }
}
