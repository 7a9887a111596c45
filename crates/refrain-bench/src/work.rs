//! The writes the fault and load benchmarks send, and how each is read back and checked.
//!
//! Every write is deterministic from its id (same id -> same arguments -> same store key), so a
//! retried request is the same write. A check reads the write back through MCP and compares what
//! comes back with what was sent: missing is "lost", different is "torn".

use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::Peer;
use serde_json::{Value, json};

/// The namespace every benchmark result is stored under.
pub const NAMESPACE: &str = "bench";

/// What kind of write an op is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `response_cache_put`, exact lookups only.
    Result,
    /// `response_cache_put` with a natural-language query (embedded, indexed).
    Semantic,
    /// `plan_store` of a generated template.
    Plan,
}

/// One write.
#[derive(Debug, Clone)]
pub struct Op {
    /// Unique id, e.g. `c3i17`.
    pub id: String,
    /// Its kind.
    pub kind: Kind,
    /// Seed for generated plans.
    pub seed: usize,
}

/// What an acknowledged write left to check.
#[derive(Debug, Clone)]
pub struct Acked {
    /// The write.
    pub op: Op,
    /// The plan id returned by `plan_store` (plans only).
    pub plan_id: Option<String>,
}

/// The outcome of checking one acknowledged write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Present and identical.
    Intact,
    /// Not found.
    Lost,
    /// Found with other content.
    Torn,
}

impl Op {
    /// The op number `i` of client `client`: mostly exact results, every 4th semantic, every 5th a plan.
    pub fn nth(client: usize, i: usize, semantic: bool) -> Op {
        let id = format!("c{client}i{i}");
        let kind = if i % 5 == 4 {
            Kind::Plan
        } else if semantic && i % 4 == 1 {
            Kind::Semantic
        } else {
            Kind::Result
        };
        Op { id, kind, seed: 1_000_000 + client * 10_000 + i }
    }

    /// The stored result body: long enough that a torn write would show.
    pub fn body(&self) -> String {
        format!("result of {} | {}", self.id, "0123456789abcdef".repeat(32))
    }

    /// The query stored with a semantic result.
    pub fn query(&self) -> String {
        format!("what changed in release {} of the parser crate", self.id)
    }

    /// The tool and arguments that perform the write.
    pub fn request(&self) -> (&'static str, Value) {
        match self.kind {
            Kind::Plan => {
                let (task, template) = crate::families::filler(self.seed);
                ("plan_store", json!({"task": task, "template": template, "source": "bench"}))
            }
            Kind::Result | Kind::Semantic => {
                let mut args = json!({"namespace": NAMESPACE, "tool": "WebSearch", "args": {"id": self.id},
                    "result": self.body(), "read_only": true, "ttl_secs": 86_400});
                if self.kind == Kind::Semantic {
                    args["query"] = json!(self.query());
                }
                ("response_cache_put", args)
            }
        }
    }

    /// Sends the write; `Ok(Some(ack))` when acknowledged, `Ok(None)` when refused, `Err` on a
    /// protocol or transport failure.
    pub async fn send(&self, peer: &Peer<RoleClient>) -> anyhow::Result<Option<Acked>> {
        let (tool, args) = self.request();
        let r = call(peer, tool, args).await?;
        let out = r.structured_content.unwrap_or(Value::Null);
        let ok = r.is_error != Some(true)
            && match self.kind {
                Kind::Plan => out["plan_id"].is_string(),
                _ => out["stored"] == true,
            };
        Ok(ok.then(|| Acked { op: self.clone(), plan_id: out["plan_id"].as_str().map(str::to_string) }))
    }
}

impl Acked {
    /// Reads the write back (exactly, and by meaning for semantic results) and compares.
    pub async fn check(&self, peer: &Peer<RoleClient>) -> anyhow::Result<Check> {
        let op = &self.op;
        if op.kind == Kind::Plan {
            let id = self.plan_id.clone().unwrap_or_default();
            let out = ok(peer, "plan_list", json!({"plan_id": id})).await?;
            let Some(plan) = out["plans"].get(0) else { return Ok(Check::Lost) };
            let (task, template) = crate::families::filler(op.seed);
            let same = plan["provenance"]["task"] == json!(task) && plan["template"]["steps"] == json!(template.steps);
            return Ok(if same { Check::Intact } else { Check::Torn });
        }
        let exact =
            ok(peer, "response_cache_get", json!({"namespace": NAMESPACE, "tool": "WebSearch", "args": {"id": op.id}}))
                .await?;
        let mut verdict = verdict_of(&exact, &op.body());
        if verdict == Check::Intact && op.kind == Kind::Semantic {
            let by_meaning = ok(
                peer,
                "response_cache_get",
                json!({"namespace": NAMESPACE, "tool": "WebSearch", "query": op.query()}),
            )
            .await?;
            verdict = verdict_of(&by_meaning, &op.body());
        }
        Ok(verdict)
    }
}

fn verdict_of(out: &Value, body: &str) -> Check {
    match (out["status"].as_str(), out["result"].as_str()) {
        (Some("hit"), Some(r)) if r == body => Check::Intact,
        (Some("hit"), _) => Check::Torn,
        _ => Check::Lost,
    }
}

/// Checks the store's record counts against what was sent and acknowledged: never more records
/// than distinct writes (a retry must not duplicate), never fewer than acknowledged writes.
pub async fn counts(peer: &Peer<RoleClient>, sent: &[Op], acked: &[Acked]) -> anyhow::Result<()> {
    let stats = ok(peer, "cache_stats", json!({})).await?;
    let n = |k: &str| stats["records"][k].as_u64().unwrap_or(0) as usize;
    let kinds = |k: &[Kind]| sent.iter().filter(|o| k.contains(&o.kind)).count();
    let (results, plans, vectors) =
        (kinds(&[Kind::Result, Kind::Semantic]), kinds(&[Kind::Plan]), kinds(&[Kind::Semantic, Kind::Plan]));
    let acked_results = acked.iter().filter(|a| a.op.kind != Kind::Plan).count();
    let acked_plans = acked.iter().filter(|a| a.op.kind == Kind::Plan).count();
    if n("responses") > results || n("plans") > plans || n("vectors") > vectors {
        anyhow::bail!("more records than distinct writes (duplicates): {}", stats["records"]);
    }
    if n("responses") < acked_results || n("plans") < acked_plans {
        anyhow::bail!("fewer records than acknowledged writes: {}", stats["records"]);
    }
    Ok(())
}

/// Calls a tool with JSON arguments.
pub async fn call(peer: &Peer<RoleClient>, tool: &str, args: Value) -> anyhow::Result<CallToolResult> {
    let mut p = CallToolRequestParams::new(tool.to_string());
    p.arguments = args.as_object().cloned();
    Ok(peer.call_tool(p).await?)
}

/// Calls a tool that must succeed; returns its structured output.
pub async fn ok(peer: &Peer<RoleClient>, tool: &str, args: Value) -> anyhow::Result<Value> {
    let r = call(peer, tool, args).await?;
    if r.is_error == Some(true) {
        anyhow::bail!("{tool} failed: {:?}", r.content);
    }
    Ok(r.structured_content.unwrap_or(Value::Null))
}

/// A small deterministic generator (xorshift64*), so a run can be repeated from its seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (0 is replaced).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// A seed from the clock.
    pub fn clock_seed() -> u64 {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(7)
    }

    /// The next value in `0..n` (0 when n is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        if n == 0 { 0 } else { x % n }
    }
}

/// Sends SIGKILL to a process.
pub fn sigkill(pid: u32) {
    if let Some(p) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
    }
}
