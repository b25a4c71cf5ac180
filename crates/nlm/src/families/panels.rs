//! The panels of a tiled product: a weight's column tiles ([`product::Weight::Tiled`]) taken a
//! panel at a time — held whole in f32, or packed and decoded into a buffer for the panel just
//! before the f32 kernel reads them ([`super::packed`]) — and the tiles of an output run on
//! the threads free, each with its weight block. What the packed products, the fused MLP and
//! the head's losses share.

use std::sync::Mutex;

use rayon::prelude::*;

use super::product::{self, COLS};

/// Bytes of dequantized tiles a product holds at once: enough tiles for every thread to have
/// several (a 4,096-wide model's tile is 3 MB), little beside the weights.
pub const PANEL_BYTES: usize = 16 << 20;

/// A weight held packed, decoded a tile at a time.
pub(super) trait Decode: Sync {
    /// Input columns.
    fn k(&self) -> usize;
    /// Output columns of each part.
    fn n(&self) -> usize;
    /// Parts side by side in each tile's block.
    fn parts(&self) -> usize;
    /// Writes tile `j`'s block (`parts · k · c` floats for a tile `c` columns wide) as
    /// [`product::Weight::Tiled`] holds it.
    fn decode_tile(&self, j: usize, out: &mut [f32]) -> candle_core::Result<()>;
}

/// Panels let go by the products that used them, for the next: a product of a layer takes the
/// buffer the previous one filled instead of fresh pages (safe to share between the
/// workers' threads, unlike a thread's own buffer, which a worker waiting on its product's
/// tiles may be asked to lend to another product it picks up meanwhile).
static SPARE: Mutex<Vec<Vec<f32>>> = Mutex::new(Vec::new());

fn take_panel(len: usize) -> Vec<f32> {
    let mut v = SPARE
        .lock()
        .ok()
        .and_then(|mut s| s.pop())
        .unwrap_or_default();
    if v.len() < len {
        v.resize(len, 0.0);
    }
    v
}

fn give_back(v: Vec<f32>) {
    if let Ok(mut s) = SPARE.lock() {
        // one a worker; more are let go
        if s.len() < rayon::current_num_threads().max(1) {
            s.push(v);
        }
    }
}

fn msg(m: String) -> candle_core::Error {
    candle_core::Error::Msg(m)
}

/// The weight blocks of a tiled product's column tiles: `parts · k · c` floats for a tile `c`
/// columns wide, its parts one after the other (the MLP's gate then up).
#[derive(Clone, Copy)]
pub(super) enum Blocks<'a> {
    /// Held whole, tile after tile ([`product::Weight::Tiled`]).
    F32 { w: &'a [f32], parts: usize },
    /// Packed, decoded a panel of tiles at a time.
    Packed(&'a dyn Decode),
}

/// Calls `f(c0, width, blocks)` for the panels of at most `panel` column tiles of a weight
/// `[k, n]`, left to right: `blocks` holds the panel's tiles' blocks, tile `t` at `t · parts · k · COLS` (for
/// packed weights, dequantized into a buffer for the panel).
pub(super) fn for_panels(
    (n, k): (usize, usize),
    blocks: Blocks<'_>,
    panel: usize,
    mut f: impl FnMut(usize, usize, &[f32]) -> candle_core::Result<()>,
) -> candle_core::Result<()> {
    let count = n.div_ceil(COLS);
    let panel = panel.clamp(1, count.max(1));
    match blocks {
        Blocks::F32 { w, parts } => {
            let per = parts * k;
            if w.len() != per * n {
                return Err(msg(format!(
                    "tiles of {} values for [{k}, {parts} × {n}]",
                    w.len()
                )));
            }
            for j0 in (0..count).step_by(panel) {
                let c0 = j0 * COLS;
                let width = ((j0 + panel) * COLS).min(n) - c0;
                f(c0, width, &w[per * c0..per * (c0 + width)])?;
            }
            Ok(())
        }
        Blocks::Packed(p) => {
            if (p.n(), p.k()) != (n, k) {
                return Err(msg(format!(
                    "a packed weight [{}, {}] for a product to {n} by {k}",
                    p.n(),
                    p.k()
                )));
            }
            let per_tile = p.parts() * k * COLS;
            let mut buf = take_panel(panel * per_tile);
            let mut result = Ok(());
            for j0 in (0..count).step_by(panel) {
                let j1 = (j0 + panel).min(count);
                let c0 = j0 * COLS;
                let width = (j1 * COLS).min(n) - c0;
                result = buf[..(j1 - j0) * per_tile]
                    .par_chunks_mut(per_tile)
                    .enumerate()
                    .try_for_each(|(t, b)| p.decode_tile(j0 + t, b))
                    .and_then(|()| f(c0, width, &buf));
                if result.is_err() {
                    break;
                }
            }
            give_back(buf);
            result
        }
    }
}

impl Blocks<'_> {
    /// Parts side by side in each tile's block.
    fn parts(&self) -> usize {
        match self {
            Blocks::F32 { parts, .. } => *parts,
            Blocks::Packed(p) => p.parts(),
        }
    }
}

/// Runs `each(state, row, tile, block)` on every tile of the output `dst` `[m, n]` (a
/// thread's share of the rows by [`COLS`] columns, on the threads free), `block` the tile's
/// weights, `state` a thread's `init()`.
pub(super) fn over_tiles<S>(
    dst: &mut [f32],
    (m, n, k): (usize, usize, usize),
    blocks: Blocks<'_>,
    init: impl Fn() -> S + Sync + Send,
    each: impl Fn(&mut S, usize, faer::MatMut<'_, f32>, &[f32]) + Sync + Send,
) -> candle_core::Result<()> {
    if m == 0 || n == 0 || k == 0 {
        return Ok(());
    }
    let per_tile = blocks.parts() * k * COLS;
    let mut out = faer::MatMut::from_row_major_slice_mut(dst, m, n);
    // every tile at once where the weight is held whole; packed, as many as a panel holds
    // (at least a tile for each thread)
    let panel = match blocks {
        Blocks::F32 { .. } => usize::MAX,
        Blocks::Packed(_) => (PANEL_BYTES / 4 / per_tile).max(rayon::current_num_threads()),
    };
    for_panels((n, k), blocks, panel, |c0, width, panel| {
        product::tiles(
            out.as_mut().submatrix_mut(0, c0, m, width),
            product::share(m),
        )
        .into_par_iter()
        .for_each_init(&init, |s, (row, col, d)| {
            let at = col / COLS * per_tile;
            let c = d.ncols();
            each(s, row, d, &panel[at..at + per_tile / COLS * c]);
        });
        Ok(())
    })
}
