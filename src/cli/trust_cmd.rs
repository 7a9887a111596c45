//! `refrain trust`: lets a project's config file, exactly as it is now, set what a project file may
//! not set on its own (the way `direnv allow` and `mise trust` work); `--revoke` forgets it and
//! `--list` shows every trusted file and whether it still matches.
//!
//! The record is the file's path and the sha256 of its content, kept under refrain's home: an
//! edit makes the file untrusted again.

use super::GlobalArgs;
use crate::config::trust::{TrustDb, digest};
use crate::config::{self, keys, screen};
use crate::term;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `refrain trust`.
#[derive(Debug, Args)]
pub struct TrustArgs {
    /// Config files to trust (default: the project's refrain.toml and .refrain.toml).
    files: Vec<PathBuf>,
    /// Forget the files instead of trusting them.
    #[arg(long, conflicts_with = "list")]
    revoke: bool,
    /// List the trusted files and whether each still has the content that was trusted.
    #[arg(long)]
    list: bool,
}

/// Runs `refrain trust`.
pub fn run(global: &GlobalArgs, args: TrustArgs) -> anyhow::Result<ExitCode> {
    let (project, home) = super::locate(global)?;
    let mut db = TrustDb::load(&home)?;
    let mut out = std::io::stdout().lock();
    if args.list {
        return list(&db, &mut out);
    }
    let files = if args.files.is_empty() { config::project_files(&project.root) } else { named(&args.files)? };
    if files.is_empty() {
        anyhow::bail!(
            "no refrain.toml or .refrain.toml in {}; nothing to trust (pass a file, or run this in the project)",
            project.root.display()
        );
    }
    for file in files {
        if args.revoke {
            let said = if db.revoke(&file)? { "revoked" } else { "was not trusted:" };
            writeln!(out, "{said} {}", shown(&file))?;
            continue;
        }
        let (sha256, table) = config::read_table(&file)?;
        let (_, refused) = screen::screen(table, &file, false, screen::default_of);
        db.trust(&file, &sha256)?;
        writeln!(out, "trusted {} (sha256 {}); an edit makes it untrusted again", shown(&file), &sha256[..12])?;
        let (user_only, lifted): (Vec<_>, Vec<_>) =
            refused.iter().partition(|r| keys::rule(&r.key).is_some_and(|k| k.level == keys::Level::User));
        if !lifted.is_empty() {
            let names: Vec<&str> = lifted.iter().map(|r| r.key.as_str()).collect();
            writeln!(out, "  it may now set: {}", term::field(&names.join(", ")))?;
        }
        for r in user_only {
            writeln!(out, "  still refused: {}: {}", term::field(&r.key), term::field(&r.reason))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Explicit files: only `refrain.toml` / `.refrain.toml`, named by their canonical directory.
fn named(files: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    files
        .iter()
        .map(|f| {
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if name != "refrain.toml" && name != ".refrain.toml" {
                anyhow::bail!(
                    "{}: refrain reads project settings only from refrain.toml and .refrain.toml",
                    f.display()
                );
            }
            let dir = f.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let dir = dir.canonicalize().map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
            Ok(dir.join(name))
        })
        .collect()
}

fn list(db: &TrustDb, out: &mut impl Write) -> anyhow::Result<ExitCode> {
    let mut any = false;
    for (path, record) in db.records() {
        any = true;
        let state = match std::fs::read(path) {
            Ok(bytes) if digest(&bytes) == record.sha256 => "trusted".to_string(),
            Ok(_) => "changed since it was trusted: untrusted until `refrain trust` again".to_string(),
            Err(e) => format!("cannot be read ({e})"),
        };
        writeln!(
            out,
            "{}  sha256 {}  {}",
            shown(path),
            term::field(record.sha256.get(..12).unwrap_or_default()),
            term::field(&state)
        )?;
    }
    if !any {
        writeln!(out, "no trusted config files")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A path as the terminal may show it.
fn shown(p: &Path) -> String {
    term::field(&p.display().to_string()).into_owned()
}
