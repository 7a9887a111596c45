//! Which transcript paths may be read: the agents' own transcript directories
//! (`~/.claude/projects`, `~/.codex/sessions`), the project, and the roots the user's own config
//! adds (`prompt.transcript_roots`).
//!
//! Paths are resolved (relative ones against the project, symlinks followed) by
//! `crate::confine` before the check, and a path outside the roots gets the same answer whether
//! or not it exists.

use super::Error;
use crate::confine::Roots;
use std::path::{Path, PathBuf};

const HINT: &str = "move it there or add its directory to prompt.transcript_roots in your own refrain config";

/// The allowed roots.
#[derive(Debug, Clone)]
pub struct Access {
    roots: Option<Roots>,
}

impl Access {
    /// The agents' directories, the project root and `extra` roots.
    pub fn new(project_root: &Path, extra: &[PathBuf]) -> Access {
        let mut roots = Vec::new();
        if let Some(home) = directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf()) {
            roots.push(home.join(".claude").join("projects"));
            roots.push(home.join(".codex").join("sessions"));
        }
        roots.extend(extra.iter().cloned());
        Access { roots: Some(Roots::new(project_root, &roots, HINT)) }
    }

    /// No restriction: for the command line, where the person typing already has the file.
    pub fn unrestricted() -> Access {
        Access { roots: None }
    }

    /// The resolved path when it may be read (it may still be missing: reading it says so).
    pub fn check(&self, path: &Path) -> Result<PathBuf, Error> {
        match &self.roots {
            None => path.canonicalize().map_err(|source| Error::Read { path: path.to_path_buf(), source }),
            Some(roots) => roots.check(path).map_err(|_| Error::Forbidden {
                path: path.to_path_buf(),
                allowed: roots.all().iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", "),
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
        let root_c = root.path().canonicalize().unwrap();
        let access = Access::new(&root_c, &[]);
        assert!(access.check(&inside).is_ok());
        let escape = root.path().join("..").join(other.path().file_name().unwrap()).join("x.jsonl");
        let err = access.check(&escape).unwrap_err();
        assert!(err.to_string().contains("outside the allowed directories"), "{err}");
        assert!(Access::new(&root_c, &[other.path().to_path_buf()]).check(&escape).is_ok());
        // Missing or present, outside is outside, with the path as given.
        let missing = other.path().join("nope.jsonl");
        let a = access.check(&escape).unwrap_err().to_string();
        let b = access.check(&missing).unwrap_err().to_string();
        assert_eq!(a.replace(&escape.display().to_string(), "P"), b.replace(&missing.display().to_string(), "P"));
    }

    #[test]
    fn relative_paths_resolve_against_the_project() {
        let root = tempfile::tempdir().unwrap();
        let canon = root.path().canonicalize().unwrap();
        std::fs::write(canon.join("s.jsonl"), "{}").unwrap();
        assert_eq!(Access::new(&canon, &[]).check(Path::new("s.jsonl")).unwrap(), canon.join("s.jsonl"));
    }
}
