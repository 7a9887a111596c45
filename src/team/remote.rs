//! Which team project a checkout is: its git remote URL, normalised, so two clones of one
//! repository on two machines (under any path, by SSH or HTTPS) are the same project, and two
//! repositories never are.
//!
//! The remote is read from the repository's own config file as text; no git command runs.

use std::path::{Path, PathBuf};

/// The normalised URL of the checkout's `origin` remote (else its first remote), or None when
/// the directory is not a git checkout with a remote.
pub fn project_of(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(config_file(root)?).ok()?;
    remote_url(&text).map(|u| normalise(&u)).filter(|u| !u.is_empty())
}

/// The repository's config file: `.git/config`, or for a linked worktree (`.git` is a file naming
/// the git dir) the config of the repository it belongs to.
fn config_file(root: &Path) -> Option<PathBuf> {
    let dot = root.join(".git");
    if dot.is_dir() {
        return Some(dot.join("config"));
    }
    let text = std::fs::read_to_string(&dot).ok()?;
    let gitdir = root.join(text.trim().strip_prefix("gitdir:")?.trim());
    let common = match std::fs::read_to_string(gitdir.join("commondir")) {
        Ok(c) => gitdir.join(c.trim()),
        Err(_) => gitdir,
    };
    Some(common.join("config"))
}

/// The `url` of `[remote "origin"]`, else of the first remote section, in a git config file.
fn remote_url(config: &str) -> Option<String> {
    let mut section = String::new();
    let mut first = None;
    for line in config.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line.trim_matches(|c| c == '[' || c == ']').to_string();
            continue;
        }
        let Some((k, v)) = line.split_once('=') else { continue };
        if k.trim() != "url" || !section.starts_with("remote ") {
            continue;
        }
        let url = v.trim().trim_matches('"').to_string();
        if section == "remote \"origin\"" {
            return Some(url);
        }
        first.get_or_insert(url);
    }
    first
}

/// `git@github.com:Org/Repo.git`, `https://user:token@github.com/org/repo/` and
/// `ssh://git@github.com:22/org/repo` are all `github.com/org/repo`: no scheme, credentials, port,
/// `.git` suffix or trailing slash, lowercase.
pub fn normalise(url: &str) -> String {
    let url = url.trim();
    let (rest, scp) = match url.split_once("://") {
        Some((_, rest)) => (rest, false),
        None => (url, true),
    };
    let rest = match rest.split_once('/') {
        Some((authority, _)) if authority.contains('@') => &rest[authority.rfind('@').map_or(0, |i| i + 1)..],
        None if rest.contains('@') => &rest[rest.rfind('@').map_or(0, |i| i + 1)..],
        _ => rest,
    };
    let rest = if scp && !rest.starts_with('/') {
        // scp-like `host:path` (but not a Windows-free local path).
        rest.replacen(':', "/", 1)
    } else {
        rest.to_string()
    };
    let (host, path) = rest.split_once('/').unwrap_or((rest.as_str(), ""));
    let host = host.split(':').next().unwrap_or(host);
    let path: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let joined = if host.is_empty() { path.join("/") } else { format!("{host}/{}", path.join("/")) };
    let joined = joined.trim_end_matches('/').to_lowercase();
    joined.strip_suffix(".git").map(str::to_string).unwrap_or(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_repository_by_any_url_is_one_project() {
        for url in [
            "git@github.com:Acme/Billing.git",
            "https://github.com/acme/billing",
            "https://alice:ghp_secret@github.com/acme/billing.git/",
            "ssh://git@github.com:22/acme/billing.git",
            "git://github.com/acme/billing",
        ] {
            assert_eq!(normalise(url), "github.com/acme/billing", "{url}");
        }
        assert_ne!(normalise("git@github.com:acme/billing.git"), normalise("git@github.com:acme/payments.git"));
        assert!(!normalise("https://alice:ghp_secret@github.com/acme/billing").contains("secret"));
    }

    #[test]
    fn origin_wins_and_a_checkout_without_a_remote_has_no_project() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(project_of(dir.path()), None);
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/config"), "[core]\n\tbare = false\n").unwrap();
        assert_eq!(project_of(dir.path()), None);
        std::fs::write(
            dir.path().join(".git/config"),
            "[remote \"fork\"]\n\turl = git@github.com:me/billing.git\n[remote \"origin\"]\n\turl = https://github.com/Acme/Billing.git\n",
        )
        .unwrap();
        assert_eq!(project_of(dir.path()).as_deref(), Some("github.com/acme/billing"));
    }
}
