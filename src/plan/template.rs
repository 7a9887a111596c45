//! Plan templates and stored plans: steps with `{{params.x}}` placeholders, typed slots, the
//! output schema, versions, provenance, timestamps, counters and quarantine.
//!
//! A template is what an agent follows; a stored plan is a template plus what refrain knows
//! about it. Plan ids are derived from content, so storing the same plan twice is one plan.

use super::key::IntentKey;
use super::params::ParamKind;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// A reusable plan: ordered steps, the slots they use, and the outputs they produce.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanTemplate {
    /// Ordered steps. Inputs may contain `{{params.<slot>}}` (or `{{params.<slot>.<field>}}`) and
    /// `{{outputs.<name>}}` for an earlier step's output.
    pub steps: Vec<Step>,
    /// Values the steps need, filled at lookup time.
    #[serde(default)]
    pub slots: Vec<Slot>,
    /// Outputs the plan promises; each non-optional one must be produced by a step.
    #[serde(default)]
    pub outputs: Vec<OutputField>,
    /// Free-text summary shown with the plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The template's own revision (for invalidate-by-version).
    #[serde(default = "default_plan_version")]
    pub version: String,
}

fn default_plan_version() -> String {
    "1".to_string()
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The tool to call (`Edit`, `Bash`, `Read`...) or a free-form action for a todo item.
    pub tool: String,
    /// The operation, when the tool has several (`cargo test`, `insert`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// Tool arguments or instructions; strings may contain placeholders.
    #[serde(default)]
    pub inputs: Value,
    /// Names of the outputs this step produces (referenced later as `{{outputs.<name>}}`).
    #[serde(default)]
    pub outputs: Vec<String>,
    /// True when the step changes something (writes files, runs commands with effects).
    #[serde(default)]
    pub side_effect: bool,
    /// The tool family the step needs (`fs`, `shell`, `git`, `github`, `web`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
}

/// A value the plan needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Slot {
    /// Name used in placeholders: `{{params.<name>}}`.
    pub name: String,
    /// The value's type; values parsed from the task fill slots of their type in order.
    #[serde(rename = "type", default = "default_kind")]
    pub kind: ParamKind,
    /// Whether a lookup without this value is a miss (default true).
    #[serde(default = "yes")]
    pub required: bool,
    /// Value used when neither the context nor the task gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// Transform applied to the value before it is placed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transform: Option<Transform>,
    /// Prefer a parsed value in this role (`to`: after "to"/"as", `from`, `in`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<super::params::Role>,
    /// The value the slot had in the task the plan was stored for; lookup finds the slot's value
    /// in a new task where this one stood ("add a dependency on `regex`" -> the crate). Set by
    /// refrain for traces; optional in templates (values of the slot's type fill it in order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
}

impl Slot {
    /// A required slot with no default, transform or role.
    pub fn required(name: impl Into<String>, kind: ParamKind) -> Slot {
        Slot { name: name.into(), kind, required: true, default: None, transform: None, role: None, example: None }
    }
}

fn default_kind() -> ParamKind {
    ParamKind::Any
}

fn yes() -> bool {
    true
}

/// Simple value transforms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transform {
    /// lowercase
    Lower,
    /// UPPERCASE
    Upper,
    /// snake_case
    SnakeCase,
    /// kebab-case
    KebabCase,
    /// camelCase
    CamelCase,
    /// PascalCase
    PascalCase,
    /// Strip leading dashes (`--verbose` -> `verbose`).
    StripDashes,
    /// The last path component.
    Basename,
    /// Everything before the last path component.
    Dirname,
    /// The last path component without its extension.
    Stem,
}

/// An output the plan promises.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputField {
    /// Output name (a step must list it in its `outputs`).
    pub name: String,
    /// Optional outputs need no producing step.
    #[serde(default)]
    pub optional: bool,
}

/// Versions a stored plan was made with (evict by any of them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Versions {
    /// The template's revision.
    pub plan: String,
    /// The normaliser that computed its key.
    pub normaliser: u32,
    /// The extractor that generalised it (absent for stored templates).
    pub extractor: Option<u32>,
}

/// Where a plan came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Provenance {
    /// `template` (stored as given), `trace` (extracted by refrain) or `import`.
    pub source: String,
    /// The task it was stored for.
    pub task: String,
    /// The extractor's confidence (traces only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f32>,
    /// Who stored it on which machine (`user@host`); absent in plans stored by older builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// Set when the plan came from the team library: who published it, as the database knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<TeamOrigin>,
}

/// A team plan's publisher, read from the team database (never from the plan's own JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TeamOrigin {
    /// The database role that published it (the team table's `published_by`, `current_user` at
    /// publish).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher: Option<String>,
    /// When it was published (unix seconds), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_at: Option<u64>,
}

impl Provenance {
    /// Where a plan came from with nothing more known: no confidence, author or team.
    pub fn new(source: impl Into<String>, task: impl Into<String>) -> Self {
        Self { source: source.into(), task: task.into(), confidence: None, by: None, team: None }
    }

    /// The kind of session the plan came from: `team` for team plans, else its `source`.
    pub fn kind(&self) -> &str {
        if self.team.is_some() { "team" } else { &self.source }
    }

    /// Who stored it, as the agent is told: the team publisher, else the local user, else
    /// "an unknown user".
    pub fn author(&self) -> String {
        match &self.team {
            Some(t) => t.publisher.clone().unwrap_or_else(|| "an unknown team member".into()),
            None => self.by.clone().unwrap_or_else(|| "an unknown user".into()),
        }
    }
}

/// This user and machine as `user@host`, from the environment (`USER`/`USERNAME`, `HOSTNAME`
/// or /etc/hostname); None when neither is known.
pub fn local_author() -> Option<String> {
    let user = std::env::var("USER").or_else(|_| std::env::var("USERNAME")).ok().filter(|u| !u.trim().is_empty());
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty());
    match (user, host) {
        (Some(u), Some(h)) => Some(format!("{u}@{h}")),
        (Some(u), None) => Some(u),
        (None, Some(h)) => Some(format!("a user on {h}")),
        (None, None) => None,
    }
}

/// Hits and outcomes of a stored plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Counters {
    /// Times served as a hit.
    pub hits: u64,
    /// Reported successes.
    pub successes: u64,
    /// Reported failures.
    pub failures: u64,
    /// Successes this user reported itself (never the team's or others' counts); a hook serves
    /// a plan only after one. Absent (0) in plans stored by older builds.
    #[serde(default)]
    pub own_successes: u64,
    /// Failures this user reported itself.
    #[serde(default)]
    pub own_failures: u64,
    /// Failures since the last success (drives demotion and quarantine).
    pub failure_streak: u32,
    /// How much higher than the calibrated threshold this plan's verifier score must be, raised
    /// by each reported failure and reset on release.
    #[serde(default)]
    pub bias: f32,
}

/// A plan as refrain stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StoredPlan {
    /// Content-derived id.
    pub id: String,
    /// The intent key it is stored under.
    pub key: IntentKey,
    /// The template.
    pub template: PlanTemplate,
    /// Wording skeleton of the task it was stored for.
    pub skeleton: Vec<String>,
    /// Versions.
    pub versions: Versions,
    /// Provenance.
    pub provenance: Provenance,
    /// Stored at (unix seconds), last served at.
    pub stored_at: u64,
    /// Last time it was served as a hit (unix seconds).
    pub last_hit_at: Option<u64>,
    /// Counters.
    pub counters: Counters,
    /// Quarantined plans are not served until stored again or released; the reason says why.
    pub quarantined: Option<String>,
}

impl StoredPlan {
    /// A plan as it is first stored: this build's versions (no extractor), fresh counters, never
    /// hit, not quarantined, `stored_at` 0 until the caller sets it.
    pub fn fresh(
        id: String,
        key: IntentKey,
        template: PlanTemplate,
        skeleton: Vec<String>,
        provenance: Provenance,
    ) -> Self {
        let versions =
            Versions { plan: template.version.clone(), normaliser: super::NORMALISER_VERSION, extractor: None };
        StoredPlan {
            id,
            key,
            template,
            skeleton,
            versions,
            provenance,
            stored_at: 0,
            last_hit_at: None,
            counters: Counters::default(),
            quarantined: None,
        }
    }

    /// The plan `template` makes for `task` from `source`, keyed and identified as
    /// `plan_store` keys it before any masking (bulk loads, benchmarks and tests).
    pub fn for_task(task: String, source: &str, template: PlanTemplate) -> Self {
        let norm = super::normalise::normalise(&task);
        let key = IntentKey::of(&norm);
        let id = plan_id(&key.bucket, &template);
        StoredPlan::fresh(id, key, template, norm.skeleton, Provenance::new(source, task))
    }
}

/// The content id of a template under a bucket: sha256 over the bucket and the canonical JSON.
pub fn plan_id(bucket: &str, template: &PlanTemplate) -> String {
    let mut h = Sha256::new();
    h.update(bucket.as_bytes());
    h.update([0]);
    h.update(serde_json::to_vec(template).unwrap_or_default());
    hex::encode(&h.finalize()[..12])
}

/// A plan stored record plus the vector id of its task embedding.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// The plan.
    pub plan: StoredPlan,
    /// Its task vector in the index, when a model was available.
    pub vector: Option<u64>,
}

/// Unix seconds now.
pub fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

impl Transform {
    /// Applies the transform.
    pub fn apply(self, v: &str) -> String {
        let words = || -> Vec<String> {
            let mut out = Vec::new();
            let mut cur = String::new();
            let mut prev_lower = false;
            for c in v.chars() {
                if !c.is_alphanumeric() {
                    if !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                    prev_lower = false;
                    continue;
                }
                if c.is_uppercase() && prev_lower && !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                prev_lower = c.is_lowercase() || c.is_ascii_digit();
                cur.extend(c.to_lowercase());
            }
            if !cur.is_empty() {
                out.push(cur);
            }
            out
        };
        let cap = |w: &String| {
            let mut c = w.chars();
            c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
        };
        match self {
            Transform::Lower => v.to_lowercase(),
            Transform::Upper => v.to_uppercase(),
            Transform::SnakeCase => words().join("_"),
            Transform::KebabCase => words().join("-"),
            Transform::CamelCase => {
                let w = words();
                w.iter().enumerate().map(|(i, x)| if i == 0 { x.clone() } else { cap(x) }).collect()
            }
            Transform::PascalCase => words().iter().map(cap).collect(),
            Transform::StripDashes => v.trim_start_matches('-').to_string(),
            Transform::Basename => v.trim_end_matches('/').rsplit('/').next().unwrap_or(v).to_string(),
            Transform::Dirname => {
                v.trim_end_matches('/').rsplit_once('/').map(|(d, _)| d.to_string()).unwrap_or_default()
            }
            Transform::Stem => {
                let base = Transform::Basename.apply(v);
                base.rsplit_once('.').map(|(s, _)| s.to_string()).filter(|s| !s.is_empty()).unwrap_or(base)
            }
        }
    }
}

#[cfg(test)]
impl StoredPlan {
    /// A plan as stored for `task` from `template` under `key`, for tests: its id from the
    /// template, fresh counters, never hit, not quarantined.
    pub fn for_test(task: &str, key: IntentKey, template: PlanTemplate) -> StoredPlan {
        StoredPlan::fresh(plan_id(&key.bucket, &template), key, template, vec![], Provenance::new("template", task))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(Transform::SnakeCase, "parseArgs", "parse_args")]
    #[case(Transform::KebabCase, "Parse Args", "parse-args")]
    #[case(Transform::CamelCase, "parse_args", "parseArgs")]
    #[case(Transform::PascalCase, "parse-args", "ParseArgs")]
    #[case(Transform::StripDashes, "--dry-run", "dry-run")]
    #[case(Transform::Basename, "src/cli/mod.rs", "mod.rs")]
    #[case(Transform::Dirname, "src/cli/mod.rs", "src/cli")]
    #[case(Transform::Stem, "src/cli/mod.rs", "mod")]
    fn transforms(#[case] t: Transform, #[case] input: &str, #[case] want: &str) {
        assert_eq!(t.apply(input), want);
    }

    #[test]
    fn plans_stored_by_older_builds_load_with_no_author_and_no_own_reports() {
        let old = serde_json::json!({"id": "a", "key": {"bucket": "b", "action": "fix", "kind": "file"},
            "template": {"steps": [{"tool": "Bash", "inputs": {"command": "cargo test"}}]},
            "skeleton": [], "versions": {"plan": "1", "normaliser": 1, "extractor": 1},
            "provenance": {"source": "trace", "task": "fix the typo"}, "stored_at": 5, "last_hit_at": null,
            "counters": {"hits": 3, "successes": 2, "failures": 1, "failure_streak": 0}, "quarantined": null});
        let p: StoredPlan = serde_json::from_value(old).unwrap();
        assert_eq!((&p.provenance.by, &p.provenance.team), (&None, &None));
        assert_eq!((p.counters.successes, p.counters.own_successes, p.counters.own_failures), (2, 0, 0));
        assert_eq!(p.provenance.author(), "an unknown user");
    }

    #[test]
    fn plan_ids_follow_content() {
        let t = PlanTemplate { steps: vec![], slots: vec![], outputs: vec![], description: None, version: "1".into() };
        let mut t2 = t.clone();
        assert_eq!(plan_id("b", &t), plan_id("b", &t2));
        t2.version = "2".into();
        assert_ne!(plan_id("b", &t), plan_id("b", &t2));
        assert_ne!(plan_id("b", &t), plan_id("c", &t));
    }
}
