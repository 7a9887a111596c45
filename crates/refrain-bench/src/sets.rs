//! Evaluation sets for the result cache, read at run time from their public files (never
//! committed) or from refrain's own family files, all turned into families: texts that ask the
//! same thing and share one answer, plus near misses that must not get it.
//!
//! Splits follow the verifier's training split exactly (a hash of the group: family, intent,
//! question), so calibration uses only groups the model never trained on (`dev`) and the figures
//! that count come from `test`.

use anyhow::Context;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// One family: members share `answer`; negatives must not be served it.
#[derive(Debug, Clone)]
pub struct Family {
    /// Family id within its set.
    pub id: String,
    /// `train`, `dev` or `test`.
    pub split: String,
    /// What a right hit serves (compared as text).
    pub answer: String,
    /// Texts that ask for that answer; the first is the one stored.
    pub members: Vec<String>,
    /// Near misses, each with its own answer when it has one (serving that is right).
    pub negatives: Vec<(String, Option<String>)>,
}

/// A named set of families.
#[derive(Debug, Clone)]
pub struct Set {
    /// Dataset name in records.
    pub name: String,
    /// Families.
    pub families: Vec<Family>,
    /// Members of one family are not reliably the same request (an intent set): only use the set
    /// for lookups that must miss.
    pub negatives_only: bool,
}

/// The verifier training split of a group: a hash, never a random draw (mirrors the training code).
pub fn split_of(group: &str, dev: f64, test: f64) -> &'static str {
    let digest = hex::encode(Sha256::digest(format!("verifier-split:{group}").as_bytes()));
    let h = u64::from_str_radix(&digest[..8], 16).unwrap_or(0) as f64 / f64::from(u32::MAX);
    if h < test {
        "test"
    } else if h < test + dev {
        "dev"
    } else {
        "train"
    }
}

/// Public sets' split (15% dev, 15% test by group).
fn public_split(dataset: &str, group: &str) -> String {
    split_of(&format!("{dataset}:{group}"), 0.15, 0.15).to_string()
}

fn read_json(path: &Path) -> anyhow::Result<Value> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_slice(&bytes).with_context(|| format!("{} is not JSON", path.display()))
}

fn read_jsonl(path: &Path) -> anyhow::Result<Vec<Value>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).with_context(|| format!("a line of {} is not JSON", path.display())))
        .collect()
}

/// GPTCache's mock_data.json: each {origin, similar} row is a family; the origin is stored.
pub fn gptcache(path: &Path) -> anyhow::Result<Set> {
    let rows = read_json(path)?;
    let families = rows
        .as_array()
        .context("mock_data.json must be an array")?
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let (o, s) = (r["origin"].as_str()?, r["similar"].as_str()?);
            Some(Family {
                id: i.to_string(),
                split: public_split("gptcache", &i.to_string()),
                answer: o.to_string(),
                members: vec![o.to_string(), s.to_string()],
                negatives: Vec::new(),
            })
        })
        .collect();
    Ok(Set { name: "gptcache".into(), families, negatives_only: false })
}

/// CoNaLa: a StackOverflow question's intent and its rewritten intent ask the same thing.
pub fn conala(dir: &Path) -> anyhow::Result<Set> {
    let mut by_q: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    for f in ["conala-train.json", "conala-test.json"] {
        for r in read_json(&dir.join(f))?.as_array().context("CoNaLa files are arrays")? {
            let q = r["question_id"].to_string();
            for k in ["intent", "rewritten_intent"] {
                if let Some(t) = r[k].as_str().map(str::trim).filter(|t| !t.is_empty()) {
                    by_q.entry(q.clone()).or_default().insert(t.to_string());
                }
            }
        }
    }
    let families = by_q
        .into_iter()
        .map(|(q, texts)| Family {
            split: public_split("conala", &q),
            answer: q.clone(),
            id: q,
            members: texts.into_iter().collect(),
            negatives: Vec::new(),
        })
        .collect();
    Ok(Set { name: "conala".into(), families, negatives_only: false })
}

/// CLINC150: intents as families (their utterances carry different values, so only for misses);
/// every out-of-scope utterance is a family of its own.
pub fn clinc(path: &Path) -> anyhow::Result<Set> {
    let d = read_json(path)?;
    let mut by_intent: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut index = 0usize;
    for part in ["train", "val", "test", "oos_train", "oos_val", "oos_test"] {
        for row in d[part].as_array().with_context(|| format!("CLINC150 has no {part}"))? {
            let (Some(t), Some(intent)) = (row[0].as_str(), row[1].as_str()) else { continue };
            let group = if intent == "oos" { format!("oos-{index}") } else { intent.to_string() };
            by_intent.entry(group).or_default().push(t.to_string());
            index += 1;
        }
    }
    let families = by_intent
        .into_iter()
        .map(|(g, members)| Family {
            split: public_split("clinc", &g),
            answer: g.clone(),
            id: g,
            members,
            negatives: Vec::new(),
        })
        .collect();
    Ok(Set { name: "clinc".into(), families, negatives_only: true })
}

/// HWU64: the same intent with the same slot values is one request; another slot value is another.
pub fn hwu64(path: &Path) -> anyhow::Result<Set> {
    let mut fams: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for r in read_jsonl(path)? {
        let (Some(text), Some(scenario), Some(intent)) =
            (r["text"].as_str(), r["scenario"].as_str(), r["intent"].as_str())
        else {
            continue;
        };
        let group = format!("{scenario}_{intent}");
        let slots = slots(r["annotated"].as_str().unwrap_or_default());
        fams.entry((group, slots)).or_default().push(text.to_string());
    }
    let families = fams
        .into_iter()
        .map(|((group, slots), mut members)| {
            members.sort();
            members.dedup();
            Family {
                split: public_split("hwu64", &group),
                answer: format!("{group} {slots}"),
                id: format!("{group} {slots}"),
                members,
                negatives: Vec::new(),
            }
        })
        .collect();
    Ok(Set { name: "hwu64".into(), families, negatives_only: false })
}

/// `[type : value]` annotations, sorted, lowercased.
fn slots(annotated: &str) -> String {
    let mut out: Vec<String> = annotated
        .split('[')
        .skip(1)
        .filter_map(|s| s.split_once(']').map(|(inner, _)| inner))
        .filter_map(|inner| inner.split_once(':'))
        .map(|(k, v)| format!("{}={}", k.trim(), v.trim().to_lowercase()))
        .collect();
    out.sort();
    out.join(",")
}

/// A family file in refrain's format (CONTRACTS §1): refrain's own sets, or a public set turned
/// into families. Dev families are divided as the trainer divides them (30% held out as `dev`).
pub fn families(path: &Path, name: &str) -> anyhow::Result<Set> {
    let mut families = Vec::new();
    for f in read_jsonl(path)? {
        let id = f["id"].as_str().map(str::to_string).unwrap_or_else(|| f["id"].to_string());
        let split = if f["split"] == "test" {
            "test".to_string()
        } else {
            split_of(&format!("{name}:{id}"), 0.3, 0.0).to_string()
        };
        let texts = |k: &str| -> Vec<(String, Option<String>)> {
            f[k].as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|m| Some((m["text"].as_str()?.to_string(), answer_text(&m["answer"]))))
                        .collect()
                })
                .unwrap_or_default()
        };
        let members = texts("members");
        let Some(answer) = members.first().map(|(_, a)| a.clone().unwrap_or_else(|| id.clone())) else { continue };
        families.push(Family {
            id,
            split,
            answer,
            members: members.into_iter().map(|(t, _)| t).collect(),
            negatives: texts("negatives"),
        });
    }
    Ok(Set { name: name.into(), families, negatives_only: false })
}

fn answer_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => other["text"].as_str().map(str::to_string).or_else(|| Some(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_match_the_training_code() {
        // Values printed by training/verifier/common.py split_of for the same groups.
        let want = ["dev", "train", "dev", "dev", "train", "dev", "train", "dev", "train", "train", "train", "train"];
        let got: Vec<&str> = (0..12).map(|i| split_of(&format!("gptcache:{i}"), 0.15, 0.15)).collect();
        assert_eq!(got, want);
        assert_eq!(split_of("question:q-001", 0.3, 0.0), "train");
        assert_eq!(split_of("hwu64:alarm_query", 0.15, 0.15), "train");
    }

    #[test]
    fn slots_are_read_from_annotations() {
        assert_eq!(slots("wake me up at [time : Five am] [date : Monday]"), "date=monday,time=five am");
        assert_eq!(slots("list all alarms"), "");
    }
}
