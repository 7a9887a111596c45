//! When each agent's hooks last fired: `refrain hook` touches `<home>/hooks-seen/<agent>-<event>`
//! (the Unix time in seconds) as it starts, so `refrain doctor` can say whether a registered hook
//! actually runs. One small write, no store and no owner needed; any failure is ignored, so the
//! record can never fail or slow a hook.

use super::Agent;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The directory under refrain's home holding the records.
pub const DIR: &str = "hooks-seen";

fn file(home: &Path, agent: Agent, event: &str) -> PathBuf {
    home.join(DIR).join(format!("{}-{event}", agent.arg()))
}

/// Records that the agent's hook for `event` (as the agent names it) fired now. Never fails.
pub fn record(home: &Path, agent: Agent, event: &str) {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let path = file(home, agent, event);
    if std::fs::write(&path, now.to_string()).is_err()
        && let Some(dir) = path.parent()
        && std::fs::create_dir_all(dir).is_ok()
    {
        let _ = std::fs::write(&path, now.to_string());
    }
}

/// When the agent's hook for `event` last fired, if it ever did.
pub fn last(home: &Path, agent: Agent, event: &str) -> Option<SystemTime> {
    let text = std::fs::read_to_string(file(home, agent, event)).ok()?;
    let secs: u64 = text.trim().parse().ok()?;
    UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_hook_reads_back_and_an_unrecorded_one_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("not-yet-created");
        assert!(last(&home, Agent::Codex, "Stop").is_none());
        record(&home, Agent::Codex, "Stop");
        let when = last(&home, Agent::Codex, "Stop").unwrap();
        assert!(when.elapsed().unwrap_or_default() < Duration::from_secs(60));
        assert!(last(&home, Agent::Claude, "Stop").is_none(), "records are per agent");
    }
}
