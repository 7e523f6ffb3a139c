//! The tools' definitions for `tools/list`: name, description, input and
//! output schemas (from the argument and result types) and annotations.
//! The `trail` every schema also carries is the trails layer's to add
//! ([`crate::trails::with_trail`]).

use std::sync::Arc;

use rmcp::model::{JsonObject, ToolAnnotations};
use schemars::JsonSchema;
use serde_json::{Value, json};

use super::Tool;
use super::args::{DescribeArgs, FindArgs, NeighborsArgs, ResolveArgs, SearchArgs};
use super::results::{DescribeResult, FindResult, HintOut, NeighborsResult, ResolveResult, SearchResult};

fn schema_of<T: JsonSchema>() -> JsonObject {
    // Inline subschemas: agents read these, and `$ref`s only get in the way.
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let mut schema = match serde_json::to_value(settings.into_generator().into_root_schema_for::<T>()) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    };
    schema.remove("$schema");
    schema
}

/// A tool's input schema: its arguments.
pub fn input_schema(tool: Tool) -> JsonObject {
    match tool {
        Tool::Resolve => schema_of::<ResolveArgs>(),
        Tool::Describe => schema_of::<DescribeArgs>(),
        Tool::Find => schema_of::<FindArgs>(),
        Tool::Search => schema_of::<SearchArgs>(),
        Tool::Neighbors => schema_of::<NeighborsArgs>(),
    }
}

/// A tool's output schema: its result and the `hints` every result carries.
pub fn output_schema(tool: Tool) -> JsonObject {
    let mut schema = match tool {
        Tool::Resolve => schema_of::<ResolveResult>(),
        Tool::Describe => schema_of::<DescribeResult>(),
        Tool::Find => schema_of::<FindResult>(),
        Tool::Search => schema_of::<SearchResult>(),
        Tool::Neighbors => schema_of::<NeighborsResult>(),
    };
    let mut hints = schema_of::<Vec<HintOut>>();
    hints.remove("title");
    hints.insert("description".into(), json!("Suggested next calls, best first: the single hint mechanism."));
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        props.insert("hints".into(), Value::Object(hints));
    }
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.push(json!("hints"));
    }
    schema
}

/// A tool's definition as `tools/list` serves it (without the trail).
pub fn definition(tool: Tool) -> rmcp::model::Tool {
    let read_only = ToolAnnotations::new().read_only(true).destructive(false).idempotent(true).open_world(false);
    rmcp::model::Tool::new(tool.name(), tool.description(), Arc::new(input_schema(tool)))
        .with_raw_output_schema(Arc::new(output_schema(tool)))
        .with_annotations(read_only)
}

/// Every tool's definition, in [`Tool::ALL`]'s order.
pub fn definitions() -> Vec<rmcp::model::Tool> {
    Tool::ALL.map(definition).into()
}

/// A tool as a 0.2.0 or later policy is told it (`catalogue`): name, description,
/// input schema and annotations, as `tools/list` shows them.
pub fn to_wit_tool(tool: &rmcp::model::Tool) -> crate::policy::WitTool {
    let annotations = tool.annotations.as_ref();
    crate::policy::WitTool {
        name: tool.name.to_string(),
        description: tool.description.as_deref().unwrap_or_default().to_owned(),
        input_schema: Value::Object((*tool.input_schema).clone()).to_string(),
        read_only: annotations.and_then(|a| a.read_only_hint),
        destructive: annotations.and_then(|a| a.destructive_hint),
        idempotent: annotations.and_then(|a| a.idempotent_hint),
    }
}

/// Signpost's own tools as a 0.2.0 or later policy is told them: one list for the
/// process, so every instance is told it once.
pub fn tool_set() -> &'static Arc<crate::policy::ToolSet> {
    static SET: std::sync::LazyLock<Arc<crate::policy::ToolSet>> =
        std::sync::LazyLock::new(|| crate::policy::ToolSet::new(definitions().iter().map(to_wit_tool).collect()));
    &SET
}
