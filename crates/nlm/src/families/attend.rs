//! Attention straight from the projections' output: queries, keys and values as views
//! `[B, T, heads, d]` of what the query/key/value projection wrote (no copy into head-major
//! layout), the rotary embedding applied as a block's queries are read, the output written
//! as `[B, T, heads · d]` for the output projection (no merge).
//!
//! On the CPU this is one candle operation: a block of queries of one key/value group at a
//! time, over the keys a span at a time (flash attention's online softmax): the span's scores
//! (`rows × span`, at most 512 KB, kept in the cache) made by faer's product, the masked
//! softmax applied in place but for its division, the output of the earlier spans rescaled
//! and the product with the span's values added into the output's columns of each head,
//! divided there at the end (`d` values a row, not `keys`). Blocks run on the threads that
//! are free. Elsewhere (a GPU) the views are laid out head-major and `super::attention` runs
//! on tensors.

use candle_core::{CpuStorage, CustomOp3, Layout, Shape, Tensor};
use rayon::prelude::*;

use super::softmax::{MaskedSoftmax, Running};
use super::Bias;

/// Queries per block: a key/value group's scores are `heads / kv_heads × QUERY_ROWS × keys`
/// floats (2 MB for two heads over 2,048 keys), and the products are tall enough for faer's
/// kernels (measured on a 3,606-token method: 64 rows 1.3× slower than 128).
const QUERY_ROWS: usize = 128;

/// Bytes of a key/value group's scores over one span of keys: a long method's keys are taken
/// a span at a time, the softmax online (flash attention's), so that the scores stay in a
/// core's L2 cache (1–2 MB) between the product that writes them, the softmax and the product
/// that reads them. Two heads of 128 queries: spans of 512 keys, and a method shorter than
/// that in one span, as without spans.
const SPAN_BYTES: usize = 512 * 1024;

/// The keys of a span for `rows` score rows: at least 64, a multiple of 16 (a vector of f32).
fn span_keys(rows: usize) -> usize {
    (SPAN_BYTES / 4 / rows.max(1)).max(64) / 16 * 16
}

/// The rotary embedding of positions `0..T`: cos and sin `[T, d / 2]`.
#[derive(Debug, Clone, Copy)]
pub struct Rotary<'a> {
    pub cos: &'a [f32],
    pub sin: &'a [f32],
    /// Pairs `(2i, 2i + 1)` (llama.cpp's layout); otherwise `(i, i + d/2)` (transformers').
    pub interleaved: bool,
}

impl Rotary<'_> {
    /// `x` (one head's `d` values at position `t`) rotated into `out`.
    #[inline]
    fn apply(&self, t: usize, x: &[f32], out: &mut [f32]) {
        let half = x.len() / 2;
        let (cos, sin) = (
            &self.cos[t * half..(t + 1) * half],
            &self.sin[t * half..(t + 1) * half],
        );
        if self.interleaved {
            for i in 0..half {
                let (a, b) = (x[2 * i], x[2 * i + 1]);
                out[2 * i] = a * cos[i] - b * sin[i];
                out[2 * i + 1] = a * sin[i] + b * cos[i];
            }
        } else {
            for i in 0..half {
                let (a, b) = (x[i], x[i + half]);
                out[i] = a * cos[i] - b * sin[i];
                out[i + half] = a * sin[i] + b * cos[i];
            }
        }
    }
}

/// `softmax(q·kᵀ · scale + bias) · v` of queries `[B, T, heads, d]` over keys and values
/// `[B, T, kv_heads, d]` (views, the last dimension contiguous; each key/value head shared by
/// `heads / kv_heads` query heads), the queries and keys rotated first when `rope` is given:
/// `[B, T, heads · d]`.
pub fn attend(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    scale: Option<f64>,
    bias: Bias,
    rope: Option<Rotary>,
) -> candle_core::Result<Tensor> {
    if [q, k, v].iter().all(|t| super::product::on_cpu_f32(t)) {
        return q.apply_op3_no_bwd(
            k,
            v,
            &Attend {
                scale: scale.unwrap_or(1.0) as f32,
                bias,
                rope,
            },
        );
    }
    // a GPU: head-major tensors, candle's rotary embedding, the tensor attention
    let head_major = |x: &Tensor| x.transpose(1, 2)?.contiguous();
    let (mut q, mut k, v) = (head_major(q)?, head_major(k)?, head_major(v)?);
    if let Some(r) = rope {
        let t = q.dim(2)?;
        let half = q.dim(3)? / 2;
        let cos = Tensor::from_slice(&r.cos[..t * half], (t, half), q.device())?;
        let sin = Tensor::from_slice(&r.sin[..t * half], (t, half), q.device())?;
        let rotate = |x: &Tensor| {
            if r.interleaved {
                candle_nn::rotary_emb::rope_i(x, &cos, &sin)
            } else {
                candle_nn::rotary_emb::rope(x, &cos, &sin)
            }
        };
        q = rotate(&q)?;
        k = rotate(&k)?;
    }
    super::merge(&super::attention(&q, &k, &v, scale, bias)?)
}

/// [`attend`] on the CPU.
struct Attend<'a> {
    scale: f32,
    bias: Bias<'a>,
    rope: Option<Rotary<'a>>,
}

/// A view `[B, T, heads, d]` of a storage: where `(b, t, h, 0)` is, rows of `d` contiguous.
#[derive(Clone, Copy)]
struct View<'a> {
    data: &'a [f32],
    start: usize,
    stride: [usize; 3],
    dims: [usize; 4],
}

impl<'a> View<'a> {
    fn new(s: &'a CpuStorage, l: &Layout, what: &str) -> candle_core::Result<View<'a>> {
        let CpuStorage::F32(data) = s else {
            return Err(candle_core::Error::Msg(format!(
                "attention {what}: f32 only"
            )));
        };
        let (b, t, h, d) = l.shape().dims4()?;
        let st = l.stride();
        if d > 1 && st[3] != 1 {
            return Err(candle_core::Error::Msg(format!(
                "attention {what}: a head's values must be contiguous"
            )));
        }
        if t > 1 && st[1] < d {
            return Err(candle_core::Error::Msg(format!(
                "attention {what}: positions overlap"
            )));
        }
        // the farthest element must lie in the storage
        let last = l.start_offset()
            + [b, t, h]
                .iter()
                .zip(st)
                .map(|(n, s)| n.saturating_sub(1) * s)
                .sum::<usize>()
            + d;
        if b * t * h * d > 0 && last > data.len() {
            return Err(candle_core::Error::Msg(format!(
                "attention {what}: the layout is outside its storage"
            )));
        }
        Ok(View {
            data,
            start: l.start_offset(),
            stride: [st[0], st[1], st[2]],
            dims: [b, t, h, d],
        })
    }

    /// Rows `0..rows` of head `h` of sequence `b` as a matrix `[rows, d]`.
    fn head(&self, b: usize, h: usize, from: usize, rows: usize) -> faer::MatRef<'a, f32> {
        let at = self.start + b * self.stride[0] + h * self.stride[2] + from * self.stride[1];
        let d = self.dims[3];
        let len = if rows == 0 {
            0
        } else {
            (rows - 1) * self.stride[1] + d
        };
        faer::MatRef::from_row_major_slice_with_stride(
            &self.data[at..at + len],
            rows,
            d,
            self.stride[1],
        )
    }

    /// Head `h` of sequence `b` at position `t`: `d` values.
    fn row(&self, b: usize, t: usize, h: usize) -> &'a [f32] {
        let at = self.start + b * self.stride[0] + t * self.stride[1] + h * self.stride[2];
        &self.data[at..at + self.dims[3]]
    }
}

impl CustomOp3 for Attend<'_> {
    fn name(&self) -> &'static str {
        "attend"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (q, k, v) = (
            View::new(s1, l1, "queries")?,
            View::new(s2, l2, "keys")?,
            View::new(s3, l3, "values")?,
        );
        let [b, t, nh, d] = q.dims;
        let nkv = k.dims[2];
        if k.dims != v.dims || k.dims[0] != b || k.dims[1] != t || k.dims[3] != d {
            return Err(candle_core::Error::Msg(
                "attention: queries, keys and values disagree in shape".into(),
            ));
        }
        if nkv == 0 || nh % nkv != 0 {
            return Err(candle_core::Error::Msg(format!(
                "attention: {nh} query heads over {nkv} key/value heads"
            )));
        }
        if let Some(r) = self.rope {
            if d % 2 != 0 || r.cos.len() < t * d / 2 || r.sin.len() < t * d / 2 {
                return Err(candle_core::Error::Msg(
                    "attention: the rotary tables are shorter than the sequence".into(),
                ));
            }
        }
        let rep = nh / nkv;
        let width = nh * d;
        let mut out = vec![0f32; b * t * width];
        if b * t * width == 0 {
            return Ok((CpuStorage::F32(out), Shape::from((b, t, width))));
        }
        // the keys rotated once, head-major `[B, kv_heads, T, d]`
        let rotated: Option<Vec<f32>> = self.rope.map(|r| {
            let mut buf = vec![0f32; b * nkv * t * d];
            buf.par_chunks_mut(t * d).enumerate().for_each(|(bg, dst)| {
                let (bi, g) = (bg / nkv, bg % nkv);
                for (p, o) in dst.chunks_exact_mut(d).enumerate() {
                    r.apply(p, k.row(bi, p, g), o);
                }
            });
            buf
        });
        let keys = |bi: usize, g: usize, key0: usize, n: usize| -> faer::MatRef<'_, f32> {
            match &rotated {
                Some(buf) => {
                    let at = (bi * nkv + g) * t * d + key0 * d;
                    faer::MatRef::from_row_major_slice(&buf[at..at + n * d], n, d)
                }
                None => k.head(bi, g, key0, n),
            }
        };
        let window = match self.bias {
            Bias::Causal { window } => window,
            Bias::Alibi { .. } => None,
        };
        out.par_chunks_mut(t * width)
            .enumerate()
            .for_each(|(bi, seq)| {
                seq.par_chunks_mut(QUERY_ROWS * width)
                    .enumerate()
                    .for_each(|(blk, dst)| {
                        let from = blk * QUERY_ROWS;
                        let rows = dst.len() / width;
                        // causal: the keys after the block's last query are never seen, nor,
                        // in a window, those before its first query's window
                        let end = from + rows;
                        let start = window.map_or(0, |w| (from + 1).saturating_sub(w));
                        // spans of about equal length, none longer than `span_keys`
                        let spans = (end - start).div_ceil(span_keys(rep * rows));
                        let span = (end - start).div_ceil(spans).next_multiple_of(16);
                        // a key/value group's queries in one product: `[rep · rows, d]`
                        let mut scores = vec![0f32; rep * rows * span.min(end - start)];
                        let mut state = Running::new(rep * rows);
                        let in_place = rep == 1 && self.rope.is_none();
                        let mut qbuf = vec![0f32; if in_place { 0 } else { rep * rows * d }];
                        let len = (rows - 1) * width + d;
                        for g in 0..nkv {
                            let qg = if in_place {
                                q.head(bi, g, from, rows)
                            } else {
                                for (j, o) in qbuf.chunks_exact_mut(d).enumerate() {
                                    let (h, i) = (g * rep + j / rows, j % rows);
                                    let x = q.row(bi, from + i, h);
                                    match self.rope {
                                        Some(r) => r.apply(from + i, x, o),
                                        None => o.copy_from_slice(x),
                                    }
                                }
                                faer::MatRef::from_row_major_slice(&qbuf, rep * rows, d)
                            };
                            state.reset();
                            for key0 in (start..end).step_by(span) {
                                let n = span.min(end - key0);
                                let scores = &mut scores[..rep * rows * n];
                                faer::linalg::matmul::matmul(
                                    faer::MatMut::from_row_major_slice_mut(scores, rep * rows, n),
                                    faer::Accum::Replace,
                                    qg,
                                    keys(bi, g, key0, n).transpose(),
                                    self.scale,
                                    faer::Par::Seq,
                                );
                                MaskedSoftmax {
                                    heads: nh,
                                    head0: g * rep,
                                    rows,
                                    from,
                                    bias: self.bias,
                                }
                                .run(scores, key0, n, &mut state);
                                for (r, (p, rescale)) in scores
                                    .chunks_exact(rows * n)
                                    .zip(state.rescale.chunks(rows))
                                    .enumerate()
                                {
                                    let h = g * rep + r;
                                    let head = &mut dst[h * d..h * d + len];
                                    let first = key0 == start;
                                    if !first {
                                        for (o, s) in head.chunks_mut(width).zip(rescale) {
                                            if *s != 1.0 {
                                                o[..d].iter_mut().for_each(|x| *x *= s);
                                            }
                                        }
                                    }
                                    faer::linalg::matmul::matmul(
                                        // row-major with a row stride, made as the transpose
                                        // of column-major: faer 0.24.4's
                                        // `from_row_major_slice_with_stride_mut` swaps the
                                        // strides
                                        faer::MatMut::from_column_major_slice_with_stride_mut(
                                            head, d, rows, width,
                                        )
                                        .transpose_mut(),
                                        if first {
                                            faer::Accum::Replace
                                        } else {
                                            faer::Accum::Add
                                        },
                                        faer::MatRef::from_row_major_slice(p, rows, n),
                                        v.head(bi, g, key0, n),
                                        1.0f32,
                                        faer::Par::Seq,
                                    );
                                }
                            }
                            for r in 0..rep {
                                let h = g * rep + r;
                                let head = &mut dst[h * d..h * d + len];
                                for (i, o) in head.chunks_mut(width).enumerate() {
                                    let s = state.inverse(r * rows + i);
                                    o[..d].iter_mut().for_each(|x| *x *= s);
                                }
                            }
                        }
                    });
            });
        Ok((CpuStorage::F32(out), Shape::from((b, t, width))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::normal;
    use candle_core::Device;

    /// The CPU's attention from views is the tensor attention of head-major copies: causal,
    /// windowed and ALiBi, grouped heads, both rotary layouts, several blocks, the last ones'
    /// keys in spans, and a batch, the queries, keys and values narrowed out of one fused
    /// projection.
    #[test]
    fn views_attend_as_tensors_do() {
        let dev = Device::Cpu;
        let (b, t, nh, nkv, d) = (2, 4 * QUERY_ROWS + 21, 4, 2, 8);
        assert!(t > span_keys(nh / nkv * QUERY_ROWS), "one span only");
        let fused = normal(0f32, 1.0, (b, t, nh + 2 * nkv, d), 1).expect("fused");
        let q = fused.narrow(2, 0, nh).expect("q");
        let k = fused.narrow(2, nh, nkv).expect("k");
        let v = fused.narrow(2, nh + nkv, nkv).expect("v");
        let half = d / 2;
        let cos: Vec<f32> = (0..t * half).map(|i| (i as f32 * 0.37).cos()).collect();
        let sin: Vec<f32> = (0..t * half).map(|i| (i as f32 * 0.37).sin()).collect();
        let slopes = [0.5f32, 0.25, 0.125, 0.0625];
        let biases = [
            Bias::Causal { window: None },
            Bias::Causal { window: Some(50) },
            Bias::Alibi { slopes: &slopes },
        ];
        for bias in biases {
            for rope in [None, Some(false), Some(true)] {
                let rope = rope.map(|interleaved| Rotary {
                    cos: &cos,
                    sin: &sin,
                    interleaved,
                });
                let got = attend(&q, &k, &v, Some(0.3), bias, rope).expect("views");
                // the tensor path, as a GPU runs it
                let head_major = |x: &Tensor| x.transpose(1, 2)?.contiguous();
                let (mut qh, mut kh) = (head_major(&q).expect("q"), head_major(&k).expect("k"));
                let vh = head_major(&v).expect("v");
                if let Some(r) = rope {
                    let c = Tensor::from_slice(&cos, (t, half), &dev).expect("cos");
                    let s = Tensor::from_slice(&sin, (t, half), &dev).expect("sin");
                    let rot = |x: &Tensor| {
                        if r.interleaved {
                            candle_nn::rotary_emb::rope_i(x, &c, &s)
                        } else {
                            candle_nn::rotary_emb::rope(x, &c, &s)
                        }
                    };
                    qh = rot(&qh).expect("rope q");
                    kh = rot(&kh).expect("rope k");
                }
                let want = super::super::merge(
                    &super::super::attention(&qh, &kh, &vh, Some(0.3), bias).expect("tensors"),
                )
                .expect("merge");
                assert_eq!(got.dims(), &[b, t, nh * d]);
                let diff = crate::families::tests::max_rel_diff(&got, &want);
                let layout = rope.map(|r| r.interleaved);
                assert!(
                    diff < 1e-5,
                    "{bias:?}, rotary interleaved {layout:?}: {diff:e}"
                );
            }
        }
    }

    #[test]
    fn shapes_that_disagree_are_errors() {
        let dev = Device::Cpu;
        let q = Tensor::zeros((1, 4, 3, 8), candle_core::DType::F32, &dev).expect("q");
        let k = Tensor::zeros((1, 4, 2, 8), candle_core::DType::F32, &dev).expect("k");
        // 3 query heads cannot share 2 key/value heads
        assert!(attend(&q, &k, &k, None, Bias::Causal { window: None }, None).is_err());
        let short = [0f32; 4];
        let rope = Rotary {
            cos: &short,
            sin: &short,
            interleaved: false,
        };
        let q = Tensor::zeros((1, 4, 2, 8), candle_core::DType::F32, &dev).expect("q");
        assert!(attend(&q, &k, &k, None, Bias::Causal { window: None }, Some(rope)).is_err());
    }
}
