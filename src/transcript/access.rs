//! Which transcript paths may be read: the agents' own transcript directories
//! (`~/.claude/projects`, `~/.codex/sessions`), the project, and configured roots.
//!
//! Paths are canonicalised before the check, so `..` and symlinks cannot leave the roots.

use super::Error;
use std::path::{Path, PathBuf};

/// The allowed roots.
#[derive(Debug, Clone)]
pub struct Access {
    roots: Option<Vec<PathBuf>>,
}

impl Access {
    /// The agents' directories, the project root and `extra` roots.
    pub fn new(project_root: &Path, extra: &[PathBuf]) -> Access {
        let mut roots = Vec::new();
        if let Some(home) = directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf()) {
            roots.push(home.join(".claude").join("projects"));
            roots.push(home.join(".codex").join("sessions"));
        }
        roots.push(project_root.to_path_buf());
        roots.extend(extra.iter().cloned());
        let roots = roots.into_iter().filter_map(|r| r.canonicalize().ok()).collect();
        Access { roots: Some(roots) }
    }

    /// No restriction: for the command line, where the person typing already has the file.
    pub fn unrestricted() -> Access {
        Access { roots: None }
    }

    /// The canonical path when it may be read.
    pub fn check(&self, path: &Path) -> Result<PathBuf, Error> {
        let canon = path.canonicalize().map_err(|source| Error::Read { path: path.to_path_buf(), source })?;
        match &self.roots {
            None => Ok(canon),
            Some(roots) if roots.iter().any(|r| canon.starts_with(r)) => Ok(canon),
            Some(roots) => Err(Error::Forbidden {
                path: canon,
                allowed: roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", "),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_outside_the_roots_are_refused_after_canonicalising() {
        let root = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let inside = root.path().join("s.jsonl");
        std::fs::write(&inside, "{}").unwrap();
        std::fs::write(other.path().join("x.jsonl"), "{}").unwrap();
        let access = Access::new(root.path(), &[]);
        assert!(access.check(&inside).is_ok());
        let escape = root.path().join("..").join(other.path().file_name().unwrap()).join("x.jsonl");
        let err = access.check(&escape).unwrap_err();
        assert!(err.to_string().contains("outside the allowed directories"), "{err}");
        assert!(Access::new(root.path(), &[other.path().to_path_buf()]).check(&escape).is_ok());
    }
}
