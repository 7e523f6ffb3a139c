//! What a workspace keeps between resolves, allocated again in one pass.
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
//! handed back whole.
//!
//! A copy keeps what is shared shared: a file's reading is held by the
//! workspace and by the project resolved from it, and an edit tells the
//! files it need not resolve again by that very sharing
//! (`Arc::ptr_eq`, `again.rs`).

use std::sync::Arc;

use super::{HashMap, Memo, Project, Source};

/// Copies of readings, each made once, by the reading they copy. The
/// readings copied are held until the copies are: no address it is keyed
/// by is freed and given to another while it is.
#[derive(Default)]
pub struct Copies(HashMap<*const Source, (Arc<Source>, Arc<Source>)>);

impl Copies {
    /// The copy of `s`: the same for every holder of `s`.
    pub fn of(&mut self, s: &Arc<Source>) -> Arc<Source> {
        let (_, copy) = self.0.entry(Arc::as_ptr(s)).or_insert_with(|| (s.clone(), Arc::new(Source::clone(s))));
        copy.clone()
    }
}

impl Project {
    /// The project allocated again, its readings shared as `copies` has
    /// them.
    pub fn compacted(&self, copies: &mut Copies) -> Project {
        Project {
            sources: self.sources.iter().map(|s| copies.of(s)).collect(),
            defs: self.defs.clone(),
            symbols: self.symbols.clone(),
            supers: self.supers.clone(),
            uses: Arc::new(self.uses.as_ref().clone()),
            expanded: self.expanded.clone(),
            counts: self.counts,
            first_def: self.first_def.clone(),
        }
    }
}

impl Memo {
    /// The memo allocated again. (Its files' uses are shared with the
    /// project until [`Project::keep_for_next`]; copied, each has its
    /// own, which the next resolve takes without copying them again.)
    pub fn compacted(&self) -> Memo {
        Memo {
            files: Arc::new(self.files.as_ref().clone()),
            shape: self.shape.clone(),
            warm: self.warm.as_ref().map(|w| Box::new(w.as_ref().clone())),
        }
    }
}
