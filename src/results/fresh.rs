//! Freshness: what a cached result depends on, captured at put time and re-checked at get time.
//!
//! A file is recorded with its size, mtime and content hash; a re-check compares size and mtime
//! first (one `stat`) and hashes the content only when they differ, so an entry depending on many
//! unchanged files costs one `stat` each. A file modified within `RACY_NS` of its capture is
//! "racy" (as git calls it): a later same-size edit inside the same timestamp tick would keep its
//! mtime, so racy files are always re-hashed. A directory tree (for glob/grep-like results) is recorded
//! as a digest of every file's path, size and mtime; the git HEAD as its commit id.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Component, Path, PathBuf};
use std::time::UNIX_EPOCH;

/// Directories a tree walk skips: version control data and build output.
const SKIP_DIRS: &[&str] = &[".git", "target", "node_modules", ".hg", ".svn"];
/// A file modified this close to its capture is always re-hashed (covers coarse timestamps).
pub const RACY_NS: u64 = 2_000_000_000;
/// A tree larger than this is refused (list the files instead).
pub const MAX_TREE_FILES: usize = 50_000;

/// One thing a cached result depends on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Dep {
    /// A file: absent, or present with this size, mtime and sha256.
    File {
        /// Absolute path.
        path: String,
        /// Whether it existed at put time.
        exists: bool,
        /// Size in bytes.
        size: u64,
        /// Modification time, nanoseconds since the epoch.
        mtime_ns: u64,
        /// Hex sha256 of the content.
        sha256: String,
        /// When it was captured, nanoseconds since the epoch (0 in entries from before this field).
        #[serde(default)]
        captured_ns: u64,
    },
    /// Every file under a directory (paths, sizes, mtimes).
    Tree {
        /// Absolute path of the directory.
        path: String,
        /// Files under it.
        files: u64,
        /// Hex sha256 over the sorted (relative path, size, mtime) list.
        digest: String,
    },
    /// The commit the repository's HEAD pointed at.
    GitHead {
        /// Absolute path of the repository root.
        root: String,
        /// The commit id (or the unresolved ref text).
        commit: String,
    },
}

impl Dep {
    /// The path this dependency watches (the repository root for `GitHead`).
    pub fn path(&self) -> &str {
        match self {
            Dep::File { path, .. } | Dep::Tree { path, .. } => path,
            Dep::GitHead { root, .. } => root,
        }
    }
}

/// What a re-check looked at.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Checked {
    /// Files whose size and mtime were compared.
    pub files_statted: u32,
    /// Files whose content was hashed because size or mtime differed.
    pub files_hashed: u32,
    /// Directory trees walked.
    pub trees_walked: u32,
    /// Whether the git HEAD was compared.
    pub git_head: bool,
}

/// Resolves a path against the project root and removes `.`/`..` without touching the disk,
/// then canonicalises it when it exists (so symlinked spellings agree).
pub fn resolve(root: &Path, p: &str) -> PathBuf {
    let joined = if Path::new(p).is_absolute() { PathBuf::from(p) } else { root.join(p) };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out.canonicalize().unwrap_or(out)
}

/// The path shown to people: relative to the project root when inside it.
pub fn display(root: &Path, path: &str) -> String {
    match Path::new(path).strip_prefix(root) {
        Ok(p) if p.as_os_str().is_empty() => ".".into(),
        Ok(p) => p.display().to_string(),
        Err(_) => path.to_string(),
    }
}

fn mtime_ns(meta: &std::fs::Metadata) -> u64 {
    meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

fn now_ns() -> u64 {
    std::time::SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

fn hash_file(path: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    Ok(hex::encode(Sha256::digest(&bytes)))
}

/// Records a file as it is now.
pub fn capture_file(path: &Path) -> std::io::Result<Dep> {
    let p = path.display().to_string();
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(Dep::File {
            path: p,
            exists: true,
            size: meta.len(),
            mtime_ns: mtime_ns(&meta),
            sha256: hash_file(path)?,
            captured_ns: now_ns(),
        }),
        Ok(meta) if meta.is_dir() => {
            Err(std::io::Error::other(format!("{p} is a directory; pass it in trees instead")))
        }
        Ok(meta) => Err(std::io::Error::other(format!(
            "{p} is {}, not a regular file; list only files whose content the result depends on",
            not_a_file(&meta.file_type())
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(Dep::File { path: p, exists: false, size: 0, mtime_ns: 0, sha256: String::new(), captured_ns: now_ns() })
        }
        Err(e) => Err(e),
    }
}

/// What a path that is neither a regular file nor a directory is, in words.
fn not_a_file(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else {
        "not a file"
    }
}

/// Records a directory tree as it is now.
pub fn capture_tree(path: &Path) -> std::io::Result<Dep> {
    let (files, digest) = tree_digest(path)?;
    Ok(Dep::Tree { path: path.display().to_string(), files, digest })
}

/// Records the git HEAD of the repository at `root`.
pub fn capture_git_head(root: &Path) -> std::io::Result<Dep> {
    Ok(Dep::GitHead { root: root.display().to_string(), commit: git_head(root)? })
}

fn tree_digest(dir: &Path) -> std::io::Result<(u64, String)> {
    let mut rows: Vec<(String, u64, u64)> = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let name = entry.file_name();
            let ft = entry.file_type()?;
            if ft.is_dir() {
                if !SKIP_DIRS.iter().any(|s| name == *s) {
                    stack.push(entry.path());
                }
                continue;
            }
            let meta = entry.metadata()?;
            let rel = entry.path().strip_prefix(dir).map(|p| p.display().to_string()).unwrap_or_default();
            rows.push((rel, meta.len(), mtime_ns(&meta)));
            if rows.len() > MAX_TREE_FILES {
                return Err(std::io::Error::other(format!(
                    "{} holds more than {MAX_TREE_FILES} files; list the files the result depends on instead",
                    dir.display()
                )));
            }
        }
    }
    rows.sort();
    let mut h = Sha256::new();
    for (rel, size, mtime) in &rows {
        h.update(rel.as_bytes());
        h.update([0]);
        h.update(size.to_be_bytes());
        h.update(mtime.to_be_bytes());
    }
    Ok((rows.len() as u64, hex::encode(h.finalize())))
}

/// The commit HEAD points at, read from the files (no git process).
pub fn git_head(root: &Path) -> std::io::Result<String> {
    let dot = root.join(".git");
    let git_dir = if dot.is_file() {
        let text = std::fs::read_to_string(&dot)?;
        let rel = text.trim().strip_prefix("gitdir:").map(str::trim).unwrap_or_default().to_string();
        root.join(rel)
    } else {
        dot
    };
    let head = std::fs::read_to_string(git_dir.join("HEAD"))?;
    let Some(reference) = head.trim().strip_prefix("ref:").map(str::trim) else { return Ok(head.trim().to_string()) };
    let common = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(c) => git_dir.join(c.trim()),
        Err(_) => git_dir.clone(),
    };
    for dir in [&git_dir, &common] {
        if let Ok(id) = std::fs::read_to_string(dir.join(reference)) {
            return Ok(id.trim().to_string());
        }
    }
    if let Ok(packed) = std::fs::read_to_string(common.join("packed-refs")) {
        for line in packed.lines() {
            if let Some((id, name)) = line.split_once(' ')
                && name == reference
            {
                return Ok(id.to_string());
            }
        }
    }
    // An unborn branch: the ref text itself is the state.
    Ok(format!("ref:{reference}"))
}

/// Re-checks every dependency. `Err` carries the first change found, in words.
pub fn check(deps: &[Dep], root: &Path, checked: &mut Checked) -> Result<(), String> {
    for dep in deps {
        match dep {
            Dep::File { path, exists, size, mtime_ns: mt, sha256, captured_ns } => {
                checked.files_statted += 1;
                let shown = display(root, path);
                match (std::fs::metadata(path), exists) {
                    (Err(_), false) => {}
                    (Err(_), true) => return Err(format!("{shown} was deleted since this result was stored")),
                    (Ok(_), false) => return Err(format!("{shown} was created since this result was stored")),
                    // Never opened: reading a FIFO put in a file's place would wait for a writer.
                    (Ok(meta), true) if !meta.is_file() => {
                        let what = if meta.is_dir() { "a directory" } else { not_a_file(&meta.file_type()) };
                        return Err(format!("{shown} is now {what}, no longer the file this result was stored with"));
                    }
                    (Ok(meta), true) => {
                        let racy = mt.saturating_add(RACY_NS) > *captured_ns && *captured_ns > 0;
                        if meta.len() == *size && mtime_ns(&meta) == *mt && !racy {
                            continue;
                        }
                        checked.files_hashed += 1;
                        if meta.len() != *size || hash_file(Path::new(path)).ok().as_deref() != Some(sha256.as_str()) {
                            return Err(format!("{shown} changed since this result was stored"));
                        }
                    }
                }
            }
            Dep::Tree { path, digest, .. } => {
                checked.trees_walked += 1;
                let shown = display(root, path);
                match tree_digest(Path::new(path)) {
                    Ok((_, now)) if &now == digest => {}
                    Ok(_) => {
                        return Err(format!(
                            "a file under {shown} was added, removed or changed since this result was stored"
                        ));
                    }
                    Err(e) => return Err(format!("{shown} can no longer be read ({e})")),
                }
            }
            Dep::GitHead { root: repo, commit } => {
                checked.git_head = true;
                match git_head(Path::new(repo)) {
                    Ok(now) if &now == commit => {}
                    Ok(now) => {
                        return Err(format!(
                            "git HEAD moved from {} to {} since this result was stored",
                            short(commit),
                            short(&now)
                        ));
                    }
                    Err(e) => return Err(format!("git HEAD can no longer be read ({e})")),
                }
            }
        }
    }
    Ok(())
}

fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes a file whose mtime is an hour old (not racy).
    fn write_old(f: &Path, text: &str) {
        std::fs::write(f, text).unwrap();
        let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options().write(true).open(f).unwrap().set_modified(hour_ago).unwrap();
    }

    #[test]
    fn unchanged_files_are_fresh_and_only_statted() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.rs");
        write_old(&f, "one");
        let deps = vec![capture_file(&f).unwrap()];
        let mut c = Checked::default();
        assert_eq!(check(&deps, dir.path(), &mut c), Ok(()));
        assert_eq!((c.files_statted, c.files_hashed), (1, 0));
    }

    #[test]
    fn an_edit_is_stale_with_the_file_named() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("src").join("lib.rs");
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(&f, "one").unwrap();
        let deps = vec![capture_file(&f).unwrap()];
        std::fs::write(&f, "two").unwrap();
        let err = check(&deps, dir.path(), &mut Checked::default()).unwrap_err();
        assert_eq!(err, "src/lib.rs changed since this result was stored");
    }

    #[test]
    fn a_same_size_edit_keeping_the_mtime_of_a_just_written_file_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.rs");
        std::fs::write(&f, "one").unwrap();
        let deps = vec![capture_file(&f).unwrap()];
        let Dep::File { mtime_ns, .. } = &deps[0] else { panic!("a file dep") };
        let kept = UNIX_EPOCH + std::time::Duration::from_nanos(*mtime_ns);
        std::fs::write(&f, "two").unwrap();
        std::fs::File::options().write(true).open(&f).unwrap().set_modified(kept).unwrap();
        let mut c = Checked::default();
        assert_eq!(check(&deps, dir.path(), &mut c), Err("a.rs changed since this result was stored".into()));
        assert_eq!(c.files_hashed, 1);
    }

    #[test]
    fn a_touch_without_change_stays_fresh_after_hashing() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.txt");
        std::fs::write(&f, "same").unwrap();
        let mut deps = vec![capture_file(&f).unwrap()];
        if let Dep::File { mtime_ns, .. } = &mut deps[0] {
            *mtime_ns -= 1;
        }
        let mut c = Checked::default();
        assert_eq!(check(&deps, dir.path(), &mut c), Ok(()));
        assert_eq!(c.files_hashed, 1);
    }

    #[test]
    fn absent_files_and_trees_notice_creation() {
        let dir = tempfile::tempdir().unwrap();
        let missing = capture_file(&dir.path().join("new.rs")).unwrap();
        let tree = capture_tree(dir.path()).unwrap();
        std::fs::write(dir.path().join("new.rs"), "x").unwrap();
        assert!(check(&[missing], dir.path(), &mut Checked::default()).unwrap_err().contains("new.rs was created"));
        assert!(check(&[tree], dir.path(), &mut Checked::default()).unwrap_err().contains("added, removed or changed"));
    }

    fn mkfifo(p: &Path) {
        assert!(std::process::Command::new("mkfifo").arg(p).status().unwrap().success());
    }

    #[test]
    fn special_files_are_named_for_what_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        mkfifo(&fifo);
        let _socket = std::os::unix::net::UnixListener::bind(dir.path().join("sock")).unwrap();
        for (name, what) in [
            ("pipe", "is a FIFO, not a regular file"),
            ("sock", "is a socket, not a regular file"),
            ("", "is a directory"),
        ] {
            let err = capture_file(&dir.path().join(name)).unwrap_err().to_string();
            assert!(err.contains(what), "{name}: {err}");
        }
        let err = capture_file(Path::new("/dev/null")).unwrap_err().to_string();
        assert!(err.contains("is a character device, not a regular file"), "{err}");
    }

    #[test]
    fn a_file_replaced_by_a_fifo_is_stale_without_opening_it() {
        // An empty file and a FIFO both have length 0: reading the FIFO would wait for a writer.
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("empty.rs");
        write_old(&f, "");
        let deps = vec![capture_file(&f).unwrap()];
        std::fs::remove_file(&f).unwrap();
        mkfifo(&f);
        let err = check(&deps, dir.path(), &mut Checked::default()).unwrap_err();
        assert_eq!(err, "empty.rs is now a FIFO, no longer the file this result was stored with");
    }

    #[test]
    fn git_head_is_read_from_files() {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path().join(".git");
        std::fs::create_dir_all(git.join("refs/heads")).unwrap();
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(git.join("refs/heads/main"), "aaaaaaaaaaaaaaaa\n").unwrap();
        let dep = capture_git_head(dir.path()).unwrap();
        assert_eq!(check(std::slice::from_ref(&dep), dir.path(), &mut Checked::default()), Ok(()));
        std::fs::write(git.join("refs/heads/main"), "bbbbbbbbbbbbbbbb\n").unwrap();
        assert!(check(&[dep], dir.path(), &mut Checked::default()).unwrap_err().contains("git HEAD moved"));
    }

    #[test]
    fn paths_resolve_lexically_against_the_root() {
        let root = Path::new("/nonexistent/proj");
        assert_eq!(resolve(root, "src/../src/./lib.rs"), PathBuf::from("/nonexistent/proj/src/lib.rs"));
        assert_eq!(resolve(root, "/nonexistent/../nonexistent2/x"), PathBuf::from("/nonexistent2/x"));
    }

    #[test]
    fn a_hundred_unchanged_files_cost_one_stat_each() {
        let dir = tempfile::tempdir().unwrap();
        let deps: Vec<Dep> = (0..100)
            .map(|i| {
                let f = dir.path().join(format!("f{i}.rs"));
                write_old(&f, &format!("content {i}"));
                capture_file(&f).unwrap()
            })
            .collect();
        let mut c = Checked::default();
        check(&deps, dir.path(), &mut c).unwrap();
        assert_eq!((c.files_statted, c.files_hashed), (100, 0));
    }
}
