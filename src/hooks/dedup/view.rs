//! What a read shows: which file, which part of it (the key), and the text the agent's tool
//! returned, taken from a hook payload or from the agent's own transcript.
//!
//! Two reads are comparable only when their keys are equal: the same file, the same kind of tool
//! (each agent's read tool formats output its own way) and the same range, spelled the same way.
//! Anything refrain cannot read with certainty (pipes, several files, an output format it does not
//! know) gives no key or no text, and so no dedup.

use super::super::Agent;
use serde_json::Value;
use std::path::Path;

/// Outputs refrain wrote in place of a read start with this, so they are never taken for content.
pub const NOTE_MARK: &str = "[refrain]";

/// The tool that produced a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Via {
    /// The agent's own file-read tool.
    ReadTool,
    /// A shell command that only prints the file (cat, head, tail, sed -n).
    Shell,
}

/// Which part of a file a read shows, as the call spelled it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Range {
    /// The whole file (as far as the tool shows it).
    Whole,
    /// A read tool's offset and limit, as given.
    Window(Option<u64>, Option<u64>),
    /// `head -n N`.
    Head(u64),
    /// `tail -n N`.
    Tail(u64),
    /// Lines A to B (`sed -n 'A,Bp'`, a start and end line); B = 0: to the end.
    Lines(u64, u64),
}

/// A read's identity: two reads with equal keys show the same thing when the file is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReadKey {
    /// The tool kind.
    pub via: Via,
    /// The file, absolute.
    pub path: String,
    /// The part shown.
    pub range: Range,
}

/// The read tool of each agent and the names of its path, offset and limit arguments.
fn read_tool(agent: Agent, tool: &str) -> Option<(&'static [&'static str], &'static str, &'static str)> {
    match (agent, tool) {
        (Agent::Claude, "Read") => Some((&["file_path"], "offset", "limit")),
        (Agent::Gemini | Agent::Qwen, "read_file") => {
            Some((&["file_path", "absolute_path", "path"], "offset", "limit"))
        }
        (Agent::Opencode, "read") => Some((&["filePath"], "offset", "limit")),
        _ => None,
    }
}

/// True for the tool names an agent runs shell commands with.
pub fn is_shell(agent: Agent, tool: &str) -> bool {
    match agent {
        Agent::Claude => tool == "Bash",
        Agent::Codex => matches!(tool, "Bash" | "exec_command" | "shell" | "local_shell" | "unified_exec"),
        Agent::Gemini | Agent::Qwen => tool == "run_shell_command",
        Agent::Opencode => tool == "bash",
        Agent::Cursor => false,
    }
}

/// The key of a call, from its tool name and input; None when it is not a plain read of one file.
pub fn key(agent: Agent, tool: &str, input: &Value, cwd: &str) -> Option<ReadKey> {
    if let Some((paths, offset, limit)) = read_tool(agent, tool) {
        let path = paths.iter().find_map(|k| input.get(*k).and_then(Value::as_str))?;
        let num = |k: &str| input.get(k).and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()));
        let range = match (num(offset), num(limit)) {
            (None, None) => Range::Whole,
            (a, b) if offset == "start_line" => Range::Lines(a.unwrap_or(1), b.unwrap_or(0)),
            (o, l) => Range::Window(o, l),
        };
        return Some(ReadKey { via: Via::ReadTool, path: absolute(cwd, path), range });
    }
    if !is_shell(agent, tool) {
        return None;
    }
    let command = match input.get("command").or_else(|| input.get("cmd"))? {
        Value::String(s) => s.clone(),
        Value::Array(a) => shell_words(a)?,
        _ => return None,
    };
    shell_key(&command, cwd)
}

/// `["bash", "-lc", "cat x"]` -> `cat x`; a plain argv -> its words joined.
fn shell_words(argv: &[Value]) -> Option<String> {
    let words: Vec<&str> = argv.iter().map(Value::as_str).collect::<Option<_>>()?;
    match words.as_slice() {
        [sh, flag, script] if sh.ends_with("sh") && flag.starts_with('-') && flag.ends_with('c') => {
            Some(script.to_string())
        }
        _ => Some(words.join(" ")),
    }
}

/// The key of a shell command that prints one file and does nothing else.
pub fn shell_key(command: &str, cwd: &str) -> Option<ReadKey> {
    if command.contains(['|', ';', '&', '>', '<', '`', '$', '\n', '*', '?', '\\']) {
        return None;
    }
    let words: Vec<&str> = command.split_whitespace().map(|w| w.trim_matches(['"', '\''])).collect();
    let (&cmd, args) = words.split_first()?;
    let (file, range) = match (cmd, args) {
        ("cat", [file]) => (*file, Range::Whole),
        ("head" | "tail", [n, file]) if n.starts_with('-') => (*file, count_range(cmd, n.trim_start_matches('-'))?),
        ("head" | "tail", ["-n", n, file]) => (*file, count_range(cmd, n)?),
        ("sed", ["-n", script, file]) => (*file, sed_range(script)?),
        _ => return None,
    };
    if file.starts_with('-') {
        return None;
    }
    Some(ReadKey { via: Via::Shell, path: absolute(cwd, file), range })
}

fn count_range(cmd: &str, n: &str) -> Option<Range> {
    let n: u64 = n.parse().ok()?;
    Some(if cmd == "head" { Range::Head(n) } else { Range::Tail(n) })
}

/// `A,Bp` or `Ap`.
fn sed_range(script: &str) -> Option<Range> {
    let body = script.strip_suffix('p')?;
    let (a, b) = body.split_once(',').unwrap_or((body, body));
    Some(Range::Lines(a.trim().parse().ok()?, b.trim().parse().ok()?))
}

fn absolute(cwd: &str, p: &str) -> String {
    if Path::new(p).is_absolute() || cwd.is_empty() {
        p.to_string()
    } else {
        Path::new(cwd).join(p).to_string_lossy().into_owned()
    }
}

/// The text a tool showed, from the tool's response as the hook payload carries it (Claude Code
/// also keeps this shape in its transcript as `toolUseResult`). None for failures, for outputs
/// refrain wrote itself, and for outputs it cannot take apart with certainty.
pub fn payload_text(agent: Agent, via: Via, response: &Value) -> Option<String> {
    let text = match (agent, via) {
        (Agent::Claude, Via::ReadTool) => {
            (response.get("type")?.as_str()? == "text").then_some(())?;
            response.pointer("/file/content")?.as_str()?.to_string()
        }
        (Agent::Claude, Via::Shell) => {
            let clean = response.get("interrupted").and_then(Value::as_bool) != Some(true)
                && response.get("stderr").and_then(Value::as_str).is_none_or(str::is_empty);
            clean.then_some(())?;
            response.get("stdout")?.as_str()?.to_string()
        }
        (Agent::Codex | Agent::Opencode, _) => response.as_str()?.to_string(),
        (Agent::Gemini | Agent::Qwen, _) => {
            if response.get("error").is_some_and(|e| !e.is_null()) {
                return None;
            }
            tool_text(agent, via, response.get("llmContent")?.as_str()?)?
        }
        (Agent::Cursor, _) => return None,
    };
    content(text)
}

/// The file text inside a Gemini CLI or Qwen Code tool output (`llmContent`, or the recorded
/// function response): read tools return the text itself (Qwen's own "unchanged" note is not
/// content). Shell output follows `Output: `; Gemini CLI adds `Error:`/`Exit Code:`/`Signal:`
/// lines only on failure, Qwen Code always ends with them.
pub fn tool_text(agent: Agent, via: Via, output: &str) -> Option<String> {
    match via {
        Via::ReadTool => {
            let qwen_note = agent == Agent::Qwen && output.starts_with("[File ") && output.contains("unchanged since");
            (!qwen_note).then(|| output.to_string())
        }
        Via::Shell if agent == Agent::Gemini => {
            let rest = output.strip_prefix("Output: ")?;
            let failed = ["\nError: ", "\nExit Code: ", "\nSignal: "].iter().any(|m| rest.contains(m));
            (!failed && rest != "(empty)").then(|| rest.to_string())
        }
        Via::Shell => {
            let (_, rest) = output.split_once("Output: ")?;
            let end = rest.rfind("\nError: ")?;
            let tail = &rest[end..];
            let ok = tail.starts_with("\nError: (none)") && tail.contains("Exit Code: 0");
            // `(empty)`: nothing came back (Qwen Code stops waiting for a command's pipes a fixed
            // time after it exits). No read: taken as the file's text, it hid the earlier read
            // that was still in context, and the next repeated read was shown in full.
            (ok && &rest[..end] != "(empty)").then(|| rest[..end].to_string())
        }
    }
}

/// The stdout of a Codex rollout's shell output (`... Process exited with code 0 ... Output:\n<stdout>`).
pub fn codex_rollout_text(output: &str) -> Option<String> {
    let (head, body) = output.split_once("Output:\n")?;
    head.contains("Process exited with code 0").then(|| body.to_string())
}

/// The text as compared: exactly the bytes the tool returned, final newline, trailing blank
/// lines and carriage returns included (a read that differs from an earlier one only there is a
/// changed read: the agent may be fixing exactly that). Empty texts and refrain's own notes are
/// not content.
pub fn content(text: String) -> Option<String> {
    (!text.is_empty() && !text.starts_with(NOTE_MARK)).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case("cat notes.txt", Some(("/p/notes.txt", Range::Whole)))]
    #[case("cat ./src/a.rs", Some(("/p/./src/a.rs", Range::Whole)))]
    #[case("head -n 20 a.rs", Some(("/p/a.rs", Range::Head(20))))]
    #[case("head -20 a.rs", Some(("/p/a.rs", Range::Head(20))))]
    #[case("tail -n 5 /x/a.rs", Some(("/x/a.rs", Range::Tail(5))))]
    #[case("sed -n '10,40p' a.rs", Some(("/p/a.rs", Range::Lines(10, 40))))]
    #[case("sed -n 7p a.rs", Some(("/p/a.rs", Range::Lines(7, 7))))]
    #[case("cat a.rs b.rs", None)]
    #[case("cat a.rs | head", None)]
    #[case("sed -i 's/a/b/' a.rs", None)]
    #[case("cat $HOME/a", None)]
    #[case("grep x a.rs", None)]
    fn shell_commands_that_print_one_file_have_a_key(#[case] cmd: &str, #[case] want: Option<(&str, Range)>) {
        let got = shell_key(cmd, "/p").map(|k| (k.path, k.range));
        assert_eq!(got, want.map(|(p, r)| (p.to_string(), r)), "{cmd}");
    }

    #[test]
    fn read_tools_differ_by_range_and_by_agent() {
        let whole = key(Agent::Claude, "Read", &json!({"file_path": "/p/a.rs"}), "/p").unwrap();
        let part =
            key(Agent::Claude, "Read", &json!({"file_path": "/p/a.rs", "offset": 10, "limit": 5}), "/p").unwrap();
        assert_ne!(whole, part);
        assert_eq!(whole.range, Range::Whole);
        let cat = key(Agent::Claude, "Bash", &json!({"command": "cat a.rs"}), "/p").unwrap();
        assert_ne!(whole, cat, "a Read and a cat format output differently");
        let gemini = key(Agent::Gemini, "read_file", &json!({"file_path": "a.rs"}), "/p").unwrap();
        assert_eq!(gemini.path, "/p/a.rs");
        assert!(key(Agent::Cursor, "Read", &json!({"file_path": "/p/a.rs"}), "/p").is_none());
        let argv = json!({"command": ["bash", "-lc", "cat a.rs"]});
        assert_eq!(key(Agent::Codex, "shell", &argv, "/p").unwrap().path, "/p/a.rs");
    }

    #[test]
    fn texts_come_out_of_each_agents_output_shape() {
        let read = json!({"type": "text", "file": {"filePath": "/p/a", "content": "x\ny\n", "numLines": 2}});
        assert_eq!(payload_text(Agent::Claude, Via::ReadTool, &read).as_deref(), Some("x\ny\n"));
        let bash = json!({"stdout": "x\n", "stderr": "boom", "interrupted": false});
        assert_eq!(payload_text(Agent::Claude, Via::Shell, &bash), None, "a command with stderr is not a clean read");
        let qwen = "Command: cat a\nDirectory: (root)\nOutput: x\ny\nError: (none)\nExit Code: 0\nSignal: (none)";
        assert_eq!(tool_text(Agent::Qwen, Via::Shell, qwen).as_deref(), Some("x\ny"));
        let failed = "Command: cat a\nOutput: \nError: cat: a: No such file\nExit Code: 1";
        assert_eq!(tool_text(Agent::Qwen, Via::Shell, failed), None);
        let empty = "Command: cat a\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 0\nSignal: (none)";
        assert_eq!(tool_text(Agent::Qwen, Via::Shell, empty), None, "an output Qwen Code did not wait for is no read");
        let codex = "Chunk ID: 1\nWall time: 0.0 seconds\nProcess exited with code 0\nOutput:\nx\ny\n";
        assert_eq!(codex_rollout_text(codex).as_deref(), Some("x\ny\n"));
        assert_eq!(content("[refrain] a.rs is unchanged".into()), None);
        let native = "[File a.rs unchanged since last read in this session — ...]";
        assert_eq!(tool_text(Agent::Qwen, Via::ReadTool, native), None);
    }
}
