//! What refrain lists to an agent: a small default tool set with short descriptions and input
//! schemas that hold only what an agent fills in.
//!
//! Everything refrain lists is paid on every request of agents that send tool definitions in full
//! (Codex does): the name, the description and the input schema of each tool. So the default list
//! is the design's five tools plus `plan_feedback` (reporting an outcome cannot ride on the
//! others), each described in a sentence or two, with a hand-written input schema of the fields an
//! agent fills in. The full schemas (evaluation switches, policies, hook-only fields) stay what
//! the tools accept, and `server.tools = ["all"]` (or `refrain serve --tools all`) lists every tool
//! with them. Unlisted tools stay callable by name: the hooks and the CLI call them that way.
//! `definition_tokens` counts a list as an agent sends it; a test holds the default under
//! `BUDGET_TOKENS`.

use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};
use std::borrow::Cow;
use std::sync::Arc;

/// The most tokens everything refrain adds to a request by default may take: the listed tools'
/// names, descriptions and input schemas plus the server instructions (when sent).
pub const BUDGET_TOKENS: u64 = 1_200;

/// The tools listed by default, in the order they are listed (by name).
pub const DEFAULT: [&str; 6] =
    ["compact_preview", "explain_cache_break", "plan_feedback", "plan_lookup", "plan_store", "response_cache_get"];

/// What the agent reads at `initialize` (Claude Code adds it to the system prompt): when to call
/// which tool, in as few words as say it.
/// Short, since Claude Code pays it on every request even with its tools deferred: the tool
/// descriptions say when to call each, and the hooks say it again when it matters (a plan to take).
pub const INSTRUCTIONS: &str =
    "Stored plans: plan_lookup. Cached results: response_cache_get. Savings: refrain report, refrain dashboard.";

/// A listed tool's short description and input schema, replacing the full ones.
struct Short {
    name: &'static str,
    description: &'static str,
    input: fn() -> Value,
}

const SHORT: [Short; 6] = [
    Short {
        name: "compact_preview",
        description: "Preview what compacting a session would clear, tokens before and after, and the prompt-cache effect.",
        input: || {
            json!({"type": "object", "properties": {
                "transcript": {"type": "string", "description": "A Claude Code or Codex session file."},
                "messages": {"type": "array", "items": {"type": "object"}},
                "preset": {"type": "string", "enum": ["anthropic_clear_tool_uses", "claude_code_microcompact", "agentcache"]}
            }})
        },
    },
    Short {
        name: "explain_cache_break",
        description: "Explain why the prompt cache broke between two requests or in a session file: first divergence, causes, tokens and cost lost, fixes.",
        input: || {
            json!({"type": "object", "properties": {
                "before": {"type": "object", "description": "Earlier request body."},
                "after": {"type": "object", "description": "Later request body."},
                "transcript": {"type": "string", "description": "Or a session file's path."}
            }})
        },
    },
    Short {
        name: "plan_feedback",
        description: "Report whether a plan refrain gave you worked.",
        input: || {
            json!({"type": "object", "properties": {
                "plan_id": {"type": "string"},
                "outcome": {"type": "string", "enum": ["success", "failure"]},
                "reason": {"type": "string"},
                "accepted": {"type": "boolean", "description": "True if you took it as a suggestion."}
            }, "required": ["plan_id", "outcome"]})
        },
    },
    Short {
        name: "plan_lookup",
        description: "Find a stored plan for this kind of task: a hit gives filled steps; a miss may suggest plans, taken by calling again with plan_id.",
        input: || {
            json!({"type": "object", "properties": {
                "task": {"type": "string"},
                "context": {"type": "object", "description": "Values you know, by slot name."},
                "plan_id": {"type": "string"}
            }, "required": ["task"]})
        },
    },
    Short {
        name: "plan_store",
        description: "After a multi-step task, store the steps you ran for the next task of its kind.",
        input: || {
            json!({"type": "object", "properties": {
                "task": {"type": "string"},
                "trace": {"type": "object", "properties": {
                    "steps": {"type": "array", "items": {"type": "object", "properties": {
                        "tool": {"type": "string"}, "inputs": {"type": "object"}
                    }, "required": ["tool"]}},
                    "context": {"type": "object", "description": "The task's values by name."}
                }, "required": ["steps"]}
            }, "required": ["task", "trace"]})
        },
    },
    Short {
        name: "response_cache_get",
        description: "Before re-running a read-only tool (read, grep, web fetch), get its fresh cached result by exact args or by query meaning.",
        input: || {
            json!({"type": "object", "properties": {
                "tool": {"type": "string"},
                "args": {"type": "object"},
                "query": {"type": "string"}
            }, "required": ["tool"]})
        },
    },
];

/// Which tools to list: `default` (the six above), `all`, or tool names, in any mix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    all: bool,
    names: Vec<String>,
}

impl Selection {
    /// The default list.
    pub fn default_set() -> Selection {
        Selection { all: false, names: DEFAULT.iter().map(|s| s.to_string()).collect() }
    }

    /// A selection from `server.tools`; an unknown name is an error naming it and the known ones.
    pub fn parse(items: &[String]) -> Result<Selection, String> {
        let known: Vec<String> = super::router().list_all().into_iter().map(|t| t.name.to_string()).collect();
        let mut sel = Selection { all: false, names: Vec::new() };
        for item in items {
            match item.as_str() {
                "all" => sel.all = true,
                "default" => sel.names.extend(DEFAULT.iter().map(|s| s.to_string())),
                name if known.iter().any(|k| k == name) => sel.names.push(name.to_string()),
                other => {
                    return Err(format!(
                        "server.tools lists `{other}`, which is not a refrain tool; use `default`, `all` or any of: {}",
                        known.join(", ")
                    ));
                }
            }
        }
        if items.is_empty() {
            return Ok(Selection::default_set());
        }
        Ok(sel)
    }
}

/// The tools as listed to agents for a selection, sorted by name. A default tool keeps its short
/// description and schema unless every tool is listed (`all`), which lists the full ones.
pub fn listed(selection: &Selection) -> Vec<Tool> {
    let mut tools: Vec<Tool> = super::schema::tools()
        .into_iter()
        .filter(|t| selection.all || selection.names.iter().any(|n| n == t.name.as_ref()))
        .map(|t| if selection.all { t } else { shorten(t) })
        .collect();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    tools
}

fn shorten(mut tool: Tool) -> Tool {
    if let Some(s) = SHORT.iter().find(|s| s.name == tool.name) {
        tool.description = Some(Cow::Borrowed(s.description));
        if let Value::Object(o) = (s.input)() {
            tool.input_schema = Arc::new(o);
        }
    }
    tool.output_schema = tool.output_schema.map(|o| {
        let mut v = Value::Object(JsonObject::clone(&o));
        undocument(&mut v, false);
        match v {
            Value::Object(o) => Arc::new(o),
            _ => o,
        }
    });
    tool
}

/// Drops the prose (`description`, `title`) from a schema, keeping its structure: the output
/// schema stays correct, and `tools/list` stays small. A property that is itself named
/// `description` or `title` (a key of a `properties` map) is kept.
fn undocument(v: &mut Value, in_properties: bool) {
    match v {
        Value::Object(o) => {
            if !in_properties {
                o.retain(|k, v| !(matches!(k.as_str(), "description" | "title") && v.is_string()));
            }
            for (k, child) in o.iter_mut() {
                undocument(child, !in_properties && k == "properties");
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|c| undocument(c, false)),
        _ => {}
    }
}

/// The tool definitions as an agent sends them to its model: each tool's name, description and
/// input schema (the output schema and annotations stay with the client).
pub fn as_sent(tools: &[Tool]) -> String {
    let defs: Vec<Value> = tools
        .iter()
        .map(|t| {
            json!({"name": t.name, "description": t.description.as_deref().unwrap_or(""),
                   "input_schema": Value::Object(JsonObject::clone(&t.input_schema))})
        })
        .collect();
    Value::Array(defs).to_string()
}

/// Tokens of a tool list as an agent sends it.
pub fn definition_tokens(tools: &[Tool]) -> u64 {
    crate::tokens::count(&as_sent(tools))
}

/// Tokens of a tool list as Claude Code sends it by default: MCP tools are deferred behind its
/// ToolSearch tool, so each request names them (`mcp__refrain__<tool>`); a schema enters the
/// context only when the model searches for the tool.
pub fn deferred_tokens(tools: &[Tool]) -> u64 {
    let names: Vec<String> = tools.iter().map(|t| format!("mcp__refrain__{}", t.name)).collect();
    crate::tokens::count(&names.join("\n"))
}

/// Tokens of the server instructions, when `server.instructions` sends them.
pub fn instruction_tokens(server: &crate::config::ServerConfig) -> u64 {
    if server.instructions { crate::tokens::count(INSTRUCTIONS) } else { 0 }
}

/// What refrain's tool list costs one request of `agent` (a hook's agent name), for the
/// configured selection and instructions: Claude Code defers MCP tools, every other agent sends
/// them in full; both send the instructions. Counted once per process and selection.
pub fn per_request_tokens(agent: &str, server: &crate::config::ServerConfig) -> u64 {
    let selection = server.tools.as_slice();
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    /// Per selection: (deferred, full) tokens.
    type Costs = HashMap<Vec<String>, (u64, u64)>;
    static COSTS: OnceLock<Mutex<Costs>> = OnceLock::new();
    let costs = COSTS.get_or_init(Default::default);
    let cached = costs.lock().ok().and_then(|c| c.get(selection).copied());
    let (deferred, full) = cached.unwrap_or_else(|| {
        let sel = Selection::parse(selection).unwrap_or_else(|_| Selection::default_set());
        let tools = listed(&sel);
        let pair = (deferred_tokens(&tools), definition_tokens(&tools));
        if let Ok(mut c) = costs.lock() {
            c.insert(selection.to_vec(), pair);
        }
        pair
    });
    instruction_tokens(server) + if agent == "claude-code" { deferred } else { full }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(name: &str) -> Tool {
        super::super::schema::tools().into_iter().find(|t| t.name == name).expect("tool exists")
    }

    #[test]
    fn the_default_list_costs_at_most_the_budget_with_a_real_tokenizer() {
        let tools = listed(&Selection::default_set());
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, DEFAULT.to_vec());
        let on = crate::config::ServerConfig { instructions: true, ..Default::default() };
        let tokens = definition_tokens(&tools) + instruction_tokens(&on);
        eprintln!("default tool list: {tokens} tokens ({})", crate::tokens::TOKENIZER);
        for t in &tools {
            eprintln!("  {}: {}", t.name, crate::tokens::count(&as_sent(std::slice::from_ref(t))));
        }
        assert!(tokens <= BUDGET_TOKENS, "the default tool list takes {tokens} tokens, over {BUDGET_TOKENS}");
        let all = definition_tokens(&listed(&Selection::parse(&["all".into()]).expect("all")));
        assert!(
            all > 3 * tokens,
            "listing every tool in full ({all}) should cost far more than the default ({tokens})"
        );
    }

    #[test]
    fn short_schemas_name_only_fields_the_tools_accept_and_keep_what_they_require() {
        for s in &SHORT {
            let full = full(s.name);
            let props = full.input_schema.get("properties").and_then(Value::as_object).expect("properties");
            let short = (s.input)();
            for (k, _) in short["properties"].as_object().expect("short properties") {
                assert!(props.contains_key(k), "{}: `{k}` is listed but the tool does not accept it", s.name);
            }
            let short_req: Vec<&str> =
                short["required"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
            for r in full.input_schema.get("required").and_then(Value::as_array).into_iter().flatten() {
                let r = r.as_str().expect("required name");
                assert!(short_req.contains(&r), "{}: `{r}` is required but the short schema does not say so", s.name);
            }
            let words = s.description.split_whitespace().count();
            assert!(words <= 40, "{}: a {words}-word description is not a sentence or two", s.name);
        }
    }

    #[test]
    fn output_schemas_lose_their_prose_but_keep_properties_named_like_it() {
        let mut v = json!({"title": "X", "description": "d", "type": "object", "properties": {
            "description": {"type": "string", "description": "the text"},
            "n": {"type": "integer", "description": "a count"}
        }});
        undocument(&mut v, false);
        assert_eq!(
            v,
            json!({"type": "object", "properties": {"description": {"type": "string"}, "n": {"type": "integer"}}})
        );
        let listed = listed(&Selection::default_set());
        let full = super::super::schema::tools();
        for t in &listed {
            let f = full.iter().find(|f| f.name == t.name).expect("same tool");
            let (short, long) = (
                serde_json::to_string(&t.output_schema).expect("json"),
                serde_json::to_string(&f.output_schema).expect("json"),
            );
            assert!(short.len() < long.len(), "{}: the listed output schema is not shorter", t.name);
        }
    }

    #[test]
    fn selections_parse_names_default_and_all_and_refuse_unknown_names() {
        assert_eq!(Selection::parse(&[]).expect("empty"), Selection::default_set());
        let s = Selection::parse(&["default".into(), "cache_stats".into()]).expect("mix");
        let listed_names: Vec<String> = listed(&s).iter().map(|t| t.name.to_string()).collect();
        assert!(listed_names.contains(&"cache_stats".to_string()) && listed_names.contains(&"plan_lookup".to_string()));
        assert_eq!(
            listed(&Selection::parse(&["all".into()]).expect("all")).len(),
            super::super::router().list_all().len()
        );
        let e = Selection::parse(&["cache_stat".into()]).expect_err("unknown");
        assert!(e.contains("cache_stat") && e.contains("cache_stats"), "{e}");
    }
}
