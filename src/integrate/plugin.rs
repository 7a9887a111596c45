//! refrain's opencode plugin: a small plain-JavaScript file (no imports, opencode runs it on Bun)
//! that hands opencode's events to `refrain hook opencode <event>` and applies the answer: a stored
//! plan joins the prompt as a synthetic part, a note stands in for a repeated read's output.
//!
//! The file is refrain's own: install writes it whole, uninstall deletes it; a file at that path
//! without refrain's first line is someone else's and is never touched.

/// The first line of the plugin; how refrain knows the file is its own.
pub const MARK: &str = "// refrain plugin for opencode";

/// True when the bytes are a plugin refrain wrote.
pub fn is_ours(bytes: &[u8]) -> bool {
    bytes.starts_with(MARK.as_bytes())
}

/// The plugin text for a refrain binary and the flags the hook command takes.
pub fn text(command: &str, flags: &[String]) -> String {
    let argv = serde_json::to_string(&[command, "hook", "opencode"]).unwrap_or_default();
    let flags = serde_json::to_string(flags).unwrap_or_default();
    format!(
        r#"{MARK} (written by `refrain install`, removed by `refrain uninstall`).
// It hands prompts, finished tool calls, compactions and idle sessions to refrain's hook command,
// which may add a stored plan to the prompt or stand in a short note for a repeated read.
// Plain JavaScript with no imports. Any failure leaves opencode as it was.
const HOOK = {argv};
const FLAGS = {flags};
const LIMIT_MS = 10000;
let counter = 0;

async function hook(event, payload) {{
  if (typeof Bun === "undefined") return null;
  try {{
    const proc = Bun.spawn([...HOOK, event, ...FLAGS], {{
      stdin: new TextEncoder().encode(JSON.stringify({{ ...payload, hook_event_name: event }})),
      stdout: "pipe",
      stderr: "ignore",
    }});
    const timer = setTimeout(() => proc.kill(), LIMIT_MS);
    const out = await new Response(proc.stdout).text();
    clearTimeout(timer);
    const line = out.trim();
    return line ? JSON.parse(line) : null;
  }} catch {{
    return null;
  }}
}}

// A part id in opencode's ascending form: "prt_", 12 hex digits of time, 14 random characters.
function partId() {{
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  counter = (counter + 1) % 4096;
  const time = ((BigInt(Date.now()) * 4096n + BigInt(counter)) & 0xffffffffffffn).toString(16).padStart(12, "0");
  let rest = "";
  for (let i = 0; i < 14; i++) rest += alphabet[Math.floor(Math.random() * alphabet.length)];
  return "prt_" + time + rest;
}}

export const RefrainPlugin = async ({{ directory, client }}) => ({{
  "chat.message": async (input, output) => {{
    const parts = output.parts || [];
    const prompt = parts.filter((p) => p.type === "text" && !p.synthetic).map((p) => p.text).join("\n");
    if (!prompt.trim()) return;
    // opencode starts its MCP servers after the first prompt; refrain's hook needs refrain's running.
    try {{ await client.mcp.status(); }} catch {{}}
    const answer = await hook("chat.message", {{ session_id: input.sessionID, cwd: directory, prompt }});
    if (answer && typeof answer.context === "string") {{
      const messageID = (output.message && output.message.id) || input.messageID;
      parts.push({{ id: partId(), sessionID: input.sessionID, messageID, type: "text", text: answer.context, synthetic: true }});
    }}
  }},
  "tool.execute.after": async (input, output) => {{
    const answer = await hook("tool.execute.after", {{
      session_id: input.sessionID,
      cwd: directory,
      tool_name: input.tool,
      tool_input: input.args || {{}},
      tool_response: output.output,
      tool_use_id: input.callID,
    }});
    if (answer && typeof answer.output === "string") output.output = answer.output;
  }},
  event: async ({{ event }}) => {{
    const props = event.properties || {{}};
    if (event.type === "session.idle" || event.type === "session.compacted") {{
      await hook(event.type, {{ session_id: props.sessionID, cwd: directory }});
    }} else if (event.type === "file.edited" && props.file) {{
      await hook(event.type, {{ cwd: directory, file_path: props.file }});
    }}
  }},
}});
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_carries_the_command_and_flags_quoted_and_is_recognised() {
        let t = text("/home/a b/refrain", &["--home".into(), "/data \"x\"".into()]);
        assert!(t.contains(r#"const HOOK = ["/home/a b/refrain","hook","opencode"];"#), "{t}");
        assert!(t.contains(r#"const FLAGS = ["--home","/data \"x\""];"#), "{t}");
        assert!(is_ours(t.as_bytes()));
        assert!(!t.contains("import ") && !t.contains("require("), "the plugin imports nothing");
        assert!(!is_ours(b"export const Mine = async () => ({})"));
    }
}
