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
//! threads proposal): the state is not synchronised.
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

// SAFETY: see the module docs: used only where there is one thread.
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

    fn owns(&self, ptr: *mut u8) -> bool {
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

    /// Arena allocations not freed yet (for tests).
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
        if !self.owns(ptr) {
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
        if !self.owns(ptr) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::System;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).expect("a valid layout")
    }

    fn in_block(arena: &Arena<System>, ptr: *mut u8) -> bool {
        arena.owns(ptr)
    }

    #[test]
    fn a_call_s_allocations_bump_and_the_arena_restarts_when_all_are_freed() {
        let arena = Arena::new(System);
        unsafe {
            let a = arena.alloc(layout(10, 1));
            let b = arena.alloc(layout(8, 8));
            assert!(in_block(&arena, a) && in_block(&arena, b));
            assert_eq!(b as usize % 8, 0, "aligned as asked");
            assert!(b as usize >= a as usize + 10, "no overlap");
            a.write_bytes(1, 10);
            b.write_bytes(2, 8);
            assert_eq!(arena.live(), 2);
            arena.dealloc(a, layout(10, 1));
            assert_eq!(*b, 2, "freeing one leaves the other alone");
            let c = arena.alloc(layout(4, 4));
            assert!(c as usize >= b as usize + 8, "a freed block that is not the last is not reused while others live");
            arena.dealloc(b, layout(8, 8));
            arena.dealloc(c, layout(4, 4));
            assert_eq!(arena.live(), 0);
            assert_eq!(arena.alloc(layout(10, 1)), a, "nothing live: the arena starts again");
        }
    }

    #[test]
    fn the_last_allocation_grows_in_place_and_others_move() {
        let arena = Arena::new(System);
        unsafe {
            let a = arena.alloc(layout(16, 8));
            a.write_bytes(7, 16);
            let grown = arena.realloc(a, layout(16, 8), 4096);
            assert_eq!(grown, a, "the last allocation grows where it is");
            let b = arena.alloc(layout(8, 8));
            let moved = arena.realloc(a, layout(4096, 8), 8192);
            assert_ne!(moved, a, "one that is not the last moves");
            assert!((0..16).all(|i| *moved.add(i) == 7), "and keeps its bytes");
            assert_eq!(arena.live(), 2, "moving frees the old block");
            let shrunk = arena.realloc(b, layout(8, 8), 4);
            assert_eq!(shrunk, b);
            arena.dealloc(moved, layout(8192, 8));
            arena.dealloc(b, layout(4, 8));
            assert_eq!(arena.live(), 0);
        }
    }

    #[test]
    fn what_does_not_fit_goes_to_the_backing_allocator() {
        let arena = Arena::new(System);
        unsafe {
            let big = arena.alloc(layout(ARENA_BYTES + 1, 8));
            assert!(!big.is_null() && !in_block(&arena, big), "larger than the arena");
            big.write_bytes(0, ARENA_BYTES + 1);
            // Something that outlives its call: the arena fills, then
            // everything goes to the backing allocator until it is freed.
            let kept = arena.alloc(layout(64, 8));
            let mut fillers = Vec::new();
            loop {
                let p = arena.alloc(layout(1024, 8));
                if !in_block(&arena, p) {
                    arena.dealloc(p, layout(1024, 8));
                    break;
                }
                fillers.push(p);
            }
            assert!(fillers.len() < ARENA_BYTES / 1024, "bounded by the arena's size");
            for p in fillers {
                arena.dealloc(p, layout(1024, 8));
            }
            let grown = arena.realloc(big, layout(ARENA_BYTES + 1, 8), ARENA_BYTES * 2);
            assert!(!grown.is_null() && !in_block(&arena, grown));
            arena.dealloc(grown, layout(ARENA_BYTES * 2, 8));
            assert_eq!(arena.live(), 1);
            arena.dealloc(kept, layout(64, 8));
            assert_eq!(arena.alloc(layout(64, 8)), kept, "restarted once the last one went");
        }
    }

    #[test]
    fn a_std_workload_round_trips() {
        // Collections on top of the arena keep their contents through
        // growth, moves and frees, as a call's strings and vectors do.
        let arena = Arena::new(System);
        unsafe {
            let mut ptrs: Vec<(*mut u8, Layout, u8)> = Vec::new();
            for round in 0..50u8 {
                for i in 0..40usize {
                    let l = layout(1 + (i * 37 + round as usize) % 200, 1 << (i % 4));
                    let p = arena.alloc(l);
                    p.write_bytes(round, l.size());
                    ptrs.push((p, l, round));
                }
                // Grow every third (up to a bound), free every other.
                for (k, (p, l, fill)) in ptrs.iter_mut().enumerate() {
                    if k % 3 == 0 && l.size() < 4096 {
                        let q = arena.realloc(*p, *l, l.size() * 2);
                        q.add(l.size()).write_bytes(*fill, l.size());
                        *l = layout(l.size() * 2, l.align());
                        *p = q;
                    }
                }
                let mut k = 0;
                ptrs.retain(|(p, l, fill)| {
                    k += 1;
                    assert!((0..l.size()).all(|i| *p.add(i) == *fill), "contents intact");
                    if k % 2 == 0 {
                        arena.dealloc(*p, *l);
                        false
                    } else {
                        true
                    }
                });
            }
            for (p, l, _) in ptrs {
                arena.dealloc(p, l);
            }
            assert_eq!(arena.live(), 0);
        }
    }
}
