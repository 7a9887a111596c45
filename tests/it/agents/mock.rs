//! refrain's mock model servers (tests/agents/mock_*.py) as child processes, and what the agents
//! sent them: every request body, the tool calls the model made and the results the agent returned.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Which API the mock speaks.
#[derive(Clone, Copy)]
pub enum Api {
    /// Anthropic Messages (Claude Code).
    Anthropic,
    /// OpenAI Responses (Codex).
    Responses,
    /// Gemini generateContent (Gemini CLI).
    Gemini,
    /// OpenAI Chat Completions (opencode, Qwen Code).
    Chat,
}

impl Api {
    /// The request field holding the conversation.
    pub fn conversation(self) -> &'static str {
        match self {
            Api::Anthropic | Api::Chat => "messages",
            Api::Responses => "input",
            Api::Gemini => "contents",
        }
    }
}

/// A running mock model server playing a script; killed on drop.
pub struct Mock {
    child: Child,
    /// Where the requests are logged.
    pub log: PathBuf,
    /// The loopback port.
    pub port: u16,
}

impl Mock {
    /// Starts the mock with `script` ({"steps": [...], "final": "..."}) and waits for its port.
    pub fn start(api: Api, dir: &Path, script: &Value) -> Mock {
        let log = dir.to_path_buf();
        std::fs::create_dir_all(&log).unwrap();
        let script_file = log.join("script.json");
        std::fs::write(&script_file, serde_json::to_vec_pretty(script).unwrap()).unwrap();
        let file = match api {
            Api::Anthropic => "mock_anthropic.py",
            Api::Responses => "mock_responses.py",
            Api::Gemini => "mock_gemini.py",
            Api::Chat => "mock_chat.py",
        };
        let child = Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents").join(file))
            .arg(&log)
            .arg(&script_file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("python3 is needed for the mock model servers: {e}"));
        let started = Instant::now();
        let port = loop {
            if let Ok(p) = std::fs::read_to_string(log.join("port")) {
                break p.trim().parse().unwrap();
            }
            assert!(started.elapsed() < Duration::from_secs(20), "the mock model server did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        Mock { child, log, port }
    }

    /// Every request body received, in order.
    pub fn requests(&self) -> Vec<Value> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&self.log)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("req-"))
            .collect();
        files.sort();
        files
            .iter()
            .map(|f| serde_json::from_slice::<Value>(&std::fs::read(f).unwrap()).unwrap()["body"].clone())
            .collect()
    }

    /// The tool calls of the longest conversation the model saw, each `{name, input, result}` with
    /// the result as text.
    pub fn calls(&self, api: Api) -> Vec<Value> {
        self.longest_calls(api, |_| true)
    }

    /// The tool calls of the conversations whose first user message holds `marker` (`inside`),
    /// or does not: the longest such request's, taken apart. A subagent started with a marker
    /// in its prompt is its own conversation.
    pub fn calls_in(&self, api: Api, marker: &str, inside: bool) -> Vec<Value> {
        let key = api.conversation();
        // Codex puts its environment context first: there every user message counts.
        let first_user = |r: &Value| {
            let mut users = r[key].as_array()?.iter().filter(|m| m["role"] == "user");
            match api {
                Api::Responses => Some(users.map(Value::to_string).collect::<String>()),
                _ => users.next().map(Value::to_string),
            }
        };
        self.longest_calls(api, |r| first_user(r).is_some_and(|t| t.contains(marker) == inside))
    }

    /// The tool calls of the longest request `keep` accepts, taken apart.
    fn longest_calls(&self, api: Api, keep: impl Fn(&Value) -> bool) -> Vec<Value> {
        let key = api.conversation();
        let longest = self
            .requests()
            .into_iter()
            .filter(|r| keep(r))
            .max_by_key(|r| r[key].as_array().map_or(0, Vec::len))
            .unwrap_or_default();
        let items = longest[key].as_array().cloned().unwrap_or_default();
        match api {
            Api::Anthropic => anthropic_calls(&items),
            Api::Responses => responses_calls(&items),
            Api::Gemini => gemini_calls(&items),
            Api::Chat => chat_calls(&items),
        }
    }

    /// True when any request the model received contains `needle` anywhere in its body.
    pub fn saw(&self, needle: &str) -> bool {
        self.requests().iter().any(|r| r.to_string().contains(needle))
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(|b| b.get("text").map_or_else(|| text_of(b), text_of)).collect(),
        Value::Object(o) => o.get("text").or_else(|| o.get("output")).map(text_of).unwrap_or_default(),
        _ => String::new(),
    }
}

fn anthropic_calls(messages: &[Value]) -> Vec<Value> {
    let blocks: Vec<&Value> = messages.iter().filter_map(|m| m["content"].as_array()).flatten().collect();
    let result = |id: &Value| {
        blocks.iter().find(|b| b["type"] == "tool_result" && &b["tool_use_id"] == id).map(|b| text_of(&b["content"]))
    };
    blocks
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| json!({"name": b["name"], "input": b["input"], "result": result(&b["id"])}))
        .collect()
}

fn gemini_calls(contents: &[Value]) -> Vec<Value> {
    let parts: Vec<&Value> = contents.iter().filter_map(|c| c["parts"].as_array()).flatten().collect();
    let responses: Vec<&Value> = parts.iter().filter_map(|p| p.get("functionResponse")).collect();
    let calls = parts.iter().filter_map(|p| p.get("functionCall"));
    calls
        .enumerate()
        .map(|(i, c)| {
            let r = responses.iter().find(|r| r.get("id").is_some() && r["id"] == c["id"]).or(responses.get(i));
            let result = r.map(|r| {
                let resp = &r["response"];
                resp.get("output").or(resp.get("error")).map_or_else(|| resp.to_string(), text_of)
            });
            json!({"name": c["name"], "input": c["args"], "result": result})
        })
        .collect()
}

fn chat_calls(messages: &[Value]) -> Vec<Value> {
    let result = |id: &Value| {
        messages.iter().find(|m| m["role"] == "tool" && &m["tool_call_id"] == id).map(|m| text_of(&m["content"]))
    };
    messages
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .map(|c| {
            let args = c["function"]["arguments"].as_str().and_then(|a| serde_json::from_str::<Value>(a).ok());
            json!({"name": c["function"]["name"], "input": args, "result": result(&c["id"])})
        })
        .collect()
}

fn responses_calls(items: &[Value]) -> Vec<Value> {
    let result = |id: &Value| {
        items
            .iter()
            .find(|i| i["type"].as_str().is_some_and(|t| t.ends_with("_output")) && &i["call_id"] == id)
            .map(|i| text_of(&i["output"]))
    };
    items
        .iter()
        .filter(|i| matches!(i["type"].as_str(), Some("function_call" | "custom_tool_call")))
        .map(|i| {
            let name = match i["namespace"].as_str() {
                Some(ns) => format!("{ns}__{}", i["name"].as_str().unwrap_or_default()),
                None => i["name"].as_str().unwrap_or_default().to_string(),
            };
            json!({"name": name, "input": i.get("arguments").or(i.get("input")), "result": result(&i["call_id"])})
        })
        .collect()
}
