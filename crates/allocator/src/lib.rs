//! The process's memory allocator: mimalloc for small blocks, the system's (glibc) for large
//! ones. The workspace's one crate with unsafe code (a global allocator is unsafe by nature).
//!
//! The survey's requests allocate and free many small blocks on several threads (rows, JSON,
//! HTML, futures): glibc's `malloc` and `free` took about a seventh of the server's CPU under
//! load, and mimalloc serves them faster. The language model's training grows a few vectors of
//! hundreds of MiB: glibc grows those in place (`mremap`) and gives them back to the system
//! when they are freed, where mimalloc alone copied them and kept more. So a block goes by its
//! size: under [`LARGE`] to mimalloc, from it on to the system. Measured against glibc alone
//! (release builds, alternating runs on one 2-core machine):
//!
//! - `bench http --think 0 --items 8000` (SQLite): 2,478–2,524 → 2,996–3,143 votes/s, CPU a
//!   vote 559–572 → 435–446 µs; the bench's peak memory 84 → 110 MiB;
//! - `bench lm` on 7.5 M tokens of the JDK's sources: 2.21 s, 404 MiB → 1.95 s, 418 MiB
//!   (mimalloc alone: 2.6 s, 467–488 MiB; with the boundary at 1 MiB: 1.95 s, 436–445 MiB);
//! - `bench report --items 100000 --bootstrap 1000`: analysis 0.40 → 0.33–0.38 s.
//!
//! Sound because Rust hands every `dealloc` and `realloc` the layout the block was made with
//! (after a `realloc`, its new size): the size alone says which allocator holds a block. A
//! `realloc` that crosses [`LARGE`] moves the block to the other allocator.

#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};

use mimalloc::MiMalloc;

/// The size from which a block is the system's (64 KiB): above the blocks a request makes by
/// the thousand, below the language model's tables and the buffers of its counting.
pub const LARGE: usize = 1 << 16;

/// Small blocks to mimalloc, large ones to the system (see the crate).
pub struct SizeRouted;

fn large(size: usize) -> bool {
    size >= LARGE
}

// SAFETY: every block is made and freed by one allocator, chosen by the size the caller gives
// unchanged from the block's making to its freeing (the `GlobalAlloc` contract); each method
// forwards its caller's guarantees to that allocator, and a crossing `realloc` keeps them.
unsafe impl GlobalAlloc for SizeRouted {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout, as `GlobalAlloc::alloc` requires it
        unsafe {
            match large(layout.size()) {
                true => System.alloc(layout),
                false => MiMalloc.alloc(layout),
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`
        unsafe {
            match large(layout.size()) {
                true => System.alloc_zeroed(layout),
                false => MiMalloc.alloc_zeroed(layout),
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the block's layout picks the allocator that made it (see the impl)
        unsafe {
            match large(layout.size()) {
                true => System.dealloc(ptr, layout),
                false => MiMalloc.dealloc(ptr, layout),
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: a block that stays on its side is the allocator's own `realloc`; one that
        // crosses is made anew on the other side with the same alignment (`new_size` rounded
        // to it fits `isize`: the caller's guarantee), gets the bytes both sizes hold, and is
        // freed where it was made
        unsafe {
            match (large(layout.size()), large(new_size)) {
                (false, false) => MiMalloc.realloc(ptr, layout, new_size),
                (true, true) => System.realloc(ptr, layout, new_size),
                _ => {
                    let moved = Layout::from_size_align_unchecked(new_size, layout.align());
                    let new = self.alloc(moved);
                    if !new.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    new
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block of `layout` as `SizeRouted` makes it.
    struct Block {
        ptr: *mut u8,
        layout: Layout,
    }

    impl Block {
        fn new(size: usize, align: usize, zeroed: bool) -> Block {
            let layout = Layout::from_size_align(size, align).expect("a valid layout");
            // SAFETY: a layout of non-zero size
            let ptr = unsafe {
                match zeroed {
                    true => SizeRouted.alloc_zeroed(layout),
                    false => SizeRouted.alloc(layout),
                }
            };
            assert!(!ptr.is_null());
            Block { ptr, layout }
        }

        fn bytes(&mut self) -> &mut [u8] {
            // SAFETY: the block holds `layout.size()` bytes, all written since it was made
            // (zeroed, filled) or kept by `resize`
            unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
        }

        fn resize(&mut self, size: usize) {
            // SAFETY: the block's own layout; a non-zero size
            let ptr = unsafe { SizeRouted.realloc(self.ptr, self.layout, size) };
            assert!(!ptr.is_null());
            self.ptr = ptr;
            self.layout =
                Layout::from_size_align(size, self.layout.align()).expect("a valid layout");
        }

        /// Whether mimalloc holds the block.
        fn mimallocs(&self) -> bool {
            // SAFETY: only reads mimalloc's map of its own regions
            unsafe { libmimalloc_sys::mi_is_in_heap_region(self.ptr.cast()) }
        }

        fn aligned(&self) -> bool {
            (self.ptr as usize).is_multiple_of(self.layout.align())
        }
    }

    impl Drop for Block {
        fn drop(&mut self) {
            // SAFETY: made by `SizeRouted` with this layout, freed once
            unsafe { SizeRouted.dealloc(self.ptr, self.layout) }
        }
    }

    fn fill(b: &mut [u8], seed: u8) {
        for (i, x) in b.iter_mut().enumerate() {
            *x = seed.wrapping_add(i as u8);
        }
    }

    fn holds(b: &[u8], seed: u8) -> bool {
        b.iter()
            .enumerate()
            .all(|(i, &x)| x == seed.wrapping_add(i as u8))
    }

    /// A block grown and shrunk across the boundary, each way, keeps its contents and its
    /// alignment, and lives with the allocator its size says.
    #[test]
    fn blocks_keep_their_contents_across_the_boundary() {
        for align in [1usize, 8, 64, 4096] {
            let mut b = Block::new(1000, align, false);
            assert!(b.mimallocs() && b.aligned());
            fill(b.bytes(), 7);
            // small → large: moved to the system
            b.resize(LARGE + 10);
            assert!(!b.mimallocs() && b.aligned());
            assert!(holds(&b.bytes()[..1000], 7));
            fill(b.bytes(), 9);
            // large → larger: the system's own realloc
            b.resize(3 * LARGE);
            assert!(!b.mimallocs() && b.aligned());
            assert!(holds(&b.bytes()[..LARGE + 10], 9));
            // large → small: back to mimalloc, the first bytes kept
            b.resize(500);
            assert!(b.mimallocs() && b.aligned());
            assert!(holds(b.bytes(), 9));
            // small → smaller: mimalloc's own
            b.resize(100);
            assert!(b.mimallocs() && holds(b.bytes(), 9));
        }
    }

    #[test]
    fn zeroed_blocks_are_zero_on_both_sides() {
        for size in [64, LARGE - 1, LARGE, 2 * LARGE] {
            let mut b = Block::new(size, 16, true);
            assert_eq!(b.mimallocs(), size < LARGE);
            assert!(b.bytes().iter().all(|&x| x == 0));
        }
    }

    /// The boundary itself: a block of exactly [`LARGE`] bytes is the system's, one byte less
    /// mimalloc's.
    #[test]
    fn the_boundary_is_large() {
        assert!(Block::new(LARGE - 1, 8, false).mimallocs());
        assert!(!Block::new(LARGE, 8, false).mimallocs());
    }
}
