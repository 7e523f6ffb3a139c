//! `host.lookup` in front of a backend: a 0.2.0 or later policy calls one of the
//! backend's tools that only read, while it runs, under its own deadline.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::Value;

use super::{Catalogue, Upstream, outcome_of};
use crate::policy::Rules;

/// Answers lookups from a backend, with the catalogue and the rules the
/// call is served with.
pub struct BackendLookup {
    upstream: Arc<Upstream>,
    catalogue: Arc<Catalogue>,
    rules: Arc<Rules>,
    /// What the lookups of this call found: a value a policy coerces an
    /// argument into may come from here ([`BackendLookup::found`]).
    answers: Mutex<Vec<rmcp::model::CallToolResult>>,
}

impl BackendLookup {
    /// Lookups on `upstream`'s tools as `catalogue` lists them; `rules` say
    /// which of them change state beyond what the annotations say.
    pub fn new(upstream: Arc<Upstream>, catalogue: Arc<Catalogue>, rules: Arc<Rules>) -> Self {
        BackendLookup { upstream, catalogue, rules, answers: Mutex::default() }
    }

    /// Whether a lookup of this call found `value`: a whole word of an
    /// answer's text, or a string of its structured content.
    pub fn found(&self, value: &str) -> bool {
        let answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
        answers.iter().any(|result| super::catalogue::shows(result, value))
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
                self.answers.lock().unwrap_or_else(PoisonError::into_inner).push(result);
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
