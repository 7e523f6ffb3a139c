//! Hint validation: the one definition of "a hint an agent may see", used
//! for every response and so by the self-check a new policy must pass.
//!
//! A hint survives when its tool exists and its pieces are bounded; an
//! actionable one must also validate against the tool's input JSON Schema
//! **and** parse as a working call on the graph (ids exist, edge types are
//! known), through the same [`tools::parse`] that runs real calls. What the
//! agent's *text* may show is decided from the survivors by
//! [`crate::sanitize`].

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::graph::Graph;
use crate::policy;
use crate::sanitize;
use crate::tools::{self, CallShape, HintOut, StrictIds, Tool};
use crate::trails::carry;

/// Most hints in one response, whatever the policy returns.
pub const MAX_HINTS: usize = 8;
/// Longest hint reason kept, in characters.
pub const MAX_REASON: usize = 200;
/// Longest serialized hint arguments kept, in bytes.
pub const MAX_HINT_ARGS: usize = 4096;
/// Hints looked at per response; any beyond are dropped unread (a policy
/// returning thousands must not cost thousands of validations).
pub const MAX_CONSIDERED: usize = 32;

/// Why a hint was dropped. Every text it holds that the policy chose is
/// escaped and bounded: it goes to the log and the self-check's report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// The hint names no tool of this server.
    #[error("unknown tool `{tool}`")]
    UnknownTool {
        /// The name, escaped.
        tool: String,
    },
    /// An actionable hint whose arguments are not a bounded JSON object.
    #[error("{tool}: args are not a JSON object of at most {MAX_HINT_ARGS} bytes")]
    NotAnObject {
        /// The tool.
        tool: String,
    },
    /// Arguments that break the tool's input schema.
    #[error("{tool} {args}: does not match the input schema: {why}")]
    Schema {
        /// The tool.
        tool: String,
        /// The arguments, escaped.
        args: String,
        /// The first schema error, escaped.
        why: String,
    },
    /// Arguments that fit the schema but do not work on this graph
    /// (an unknown id, an edge type it lacks).
    #[error("{tool} {args}: not a working call: {why}")]
    NotWorking {
        /// The tool.
        tool: String,
        /// The arguments, escaped.
        args: String,
        /// The tool's own error, escaped.
        why: String,
    },
    /// A value at an argument the policy declared a reference
    /// (`tool-rules.references`) that the agent was not shown.
    #[error(
        "{tool}: `{value}` at `{path}` names something the agent was not shown (not in what it sent, the result or its session's recent results)"
    )]
    Unshown {
        /// The tool.
        tool: String,
        /// The reference path.
        path: String,
        /// The value, escaped.
        value: String,
    },
}

/// Compiled input schemas of the five tools.
pub struct HintValidator {
    schemas: HashMap<Tool, jsonschema::Validator>,
}

impl HintValidator {
    /// Compiles the tools' input schemas.
    pub fn new() -> anyhow::Result<Self> {
        let mut schemas = HashMap::new();
        for tool in Tool::ALL {
            // The schema agents see, `trail` and all.
            let schema = Value::Object((*carry::with_trail(tools::definition(tool)).input_schema).clone());
            let validator = jsonschema::validator_for(&schema)
                .map_err(|e| anyhow::anyhow!("input schema of {tool} does not compile: {e}"))?;
            schemas.insert(tool, validator);
        }
        Ok(HintValidator { schemas })
    }

    /// Checks one hint against `graph`: the hint as shown, or why it is dropped.
    pub fn check(&self, graph: &Graph, hint: &policy::Hint) -> Result<HintOut, Rejection> {
        let tool = Tool::from_name(&hint.tool)
            .ok_or_else(|| Rejection::UnknownTool { tool: sanitize::escape(&hint.tool, 40) })?;
        let vocab = sanitize::Vocabulary::signpost();
        let Some(args) = checked(tool.name(), hint, self.schemas.get(&tool))? else {
            return Ok(HintOut { tool: tool.name().to_owned(), ..read(hint, vocab) });
        };
        let parsed = tools::parse(graph, tool, &args, &mut StrictIds).map_err(|e| Rejection::NotWorking {
            tool: tool.name().to_owned(),
            args: sanitize::escape(&hint.args, 120),
            why: sanitize::escape(&e.message, 200),
        })?;
        let shape = Some(CallShape::of(graph, &parsed));
        Ok(HintOut { tool: tool.name().to_owned(), args, actionable: true, reason: reason(hint, vocab), shape })
    }

    /// Keeps the valid hints (at most [`MAX_HINTS`], deduplicated, from the
    /// first [`MAX_CONSIDERED`]); every other one is dropped, and `why`
    /// hears why for each invalid one.
    pub fn filter(&self, graph: &Graph, hints: Vec<policy::Hint>, why: impl FnMut(String)) -> Filtered {
        filter(hints, |hint| self.check(graph, hint), why)
    }
}

/// A hint's reason as the agent may read it: one bounded line, and empty
/// when it shows a call or a hint marker (a reason explains; a call inside
/// it, or a hint line of its own, would reach the agent unvalidated).
pub fn reason(hint: &policy::Hint, vocab: &sanitize::Vocabulary) -> String {
    Some(sanitize::line(&hint.reason, MAX_REASON))
        .filter(|r| !sanitize::has_call_to(r, vocab) && !sanitize::has_hint_marker(r))
        .unwrap_or_default()
}

/// A hint that is not actionable, as shown: its arguments when they are a
/// bounded object, and its reason.
pub fn read(hint: &policy::Hint, vocab: &sanitize::Vocabulary) -> HintOut {
    let args = match serde_json::from_str::<Value>(&hint.args) {
        Ok(Value::Object(map)) if hint.args.len() <= MAX_HINT_ARGS => map,
        _ => Map::new(),
    };
    HintOut { tool: hint.tool.clone(), args, actionable: false, reason: reason(hint, vocab), shape: None }
}

/// The arguments of an actionable hint to `tool` once they are a bounded
/// JSON object that validates against `schema`; `None` for a hint that is
/// not actionable (nothing to check).
pub fn checked(
    tool: &str,
    hint: &policy::Hint,
    schema: Option<&jsonschema::Validator>,
) -> Result<Option<Map<String, Value>>, Rejection> {
    if !hint.actionable {
        return Ok(None);
    }
    let args = match serde_json::from_str::<Value>(&hint.args) {
        Ok(value @ Value::Object(_)) if hint.args.len() <= MAX_HINT_ARGS => value,
        _ => return Err(Rejection::NotAnObject { tool: tool.to_owned() }),
    };
    // Most hints are valid: the quick yes first, the first error only for a no.
    let invalid = schema.filter(|schema| !schema.is_valid(&args));
    if let Some(err) = invalid.and_then(|schema| schema.iter_errors(&args).next()) {
        return Err(Rejection::Schema {
            tool: tool.to_owned(),
            args: sanitize::escape(&hint.args, 120),
            why: sanitize::escape(&err.to_string(), 200),
        });
    }
    let Value::Object(args) = args else { unreachable!("matched as an object above") };
    Ok(Some(args))
}

/// Keeps the hints `check` accepts (at most [`MAX_HINTS`], deduplicated,
/// from the first [`MAX_CONSIDERED`]); every other one is dropped, and
/// `why` hears why for each invalid one. The one loop for Signpost's tools
/// and a proxy's.
pub fn filter(
    hints: Vec<policy::Hint>,
    check: impl Fn(&policy::Hint) -> Result<HintOut, Rejection>,
    mut why: impl FnMut(String),
) -> Filtered {
    let mut out: Vec<HintOut> = Vec::with_capacity(hints.len().min(MAX_HINTS));
    let mut dropped = 0u64;
    let total = hints.len();
    if total > MAX_CONSIDERED {
        dropped += (total - MAX_CONSIDERED) as u64;
        why(format!("{total} hints in one response; only the first {MAX_CONSIDERED} are read"));
    }
    for hint in hints.into_iter().take(MAX_CONSIDERED) {
        if out.len() == MAX_HINTS {
            dropped += 1;
            continue;
        }
        match check(&hint) {
            Ok(h) => {
                if !out.iter().any(|o| o.tool == h.tool && o.args == h.args && o.actionable == h.actionable) {
                    out.push(h);
                }
            }
            Err(reason) => {
                dropped += 1;
                why(reason.to_string());
            }
        }
    }
    Filtered { hints: out, dropped }
}

/// The hints that survived validation, and how many did not.
#[derive(Debug, Default)]
pub struct Filtered {
    /// Valid hints, in the policy's order.
    pub hints: Vec<HintOut>,
    /// Hints dropped.
    pub dropped: u64,
}

/// Hints as WIT records, for `render`.
pub fn to_wit(hints: &[HintOut]) -> Vec<policy::Hint> {
    hints
        .iter()
        .map(|h| policy::Hint {
            tool: h.tool.clone(),
            args: serde_json::to_string(&h.args).unwrap_or_default(),
            actionable: h.actionable,
            reason: h.reason.clone(),
        })
        .collect()
}
