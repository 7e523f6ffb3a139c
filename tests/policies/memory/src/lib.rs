//! `memory`: a Signpost policy for the official MCP memory server
//! (`@modelcontextprotocol/server-memory`, a knowledge graph of entities,
//! relations and observations), served with `signpost proxy`.
//!
//! What it teaches an agent, after the seed `003_*` problem (an agent that
//! creates before it searches, and duplicates what the graph holds):
//! - **search before you create**: a `create_entities` call in a session
//!   that has not looked at the graph yet (no `search_nodes`, `open_nodes`
//!   or `read_graph`) is held once (`PREREQUISITE_SUGGESTED … can_proceed`
//!   of the seed): not sent, with a hint to search for the first name, and
//!   the same call to send again (the host lets it through then);
//! - **names come from the graph**: the arguments that name entities
//!   (`names`, `entityNames`, `entityName`, a relation's `from` and `to`)
//!   are declared references, so the host drops any hint whose names the
//!   agent was not shown; and a name the graph lacks, as an agent writes it
//!   (`ada`), is read as the one entity whose name holds its every word
//!   (`Ada Lovelace`, found by a search), which the call is sent with;
//! - **next steps from what was stored**: open what was created, relate
//!   it, add observations; open what a search found; create what it did not
//!   find (a template: the agent fills it in);
//! - **advice per failure**: arguments the server refused get the shape the
//!   tool wants; entities that do not exist get a search.
//!
//! Text: the documented layout (`[state_tag] summary`, details, `→ next:`
//! lines), so the host's sanitiser keeps exactly the validated hints.
#![allow(unsafe_code)] // generated canonical-ABI glue

use exports::signpost::policy::policy::Guest;
use serde_json::{Value, json};
use signpost::policy::types::*;

wit_bindgen::generate!({ path: "../../../wit", world: "hints" });

/// The arguments that name entities, per tool of the memory server.
const REFERENCES: [(&str, &[&str]); 6] = [
    ("open_nodes", &["names"]),
    ("delete_entities", &["entityNames"]),
    ("add_observations", &["observations/*/entityName"]),
    ("delete_observations", &["deletions/*/entityName"]),
    ("create_relations", &["relations/*/from", "relations/*/to"]),
    ("delete_relations", &["relations/*/from", "relations/*/to"]),
];

struct Memory;
export!(Memory);

/// Tools that read the graph: after one of them, a session has looked.
const READS: [&str; 3] = ["search_nodes", "open_nodes", "read_graph"];

/// The strings at an argument path (`names`, `relations/*/from`), in order.
fn strings_at(args: &Value, path: &str) -> Vec<String> {
    fn walk(v: &Value, steps: &[&str], out: &mut Vec<String>) {
        match (steps.split_first(), v) {
            (None, Value::String(s)) => out.push(s.clone()),
            (None, Value::Array(items)) => items.iter().for_each(|i| walk(i, steps, out)),
            (Some((&"*", rest)), Value::Array(items)) => items.iter().for_each(|i| walk(i, rest, out)),
            (Some((key, rest)), Value::Object(map)) => {
                if let Some(next) = map.get(*key) {
                    walk(next, rest, out);
                }
            }
            _ => {}
        }
    }
    let steps: Vec<&str> = path.split('/').collect();
    let mut out = Vec::new();
    walk(args, &steps, &mut out);
    out
}

/// The names of the entities a lookup of a reading tool finds (none when
/// it fails: the name stays as sent).
fn found_names(tool: &str, args: Value) -> Vec<String> {
    let Ok(answer) = signpost::policy::host::lookup(tool, &args.to_string()) else { return Vec::new() };
    let answer: Value = serde_json::from_str(&answer).unwrap_or_default();
    let s = answer.get("structuredContent").cloned().unwrap_or_default();
    names(list(&s, "/entities"), "name")
}

/// Whether `name` (as an agent wrote it) names `entity`: each of its words
/// is a word of the entity's name, case aside.
fn names_it(name: &str, entity: &str) -> bool {
    // Words as the host reads them (it checks the answer the same way).
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| c.is_whitespace() || "\"'`()[]{}<>,;".contains(c))
            .map(|w| w.trim_end_matches(['.', ':', '!', '?']))
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let (said, theirs) = (words(name), words(entity));
    !said.is_empty() && said.iter().all(|w| theirs.contains(w))
}

fn hint(tool: &str, args: Value, reason: &str) -> Hint {
    Hint { tool: tool.into(), args: args.to_string(), actionable: true, reason: reason.into() }
}

fn template(tool: &str, args: Value, reason: &str) -> Hint {
    Hint { tool: tool.into(), args: args.to_string(), actionable: false, reason: reason.into() }
}

/// The names of `items` (entities: their `name`; relations: `from`).
fn names(items: &[Value], key: &str) -> Vec<String> {
    items.iter().filter_map(|e| e.get(key).and_then(Value::as_str)).map(str::to_owned).collect()
}

fn list<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

fn advice(tag: &str, summary: String, details: Vec<String>, hints: Vec<Hint>) -> Advice {
    Advice { state_tag: tag.into(), summary, details, hints, ask_user: None }
}

/// At most `n` names, joined for a line.
fn shown(names: &[String], n: usize) -> String {
    let mut s = names.iter().take(n).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > n {
        s.push_str(&format!(" and {} more", names.len() - n));
    }
    s
}

impl Guest for Memory {
    fn identity() -> PolicyInfo {
        PolicyInfo { name: "memory".into(), version: env!("CARGO_PKG_VERSION").into() }
    }

    fn coerce_ids(call: Call, param: String) -> Result<Vec<String>, CoercionError> {
        // In front of the memory server the host asks about the names at
        // each declared reference (`param` is its path): a name the graph
        // holds stays; one it does not is searched for, and becomes the one
        // entity whose name holds every word of it (`ada` → `Ada Lovelace`).
        let args: Value = serde_json::from_str(&call.args).unwrap_or_default();
        let declared = REFERENCES.iter().any(|(tool, paths)| *tool == call.tool && paths.contains(&param.as_str()));
        let sent = if declared { strings_at(&args, &param) } else { Vec::new() };
        if sent.is_empty() {
            // Not a name of the memory server's: one of Signpost's own id
            // arguments, which this policy has nothing to say about.
            return Err(CoercionError {
                message: format!("`{param}` of {} takes 40-hex ids, exactly as the schema says", call.tool),
                example: json!({ param: "<40-hex id>" }).to_string(),
            });
        }
        let held = found_names("open_nodes", json!({"names": sent}));
        let mut searches = 0;
        Ok(sent
            .iter()
            .map(|name| {
                if held.contains(name) || searches == 3 {
                    return name.clone();
                }
                searches += 1;
                let found = found_names("search_nodes", json!({"query": name}));
                match found.iter().filter(|f| names_it(name, f)).collect::<Vec<_>>().as_slice() {
                    [one] => (*one).clone(),
                    _ => name.clone(),
                }
            })
            .collect())
    }

    fn catalogue(tools: Vec<Tool>) -> Vec<ToolRules> {
        // One set of rules per tool the server lists: the arguments that
        // name entities, and, for the reads, that they change nothing
        // (whatever the annotations say).
        tools
            .iter()
            .map(|t| t.name.as_str())
            .filter_map(|tool| {
                let references = REFERENCES.iter().find(|(t, _)| *t == tool).map(|(_, paths)| *paths);
                let reads = READS.contains(&tool);
                (references.is_some() || reads).then(|| ToolRules {
                    tool: tool.into(),
                    references: references.unwrap_or_default().iter().map(|p| (*p).into()).collect(),
                    changes_state: reads.then_some(false),
                })
            })
            .collect()
    }

    fn prerequisites(call: Call) -> BeforeCall {
        let nothing = BeforeCall { hints: Vec::new(), hold: None };
        // The history is asked for only where it is read.
        if call.tool != "create_entities"
            || signpost::policy::host::history().recent.iter().any(|c| READS.contains(&c.tool.as_str()))
        {
            return nothing;
        }
        let args: Value = serde_json::from_str(&call.args).unwrap_or_default();
        let Some(first) = names(list(&args, "/entities"), "name").into_iter().next() else { return nothing };
        BeforeCall {
            hints: vec![hint(
                "search_nodes",
                json!({"query": first}),
                "search before you create: if it already exists, add observations to it instead",
            )],
            hold: Some("this session has not looked at the graph yet: search for it first".into()),
        }
    }

    fn advise(call: Call, outcome: Outcome) -> Advice {
        let sent: Value = serde_json::from_str(&call.args).unwrap_or_default();
        let result = match outcome {
            Outcome::Success(json) => serde_json::from_str::<Value>(&json).unwrap_or_default(),
            Outcome::Failure(e) => return failed(&call.tool, &sent, &e),
        };
        let s = result.get("structuredContent").cloned().unwrap_or_default();
        match call.tool.as_str() {
            "create_entities" => {
                let asked = names(list(&sent, "/entities"), "name");
                let created = names(list(&s, "/entities"), "name");
                let existed: Vec<String> = asked.iter().filter(|n| !created.contains(n)).cloned().collect();
                let mut hints = Vec::new();
                if !created.is_empty() {
                    hints.push(hint("open_nodes", json!({"names": created}), "see what was stored"));
                    hints.push(template(
                        "create_relations",
                        json!({"relations": [{"from": created[0], "to": "<entity>", "relationType": "<in active voice>"}]}),
                        "relate it to what it belongs with",
                    ));
                }
                if !existed.is_empty() {
                    hints.push(hint("open_nodes", json!({"names": existed}), "these existed already: read them"));
                    hints.push(template(
                        "add_observations",
                        json!({"observations": [{"entityName": existed[0], "contents": ["<new fact>"]}]}),
                        "add what is new to the entity that exists",
                    ));
                }
                let (tag, summary) = match (created.len(), existed.len()) {
                    (0, _) => ("already_exists", format!("nothing created: {} existed already", shown(&existed, 5))),
                    (_, 0) => ("created", format!("{} entit(ies) created: {}", created.len(), shown(&created, 5))),
                    _ => (
                        "partly_created",
                        format!("created {}; {} existed already", shown(&created, 5), shown(&existed, 5)),
                    ),
                };
                advice(tag, summary, Vec::new(), hints)
            }
            "search_nodes" | "open_nodes" | "read_graph" => {
                let found = names(list(&s, "/entities"), "name");
                let relations = list(&s, "/relations").len();
                let details: Vec<String> = list(&s, "/entities")
                    .iter()
                    .take(10)
                    .map(|e| {
                        let kind = e.get("entityType").and_then(Value::as_str).unwrap_or("?");
                        let facts = e.get("observations").and_then(Value::as_array).map_or(0, Vec::len);
                        format!(
                            "{} ({kind}): {facts} observation(s)",
                            e.get("name").and_then(Value::as_str).unwrap_or("?")
                        )
                    })
                    .collect();
                if found.is_empty() {
                    let query = sent.get("query").and_then(Value::as_str).unwrap_or("<name>");
                    let hints = vec![template(
                        "create_entities",
                        json!({"entities": [{"name": query, "entityType": "<type>", "observations": ["<fact>"]}]}),
                        "nothing like it is stored: create it if it is new",
                    )];
                    return advice("not_found", format!("{}: nothing found", call.tool), details, hints);
                }
                let mut hints = Vec::new();
                if call.tool != "open_nodes" {
                    let first: Vec<&String> = found.iter().take(5).collect();
                    hints.push(hint("open_nodes", json!({"names": first}), "read them whole"));
                }
                hints.push(template(
                    "add_observations",
                    json!({"observations": [{"entityName": found[0], "contents": ["<new fact>"]}]}),
                    "add what you learned to what exists, rather than a new entity",
                ));
                let summary = format!("{} entit(ies), {relations} relation(s): {}", found.len(), shown(&found, 5));
                advice("found", summary, details, hints)
            }
            "add_observations" => {
                let to = names(list(&s, "/results"), "entityName");
                let hints = if to.is_empty() {
                    Vec::new()
                } else {
                    vec![hint("open_nodes", json!({"names": to}), "see them now")]
                };
                advice("observed", format!("observations added to {}", shown(&to, 5)), Vec::new(), hints)
            }
            "create_relations" => {
                let from = names(list(&s, "/relations"), "from");
                let hints = if from.is_empty() {
                    Vec::new()
                } else {
                    vec![hint("open_nodes", json!({"names": from}), "see how they connect")]
                };
                advice("related", format!("{} relation(s) created", list(&s, "/relations").len()), Vec::new(), hints)
            }
            tool if tool.starts_with("delete_") => advice(
                "deleted",
                format!("{tool} done"),
                Vec::new(),
                vec![hint("read_graph", json!({}), "check what is left")],
            ),
            tool => advice("ok", format!("{tool} done"), Vec::new(), Vec::new()),
        }
    }

    fn render(_call: Call, advice: Advice) -> String {
        // A held call's advice is the host's; it renders like any other.
        let mut lines = vec![format!("[{}] {}", advice.state_tag, advice.summary)];
        lines.extend(advice.details);
        for h in &advice.hints {
            if h.actionable {
                lines.push(format!("→ next: {} {} — {}", h.tool, h.args, h.reason));
            } else {
                lines.push(format!("note: {} (e.g. {} {})", h.reason, h.tool, h.args));
            }
        }
        lines.join("\n")
    }
}

/// Advice for a call the server refused.
fn failed(tool: &str, sent: &Value, e: &ToolError) -> Advice {
    let message = e.message.to_lowercase();
    if message.contains("not found") || message.contains("does not exist") {
        let name = list(sent, "/observations").first().and_then(|o| o.get("entityName")).and_then(Value::as_str);
        let hints = name.map(|n| vec![hint("search_nodes", json!({"query": n}), "find the entity's exact name")]);
        return advice(
            "not_found",
            format!("{tool}: the entity does not exist"),
            Vec::new(),
            hints.unwrap_or_default(),
        );
    }
    let shape = match tool {
        "create_entities" => {
            Some(json!({"entities": [{"name": "<name>", "entityType": "<type>", "observations": ["<fact>"]}]}))
        }
        "create_relations" => {
            Some(json!({"relations": [{"from": "<name>", "to": "<name>", "relationType": "<verb>"}]}))
        }
        "add_observations" => Some(json!({"observations": [{"entityName": "<name>", "contents": ["<fact>"]}]})),
        "search_nodes" => Some(json!({"query": "<words>"})),
        "open_nodes" => Some(json!({"names": ["<name>"]})),
        _ => None,
    };
    let hints = shape.map(|s| vec![template(tool, s, "the arguments it takes")]).unwrap_or_default();
    let tag = match e.kind {
        ErrorKind::BadArgument | ErrorKind::InvalidId | ErrorKind::UnknownId => "bad_argument",
        ErrorKind::Internal => "backend_failed",
    };
    advice(tag, format!("{tool} failed: {}", e.message), Vec::new(), hints)
}
