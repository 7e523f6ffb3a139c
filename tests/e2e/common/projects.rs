//! Projects on disk for the graph suites: copying fixtures into scratch
//! directories, and an agent that follows every hint a served graph gives.

use std::collections::{BTreeSet, VecDeque};
use std::path::Path;

use serde_json::Value;

use crate::common::Client;

/// Copies the directory tree `from` to `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{e}"));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{e}")).flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// Follows every actionable hint breadth-first from `starts`, sending each
/// verbatim; returns how many calls were made. Fails on any call that
/// errors without the policy having offered it as a way forward.
pub async fn walk_hints(client: &Client, starts: Vec<(String, Value)>, budget: usize) -> usize {
    let mut queue: VecDeque<(String, Value)> = starts.into();
    let mut seen = BTreeSet::new();
    let mut calls = 0;
    while let Some((tool, args)) = queue.pop_front() {
        if calls >= budget || !seen.insert(format!("{tool}{args}")) {
            continue;
        }
        calls += 1;
        let reply = client.call(&tool, args.clone()).await;
        assert!(!reply.is_error, "{tool} {args} failed when sent verbatim:\n{}", reply.text);
        queue.extend(reply.actionable());
    }
    calls
}
