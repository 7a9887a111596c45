//! Keeps stdout for the protocol alone.
//!
//! At startup in stdio mode the real stdout is duplicated for the protocol writer and fd 1 is
//! pointed at stderr, so a stray print from any dependency (hnsw_rs prints on some error paths)
//! lands in the log stream instead of corrupting JSON-RPC.

use std::os::fd::AsFd;

/// Returns a handle to the original stdout and redirects fd 1 to stderr.
pub fn take_protocol_stdout() -> std::io::Result<tokio::fs::File> {
    let protocol = rustix::io::dup(std::io::stdout().as_fd())?;
    rustix::stdio::dup2_stdout(std::io::stderr().as_fd())?;
    Ok(tokio::fs::File::from_std(std::fs::File::from(protocol)))
}
