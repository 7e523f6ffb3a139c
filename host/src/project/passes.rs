//! The built-in languages' precise passes (their SCIP indexers found on
//! PATH, [`crate::precise`]): each run in the background, run again once
//! edits are quiet, and its index swapped in for a language whose files did
//! not change while it ran.

use std::path::PathBuf;
use std::time::Duration;

use super::{Event, Project};
use crate::live_graph::LiveGraph;
use crate::precise;

impl Project {
    /// Each of pass `i`'s languages' edit count.
    pub(super) fn generations(&self, i: usize) -> Vec<u64> {
        self.precise[i].langs.iter().map(|l| self.edits.get(l.name).copied().unwrap_or(0)).collect()
    }

    /// Runs precise pass `i` in the background.
    pub(super) fn start_precise(&mut self, i: usize) {
        let generations = self.generations(i);
        let pass = &mut self.precise[i];
        pass.running = true;
        pass.again = false;
        let (command, langs) = (pass.command.clone(), pass.langs.clone());
        let (root, cache, events) = (self.root.clone(), self.cache.clone(), self.events.clone());
        let what = command.first().cloned().unwrap_or_default();
        tracing::info!(indexer = %what, "the precise pass starts in the background");
        let spawned = std::thread::Builder::new().name("signpost-precise".into()).spawn(move || {
            let result = precise::run(&command, &langs, &root, &cache).map_err(|e| format!("{e:#}"));
            let _ = events.send(Event::Precise { pass: i, generations, result });
        });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "the precise pass could not start");
            self.precise[i].running = false;
        }
    }

    /// Asks for pass `i` to run again once the tree has been quiet for
    /// [`precise::QUIET`] (`SIGNPOST_PRECISE_QUIET_MS` overrides it): one
    /// timer per pass, armed again while edits go on.
    pub(super) fn when_quiet(&mut self, i: usize) {
        if std::mem::replace(&mut self.precise[i].waiting, true) {
            return;
        }
        let quiet = std::env::var("SIGNPOST_PRECISE_QUIET_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(precise::QUIET, Duration::from_millis);
        let (events, generations) = (self.events.clone(), self.generations(i));
        let _ = std::thread::Builder::new().name("signpost-quiet".into()).spawn(move || {
            std::thread::sleep(quiet);
            let _ = events.send(Event::Quiet { pass: i, generations });
        });
    }

    /// Pass `i` ended: each language whose files did not change while it
    /// ran gets its index in place of the built-in indexer's part.
    pub(super) fn landed(
        &mut self,
        i: usize,
        generations: &[u64],
        result: Result<Vec<PathBuf>, String>,
        graphs: &LiveGraph,
    ) {
        self.precise[i].running = false;
        let what = self.precise[i].command.first().cloned().unwrap_or_default();
        let files = match result {
            Ok(files) => files,
            Err(e) => {
                tracing::warn!(indexer = %what, error = %e, "the precise pass failed; the built-in indexer's parts keep serving");
                return;
            }
        };
        let now = self.generations(i);
        let langs = self.precise[i].langs.clone();
        for (((lang, file), then), now) in langs.iter().zip(files).zip(generations).zip(now) {
            if *then != now {
                // Files changed while it ran: its index is of older files.
                self.precise[i].again = true;
                continue;
            }
            let opts = signpost_graph::scip::Options { name: lang.name.to_owned() };
            match signpost_graph::scip::import_file(&file, &opts) {
                Ok(graph) => {
                    // The built-in part it replaces is not patched again.
                    self.served.remove(lang.name);
                    let record =
                        graphs.replace_parts(vec![(self.built_in_file(lang.name), std::sync::Arc::new(graph))]);
                    tracing::info!(language = lang.name, indexer = %what, result = record.result, "the precise pass's index swaps in");
                }
                Err(e) => {
                    tracing::warn!(language = lang.name, indexer = %what, error = %e, "the precise pass's index does not load")
                }
            }
        }
        if self.precise[i].again {
            self.when_quiet(i);
        }
    }
}
