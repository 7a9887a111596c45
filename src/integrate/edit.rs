//! File edits: compute the new bytes of one config file, show them, write them with a backup.
//!
//! JSON files are re-serialised with two-space indentation (key order kept); TOML files are edited
//! in place with toml_edit. A second install computes no edit, so it changes nothing.

use super::targets::{Agent, Kind, Target};
use super::{Error, Options, cursor_hooks, hook_command, hooks_json, mcp, plugin};
use serde_json::Value;
use std::path::{Path, PathBuf};
use toml_edit::DocumentMut;

/// What an edit does to its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The file did not exist.
    Create,
    /// The file is edited.
    Modify,
    /// The file goes back to its backed-up bytes.
    Restore,
    /// The file held only refrain's entries and is deleted.
    Delete,
}

/// One file's edit.
#[derive(Debug, Clone)]
pub struct FileEdit {
    /// The agent the file belongs to.
    pub agent: Agent,
    /// The file.
    pub path: PathBuf,
    /// What happens to it.
    pub change: Change,
    /// The current bytes (None: absent).
    pub before: Option<Vec<u8>>,
    /// The new bytes (None: delete).
    pub after: Option<Vec<u8>>,
    /// Write `<file>.refrain-backup` with `before` first.
    pub make_backup: bool,
    /// Delete `<file>.refrain-backup` afterwards.
    pub drop_backup: bool,
}

enum Doc {
    Json(Value),
    Toml(DocumentMut),
    Text(String),
}

/// The backup file of a config file.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".refrain-backup");
    PathBuf::from(s)
}

fn read(path: &Path) -> Result<Option<Vec<u8>>, Error> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Io { action: "read", path: path.to_path_buf(), source }),
    }
}

fn parse(target: &Target, bytes: Option<&[u8]>) -> Result<Doc, Error> {
    let text = String::from_utf8_lossy(bytes.unwrap_or_default());
    let bad = |format, message: String| Error::Parse { path: target.path.clone(), format, message };
    match target.kind {
        Kind::Plugin(_) => Ok(Doc::Text(text.into_owned())),
        Kind::McpToml => text.parse::<DocumentMut>().map(Doc::Toml).map_err(|e| bad("TOML", e.to_string())),
        _ if text.trim().is_empty() => Ok(Doc::Json(Value::Object(Default::default()))),
        _ => serde_json::from_str(&text).map(Doc::Json).map_err(|e| bad("JSON", e.to_string())),
    }
}

fn render(doc: &Doc) -> Vec<u8> {
    match doc {
        Doc::Json(v) => {
            let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
            s.push('\n');
            s.into_bytes()
        }
        Doc::Toml(d) => d.to_string().into_bytes(),
        Doc::Text(t) => t.clone().into_bytes(),
    }
}

fn add(target: &Target, doc: &mut Doc, opts: &Options) -> Result<(), Error> {
    let shape = |key| Error::Shape { path: target.path.clone(), key };
    let command = |event: &str| hook_command(&opts.command, target.agent.arg(), event, &opts.env);
    match (&target.kind, doc) {
        (Kind::McpJson(entry), Doc::Json(v)) => mcp::add_json(v, entry).map_err(shape),
        (Kind::McpToml, Doc::Toml(d)) => mcp::add_toml(d, &opts.command, &opts.env).map_err(shape),
        (Kind::Hooks(specs), Doc::Json(v)) => hooks_json::add(v, specs, false, command).map_err(shape),
        (Kind::Settings { server, hooks, millis }, Doc::Json(v)) => {
            mcp::add_json(v, server).map_err(shape)?;
            if hooks.is_empty() {
                return Ok(());
            }
            hooks_json::add(v, hooks, *millis, command).map_err(shape)
        }
        (Kind::Opencode(server), Doc::Json(v)) => mcp::add_json_at(v, mcp::OPENCODE_SERVERS, server).map_err(shape),
        (Kind::CursorHooks(events), Doc::Json(v)) => cursor_hooks::add(v, events, command).map_err(shape),
        (Kind::Plugin(text), Doc::Text(t)) => {
            if !t.trim().is_empty() && !plugin::is_ours(t.as_bytes()) {
                return Err(Error::Foreign { path: target.path.clone() });
            }
            t.clone_from(text);
            Ok(())
        }
        _ => Ok(()),
    }
}

fn remove(target: &Target, doc: &mut Doc) -> bool {
    match (&target.kind, doc) {
        (Kind::McpJson(_), Doc::Json(v)) => mcp::remove_json(v),
        (Kind::McpToml, Doc::Toml(d)) => mcp::remove_toml(d),
        (Kind::Hooks(_), Doc::Json(v)) => hooks_json::remove(v),
        (Kind::Settings { .. }, Doc::Json(v)) => mcp::remove_json(v) | hooks_json::remove(v),
        (Kind::Opencode(_), Doc::Json(v)) => mcp::remove_json_at(v, mcp::OPENCODE_SERVERS),
        (Kind::CursorHooks(_), Doc::Json(v)) => cursor_hooks::remove(v),
        (Kind::Plugin(_), Doc::Text(t)) if plugin::is_ours(t.as_bytes()) => {
            t.clear();
            true
        }
        _ => false,
    }
}

/// The document as compared between the current file and its backup: empty containers refrain
/// may have pruned do not count as a difference.
fn normal(doc: &Doc) -> String {
    match doc {
        Doc::Json(v) => {
            let mut v = v.clone();
            if let Some(o) = v.as_object_mut() {
                for key in [mcp::SERVERS, mcp::OPENCODE_SERVERS, hooks_json::HOOKS] {
                    if o.get(key).is_some_and(|c| c.as_object().is_some_and(|m| m.is_empty())) {
                        o.shift_remove(key);
                    }
                }
            }
            v.to_string()
        }
        Doc::Toml(d) => d.to_string().trim().to_string(),
        Doc::Text(t) => t.clone(),
    }
}

/// The edit that registers refrain in one file, or None when it is already registered.
pub fn install(target: &Target, opts: &Options) -> Result<Option<FileEdit>, Error> {
    let before = read(&target.path)?;
    let mut doc = parse(target, before.as_deref())?;
    let was = normal_exact(&doc);
    add(target, &mut doc, opts)?;
    if normal_exact(&doc) == was && before.is_some() {
        return Ok(None);
    }
    let whole_file = matches!(target.kind, Kind::Plugin(_));
    let make_backup = before.is_some() && !whole_file && !backup_path(&target.path).exists();
    let change = if before.is_some() { Change::Modify } else { Change::Create };
    Ok(Some(FileEdit {
        agent: target.agent,
        path: target.path.clone(),
        change,
        before,
        after: Some(render(&doc)),
        make_backup,
        drop_backup: false,
    }))
}

fn normal_exact(doc: &Doc) -> String {
    match doc {
        Doc::Json(v) => v.to_string(),
        Doc::Toml(d) => d.to_string(),
        Doc::Text(t) => t.clone(),
    }
}

/// The edit that removes refrain from one file, or None when the file holds nothing of refrain's.
pub fn uninstall(target: &Target) -> Result<Option<FileEdit>, Error> {
    let Some(before) = read(&target.path)? else { return Ok(None) };
    let mut doc = parse(target, Some(&before))?;
    if !remove(target, &mut doc) {
        return Ok(None);
    }
    let backup_file = backup_path(&target.path);
    let backup = read(&backup_file)?;
    let restored = backup.as_ref().and_then(|b| {
        let mut bdoc = parse(target, Some(b)).ok()?;
        remove(target, &mut bdoc);
        (normal(&bdoc) == normal(&doc)).then(|| b.clone())
    });
    let empty = normal(&doc) == normal(&parse(target, None)?);
    let (change, after) = match restored {
        Some(bytes) => (Change::Restore, Some(bytes)),
        None if backup.is_none() && empty => (Change::Delete, None),
        None => (Change::Modify, Some(render(&doc))),
    };
    Ok(Some(FileEdit {
        agent: target.agent,
        path: target.path.clone(),
        change,
        before: Some(before),
        after,
        make_backup: false,
        drop_backup: backup.is_some(),
    }))
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> Error + 'a {
    move |source| Error::Io { action, path: path.to_path_buf(), source }
}

/// Writes the edits: backup first, then an atomic replace (temp file + rename) or a delete.
pub fn apply(edits: &[FileEdit]) -> Result<(), Error> {
    for e in edits {
        let backup = backup_path(&e.path);
        if let (true, Some(before), false) = (e.make_backup, &e.before, backup.exists()) {
            std::fs::write(&backup, before).map_err(io("back up", &backup))?;
        }
        match &e.after {
            Some(bytes) => write_atomic(&e.path, bytes).map_err(io("write", &e.path))?,
            // Directories stay: refrain cannot tell whether it created them.
            None => std::fs::remove_file(&e.path).map_err(io("delete", &e.path))?,
        }
        if e.drop_backup && backup.exists() {
            std::fs::remove_file(&backup).map_err(io("delete", &backup))?;
        }
    }
    Ok(())
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".refrain-tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes)?;
    if let Ok(meta) = std::fs::metadata(path) {
        std::fs::set_permissions(&tmp, meta.permissions())?;
    }
    std::fs::rename(&tmp, path)
}
