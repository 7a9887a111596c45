//! What a finished tool call means for the result cache: a read-only result to record (with the
//! files it depends on), a write that invalidates paths, or nothing refrain should act on.
//!
//! Shell commands are read conservatively: only commands known to be read-only are ignored, known
//! file writers invalidate their arguments, anything else invalidates the whole working directory.

use super::{Agent, Payload, names};
use crate::config::HooksConfig;
use serde_json::Value;
use std::path::Path;

/// What a tool call did.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// A read-only result worth recording, depending on these paths.
    Read {
        /// Files the result depends on.
        files: Vec<String>,
        /// Directories whose whole tree the result depends on.
        trees: Vec<String>,
    },
    /// A write touching these paths.
    Write {
        /// The paths.
        paths: Vec<String>,
        /// Invalidate everything under the paths (a shell command with unknown effects).
        recursive: bool,
    },
}

const NETWORK_READS: [&str; 2] = ["WebFetch", "WebSearch"];
const FILE_WRITES: [&str; 5] = ["Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch"];
const SHELLS: [&str; 6] = ["Bash", "shell", "exec_command", "local_shell", "unified_exec", "container.exec"];
const READ_VERBS: [&str; 12] =
    ["get", "list", "read", "search", "fetch", "find", "query", "describe", "show", "lookup", "view", "grep"];

/// The tool family of a tool and whether calling it changes something (for plan steps).
pub fn family(tool: &str) -> (&'static str, bool) {
    match tool {
        "Read" | "Grep" | "Glob" | "LS" => ("fs", false),
        t if FILE_WRITES.contains(&t) => ("fs", true),
        t if SHELLS.contains(&t) => ("shell", true),
        t if is_network_read(t) => ("web", false),
        t if t.starts_with("mcp__") => ("mcp", !read_only_mcp(t, &HooksConfig::default())),
        _ => ("agent", false),
    }
}

/// True for tools whose results are expensive network reads.
pub fn is_network_read(tool: &str) -> bool {
    NETWORK_READS.contains(&tool)
}

/// Classifies a PostToolUse payload; None when refrain has nothing to do. Each agent's tool and
/// argument names are read as Claude Code's (`names`).
pub fn classify(agent: Agent, p: &Payload, config: &HooksConfig) -> Option<Effect> {
    let tool = names::tool(agent, p.tool_name.as_deref()?);
    let tool = tool.as_str();
    let input = names::input(agent, p.tool_input.as_ref().unwrap_or(&Value::Null));
    let cwd = p.cwd.clone().unwrap_or_default();
    let text = |k: &str| input.get(k).and_then(Value::as_str).map(|s| absolute(&cwd, s));
    if failed(p.tool_response.as_ref()) {
        return None;
    }
    match tool {
        "Read" => Some(Effect::Read { files: text("file_path").into_iter().collect(), trees: Vec::new() }),
        "Grep" | "Glob" => {
            let path = text("path").unwrap_or(cwd);
            let is_file = Path::new(&path).is_file();
            let (files, trees) = if is_file { (vec![path], Vec::new()) } else { (Vec::new(), vec![path]) };
            Some(Effect::Read { files, trees })
        }
        t if is_network_read(t) => Some(Effect::Read { files: Vec::new(), trees: Vec::new() }),
        t if FILE_WRITES.contains(&t) => {
            let mut paths: Vec<String> =
                ["file_path", "notebook_path", "path"].iter().filter_map(|k| text(k)).collect();
            paths.extend(patch_paths(&input).into_iter().map(|s| absolute(&cwd, &s)));
            if paths.is_empty() {
                return Some(Effect::Write { paths: vec![cwd], recursive: true });
            }
            Some(Effect::Write { paths, recursive: false })
        }
        t if SHELLS.contains(&t) => {
            let command = command_text(&input)?;
            match shell_file_read(&command, &cwd) {
                Some(files) => Some(Effect::Read { files, trees: Vec::new() }),
                None => shell_effect(&command, &cwd),
            }
        }
        t if t.starts_with("mcp__") => {
            read_only_mcp(t, config).then(|| Effect::Read { files: Vec::new(), trees: Vec::new() })
        }
        _ => None,
    }
}

/// True when the tool response reports an error (errors are never cached).
fn failed(response: Option<&Value>) -> bool {
    let Some(r) = response else { return false };
    r.get("is_error").or_else(|| r.get("isError")).and_then(Value::as_bool) == Some(true)
        || r.get("success").and_then(Value::as_bool) == Some(false)
        || r.get("error").is_some_and(|e| !e.is_null())
}

/// MCP tools whose name starts with a read verb, or listed in `hooks.read_only_mcp_tools`.
fn read_only_mcp(tool: &str, config: &HooksConfig) -> bool {
    let mut parts = tool.splitn(3, "__");
    let (_, server, name) = (parts.next(), parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
    if server == "refrain" {
        return false;
    }
    let listed = config.read_only_mcp_tools.iter().any(|pat| match pat.strip_suffix('*') {
        Some(prefix) => tool.starts_with(prefix),
        None => tool == pat,
    });
    let verb: String = name.chars().take_while(|c| c.is_ascii_lowercase()).collect();
    listed || READ_VERBS.contains(&verb.as_str())
}

fn command_text(input: &Value) -> Option<String> {
    let c = input.get("command").or_else(|| input.get("cmd"))?;
    match c {
        Value::String(s) => Some(s.clone()),
        Value::Array(a) => Some(a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" ")),
        _ => None,
    }
}

fn absolute(cwd: &str, p: &str) -> String {
    if Path::new(p).is_absolute() || cwd.is_empty() {
        p.to_string()
    } else {
        Path::new(cwd).join(p).to_string_lossy().into_owned()
    }
}

/// Paths named in an apply_patch body (`*** Update File: x`, `*** Add File:`, `*** Delete File:`, `*** Move to:`).
pub fn patch_paths(input: &Value) -> Vec<String> {
    let mut texts = Vec::new();
    collect_strings(input, &mut texts);
    let mut out = Vec::new();
    for t in texts.iter().filter(|t| t.contains("*** Begin Patch")) {
        for line in t.lines() {
            for marker in ["*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: "] {
                if let Some(p) = line.strip_prefix(marker) {
                    out.push(p.trim().to_string());
                }
            }
        }
    }
    out
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}

const READ_ONLY_COMMANDS: [&str; 26] = [
    "ls", "cat", "head", "tail", "grep", "rg", "wc", "pwd", "which", "stat", "file", "tree", "du", "df", "env",
    "printenv", "date", "true", "echo", "sort", "uniq", "cut", "jq", "less", "diff", "whoami",
];
const WRITERS: [&str; 7] = ["rm", "mv", "cp", "touch", "mkdir", "tee", "truncate"];
const GIT_READS: [&str; 8] = ["status", "log", "diff", "show", "blame", "rev-parse", "ls-files", "grep"];

/// Commands that print files and nothing else, when given file arguments.
const FILE_PRINTERS: [&str; 6] = ["cat", "head", "tail", "wc", "nl", "sed"];

/// The files a shell command only prints (`cat a.rs`, `sed -n '1,80p' a.rs`, `head -n 20 a.rs`):
/// such a result depends on exactly those files, like a Read. None for anything else (pipes,
/// redirections, substitutions, other commands, arguments that are not existing files).
pub fn shell_file_read(command: &str, cwd: &str) -> Option<Vec<String>> {
    if command.contains(['|', ';', '&', '>', '<', '`', '$', '\n', '*', '?']) {
        return None;
    }
    let words: Vec<&str> = command.split_whitespace().map(|w| w.trim_matches(['"', '\''])).collect();
    let (&cmd, args) = words.split_first()?;
    if !FILE_PRINTERS.contains(&cmd) || (cmd == "sed" && !args.contains(&"-n")) {
        return None;
    }
    let mut files = Vec::new();
    let mut skip_value = false;
    let mut sed_script = cmd == "sed";
    for a in args {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if a.starts_with('-') {
            skip_value = matches!(cmd, "head" | "tail") && matches!(*a, "-n" | "-c");
            continue;
        }
        if std::mem::take(&mut sed_script) {
            continue;
        }
        let path = absolute(cwd, a);
        if !Path::new(&path).is_file() {
            return None;
        }
        files.push(path);
    }
    (!files.is_empty()).then_some(files)
}

/// What a shell command line does to files.
pub fn shell_effect(command: &str, cwd: &str) -> Option<Effect> {
    let unknown = || Some(Effect::Write { paths: vec![cwd.to_string()], recursive: true });
    if command.contains("$(") || command.contains('`') {
        return unknown();
    }
    let mut paths = Vec::new();
    let cleaned = command.replace("2>&1", " ").replace(">/dev/null", " ").replace("> /dev/null", " ");
    if cleaned.contains('>') {
        return unknown();
    }
    for segment in cleaned.split(['|', ';', '&', '\n']).map(str::trim).filter(|s| !s.is_empty()) {
        let words: Vec<&str> = segment.split_whitespace().collect();
        let Some(&cmd) = words.first() else { continue };
        let args = &words[1..];
        let flags_only = |bad: &[&str]| !args.iter().any(|a| bad.iter().any(|b| a.starts_with(b)));
        match cmd {
            c if READ_ONLY_COMMANDS.contains(&c) => {}
            "find" if flags_only(&["-delete", "-exec", "-execdir", "-fprint", "-ok"]) => {}
            "sed" if flags_only(&["-i", "--in-place"]) => {}
            "git" if args.first().is_some_and(|a| GIT_READS.contains(a)) => {}
            c if WRITERS.contains(&c) => {
                paths.extend(
                    args.iter().filter(|a| !a.starts_with('-')).map(|a| absolute(cwd, a.trim_matches(['"', '\'']))),
                );
            }
            _ => return unknown(),
        }
    }
    (!paths.is_empty()).then_some(Effect::Write { paths, recursive: true })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("ls -la && git status", None)]
    #[case("grep -rn foo src | head", None)]
    #[case("rm -f a.txt", Some(vec!["/p/a.txt"]))]
    #[case("cargo build", Some(vec!["/p"]))]
    #[case("echo hi > out.txt", Some(vec!["/p"]))]
    #[case("sed -i s/a/b/ x.rs", Some(vec!["/p"]))]
    #[case("cat x 2>&1 | wc -l", None)]
    fn shell_commands_invalidate_conservatively(#[case] cmd: &str, #[case] want: Option<Vec<&str>>) {
        let got = shell_effect(cmd, "/p").map(|e| match e {
            Effect::Write { paths, .. } => paths,
            Effect::Read { .. } => vec![],
        });
        assert_eq!(got, want.map(|v| v.into_iter().map(String::from).collect()));
    }

    #[test]
    fn shell_commands_that_only_print_files_are_reads_of_those_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "x").unwrap();
        let cwd = dir.path().to_string_lossy().into_owned();
        let a = dir.path().join("a.txt").to_string_lossy().into_owned();
        for cmd in ["cat a.txt", "sed -n '1,80p' a.txt", "head -n 20 a.txt", "wc -l a.txt"] {
            assert_eq!(shell_file_read(cmd, &cwd), Some(vec![a.clone()]), "{cmd}");
        }
        for cmd in ["cat missing.txt", "cat a.txt | wc", "sed s/a/b/ a.txt", "cat", "ls a.txt", "cat *.txt"] {
            assert_eq!(shell_file_read(cmd, &cwd), None, "{cmd}");
        }
    }

    #[test]
    fn patch_bodies_name_their_files() {
        let input = serde_json::json!({"input": "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: b.txt\n+hi\n*** End Patch"});
        assert_eq!(patch_paths(&input), vec!["src/a.rs", "b.txt"]);
    }

    #[rstest]
    #[case("mcp__github__get_issue", true)]
    #[case("mcp__everything__echo", false)]
    #[case("mcp__refrain__plan_lookup", false)]
    #[case("mcp__db__listTables", true)]
    fn mcp_tools_are_read_only_by_verb(#[case] tool: &str, #[case] want: bool) {
        assert_eq!(read_only_mcp(tool, &HooksConfig::default()), want);
    }
}
