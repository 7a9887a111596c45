//! Where the agents keep their history, and the files in it: Claude Code's session files under
//! `<config dir>/projects/` (`CLAUDE_CONFIG_DIR`, else `~/.claude`) and Codex's rollouts under
//! `<codex home>/sessions/` (`CODEX_HOME`, else `~/.codex`).
//!
//! Only lists files (name, size, modification time); never follows symlinks out of the roots.

use super::model::AgentKind;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// The history roots to read.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    /// Claude Code's `projects` directory.
    pub claude: Option<PathBuf>,
    /// Codex's `sessions` directory.
    pub codex: Option<PathBuf>,
}

impl Roots {
    /// The agents' default locations for the user's home directory, honouring the agents' own
    /// `CLAUDE_CONFIG_DIR` and `CODEX_HOME` (passed in by the caller).
    pub fn defaults(home: &Path, claude_config: Option<PathBuf>, codex_home: Option<PathBuf>) -> Roots {
        let claude = claude_config.unwrap_or_else(|| home.join(".claude")).join("projects");
        let codex = codex_home.unwrap_or_else(|| home.join(".codex")).join("sessions");
        Roots { claude: Some(claude), codex: Some(codex) }
    }
}

/// One history file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HistoryFile {
    /// Its path.
    pub path: PathBuf,
    /// Which agent wrote it.
    pub agent: AgentKind,
    /// Bytes.
    pub size: u64,
    /// Last modification, ms since the epoch.
    pub mtime_ms: i64,
}

/// Every history file under the roots, biggest first (so parallel readers finish together).
/// `modified_since_ms` skips files not touched since then; `agent` keeps one agent's files.
pub fn discover(roots: &Roots, modified_since_ms: Option<i64>, agent: Option<AgentKind>) -> Vec<HistoryFile> {
    let mut out = Vec::new();
    if agent.is_none_or(|a| a == AgentKind::ClaudeCode)
        && let Some(dir) = &roots.claude
    {
        walk(dir, 0, &mut |p| p.extension().is_some_and(|x| x == "jsonl"), AgentKind::ClaudeCode, &mut out);
    }
    if agent.is_none_or(|a| a == AgentKind::Codex)
        && let Some(dir) = &roots.codex
    {
        let mut rollout = |p: &Path| {
            p.extension().is_some_and(|x| x == "jsonl")
                && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("rollout-"))
        };
        walk(dir, 0, &mut rollout, AgentKind::Codex, &mut out);
    }
    if let Some(since) = modified_since_ms {
        out.retain(|f| f.mtime_ms >= since);
    }
    out.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| a.path.cmp(&b.path)));
    out
}

/// Directory depth the walk goes to (Codex nests sessions by year/month/day).
const MAX_DEPTH: usize = 8;

fn walk(dir: &Path, depth: usize, keep: &mut dyn FnMut(&Path) -> bool, agent: AgentKind, out: &mut Vec<HistoryFile>) {
    if depth > MAX_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let Ok(ft) = e.file_type() else { continue };
        let path = e.path();
        if ft.is_dir() {
            walk(&path, depth + 1, keep, agent, out);
        } else if ft.is_file() && keep(&path) {
            let Ok(meta) = e.metadata() else { continue };
            let mtime_ms = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0);
            out.push(HistoryFile { path, agent, size: meta.len(), mtime_ms });
        }
    }
}

/// The project a working directory belongs to: its git root when the directory still exists,
/// else the directory as recorded.
pub fn project_of(cwd: &str) -> String {
    let p = Path::new(cwd);
    match p.canonicalize() {
        Ok(c) => c.ancestors().find(|d| d.join(".git").exists()).unwrap_or(&c).to_string_lossy().into_owned(),
        Err(_) => cwd.trim_end_matches('/').to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_session_files_and_rollouts_are_listed_biggest_first() {
        let d = tempfile::tempdir().unwrap();
        let claude = d.path().join("claude/projects/-tmp-x");
        let codex = d.path().join("codex/sessions/2026/01/02");
        std::fs::create_dir_all(&claude).unwrap();
        std::fs::create_dir_all(&codex).unwrap();
        std::fs::write(claude.join("a.jsonl"), "{}\n").unwrap();
        std::fs::write(claude.join("b.jsonl"), "{}\n{}\n").unwrap();
        std::fs::write(claude.join("notes.txt"), "x").unwrap();
        std::fs::write(codex.join("rollout-1.jsonl"), "{}\n").unwrap();
        std::fs::write(codex.join("other.jsonl"), "{}\n").unwrap();
        let roots =
            Roots { claude: Some(d.path().join("claude/projects")), codex: Some(d.path().join("codex/sessions")) };
        let files = discover(&roots, None, None);
        let names: Vec<_> = files.iter().map(|f| f.path.file_name().unwrap().to_str().unwrap()).collect();
        assert_eq!(names, ["b.jsonl", "a.jsonl", "rollout-1.jsonl"]);
        assert_eq!(discover(&roots, None, Some(AgentKind::Codex)).len(), 1);
        assert!(discover(&roots, Some(i64::MAX), None).is_empty());
    }
}
