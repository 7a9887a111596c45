//! `refrain-bench calibrate`: turns evaluation records into `calibration.json` and reports what the
//! resulting thresholds do, per dataset: on its calibration split, on its test split, and
//! leave-one-dataset-out (thresholds from every other dataset's calibration split, measured on
//! this one's test split: the figures that count).
//!
//! The rule is refrain's own (`refrain::verify::calib`): per calibration dataset, the lowest
//! threshold whose one-sided 95% Clopper-Pearson upper bound on the share of negative lookups
//! served anything is at most the rate; the strictest dataset wins.
//!
//! The calibration split is `dev` by default: the groups the learned verifier never trained on.
//! The rule (cosine and gates) learns nothing from `train`, so it may calibrate on `train` and
//! `dev` together (`--splits train,dev`): several times the negatives, enough for a dataset to
//! show 1% at all (299 negatives at zero served). `test` is never a calibration split.

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
    /// A model's calibration reads `dev` only (the model trained on `train`).
    #[arg(long)]
    pub verifier: Option<PathBuf>,
    /// The splits whose records calibrate, pooled per dataset: `dev` (default), or `train,dev`
    /// for the rule, which has no learned parameters (several times the negatives). Never `test`;
    /// with `--verifier` only `dev`.
    #[arg(long, value_delimiter = ',', default_value = "dev")]
    pub splits: Vec<String>,
    /// The rate the report is computed at (`matching.max_wrong_rate`).
    #[arg(long, default_value_t = 0.01)]
    pub rate: f64,
    /// Also report the calibration-split figures of other sets of cheap gates, to show what each earns.
    #[arg(long)]
    pub compare_gates: bool,
    /// Also write the calibration records: the calibration split's negatives only, each reduced to the
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
        Opts { method, gates: refrain::verify::gate::GATES }
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
    &[Gate::Values, Gate::Negation, Gate::Direction, Gate::Quoted, Gate::Opposite, Gate::Term, Gate::Tool, Gate::Day],
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
    if f.positives == 0 {
        return "-".into();
    }
    format!("{} / {} of {} ({} right)", f.right, f.wrong, f.positives, pct(f.right, f.positives))
}

/// "served of negatives (share, upper bound)" for a table cell.
fn negatives_cell(f: &Figures) -> String {
    if f.negatives == 0 {
        return "-".into();
    }
    let ub = 100.0 * calib::upper_bound(f.served, f.negatives, calib::CONFIDENCE);
    format!("{} of {} ({}, <= {ub:.1}%)", f.served, f.negatives, pct(f.served, f.negatives))
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

/// The calibration splits, sorted and deduplicated, after checking them: never `test` (the figures
/// that count), only `train` and `dev`, and only `dev` for a model's calibration (it trained on
/// `train`, so its scores there are not what it does on unseen text).
pub fn calibration_splits(splits: &[String], with_model: bool) -> anyhow::Result<Vec<String>> {
    let mut out: Vec<String> = splits.iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
    out.sort();
    out.dedup();
    if let Some(bad) = out.iter().find(|s| *s != "train" && *s != "dev") {
        anyhow::bail!("--splits takes train and dev only, not {bad:?} (test is what calibration is judged on)");
    }
    if out.is_empty() {
        anyhow::bail!("--splits names no split (train, dev)");
    }
    if with_model && out != ["dev"] {
        anyhow::bail!("a calibration for the verifier model reads dev only: the model trained on train");
    }
    Ok(out)
}

/// The splits a method is calibrated on: the model's scores on `train` are scores on its own
/// training data, so the model reads `dev` whatever the rule pools.
fn splits_for(m: Method, cal_splits: &[String]) -> Vec<String> {
    if m == Method::CrossEncoder { vec!["dev".to_string()] } else { cal_splits.to_vec() }
}

/// One dataset's records of the calibration splits, pooled.
fn pooled<'a>(by_split: &BTreeMap<String, Vec<&'a Record>>, splits: &[String]) -> Vec<&'a Record> {
    splits.iter().filter_map(|s| by_split.get(s)).flatten().copied().collect()
}

/// The rule in words, naming the calibration splits (`dev` alone keeps the original wording).
fn rule(splits: &[String]) -> String {
    let tail = "the lowest threshold whose one-sided 95% Clopper-Pearson upper bound on the share of negative lookups served anything is at most matching.max_wrong_rate; the strictest dataset wins (lookups whose text is a stored text are served it at any threshold and left out)";
    if splits == ["dev"] {
        format!("per development dataset, {tail}")
    } else {
        format!("per dataset, pooling its {} groups (never test), {tail}", splits.join(" and "))
    }
}

/// The calibration negatives' best scores. A lookup whose text is a stored text (public sets hold
/// the same question under two ids) is served that entry whatever the threshold, so it says
/// nothing about where the threshold belongs and is left out of the sample.
fn negatives(cal: &[&Record], o: Opts) -> Negatives {
    let scores: Vec<Option<f32>> =
        cal.iter().filter(|r| r.expect == "miss" && !exact_text(r)).map(|r| best(r, o).map(|(s, _)| s)).collect();
    Negatives::from_scores(&scores)
}

/// Each (kind, dataset)'s calibration negatives under one method, computed once: the calibration
/// is made of them, and every threshold of the report (a dataset's own, every dataset's, all but
/// one's) is read from them.
type NegativesOf<'g> = BTreeMap<&'g (String, String), Negatives>;

fn negatives_of<'g>(groups: &'g Groups<'_>, o: Opts, cal_splits: &[String]) -> NegativesOf<'g> {
    groups.iter().map(|(key, splits)| (key, negatives(&pooled(splits, cal_splits), o))).collect()
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

/// Builds the calibration from the records of the calibration splits (checked by
/// `calibration_splits`): what `run` writes, in one call.
#[cfg(test)]
fn build(records: &[Record], verifier_sha256: Option<String>, cal_splits: &[String]) -> Calibration {
    let groups = group(records);
    let ms = calibrated_methods(records, verifier_sha256.is_some());
    calibration(&tables(&groups, &ms, cal_splits), verifier_sha256, cal_splits)
}

/// Each method's negatives under the shipped gates, on the splits it is calibrated on
/// (`splits_for`): computed once, for the calibration and the report alike.
fn tables<'g>(groups: &'g Groups<'_>, ms: &[Method], cal_splits: &[String]) -> Vec<(Method, NegativesOf<'g>)> {
    ms.iter().map(|&m| (m, negatives_of(groups, Opts::shipped(m), &splits_for(m, cal_splits)))).collect()
}

/// The calibration made of the tables of the methods it is for (`calibrated_methods`).
fn calibration<'t, 'g: 't>(
    tables: impl IntoIterator<Item = &'t (Method, NegativesOf<'g>)>,
    verifier_sha256: Option<String>,
    cal_splits: &[String],
) -> Calibration {
    let mut c = Calibration {
        version: 1,
        rule: rule(cal_splits),
        embedding_model: refrain::embed::MODEL_NAME.into(),
        verifier_sha256,
        kinds: BTreeMap::new(),
    };
    for (m, negs) in tables {
        for ((kind, dataset), neg) in negs.iter().filter(|(_, neg)| neg.n > 0) {
            let by_dataset = c.kinds.entry(kind.clone()).or_default().entry(m.name().into()).or_default();
            by_dataset.insert(dataset.clone(), neg.clone());
        }
    }
    c
}

/// The records the calibration needs, and nothing else: the calibration splits' negatives, each
/// with its best candidate under every method (texts and family names removed: those candidates
/// passed the gates already).
pub fn minimal(records: &[Record], with_model: bool, cal_splits: &[String]) -> Vec<Record> {
    let ms = calibrated_methods(records, with_model);
    records
        .iter()
        .filter(|r| cal_splits.contains(&r.split) && r.expect == "miss")
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
    let splits = calibration_splits(&args.splits, sha.is_some())?;
    // The report reads every method's negatives; the calibration, those of the methods it is for.
    let groups = group(&records);
    let tables = tables(&groups, &methods(&records), &splits);
    let calibrated = calibrated_methods(&records, sha.is_some());
    let c = calibration(tables.iter().filter(|(m, _)| calibrated.contains(m)), sha, &splits);
    if let Some(path) = &args.minimal {
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        record::write(&mut out, &minimal(&records, c.verifier_sha256.is_some(), &splits))?;
        std::io::Write::flush(&mut out)?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(out) = &args.out {
        std::fs::write(out, serde_json::to_string_pretty(&c)? + "\n")?;
        eprintln!("wrote {}", out.display());
    }
    report(&groups, &tables, args, &splits)
}

fn report(
    groups: &Groups<'_>,
    tables: &[(Method, NegativesOf<'_>)],
    args: &Args,
    cal_splits: &[String],
) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for &(m, ref negs) in tables {
        let o = Opts::shipped(m);
        let cal_splits = &splits_for(m, cal_splits);
        let cal_name = cal_splits.join("+");
        writeln!(out, "\n### {} at max_wrong_rate {}, calibrated on {cal_name}\n", m.name(), args.rate)?;
        writeln!(
            out,
            "| kind | dataset | calibration negatives | threshold (set by) | {cal_name}: hits right / wrong | {cal_name}: negatives served | test: hits right / wrong | test: negatives served | leave-one-out threshold | leave-one-out test: hits right / wrong | leave-one-out test: negatives served |"
        )?;
        writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|")?;
        for (key, splits) in groups {
            let (kind, dataset) = key;
            let all = threshold(negs, kind, None, args.rate);
            let loo = threshold(negs, kind, Some(dataset), args.rate);
            let get = |s: &str| splits.get(s).map(Vec::as_slice).unwrap_or_default();
            let cal = pooled(splits, cal_splits);
            let neg = &negs[key];
            let (own, certified) = if neg.n > 0 { neg.threshold(args.rate) } else { (f32::NAN, false) };
            let (dev, test) = (measure(&cal, o, all.0), measure(get("test"), o, all.0));
            let left_out = measure(get("test"), o, loo.0);
            writeln!(
                out,
                "| {kind} | {dataset} | {} ({}, own threshold {own:.4}) | {:.4} ({}) | {} | {} | {} | {} | {:.4} ({}) | {} | {} |",
                neg.n,
                if certified { "certified" } else { "uncertified" },
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
        let ms: Vec<Method> = tables.iter().map(|(m, _)| *m).collect();
        compare_gates(groups, &ms, args.rate, cal_splits, &mut out)?;
    }
    Ok(())
}

/// Calibration-split figures of each gate set, per method and dataset (thresholds recalibrated
/// per set).
fn compare_gates(
    groups: &Groups<'_>,
    ms: &[Method],
    rate: f64,
    cal_splits: &[String],
    out: &mut impl std::io::Write,
) -> anyhow::Result<()> {
    writeln!(out, "\n### Cheap gates compared on the calibration splits (max_wrong_rate {rate})\n")?;
    writeln!(
        out,
        "| method | calibration splits | gates | dataset | threshold | hits right / wrong | negatives served |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|---|")?;
    // The result cache's datasets only: plans do not run these gates here (`Opts::refuses`).
    let results: Groups<'_> =
        groups.iter().filter(|((k, _), _)| k == "result").map(|(k, s)| (k.clone(), s.clone())).collect();
    for &m in ms {
        let cal_splits = &splits_for(m, cal_splits);
        for &gates in GATE_SETS {
            let o = Opts { method: m, gates };
            let names: Vec<&str> = gates.iter().map(|g| g.reason()).collect();
            let names = if names.is_empty() { "none".to_string() } else { names.join("; ") };
            let negs = negatives_of(&results, o, cal_splits);
            let t = threshold(&negs, "result", None, rate);
            for ((_, dataset), splits) in &results {
                let dev = measure(&pooled(splits, cal_splits), o, t.0);
                writeln!(
                    out,
                    "| {} | {} | {names} | {dataset} | {:.4} | {} | {} |",
                    m.name(),
                    cal_splits.join("+"),
                    t.0,
                    hits_cell(&dev),
                    negatives_cell(&dev)
                )?;
            }
        }
    }
    Ok(())
}

/// The threshold of a kind from every calibration dataset except `leave_out` (strictest wins).
fn threshold(negs: &NegativesOf<'_>, kind: &str, leave_out: Option<&str>, rate: f64) -> (f32, String) {
    negs.iter()
        .filter(|((k, d), neg)| k == kind && Some(d.as_str()) != leave_out && neg.n > 0)
        .map(|((_, d), neg)| {
            let (t, certified) = neg.threshold(rate);
            (t, if certified { d.clone() } else { format!("{d}, uncertified") })
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
        // The committed records are the calibration splits' negatives, and only those.
        let mut splits: Vec<String> = records.iter().map(|r| r.split.clone()).collect();
        splits.sort();
        splits.dedup();
        let splits = calibration_splits(&splits, shipped.verifier_sha256.is_some()).unwrap();
        let rebuilt = build(&records, shipped.verifier_sha256.clone(), &splits);
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
        let dev = vec!["dev".to_string()];
        let small = minimal(&records, false, &dev);
        assert_eq!(small.len(), 3, "development negatives only");
        assert!(small.iter().all(|r| r.query.is_empty() && r.candidates.iter().all(|c| c.text.is_empty())));
        let (a, b) = (build(&records, None, &dev), build(&small, None, &dev));
        assert_eq!(serde_json::to_value(&a).unwrap(), serde_json::to_value(&b).unwrap());
        assert_eq!(a.kinds["result"]["cosine"]["d"].top, vec![0.8, 0.6]);
    }

    #[test]
    fn train_and_dev_pool_into_one_calibration_and_test_never_counts() {
        let rec = |split: &str, cosine: f32| Record {
            dataset: "d".into(),
            split: split.into(),
            kind: "result".into(),
            query: format!("q {cosine}"),
            expect: "miss".into(),
            candidates: vec![crate::record::Cand { text: String::new(), cosine, ..Default::default() }],
            ..Record::default()
        };
        // 200 dev and 200 train negatives: neither alone can show 1% (fewer than 299), together they can.
        let mut records: Vec<Record> = (0..200).map(|i| rec("dev", 0.5 + i as f32 / 1000.0)).collect();
        records.extend((0..200).map(|i| rec("train", 0.3 + i as f32 / 1000.0)));
        records.push(rec("test", 0.99));
        let pooled = calibration_splits(&["train".into(), "dev".into()], false).unwrap();
        assert_eq!(pooled, ["dev", "train"]);
        let c = build(&records, None, &pooled);
        let neg = &c.kinds["result"]["cosine"]["d"];
        assert_eq!(neg.n, 400, "train and dev negatives, not test");
        let d = c.threshold("result", "cosine", 0.01).unwrap();
        assert!(d.certified && d.value > 0.699 && d.value < 0.99, "{d:?}");
        assert!(c.rule.contains("dev and train") && c.rule.contains("never test"), "{}", c.rule);
        // Dev alone: uncertified, and the rule keeps its original wording.
        let dev = calibration_splits(&["dev".into()], false).unwrap();
        let c = build(&records, None, &dev);
        assert_eq!(c.kinds["result"]["cosine"]["d"].n, 200);
        assert!(!c.threshold("result", "cosine", 0.01).unwrap().certified);
        assert!(c.rule.starts_with("per development dataset,"));
        // The minimal records of a pooled calibration rebuild it.
        let small = minimal(&records, false, &pooled);
        assert_eq!(small.len(), 400);
        let (a, b) = (build(&records, None, &pooled), build(&small, None, &pooled));
        assert_eq!(serde_json::to_value(&a).unwrap(), serde_json::to_value(&b).unwrap());
    }

    #[test]
    fn test_is_never_a_calibration_split_and_a_model_calibrates_on_dev_only() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(calibration_splits(&s(&["dev", "test"]), false).is_err());
        assert!(calibration_splits(&s(&[]), false).is_err());
        assert!(calibration_splits(&s(&["train", "dev"]), true).is_err());
        assert_eq!(calibration_splits(&s(&["dev", "dev"]), true).unwrap(), ["dev"]);
    }
}
