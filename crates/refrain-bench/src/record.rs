//! Evaluation records: one JSON line per lookup, written by the eval runners and read by
//! `calibrate` (the shared format of both runners, plus optional per-candidate detail).

use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::Path;

/// One lookup.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Record {
    /// The dataset (`gptcache`, `question`, `coding`...).
    pub dataset: String,
    /// `train`, `dev` or `test`.
    pub split: String,
    /// `plan` or `result`.
    pub kind: String,
    /// The family the query belongs to.
    pub family: String,
    /// The text looked up.
    pub query: String,
    /// `hit` (its answer is stored) or `miss` (it is not).
    pub expect: String,
    /// The stored text of the best candidate, if any.
    pub best: Option<String>,
    /// Whether serving the best candidate would be right.
    pub best_right: bool,
    /// Cosine similarity of the best candidate.
    pub cosine: Option<f32>,
    /// The decision score of the best candidate.
    pub score: Option<f32>,
    /// Whether anything was served.
    pub served: bool,
    /// Whether the outcome was right (the right answer served, or nothing for a miss).
    pub right: bool,
    /// Whether the store step refused (plans).
    pub refused: bool,
    /// A family's near miss (one constraint changed), rather than a never-stored request.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub near_miss: bool,
    /// How the server decided (`exact`, `cross_encoder`, `cosine`, `llm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Every candidate considered, for recomputing decisions at other thresholds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<Cand>,
    /// Wall time of the lookup call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
    /// On a miss, the stored texts the answer suggested, nearest first (never hits; the agent
    /// judges them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<String>,
}

/// One candidate of a lookup.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Cand {
    /// The stored text (so gates can be recomputed).
    #[serde(default)]
    pub text: String,
    /// Serving it would be right.
    pub right: bool,
    /// Cosine similarity.
    pub cosine: f32,
    /// The verifier model's score, when it scored it.
    pub verifier: Option<f32>,
    /// The cheap gate that dropped it, if any.
    pub gate: Option<String>,
    /// Same normalised text as the query.
    pub exact: bool,
}

/// Appends records as JSON lines.
pub fn write(out: &mut impl Write, records: &[Record]) -> anyhow::Result<()> {
    for r in records {
        serde_json::to_writer(&mut *out, r)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Reads every record of a JSONL file.
pub fn read(path: &Path) -> anyhow::Result<Vec<Record>> {
    let file = std::fs::File::open(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        out.push(
            serde_json::from_str(&line)
                .map_err(|e| anyhow::anyhow!("{} line {}: not an evaluation record: {e}", path.display(), i + 1))?,
        );
    }
    Ok(out)
}
