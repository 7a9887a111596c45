//! `refrain-bench results` quality part: GPTCache's paraphrase pairs through refrain's semantic
//! decision (cosine threshold, then the verifier), against plain cosine.
//!
//! Data: GPTCache `examples/benchmark/mock_data.json` (MIT, Zilliz), read at run time. Every
//! distinct origin is stored; every paraphrase is looked up (positives: the right answer is the
//! entry whose text equals its origin) and then looked up again with its own origin removed
//! (negatives: any hit is a wrong answer served). The default decision is scored again with the
//! origins as the int8 codes the index keeps.

use super::GlobalArgs;
use refrain::embed::{Embedder, FastEmbedder, ModelFiles, cosine};
use refrain::index::quant;
use refrain::results::semantic::{self, Candidate, Verifier};
use serde::Deserialize;
use std::collections::HashMap;
use std::io::Write;

#[derive(Deserialize)]
struct Pair {
    origin: String,
    similar: String,
}

/// Nearest stored origins considered per lookup (as `response_cache_get` does).
const K: usize = semantic::CANDIDATES;

/// What the quality part reads and writes.
#[derive(Debug, Clone)]
pub struct Opts {
    /// GPTCache's mock_data.json.
    pub data: std::path::PathBuf,
    /// Where to write every paraphrase's nearest candidates, if anywhere.
    pub dump: Option<std::path::PathBuf>,
}

/// Runs the quality benchmark and prints the tables.
pub fn run(global: &GlobalArgs, args: &Opts) -> anyhow::Result<()> {
    let pairs: Vec<Pair> = serde_json::from_slice(&std::fs::read(&args.data).map_err(|e| {
        anyhow::anyhow!("cannot read {}: {e}; pass --data PATH to GPTCache's mock_data.json", args.data.display())
    })?)?;
    let cfg = super::config(global)?;
    let dir = cfg.model.dir.clone().unwrap_or_else(|| cfg.home().join("models"));
    let model = FastEmbedder::load(&ModelFiles::under(&dir), 2, cfg.model.max_length)?;
    let mut origins: Vec<String> = Vec::new();
    let mut origin_id: HashMap<String, usize> = HashMap::new();
    for p in &pairs {
        if !origin_id.contains_key(&p.origin) {
            origin_id.insert(p.origin.clone(), origins.len());
            origins.push(p.origin.clone());
        }
    }
    let embed = |texts: &[String]| -> anyhow::Result<Vec<Vec<f32>>> {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        Ok(model.embed(&refs)?)
    };
    let ov = embed(&origins)?;
    let queries: Vec<String> = pairs.iter().map(|p| p.similar.clone()).collect();
    let qv = embed(&queries)?;
    // Nearest origins per paraphrase, best first (what the index returns for this scope).
    let nearest: Vec<Vec<(usize, f32)>> = qv
        .iter()
        .map(|q| {
            let mut s: Vec<(usize, f32)> = ov.iter().enumerate().map(|(i, o)| (i, cosine(q, o))).collect();
            s.sort_by(|a, b| b.1.total_cmp(&a.1));
            s.truncate(K + 1);
            s
        })
        .collect();
    if let Some(path) = &args.dump {
        let rows: Vec<_> = pairs
            .iter()
            .zip(&nearest)
            .map(|(p, n)| {
                let c: Vec<_> = n.iter().map(|(i, s)| serde_json::json!({"text": origins[*i], "score": s})).collect();
                serde_json::json!({"query": p.similar, "origin": p.origin, "candidates": c})
            })
            .collect();
        std::fs::write(path, serde_json::to_vec_pretty(&rows)?)?;
    }
    let default = Verifier::new(cfg.results.semantic_threshold);
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "## Result cache quality: GPTCache mock_data.json ({} pairs, {} distinct origins)\n",
        pairs.len(),
        origins.len()
    )?;
    writeln!(
        out,
        "| threshold | plain cosine: hit / wrong / miss | refrain verified: hit / wrong / miss | negatives served (verified) |"
    )?;
    writeln!(out, "|---|---|---|---|")?;
    for t in [0.70f32, 0.75, 0.80, 0.82, 0.85, 0.88, 0.90, 0.95] {
        let plain = score(&pairs, &origins, &origin_id, &nearest, &Verifier::plain(t), false);
        let verified = score(&pairs, &origins, &origin_id, &nearest, &Verifier::new(t), false);
        let neg = score(&pairs, &origins, &origin_id, &nearest, &Verifier::new(t), true);
        let mark = if (t - default.threshold).abs() < 1e-6 { " (default)" } else { "" };
        writeln!(
            out,
            "| {t:.2}{mark} | {} / {} / {} | {} / {} / {} | {} of {} |",
            plain.0,
            plain.1,
            plain.2,
            verified.0,
            verified.1,
            verified.2,
            neg.1,
            pairs.len()
        )?;
    }
    // How far any decision rule at the top candidate can go on this data: the nearest stored
    // origin is the paraphrase's own only so often, and many origins are near-copies of another.
    let top1 = pairs
        .iter()
        .zip(&nearest)
        .filter(|(p, n)| n.first().map(|(i, _)| Some(*i) == origin_id.get(&p.origin).copied()).unwrap_or(false))
        .count();
    let twins = ov
        .iter()
        .enumerate()
        .filter(|(i, a)| ov.iter().enumerate().any(|(j, b)| *i != j && cosine(a, b) >= 0.9))
        .count();
    writeln!(
        out,
        "\nNearest stored origin is the right one for {top1} of {} paraphrases; {twins} of {} origins have a near-copy (cosine >= 0.90) among the others.",
        pairs.len(),
        origins.len()
    )?;
    let d = score(&pairs, &origins, &origin_id, &nearest, &default, false);
    let n = score(&pairs, &origins, &origin_id, &nearest, &default, true);
    // The index keeps origins as int8 codes and scores them against the f32 query.
    let codes: Vec<Vec<i8>> = ov.iter().map(|o| quant::encode(o)).collect();
    let nearest_codes: Vec<Vec<(usize, f32)>> = qv
        .iter()
        .map(|q| {
            let mut s: Vec<(usize, f32)> =
                codes.iter().enumerate().map(|(i, c)| (i, quant::cosine_f32(q, c))).collect();
            s.sort_by(|a, b| b.1.total_cmp(&a.1));
            s.truncate(K + 1);
            s
        })
        .collect();
    let dc = score(&pairs, &origins, &origin_id, &nearest_codes, &default, false);
    let nc = score(&pairs, &origins, &origin_id, &nearest_codes, &default, true);
    writeln!(
        out,
        "Origins stored as int8 codes, as the index keeps them (default threshold + verifier): hit / wrong / miss {} / {} / {} (f32: {} / {} / {}); negatives served {} (f32: {}).",
        dc.0, dc.1, dc.2, d.0, d.1, d.2, nc.1, n.1
    )?;
    let total = pairs.len() as f64;
    writeln!(
        out,
        "\nDefault (threshold {:.2} + verifier): {:.1}% hits, {:.2}% wrong hits, {:.1}% misses; negatives: {:.2}% served a wrong answer.\n",
        default.threshold,
        100.0 * d.0 as f64 / total,
        100.0 * d.1 as f64 / total,
        100.0 * d.2 as f64 / total,
        100.0 * n.1 as f64 / total
    )?;
    Ok(())
}

/// (hits, wrong hits, misses) over every paraphrase; with `negatives`, the paraphrase's own
/// origin is removed from the candidates first.
fn score(
    pairs: &[Pair],
    origins: &[String],
    origin_id: &HashMap<String, usize>,
    nearest: &[Vec<(usize, f32)>],
    v: &Verifier,
    negatives: bool,
) -> (usize, usize, usize) {
    let (mut hit, mut wrong, mut miss) = (0, 0, 0);
    for (p, n) in pairs.iter().zip(nearest) {
        let own = origin_id.get(&p.origin).copied();
        let cands: Vec<Candidate<'_>> = n
            .iter()
            .filter(|(i, _)| !negatives || Some(*i) != own)
            .take(K)
            .map(|(i, s)| Candidate { text: &origins[*i], score: *s })
            .collect();
        match v.choose(&p.similar, &cands) {
            Some(c) if !negatives && origin_id.get(cands[c].text).copied() == own => hit += 1,
            Some(_) => wrong += 1,
            None => miss += 1,
        }
    }
    (hit, wrong, miss)
}
