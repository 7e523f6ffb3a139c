//! Memory an index freed, handed back to the system once the project is
//! quiet.
//!
//! The binary allocates with mimalloc (`bin/signpost/main.rs`), which
//! keeps the pages a thread frees for a second (`purge_delay`) and returns
//! them only when some thread allocates or frees again after that. A
//! served project goes quiet right after its first index or an edit has
//! been read, with hundreds of megabytes freed by the indexer's threads
//! (parse trees, SCIP documents, the graphs replaced): nothing returns
//! them until the next edit. Once quiet, the project's thread asks
//! mimalloc to collect now (BENCHMARKS.md, issue 47 sixteenth part).
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
    // purges every arena now, whichever thread freed the pages.
    unsafe { libmimalloc_sys::mi_collect(true) };
    tracing::debug!(us = started.elapsed().as_micros() as u64, "freed memory returned to the system");
}
