//! An edit served: the changed files read again, each language's part
//! patched per file into the part served (or imported whole when it
//! cannot be), and swapped in ([`Project::refresh`], from the watcher's
//! loop in `watch.rs`).

use std::path::PathBuf;
use std::time::Instant;

use signpost_graph::scip::patches_language;
use signpost_graph::tree;
use signpost_treesitter::walk::{self, WalkOptions};

use super::parts::uncovered;
use super::watch::whole_only;
use super::{Project, Served};
use crate::live_graph::{LiveGraph, ReloadRecord};

impl Project {
    /// Serves a language's part read again: patched per file into the part
    /// served when this process made that part ([`LiveGraph::patch_part`]),
    /// imported whole otherwise. How (`patched N files`, `unchanged`, or
    /// why whole), the swap's record, and the part now.
    fn swap_in(
        &mut self,
        indexed: &signpost_treesitter::Indexed,
        graphs: &LiveGraph,
    ) -> anyhow::Result<(String, ReloadRecord, std::sync::Arc<signpost_graph::Graph>)> {
        use signpost_graph::scip::{Patch, delta_known};
        let lang = indexed.lang.name;
        let path = self.built_in_file(lang);
        let opts = signpost_graph::scip::Options { name: lang.to_owned() };
        let whole_only = whole_only();
        // An index written in part: only a patch of the index served reads
        // it; a whole import reads the workspace's whole index.
        let only = indexed.changed.as_ref().is_some_and(|c| c.only);
        // The memo of the new index, once made, serves the whole import too
        // (not one of an index written in part).
        let (why, memo) = match self.served.remove(lang) {
            _ if whole_only => ("SIGNPOST_EDITS_WHOLE is set", None),
            Some(served) if graphs.part(&path).is_some_and(|p| std::sync::Arc::ptr_eq(&p, &served.graph)) => {
                // What the workspace knows changed since the index served.
                let changed = indexed.changed.as_ref().filter(|c| c.since == served.generation);
                let changed = changed.map(|c| c.documents.as_slice());
                if only && changed.is_none() {
                    return self.whole(indexed, graphs, "the index written in part is of another base", None);
                }
                let (patch, memo) = delta_known(&served.graph, &served.memo, &indexed.index, changed, &opts)?;
                match patch {
                    Patch::Unchanged => {
                        let record = ReloadRecord::unchanged(&path);
                        self.served
                            .insert(lang, Served { graph: served.graph.clone(), memo, generation: indexed.generation });
                        return Ok(("unchanged".into(), record, served.graph));
                    }
                    Patch::Delta(d) => {
                        let patched = graphs.patch_part(&path, &served.graph, |g, fallback| g.spliced(&d, fallback));
                        match patched {
                            Some((record, graph)) if record.result == "swapped" => {
                                self.served.insert(
                                    lang,
                                    Served { graph: graph.clone(), memo, generation: indexed.generation },
                                );
                                return Ok((format!("patched {} files", d.files.len()), record, graph));
                            }
                            // Refused (and said so in the status): the
                            // part is imported whole at once instead.
                            Some(_) => ("the patch was refused", Some(memo)),
                            None => ("the part was replaced since", Some(memo)),
                        }
                    }
                    Patch::Whole(why) => (why, Some(memo)),
                }
            }
            Some(_) => ("the part was replaced since", None),
            None => ("no part made by this process", None),
        };
        self.whole(indexed, graphs, why, memo.filter(|_| !only && !whole_only))
    }

    /// Imports a language's part read again whole (the workspace's whole
    /// index when `indexed` holds only what changed), for the reason `why`;
    /// `memo` is the index's when already made.
    fn whole(
        &mut self,
        indexed: &signpost_treesitter::Indexed,
        graphs: &LiveGraph,
        why: &str,
        memo: Option<signpost_graph::scip::Memo>,
    ) -> anyhow::Result<(String, ReloadRecord, std::sync::Arc<signpost_graph::Graph>)> {
        use signpost_graph::scip::{Memo, import_index};
        let lang = indexed.lang.name;
        let path = self.built_in_file(lang);
        let opts = signpost_graph::scip::Options { name: lang.to_owned() };
        let written = match indexed.changed.as_ref().filter(|c| c.only) {
            Some(_) => match self.parts.iter().find(|w| std::ptr::eq(w.lang(), indexed.lang)) {
                Some(ws) => Some(ws.written()),
                None => anyhow::bail!("no workspace of {lang} to write its whole index (a bug in signpost)"),
            },
            None => None,
        };
        let index = written.as_ref().unwrap_or(&indexed.index);
        let graph = std::sync::Arc::new(import_index(index, &opts)?);
        let record = graphs.replace_parts(vec![(path, graph.clone())]);
        // With patches off, nothing reads a memo.
        if record.result == "swapped" && !whole_only() {
            let memo = memo.unwrap_or_else(|| Memo::of(index));
            self.served.insert(lang, Served { graph: graph.clone(), memo, generation: indexed.generation });
        }
        Ok((format!("whole: {why}"), record, graph))
    }

    /// Reads the changed files again and swaps in the parts they belong to;
    /// when a SCIP project's index came in (`covered`), its files leave
    /// the built-in indexer's part.
    pub(super) fn refresh(
        &mut self,
        changed: &[PathBuf],
        covered: bool,
        graphs: &LiveGraph,
        seen: u64,
    ) -> anyhow::Result<()> {
        let started = Instant::now();
        // Edits to files it knows need no walk; a new or deleted file does.
        let known = !covered && changed.iter().all(|c| c.is_file() && self.parts.iter().any(|w| w.knows(c)));
        let found = if known {
            Vec::new()
        } else {
            let (found, notes) = walk::sources(&self.root, &WalkOptions::default());
            graphs.set_notes("walk", notes);
            found
        };
        let mut updates = Vec::new();
        for ws in &mut self.parts {
            let files = if known {
                ws.files()
            } else {
                let all =
                    found.iter().find(|(l, _)| std::ptr::eq(*l, ws.lang())).map_or(&[][..], |(_, f)| f.as_slice());
                uncovered(ws.lang(), all, &self.scip_roots)
            };
            // Only the documents that changed are written when a patch of
            // the part served will read them.
            let name = ws.lang().name;
            let in_part = self.served.contains_key(name) && patches_language(name) && !whole_only();
            let update = if in_part { ws.update_in_part(&files, changed) } else { ws.update(&files, changed) };
            if let Some(indexed) = update {
                updates.push(indexed);
            }
        }
        let indexed_ms = started.elapsed().as_millis() as u64;
        for indexed in &updates {
            *self.edits.entry(indexed.lang.name).or_insert(0) += 1;
            let at = Instant::now();
            let (how, record, graph) = self.swap_in(indexed, graphs)?;
            let import_ms = at.elapsed().as_millis() as u64;
            graphs.set_notes(indexed.lang.name, indexed.report.notes.clone());
            if matches!(record.result, "swapped" | "unchanged") {
                // Every file the part holds now, and the changed ones that
                // are gone, is as current as what was read.
                let part = self.parts.iter().find(|w| std::ptr::eq(w.lang(), indexed.lang));
                if let Some(ws) = part {
                    self.save(ws, graph);
                }
                graphs.mark_indexed(seen, |file| {
                    let path = self.root.join(tree::unspell(file));
                    part.is_some_and(|w| w.knows(&path)) || (changed.contains(&path) && !path.exists())
                });
            }
            tracing::info!(
                language = indexed.lang.name,
                changed = changed.len(),
                result = record.result,
                how,
                ms = started.elapsed().as_millis() as u64,
                indexed_ms,
                import_ms,
                swap_ms = record.duration_ms,
                resolved_files = indexed.report.again.resolved,
                definitions_kept = indexed.report.again.definitions_kept,
                documents = indexed.index.documents.len(),
                "re-indexed after a change"
            );
        }
        // A precise pass of an edited language runs again once edits are
        // quiet (and one under way is thrown away when it lands).
        for i in 0..self.precise.len() {
            if self.precise[i].langs.iter().any(|l| updates.iter().any(|u| std::ptr::eq(u.lang, *l))) {
                self.precise[i].again = true;
                self.when_quiet(i);
            }
        }
        Ok(())
    }
}
