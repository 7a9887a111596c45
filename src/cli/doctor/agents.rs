//! The checks per agent found on this machine: refrain registered (its MCP entry runs this
//! binary, its hooks are in place), its hooks seen firing, and what the agent needs from the user.

use super::{Check, ago};
use crate::cli::GlobalArgs;
use crate::hooks::seen;
use crate::integrate::{self, Agent, FileState, Options, Scope, codex_trust};
use std::path::{Path, PathBuf};

/// What every agent check needs.
struct Machine {
    /// The user's home directory.
    home: PathBuf,
    /// refrain's home, where the hooks record when they fired.
    refrain_home: PathBuf,
    /// The project the checks are about.
    project: PathBuf,
    /// This binary.
    exe: PathBuf,
    /// The settings `refrain install` records (REFRAIN_HOME, REFRAIN_MODEL_DIR) as given now.
    env: Vec<(String, String)>,
}

/// The checks for every agent present on this machine.
pub fn checks(global: &GlobalArgs, project: &Path, refrain_home: &Path) -> anyhow::Result<Vec<Check>> {
    let home = directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf()).ok_or(integrate::Error::NoHome)?;
    let exe = std::env::current_exe()?.canonicalize()?;
    let env = crate::cli::install::recorded_env(global)?;
    let m = Machine { home, refrain_home: refrain_home.to_path_buf(), project: project.to_path_buf(), exe, env };
    let mut out = Vec::new();
    let found: Vec<Agent> = Agent::ALL.into_iter().filter(|&a| integrate::present(a, &m.home)).collect();
    if found.is_empty() {
        let what = "no agent found (looked for ~/.claude, ~/.codex, ~/.gemini, ~/.qwen, ~/.config/opencode, \
                    ~/.cursor and their binaries)";
        out.push(Check::warn("agents", what, Some("install an agent, then refrain install".into())));
    }
    for agent in found {
        out.extend(agent_checks(&m, agent));
    }
    Ok(out)
}

/// True when `command` runs this very binary.
fn runs_this(command: &str, exe: &Path) -> bool {
    std::fs::canonicalize(command).is_ok_and(|p| p == exe)
}

fn options(m: &Machine, scope: Scope, command: String) -> Options {
    Options {
        scope,
        only: None,
        hooks: true,
        command,
        project: m.project.clone(),
        home: m.home.clone(),
        env: m.env.clone(),
    }
}

/// The scope refrain is registered in for `agent` (the user's files unless only the project's
/// have an entry), its files, and the command install would write there.
fn registration(m: &Machine, agent: Agent) -> Result<(Scope, Vec<FileState>), integrate::Error> {
    let exe = m.exe.to_string_lossy().into_owned();
    let mut first = None;
    for scope in [Scope::User, Scope::Project] {
        let files = integrate::registration(agent, &options(m, scope, exe.clone()))?;
        let Some(command) = files.iter().find_map(|f| f.command.clone()) else {
            first.get_or_insert((scope, files));
            continue;
        };
        // Compared with what install writes for the command already there when it is this binary
        // (install.sh writes the path it installed to, which may be a link to it).
        if runs_this(&command, &m.exe) && command != exe {
            return Ok((scope, integrate::registration(agent, &options(m, scope, command))?));
        }
        return Ok((scope, files));
    }
    Ok(first.unwrap_or((Scope::User, Vec::new())))
}

fn agent_checks(m: &Machine, agent: Agent) -> Vec<Check> {
    let area = agent.arg();
    let scope_flag = |scope| if scope == Scope::Project { " --scope project" } else { "" };
    let (scope, files) = match registration(m, agent) {
        Ok(r) => r,
        Err(e) => return vec![Check::problem(area, e.to_string(), format!("refrain install --only {area}"))],
    };
    let fix = format!("refrain install --only {area}{}", scope_flag(scope));
    let mut out = Vec::new();
    for f in &files {
        let path = f.path.display();
        let check = match (&f.command, f.mcp) {
            (None, true) => Check::problem(area, format!("no refrain MCP server entry in {path}"), fix.clone()),
            (Some(c), true) if !runs_this(c, &m.exe) => Check::problem(
                area,
                format!("{path}: refrain's MCP entry runs {c}, not this binary ({})", m.exe.display()),
                fix.clone(),
            ),
            _ if !f.current => Check::problem(
                area,
                format!("{path}: refrain's {} missing or not what refrain install writes{}", f.holds, settings(m)),
                fix.clone(),
            ),
            _ => Check::ok(area, format!("{} in {path}", f.holds)),
        };
        out.push(check);
    }
    out.push(fired(m, agent));
    match agent {
        Agent::Codex => out.extend(codex_needs(m, scope)),
        Agent::Claude if scope == Scope::Project => out.push(claude_approval(m)),
        _ => {}
    }
    out
}

/// The settings install records, as given to this command (they are part of what it writes).
fn settings(m: &Machine) -> String {
    if m.env.is_empty() {
        return String::new();
    }
    let set: Vec<String> = m.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(" with {}", set.join(", "))
}

/// The agent's name as its users know it.
fn label(agent: Agent) -> &'static str {
    match agent {
        Agent::Claude => "Claude Code",
        Agent::Codex => "Codex",
        Agent::Gemini => "Gemini CLI",
        Agent::Qwen => "Qwen Code",
        Agent::Opencode => "opencode",
        Agent::Cursor => "Cursor",
    }
}

/// When each of the agent's hooks last fired.
fn fired(m: &Machine, agent: Agent) -> Check {
    let area = agent.arg();
    let events = integrate::hook_events(agent);
    let seen: Vec<(&str, std::time::SystemTime)> =
        events.iter().filter_map(|e| seen::last(&m.refrain_home, agent, e).map(|t| (*e, t))).collect();
    let never: Vec<&str> = events.iter().copied().filter(|e| !seen.iter().any(|(s, _)| s == e)).collect();
    let prompt = integrate::prompt_event(agent);
    if seen.is_empty() {
        let what = format!("no hook of refrain's has fired yet in {}", label(agent));
        return Check::warn(
            area,
            what,
            Some(format!("start a session in {}, then refrain doctor again", label(agent))),
        );
    }
    let mut what =
        format!("hooks fired: {}", seen.iter().map(|(e, t)| format!("{e} {}", ago(*t))).collect::<Vec<_>>().join(", "));
    if !never.is_empty() {
        what.push_str(&format!("; not yet: {}", never.join(", ")));
    }
    if never.contains(&prompt) {
        let what = format!("{what} ({prompt}, which every prompt fires, never has)");
        return Check::warn(area, what, Some(format!("refrain install --only {area}")));
    }
    Check::ok(area, what)
}

/// Codex runs hooks only once trusted, and project files only in a trusted project.
fn codex_needs(m: &Machine, scope: Scope) -> Vec<Check> {
    let user = integrate::codex_dir(&m.home);
    let config = user.join("config.toml");
    let dir = if scope == Scope::Project { m.project.join(".codex") } else { user.clone() };
    let mut out = Vec::new();
    if scope == Scope::Project && !codex_trusts_project(&config, &m.project) {
        let what = format!("Codex reads {} only in a project you trust", dir.display());
        let fix = format!("run codex in {} and trust the project when it asks", m.project.display());
        out.push(Check::problem("codex", what, fix));
    }
    let Some(trust) = codex_trust::check(&dir.join("hooks.json"), &config) else { return out };
    let file = trust.file.display();
    if !trust.untrusted.is_empty() {
        let what = format!(
            "Codex runs none of refrain's hooks in {file} until you trust them; untrusted: {}",
            trust.untrusted.join(", ")
        );
        let fix = "codex, then choose \"Trust all and continue\" when it shows \"Hooks need review\" (or type /hooks)";
        out.push(Check::problem("codex", what, fix));
    } else if trust.disabled.is_empty() {
        out.push(Check::ok("codex", format!("Codex trusts refrain's hooks in {file}")));
    }
    if !trust.disabled.is_empty() {
        let what = format!("you turned off refrain's hooks in Codex: {}", trust.disabled.join(", "));
        out.push(Check::warn("codex", what, Some("codex, then /hooks to turn them on".into())));
    }
    out
}

fn codex_trusts_project(config: &Path, project: &Path) -> bool {
    let Some(doc) = std::fs::read_to_string(config).ok().and_then(|t| toml::from_str::<toml::Table>(&t).ok()) else {
        return false;
    };
    let entry = doc.get("projects").and_then(|p| p.get(&*project.to_string_lossy()));
    entry.and_then(|e| e.get("trust_level")).and_then(toml::Value::as_str) == Some("trusted")
}

/// Claude Code starts a project's `.mcp.json` servers only once the user approved them: it keeps
/// the answer in the project's `.claude/settings.local.json` (`enabledMcpjsonServers`,
/// `disabledMcpjsonServers`, `enableAllProjectMcpServers`), which any settings file may also
/// set; older versions kept it under the project in `~/.claude.json`.
fn claude_approval(m: &Machine) -> Check {
    let config_dir = std::env::var_os("CLAUDE_CONFIG_DIR").map(PathBuf::from);
    let state_file = config_dir.as_ref().map_or_else(|| m.home.join(".claude.json"), |d| d.join(".claude.json"));
    let user_settings = config_dir.unwrap_or_else(|| m.home.join(".claude")).join("settings.json");
    let read = |path: &Path| -> serde_json::Value {
        std::fs::read_to_string(path).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
    };
    let state = read(&state_file);
    let sources = [
        read(&m.project.join(".claude/settings.local.json")),
        read(&m.project.join(".claude/settings.json")),
        read(&user_settings),
        state["projects"][&*m.project.to_string_lossy()].clone(),
    ];
    let listed =
        |key: &str| sources.iter().any(|s| s[key].as_array().is_some_and(|a| a.iter().any(|v| v == "refrain")));
    if listed("disabledMcpjsonServers") {
        let what = "you declined refrain's server in this project's .mcp.json";
        return Check::problem(
            "claude",
            what,
            "claude mcp reset-project-choices, then approve refrain on the next start",
        );
    }
    if listed("enabledMcpjsonServers") || sources.iter().any(|s| s["enableAllProjectMcpServers"] == true) {
        return Check::ok("claude", "you approved refrain's server in this project's .mcp.json");
    }
    let what = "Claude Code asks you to approve refrain's server in this project's .mcp.json on its next start";
    Check::warn("claude", what, Some("claude (in this project), then approve refrain".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::doctor::Status;

    #[test]
    fn claude_codes_project_server_approval_is_read_where_claude_code_keeps_it() {
        let dir = tempfile::tempdir().unwrap();
        let (home, project) = (dir.path().join("home"), dir.path().join("proj"));
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        let exe = PathBuf::from("/bin/refrain");
        let m = Machine { home, refrain_home: dir.path().join("data"), project: project.clone(), exe, env: Vec::new() };
        assert_eq!(claude_approval(&m).status, Status::Warn, "not answered yet");
        let local = project.join(".claude/settings.local.json");
        std::fs::write(&local, r#"{"enabledMcpjsonServers": ["other", "refrain"]}"#).unwrap();
        assert_eq!(claude_approval(&m).status, Status::Ok);
        std::fs::write(&local, r#"{"enableAllProjectMcpServers": true}"#).unwrap();
        assert_eq!(claude_approval(&m).status, Status::Ok);
        std::fs::write(&local, r#"{"disabledMcpjsonServers": ["refrain"]}"#).unwrap();
        let declined = claude_approval(&m);
        assert_eq!(declined.status, Status::Problem);
        assert!(declined.fix.unwrap().starts_with("claude mcp reset-project-choices"));
    }
}
