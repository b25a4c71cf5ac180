//! The models' normalizations — RMS (llama) and layer norm (GPT-Neo, BLOOM, StarCoder) — with
//! the residual addition before them: `x + Δ` and its normalization in one pass over the rows,
//! on the threads that are free and the CPU's widest vector unit. (candle's norms run on one
//! thread under `CANDLE_NUM_THREADS=1`, which `natstudy` sets for its batch-per-thread
//! scoring, and the addition is a pass of its own, writing a fresh tensor.) Elsewhere (a GPU)
//! candle's ops.

use candle_core::{CpuStorage, CustomOp1, CustomOp2, Layout, Module, Shape, Tensor};
use candle_nn::VarBuilder;
use rayon::prelude::*;

use super::product::{contiguous, on_cpu_f32};

/// Rows per task (a row is the model's width).
const ROWS: usize = 16;

/// A normalization over the last dimension: `w · x / rms(x)`, or `w · (x − mean) / std + b`.
pub struct Norm {
    weight: Tensor,
    bias: Option<Tensor>,
    /// The weight and bias as plain values, for the CPU's pass.
    host: Option<(Vec<f32>, Option<Vec<f32>>)>,
    eps: f64,
    rms: bool,
}

impl Norm {
    /// llama's `RMSNorm` of `prefix.weight`.
    pub fn rms(size: usize, eps: f64, vb: VarBuilder) -> candle_core::Result<Norm> {
        Norm::new(vb.get(size, "weight")?, None, eps, true)
    }

    /// A `LayerNorm` of `prefix.weight` and `prefix.bias`.
    pub fn layer(size: usize, eps: f64, vb: VarBuilder) -> candle_core::Result<Norm> {
        Norm::new(
            vb.get(size, "weight")?,
            Some(vb.get(size, "bias")?),
            eps,
            false,
        )
    }

    /// An RMS norm of a weight read elsewhere (a GGUF file).
    pub fn rms_of(weight: Tensor, eps: f64) -> candle_core::Result<Norm> {
        Norm::new(weight, None, eps, true)
    }

    fn new(weight: Tensor, bias: Option<Tensor>, eps: f64, rms: bool) -> candle_core::Result<Norm> {
        let host = if on_cpu_f32(&weight) {
            Some((
                weight.to_vec1()?,
                bias.as_ref().map(|b| b.to_vec1()).transpose()?,
            ))
        } else {
            None
        };
        Ok(Norm {
            weight,
            bias,
            host,
            eps,
            rms,
        })
    }

    /// `x + Δ` (or `x` without Δ) and its normalization.
    pub fn residual(
        &self,
        x: &Tensor,
        delta: Option<&Tensor>,
    ) -> candle_core::Result<(Tensor, Tensor)> {
        match (&self.host, delta) {
            (Some((w, b)), Some(d)) if on_cpu_f32(x) && on_cpu_f32(d) => {
                let both = x.contiguous()?.apply_op2_no_bwd(
                    &d.contiguous()?,
                    &AddThen(Pass {
                        weight: w,
                        bias: b.as_deref(),
                        eps: self.eps as f32,
                        rms: self.rms,
                    }),
                )?;
                Ok((both.get(0)?, both.get(1)?))
            }
            _ => {
                let sum = match delta {
                    Some(d) => (x + d)?,
                    None => x.clone(),
                };
                let normed = self.forward(&sum)?;
                Ok((sum, normed))
            }
        }
    }
}

impl Module for Norm {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        match &self.host {
            Some((w, b)) if on_cpu_f32(x) => x.contiguous()?.apply_op1_no_bwd(&Alone(Pass {
                weight: w,
                bias: b.as_deref(),
                eps: self.eps as f32,
                rms: self.rms,
            })),
            _ => {
                let x = x.contiguous()?;
                match &self.bias {
                    None => candle_nn::ops::rms_norm(&x, &self.weight, self.eps as f32),
                    Some(b) => candle_nn::ops::layer_norm(&x, &self.weight, b, self.eps as f32),
                }
            }
        }
    }
}

/// The normalization of rows on the CPU.
#[derive(Clone, Copy)]
struct Pass<'a> {
    weight: &'a [f32],
    bias: Option<&'a [f32]>,
    eps: f32,
    rms: bool,
}

/// Lanes of the partial sums (one AVX-512 register of f32).
const LANES: usize = 16;

/// `Σ f(x)` of a row, in [`LANES`] partial sums (which vectorize).
#[inline(always)]
fn sum_of(x: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut lanes = [0f32; LANES];
    let mut chunks = x.chunks_exact(LANES);
    for c in &mut chunks {
        for (s, v) in lanes.iter_mut().zip(c) {
            *s += f(*v);
        }
    }
    let tail: f32 = chunks.remainder().iter().map(|v| f(*v)).sum();
    tail + lanes.iter().sum::<f32>()
}

impl Pass<'_> {
    /// Rows of `x` (each the weight's width) normalized into `out`; with `add` = `(Δ, sum)`,
    /// `sum` first gets `x + Δ`, which is normalized instead of `x`.
    fn rows(&self, x: &[f32], add: Option<(&[f32], &mut [f32])>, out: &mut [f32]) {
        struct Rows<'a, 'b> {
            pass: &'a Pass<'b>,
            x: &'a [f32],
            add: Option<(&'a [f32], &'a mut [f32])>,
            out: &'a mut [f32],
        }
        impl pulp::WithSimd for Rows<'_, '_> {
            type Output = ();
            #[inline(always)]
            fn with_simd<S: pulp::Simd>(self, _simd: S) {
                let Rows { pass, x, add, out } = self;
                let n = pass.weight.len();
                let x = match add {
                    Some((d, sum)) => {
                        for ((s, a), b) in sum.iter_mut().zip(x).zip(d) {
                            *s = a + b;
                        }
                        &*sum
                    }
                    None => x,
                };
                for (x, out) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
                    pass.row(x, out);
                }
            }
        }
        pulp::Arch::new().dispatch(Rows {
            pass: self,
            x,
            add,
            out,
        });
    }

    /// One row (as transformers computes it in f32).
    #[inline(always)]
    fn row(&self, x: &[f32], out: &mut [f32]) {
        let n = x.len() as f32;
        if self.rms {
            // x · rsqrt(mean(x²) + eps) · w
            let r = 1.0 / (sum_of(x, |v| v * v) / n + self.eps).sqrt();
            for ((o, v), w) in out.iter_mut().zip(x).zip(self.weight) {
                *o = v * r * w;
            }
        } else {
            // (x − mean) · rsqrt(var + eps) · w + b
            let mean = sum_of(x, |v| v) / n;
            let r = 1.0 / (sum_of(x, |v| (v - mean) * (v - mean)) / n + self.eps).sqrt();
            match self.bias {
                Some(b) => {
                    for (((o, v), w), b) in out.iter_mut().zip(x).zip(self.weight).zip(b) {
                        *o = (v - mean) * r * w + b;
                    }
                }
                None => {
                    for ((o, v), w) in out.iter_mut().zip(x).zip(self.weight) {
                        *o = (v - mean) * r * w;
                    }
                }
            }
        }
    }

    /// The rows of a layout: their width must be the weight's.
    fn width(&self, l: &Layout) -> candle_core::Result<usize> {
        let n = self.weight.len();
        match l.dims().last() {
            Some(&w) if w == n && n > 0 => Ok(n),
            _ => Err(candle_core::Error::Msg(format!(
                "a normalization of width {n} over {:?}",
                l.dims()
            ))),
        }
    }
}

/// [`Norm::forward`] on the CPU.
struct Alone<'a>(Pass<'a>);

impl CustomOp1 for Alone<'_> {
    fn name(&self) -> &'static str {
        "norm"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let n = self.0.width(l)?;
        let x = contiguous(s, l, "a normalization's input")?;
        let mut out = vec![0f32; x.len()];
        out.par_chunks_mut(ROWS * n)
            .zip(x.par_chunks(ROWS * n))
            .for_each(|(o, x)| self.0.rows(x, None, o));
        Ok((CpuStorage::F32(out), l.shape().clone()))
    }
}

/// [`Norm::residual`] on the CPU: `[2, ..]`, `x + Δ` then its normalization.
struct AddThen<'a>(Pass<'a>);

impl CustomOp2 for AddThen<'_> {
    fn name(&self) -> &'static str {
        "add-norm"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let n = self.0.width(l1)?;
        if l1.dims() != l2.dims() {
            return Err(candle_core::Error::Msg(format!(
                "a residual {:?} added to {:?}",
                l2.dims(),
                l1.dims()
            )));
        }
        let x = contiguous(s1, l1, "a normalization's input")?;
        let d = contiguous(s2, l2, "a residual")?;
        let mut both = vec![0f32; 2 * x.len()];
        let (sum, out) = both.split_at_mut(x.len());
        sum.par_chunks_mut(ROWS * n)
            .zip(out.par_chunks_mut(ROWS * n))
            .zip(x.par_chunks(ROWS * n).zip(d.par_chunks(ROWS * n)))
            .for_each(|((s, o), (x, d))| self.0.rows(x, Some((d, s)), o));
        let mut dims = vec![2];
        dims.extend_from_slice(l1.dims());
        Ok((CpuStorage::F32(both), Shape::from(dims)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::normal;

    fn max_rel(a: &Tensor, b: &Tensor) -> f32 {
        let (a, b): (Vec<f32>, Vec<f32>) = (
            a.flatten_all().and_then(|t| t.to_vec1()).expect("a"),
            b.flatten_all().and_then(|t| t.to_vec1()).expect("b"),
        );
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs() / y.abs().max(1.0))
            .fold(0.0, f32::max)
    }

    /// Both norms, alone and after a residual, are candle's: rows of a width that is not a
    /// multiple of the lanes, more rows than a task's, a batch dimension, values far from 0.
    #[test]
    fn norms_are_candles() {
        let width = 67;
        let x = (normal(0f32, 3.0, (2, ROWS + 5, width), 13).expect("x") + 5.0).expect("x");
        let d = normal(0f32, 1.0, (2, ROWS + 5, width), 14).expect("d");
        let w = normal(1f32, 0.5, width, 15).expect("w");
        let b = normal(0f32, 0.5, width, 16).expect("b");
        let rms = Norm::rms_of(w.clone(), 1e-6).expect("rms");
        let layer = Norm::new(w.clone(), Some(b.clone()), 1e-5, false).expect("layer");
        let sum = (&x + &d).expect("sum");
        let want_rms = candle_nn::ops::rms_norm_slow(&sum, &w, 1e-6).expect("rms");
        let want_layer = candle_nn::ops::layer_norm_slow(&sum, &w, &b, 1e-5).expect("layer");
        for (norm, want) in [(&rms, &want_rms), (&layer, &want_layer)] {
            let alone = norm.forward(&sum).expect("alone");
            assert!(max_rel(&alone, want) < 1e-5);
            let (s, normed) = norm.residual(&x, Some(&d)).expect("residual");
            assert!(max_rel(&s, &sum) == 0.0);
            assert!(max_rel(&normed, want) < 1e-5);
            let (same, normed) = norm.residual(&sum, None).expect("no residual");
            assert!(max_rel(&same, &sum) == 0.0);
            assert!(max_rel(&normed, want) < 1e-5);
        }
        // a residual of another shape, rows of another width
        assert!(rms.residual(&x, Some(&w)).is_err());
        assert!(rms
            .forward(&w.unsqueeze(0).expect("row").narrow(1, 0, 5).expect("5"))
            .is_err());
    }
}
