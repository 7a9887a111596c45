//! Which tool results may be cached: only read-only tools, never disabled ones, never errors.
//!
//! The caller may say whether a tool is read-only; known tools of Claude Code and Codex are
//! recognised by name, and shell commands are cached only when every part of the command line is
//! a known read-only program with no redirection or substitution. When in doubt: do not cache.

use serde_json::Value;

/// Whether a call's result may be cached, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Cache it; the reason says what recognised it as read-only.
    Cache(String),
    /// Do not cache; the reason says why (and how to change it when the caller can).
    Bypass(String),
}

impl Decision {
    /// True for `Cache`.
    pub fn allows(&self) -> bool {
        matches!(self, Decision::Cache(_))
    }

    /// The reason, either way.
    pub fn reason(&self) -> &str {
        match self {
            Decision::Cache(r) | Decision::Bypass(r) => r,
        }
    }
}

/// Claude Code and Codex tools that only read.
const READ_ONLY: &[&str] = &[
    "Read",
    "Grep",
    "Glob",
    "LS",
    "WebFetch",
    "WebSearch",
    "NotebookRead",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "read_file",
    "list_dir",
    "grep_files",
    "view_image",
    "web_search",
    "file_search",
    "codebase_search",
    "grep_search",
    "list_directory",
    "read_many_files",
    "search_file_content",
    "glob",
    "fetch",
    "read_mcp_resource",
    "list_mcp_resources",
];

/// Tools that change things: never cached, whatever the caller says.
const MUTATING: &[&str] = &[
    "Edit",
    "Write",
    "MultiEdit",
    "NotebookEdit",
    "TodoWrite",
    "Task",
    "KillShell",
    "KillBash",
    "apply_patch",
    "write_file",
    "edit_file",
    "replace",
    "update_plan",
    "write_stdin",
    "delete_file",
    "create_file",
    "edit",
    "write",
];

/// Shell-running tools whose command line decides.
const SHELLS: &[&str] =
    &["Bash", "shell", "exec_command", "local_shell", "container.exec", "run_shell_command", "run_terminal_cmd"];

/// Programs that only read (with the argument checks in `segment_is_read_only`).
const SAFE_PROGRAMS: &[&str] = &[
    "cat",
    "head",
    "tail",
    "less",
    "wc",
    "ls",
    "rg",
    "grep",
    "egrep",
    "fgrep",
    "find",
    "fd",
    "tree",
    "stat",
    "file",
    "du",
    "pwd",
    "echo",
    "sort",
    "uniq",
    "cut",
    "nl",
    "diff",
    "cmp",
    "sha256sum",
    "md5sum",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "which",
    "jq",
    "awk",
];

/// Read-only `git` subcommands.
const SAFE_GIT: &[&str] =
    &["status", "log", "diff", "show", "blame", "ls-files", "rev-parse", "grep", "branch", "describe", "shortlog"];

/// Decides whether a call may be cached. `caller_says` is the caller's `read_only` flag.
pub fn decide(tool: &str, args: &Value, caller_says: Option<bool>, disabled: &[String]) -> Decision {
    if disabled.iter().any(|d| d == tool) {
        return Decision::Bypass(format!("{tool} is listed in results.disabled_tools, so it is never cached"));
    }
    if MUTATING.contains(&tool) {
        return Decision::Bypass(format!("{tool} changes files or state, so its results are never cached"));
    }
    if SHELLS.contains(&tool) {
        return match shell_command(args) {
            Some(cmd) if command_is_read_only(&cmd) => Decision::Cache(format!("{tool} runs a read-only command")),
            Some(_) => Decision::Bypass(format!(
                "{tool} runs a command that may change things (only plain reads such as cat, rg, ls, git log are cached)"
            )),
            None => Decision::Bypass(format!("{tool} call has no command to inspect, so it is not cached")),
        };
    }
    match caller_says {
        Some(false) => Decision::Bypass(format!("the caller says {tool} is not read-only")),
        Some(true) => Decision::Cache(format!("the caller says {tool} is read-only")),
        None if READ_ONLY.contains(&tool) => Decision::Cache(format!("{tool} is a known read-only tool")),
        None if mcp_read_verb(tool) => Decision::Cache(format!("{tool} is named as a read (get/list/search/read)")),
        None => Decision::Bypass(format!(
            "{tool} is not known to be read-only; pass read_only=true if it has no side effects"
        )),
    }
}

/// MCP tools named `mcp__server__get_x`, `list_x`, `search_x`, `read_x`...: reads by convention.
fn mcp_read_verb(tool: &str) -> bool {
    let Some(rest) = tool.strip_prefix("mcp__") else { return false };
    let name = rest.rsplit("__").next().unwrap_or(rest);
    let first = name.split(['_', '-']).next().unwrap_or("");
    ["get", "list", "search", "read", "find", "show", "describe", "view", "query"]
        .contains(&first.to_ascii_lowercase().as_str())
        && !name.to_ascii_lowercase().contains("or_create")
}

/// The command line of a shell call: `command` as a string, or an argv array (`["bash", "-lc", "…"]`).
fn shell_command(args: &Value) -> Option<String> {
    let cmd = args.get("command").or_else(|| args.get("cmd"))?;
    match cmd {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let words: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [sh, flag, script]
                    if ["bash", "sh", "zsh"].contains(sh) && flag.starts_with('-') && flag.contains('c') =>
                {
                    Some((*script).to_string())
                }
                _ => Some(words.join(" ")),
            }
        }
        _ => None,
    }
}

/// True when every segment of a command line (split on pipes and `&&`/`||`/`;`) only reads.
pub fn command_is_read_only(cmd: &str) -> bool {
    if cmd.contains('`') || cmd.contains("$(") || cmd.contains("<(") || cmd.contains('\n') {
        return false;
    }
    // Any output redirection other than to /dev/null or a descriptor may write a file.
    let cleaned = cmd.replace("2>&1", " ").replace("2>/dev/null", " ").replace(">/dev/null", " ");
    if cleaned.contains('>') {
        return false;
    }
    cleaned.split(['|', ';', '&']).map(str::trim).filter(|s| !s.is_empty()).all(segment_is_read_only)
}

fn segment_is_read_only(seg: &str) -> bool {
    let words: Vec<&str> = seg.split_whitespace().collect();
    let Some((&prog, rest)) = words.split_first() else { return true };
    match prog {
        "git" => {
            rest.first().is_some_and(|sub| SAFE_GIT.contains(sub)) && !rest.iter().any(|w| w.starts_with("--output"))
        }
        "find" => !rest.iter().any(|w| ["-delete", "-exec", "-execdir", "-ok", "-fprint", "-fls"].contains(w)),
        "sort" => !rest.iter().any(|w| w.starts_with("-o")),
        "awk" => !seg.contains("system") && !seg.contains('>'),
        "sed" => false,
        p => SAFE_PROGRAMS.contains(&p),
    }
}

/// Whether a result is an error (never cached): the caller's flag, an `Error:`-prefixed text, a
/// Claude Code `<tool_use_error>`, or a JSON result marked `isError`/`is_error`.
pub fn is_error_result(result: &Value, caller_says: bool) -> bool {
    if caller_says {
        return true;
    }
    match result {
        Value::String(s) => {
            let t = s.trim_start();
            t.starts_with("Error:") || t.starts_with("error:") || t.starts_with("<tool_use_error>")
        }
        Value::Object(map) => {
            ["isError", "is_error"].iter().any(|k| map.get(*k).and_then(Value::as_bool) == Some(true))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case("Read", json!({"file_path": "a"}), None, true)]
    #[case("WebSearch", json!({"query": "x"}), None, true)]
    #[case("Edit", json!({}), Some(true), false)]
    #[case("apply_patch", json!({}), None, false)]
    #[case("Bash", json!({"command": "rg foo src | head -5"}), None, true)]
    #[case("Bash", json!({"command": "cat a > b"}), None, false)]
    #[case("Bash", json!({"command": "rm -rf target"}), None, false)]
    #[case("Bash", json!({"command": "git log -3 && git status"}), None, true)]
    #[case("Bash", json!({"command": "git commit -m x"}), None, false)]
    #[case("Bash", json!({"command": "find . -name x -delete"}), None, false)]
    #[case("Bash", json!({"command": "ls $(echo /)"}), None, false)]
    #[case("shell", json!({"command": ["bash", "-lc", "cat src/lib.rs"]}), None, true)]
    #[case("shell", json!({"command": ["bash", "-lc", "cargo build"]}), None, false)]
    #[case("my_tool", json!({}), None, false)]
    #[case("my_tool", json!({}), Some(true), true)]
    #[case("Read", json!({}), Some(false), false)]
    #[case("mcp__github__get_issue", json!({}), None, true)]
    #[case("mcp__github__create_issue", json!({}), None, false)]
    fn decides_by_name_command_and_caller(
        #[case] tool: &str,
        #[case] args: Value,
        #[case] says: Option<bool>,
        #[case] cached: bool,
    ) {
        let d = decide(tool, &args, says, &[]);
        assert_eq!(d.allows(), cached, "{tool} {args}: {}", d.reason());
    }

    #[test]
    fn disabled_tools_are_never_cached() {
        let d = decide("Read", &json!({}), Some(true), &["Read".to_string()]);
        assert!(!d.allows());
        assert!(d.reason().contains("disabled_tools"));
    }

    #[rstest]
    #[case(json!("Error: file not found"), false, true)]
    #[case(json!("<tool_use_error>nope</tool_use_error>"), false, true)]
    #[case(json!({"isError": true, "content": []}), false, true)]
    #[case(json!("fn main() {}"), false, false)]
    #[case(json!("fine"), true, true)]
    fn errors_are_recognised(#[case] result: Value, #[case] flag: bool, #[case] error: bool) {
        assert_eq!(is_error_result(&result, flag), error);
    }
}
