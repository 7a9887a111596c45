//! The tool list as served: the router's tools with the schemas cleaned of schemars' numeric
//! `format` values (`uint64`, `double`, …). Those are not JSON Schema formats; clients that
//! validate with ajv (Claude Code) print "unknown format ignored" for each of them on every start.

use rmcp::model::{JsonObject, Tool};
use serde_json::Value;
use std::sync::Arc;

/// Numeric `format` values schemars emits that JSON Schema does not define.
const NON_STANDARD: [&str; 14] = [
    "int", "int8", "int16", "int32", "int64", "int128", "uint", "uint8", "uint16", "uint32", "uint64", "uint128",
    "float", "double",
];

/// Every tool with clean input and output schemas, in the router's order.
pub fn tools() -> Vec<Tool> {
    let mut tools = super::router().list_all();
    for t in &mut tools {
        t.input_schema = Arc::new(clean(t.input_schema.as_ref()));
        t.output_schema = t.output_schema.as_deref().map(|s| Arc::new(clean(s)));
    }
    tools
}

fn clean(schema: &JsonObject) -> JsonObject {
    let mut v = Value::Object(schema.clone());
    strip(&mut v);
    match v {
        Value::Object(o) => o,
        _ => schema.clone(),
    }
}

fn strip(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if o.get("format").and_then(Value::as_str).is_some_and(|f| NON_STANDARD.contains(&f)) {
                o.remove("format");
            }
            o.values_mut().for_each(strip);
        }
        Value::Array(a) => a.iter_mut().for_each(strip),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn served_schemas_use_only_json_schema_formats_and_keep_properties_named_format() {
        let tools = tools();
        assert_eq!(tools.len(), super::super::router().list_all().len());
        for t in &tools {
            let text = format!("{} {:?}", Value::Object(t.input_schema.as_ref().clone()), t.output_schema);
            for f in NON_STANDARD {
                assert!(!text.contains(&format!("\"format\":\"{f}\"")), "{} still has format {f}", t.name);
            }
        }
        let mut v = serde_json::json!({"properties": {"format": {"type": "string"}, "n": {"type": "integer", "format": "uint64", "minimum": 0}}});
        strip(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"properties": {"format": {"type": "string"}, "n": {"type": "integer", "minimum": 0}}})
        );
    }
}
