//! `refrain config`: the resolved configuration and where each value came from.

use super::GlobalArgs;
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

/// Prints the configuration.
pub fn run(global: &GlobalArgs, args: ConfigArgs) -> anyhow::Result<ExitCode> {
    let (project, sourced) = super::resolve(global, None)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let rows: Vec<_> = sourced
            .sources
            .iter()
            .map(|(k, (v, s))| serde_json::json!({"key": k, "value": v, "source": s.to_string()}))
            .collect();
        let doc = serde_json::json!({"project": project.root, "data_dir": project.dir, "settings": rows});
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    } else {
        writeln!(out, "project  {}\ndata dir {}\n", project.root.display(), project.dir.display())?;
        let width = sourced.sources.keys().map(String::len).max().unwrap_or(0);
        for (key, (value, source)) in &sourced.sources {
            writeln!(out, "{key:width$}  {value}  ({source})")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
