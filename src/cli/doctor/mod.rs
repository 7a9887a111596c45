//! `refrain doctor`: is refrain doing its job on this machine? For each agent found, whether
//! refrain is registered (an MCP entry running this binary, its hooks), whether those hooks have
//! fired, and what the agent still needs from the user (trusting Codex's hooks, approving a
//! project's `.mcp.json` in Claude Code); then the model and runtime (present, sha256-verified),
//! the current project's store, refused project settings and the team library.
//!
//! One line per check: ok, warn or problem, and for each problem the command that fixes it.
//! Exits 1 when there is a problem; `--json` prints the same checks as JSON.

mod agents;
mod local;
mod model;

use super::GlobalArgs;
use clap::Args;
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `refrain doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print JSON instead of lines.
    #[arg(long)]
    json: bool,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// As it should be.
    Ok,
    /// Worth knowing; refrain works.
    Warn,
    /// refrain does not work as installed until it is fixed.
    Problem,
}

/// One check's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// What was checked: an agent's short name, `model`, `store`, `config` or `team`.
    pub area: String,
    /// The outcome.
    pub status: Status,
    /// What was found.
    pub what: String,
    /// The command that fixes a problem (or answers a warning).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    fn new(area: &str, status: Status, what: impl Into<String>, fix: Option<String>) -> Check {
        Check { area: area.to_string(), status, what: what.into(), fix }
    }
    fn ok(area: &str, what: impl Into<String>) -> Check {
        Check::new(area, Status::Ok, what, None)
    }
    fn warn(area: &str, what: impl Into<String>, fix: Option<String>) -> Check {
        Check::new(area, Status::Warn, what, fix)
    }
    fn problem(area: &str, what: impl Into<String>, fix: impl Into<String>) -> Check {
        Check::new(area, Status::Problem, what, Some(fix.into()))
    }
}

/// Runs every check; status 1 when any found a problem.
pub fn run(global: &GlobalArgs, args: DoctorArgs) -> anyhow::Result<ExitCode> {
    let (project, sourced) = super::resolve(global, None)?;
    let config = &sourced.config;
    let mut checks = agents::checks(global, &project.root, &config.home())?;
    checks.extend(model::checks(config));
    checks.push(local::store(&project, config));
    checks.extend(local::refused(config));
    checks.push(local::team(config));
    let problems = checks.iter().filter(|c| c.status == Status::Problem).count();
    let warnings = checks.iter().filter(|c| c.status == Status::Warn).count();
    let mut out = std::io::stdout().lock();
    if args.json {
        let doc = serde_json::json!({"checks": checks, "problems": problems, "warnings": warnings});
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    } else {
        let width = checks.iter().map(|c| c.area.len()).max().unwrap_or(0);
        for c in &checks {
            let status = match c.status {
                Status::Ok => "ok",
                Status::Warn => "warn",
                Status::Problem => "problem",
            };
            writeln!(out, "{status:<7}  {:width$}  {}", c.area, c.what)?;
            if let Some(fix) = &c.fix {
                writeln!(out, "{:7}  {:width$}  fix: {fix}", "", "")?;
            }
        }
        let summary = match (problems, warnings) {
            (0, 0) => "healthy".to_string(),
            (0, w) => format!("healthy, {w} warning(s)"),
            (p, w) => format!("{p} problem(s), {w} warning(s): run the fixes above, then refrain doctor again"),
        };
        writeln!(out, "\n{summary}")?;
    }
    Ok(if problems == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// "3 min ago" and the like.
fn ago(when: std::time::SystemTime) -> String {
    let secs = when.elapsed().map(|d| d.as_secs()).unwrap_or(0);
    match secs {
        0..60 => format!("{secs} s ago"),
        60..3600 => format!("{} min ago", secs / 60),
        3600..86_400 => format!("{} h ago", secs / 3600),
        _ => format!("{} days ago", secs / 86_400),
    }
}
