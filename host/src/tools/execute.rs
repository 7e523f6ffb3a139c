//! Running a parsed call on the graph: the structured result, paged and
//! kept under [`MAX_RESULT_BYTES`].

use serde::Serialize;
use serde_json::{Value, json};

use super::parse::{ErrorKind, Parsed, ToolError};
use super::results::{
    DescribeResult, FindResult, Neighbor, NeighborsResult, ResolveResult, ResolveStatus, Scored, SearchResult, Symbol,
};
use super::{MAX_CANDIDATES, MAX_DOC_CHARS, MAX_RESULT_BYTES};
use crate::graph::{Direction, Graph, NodeIx, query, search};

fn to_value<T: Serialize>(v: &T) -> Result<Value, ToolError> {
    serde_json::to_value(v).map_err(|e| ToolError { kind: ErrorKind::Internal, message: e.to_string(), example: None })
}

/// Shortens a paged result to [`MAX_RESULT_BYTES`] (at least one result
/// stays), setting `limit` to the size used so the next page continues
/// where this one stops.
fn fit_page(mut v: Value) -> Value {
    let size = |x: &Value| serde_json::to_vec(x).map_or(0, |b| b.len());
    let whole = size(&v);
    if whole <= MAX_RESULT_BYTES {
        return v;
    }
    if let Some(results) = v.get_mut("results").and_then(Value::as_array_mut) {
        let sizes: Vec<usize> = results.iter().map(|r| size(r) + 1).collect();
        let mut used = whole - sizes.iter().sum::<usize>();
        let keep = sizes.iter().take_while(|&&s| {
            used += s;
            used <= MAX_RESULT_BYTES
        });
        let keep = keep.count().max(1);
        results.truncate(keep);
        v["limit"] = json!(keep);
    }
    v
}

/// At most [`MAX_DOC_CHARS`] characters, with how many were left out.
fn clip_doc(s: &mut String) {
    if let Some((cut, _)) = s.char_indices().nth(MAX_DOC_CHARS) {
        let more = s[cut..].chars().count();
        s.truncate(cut);
        s.push_str(&format!("… ({more} more characters)"));
    }
}

fn page<T>(items: Vec<T>, limit: u32, offset: u32) -> Vec<T> {
    items.into_iter().skip(offset as usize).take(limit as usize).collect()
}

/// Runs a parsed call: the structured result.
pub fn execute(graph: &Graph, call: Parsed) -> Result<Value, ToolError> {
    match call {
        Parsed::Resolve(a) => {
            let (hits, total) = query::resolve(graph, &a.identifier, a.kind.as_deref(), MAX_CANDIDATES);
            let status = match total {
                0 => ResolveStatus::None,
                1 => ResolveStatus::One,
                _ => ResolveStatus::Many,
            };
            to_value(&ResolveResult {
                status,
                identifier: a.identifier.trim().to_owned(),
                kind: a.kind.as_deref().map(str::trim).filter(|k| !k.is_empty()).map(str::to_owned),
                candidates: hits
                    .iter()
                    .map(|&ix| {
                        let n = graph.node(ix);
                        let mut symbol = Symbol::from(n);
                        if hits.iter().any(|&o| o != ix && graph.node(o).fqn() == n.fqn()) {
                            symbol.signature = crate::clip(n.signature());
                        }
                        symbol
                    })
                    .collect(),
            })
        }
        Parsed::Describe(ix) => {
            let mut record = graph.node(ix).to_node();
            clip_doc(&mut record.doc);
            clip_doc(&mut record.signature);
            let unbound_calls = unbound_calls(graph, &[ix]);
            let generated = signpost_treesitter::walk::generated_name(record.file.rsplit('/').next().unwrap_or(""));
            to_value(&DescribeResult {
                record,
                edge_summary: graph.edge_summary(&[ix]),
                stale: false,
                generated,
                unbound_calls,
                read_in_part: read_in_part(graph, ix),
            })
        }
        Parsed::Find(a) => {
            let filter = query::Filter {
                kind: a.kind.as_deref(),
                role: a.role.as_deref(),
                name: a.name.as_deref(),
                path: a.path.as_deref(),
            };
            let hits = query::find(graph, &filter);
            let total = hits.len() as u64;
            let results = page(hits, a.limit, a.offset).into_iter().map(|ix| Symbol::from(graph.node(ix))).collect();
            to_value(&FindResult { results, total, limit: a.limit, offset: a.offset }).map(fit_page)
        }
        Parsed::Search(a) => {
            let (total, scored) = search::top(graph, &a.query, a.offset as usize + a.limit as usize);
            let total = total as u64;
            let results = page(scored, a.limit, a.offset)
                .into_iter()
                .map(|(ix, score)| Scored { symbol: Symbol::from(graph.node(ix)), score })
                .collect();
            to_value(&SearchResult { query: a.query, results, total, limit: a.limit, offset: a.offset }).map(fit_page)
        }
        Parsed::Neighbors { origins, direction, keys, absent, limit, offset } => {
            // Count every (origin, key) group; materialise only the groups
            // the page reaches, so a hub with 100,000 callers costs a page.
            let (start, end) = (offset as usize, offset as usize + limit as usize);
            let mut total = 0usize;
            let mut window = Vec::new();
            for &o in &origins {
                for (key, parsed) in &keys {
                    // A composed key is walked to be counted; that walk
                    // serves the page too.
                    let mut walked = (!parsed.is_single()).then(|| graph.walk(o, direction, parsed));
                    let n = walked.as_ref().map_or_else(|| graph.walk_len(o, direction, parsed), Vec::len);
                    if total < end && total + n > start {
                        let walked = walked.take().unwrap_or_else(|| graph.walk(o, direction, parsed));
                        let from = start.saturating_sub(total);
                        let to = (end - total).min(walked.len());
                        window.extend(walked[from.min(to)..to].iter().map(|&other| (o, key, parsed, other)));
                    }
                    total += n;
                }
            }
            let available = (total == 0).then(|| graph.edge_summary(&origins));
            let results = window
                .into_iter()
                .map(|(o, key, parsed, other)| Neighbor {
                    origin: graph.node(o).id(),
                    edge: key.clone(),
                    derived: graph.step_derivation(o, direction, parsed, other),
                    other: Symbol::from(graph.node(other)),
                })
                .collect();
            let callers = direction == Direction::In && keys.iter().any(|(k, _)| k == "CALLS");
            let unbound_calls = if callers { unbound_calls(graph, &origins) } else { 0 };
            to_value(&NeighborsResult {
                unbound_calls,
                ids: origins.iter().map(|&o| graph.node(o).id()).collect(),
                direction,
                edge_types: keys.into_iter().map(|(k, _)| k).collect(),
                results,
                total: total as u64,
                limit,
                offset,
                available,
                absent_edge_types: absent,
            })
            .map(fit_page)
        }
    }
}

/// Most files read in part a `describe` names.
const READ_IN_PART_SHOWN: usize = 20;

/// The file of `ix`, and of what it declares (a package's files), where
/// the indexer could read only in part.
fn read_in_part(graph: &Graph, ix: NodeIx) -> Vec<super::ReadInPart> {
    if graph.unread().is_empty() {
        return Vec::new();
    }
    let declares = graph.parse_edge_key("DECLARES").ok().flatten();
    let members = declares.map(|key| graph.walk(ix, Direction::Out, &key)).unwrap_or_default();
    let mut files: Vec<&str> =
        std::iter::once(ix).chain(members).map(|n| graph.node(n).file()).filter(|f| !f.is_empty()).collect();
    files.sort_unstable();
    files.dedup();
    files
        .into_iter()
        .filter_map(|f| Some(super::ReadInPart { file: f.to_owned(), from_line: graph.unread_from(f)? }))
        .take(READ_IN_PART_SHOWN)
        .collect()
}

/// Call sites named like the callables among `nodes` that name resolution
/// could not bind to one definition (each name counted once).
fn unbound_calls(graph: &Graph, nodes: &[NodeIx]) -> u32 {
    let mut names: Vec<&str> = nodes
        .iter()
        .map(|&n| graph.node(n))
        .filter(|n| matches!(n.kind(), "method" | "function" | "constructor" | "macro"))
        .map(|n| n.name())
        .collect();
    names.sort_unstable();
    names.dedup();
    names.iter().map(|n| graph.unresolved_calls(n)).fold(0u32, u32::saturating_add)
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;
    use crate::tools::{ErrorKind, StrictIds, Tool, ToolError, parse};

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn run(graph: &Graph, tool: Tool, a: Value) -> Result<Value, ToolError> {
        execute(graph, parse(graph, tool, &args(a), &mut StrictIds)?)
    }

    #[test]
    fn resolve_tiers_and_kinds() {
        let g = Graph::sample();
        let r = run(&g, Tool::Resolve, json!({"identifier": "OrderService"})).unwrap_or_default();
        assert_eq!(r["status"], "one");
        let r = run(&g, Tool::Resolve, json!({"identifier": "validate"})).unwrap_or_default();
        assert_eq!(r["status"], "many");
        let r = run(&g, Tool::Resolve, json!({"identifier": "OrderService.placeOrder"})).unwrap_or_default();
        assert_eq!(r["status"], "one", "{r}");
        let r = run(&g, Tool::Resolve, json!({"identifier": "placeOrder", "kind": "route"})).unwrap_or_default();
        assert_eq!(r["status"], "none");
    }

    #[test]
    fn neighbors_follow_composed_keys() {
        let g = Graph::sample();
        let ctrl = run(&g, Tool::Resolve, json!({"identifier": "OrderController"})).unwrap_or_default();
        let id = ctrl["candidates"][0]["id"].clone();
        let r = run(&g, Tool::Neighbors, json!({"ids": [id], "direction": "out", "edge_types": ["declares.exposes"]}))
            .unwrap_or_default();
        assert_eq!(r["total"], 4, "{r}");
        assert!(r["results"].as_array().into_iter().flatten().all(|n| n["other"]["kind"] == "route"));
        let d = run(&g, Tool::Describe, json!({"id": id})).unwrap_or_default();
        assert_eq!(d["edge_summary"]["out"]["DECLARES.EXPOSES"], 4);
    }

    #[test]
    fn bad_arguments_teach() {
        let g = Graph::sample();
        let id = g.node(0).id();
        let e =
            run(&g, Tool::Neighbors, json!({"ids": [id], "direction": "out", "edge_types": ["CALLZ"]})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadArgument);
        assert!(e.message.contains("CALLS"), "{}", e.message);
        assert_eq!(e.example, Some(json!({"ids": [id], "direction": "out", "edge_types": ["CALLS"]})));
        let e = run(&g, Tool::Find, json!({"limit": 0})).unwrap_err();
        assert_eq!(e.example, Some(json!({"limit": 1})));
        let e = run(&g, Tool::Neighbors, json!({"ids": [id], "direction": "sideways", "edge_types": ["CALLS"]}))
            .unwrap_err();
        assert!(e.message.contains("sideways"), "{}", e.message);
        let e = run(&g, Tool::Describe, json!({"id": "0".repeat(40)})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::UnknownId);
        let e = run(&g, Tool::Find, json!({"nme": "x"})).unwrap_err();
        assert!(e.message.contains("unknown field `nme`"), "{}", e.message);
        // A misspelt type is corrected to its nearest, never to an unrelated one.
        let e = run(&g, Tool::Neighbors, json!({"ids": [id], "direction": "in", "edge_types": ["OVERIDES", "FOOBAR"]}))
            .unwrap_err();
        assert_eq!(e.example, Some(json!({"ids": [id], "direction": "in", "edge_types": ["OVERRIDES"]})));
        let e =
            run(&g, Tool::Neighbors, json!({"ids": [id], "direction": "in", "edge_types": ["FOOBAR"]})).unwrap_err();
        assert_eq!(e.example, None, "{e:?}");
        // A kind or role the graph lacks lists those it has.
        let e = run(&g, Tool::Find, json!({"kind": "clas"})).unwrap_err();
        assert!(e.message.contains("no symbol of kind `clas`") && e.message.contains("interface"), "{}", e.message);
        assert_eq!(e.example, Some(json!({"kind": "class"})));
        let e = run(&g, Tool::Find, json!({"kind": "trait", "name": "order"})).unwrap_err();
        assert!(e.message.contains("its kinds: class,"), "{}", e.message);
        let e = run(&g, Tool::Find, json!({"role": "wizard"})).unwrap_err();
        assert!(e.message.contains("its roles:") && e.message.contains("controller"), "{}", e.message);
        assert!(run(&g, Tool::Find, json!({"kind": "CLASS"})).is_ok());
    }

    #[test]
    fn an_edge_type_the_graph_lacks_is_an_empty_answer() {
        // A graph whose indexer found no override: OVERRIDES is a question
        // with an empty answer, OVERRIDEZ a mistake.
        let id = |n: u8| format!("{n:040x}");
        let doc = json!({"nodes": [
            {"id": id(1), "kind": "method", "name": "a", "fqn": "x.a"},
            {"id": id(2), "kind": "method", "name": "b", "fqn": "x.b"},
        ], "edges": [{"src": id(1), "dst": id(2), "type": "CALLS"}]});
        let g = Graph::from_json(&doc.to_string()).unwrap_or_else(|e| panic!("{e}"));
        let r =
            run(&g, Tool::Neighbors, json!({"ids": [id(1)], "direction": "out", "edge_types": ["overrides", "CALLS"]}))
                .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(r["total"], 1, "{r}");
        assert_eq!(r["absent_edge_types"], json!(["OVERRIDES"]), "{r}");
        assert_eq!(r["edge_types"], json!(["CALLS"]), "{r}");
        let r =
            run(&g, Tool::Neighbors, json!({"ids": [id(1)], "direction": "in", "edge_types": ["EXTENDS.OVERRIDES"]}))
                .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!((r["total"].as_u64(), r["absent_edge_types"].clone()), (Some(0), json!(["EXTENDS.OVERRIDES"])));
        let e = run(&g, Tool::Neighbors, json!({"ids": [id(1)], "direction": "in", "edge_types": ["OVERRIDEZ"]}))
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadArgument);
    }
}
