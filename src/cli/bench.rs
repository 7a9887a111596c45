//! `refrain bench ...`: a thin alias for the separate `refrain-bench` binary, so the benchmarks
//! stay out of the shipped product. It runs the `refrain-bench` found beside this binary (or on the
//! PATH) with the same arguments, pointed at this binary.

use super::GlobalArgs;
use clap::Args;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `refrain bench`: everything is passed to `refrain-bench` unchanged.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The scenario and its flags (see `refrain-bench --help`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<OsString>,
}

/// The error when the bench binary is missing.
#[derive(Debug, thiserror::Error)]
#[error(
    "refrain-bench is not installed beside {beside} nor on the PATH; build it with `cargo build --release -p refrain-bench` (the benchmarks are not part of refrain itself)"
)]
pub struct Missing {
    beside: String,
}

/// Runs `refrain-bench` with the given arguments and returns its exit status.
pub fn run(global: &GlobalArgs, args: BenchArgs) -> anyhow::Result<ExitCode> {
    let me = std::env::current_exe()?;
    let name = format!("refrain-bench{}", std::env::consts::EXE_SUFFIX);
    let beside = me.parent().map(|d| d.join(&name));
    let bin = match &beside {
        Some(p) if p.is_file() => p.clone(),
        _ => on_path(&name)
            .ok_or_else(|| Missing { beside: beside.as_ref().map(|p| p.display().to_string()).unwrap_or_default() })?,
    };
    let mut cmd = std::process::Command::new(bin);
    cmd.arg("--refrain").arg(&me);
    if let Some(h) = &global.home {
        cmd.arg("--home").arg(h);
    }
    if let Some(m) = &global.model_dir {
        cmd.arg("--model-dir").arg(m);
    }
    let status = cmd.args(&args.args).status()?;
    Ok(ExitCode::from(status.code().and_then(|c| u8::try_from(c).ok()).unwrap_or(1)))
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(name)).find(|p| p.is_file())
}
