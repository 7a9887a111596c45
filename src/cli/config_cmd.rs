//! `refrain config`: the resolved configuration, where each value came from, which project config
//! files were read (trusted or not), and which of their settings were refused.
//!
//! Exits with status 1 when a setting was refused, so a script (or a person) notices that the
//! project asks for more than refrain gave it.

use super::GlobalArgs;
use crate::config::{Source, keys, user_file};
use crate::term;
use clap::Args;
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `refrain config`.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Prints the configuration; status 1 when a project setting was refused.
pub fn run(global: &GlobalArgs, args: ConfigArgs) -> anyhow::Result<ExitCode> {
    let (project, sourced) = super::resolve(global, None)?;
    let mut out = std::io::stdout().lock();
    let mut rows: Vec<(String, String, String)> =
        sourced.sources.iter().map(|(k, (v, s))| (k.clone(), v.clone(), s.to_string())).collect();
    // Keys with no value (optional settings left unset) are listed too, so every key shows.
    for rule in keys::RULES {
        if !rows.iter().any(|(k, _, _)| k == rule.key || k.starts_with(&format!("{}.", rule.key))) {
            rows.push((rule.key.to_string(), "(not set)".into(), Source::Default.to_string()));
        }
    }
    rows.sort();
    let refused = &sourced.config.refused;
    if args.json {
        let files: Vec<_> = sourced
            .project_files
            .iter()
            .map(|f| serde_json::json!({"path": f.path, "sha256": f.sha256, "trusted": f.trusted}))
            .collect();
        let settings: Vec<_> = rows
            .iter()
            .map(|(k, v, s)| {
                let level = keys::rule(k).map(|r| r.level.describe()).unwrap_or_default();
                serde_json::json!({"key": k, "value": v, "source": s, "project_may_set": level})
            })
            .collect();
        let doc = serde_json::json!({
            "project": project.root,
            "data_dir": project.dir,
            "user_file": user_file(),
            "project_files": files,
            "settings": settings,
            "refused": refused,
        });
        writeln!(out, "{}", term::json(&serde_json::to_string_pretty(&doc)?))?;
    } else {
        writeln!(out, "project  {}\ndata dir {}", shown(&project.root), shown(&project.dir))?;
        if let Some(f) = user_file() {
            let state = if f.is_file() { "" } else { " (absent)" };
            writeln!(out, "user     {}{state}", shown(&f))?;
        }
        for f in &sourced.project_files {
            let state = if f.trusted { "trusted" } else { "not trusted: `refrain trust` allows its other settings" };
            writeln!(
                out,
                "project  {} (sha256 {}, {state})",
                shown(&f.path),
                term::field(f.sha256.get(..12).unwrap_or_default())
            )?;
        }
        writeln!(out)?;
        let width = rows.iter().map(|(k, _, _)| term::field(k).chars().count()).max().unwrap_or(0);
        for (key, value, source) in &rows {
            let (key, value, source) = (term::field(key), term::field(value), term::field(source));
            writeln!(out, "{key:width$}  {value}  ({source})")?;
        }
        if !refused.is_empty() {
            writeln!(out, "\nrefused ({}): these project settings are ignored", refused.len())?;
            for r in refused {
                writeln!(out, "  {}", term::field(&r.to_string()))?;
            }
        }
    }
    Ok(if refused.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// A path as the terminal may show it.
fn shown(p: &std::path::Path) -> String {
    term::field(&p.display().to_string()).into_owned()
}
