//! Which of a tree's indexers may run: its SCIP projects and the built-in
//! languages' precise passes, as the tree's trust and the operator's
//! choice of the built-in indexer allow, with a note for each one that
//! may not.

use std::path::{Path, PathBuf};

use signpost_graph::indexer;
use signpost_treesitter::languages::Lang;

use super::Options;
use crate::precise;

/// The SCIP projects and precise passes that may run on the tree at `root`
/// (all of them when it is trusted, none otherwise), and a note for each
/// indexer that may not, saying what it would run and how to opt in.
pub(super) fn trusted_indexers(
    opts: &Options,
    root: &Path,
    detected: Vec<(indexer::Language, PathBuf)>,
    found: &[(&'static Lang, Vec<PathBuf>)],
) -> (Vec<(indexer::Language, PathBuf)>, Vec<precise::Pass>, Vec<String>) {
    let trust = &opts.trust;
    let chosen = |lang: &str| opts.builtin.iter().find(|(l, _)| l == lang).map(|(_, why)| why.as_str());
    let mut notes = Vec::new();
    // Languages the operator gives the built-in indexer: their SCIP
    // indexers never run, trusted or not.
    for lang in indexer::LANGUAGES {
        if let Some(why) = chosen(lang.name())
            && detected.iter().any(|(l, _)| *l == lang)
        {
            notes.push(format!("{} is read by the built-in indexer, not {} ({why})", lang.name(), lang.program()));
        }
    }
    let detected: Vec<_> = detected.into_iter().filter(|(l, _)| chosen(l.name()).is_none()).collect();
    let passes: Vec<precise::Pass> = precise::passes(found)
        .into_iter()
        .filter(|p| {
            let all_chosen = p.langs.iter().all(|l| chosen(l.name).is_some());
            if all_chosen {
                let program = p.command.first().map_or("", String::as_str);
                notes.push(format!("{program} is not run: the built-in indexer reads its languages (chosen)"));
            }
            !all_chosen
        })
        .collect();
    if trust.trusted {
        return (detected, passes, notes);
    }
    for lang in indexer::LANGUAGES {
        if detected.iter().any(|(l, _)| *l == lang) {
            notes.push(trust.not_run(lang.program(), lang.reaches(), root));
        }
    }
    for pass in &passes {
        let program = pass.command.first().map_or("", String::as_str);
        notes.push(trust.not_run(program, precise::reaches(program), root));
    }
    (Vec::new(), Vec::new(), notes)
}
