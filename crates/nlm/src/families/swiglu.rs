//! llama's MLP activation `silu(gate) · up` from the fused gate/up projection's output
//! `[.., 2n]` (gate then up): one pass that reads each row once and writes `[.., n]`, where
//! candle would copy the narrowed gate, apply silu and multiply (three outputs of `n` per row).
//! On the CPU; elsewhere candle's ops.

use candle_core::{CpuStorage, CustomOp1, Layout, Shape, Tensor};
use rayon::prelude::*;

/// Rows per thread's share (a row is `2n` floats in, `n` out).
const ROWS: usize = 16;

/// `silu(gate) · up` of `[.., 2n]` (the gate's `n` values then the up projection's).
pub fn swiglu(gate_up: &Tensor) -> candle_core::Result<Tensor> {
    let two_n = gate_up.dim(candle_core::D::Minus1)?;
    let n = two_n / 2;
    if gate_up.device().is_cpu() && gate_up.dtype() == candle_core::DType::F32 && two_n % 2 == 0 {
        return gate_up.contiguous()?.apply_op1_no_bwd(&Swiglu);
    }
    let last = gate_up.rank() - 1;
    gate_up.narrow(last, 0, n)?.silu()? * gate_up.narrow(last, n, n)?
}

struct Swiglu;

impl CustomOp1 for Swiglu {
    fn name(&self) -> &'static str {
        "swiglu"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let x = super::product::contiguous(s, l, "swiglu")?;
        let mut dims = l.dims().to_vec();
        let Some(last) = dims.last_mut() else {
            return Err(candle_core::Error::Msg("swiglu of a scalar".into()));
        };
        let n = *last / 2;
        *last = n;
        let mut out = vec![0f32; x.len() / 2];
        if n > 0 {
            out.par_chunks_mut(ROWS * n)
                .zip(x.par_chunks(ROWS * 2 * n))
                .for_each(|(o, x)| {
                    for (o, row) in o.chunks_exact_mut(n).zip(x.chunks_exact(2 * n)) {
                        let (gate, up) = row.split_at(n);
                        super::softmax::swiglu(gate, up, o);
                    }
                });
        }
        Ok((CpuStorage::F32(out), Shape::from(dims)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    /// The fused activation is candle's `silu(gate) * up`, large and negative gates included.
    #[test]
    fn fused_is_silu_times_up() {
        let dev = Device::Cpu;
        let a = (Tensor::randn(0f32, 1.0, (2, 37, 2 * 45), &dev).expect("a") * 30.0).expect("a");
        let got = swiglu(&a).expect("fused");
        let want = (a.narrow(2, 0, 45).and_then(|g| g.silu()).expect("silu")
            * a.narrow(2, 45, 45).expect("up"))
        .expect("want");
        assert_eq!(got.dims(), &[2, 37, 45]);
        let (g, w): (Vec<f32>, Vec<f32>) = (
            got.flatten_all().and_then(|t| t.to_vec1()).expect("got"),
            want.flatten_all().and_then(|t| t.to_vec1()).expect("want"),
        );
        for (x, y) in g.iter().zip(&w) {
            assert!((x - y).abs() <= 1e-5 * y.abs().max(1.0), "{x} vs {y}");
        }
    }
}
