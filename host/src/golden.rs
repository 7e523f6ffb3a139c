//! Golden cases for policy authors: `signpost policy test FILE --cases DIR
//! [-- BACKEND…]`.
//!
//! A case is a JSON file: calls made, in one session, through the real
//! pipeline on the embedded sample graph or the case's `graph` file (the
//! policy's coercion, the tool, the policy's advice, hint validation,
//! rendering), and what the last response must show. Any component can be
//! run against any case set. With a backend ([`run_backend`]), the calls
//! go to that server through the proxy's pipeline instead
//! ([`Signpost::forward`]: the catalogue, references and holds of a 0.2.0
//! policy included), every case in file order against the one backend, so
//! a case may build on what an earlier one stored; `result` pointers then
//! read the backend's result (`/content/0/text`, `/structuredContent/…`).
//!
//! ```json
//! {
//!   "description": "a name where an id belongs teaches resolve",
//!   "before": [{"tool": "resolve", "args": {"identifier": "OrderService"}}],
//!   "call": {"tool": "neighbors", "args": {"ids": "OrderService", "direction": "out", "edge_types": ["CALLS"]}},
//!   "expect": {
//!     "is_error": true,
//!     "error_kind": "invalid_id",
//!     "state_tag": "invalid_id",
//!     "result": {"/error/example/direction": "out"},
//!     "hints_include": [{"tool": "resolve", "args": {"identifier": "OrderService"}, "actionable": true}],
//!     "first_hint": {"tool": "resolve"},
//!     "max_hints": 5,
//!     "text_contains": ["→ next: resolve"]
//!   }
//! }
//! ```
//!
//! Every `expect` field is optional; `result` maps JSON pointers into
//! `structuredContent` to the values they must hold.
//!
//! `${NAME}` anywhere in a case file (in a string) stands for the
//! environment variable `NAME`, JSON-escaped: a repository's path for a git
//! server's cases, say. A case that names a variable that is not set fails
//! and says which.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use rmcp::model::CallToolRequestParams;

use crate::graph::Graph;
use crate::policy::Policy;
use crate::proxy::{Command, Upstream};
use crate::response::Response;
use crate::service::Signpost;
use crate::session::SessionContext;
use crate::tools::Tool;

/// One call of a case.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseCall {
    /// The tool: one of Signpost's, or of the backend's.
    pub tool: String,
    /// Arguments, as an agent would send them.
    #[serde(default)]
    pub args: Map<String, Value>,
}

/// A hint a case expects (fields left out are not compared).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HintPattern {
    /// Tool.
    pub tool: String,
    /// Exact arguments.
    #[serde(default)]
    pub args: Option<Map<String, Value>>,
    /// Actionable or not.
    #[serde(default)]
    pub actionable: Option<bool>,
}

/// What the last response must show.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// `isError`.
    pub is_error: Option<bool>,
    /// `structuredContent.error.kind`.
    pub error_kind: Option<String>,
    /// The advice's state tag (whatever the text looks like).
    pub state_tag: Option<String>,
    /// JSON pointer into `structuredContent` → value.
    #[serde(default)]
    pub result: Map<String, Value>,
    /// Hints that must be present.
    #[serde(default)]
    pub hints_include: Vec<HintPattern>,
    /// The first hint.
    pub first_hint: Option<HintPattern>,
    /// Most hints allowed.
    pub max_hints: Option<usize>,
    /// Substrings the text must contain.
    #[serde(default)]
    pub text_contains: Vec<String>,
}

/// A golden case.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// What the case shows.
    pub description: String,
    /// The graph file the case runs on, relative to the case file
    /// (default: the embedded sample graph).
    #[serde(default)]
    pub graph: Option<PathBuf>,
    /// Calls made first, in the same session.
    #[serde(default)]
    pub before: Vec<CaseCall>,
    /// The call under test.
    pub call: CaseCall,
    /// What its response must show.
    #[serde(default)]
    pub expect: Expect,
}

/// The outcome of one case file.
#[derive(Debug)]
pub struct CaseResult {
    /// The file.
    pub path: PathBuf,
    /// The case's description (or the file name when unreadable).
    pub description: String,
    /// Every expectation that did not hold (empty: passed).
    pub failures: Vec<String>,
    /// What the host corrected in the policy's answers (a failure when
    /// strict; shown beside a pass when lenient).
    pub corrections: Corrections,
}

impl CaseResult {
    /// A case that failed before its calls were judged.
    fn unrun(path: PathBuf, description: String, why: String) -> Self {
        CaseResult { path, description, failures: vec![why], corrections: Corrections::new() }
    }
}

/// A case file and its parsed case (or why it could not be read).
pub type CaseFile = (PathBuf, Result<Case, String>);

/// Loads every `*.json` case in `dir`, sorted by name.
pub fn load_dir(dir: &Path) -> Result<Vec<CaseFile>, String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("reading cases from {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(format!("no *.json cases in {}", dir.display()));
    }
    Ok(paths
        .into_iter()
        .map(|p| {
            let case = std::fs::read_to_string(&p)
                .map_err(|e| e.to_string())
                .and_then(|t| expand(&t, |name| std::env::var(name).ok()))
                .and_then(|t| serde_json::from_str::<Case>(&t).map_err(|e| format!("not a case: {e}")));
            (p, case)
        })
        .collect())
}

/// `text` with each `${NAME}` (a letter or `_`, then letters, digits or
/// `_`) replaced by `var(NAME)`, JSON-escaped for a string; an unset
/// variable is an error that names it. Anything else stays as written.
fn expand(text: &str, var: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let name_len = after.find('}').filter(|&n| {
            let name = &after[..n];
            name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        match name_len {
            Some(n) => {
                let name = &after[..n];
                let value = var(name).ok_or_else(|| format!("the case uses ${{{name}}}, which is not set"))?;
                let escaped = Value::String(value).to_string();
                out.push_str(&escaped[1..escaped.len() - 1]);
                rest = &after[n + 1..];
            }
            None => {
                out.push_str("${");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

fn matches(hint: &Value, pattern: &HintPattern) -> bool {
    hint["tool"] == pattern.tool.as_str()
        && pattern.args.as_ref().is_none_or(|a| hint["args"] == Value::Object(a.clone()))
        && pattern.actionable.is_none_or(|a| hint["actionable"] == a)
}

fn describe_pattern(p: &HintPattern) -> String {
    let args = p.args.as_ref().map(|a| format!(" {}", Value::Object(a.clone()))).unwrap_or_default();
    let act = p.actionable.map(|a| format!(" (actionable: {a})")).unwrap_or_default();
    format!("{}{args}{act}", p.tool)
}

/// Whether a case fails when the host had to correct the policy's answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strictness {
    /// A case fails on any correction: a fault (trap, timeout), a hint
    /// dropped as invalid, a coercion refused, a text line removed, a
    /// host-rendered fallback, a call held for a tool that changes nothing.
    Strict,
    /// Only the expectations count (`--lenient`).
    Lenient,
}

/// What the host corrected on the calls of one case: (call number from 1,
/// tool, what was corrected).
pub type Corrections = Vec<(usize, String, String)>;

/// Checks `response` against `expect`, and (strictly) that the host
/// corrected nothing in any call of the case: the failures.
pub fn judge(expect: &Expect, response: &Response, corrections: &Corrections, strictness: Strictness) -> Vec<String> {
    let mut failures = Vec::new();
    if strictness == Strictness::Strict && !corrections.is_empty() {
        let mut failure = "the host corrected the policy's answers (--lenient lets this pass):".to_owned();
        for (n, tool, what) in corrections {
            failure.push_str(&format!("\ncall {n} ({tool}): {what}"));
        }
        failures.push(failure);
    }
    let unmet = check(expect, response);
    if unmet.is_empty() && !failures.is_empty() {
        // Corrections alone: show what the agent got too (`check` does
        // when an expectation fails).
        failures.extend(shown(response));
    }
    failures.extend(unmet);
    failures
}

/// The hints and the text of `response`, as failures show them.
fn shown(response: &Response) -> [String; 2] {
    let hints = response.structured["hints"].as_array().cloned().unwrap_or_default();
    let listed: Vec<String> = hints
        .iter()
        .map(|h| format!("{} {} (actionable: {})", h["tool"].as_str().unwrap_or("?"), h["args"], h["actionable"]))
        .collect();
    let listed = if listed.is_empty() { "(none)".to_owned() } else { listed.join("\n") };
    [format!("hints were:\n{listed}"), format!("text was:\n{}", response.text)]
}

/// Checks `response` against `expect`: the expectations that failed (then
/// what the response showed).
pub fn check(expect: &Expect, response: &Response) -> Vec<String> {
    let mut failures = Vec::new();
    let s = &response.structured;
    if let Some(want) = expect.is_error
        && want != response.is_error
    {
        failures.push(format!("isError is {}, expected {want}", response.is_error));
    }
    if let Some(kind) = &expect.error_kind
        && s.pointer("/error/kind") != Some(&Value::String(kind.clone()))
    {
        failures.push(format!("error kind is {}, expected {kind}", s.pointer("/error/kind").unwrap_or(&Value::Null)));
    }
    if let Some(want) = &expect.state_tag
        && &response.state_tag != want
    {
        failures.push(format!("state tag is `{}`, expected `{want}`", response.state_tag));
    }
    for (pointer, want) in &expect.result {
        let got = s.pointer(pointer);
        if got != Some(want) {
            failures.push(format!("{pointer} is {}, expected {want}", got.unwrap_or(&Value::Null)));
        }
    }
    let hints = s["hints"].as_array().cloned().unwrap_or_default();
    for pattern in &expect.hints_include {
        if !hints.iter().any(|h| matches(h, pattern)) {
            failures.push(format!("no hint {}", describe_pattern(pattern)));
        }
    }
    if let Some(pattern) = &expect.first_hint
        && !hints.first().is_some_and(|h| matches(h, pattern))
    {
        failures.push(format!("first hint is not {}", describe_pattern(pattern)));
    }
    if let Some(max) = expect.max_hints
        && hints.len() > max
    {
        failures.push(format!("{} hints, at most {max} expected", hints.len()));
    }
    for needle in &expect.text_contains {
        if !response.text.contains(needle.as_str()) {
            failures.push(format!("text lacks {needle:?}"));
        }
    }
    if !failures.is_empty() {
        failures.extend(shown(response));
    }
    failures
}

/// Runs every case in `dir` against `policy`, each on its graph.
pub fn run(policy: Arc<Policy>, dir: &Path, strictness: Strictness) -> Result<Vec<CaseResult>, String> {
    let cases = load_dir(dir)?;
    let sample = Arc::new(Graph::sample());
    let signpost = Signpost::new(Graph::sample(), policy).map_err(|e| e.to_string())?;
    let mut graphs: HashMap<PathBuf, Arc<Graph>> = HashMap::new();
    let mut results = Vec::with_capacity(cases.len());
    for (path, case) in cases {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let case = match case {
            Ok(case) => case,
            Err(e) => {
                results.push(CaseResult::unrun(path, name, e));
                continue;
            }
        };
        let graph = match &case.graph {
            None => sample.clone(),
            Some(rel) => {
                let file = path.parent().unwrap_or(Path::new(".")).join(rel);
                match graphs.get(&file) {
                    Some(g) => g.clone(),
                    None => match crate::graph::load(&file) {
                        Ok(g) => graphs.entry(file).or_insert(Arc::new(g)).clone(),
                        Err(e) => {
                            let failure = format!("graph {}: {e}", file.display());
                            results.push(CaseResult::unrun(path, case.description, failure));
                            continue;
                        }
                    },
                }
            }
        };
        let calls: Result<Vec<(Tool, &CaseCall)>, String> = case
            .before
            .iter()
            .chain([&case.call])
            .map(|c| {
                Tool::from_name(&c.tool).map(|t| (t, c)).ok_or_else(|| {
                    format!(
                        "`{}` is none of Signpost's tools ({}); a backend's tools need the backend after `--`",
                        c.tool,
                        Tool::NAMES.join(", ")
                    )
                })
            })
            .collect();
        let calls = match calls {
            Ok(calls) => calls,
            Err(e) => {
                results.push(CaseResult::unrun(path, case.description, e));
                continue;
            }
        };
        signpost.graphs().set(graph);
        let session = SessionContext::new();
        let mut last = None;
        let mut corrections = Corrections::new();
        for (n, (tool, call)) in calls.into_iter().enumerate() {
            let (response, notes) = signpost.call_checked(tool, call.args.clone(), &session);
            corrections.extend(notes.into_iter().map(|note| (n + 1, call.tool.clone(), note)));
            last = Some(response);
        }
        let failures = last.map_or_else(Vec::new, |r| judge(&case.expect, &r, &corrections, strictness));
        results.push(CaseResult { path, description: case.description, failures, corrections });
    }
    Ok(results)
}

/// Runs every case in `dir` against `policy` in front of the backend
/// `command` (started once), in file order: each case is a session of its
/// own on the one backend.
pub async fn run_backend(
    policy: Arc<Policy>,
    dir: &Path,
    command: Command,
    strictness: Strictness,
) -> Result<Vec<CaseResult>, String> {
    let cases = load_dir(dir)?;
    let upstream = Upstream::start(command).await.map_err(|e| format!("{e:#}"))?;
    let signpost = Signpost::new(Graph::sample(), policy).map_err(|e| e.to_string())?.with_upstream(upstream.clone());
    let mut results = Vec::with_capacity(cases.len());
    for (path, case) in cases {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let case = match case {
            Ok(case) if case.graph.is_some() => {
                let failure = "a case against a backend has no `graph`: drop it, or run without a backend".to_owned();
                results.push(CaseResult::unrun(path, case.description, failure));
                continue;
            }
            Ok(case) => case,
            Err(e) => {
                results.push(CaseResult::unrun(path, name, e));
                continue;
            }
        };
        let catalogue = upstream.catalogue();
        if let Some(unknown) = case.before.iter().chain([&case.call]).find(|c| catalogue.get(&c.tool).is_none()) {
            let names: Vec<&str> = catalogue.tools().iter().map(|t| t.name.as_ref()).collect();
            let failure = format!("the backend lists no tool `{}` (it lists: {})", unknown.tool, names.join(", "));
            results.push(CaseResult::unrun(path, case.description, failure));
            continue;
        }
        let session = SessionContext::new();
        let mut last = None;
        let mut corrections = Corrections::new();
        for (n, call) in case.before.iter().chain([&case.call]).enumerate() {
            let request = CallToolRequestParams::new(call.tool.clone()).with_arguments(call.args.clone());
            let (response, notes) = signpost.forward_checked(&upstream, request, &session).await;
            corrections.extend(notes.into_iter().map(|note| (n + 1, call.tool.clone(), note)));
            last = Some(response);
        }
        let failures = last.map_or_else(Vec::new, |r| judge(&case.expect, &r, &corrections, strictness));
        results.push(CaseResult { path, description: case.description, failures, corrections });
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_expanded_escaped_and_unset_ones_named() {
        let var = |name: &str| match name {
            "REPO" => Some("/tmp/a \"b\"\\c".to_owned()),
            _ => None,
        };
        let text = r#"{"repo_path": "${REPO}", "x": "$REPO ${} ${1A} ${REPO"}"#;
        let expanded = expand(text, var).expect("expands");
        let v: Value = serde_json::from_str(&expanded).expect("still JSON");
        assert_eq!(v["repo_path"], "/tmp/a \"b\"\\c");
        assert_eq!(v["x"], "$REPO ${} ${1A} ${REPO");
        assert_eq!(expand("${NOPE}", var), Err("the case uses ${NOPE}, which is not set".to_owned()));
    }
}
