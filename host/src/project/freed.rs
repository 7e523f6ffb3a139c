//! Memory an index freed, handed back to the system once an edit serves
//! and once the project is quiet.
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
//! sixteenth part). So does the project's thread after each edit it read,
//! once the edit serves: edits in a row less than a second apart would
//! otherwise pile each one's freed pages on the last one's (thirty-sixth
//! part).
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

/// mimalloc's `mi_option_purge_delay`: its place in v3's `mi_option_e`
/// (`libmimalloc-sys` names no constant for it; a unit test checks the
/// place by its default).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// The purge delay in force before [`bulk`] first changed it (mimalloc's
/// default, 1 s).
static USUAL_DELAY: std::sync::OnceLock<std::ffi::c_long> = std::sync::OnceLock::new();

/// While a project's first index is built (`on`), the pages its threads
/// free go back to the system at once, not a second later: the readers
/// and resolvers free hundreds of megabytes of parse trees and
/// temporaries, and what they allocate next lands on fresh pages anyway,
/// so the delay only adds up the freed pages while the index grows (a
/// 3.96M-line tree: peak 981–991 MiB with the delay, 844–865 without;
/// BENCHMARKS.md, issue 47, twenty-ninth part). Once it serves (`!on`),
/// the delay is mimalloc's again: an edit's resolve frees and allocates
/// again within it, and purging at once made each edit about 50 ms slower.
/// An operator's `MIMALLOC_PURGE_DELAY` is left as it is.
#[allow(unsafe_code)]
pub(crate) fn bulk(on: bool) {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: reading and setting an option takes no pointer; mimalloc
    // reads the option each time it schedules a purge, from any thread.
    let usual = *USUAL_DELAY.get_or_init(|| unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) });
    let delay = if on { 0 } else { usual };
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, delay) };
    tracing::debug!(ms = delay, "freed pages go back to the system after");
}

/// Returns to the system the memory freed and not yet given back; with
/// `pool`, what rayon's threads hold free too (once quiet: not after each
/// edit, whose next resolve would fault those pages in again on the same
/// threads, about 30 ms an edit on a 3.3M-line tree).
#[allow(unsafe_code)]
pub(crate) fn release(pool: bool) {
    let started = std::time::Instant::now();
    // SAFETY: `mi_collect` takes no pointer and touches only mimalloc's
    // own structures, under its own locks; it may be called from any
    // thread at any time (mimalloc.h: "Eagerly free memory"). Forced, it
    // purges now every page handed back to the arenas, whichever thread
    // freed it; but the free pages a live thread still holds stay, and
    // rayon's threads (an edit's resolve, a merge's sorts) hold tens of
    // megabytes of them: each hands its own back first (on a 3.3M-line
    // tree, 521-535 MiB once quiet against 559-561; BENCHMARKS.md, issue
    // 47, thirty-sixth part). Called off rayon's threads, it waits for
    // each of them to be between two jobs.
    if pool {
        rayon::broadcast(|_| unsafe { libmimalloc_sys::mi_collect(false) });
    }
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

#[cfg(test)]
mod tests {
    /// The option [`super::bulk`] sets is the purge delay: mimalloc's
    /// default for it is 1 s, and no other option's is.
    #[test]
    #[allow(unsafe_code)]
    fn bulk_work_purges_at_once_and_serving_with_mimallocs_delay() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        // SAFETY: as in `bulk`.
        let delay = || unsafe { libmimalloc_sys::mi_option_get(super::PURGE_DELAY) };
        assert_eq!(delay(), 1000, "option {} is not mimalloc's purge delay", super::PURGE_DELAY);
        super::bulk(true);
        assert_eq!(delay(), 0);
        super::bulk(false);
        assert_eq!(delay(), 1000);
    }
}
