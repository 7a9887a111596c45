//! Confinement: the directories refrain may read, stat or hash on a request's behalf (the project
//! root plus what the user's own config adds), and the check every such path goes through.
//!
//! A path is resolved the way the kernel would open it — relative to the project root, every
//! symlink followed (also dangling ones, by reading the link), `..` applied after the link it
//! follows — without requiring it to exist, and only then compared with the roots. A path outside
//! gets one answer whether or not it exists, so the check is never an existence oracle.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Symlinks followed in one path before giving up (the kernel's own limit is 40).
const MAX_LINKS: usize = 40;

/// A path that resolves outside every allowed root (or through too many symlinks).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{given} is outside the project{extra}; {hint}")]
pub struct Outside {
    /// The path as the caller gave it (never its resolution, which could name a link's target).
    pub given: String,
    extra: String,
    hint: &'static str,
}

/// The allowed roots, canonical.
#[derive(Debug, Clone)]
pub struct Roots {
    project: PathBuf,
    roots: Vec<PathBuf>,
    hint: &'static str,
}

impl Roots {
    /// The project root (already canonical) and `extra` roots from the user's own config (those
    /// that do not exist are dropped). `hint` tells a refused caller how to allow more, naming the
    /// setting.
    pub fn new(project_root: &Path, extra: &[PathBuf], hint: &'static str) -> Roots {
        let mut roots = vec![project_root.to_path_buf()];
        roots.extend(extra.iter().filter_map(|r| resolve(project_root, r.as_os_str()).canonicalize().ok()));
        Roots { project: project_root.to_path_buf(), roots, hint }
    }

    /// The project root.
    pub fn project(&self) -> &Path {
        &self.project
    }

    /// Every allowed root, the project first.
    pub fn all(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Resolves `path` (relative to the project root) and returns it when it lies inside a root.
    /// The returned path has no symlink left in the part that exists.
    pub fn check(&self, path: impl AsRef<std::ffi::OsStr>) -> Result<PathBuf, Outside> {
        let given = path.as_ref();
        let resolved = resolve(&self.project, given);
        if self.roots.iter().any(|r| resolved.starts_with(r)) {
            return Ok(resolved);
        }
        let extra = if self.roots.len() > 1 { " and the other allowed directories".into() } else { String::new() };
        Err(Outside { given: given.to_string_lossy().into_owned(), extra, hint: self.hint })
    }
}

/// Resolves `path` against `base` as the kernel would, following symlinks (dangling ones too) as
/// far as the path exists and applying the rest lexically. After too many links the result is
/// `/proc/self/loop` (never inside a project) so the caller refuses it.
pub fn resolve(base: &Path, path: &std::ffi::OsStr) -> PathBuf {
    let path = Path::new(path);
    let joined = if path.is_absolute() { path.to_path_buf() } else { base.join(path) };
    let mut pending: VecDeque<OsString> = VecDeque::new();
    push_front(&mut pending, &joined);
    let mut cur = PathBuf::from("/");
    let mut links = 0;
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            cur.pop();
            continue;
        }
        let next = cur.join(&part);
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                links += 1;
                let Ok(target) = std::fs::read_link(&next) else { return PathBuf::from("/proc/self/loop") };
                if links > MAX_LINKS {
                    return PathBuf::from("/proc/self/loop");
                }
                if target.is_absolute() {
                    cur = PathBuf::from("/");
                }
                push_front(&mut pending, &target);
            }
            _ => cur = next,
        }
    }
    cur
}

/// Puts a path's parts (`..` kept, `.` and the root dropped) in front of the queue, in order.
fn push_front(queue: &mut VecDeque<OsString>, path: &Path) {
    let parts: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    for p in parts.into_iter().rev() {
        queue.push_front(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, PathBuf, tempfile::TempDir, PathBuf) {
        let p = tempfile::tempdir().unwrap();
        let root = p.path().canonicalize().unwrap();
        let o = tempfile::tempdir().unwrap();
        let outside = o.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/lib.rs"), "x").unwrap();
        std::fs::write(outside.join("secret.txt"), "s").unwrap();
        (p, root, o, outside)
    }

    #[test]
    fn paths_inside_resolve_and_may_be_missing() {
        let (_p, root, _o, _out) = setup();
        let roots = Roots::new(&root, &[], "hint");
        assert_eq!(roots.check("src/lib.rs").unwrap(), root.join("src/lib.rs"));
        assert_eq!(roots.check("src/../src/./new.rs").unwrap(), root.join("src/new.rs"));
        assert_eq!(roots.check(root.join("a/b/c")).unwrap(), root.join("a/b/c"));
        assert_eq!(roots.check(".").unwrap(), root);
    }

    #[test]
    fn escapes_are_refused_the_same_whether_the_target_exists_or_not() {
        let (_p, root, _o, out) = setup();
        symlink(out.join("secret.txt"), root.join("link")).unwrap();
        symlink(out.join("missing.txt"), root.join("dangling")).unwrap();
        symlink(&out, root.join("dir")).unwrap();
        symlink("../..", root.join("src/up")).unwrap();
        let roots = Roots::new(&root, &[], "add it to x.allowed_roots");
        for p in [
            "../x",
            "/etc/passwd",
            "/etc/no-such-file",
            "/proc/self/environ",
            "link",
            "dangling",
            "dir/secret.txt",
            "dir/missing.txt",
            "src/up/etc",
            "missing/../../x",
        ] {
            let err = roots.check(p).unwrap_err();
            assert_eq!(err.to_string(), format!("{p} is outside the project; add it to x.allowed_roots"));
        }
        // `..` after a link applies to the link's target, as the kernel does it.
        symlink(out.join("sub"), root.join("sublink")).unwrap();
        std::fs::create_dir_all(out.join("sub")).unwrap();
        assert!(roots.check("sublink/../secret.txt").is_err());
    }

    #[test]
    fn links_inside_the_project_and_extra_roots_are_allowed() {
        let (_p, root, _o, out) = setup();
        symlink(root.join("src/lib.rs"), root.join("alias.rs")).unwrap();
        let roots = Roots::new(&root, std::slice::from_ref(&out), "hint");
        assert_eq!(roots.check("alias.rs").unwrap(), root.join("src/lib.rs"));
        assert_eq!(roots.check(out.join("secret.txt")).unwrap(), out.join("secret.txt"));
        assert!(roots.check("/etc/passwd").unwrap_err().to_string().contains("and the other allowed directories"));
    }

    #[test]
    fn a_symlink_loop_is_refused() {
        let (_p, root, _o, _out) = setup();
        symlink(root.join("b"), root.join("a")).unwrap();
        symlink(root.join("a"), root.join("b")).unwrap();
        assert!(Roots::new(&root, &[], "h").check("a/x").is_err());
    }
}
