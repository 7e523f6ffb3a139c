//! How a call carries its trail: the `trail` argument every tool's schema
//! offers and every result and actionable hint on a trail holds, and the
//! stand-in a policy renders in its place. The rest of the trails layer (the
//! store, handles, owners) is in [`super`]; this part is what the tools'
//! schemas, the pipeline and the sanitiser need of it.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::tools::HintOut;

/// The argument (and result field) that carries a trail.
pub const TRAIL_ARG: &str = "trail";
/// The result field that says why a sent trail was not used.
pub const NOTICE_FIELD: &str = "trail_notice";
/// What the policy's `render` sees where a hint's trail goes: a string of
/// a handle's length and alphabet, which the host replaces with the trail
/// once the text is clean. A policy never holds a live handle.
pub const STAND_IN: &str = "tr____________________________trail";

/// What a trail argument is, for agents reading the schemas.
const TRAIL_DOC: &str = "Optional. The trail this call continues: the `trail` of an earlier result (every actionable \
hint carries it). It keeps what this agent already saw, so the hints fit. Without one, a call in an MCP session \
uses the session's history, and a sessionless call starts a new trail. Opaque; it expires when unused for a while \
(an hour unless the server is told otherwise) or when many newer trails push it out: an expired trail is \
reported in `trail_notice` and the call runs on a new one.";

/// A tool's definition with the trail in its schemas: an optional `trail`
/// argument, and the `trail` and `trail_notice` a result may hold.
pub fn with_trail(tool: rmcp::model::Tool) -> rmcp::model::Tool {
    let mut tool = with_trail_argument(tool);
    if let Some(output) = &tool.output_schema {
        let mut output = (**output).clone();
        if let Some(Value::Object(props)) = output.get_mut("properties") {
            let doc = "The trail of this call: send it as the `trail` argument of the next call (the hints carry it).";
            props.insert(TRAIL_ARG.into(), json!({"type": "string", "description": doc}));
            let doc = "Why the `trail` this call sent was not used (changed, expired, not a string), when it was not.";
            props.insert(NOTICE_FIELD.into(), json!({"type": "string", "description": doc}));
        }
        tool.output_schema = Some(Arc::new(output));
    }
    tool
}

/// A tool's definition with the optional `trail` argument in its input
/// schema only: a proxy's backend's tool, whose results are the backend's
/// (a proxy carries the trail in the result's `_meta`).
pub fn with_trail_argument(mut tool: rmcp::model::Tool) -> rmcp::model::Tool {
    let mut input = (*tool.input_schema).clone();
    if let Some(Value::Object(props)) = input.get_mut("properties") {
        props.insert(TRAIL_ARG.into(), json!({"type": "string", "description": TRAIL_DOC}));
    }
    tool.input_schema = Arc::new(input);
    tool
}

/// Whether a `trail` argument stands for none: `null` or `""`.
pub fn is_none(sent: &Value) -> bool {
    sent.is_null() || sent.as_str() == Some("")
}

/// A call's arguments without the trail a hint carries: the question it
/// asks, for shapes, logs and the sanitiser's allow-list.
pub fn without_trail(args: &Map<String, Value>) -> Cow<'_, Map<String, Value>> {
    if !args.contains_key(TRAIL_ARG) {
        return Cow::Borrowed(args);
    }
    let mut args = args.clone();
    args.remove(TRAIL_ARG);
    Cow::Owned(args)
}

/// Puts the stand-in in every actionable hint, for the policy to render.
pub fn stand_in(hints: &mut [HintOut]) {
    for hint in hints.iter_mut().filter(|h| h.actionable) {
        hint.args.insert(TRAIL_ARG.into(), json!(STAND_IN));
    }
}

/// The actionable hints that carry a trail, without it: a call the policy
/// wrote in prose (a teaching message) is the hint without its trail.
pub fn untrailed(hints: &[HintOut]) -> Vec<(&str, Map<String, Value>)> {
    hints
        .iter()
        .filter(|h| h.actionable && h.args.contains_key(TRAIL_ARG))
        .map(|h| (h.tool.as_str(), without_trail(&h.args).into_owned()))
        .collect()
}

/// Puts the trail `handle` where the stand-in is (in the clean text and the
/// error message), in every actionable hint, and in the result.
pub fn fill(handle: &str, text: &mut String, structured: &mut Map<String, Value>, hints: &mut [HintOut]) {
    // The stand-in is as long as a handle and as plain: the clean text
    // stays clean with the trail in its place.
    *text = text.replace(STAND_IN, handle);
    if let Some(Value::Object(e)) = structured.get_mut("error")
        && let Some(Value::String(message)) = e.get_mut("message")
    {
        *message = message.replace(STAND_IN, handle);
    }
    for hint in hints.iter_mut().filter(|h| h.actionable) {
        hint.args.insert(TRAIL_ARG.into(), json!(handle));
    }
    structured.insert(TRAIL_ARG.into(), json!(handle));
}
