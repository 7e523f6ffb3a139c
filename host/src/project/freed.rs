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
