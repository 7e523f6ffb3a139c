//! Hint validation: the one definition of "a hint an agent may see", used
//! for every response and by the self-check a new policy must pass.
//!
//! A hint survives when its tool exists and its pieces are bounded; an
//! actionable one must also validate against the tool's input JSON Schema
//! **and** parse as a working call on the graph (ids exist, edge types are
//! known), through the same [`tools::parse`] that runs real calls.

use std::collections::HashMap;

use serde_json::Value;

use crate::graph::Graph;
use crate::policy;
use crate::tools::{self, HintOut, StrictIds, TOOL_NAMES};

/// Most hints in one response, whatever the policy returns.
pub const MAX_HINTS: usize = 8;
/// Longest hint reason kept, in characters.
pub const MAX_REASON: usize = 200;
/// Longest serialized hint arguments kept, in bytes.
pub const MAX_HINT_ARGS: usize = 4096;

/// Compiled input schemas of the five tools.
pub struct HintValidator {
    schemas: HashMap<&'static str, jsonschema::Validator>,
}

impl HintValidator {
    /// Compiles the tools' input schemas.
    pub fn new() -> anyhow::Result<Self> {
        let mut schemas = HashMap::new();
        for (name, tool) in TOOL_NAMES.iter().zip(tools::definitions()) {
            let schema = Value::Object((*tool.input_schema).clone());
            let validator = jsonschema::validator_for(&schema)
                .map_err(|e| anyhow::anyhow!("input schema of {name} does not compile: {e}"))?;
            schemas.insert(*name, validator);
        }
        Ok(HintValidator { schemas })
    }

    /// Checks one hint against `graph`: the hint as shown, or why it is dropped.
    pub fn check(&self, graph: &Graph, hint: &policy::Hint) -> Result<HintOut, String> {
        let tool = TOOL_NAMES
            .iter()
            .find(|t| **t == hint.tool)
            .ok_or_else(|| format!("unknown tool `{}`", crate::clip(&hint.tool)))?;
        let reason = clean_line(&hint.reason, MAX_REASON);
        let args = match serde_json::from_str::<Value>(&hint.args) {
            Ok(Value::Object(map)) if hint.args.len() <= MAX_HINT_ARGS => Some(map),
            _ => None,
        };
        if !hint.actionable {
            return Ok(HintOut { tool: (*tool).to_owned(), args: args.unwrap_or_default(), actionable: false, reason });
        }
        let args =
            args.ok_or_else(|| format!("{tool}: args are not a JSON object of at most {MAX_HINT_ARGS} bytes"))?;
        let value = Value::Object(args);
        if let Some(schema) = self.schemas.get(tool)
            && let Some(err) = schema.iter_errors(&value).next()
        {
            return Err(format!("{tool} {}: does not match the input schema: {err}", crate::clip(&hint.args)));
        }
        let Value::Object(args) = value else { unreachable!("built from an object above") };
        tools::parse(graph, tool, &args, &mut StrictIds)
            .map_err(|e| format!("{tool} {}: not a working call: {}", crate::clip(&hint.args), e.message))?;
        Ok(HintOut { tool: (*tool).to_owned(), args, actionable: true, reason })
    }

    /// Keeps the valid hints (at most [`MAX_HINTS`], deduplicated), and
    /// returns how many were dropped.
    pub fn filter(&self, graph: &Graph, hints: Vec<policy::Hint>) -> (Vec<HintOut>, u64) {
        let mut out: Vec<HintOut> = Vec::with_capacity(hints.len().min(MAX_HINTS));
        let mut dropped = 0u64;
        for hint in hints {
            if out.len() == MAX_HINTS {
                dropped += 1;
                continue;
            }
            match self.check(graph, &hint) {
                Ok(h) => {
                    if !out.iter().any(|o| o.tool == h.tool && o.args == h.args && o.actionable == h.actionable) {
                        out.push(h);
                    }
                }
                Err(why) => {
                    dropped += 1;
                    tracing::debug!(why, "dropped an invalid hint");
                }
            }
        }
        (out, dropped)
    }
}

/// One line: control characters become spaces; at most `max` characters.
pub fn clean_line(s: &str, max: usize) -> String {
    let mut out: String = s.chars().take(max).map(|c| if c.is_control() { ' ' } else { c }).collect();
    if s.chars().nth(max).is_some() {
        out.pop();
        out.push('…');
    }
    out
}

/// Removes `→ next:` lines that do not render a validated actionable hint, so
/// an invalid call cannot reach the agent through the text either. A line is
/// kept when it reads `→ next: <tool> <JSON args>[ — reason]` and tool + args
/// (compared as JSON values, key order free) are one of `hints`.
pub fn only_valid_next_lines(text: &str, hints: &[HintOut]) -> String {
    const NEXT: &str = "→ next: ";
    let is_valid = |line: &str| -> bool {
        let Some(rest) = line.strip_prefix(NEXT) else { return true };
        let Some((tool, tail)) = rest.split_once(' ') else { return false };
        let mut stream = serde_json::Deserializer::from_str(tail).into_iter::<Value>();
        let Some(Ok(Value::Object(args))) = stream.next() else { return false };
        hints.iter().any(|h| h.actionable && h.tool == tool && h.args == args)
    };
    let mut out = String::with_capacity(text.len());
    for line in text.split('\n').filter(|l| is_valid(l)) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(line);
    }
    out
}

/// Hints as WIT records, for `render`.
pub fn to_wit(hints: &[HintOut]) -> Vec<policy::Hint> {
    hints
        .iter()
        .map(|h| policy::Hint {
            tool: h.tool.clone(),
            args: Value::Object(h.args.clone()).to_string(),
            actionable: h.actionable,
            reason: h.reason.clone(),
        })
        .collect()
}
