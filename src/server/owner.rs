//! The owner role: the process holding `owner.lock` opens the sled store and serves every other
//! process of the project (agents' servers, hook commands) on a local socket in the project dir.
//!
//! The lock is an OS file lock, so it is released when the owner dies however it dies; the next
//! process to ask takes it over.

use super::Handler;
use crate::project::Project;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use tokio::net::UnixListener;
use tokio_util::sync::CancellationToken;

/// Held while this process owns the project: the lock, the socket and its accept loop.
pub struct OwnerGuard {
    _lock: File,
    socket: PathBuf,
    cancel: CancellationToken,
}

impl Drop for OwnerGuard {
    fn drop(&mut self) {
        self.cancel.cancel();
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// Takes the owner lock if nobody holds it, and writes this process's id into the lock file so
/// a follower can name the owner when it stops answering.
pub fn try_lock(project: &Project) -> std::io::Result<Option<File>> {
    let mut file = OpenOptions::new().create(true).truncate(false).write(true).open(project.lock_path())?;
    match file.try_lock() {
        Ok(()) => {
            use std::io::Write;
            file.set_len(0)?;
            write!(file, "{}", std::process::id())?;
            Ok(Some(file))
        }
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// Whether some process holds the owner lock (without taking it).
pub fn is_held(project: &Project) -> std::io::Result<bool> {
    let file = OpenOptions::new().create(true).truncate(false).write(true).open(project.lock_path())?;
    match file.try_lock() {
        Ok(()) => Ok(false),
        Err(std::fs::TryLockError::WouldBlock) => Ok(true),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// The process id the current owner wrote into the lock file, if readable.
pub fn owner_pid(project: &Project) -> Option<u32> {
    std::fs::read_to_string(project.lock_path()).ok()?.trim().parse().ok()
}

/// Binds the project socket and serves `handler` to every connection until the guard drops.
pub fn listen(lock: File, socket: &Path, handler: Handler) -> std::io::Result<OwnerGuard> {
    // Only the lock holder gets here, so a socket file left over is from a dead owner.
    let _ = std::fs::remove_file(socket);
    let listener = UnixListener::bind(socket)?;
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let h = handler.clone();
                        tokio::spawn(async move {
                            use rmcp::ServiceExt;
                            match h.serve(stream).await {
                                Ok(running) => { let _ = running.waiting().await; }
                                Err(e) => tracing::debug!(error = %e, "follower connection ended during initialize"),
                            }
                        });
                    }
                    Err(e) => tracing::warn!(error = %e, "owner socket accept failed"),
                },
            }
        }
    });
    Ok(OwnerGuard { _lock: lock, socket: socket.to_path_buf(), cancel })
}
