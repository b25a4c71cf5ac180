//! The projections' matrix products on the CPU, through faer: its x86 kernels run the models'
//! shapes about half again as fast per core as the `gemm` crate candle calls (one thread,
//! 1,024 × 5,632 on 3,606 positions: ~100 GFLOP/s against ~60 on an AVX-512 Xeon). The output
//! is cut into tiles — a thread's share of the rows by [`COLS`] columns — run on the threads
//! that are free, each tile's product on one thread; a GPU keeps candle's product.

use candle_core::{CpuStorage, CustomOp2, Layout, Shape, Tensor};
use rayon::prelude::*;

/// Rows below which a product's rows are not split over threads (a thread's share would be
/// too thin to pay for packing them); its columns still are.
pub(super) const MIN_ROWS: usize = 256;

/// Output columns of one tile, two of the kernel's 96-row panels: each tile's weight is held as
/// one contiguous block ([`Weight::Tiled`]: the weight's rows for those columns, as checkpoints
/// store them), so the kernel's first pass over it, which packs it while it multiplies, reads
/// memory in order. Against 512-wide tiles of the `[in, out]` matrix
/// (its rows 2–22 KB apart), one thread of an AVX-512 Xeon ran llama-350M's products 5–10%
/// faster on 300 rows and 20% on 100 (the first pass is a larger share of a short product).
pub(super) const COLS: usize = 192;

/// How the weight of `x · W` is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weight {
    /// `[in, out]`: the product is `x · W`.
    InOut,
    /// `[out, in]` (as checkpoints and embeddings hold it): the product is `x · Wᵀ`.
    OutIn,
    /// `[in, out]` in column tiles (the CPU only): the columns `j·COLS..(j + 1)·COLS` (the
    /// last tile narrower) are a contiguous block starting at `in · j · COLS`, the weight's
    /// rows for those columns as checkpoints store them (`[width, in]` row-major, which the
    /// kernel reads as `[in, width]` column-major). A single weight's tiles are its rows as
    /// they lie ([`hold`] keeps its storage); the fused MLP's interleave two ([`tile`]). The
    /// product is `x · W`.
    Tiled,
}

/// The column tiles of [`Weight::Tiled`] made from weights `[n, k]` (`[out, in]`, as
/// checkpoints store them) of the same shape, tile by tile: tile `j` of the first, then tile
/// `j` of the second, … (one weight: a tiled projection; the gate's and the up projection's:
/// the fused MLP's).
pub(super) fn tile(parts: &[&[f32]], k: usize, n: usize) -> candle_core::Result<Vec<f32>> {
    if let Some(p) = parts.iter().find(|p| p.len() != k * n) {
        return Err(candle_core::Error::Msg(format!(
            "a weight of {} values held as [{n}, {k}]",
            p.len()
        )));
    }
    let mut out = Vec::with_capacity(parts.len() * k * n);
    if k == 0 {
        return Ok(out);
    }
    for from in (0..n).step_by(COLS) {
        let width = COLS.min(n - from);
        for p in parts {
            // the tile's output rows, as they lie
            out.extend_from_slice(&p[from * k..(from + width) * k]);
        }
    }
    Ok(out)
}

/// A weight `[out, in]` (as checkpoints store it) as the CPU's products read it: tiled
/// ([`Weight::Tiled`]) for f32 on the CPU, `[in, out]` elsewhere.
pub(super) fn hold(weight: &Tensor) -> candle_core::Result<(Tensor, Weight)> {
    if !on_cpu_f32(weight) {
        return Ok((weight.t()?.contiguous()?, Weight::InOut));
    }
    // a single weight's tiles are its rows as they lie: its storage, read as `[in, out]`
    let (n, k) = weight.dims2()?;
    Ok((weight.contiguous()?.reshape((k, n))?, Weight::Tiled))
}

/// `f` of the f32 values of `t`, on the CPU, read where they lie (a copy only where `t` is not
/// contiguous): a weight is tiled without a second copy of it at load.
pub(super) fn read<R>(
    t: &Tensor,
    f: impl FnOnce(&[f32]) -> candle_core::Result<R>,
) -> candle_core::Result<R> {
    let t = t.contiguous()?;
    let (storage, layout) = t.storage_and_layout();
    match &*storage {
        candle_core::Storage::Cpu(s) => f(contiguous(s, layout, "a weight")?),
        _ => Err(candle_core::Error::Msg(
            "a weight to tile off the CPU".into(),
        )),
    }
}

/// `x · W` (or `x · Wᵀ`) of `x` `[.., in]`: `[.., out]`. f32 on the CPU goes through faer;
/// anything else through candle.
pub fn project(x: &Tensor, w: &Tensor, held: Weight) -> candle_core::Result<Tensor> {
    let dims = x.dims().to_vec();
    let (rows, k) = match dims.split_last() {
        Some((k, lead)) => (lead.iter().product::<usize>(), *k),
        None => return Err(candle_core::Error::Msg("a projection of a scalar".into())),
    };
    let out = match held {
        Weight::InOut | Weight::Tiled => w.dim(1)?,
        Weight::OutIn => w.dim(0)?,
    };
    let x2 = x.contiguous()?.reshape((rows, k))?;
    let y = match held {
        // only this crate's product reads tiles, whatever `with_candle_ops` says now
        Weight::Tiled if !(cpu_f32(x) && cpu_f32(w)) => {
            return Err(candle_core::Error::Msg(
                "a tiled weight is for f32 products on the CPU".into(),
            ))
        }
        Weight::Tiled => x2.apply_op2_no_bwd(w, &Product { held })?,
        _ if on_cpu_f32(x) && on_cpu_f32(w) => x2.apply_op2_no_bwd(w, &Product { held })?,
        Weight::InOut => x2.matmul(w)?,
        Weight::OutIn => x2.matmul(&w.t()?)?,
    };
    let mut shape = dims;
    if let Some(last) = shape.last_mut() {
        *last = out;
    }
    y.reshape(shape)
}

/// [`project`]'s product on the CPU: `[m, k] · W`.
struct Product {
    held: Weight,
}

thread_local! {
    /// Set while [`with_candle_ops`] runs on this thread.
    static CANDLE_OPS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with candle's tensor operations in place of this crate's CPU ones, on this thread
/// (where a model is loaded and where its forward pass is called from): the code a GPU runs —
/// the head-major attention, the gate then up MLP, candle's norms and log-softmax — run on
/// the CPU, so that it is checked where there is no GPU.
pub fn with_candle_ops<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            CANDLE_OPS.with(|c| c.set(self.0));
        }
    }
    let _reset = Reset(CANDLE_OPS.with(|c| c.replace(true)));
    f()
}

/// Whether [`with_candle_ops`] runs on this thread.
pub(super) fn candle_ops() -> bool {
    CANDLE_OPS.with(std::cell::Cell::get)
}

/// Whether `t` is f32 on the CPU: what the operations of this module's siblings run on
/// (unless [`with_candle_ops`] says otherwise).
pub(super) fn on_cpu_f32(t: &Tensor) -> bool {
    cpu_f32(t) && !CANDLE_OPS.with(std::cell::Cell::get)
}

/// Whether `t` is f32 on the CPU.
pub(super) fn cpu_f32(t: &Tensor) -> bool {
    t.device().is_cpu() && t.dtype() == candle_core::DType::F32
}

/// The f32 values of a contiguous layout of a storage (what the CPU operations here read).
pub(super) fn contiguous<'a>(
    s: &'a CpuStorage,
    l: &Layout,
    what: &str,
) -> candle_core::Result<&'a [f32]> {
    let CpuStorage::F32(all) = s else {
        return Err(candle_core::Error::Msg(format!("{what}: f32 only")));
    };
    l.contiguous_offsets()
        .and_then(|(a, b)| all.get(a..b))
        .ok_or_else(|| candle_core::Error::Msg(format!("{what}: contiguous only")))
}

/// Rows of a thread's share of a product of `m` rows.
pub(super) fn share(m: usize) -> usize {
    m.div_ceil(rayon::current_num_threads().max(1))
        .max(MIN_ROWS)
}

/// The output cut into tiles of at most `rows` rows by [`COLS`] columns, each with where it
/// starts, row share by row share.
pub(super) fn tiles(
    mut rest: faer::MatMut<'_, f32>,
    rows: usize,
) -> Vec<(usize, usize, faer::MatMut<'_, f32>)> {
    let mut tiles = Vec::new();
    let mut row = 0;
    while rest.nrows() > 0 {
        let at = rows.min(rest.nrows());
        let (mut share, below) = rest.split_at_row_mut(at);
        let height = share.nrows();
        let mut col = 0;
        while share.ncols() > 0 {
            let at = COLS.min(share.ncols());
            let (tile, right) = share.split_at_col_mut(at);
            tiles.push((row, col, tile));
            col += at;
            share = right;
        }
        row += height;
        rest = below;
    }
    tiles
}

/// One tile's product: rows `row..` of `x` `[m, k]` by the tile's weight block `w` (the
/// weight's `c` rows of `k`, as [`Weight::Tiled`] holds them: a column-major `[k, c]`) into
/// the tile `d` `[r, c]`.
pub(super) fn tile_product(
    d: faer::MatMut<'_, f32>,
    x: faer::MatRef<'_, f32>,
    row: usize,
    w: &[f32],
) {
    let (r, c) = (d.nrows(), d.ncols());
    let k = x.ncols();
    faer::linalg::matmul::matmul(
        d,
        faer::Accum::Replace,
        x.submatrix(row, 0, r, k),
        faer::MatRef::from_column_major_slice(w, k, c),
        1.0f32,
        faer::Par::Seq,
    );
}

impl CustomOp2 for Product {
    fn name(&self) -> &'static str {
        "faer-product"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let x = contiguous(s1, l1, "a projection's input")?;
        let w = contiguous(s2, l2, "a projection's weight")?;
        let (m, k) = l1.shape().dims2()?;
        let (wr, wc) = l2.shape().dims2()?;
        let n = match self.held {
            Weight::InOut | Weight::Tiled if wr == k => wc,
            Weight::OutIn if wc == k => wr,
            _ => {
                return Err(candle_core::Error::Msg(format!(
                    "a projection of [{m}, {k}] by a weight [{wr}, {wc}]"
                )))
            }
        };
        let mut dst = vec![0f32; m * n];
        if m == 0 || n == 0 || k == 0 {
            return Ok((CpuStorage::F32(dst), Shape::from((m, n))));
        }
        let x = faer::MatRef::from_row_major_slice(x, m, k);
        tiles(
            faer::MatMut::from_row_major_slice_mut(&mut dst, m, n),
            share(m),
        )
        .into_par_iter()
        .for_each(|(row, col, d)| {
            let (r, c) = (d.nrows(), d.ncols());
            // the tile's columns of the weight `[k, n]`
            let w = match self.held {
                // a tile's weight is one contiguous block of `c` rows of `k` at `k · col`
                Weight::Tiled => return tile_product(d, x, row, &w[k * col..k * (col + c)]),
                Weight::OutIn => faer::MatRef::from_row_major_slice(w, n, k)
                    .transpose()
                    .submatrix(0, col, k, c),
                Weight::InOut => {
                    faer::MatRef::from_row_major_slice(w, k, n).submatrix(0, col, k, c)
                }
            };
            faer::linalg::matmul::matmul(
                d,
                faer::Accum::Replace,
                x.submatrix(row, 0, r, k),
                w,
                1.0f32,
                faer::Par::Seq,
            );
        });
        Ok((CpuStorage::F32(dst), Shape::from((m, n))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::normal;
    use candle_core::Device;

    /// faer's product is candle's, for both ways of holding the weight, for a product split
    /// over threads and for one that is not, and for a leading batch dimension.
    #[test]
    fn products_are_candles() {
        let dev = Device::Cpu;
        // tiles: one, rows split, columns split, both
        for (rows, k, n) in [
            (1, 3, 2),
            (7, 16, 5),
            (300, 64, 48),
            (5, 8, 2 * COLS + 7),
            (2 * MIN_ROWS + 3, 8, COLS + 1),
        ] {
            let x = normal(0f32, 1.0, (2, rows, k), 5).expect("x");
            let w = normal(0f32, 1.0, (n, k), 6).expect("w");
            let want = x.broadcast_matmul(&w.t().expect("t")).expect("candle");
            let wt = w.t().and_then(|t| t.contiguous()).expect("wt");
            let (tiled, held) = hold(&w).expect("tiled");
            assert_eq!(held, Weight::Tiled);
            for got in [
                project(&x, &w, Weight::OutIn).expect("out-in"),
                project(&x, &wt, Weight::InOut).expect("in-out"),
                project(&x, &tiled, Weight::Tiled).expect("tiled"),
            ] {
                assert_eq!(got.dims(), &[2, rows, n]);
                let diff: f32 = (&got - &want)
                    .and_then(|d| d.abs()?.max_all()?.to_scalar())
                    .expect("diff");
                assert!(diff < 1e-4, "{rows}x{k}x{n}: {diff}");
            }
        }
        // a tiled weight is read by this module's product alone: no f64, no candle
        let (tiled, _) = hold(&normal(0f32, 1.0, (4, 3), 7).expect("w")).expect("tiled");
        let x = Tensor::zeros((2, 3), candle_core::DType::F64, &dev).expect("x");
        assert!(project(&x, &tiled, Weight::Tiled).is_err());
        let x = Tensor::zeros((2, 3), candle_core::DType::F32, &dev).expect("x");
        let w = Tensor::zeros((4, 5), candle_core::DType::F32, &dev).expect("w");
        assert!(project(&x, &w, Weight::InOut).is_err());
    }
}
