//! Memory an index freed, handed back to the system once the project is
//! quiet.
//!
//! The binary allocates with mimalloc (`bin/signpost/main.rs`), which
//! keeps the pages a thread frees for a second (`purge_delay`) and returns
//! them only when some thread allocates or frees again after that. A
//! served project goes quiet right after its first index or an edit has
//! been read, with hundreds of megabytes freed by the indexer's threads
//! (parse trees, SCIP documents, the graphs replaced): nothing returns
//! them until the next edit. Once quiet (not while the first index is
//! still being built), the project's thread asks mimalloc to collect now,
//! and so does the saver after each save (BENCHMARKS.md, issue 47
//! sixteenth part).
//!
//! Before that, once no part waits to be saved (the saver shares the
//! parts' readings until then), what each language's workspace keeps
//! between resolves is allocated again on the project's thread, one part a
//! quiet second ([`signpost_treesitter::Workspace::compact`]): kept among
//! the readers' and resolvers' temporaries, it pins pages they mostly
//! emptied. On a 3.96M-line tree, 974-988 MiB once quiet became 904
//! (BENCHMARKS.md, issue 47, twenty-fourth part).
//!
//! In a process that allocates with another allocator (the library's unit
//! tests), mimalloc holds nothing and the call only looks.

/// Returns to the system the memory freed and not yet given back.
#[allow(unsafe_code)]
pub(crate) fn release() {
    let started = std::time::Instant::now();
    // SAFETY: `mi_collect` takes no pointer and touches only mimalloc's
    // own structures, under its own locks; it may be called from any
    // thread at any time (mimalloc.h: "Eagerly free memory"). Forced, it
    // purges now every page handed back to the arenas, whichever thread
    // freed it (the few free pages a live thread still holds stay).
    unsafe { libmimalloc_sys::mi_collect(true) };
    tracing::debug!(us = started.elapsed().as_micros() as u64, "freed memory returned to the system");
}

/// Allocates again what one of `parts` keeps since its last resolve
/// ([`signpost_treesitter::Workspace::compact`]), if one has not been:
/// one at a time, so that an edit waits for one part's copy at most (the
/// Java part of a 3.96M-line tree: 0.2 s). Says whether it did.
pub(crate) fn compact_one(parts: &mut [signpost_treesitter::Workspace]) -> bool {
    let started = std::time::Instant::now();
    let Some(ws) = parts.iter_mut().find_map(|ws| ws.compact().then_some(ws)) else {
        return false;
    };
    tracing::debug!(
        language = ws.lang().name,
        ms = started.elapsed().as_millis() as u64,
        "what the part keeps allocated again"
    );
    true
}
