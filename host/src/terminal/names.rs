//! Names where ids belong on the command line: each that names exactly
//! one symbol becomes its id ([`resolve_names`]).

use serde_json::{Map, Value};

use crate::graph::parse_id;
use crate::tools::{IdParam, Tool};

/// A name given where an id belongs, and the id it names.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Named {
    /// What was typed.
    pub name: String,
    /// The symbol's id.
    pub id: String,
    /// The symbol: its kind and qualified name.
    pub symbol: String,
}

/// A name that names several symbols: the candidates, best first.
#[derive(Debug, Clone)]
pub struct Ambiguous {
    /// What was typed.
    pub name: String,
    /// The candidates (`Symbol` records).
    pub candidates: Vec<Value>,
}

/// Replaces each name in an id argument (`describe`'s `id`, `neighbors`'
/// `ids`) that names exactly one symbol with its id, and says which. A
/// string that is an id, or that names nothing, is left for the tool to
/// judge (it teaches); one that names several symbols is refused.
/// `resolve` makes the `resolve` call (in the command's session, so the
/// policy sees the id as found) and gives its result.
pub fn resolve_names(
    tool: Tool,
    args: &mut Map<String, Value>,
    mut resolve: impl FnMut(&str) -> Option<Value>,
) -> Result<Vec<Named>, Ambiguous> {
    let Some(key) = tool.id_param().map(IdParam::name) else { return Ok(Vec::new()) };
    let mut named = Vec::new();
    let mut swap = |s: &mut String| -> Result<(), Ambiguous> {
        if parse_id(s).is_some() || s.trim().is_empty() {
            return Ok(());
        }
        let Some(mut result) = resolve(s) else { return Ok(()) };
        let candidates = match result.get_mut("candidates") {
            Some(Value::Array(c)) => std::mem::take(c),
            _ => Vec::new(),
        };
        match (result["status"].as_str(), candidates.first()) {
            (Some("one"), Some(c)) => {
                let Some(id) = c["id"].as_str().map(str::to_owned) else { return Ok(()) };
                let symbol = format!("{} {}", c["kind"].as_str().unwrap_or("?"), c["fqn"].as_str().unwrap_or("?"));
                named.push(Named { name: std::mem::replace(s, id.clone()), id, symbol });
                Ok(())
            }
            (Some("many"), _) => Err(Ambiguous { name: s.clone(), candidates }),
            _ => Ok(()),
        }
    };
    match args.get_mut(key) {
        Some(Value::String(s)) => swap(s)?,
        Some(Value::Array(items)) => {
            for item in items {
                if let Value::String(s) = item {
                    swap(s)?;
                }
            }
        }
        _ => {}
    }
    Ok(named)
}
