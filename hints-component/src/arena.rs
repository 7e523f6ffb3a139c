//! The instance's allocator: a bump arena for what one call allocates, over
//! a general allocator for everything else.
//!
//! Every call into the component allocates the same way: the host lowers
//! the arguments into fresh allocations (the session's history alone is
//! hundreds of small strings, on every call), the policy builds its answer,
//! and once the host has read the answer everything is freed again. An
//! arena serves that pattern best: an allocation is a pointer bump, a free
//! is a count, and when no arena allocation is live any more (the call is
//! over) the arena starts again from its beginning.
//!
//! Bounded whatever the pattern: an allocation that does not fit (too
//! large, or the arena is full) goes to the backing allocator. If something
//! outlived its call in the arena, the arena fills once and from then on
//! every allocation goes to the backing allocator until that one is freed:
//! slower, never unbounded.
//!
//! Only sound where there is one thread (a component instance without the
//! threads proposal): the state is not synchronised. Its tests run it
//! natively (`tests/e2e/policy_native.rs`).
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::cell::UnsafeCell;

/// Bytes the arena holds: what a large call allocates, many times over
/// what a usual one does.
pub const ARENA_BYTES: usize = 256 << 10;
/// Alignment of the arena's block (larger alignments are bumped to).
const BLOCK_ALIGN: usize = 16;

/// A bump arena of [`ARENA_BYTES`] over `backing`.
pub struct Arena<A> {
    backing: A,
    state: UnsafeCell<State>,
}

#[derive(Debug, Clone, Copy)]
struct State {
    /// The block's bounds (`start == 0`: not taken from the backing
    /// allocator yet).
    start: usize,
    end: usize,
    /// Where the next allocation goes.
    top: usize,
    /// Where the most recent allocation starts: it can grow or shrink in
    /// place.
    last: usize,
    /// Arena allocations not freed yet.
    live: usize,
}

// SAFETY: only where there is one thread (WebAssembly without the threads
// proposal), the only place a shared arena (a `static`) is possible.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
unsafe impl<A: Sync> Sync for Arena<A> {}

impl<A: GlobalAlloc> Arena<A> {
    /// An arena whose block, and whatever does not fit in it, come from
    /// `backing`.
    pub const fn new(backing: A) -> Self {
        Arena { backing, state: UnsafeCell::new(State { start: 0, end: 0, top: 0, last: 0, live: 0 }) }
    }

    #[allow(clippy::mut_from_ref)]
    fn state(&self) -> &mut State {
        // SAFETY: one thread, and no reference to the state outlives a call
        // of this module's functions, which never call each other while
        // holding one.
        unsafe { &mut *self.state.get() }
    }

    /// Whether `ptr` lies in the arena's block (not the backing allocator's).
    pub fn holds(&self, ptr: *const u8) -> bool {
        let s = self.state();
        let at = ptr as usize;
        s.start != 0 && at >= s.start && at < s.end
    }

    /// An allocation in the arena, if it fits.
    fn bump(&self, layout: Layout) -> Option<*mut u8> {
        let s = self.state();
        if s.start == 0 {
            // SAFETY: a non-zero size and a power-of-two alignment.
            let block = unsafe { self.backing.alloc(Layout::from_size_align_unchecked(ARENA_BYTES, BLOCK_ALIGN)) };
            if block.is_null() {
                return None;
            }
            s.start = block as usize;
            s.end = s.start + ARENA_BYTES;
            s.top = s.start;
        }
        let at = s.top.checked_add(layout.align() - 1)? & !(layout.align() - 1);
        let next = at.checked_add(layout.size())?;
        if next > s.end {
            return None;
        }
        s.top = next;
        s.last = at;
        s.live += 1;
        Some(at as *mut u8)
    }

    /// Arena allocations not freed yet.
    pub fn live(&self) -> usize {
        self.state().live
    }
}

// SAFETY: every pointer handed out is either inside the arena's block,
// within its bounds and aligned as asked, and not handed out again until
// it is freed (the arena restarts only when nothing in it is live; the
// most recent allocation is given back only when it is freed); or it is
// the backing allocator's, and goes back to it.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Arena<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match self.bump(layout) {
            Some(ptr) => ptr,
            // SAFETY: the caller's layout, as the caller gave it.
            None => unsafe { self.backing.alloc(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !self.holds(ptr) {
            // SAFETY: the backing allocator's pointer, with its layout.
            return unsafe { self.backing.dealloc(ptr, layout) };
        }
        let s = self.state();
        s.live -= 1;
        if s.live == 0 {
            s.top = s.start;
        } else if ptr as usize == s.last {
            // The most recent allocation: its bytes are free again.
            s.top = s.last;
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !self.holds(ptr) {
            // SAFETY: the backing allocator's pointer, with its layout.
            return unsafe { self.backing.realloc(ptr, layout, new_size) };
        }
        let s = self.state();
        let at = ptr as usize;
        if at == s.last && at.checked_add(new_size).is_some_and(|end| end <= s.end) {
            // The most recent allocation grows or shrinks where it is.
            s.top = at + new_size;
            return ptr;
        }
        if new_size <= layout.size() {
            return ptr;
        }
        // SAFETY: `new_size` is non-zero (larger than the old size) and
        // valid with the old alignment, as `realloc`'s caller guarantees.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: as `alloc` and `dealloc` above; the two blocks are
        // distinct, and the old one holds `layout.size()` bytes.
        unsafe {
            let moved = self.alloc(new_layout);
            if !moved.is_null() {
                std::ptr::copy_nonoverlapping(ptr, moved, layout.size());
                self.dealloc(ptr, layout);
            }
            moved
        }
    }
}
