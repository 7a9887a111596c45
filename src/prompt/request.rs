//! Request bodies (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses) normalised into
//! the ordered blocks a provider's prompt cache sees.
//!
//! Every block keeps its JSON path and its canonical bytes (the block without `cache_control`,
//! whose placement is tracked separately as a breakpoint). Top-level fields other than the prefix
//! content are kept verbatim in `params`, unknown ones included, so a change to any of them can be
//! reported. This module parses; it does not judge.

use super::{Error, estimate_tokens};
use serde::Serialize;
use serde_json::{Map, Value};

/// The request format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    /// Anthropic Messages API.
    Anthropic,
    /// OpenAI Chat Completions.
    OpenAiChat,
    /// OpenAI Responses.
    OpenAiResponses,
}

impl Provider {
    /// Parses a provider name as users write it.
    pub fn from_name(s: &str) -> Option<Provider> {
        match s.to_ascii_lowercase().as_str() {
            "anthropic" | "claude" | "messages" => Some(Provider::Anthropic),
            "openai" | "openai_chat" | "chat" | "chat_completions" => Some(Provider::OpenAiChat),
            "openai_responses" | "responses" | "codex" => Some(Provider::OpenAiResponses),
            _ => None,
        }
    }
}

/// A cache level, in prefix order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Tool definitions.
    Tools,
    /// System prompt / instructions.
    System,
    /// Conversation messages or input items.
    Messages,
}

impl Level {
    /// The level's name as reports write it.
    pub fn name(self) -> &'static str {
        match self {
            Level::Tools => "tools",
            Level::System => "system",
            Level::Messages => "messages",
        }
    }
}

/// What a block is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "name")]
pub enum BlockKind {
    /// A tool definition, by name.
    Tool(String),
    /// System text.
    System,
    /// Message text.
    Text,
    /// An image.
    Image,
    /// A tool call, by tool name.
    ToolUse(String),
    /// A tool result, by call id.
    ToolResult(String),
    /// Thinking or reasoning.
    Thinking,
    /// Anything else, by its `type`.
    Other(String),
}

/// One cacheable block.
#[derive(Debug, Clone)]
pub struct Block {
    /// Its level.
    pub level: Level,
    /// Message (or input item) index, for the messages level; tool or system index otherwise.
    pub index: usize,
    /// Block index inside the message, when the content is an array.
    pub sub: Option<usize>,
    /// JSON path in the request body.
    pub path: String,
    /// What it is.
    pub kind: BlockKind,
    /// The message role, for the messages level.
    pub role: Option<String>,
    /// Canonical bytes (without `cache_control`).
    pub text: String,
    /// Estimated tokens.
    pub tokens: u64,
    /// The TTL of a cache breakpoint on this block.
    pub breakpoint: Option<String>,
    /// Images inside this block (including inside tool results).
    pub images: usize,
}

/// Token usage a provider reported for a request.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Usage {
    /// Uncached input tokens (Anthropic) or all input tokens (OpenAI).
    pub input_tokens: Option<u64>,
    /// Tokens read from the cache.
    pub cache_read_tokens: Option<u64>,
    /// Tokens written to the cache.
    pub cache_creation_tokens: Option<u64>,
}

impl Usage {
    /// Reads Anthropic (`cache_read_input_tokens`) or OpenAI (`cached_tokens`, `cached_input_tokens`) usage.
    pub fn from_json(v: &Value) -> Option<Usage> {
        let n = |k: &str| v.get(k).and_then(Value::as_u64);
        let nested = v
            .get("prompt_tokens_details")
            .or_else(|| v.get("input_tokens_details"))
            .and_then(|d| d.get("cached_tokens"))
            .and_then(Value::as_u64);
        let u = Usage {
            input_tokens: n("input_tokens").or_else(|| n("prompt_tokens")),
            cache_read_tokens: n("cache_read_input_tokens").or(nested).or_else(|| n("cached_input_tokens")),
            cache_creation_tokens: n("cache_creation_input_tokens").or_else(|| n("cache_write_input_tokens")),
        };
        (u != Usage::default()).then_some(u)
    }

    /// Total prompt tokens as the provider counts them.
    pub fn prompt_total(&self, provider: Provider) -> Option<u64> {
        let input = self.input_tokens?;
        Some(match provider {
            Provider::Anthropic => {
                input + self.cache_read_tokens.unwrap_or(0) + self.cache_creation_tokens.unwrap_or(0)
            }
            _ => input,
        })
    }
}

/// A normalised request.
#[derive(Debug, Clone)]
pub struct Request {
    /// Its format.
    pub provider: Provider,
    /// Model id ("" when absent).
    pub model: String,
    /// Blocks in prefix order.
    pub blocks: Vec<Block>,
    /// Every other top-level field, verbatim (unknown fields included).
    pub params: Map<String, Value>,
    /// When it was sent (ms since the epoch), if known.
    pub timestamp_ms: Option<i64>,
    /// What the provider reported, if known.
    pub usage: Option<Usage>,
}

const PREFIX_KEYS: [&str; 6] = ["model", "tools", "system", "messages", "instructions", "input"];

impl Request {
    /// Parses a body, or an envelope `{body, timestamp?, usage?}` (as captured by proxies).
    pub fn parse(value: &Value, provider: Option<Provider>) -> Result<Request, Error> {
        let Some(obj) = value.as_object() else {
            return Err(Error::BadRequest("a request must be a JSON object".into()));
        };
        if let Some(body) = obj.get("body").filter(|b| b.is_object()) {
            let mut req = Request::parse(body, provider)?;
            req.timestamp_ms = obj
                .get("timestamp")
                .and_then(Value::as_str)
                .and_then(super::time::parse_rfc3339_ms)
                .or(req.timestamp_ms);
            req.usage = obj.get("usage").and_then(Usage::from_json).or(req.usage);
            return Ok(req);
        }
        let provider = provider.unwrap_or_else(|| detect(obj));
        let model = obj.get("model").and_then(Value::as_str).unwrap_or_default().to_string();
        let mut blocks = Vec::new();
        if let Some(tools) = obj.get("tools") {
            push_tools(&mut blocks, tools)?;
        }
        match provider {
            Provider::Anthropic => {
                if let Some(sys) = obj.get("system") {
                    push_system(&mut blocks, sys, "system");
                }
                if let Some(m) = obj.get("messages") {
                    push_messages(&mut blocks, m, "messages", provider)?;
                }
            }
            Provider::OpenAiChat => {
                if let Some(m) = obj.get("messages") {
                    push_messages(&mut blocks, m, "messages", provider)?;
                }
            }
            Provider::OpenAiResponses => {
                if let Some(sys) = obj.get("instructions") {
                    push_system(&mut blocks, sys, "instructions");
                }
                match obj.get("input") {
                    Some(Value::String(s)) => blocks.push(text_block(
                        Level::Messages,
                        0,
                        None,
                        "input".into(),
                        BlockKind::Text,
                        Some("user".into()),
                        &Value::String(s.clone()),
                    )),
                    Some(v) => push_messages(&mut blocks, v, "input", provider)?,
                    None => {}
                }
            }
        }
        let params = obj
            .iter()
            .filter(|(k, _)| !PREFIX_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(Request { provider, model, blocks, params, timestamp_ms: None, usage: None })
    }

    /// Tool names in order.
    pub fn tool_names(&self) -> Vec<&str> {
        self.blocks
            .iter()
            .filter_map(|b| if let BlockKind::Tool(n) = &b.kind { Some(n.as_str()) } else { None })
            .collect()
    }

    /// Total estimated tokens.
    pub fn tokens(&self) -> u64 {
        self.blocks.iter().map(|b| b.tokens).sum()
    }

    /// Images anywhere in the request.
    pub fn images(&self) -> usize {
        self.blocks.iter().map(|b| b.images).sum()
    }

    /// Index of the first block of a level (or the end).
    pub fn level_start(&self, level: Level) -> usize {
        self.blocks.iter().position(|b| b.level >= level).unwrap_or(self.blocks.len())
    }

    /// Number of messages (or input items).
    pub fn message_count(&self) -> usize {
        self.blocks.iter().filter(|b| b.level == Level::Messages).map(|b| b.index + 1).max().unwrap_or(0)
    }
}

/// Guesses the format from the body's shape.
fn detect(obj: &Map<String, Value>) -> Provider {
    if obj.contains_key("input") || obj.contains_key("instructions") {
        return Provider::OpenAiResponses;
    }
    let model = obj.get("model").and_then(Value::as_str).unwrap_or_default();
    if model.contains("claude") || obj.contains_key("system") || obj.contains_key("anthropic_version") {
        return Provider::Anthropic;
    }
    let anthropic_blocks = obj.get("messages").and_then(Value::as_array).is_some_and(|ms| {
        ms.iter().filter_map(|m| m.get("content").and_then(Value::as_array)).flatten().any(|b| {
            matches!(
                b.get("type").and_then(Value::as_str),
                Some("tool_use" | "tool_result" | "thinking" | "redacted_thinking")
            )
        })
    });
    if anthropic_blocks { Provider::Anthropic } else { Provider::OpenAiChat }
}

fn push_tools(blocks: &mut Vec<Block>, tools: &Value) -> Result<(), Error> {
    let Some(list) = tools.as_array() else { return Err(Error::BadRequest("`tools` must be an array".into())) };
    for (i, t) in list.iter().enumerate() {
        let name = t
            .get("name")
            .or_else(|| t.get("function").and_then(|f| f.get("name")))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| t.get("type").and_then(Value::as_str).unwrap_or("?").to_string());
        blocks.push(text_block(Level::Tools, i, None, format!("tools[{i}]"), BlockKind::Tool(name), None, t));
    }
    Ok(())
}

fn push_system(blocks: &mut Vec<Block>, sys: &Value, key: &str) {
    match sys {
        Value::Array(list) => {
            for (i, b) in list.iter().enumerate() {
                blocks.push(text_block(Level::System, i, None, format!("{key}[{i}]"), BlockKind::System, None, b));
            }
        }
        other => blocks.push(text_block(Level::System, 0, None, key.to_string(), BlockKind::System, None, other)),
    }
}

fn push_messages(blocks: &mut Vec<Block>, msgs: &Value, key: &str, provider: Provider) -> Result<(), Error> {
    let Some(list) = msgs.as_array() else { return Err(Error::BadRequest(format!("`{key}` must be an array"))) };
    for (i, m) in list.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).map(str::to_string);
        let item_type = m.get("type").and_then(Value::as_str);
        // OpenAI system/developer messages belong to the system level of the prefix.
        let level = match (provider, role.as_deref()) {
            (Provider::OpenAiChat, Some("system" | "developer")) => Level::System,
            _ => Level::Messages,
        };
        match m.get("content") {
            Some(Value::Array(parts))
                if provider == Provider::Anthropic || item_type.is_none_or(|t| t == "message") =>
            {
                for (j, b) in parts.iter().enumerate() {
                    let kind = kind_of(b);
                    blocks.push(text_block(
                        level,
                        i,
                        Some(j),
                        format!("{key}[{i}].content[{j}]"),
                        kind,
                        role.clone(),
                        b,
                    ));
                }
                if parts.is_empty() {
                    blocks.push(text_block(level, i, None, format!("{key}[{i}]"), BlockKind::Text, role.clone(), m));
                }
            }
            _ if provider == Provider::Anthropic => {
                let content = m.get("content").cloned().unwrap_or(Value::Null);
                blocks.push(text_block(
                    level,
                    i,
                    None,
                    format!("{key}[{i}].content"),
                    BlockKind::Text,
                    role.clone(),
                    &content,
                ));
            }
            _ => {
                // OpenAI: the whole message or item is the block (tool calls, outputs, reasoning...).
                let kind = kind_of(m);
                blocks.push(text_block(level, i, None, format!("{key}[{i}]"), kind, role.clone(), m));
            }
        }
    }
    Ok(())
}

fn kind_of(b: &Value) -> BlockKind {
    let s = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    match b.get("type").and_then(Value::as_str) {
        Some("text" | "input_text" | "output_text" | "message") | None => {
            if b.get("tool_calls").is_some() {
                BlockKind::ToolUse(s("name"))
            } else if b.get("role").and_then(Value::as_str) == Some("tool") {
                BlockKind::ToolResult(s("tool_call_id"))
            } else {
                BlockKind::Text
            }
        }
        Some("image" | "input_image" | "image_url") => BlockKind::Image,
        Some("tool_use" | "server_tool_use" | "mcp_tool_use") => BlockKind::ToolUse(s("name")),
        Some("function_call" | "custom_tool_call" | "local_shell_call") => BlockKind::ToolUse(s("name")),
        Some("tool_result" | "mcp_tool_result") => BlockKind::ToolResult(s("tool_use_id")),
        Some("function_call_output" | "custom_tool_call_output" | "local_shell_call_output") => {
            BlockKind::ToolResult(s("call_id"))
        }
        Some("thinking" | "redacted_thinking" | "reasoning") => BlockKind::Thinking,
        Some(other) => BlockKind::Other(other.to_string()),
    }
}

fn text_block(
    level: Level,
    index: usize,
    sub: Option<usize>,
    path: String,
    kind: BlockKind,
    role: Option<String>,
    v: &Value,
) -> Block {
    let breakpoint = v.get("cache_control").map(|cc| cc.get("ttl").and_then(Value::as_str).unwrap_or("5m").to_string());
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Object(o) if o.contains_key("cache_control") => {
            let mut o = o.clone();
            o.remove("cache_control");
            Value::Object(o).to_string()
        }
        other => other.to_string(),
    };
    let images = if kind == BlockKind::Image { 1 } else { count_images(&text) };
    Block { level, index, sub, path, tokens: estimate_tokens(&text), kind, role, text, breakpoint, images }
}

fn count_images(text: &str) -> usize {
    if !text.contains("image") {
        return 0;
    }
    ["\"type\":\"image\"", "\"type\":\"input_image\"", "\"type\":\"image_url\""]
        .iter()
        .map(|p| text.matches(p).count())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn anthropic_levels_follow_tools_system_messages() {
        let body = json!({"model": "claude-sonnet-4-5", "system": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
            "tools": [{"name": "Read", "input_schema": {}}], "messages": [{"role": "user", "content": "hi"}], "future_field": 1});
        let r = Request::parse(&body, None).unwrap();
        assert_eq!(r.provider, Provider::Anthropic);
        let levels: Vec<Level> = r.blocks.iter().map(|b| b.level).collect();
        assert_eq!(levels, [Level::Tools, Level::System, Level::Messages]);
        assert_eq!(r.blocks[1].breakpoint.as_deref(), Some("1h"));
        assert!(!r.blocks[1].text.contains("cache_control"));
        assert!(r.params.contains_key("future_field"), "unknown fields are kept");
    }

    #[test]
    fn captured_claude_code_request_parses() {
        let v: Value = serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/transcripts/captured/claude-api-request-after-hooks.json"
        )))
        .unwrap();
        let r = Request::parse(&v, None).unwrap();
        assert_eq!(r.model, "claude-opus-5-5");
        assert!(r.tool_names().len() > 50);
        assert!(r.blocks.iter().filter(|b| b.breakpoint.is_some()).count() >= 2);
        assert!(r.params.contains_key("thinking") && r.params.contains_key("output_config"));
    }

    #[test]
    fn openai_shapes_are_detected() {
        let chat = json!({"model": "gpt-4o", "messages": [{"role": "system", "content": "x"}, {"role": "user", "content": "y"}]});
        let r = Request::parse(&chat, None).unwrap();
        assert_eq!(r.provider, Provider::OpenAiChat);
        assert_eq!(r.blocks[0].level, Level::System);
        let resp = json!({"model": "gpt-5", "instructions": "x", "input": [{"type": "function_call", "name": "shell", "call_id": "c1", "arguments": "{}"}]});
        let r = Request::parse(&resp, None).unwrap();
        assert_eq!(r.provider, Provider::OpenAiResponses);
        assert_eq!(r.blocks[1].kind, BlockKind::ToolUse("shell".into()));
    }
}
