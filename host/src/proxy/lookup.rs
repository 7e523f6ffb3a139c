//! `host.lookup` in front of a backend: a 0.2.0 or later policy calls one of the
//! backend's tools that only read, while it runs, under its own deadline.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::Value;

use super::{Catalogue, Upstream, outcome_of};
use crate::policy::{MAX_LOOKUP_RESULT, Rules};

/// Most lookups one agent's call makes, over all its policy functions
/// (each function may make [`crate::policy::MAX_LOOKUPS`]).
pub const MAX_LOOKUPS_PER_CALL: usize = 8;
/// Most bytes of lookup answers one agent's call keeps to check its
/// coercions against ([`BackendLookup::found`]): an answer past it still
/// reaches the policy, but nothing it holds is found. No more than one
/// answer may be ([`MAX_LOOKUP_RESULT`], checked where the policy is
/// answered): one the policy is refused is never kept.
pub const MAX_LOOKUP_BYTES_PER_CALL: usize = MAX_LOOKUP_RESULT;

/// Answers lookups from a backend, with the catalogue and the rules the
/// call is served with.
pub struct BackendLookup {
    upstream: Arc<Upstream>,
    catalogue: Arc<Catalogue>,
    rules: Arc<Rules>,
    /// What the lookups of this call found: a value a policy coerces an
    /// argument into may come from here ([`BackendLookup::found`]).
    answers: Mutex<Answers>,
}

/// The answers of one call's lookups, each with the words its arguments
/// held (keys and strings, lower-case), and what they cost.
#[derive(Default)]
struct Answers {
    found: Vec<(rmcp::model::CallToolResult, std::collections::HashSet<String>)>,
    /// Lookups sent to the backend (each counted before it is sent).
    made: usize,
    /// Bytes of the answers kept.
    bytes: usize,
}

impl BackendLookup {
    /// Lookups on `upstream`'s tools as `catalogue` lists them; `rules` say
    /// which of them change state beyond what the annotations say.
    pub fn new(upstream: Arc<Upstream>, catalogue: Arc<Catalogue>, rules: Arc<Rules>) -> Self {
        BackendLookup { upstream, catalogue, rules, answers: Mutex::default() }
    }

    /// Whether a lookup of this call found `value`, a coercion of what the
    /// agent `sent`: a whole word of an answer's text, or a string of its
    /// structured content, whose every word the agent did not send is not
    /// one the lookup asked with either. An answer that says its query back
    /// (`no results for "ada Bob"`) finds nothing the policy wrote itself.
    pub fn found(&self, value: &str, sent: &str) -> bool {
        let lower = |w: &str| w.to_lowercase();
        let said: Vec<String> = crate::session::words(sent).map(lower).collect();
        let added: Vec<String> = crate::session::words(value).map(lower).filter(|w| !said.contains(w)).collect();
        let answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
        answers
            .found
            .iter()
            .any(|(result, asked)| !added.iter().any(|w| asked.contains(w)) && super::catalogue::shows(result, value))
    }
}

impl crate::policy::Lookup for BackendLookup {
    fn lookup(&self, tool: &str, args: &str, deadline: Instant) -> Result<String, String> {
        let Some(listed) = self.catalogue.get(tool) else {
            return Err(format!("the backend lists no tool `{}`", crate::clip(tool)));
        };
        if !self.rules.may_look_up(self.catalogue.tool_set(), tool) {
            return Err(format!(
                "`{tool}` may change state: a lookup calls only tools the backend marks read-only (readOnlyHint) and the \
                 policy's rules do not say change state"
            ));
        }
        let args = match serde_json::from_str::<Value>(args) {
            Ok(Value::Object(map)) => map,
            _ => return Err(format!("{tool} takes a JSON object of arguments")),
        };
        self.catalogue.validate(tool, &Value::Object(args.clone()))?;
        {
            let mut answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
            if answers.made >= MAX_LOOKUPS_PER_CALL {
                return Err(format!("this call has made its {MAX_LOOKUPS_PER_CALL} lookups"));
            }
            answers.made += 1;
        }
        let asked = asked_words(&args);
        // Policy calls run on a worker of the server's runtime (in place, or
        // handed off); the wait hands it off, if it was not. Anywhere else a
        // lookup cannot wait.
        let handle = tokio::runtime::Handle::try_current()
            .ok()
            .filter(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
            .ok_or("lookups on a backend need the server's runtime")?;
        let params = CallToolRequestParams::new(listed.name.clone()).with_arguments(args);
        let deadline = tokio::time::Instant::from_std(deadline);
        let answer = crate::policy::off_the_runtime(|| {
            handle.block_on(tokio::time::timeout_at(deadline, self.upstream.call(params, None)))
        });
        match answer {
            Err(_) => Err("the backend did not answer before the policy call's deadline".into()),
            Ok(Err(e)) => Err(e.to_string()),
            Ok(Ok(CallToolResponse::Complete(result))) if result.is_error != Some(true) => {
                let outcome = outcome_of(&result).to_string();
                // (kept to check coercions against within a budget: past it
                // the policy still reads the answer, but a value it coerces
                // from it is not found)
                let mut answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
                if answers.bytes + outcome.len() <= MAX_LOOKUP_BYTES_PER_CALL {
                    answers.bytes += outcome.len();
                    answers.found.push((result, asked));
                }
                Ok(outcome)
            }
            Ok(Ok(CallToolResponse::Complete(result))) => {
                let text: Vec<&str> =
                    result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
                Err(format!("{tool} failed: {}", crate::sanitize::line(&text.join(" "), 500)))
            }
            Ok(Ok(_)) => Err(format!("{tool} answered with an input request or a task, which a lookup cannot take")),
        }
    }
}

/// The words of a lookup's arguments, its keys' and its strings', lower-case.
fn asked_words(args: &serde_json::Map<String, Value>) -> std::collections::HashSet<String> {
    fn walk(v: &Value, out: &mut std::collections::HashSet<String>, depth: u8) {
        match v {
            Value::String(s) => out.extend(crate::session::words(s).map(str::to_lowercase)),
            Value::Array(items) if depth < 32 => items.iter().for_each(|i| walk(i, out, depth + 1)),
            Value::Object(map) if depth < 32 => {
                for (k, v) in map {
                    out.extend(crate::session::words(k).map(str::to_lowercase));
                    walk(v, out, depth + 1);
                }
            }
            _ => {}
        }
    }
    let mut out = std::collections::HashSet::new();
    for (k, v) in args {
        out.extend(crate::session::words(k).map(str::to_lowercase));
        walk(v, &mut out, 1);
    }
    out
}
