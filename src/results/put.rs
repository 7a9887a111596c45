//! Storing a result: policy, error and size checks, secret redaction, dependency capture, the
//! query's embedding, then LRU eviction down to the total size limit.
//!
//! Puts are idempotent: the same namespace, tool and arguments give the same key, and a second
//! put replaces the first with all its rows.

use super::entry::{self, Entry, now_ms};
use super::fresh::{self, Dep};
use super::{AREA, Result, key, policy, redactor};
use crate::app::App;
use crate::confine::Roots;
use crate::stats;
use serde_json::Value;
use std::path::PathBuf;

/// A result to store.
#[derive(Debug, Clone, Default)]
pub struct PutRequest {
    /// Namespace (e.g. the MCP server or agent); `default` when empty.
    pub namespace: String,
    /// The tool that produced the result.
    pub tool: String,
    /// The tool's arguments.
    pub args: Value,
    /// The result to cache.
    pub result: Value,
    /// A natural-language query to find the result by meaning (web searches, questions, docs).
    pub query: Option<String>,
    /// The caller's word on whether the tool only reads.
    pub read_only: Option<bool>,
    /// The tool call failed (never cached).
    pub is_error: bool,
    /// Files the result depends on (relative to the project root or absolute).
    pub files: Vec<String>,
    /// Directories whose whole tree the result depends on (glob/grep-like results).
    pub trees: Vec<String>,
    /// Whether the result depends on the git HEAD.
    pub git_head: bool,
    /// Time to live in seconds (default: per tool, then `results.default_ttl_secs`).
    pub ttl_secs: Option<u64>,
}

/// What a put did.
#[derive(Debug, Clone, PartialEq)]
pub enum PutOutcome {
    /// Stored.
    Stored {
        /// The exact key.
        key: String,
        /// Stored result size.
        bytes: u64,
        /// Time to live applied.
        ttl_secs: u64,
        /// Dependencies recorded.
        deps: Vec<Dep>,
        /// Secrets redacted before storing.
        redactions: u32,
        /// Whether the query was embedded for semantic lookups, or why not.
        semantic: Option<std::result::Result<(), String>>,
        /// Older entries evicted to stay under the total size limit.
        evicted: usize,
        /// Why the tool counts as read-only.
        policy: String,
    },
    /// Not stored, and why.
    Skipped {
        /// The reason in words.
        reason: String,
    },
}

/// Stores a result (flushed before returning).
pub async fn put(app: &App, mut req: PutRequest) -> Result<PutOutcome> {
    let cfg = &app.config.results;
    if req.namespace.is_empty() {
        req.namespace = super::DEFAULT_NAMESPACE.into();
    }
    let decision = policy::decide(&req.tool, &req.args, req.read_only, &cfg.disabled_tools);
    if !decision.allows() {
        return skip(app, &req.tool, decision.reason().to_string());
    }
    if policy::is_error_result(&req.result, req.is_error) {
        return skip(app, &req.tool, "the result is an error; errors are never cached so a retry can succeed".into());
    }
    check_args(&req, cfg.max_args_bytes)?;
    app.store.check_room()?;
    let key = key::exact_key(&req.namespace, &req.tool, &req.args);
    let r = redactor();
    let mut redactions = r.redact_value(&mut req.result) + r.redact_value(&mut req.args);
    if let Some(q) = &mut req.query {
        let (clean, n) = r.redact_str(q);
        *q = clean;
        redactions += n;
    }
    let bytes = serde_json::to_vec(&req.result).map(|v| v.len() as u64).unwrap_or(0);
    if bytes > cfg.max_entry_bytes as u64 {
        return skip(
            app,
            &req.tool,
            format!("the result is {bytes} bytes, above results.max_entry_bytes ({})", cfg.max_entry_bytes),
        );
    }
    let deps = match capture(&roots(app), &req) {
        Ok(d) => d,
        Err(reason) => return skip(app, &req.tool, reason),
    };
    let mut ttl_secs = req.ttl_secs.unwrap_or_else(|| cfg.ttl_for(&req.tool));
    if req.ttl_secs.is_none() && deps.is_empty() {
        // Nothing to re-check: do not keep it longer than the general default.
        ttl_secs = ttl_secs.min(cfg.default_ttl_secs);
    }
    let store = &app.store;
    if let Some(old) = entry::remove(store, &key)? {
        drop_vector(app, old.vector).await?;
    }
    let mut semantic = None;
    let mut vector = None;
    if let Some(q) = req.query.as_deref().filter(|q| !q.trim().is_empty()) {
        match app.embed.embed_one(q).await {
            Ok(v) => {
                let index = app.index().await?;
                vector = Some(index.insert(store, &entry::scope(&req.namespace, &req.tool), key.as_bytes(), v)?);
                semantic = Some(Ok(()));
            }
            Err(e) => semantic = Some(Err(format!("stored for exact lookups only: {e}"))),
        }
    }
    let now = now_ms();
    let e = Entry {
        key: key.clone(),
        namespace: req.namespace,
        tool: req.tool.clone(),
        args: req.args,
        query: req.query,
        result: req.result,
        created_ms: now,
        expires_ms: now.saturating_add(ttl_secs.saturating_mul(1000)),
        deps: deps.clone(),
        vector,
        bytes,
    };
    entry::write(store, &e)?;
    let evicted = super::evict::shrink_to(app, cfg.max_total_bytes, &key).await?;
    stats::bump(store, AREA, "puts", Some(&req.tool), 1)?;
    if redactions > 0 {
        stats::bump(store, AREA, "redactions", Some(&req.tool), u64::from(redactions))?;
    }
    store.flush_async().await?;
    Ok(PutOutcome::Stored {
        key,
        bytes,
        ttl_secs,
        deps,
        redactions,
        semantic,
        evicted,
        policy: decision.reason().into(),
    })
}

/// Refuses arguments or a query above `results.max_args_bytes` (the caller can fix it).
pub(super) fn check_args(req: &PutRequest, max: usize) -> Result<()> {
    let args = serde_json::to_vec(&req.args).map(|v| v.len()).unwrap_or(0);
    let query = req.query.as_deref().map_or(0, str::len);
    for (what, bytes) in [("arguments", args), ("query", query)] {
        if bytes > max {
            return Err(super::Error::TooLarge(format!(
                "the {what} are {bytes} bytes, above results.max_args_bytes ({max}); cache calls with small arguments, or raise the limit"
            )));
        }
    }
    Ok(())
}

fn skip(app: &App, tool: &str, reason: String) -> Result<PutOutcome> {
    stats::bump(&app.store, AREA, "skipped", Some(tool), 1)?;
    Ok(PutOutcome::Skipped { reason })
}

/// Removes a vector from the index (and the store), if there is one.
pub(super) async fn drop_vector(app: &App, id: Option<u64>) -> Result<()> {
    if let Some(id) = id {
        app.index().await?.remove(&app.store, id)?;
    }
    Ok(())
}

/// What a refused dependency path is told: how to allow more.
pub const ROOTS_HINT: &str = "cached results may depend only on files inside the project; pass paths inside it, or \
add the directory to results.allowed_roots in your own refrain config (a project's refrain.toml cannot)";

/// The directories results may depend on: the project and the user's `results.allowed_roots`.
pub fn roots(app: &App) -> Roots {
    Roots::new(&app.project.root, &app.config.results.allowed_roots, ROOTS_HINT)
}

/// The dependencies named by the caller plus those implied by known tools' arguments (the file a
/// `Read` read, the directory a `Grep`/`Glob`/`LS` searched). Every path is checked against the
/// allowed roots before any is read, so a refused put reads, stats and hashes nothing.
fn capture(roots: &Roots, req: &PutRequest) -> std::result::Result<Vec<Dep>, String> {
    let (mut files, mut trees) = (req.files.clone(), req.trees.clone());
    implied(roots, &req.tool, &req.args, &mut files, &mut trees);
    files.sort();
    files.dedup();
    trees.sort();
    trees.dedup();
    let check = |paths: Vec<String>| -> std::result::Result<Vec<(String, PathBuf)>, String> {
        paths.into_iter().map(|p| roots.check(&p).map(|abs| (p, abs)).map_err(|e| e.to_string())).collect()
    };
    let (files, trees) = (check(files)?, check(trees)?);
    let mut deps = Vec::new();
    for (f, p) in &files {
        deps.push(fresh::capture_file(p).map_err(|e| format!("cannot read dependency {f}: {e}"))?);
    }
    for (t, p) in &trees {
        deps.push(fresh::capture_tree(p).map_err(|e| format!("cannot read dependency tree {t}: {e}"))?);
    }
    if req.git_head {
        deps.push(fresh::capture_git_head(roots.project()).map_err(|e| format!("cannot read the git HEAD: {e}"))?);
    }
    Ok(deps)
}

fn implied(roots: &Roots, tool: &str, args: &Value, files: &mut Vec<String>, trees: &mut Vec<String>) {
    let s = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
    match tool {
        "Read" | "NotebookRead" => files.extend(s("file_path").or_else(|| s("notebook_path"))),
        "read_file" => files.extend(s("path").or_else(|| s("file_path"))),
        "Grep" | "Glob" | "LS" | "list_dir" | "grep_files" => match s("path").or_else(|| s("dir_path")) {
            // Only a path inside the roots is looked at; one outside is refused as a tree.
            Some(p) if roots.check(&p).is_ok_and(|abs| abs.is_file()) => files.push(p),
            Some(p) => trees.push(p),
            None if tool != "LS" => trees.push(".".into()),
            None => {}
        },
        _ => {}
    }
}
