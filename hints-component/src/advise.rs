//! The road-sign catalogue: what to suggest after each call, and before it.
//!
//! Every hint is driven by data in the result (ids, counts, kinds), never by
//! placeholders: an actionable hint is a call that works when sent verbatim.
//! Rules: at most [`MAX_HINTS`] hints, best first; reasons of at most
//! [`MAX_REASON`] characters; no two hints with the same tool and arguments.

use serde_json::{Map, Value, json};

use crate::coerce::{self, Problem};
use crate::model::{Advice, Call, ErrorKind, Hint, History, Outcome, ToolError};
use crate::reply::{Rec, Reply};

/// Most hints in one response.
pub const MAX_HINTS: usize = 5;
/// Longest reason, in characters.
pub const MAX_REASON: usize = 120;
/// Most ids an actionable continuation carries.
const MAX_HINT_IDS: usize = 10;

/// Non-blocking suggestions before `call` runs.
pub fn prerequisites(call: &Call, session: &dyn History) -> Vec<Hint> {
    let param = match call.tool.as_str() {
        "describe" => "id",
        "neighbors" => "ids",
        _ => return Vec::new(),
    };
    let Ok(ids) = coerce::analyze(call, param) else {
        return Vec::new();
    };
    let unseen = session.seen(&ids).into_iter().filter(|seen| !seen).count();
    if unseen == 0 {
        return Vec::new();
    }
    let what = if ids.len() == 1 { "this id".to_owned() } else { format!("{unseen} of these ids") };
    vec![Hint::advice(
        "resolve",
        json!({}),
        format!("{what} not seen in this session; ids come from resolve/search/find"),
    )]
}

/// Hints, state tag, summary, details and ask-user line for a finished call.
pub fn advise(call: &Call, outcome: &Outcome, session: &dyn History) -> Advice {
    advise_after(call, outcome, prerequisites(call, session).len())
}

/// [`advise`] for a call whose [`prerequisites`] gave `before` hints.
pub fn advise_after(call: &Call, outcome: &Outcome, before: usize) -> Advice {
    let mut advice = match outcome {
        Outcome::Failure(err) => failure(call, err),
        Outcome::Success(json) => match call.tool.as_str() {
            "resolve" => resolve(call, &Reply::read(json)),
            "describe" => describe(&Reply::read(json)),
            "find" => find(call, &Reply::read(json)),
            "search" => search(call, &Reply::read(json)),
            "neighbors" => neighbors(call, &Reply::read(json)),
            other => Advice { state_tag: "ok".into(), summary: format!("{other} done"), ..Advice::default() },
        },
    };
    // The response carries the prerequisites too: keep the total within MAX_HINTS.
    let budget = MAX_HINTS.saturating_sub(before);
    advice.hints = tidy(std::mem::take(&mut advice.hints));
    advice.hints.truncate(budget);
    advice
}

/// Applies the catalogue rules: dedupe by tool + canonical args, cut reasons,
/// keep the best [`MAX_HINTS`].
pub fn tidy(hints: Vec<Hint>) -> Vec<Hint> {
    let mut out: Vec<Hint> = Vec::with_capacity(MAX_HINTS);
    for mut hint in hints {
        // serde_json without `preserve_order` sorts keys: to_string is canonical.
        if out.iter().any(|h| h.tool == hint.tool && h.args == hint.args && h.actionable == hint.actionable) {
            continue;
        }
        if hint.reason.chars().count() > MAX_REASON {
            hint.reason = hint.reason.chars().take(MAX_REASON - 1).collect::<String>() + "…";
        }
        out.push(hint);
        if out.len() == MAX_HINTS {
            break;
        }
    }
    out
}

// ---- reading results -------------------------------------------------------

fn describe_hint(rec: &Rec, reason: impl Into<String>) -> Option<Hint> {
    (!rec.id().is_empty()).then(|| Hint::call("describe", json!({"id": rec.id()}), reason))
}
fn neighbors_hint(ids: &[&str], direction: &str, edge: &str, reason: impl Into<String>) -> Hint {
    Hint::call("neighbors", json!({"ids": ids, "direction": direction, "edge_types": [edge]}), reason)
}

/// The next page of a paged call, when the result says there is one.
fn next_page(call: &Call, result: &Reply) -> Option<Hint> {
    let (total, limit, offset) = (result.total, result.limit, result.offset);
    let shown = result.results.len() as u64;
    let next = offset + shown;
    if shown == 0 || next >= total {
        return None;
    }
    let mut args = call.args.clone();
    if call.tool == "neighbors" {
        // Canonical ids, whatever shape the agent sent.
        args.insert("ids".into(), result.ids.as_ref().map_or(Value::Null, |_| json!(result.ids())));
    }
    args.insert("offset".into(), json!(next));
    if limit > 0 {
        args.insert("limit".into(), json!(limit));
    }
    Some(Hint::call(&call.tool, Value::Object(args), format!("next page: {} more", total - next)))
}

// ---- resolve ---------------------------------------------------------------

/// A signature's parameter list (`(_ cents: Int, for reason: String)` of
/// `func load(_ cents: Int, for reason: String) -> Int`): from its first
/// `(` to the `)` that closes it; empty when it has none.
fn params(signature: &str) -> &str {
    let Some(open) = signature.find('(') else {
        return "";
    };
    let mut depth = 0usize;
    for (i, c) in signature[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return &signature[open..=open + i];
                }
            }
            _ => {}
        }
    }
    ""
}

fn resolve(call: &Call, result: &Reply) -> Advice {
    let identifier = call.str_arg("identifier").unwrap_or("");
    let kind = call.str_arg("kind").filter(|k| !k.is_empty());
    let candidates = &result.candidates;
    let mut hints = Vec::new();
    match result.status() {
        Some("one") if !candidates.is_empty() => {
            let rec = &candidates[0];
            hints.extend(describe_hint(rec, "see its record and edge summary"));
            hints.extend(member_or_caller_hint(rec));
            Advice {
                state_tag: "resolved".into(),
                summary: format!("{identifier} → {} {}", rec.kind(), rec.fqn()),
                details: [Some(format!("id {}", rec.id())), rec.location()].into_iter().flatten().collect(),
                hints,
                ask_user: None,
            }
        }
        Some("many") => {
            let mut kinds: Vec<&str> = candidates.iter().map(Rec::kind).collect();
            kinds.dedup();
            kinds.sort_unstable();
            kinds.dedup();
            // A hint narrows only when it leaves fewer candidates.
            if kind.is_none() && kinds.len() > 1 {
                for k in kinds.iter().take(2) {
                    hints.push(Hint::call(
                        "resolve",
                        json!({"identifier": identifier, "kind": k}),
                        format!("narrow to the {k}"),
                    ));
                }
            }
            let fqns: Vec<&str> = candidates.iter().map(Rec::fqn).collect();
            for fqn in fqns.iter().take(2) {
                if let Some(suffix) = unique_suffix(fqn, &fqns)
                    && !suffix.eq_ignore_ascii_case(identifier)
                    && fqns.iter().filter(|f| f.ends_with(suffix)).count() < fqns.len()
                {
                    hints.push(Hint::call(
                        "resolve",
                        json!({"identifier": suffix}),
                        format!("narrow by qualifying the name: {suffix}"),
                    ));
                }
            }
            // Candidates told apart: by name, and where names are the same
            // (overloads, a vendored copy), by parameters, kind and place.
            let twin = |rec: &Rec| fqns.iter().filter(|f| **f == rec.fqn()).count() > 1;
            for rec in candidates.iter().take(3) {
                let params = if twin(rec) { params(rec.signature()) } else { "" };
                hints.extend(describe_hint(rec, format!("candidate: {}{params}", rec.fqn())));
            }
            let told = |rec: &Rec| match rec.location() {
                Some(at) if twin(rec) => format!("the {} {}{} at {at}", rec.kind(), rec.fqn(), params(rec.signature())),
                _ => rec.fqn().to_owned(),
            };
            let names: Vec<String> = candidates.iter().take(4).map(told).collect();
            Advice {
                state_tag: "ambiguous".into(),
                summary: format!("{identifier} matches {} symbols", candidates.len()),
                details: candidates
                    .iter()
                    .map(|r| {
                        let params = params(r.signature());
                        match r.location() {
                            Some(at) => format!("{}{params} at {at}", r.line()),
                            None => format!("{}{params}", r.line()),
                        }
                    })
                    .collect(),
                hints,
                ask_user: Some(format!("which {identifier} is meant: {}?", names.join(" or "))),
            }
        }
        _ => {
            if !identifier.is_empty() {
                hints.push(Hint::call(
                    "search",
                    json!({"query": identifier}),
                    "no exact match — try ranked fuzzy lookup",
                ));
                if let Some(k) = kind {
                    hints.push(Hint::call(
                        "resolve",
                        json!({"identifier": identifier}),
                        format!("nothing of kind {k}; drop the kind filter"),
                    ));
                }
                let last = identifier.rsplit(['.', ':', '/', '#']).find(|s| !s.is_empty()).unwrap_or(identifier);
                hints.push(Hint::call("find", json!({"name": last}), "browse symbols whose name contains it"));
            }
            Advice {
                state_tag: "not_found".into(),
                summary: format!("no symbol named {identifier}"),
                details: vec!["resolve matches exact names, qualified names or ids".into()],
                hints,
                ask_user: None,
            }
        }
    }
}

/// The shortest dotted suffix of `fqn` (two segments or more) that no other
/// of `all` ends with: a qualified name that `resolve` reads as one symbol.
fn unique_suffix<'a>(fqn: &'a str, all: &[&str]) -> Option<&'a str> {
    let dots: Vec<usize> = fqn.match_indices('.').map(|(i, _)| i).collect();
    for &dot in dots.iter().rev().skip(1).chain(std::iter::once(&usize::MAX)) {
        let suffix = if dot == usize::MAX { fqn } else { &fqn[dot + 1..] };
        let needle = format!(".{}", suffix.to_lowercase());
        let clash = all.iter().filter(|o| **o != fqn).any(|o| {
            let o = o.to_lowercase();
            o == suffix.to_lowercase() || o.ends_with(&needle)
        });
        if !clash {
            return Some(suffix);
        }
    }
    None
}

/// The natural continuation from a single symbol by its kind.
fn member_or_caller_hint(rec: &Rec) -> Option<Hint> {
    let id = rec.id();
    match rec.kind() {
        "class" | "interface" | "module" | "enum" | "struct" | "trait" | "type" | "union" => {
            Some(neighbors_hint(&[id], "out", "DECLARES", "list its members"))
        }
        "method" | "function" | "constructor" | "macro" => Some(neighbors_hint(&[id], "in", "CALLS", "who calls it")),
        "field" | "property" | "constant" | "variable" | "variant" => {
            Some(neighbors_hint(&[id], "in", "REFERENCES", "who uses it"))
        }
        "route" => Some(neighbors_hint(&[id], "in", "EXPOSES", "the handler serving this route")),
        "topic" => Some(neighbors_hint(&[id], "in", "PUBLISHES", "who publishes to it")),
        _ => None,
    }
}

// ---- describe --------------------------------------------------------------

/// (direction, edge key, reason) in priority order: the road signs that
/// matter most for an agent exploring a code base come first.
const DESCRIBE_SIGNS: &[(&str, &str, &str)] = &[
    ("out", "DECLARES.EXPOSES", "routes exposed by its members"),
    ("in", "EXPOSES", "the handler serving this route"),
    ("in", "OVERRIDES", "overridden by"),
    ("out", "TARGETS", "endpoints this client calls"),
    ("in", "TARGETS", "clients that call this route"),
    ("in", "CALLS", "callers"),
    ("in", "IMPLEMENTS", "implementations"),
    ("in", "EXTENDS", "subclasses"),
    ("out", "PUBLISHES", "topics it publishes to"),
    ("in", "PUBLISHES", "publishers of this topic"),
    ("in", "SUBSCRIBES", "subscribers of this topic"),
    ("out", "DECLARES.PUBLISHES", "topics its members publish to"),
    ("out", "DECLARES", "members"),
    ("out", "CALLS", "calls"),
    ("out", "OVERRIDES", "the method it overrides"),
    ("out", "IMPLEMENTS", "interfaces it implements"),
    ("out", "EXTENDS", "its superclass"),
    ("in", "REFERENCES", "referenced by"),
    ("in", "DECLARES", "declared in"),
];

fn describe(result: &Reply) -> Advice {
    let rec = &result.record;
    let (out, inn) = (result.edge_summary.side("out"), result.edge_summary.side("in"));
    let count = |dir: &str, key: &str| -> u64 {
        let side = if dir == "out" { &out } else { &inn };
        side.iter().find(|(k, _)| *k == key).map_or(0, |(_, n)| *n)
    };
    let mut hints = Vec::new();
    for (dir, key, why) in DESCRIBE_SIGNS {
        let n = count(dir, key);
        if n > 0 {
            hints.push(neighbors_hint(&[rec.id()], dir, key, format!("{why} ({n})")));
        }
    }
    if hints.is_empty() && !rec.file().is_empty() {
        hints.push(Hint::call("find", json!({"path": rec.file()}), "no edges; other symbols in the same file"));
    }
    let fmt = |side: &[(&str, u64)]| side.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ");
    let mut details = vec![format!("id {}", rec.id())];
    details.extend(rec.location());
    let roles = rec.roles();
    if !roles.is_empty() {
        details.push(format!("roles: {}", roles.join(", ")));
    }
    if !rec.signature().is_empty() {
        details.push(format!("signature: {}", coerce::clip(rec.signature())));
    }
    if !rec.doc().is_empty() {
        details.push(format!("doc: {}", coerce::clip(rec.doc())));
    }
    if !out.is_empty() {
        details.push(format!("out: {}", fmt(&out)));
    }
    if !inn.is_empty() {
        details.push(format!("in: {}", fmt(&inn)));
    }
    Advice {
        state_tag: "record".into(),
        summary: format!("{} {}", rec.kind(), rec.fqn()),
        details,
        hints,
        ask_user: None,
    }
}

// ---- find / search ---------------------------------------------------------

fn find(call: &Call, result: &Reply) -> Advice {
    let results = &result.results;
    let total = result.total;
    let filters: Vec<String> = ["kind", "role", "name", "path"]
        .iter()
        .filter_map(|k| call.str_arg(k).filter(|v| !v.is_empty()).map(|v| format!("{k}={v}")))
        .collect();
    let filter_text = if filters.is_empty() { "no filter".to_owned() } else { filters.join(" ") };
    let mut hints = Vec::new();
    hints.extend(next_page(call, result));
    if let Some(rec) = results.first() {
        hints.extend(describe_hint(rec, format!("inspect {}", rec.fqn())));
    } else {
        if let Some(name) = call.str_arg("name").filter(|n| !n.is_empty()) {
            hints.push(Hint::call("search", json!({"query": name}), "no name contains it; try fuzzy search"));
        }
        // Drop one filter at a time, narrowest first.
        for drop in ["path", "name", "role", "kind"] {
            if call.args.get(drop).and_then(Value::as_str).is_some_and(|v| !v.is_empty()) && filters.len() > 1 {
                let mut args: Map<String, Value> = Map::new();
                for k in ["kind", "role", "name", "path"] {
                    if k != drop
                        && let Some(v) = call.str_arg(k).filter(|v| !v.is_empty())
                    {
                        args.insert(k.into(), json!(v));
                    }
                }
                hints.push(Hint::call("find", Value::Object(args), format!("nothing matched; drop the {drop} filter")));
                break;
            }
        }
        if hints.is_empty() {
            hints.push(Hint::call("find", json!({}), "nothing matched; browse without filters"));
        }
    }
    let (tag, summary) = if results.is_empty() {
        ("empty", format!("no symbols match {filter_text}"))
    } else {
        ("listing", format!("{} of {total} symbols match {filter_text}", results.len()))
    };
    Advice { state_tag: tag.into(), summary, details: results.iter().map(Rec::line).collect(), hints, ask_user: None }
}

/// Below this top score, search results are weak guesses.
const WEAK_SCORE: f64 = 0.5;

fn search(call: &Call, result: &Reply) -> Advice {
    let query = call.str_arg("query").unwrap_or("");
    let results = &result.results;
    let total = result.total;
    let top = results.first().and_then(Rec::score).unwrap_or(0.0);
    let mut hints = Vec::new();
    let tag;
    if let Some(rec) = results.first() {
        if top < WEAK_SCORE {
            tag = "weak_results";
            hints.push(Hint::advice(
                "search",
                json!({}),
                "results look weak — use a more specific name, or find with a kind/role filter",
            ));
            if !rec.kind().is_empty() {
                hints.push(Hint::call(
                    "find",
                    json!({"kind": rec.kind(), "name": query}),
                    format!("browse {}s whose name contains the query", rec.kind()),
                ));
            }
        } else {
            tag = "results";
        }
        hints.extend(describe_hint(rec, format!("best match: {}", rec.fqn())));
        if let Some(sec) = results.get(1) {
            let score = sec.score().unwrap_or(0.0);
            if top - score < 0.05 {
                hints.extend(describe_hint(sec, format!("close second: {}", sec.fqn())));
            }
        }
        hints.extend(next_page(call, result));
    } else {
        tag = "empty";
        let words: Vec<&str> = query.split_whitespace().collect();
        if words.len() > 1 {
            let longest = words.iter().max_by_key(|w| w.len()).copied().unwrap_or(query);
            hints.push(Hint::call(
                "search",
                json!({"query": longest}),
                "nothing matched all words; try the most specific one",
            ));
        }
        hints.push(Hint::call("find", json!({}), "nothing matched; browse symbols instead"));
    }
    Advice {
        state_tag: tag.into(),
        summary: if results.is_empty() {
            format!("nothing matches \"{}\"", coerce::clip(query))
        } else {
            format!("{} of {total} matches for \"{}\"", results.len(), coerce::clip(query))
        },
        details: results.iter().map(Rec::line).collect(),
        hints,
        ask_user: None,
    }
}

// ---- neighbors -------------------------------------------------------------

fn neighbors(call: &Call, result: &Reply) -> Advice {
    let results = &result.results;
    let total = result.total;
    let direction = call.str_arg("direction").unwrap_or("out");
    let ids = result.ids();
    let edges: Vec<&str> = match call.args.get("edge_types") {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let edge_text = edges.join(",");
    let mut hints = Vec::new();
    if results.is_empty() {
        hints.extend(corrected_neighbors(result, &ids, direction, &edges));
        if let Some(first) = ids.first() {
            hints.push(Hint::call("describe", json!({"id": first}), "see which edges it has"));
        }
        // Types the whole graph has none of: say so, the answer is not
        // about these ids.
        let absent = result.absent_edge_types();
        let details = if absent.is_empty() {
            Vec::new()
        } else {
            vec![format!("this graph has no {} edges at all", absent.join(", "))]
        };
        return Advice {
            state_tag: "empty".into(),
            summary: format!("no {direction} {edge_text} edges"),
            details,
            hints,
            ask_user: None,
        };
    }
    hints.extend(next_page(call, result));
    let nobody = Rec::default();
    let others: Vec<&Rec> = results.iter().map(|r| r.other().unwrap_or(&nobody)).collect();
    let mut other_ids: Vec<&str> = others.iter().map(|o| o.id()).filter(|id| !id.is_empty()).collect();
    other_ids.dedup();
    other_ids.truncate(MAX_HINT_IDS);
    // Natural continuations: follow the same relation one step further.
    for edge in &edges {
        let cont = match (*edge, direction) {
            ("CALLS", "in") => Some(("in", "CALLS", "callers of these callers")),
            ("CALLS", "out") => Some(("out", "CALLS", "what these call in turn")),
            ("DECLARES.EXPOSES", "out") | ("EXPOSES", "out") => Some(("in", "TARGETS", "clients calling these routes")),
            ("TARGETS", "out") => Some(("in", "EXPOSES", "handlers serving these routes")),
            ("EXPOSES", "in") => Some(("in", "CALLS", "callers of this handler")),
            ("OVERRIDES", "in") => Some(("in", "CALLS", "callers of the overriders")),
            ("IMPLEMENTS", "in") | ("EXTENDS", "in") => Some(("out", "DECLARES", "members of these types")),
            ("PUBLISHES", "out") => Some(("in", "SUBSCRIBES", "subscribers of these topics")),
            _ => None,
        };
        if let Some((dir, key, why)) = cont
            && !other_ids.is_empty()
        {
            hints.push(neighbors_hint(&other_ids, dir, key, why));
        }
    }
    if let Some(first) = others.first() {
        hints.extend(describe_hint(first, format!("inspect {}", first.fqn())));
    }
    let details = results
        .iter()
        .zip(&others)
        .map(|(r, other)| {
            let edge = r.edge();
            let arrow = if direction == "in" { "<-" } else { "->" };
            // An edge resolved by name, not by a compiler: say so.
            let probable = match r.derived() {
                "" => String::new(),
                how => format!(" ({how})"),
            };
            format!("{arrow}{edge}{probable} {}", other.line())
        })
        .collect();
    Advice {
        state_tag: "neighbors".into(),
        summary: format!("{} of {total} {direction} {edge_text} neighbors", results.len()),
        details,
        hints,
        ask_user: None,
    }
}

/// For an empty `neighbors` result, the call that would have found edges:
/// the other direction, or the edge types the node actually has.
fn corrected_neighbors(result: &Reply, ids: &[&str], direction: &str, edges: &[&str]) -> Vec<Hint> {
    let Some(available) = &result.available else {
        return Vec::new();
    };
    let side = |dir: &str| -> Vec<(&str, u64)> {
        let mut v = available.side(dir);
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v
    };
    let flipped = if direction == "in" { "out" } else { "in" };
    let mut hints = Vec::new();
    let in_flipped: Vec<&str> = side(flipped).iter().map(|(k, _)| *k).filter(|k| edges.contains(k)).collect();
    if !in_flipped.is_empty() {
        hints.push(Hint::call(
            "neighbors",
            json!({"ids": ids, "direction": flipped, "edge_types": in_flipped}),
            format!("these edges run {flipped}, not {direction}"),
        ));
    }
    let here = side(direction);
    if let Some((key, n)) = here.first() {
        let have: Vec<String> = here.iter().take(4).map(|(k, n)| format!("{k} {n}")).collect();
        hints.push(Hint::call(
            "neighbors",
            json!({"ids": ids, "direction": direction, "edge_types": [key]}),
            format!("no such edges; {direction} edges here: {} ({n} {key})", have.join(", ")),
        ));
    }
    hints
}

// ---- failures --------------------------------------------------------------

fn failure(call: &Call, err: &ToolError) -> Advice {
    let mut hints = Vec::new();
    let tag = match err.kind {
        ErrorKind::InvalidId => {
            let param = if call.tool == "describe" { "id" } else { "ids" };
            match coerce::analyze(call, param) {
                Err((Problem::Name(name), _)) => hints.push(Hint::call(
                    "resolve",
                    json!({"identifier": name}),
                    "a name where an id belongs: resolve it to get the id",
                )),
                Err((_, Some(_))) => {
                    if let Some(example) = &err.example {
                        hints.push(Hint::call(
                            &call.tool,
                            example.clone(),
                            "the same call with the ids that were readable",
                        ));
                    }
                }
                _ => {
                    if let Some(example) = &err.example {
                        hints.push(Hint::advice(
                            &call.tool,
                            example.clone(),
                            "the shape to send; take ids from resolve/search results",
                        ));
                    }
                }
            }
            "invalid_id"
        }
        ErrorKind::UnknownId => {
            hints.push(Hint::advice(
                "search",
                json!({}),
                "no symbol has this id; ids come from resolve, search or find results of this graph",
            ));
            "not_found"
        }
        ErrorKind::BadArgument => {
            if let Some(example) = &err.example {
                hints.push(Hint::call(&call.tool, example.clone(), "a corrected call"));
            }
            "bad_argument"
        }
        ErrorKind::Internal => "error",
    };
    Advice {
        state_tag: tag.into(),
        summary: format!("{} failed: {}", call.tool, err.message),
        details: Vec::new(),
        hints,
        ask_user: None,
    }
}
