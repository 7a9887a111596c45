//! Which project a process serves, and where that project's data lives.
//!
//! The project is `--project` / `REFRAIN_PROJECT`, else the git root of the working directory, else
//! the working directory, canonicalised. Its data directory is HOME/projects/<name>-<hash>, so two
//! projects never share a store.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Errors resolving a project.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The directory does not exist or cannot be canonicalised.
    #[error("project directory {path} cannot be used: {source}; pass an existing directory with --project")]
    Canonical {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The data directory could not be created or written.
    #[error("cannot prepare data directory {path}: {source}; check permissions or set REFRAIN_HOME")]
    DataDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// A resolved project: its root and its private data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// Canonical project root.
    pub root: PathBuf,
    /// Private data directory (store, index, socket, metadata).
    pub dir: PathBuf,
    /// Short stable id derived from the root.
    pub id: String,
}

/// The small metadata file naming the project root, written into the data directory.
#[derive(Debug, Serialize, Deserialize)]
struct ProjectMeta {
    root: PathBuf,
    id: String,
    created_by: String,
}

impl Project {
    /// Resolves the project from an explicit directory or the working directory.
    pub fn resolve(explicit: Option<&Path>, home: &Path) -> Result<Project, Error> {
        let start = match explicit {
            Some(p) => p.to_path_buf(),
            None => std::env::current_dir().map_err(|source| Error::Canonical { path: ".".into(), source })?,
        };
        let start = start.canonicalize().map_err(|source| Error::Canonical { path: start.clone(), source })?;
        let root = if explicit.is_some() { start } else { git_root(&start).unwrap_or(start) };
        Ok(Self::at(root, home))
    }

    /// The project for an already canonical root.
    pub fn at(root: PathBuf, home: &Path) -> Project {
        let digest = hex::encode(Sha256::digest(root.to_string_lossy().as_bytes()));
        let id = digest[..16].to_string();
        let name: String = root
            .file_name()
            .map(|n| {
                n.to_string_lossy()
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                    .take(32)
                    .collect()
            })
            .unwrap_or_default();
        let dir = home.join("projects").join(if name.is_empty() { id.clone() } else { format!("{name}-{id}") });
        Project { root, dir, id }
    }

    /// Creates the data directory and its metadata file if needed.
    pub fn prepare(&self) -> Result<(), Error> {
        let err = |source| Error::DataDir { path: self.dir.clone(), source };
        std::fs::create_dir_all(&self.dir).map_err(err)?;
        let meta_path = self.dir.join("project.json");
        if !meta_path.exists() {
            let meta = ProjectMeta {
                root: self.root.clone(),
                id: self.id.clone(),
                created_by: env!("CARGO_PKG_VERSION").into(),
            };
            let text = serde_json::to_string_pretty(&meta).unwrap_or_default();
            let tmp = self.dir.join("project.json.tmp");
            std::fs::write(&tmp, text).map_err(err)?;
            std::fs::rename(&tmp, &meta_path).map_err(err)?;
        }
        Ok(())
    }

    /// The sled database directory.
    pub fn db_dir(&self) -> PathBuf {
        self.dir.join("db")
    }

    /// The vector index files' directory.
    pub fn index_dir(&self) -> PathBuf {
        self.dir.join("index")
    }

    /// The lock file held by the owner process.
    pub fn lock_path(&self) -> PathBuf {
        self.dir.join("owner.lock")
    }

    /// The owner's local socket. Unix socket paths are short, so long ones move to the temp dir.
    pub fn socket_path(&self) -> PathBuf {
        let p = self.dir.join("owner.sock");
        if p.as_os_str().len() < 100 { p } else { std::env::temp_dir().join(format!("refrain-{}.sock", self.id)) }
    }
}

/// The nearest ancestor holding `.git`.
fn git_root(start: &Path) -> Option<PathBuf> {
    start.ancestors().find(|d| d.join(".git").exists()).map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projects_with_different_roots_get_different_dirs() {
        let home = Path::new("/h");
        let a = Project::at("/x/app".into(), home);
        let b = Project::at("/y/app".into(), home);
        assert_ne!(a.dir, b.dir);
        assert!(a.dir.starts_with("/h/projects"));
    }

    #[test]
    fn git_root_is_found_from_a_subdirectory() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        assert_eq!(git_root(&root.join("src/deep")), Some(root));
    }
}
