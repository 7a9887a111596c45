//! `refrain index rebuild`: builds every vector scope's graph again from the store and saves it,
//! and files every plan under the words of its task again (`plan::terms`).
//! Graphs are built and saved on their own as scopes grow; this is for the odd repair (a graph
//! file lost, or removals that left many dead points). It needs the store to itself, so it runs
//! only when no refrain server owns the project.

use super::GlobalArgs;
use crate::server::Link;
use clap::{Args, Subcommand};
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `refrain index`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    #[command(subcommand)]
    command: IndexCommand,
}

#[derive(Debug, Subcommand)]
enum IndexCommand {
    /// Build every scope's graph from the stored vectors and save it (uses every core).
    Rebuild,
}

/// The error when a server owns the store.
#[derive(Debug, thiserror::Error)]
#[error(
    "a refrain server owns the store of {project}; stop the agents using it (or wait until they exit) and run this again"
)]
pub struct Owned {
    project: String,
}

/// Runs `refrain index`.
pub fn run(global: &GlobalArgs, args: IndexArgs) -> anyhow::Result<ExitCode> {
    let IndexCommand::Rebuild = args.command;
    let (project, sourced) = super::resolve(global, None)?;
    super::init_logging(&sourced.config);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let report = runtime.block_on(async move {
        let root = project.root.display().to_string();
        let link = Link::open(project, sourced.config).await?;
        // Owns the store when no server does; follows (and is refused below) when one does.
        let wait = std::time::Duration::from_secs(30);
        if let Some(Err(e)) = link.establish_in_background(wait).await.outcome(std::time::Duration::ZERO).await {
            return Err(e.into());
        }
        let Some(app) = link.local_app().await else { return Err(Owned { project: root }.into()) };
        let started = Instant::now();
        let built = async {
            let index = app.index().await?;
            let built = tokio::task::spawn_blocking(move || index.build_all()).await??;
            let store = app.store.clone();
            let filed = tokio::task::spawn_blocking(move || crate::plan::library::refile_terms(&store)).await??;
            app.store.flush_async().await?;
            anyhow::Ok((built, filed))
        }
        .await;
        link.shutdown().await;
        anyhow::Ok((built?, started.elapsed()))
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    let ((built, filed), elapsed) = report?;
    let mut out = std::io::stdout().lock();
    for (scope, points) in &built {
        writeln!(out, "{}: {points} vectors in the graph", crate::term::field(scope))?;
    }
    writeln!(out, "{filed} plan(s) filed under the words of their tasks")?;
    writeln!(out, "{} scope(s) rebuilt in {:.1} s", built.len(), elapsed.as_secs_f64())?;
    Ok(ExitCode::SUCCESS)
}
