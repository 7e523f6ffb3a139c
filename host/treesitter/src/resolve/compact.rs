//! What a workspace keeps between resolves, allocated again, one value at
//! a time.
//!
//! A part's files are read on many threads at once, each reading's facts
//! allocated among its parse tree and query matches; its resolve allocates
//! the definitions and lookups it keeps among millions of temporaries. Once
//! those are freed, what is kept is scattered over pages it mostly does not
//! fill, many of them abandoned by threads that exited (mimalloc cannot
//! hand back a page one block of which is live): on a 3.96M-line tree,
//! about 200 MiB beyond the live data (BENCHMARKS.md, issue 47,
//! twenty-third part). Copied once, on one thread, after the rest is
//! freed, the same values fill pages of their own and the old ones are
//! handed back whole. Each value (a reading, a field of the resolve) is
//! freed as soon as its copy is made: copied whole, the kept state was
//! twice in memory for a moment, the process's peak on large trees.
//!
//! A copy keeps what is shared shared: a file's reading is held by the
//! workspace and by the project resolved from it, and an edit tells the
//! files it need not resolve again by that very sharing
//! (`Arc::ptr_eq`, `again.rs`).

use std::sync::Arc;

use super::{HashMap, Memo, Project, Source};
use crate::extract::Shelf;

/// `value` allocated again: the copy made, then the old one freed, so that
/// what is copied one field at a time never holds two copies of more than
/// that field.
fn again<T: Clone>(value: &mut T) {
    *value = value.clone();
}

impl Project {
    /// Allocates again what the project keeps beside its readings, one
    /// field at a time. Its readings are the workspace's too: the two are
    /// copied together, one reading at a time ([`compact_readings`]). Its
    /// uses, when `memo` shares them, stay shared.
    pub fn compact(&mut self, memo: &mut Memo) {
        let Project { sources: _, defs, symbols, supers, uses, expanded, counts: _, first_def } = self;
        again(defs);
        *symbols = symbols.copied();
        again(supers);
        let shared = Arc::ptr_eq(uses, &memo.files);
        *uses = Arc::new(uses.as_ref().clone());
        again(expanded);
        again(first_def);
        memo.compact(shared.then(|| uses.clone()));
    }
}

impl Memo {
    /// Allocates again what the memo keeps, one field at a time; its
    /// files' uses are `uses` when given (the project's, copied already).
    fn compact(&mut self, uses: Option<Arc<Vec<super::again::FileUses>>>) {
        self.files = uses.unwrap_or_else(|| Arc::new(self.files.as_ref().clone()));
        again(&mut self.shape);
        if let Some(warm) = self.warm.as_deref_mut() {
            let super::warm::Warm { look, members, held, overrides, anonymous, counts: _ } = warm;
            again(look);
            again(members);
            again(held);
            again(overrides);
            again(anonymous);
        }
    }
}

/// Allocates again each reading `readings` holds, and the project's hold
/// of the same reading, one reading at a time: the copy made, both holders
/// given it, and the old one freed before the next is copied. A reading
/// stays shared (an edit tells the files it need not resolve again by
/// that sharing, `Arc::ptr_eq`, `again.rs`).
///
/// With a `shelf`, each copy's packed body is on it ([`Body::shelved`]):
/// out of memory, read back when an edit reads the file again.
///
/// [`Body::shelved`]: crate::extract::Body::shelved
pub fn compact_readings<'a>(
    readings: impl Iterator<Item = &'a mut Arc<Source>>,
    mut project: Option<&mut Project>,
    shelf: Option<&Arc<Shelf>>,
) {
    let copied = |s: &Source| {
        let Source { path, lang, facts, body, package, module } = s;
        Arc::new(Source {
            path: path.clone(),
            lang,
            facts: facts.clone(),
            body: shelf.map_or_else(|| body.clone(), |shelf| body.shelved(shelf)),
            package: package.clone(),
            module: module.clone(),
        })
    };
    // The project's readings by address. Each is looked up while it is
    // still alive (held by the reading being copied), so no address here
    // can be one a freed reading's copy took since.
    let mut at: HashMap<*const Source, usize> = match &project {
        Some(p) => p.sources.iter().enumerate().map(|(i, s)| (Arc::as_ptr(s), i)).collect(),
        None => HashMap::default(),
    };
    for reading in readings {
        let copy = copied(reading);
        if let Some(i) = at.remove(&Arc::as_ptr(reading))
            && let Some(p) = project.as_deref_mut()
        {
            p.sources[i] = copy.clone();
        }
        *reading = copy;
    }
    // Readings only the project holds (none after a resolve of the
    // workspace's files): copied alone.
    if let Some(p) = project {
        for (_, i) in at {
            p.sources[i] = copied(&p.sources[i]);
        }
    }
}
