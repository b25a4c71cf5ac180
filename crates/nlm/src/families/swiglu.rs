//! llama's MLP up to its down projection, `silu(x·G) · (x·U)`, in one operation on the CPU:
//! the gate and up projections' weights are held side by side a column tile at a time, each
//! tile a contiguous block (`[gate 0..192, up 0..192, gate 192..384, …]`, see
//! [`product::tile`]), so that one product tile makes a tile's gates and ups together into a
//! small buffer, and the activation is written from there. The
//! `2n`-wide product is never written out (a 3,606-token method's is 81 MB a layer, fresh
//! pages each time, then read again). Elsewhere (a GPU) the weights are held gate then up and
//! candle's ops run.

use candle_core::quantized::QTensor;
use candle_core::{CpuStorage, CustomOp1, CustomOp2, Layout, Shape, Tensor};

use super::packed::Packed;
use super::panels::{over_tiles, Blocks};
use super::product;

/// Rows of a tile whose gates and ups are made at once: `ROWS × 2 × COLS` floats (1.5 MB a
/// thread at most). Tall products run faster; 512 rows (the buffer in a core's 2 MB L2)
/// measured slower on the long reference method, and whole shares no faster.
const ROWS: usize = 1024;

/// The gate and up projections with the activation between them.
pub struct GatedUp {
    held: Held,
    n: usize,
}

/// How [`GatedUp`]'s weights are held.
enum Held {
    /// `[in, 2n]`, the column tiles interleaved (the CPU).
    Interleaved(Tensor),
    /// `[in, 2n]`, the gate then the up (elsewhere).
    Stacked(Tensor),
    /// A GGUF file's, packed in the same tiles (the CPU).
    Packed(Packed),
}

impl GatedUp {
    /// From the gate's and the up projection's weights, `[n, in]` each as checkpoints store
    /// them.
    pub fn new(gate: &Tensor, up: &Tensor) -> candle_core::Result<GatedUp> {
        let n = gate.dim(0)?;
        if up.dims() != gate.dims() {
            return Err(candle_core::Error::Msg(format!(
                "the gate projection is {:?} and the up projection {:?}",
                gate.dims(),
                up.dims()
            )));
        }
        let held = if product::on_cpu_f32(gate) {
            let k = gate.dim(1)?;
            let tiles = product::read(gate, |g| {
                product::read(up, |u| product::tile(&[g, u], k, n))
            })?;
            Held::Interleaved(Tensor::from_vec(tiles, (k, 2 * n), gate.device())?)
        } else {
            Held::Stacked(Tensor::cat(&[gate, up], 0)?.t()?.contiguous()?)
        };
        Ok(GatedUp { held, n })
    }

    /// From a GGUF file's packed gate and up projections (`[n, in]` each), held packed in
    /// the interleaved tiles (the CPU).
    pub fn packed(gate: &QTensor, up: &QTensor) -> candle_core::Result<GatedUp> {
        let p = Packed::new(&[&[gate], &[up]])?;
        Ok(GatedUp {
            n: p.n(),
            held: Held::Packed(p),
        })
    }

    /// `silu(x·Gᵀ) · (x·Uᵀ)` of `x` `[.., in]`: `[.., n]`.
    pub fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let mut dims = x.dims().to_vec();
        let Some(last) = dims.last_mut() else {
            return Err(candle_core::Error::Msg("an MLP of a scalar".into()));
        };
        let k = *last;
        *last = self.n;
        let rows = x.elem_count() / k.max(1);
        // the tiles are this crate's product's alone, whatever `with_candle_ops` says now
        let cpu_rows = || {
            if !product::cpu_f32(x) {
                return Err(candle_core::Error::Msg(
                    "an interleaved MLP is for f32 on the CPU".into(),
                ));
            }
            x.contiguous()?.reshape((rows, k))
        };
        match &self.held {
            Held::Stacked(wt) => {
                let both = product::project(x, wt, product::Weight::InOut)?;
                let last = both.rank() - 1;
                both.narrow(last, 0, self.n)?.silu()? * both.narrow(last, self.n, self.n)?
            }
            Held::Interleaved(wt) => cpu_rows()?
                .apply_op2_no_bwd(wt, &Fused { n: self.n })?
                .reshape(dims),
            Held::Packed(p) => cpu_rows()?.apply_op1_no_bwd(&FusedPacked(p))?.reshape(dims),
        }
    }
}

/// [`GatedUp::forward`] on the CPU: `[m, k]` by the interleaved `[k, 2n]`.
struct Fused {
    n: usize,
}

impl CustomOp2 for Fused {
    fn name(&self) -> &'static str {
        "gated-up"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let x = product::contiguous(s1, l1, "the MLP's input")?;
        let w = product::contiguous(s2, l2, "the MLP's weight")?;
        let (m, k) = l1.shape().dims2()?;
        if l2.shape().dims2()? != (k, 2 * self.n) {
            return Err(candle_core::Error::Msg(format!(
                "an MLP of [{m}, {k}] by a weight {:?}",
                l2.dims()
            )));
        }
        gated_up(x, (m, k, self.n), Blocks::F32 { w, parts: 2 })
    }
}

/// [`GatedUp::forward`] of packed weights on the CPU.
struct FusedPacked<'a>(&'a Packed);

impl CustomOp1 for FusedPacked<'_> {
    fn name(&self) -> &'static str {
        "packed-gated-up"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let x = product::contiguous(s, l, "the MLP's input")?;
        let (m, k) = l.shape().dims2()?;
        if self.0.parts() != 2 {
            return Err(candle_core::Error::Msg(
                "a packed MLP of other than a gate and an up projection".into(),
            ));
        }
        gated_up(x, (m, k, self.0.n()), Blocks::Packed(self.0))
    }
}

/// `silu(x·Gᵀ) · (x·Uᵀ)` of `x` `[m, k]`, each tile's block its gates' `[k, c]` then its
/// ups'.
fn gated_up(
    x: &[f32],
    (m, k, n): (usize, usize, usize),
    blocks: Blocks<'_>,
) -> candle_core::Result<(CpuStorage, Shape)> {
    let mut dst = vec![0f32; m * n];
    if m > 0 && n > 0 && k > 0 {
        let x = faer::MatRef::from_row_major_slice(x, m, k);
        // the gates and ups of a tile: one buffer for each of rayon's shares of the tiles,
        // written by the product before it is read (not zeroed for each tile)
        over_tiles(
            &mut dst,
            (m, n, k),
            blocks,
            Vec::new,
            |both: &mut Vec<f32>, row, mut d, w| {
                let (r, c) = (d.nrows(), d.ncols());
                let halves = [
                    faer::MatRef::from_column_major_slice(&w[..k * c], k, c),
                    faer::MatRef::from_column_major_slice(&w[k * c..2 * k * c], k, c),
                ];
                let need = ROWS.min(r) * 2 * c;
                if both.len() < need {
                    both.resize(need, 0.0);
                }
                for from in (0..r).step_by(ROWS) {
                    let p = ROWS.min(r - from);
                    let both = &mut both[..p * 2 * c];
                    let mut dst = faer::MatMut::from_row_major_slice_mut(both, p, 2 * c);
                    for (half, wh) in halves.iter().enumerate() {
                        faer::linalg::matmul::matmul(
                            dst.as_mut().submatrix_mut(0, half * c, p, c),
                            faer::Accum::Replace,
                            x.submatrix(row + from, 0, p, k),
                            *wh,
                            1.0f32,
                            faer::Par::Seq,
                        );
                    }
                    for (i, gu) in both.chunks_exact(2 * c).enumerate() {
                        let (gate, up) = gu.split_at(c);
                        if let Some(out) = d.as_mut().row_mut(from + i).try_as_row_major_mut() {
                            super::softmax::swiglu(gate, up, out.as_slice_mut());
                        }
                    }
                }
            },
        )?;
    }
    Ok((CpuStorage::F32(dst), Shape::from((m, n))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::normal;
    use crate::families::product::COLS;
    use candle_core::Device;

    /// The fused MLP is candle's `silu(x·Gᵀ) * (x·Uᵀ)`: widths that are and are not a
    /// multiple of the column tile, rows past a tile's, a leading batch dimension, large and
    /// negative gates.
    #[test]
    fn fused_is_silu_times_up() {
        let dev = Device::Cpu;
        for (rows, k, n) in [(3, 5, 7), (37, 16, COLS + 45), (ROWS + 9, 24, 2 * COLS)] {
            let x = (normal(0f32, 1.0, (2, rows, k), 2).expect("x") * 3.0).expect("x");
            let g = normal(0f32, 1.0, (n, k), 3).expect("gate");
            let u = normal(0f32, 1.0, (n, k), 4).expect("up");
            let got = GatedUp::new(&g, &u)
                .and_then(|m| m.forward(&x))
                .expect("fused");
            let want = (x
                .broadcast_matmul(&g.t().expect("gt"))
                .and_then(|a| a.silu()))
            .and_then(|a| a * x.broadcast_matmul(&u.t().expect("ut"))?)
            .expect("want");
            assert_eq!(got.dims(), &[2, rows, n]);
            let (g, w): (Vec<f32>, Vec<f32>) = (
                got.flatten_all().and_then(|t| t.to_vec1()).expect("got"),
                want.flatten_all().and_then(|t| t.to_vec1()).expect("want"),
            );
            for (a, b) in g.iter().zip(&w) {
                assert!((a - b).abs() <= 1e-4 * b.abs().max(1.0), "{a} vs {b}");
            }
        }
        let g = Tensor::zeros((4, 5), candle_core::DType::F32, &dev).expect("g");
        let u = Tensor::zeros((4, 6), candle_core::DType::F32, &dev).expect("u");
        assert!(GatedUp::new(&g, &u).is_err());
    }
}
