//! `refrain install` / `refrain uninstall`: register refrain with the agents on this machine.

use super::GlobalArgs;
use crate::integrate::{self, Agent, Change, FileEdit, Options, Scope};
use crate::term;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `refrain install`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Register the MCP server only, without the hooks that make reuse automatic.
    #[arg(long)]
    no_hooks: bool,
    /// The command agents run (default: this binary's absolute path).
    #[arg(long)]
    command: Option<String>,
}

/// Arguments of `refrain uninstall`.
#[derive(Debug, Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    common: CommonArgs,
}

/// Flags both commands take.
#[derive(Debug, Args)]
struct CommonArgs {
    /// User-wide config files, or the project's own.
    #[arg(long, value_enum, default_value = "user")]
    scope: Scope,
    /// Only these agents (comma-separated: claude,codex,gemini,qwen,opencode,cursor); default:
    /// every agent found.
    #[arg(long)]
    only: Option<String>,
    /// Print what would change and change nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Registers refrain.
pub fn run_install(global: &GlobalArgs, args: InstallArgs) -> anyhow::Result<ExitCode> {
    let command = match args.command {
        Some(c) => c,
        None => std::env::current_exe()?.canonicalize()?.to_string_lossy().into_owned(),
    };
    let opts = options(global, &args.common, command, !args.no_hooks)?;
    let edits = integrate::plan_install(&opts)?;
    finish(&opts, &edits, args.common.dry_run, "installed")
}

/// Removes what `install` added.
pub fn run_uninstall(global: &GlobalArgs, args: UninstallArgs) -> anyhow::Result<ExitCode> {
    let opts = options(global, &args.common, "refrain".into(), true)?;
    let edits = integrate::plan_uninstall(&opts)?;
    finish(&opts, &edits, args.common.dry_run, "uninstalled")
}

fn options(global: &GlobalArgs, common: &CommonArgs, command: String, hooks: bool) -> anyhow::Result<Options> {
    let home = directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf()).ok_or(integrate::Error::NoHome)?;
    let project = crate::project::Project::resolve(global.project.as_deref(), Path::new("/"))?.root;
    let only = common.only.as_deref().map(integrate::parse_agents).transpose()?;
    Ok(Options { scope: common.scope, only, hooks, command, project, home, env: recorded_env(global)? })
}

/// REFRAIN_HOME and REFRAIN_MODEL_DIR as given to this command (flag, else environment), made
/// absolute: the agents start `refrain serve` and the hooks with their own environment, so a
/// custom data or model directory must travel in the registration.
pub(super) fn recorded_env(global: &GlobalArgs) -> anyhow::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for ((key, _), flag) in integrate::RECORDED_ENV.iter().zip([&global.home, &global.model_dir]) {
        let Some(path) = flag.clone().or_else(|| std::env::var_os(key).filter(|v| !v.is_empty()).map(PathBuf::from))
        else {
            continue;
        };
        let path = std::path::absolute(&path)?;
        out.push((key.to_string(), path.to_string_lossy().into_owned()));
    }
    Ok(out)
}

fn finish(opts: &Options, edits: &[FileEdit], dry_run: bool, done: &str) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let agents: Vec<&str> = match &opts.only {
        Some(list) => list.iter().map(|a| a.arg()).collect(),
        None => Agent::ALL.into_iter().filter(|&a| integrate::present(a, &opts.home)).map(Agent::arg).collect(),
    };
    if agents.is_empty() && edits.is_empty() {
        writeln!(
            out,
            "no agent found (looked for ~/.claude, ~/.codex, ~/.gemini, ~/.qwen, ~/.config/opencode, ~/.cursor and \
             their binaries); name one with --only"
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    if edits.is_empty() {
        writeln!(out, "nothing to change: refrain is already {done} for {}", agents.join(", "))?;
        return Ok(ExitCode::SUCCESS);
    }
    for e in edits {
        let verb = match (e.change, dry_run) {
            (Change::Create, true) => "would create",
            (Change::Create, false) => "created",
            (Change::Modify, true) => "would edit",
            (Change::Modify, false) => "edited",
            (Change::Restore, true) => "would restore from backup",
            (Change::Restore, false) => "restored from backup",
            (Change::Delete, true) => "would delete",
            (Change::Delete, false) => "deleted",
        };
        writeln!(out, "{verb} {} ({})", term::field(&e.path.display().to_string()), e.agent.arg())?;
        if e.make_backup {
            writeln!(out, "  backup: {}", term::field(&backup_name(&e.path).display().to_string()))?;
        }
        if dry_run {
            for line in diff_lines(e.before.as_deref(), e.after.as_deref()) {
                // The agents' config files, as they are on disk: escaped for the terminal.
                writeln!(out, "  {}", term::field(&line))?;
            }
        }
    }
    if !dry_run {
        integrate::apply(edits)?;
    }
    let codex_hooks =
        edits.iter().any(|e| e.agent == Agent::Codex && e.path.ends_with("hooks.json") && e.after.is_some());
    if codex_hooks {
        writeln!(out, "note: Codex runs new hooks only once you trust them: review them with /hooks in Codex")?;
    }
    Ok(ExitCode::SUCCESS)
}

fn backup_name(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".refrain-backup");
    PathBuf::from(s)
}

/// Lines only in the new content (`+`) or only in the old (`-`): enough to review a config edit.
fn diff_lines(before: Option<&[u8]>, after: Option<&[u8]>) -> Vec<String> {
    let old = String::from_utf8_lossy(before.unwrap_or_default()).into_owned();
    let new = String::from_utf8_lossy(after.unwrap_or_default()).into_owned();
    let (old_lines, new_lines): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let mut out: Vec<String> = old_lines.iter().filter(|l| !new_lines.contains(l)).map(|l| format!("- {l}")).collect();
    out.extend(new_lines.iter().filter(|l| !old_lines.contains(l)).map(|l| format!("+ {l}")));
    out
}
