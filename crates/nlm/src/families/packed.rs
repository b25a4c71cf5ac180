//! A GGUF file's projections in their packed form (`Q4_0`, `Q4_1`, `Q8_0`, the k-quants, …) on
//! the CPU, cut as an f32 weight is tiled ([`product::Weight::Tiled`]): each column tile holds
//! its rows of each part, packed. A product dequantizes a panel of tiles at a time into the
//! very blocks an f32 tile holds and runs the f32 kernel on them, so that
//! - the scores are the dequantized model's to the bit (the same values through the same
//!   kernel in the same order; candle's packed products quantize the activations to 8 bits
//!   too, and run a method's many positions twenty times slower);
//! - memory holds the file's packed bytes plus a panel per product running
//!   ([`super::panels::PANEL_BYTES`]),
//!   not the weights in f32 (four to eight times the file);
//! - dequantizing costs `k × columns` once per product against the product's
//!   `rows × k × columns`: a batch of a few hundred positions runs at the f32 kernel's speed.
//!
//! The token embeddings are looked up from the same packed table (its rows dequantized as
//! they are looked up), which is also the output projection where the head is tied to them.

use std::borrow::Cow;

use candle_core::quantized::{GgmlDType, QTensor, QuantizedType};
use candle_core::{CpuStorage, CustomOp1, Layout, Shape, Tensor};

use super::dequant;
use super::panels::{over_tiles, Blocks, Decode};
use super::product::{self, COLS};

/// Rows of one packed weight within a tile.
struct Piece {
    rows: usize,
    data: Data,
}

/// A piece's packed bytes.
enum Data {
    /// Of a type decoded here ([`dequant::decodes`]), straight into a panel.
    Bytes { dtype: GgmlDType, bytes: Vec<u8> },
    /// Of another (the k-quants), through candle's decoder.
    Candle(Box<dyn QuantizedType>),
}

/// A weight (or several side by side) `[n, k]` packed, in column tiles.
pub struct Packed {
    k: usize,
    /// Output columns of each part.
    n: usize,
    parts: usize,
    /// `tiles[j][p]`: part `p`'s rows `j·COLS..` as pieces, each of one source weight.
    tiles: Vec<Vec<Vec<Piece>>>,
}

fn msg(m: String) -> candle_core::Error {
    candle_core::Error::Msg(m)
}

impl Packed {
    /// From parts side by side (the MLP's gate and up: `&[&[gate], &[up]]`), each part one
    /// weight `[n, k]` or several stacked by rows (the attention's `&[&[q, k, v]]`), as the
    /// file holds them; on the CPU only. Each tile copies its rows' packed bytes.
    pub fn new(parts: &[&[&QTensor]]) -> candle_core::Result<Packed> {
        let k = match parts.first().and_then(|p| p.first()) {
            Some(t) => t.shape().dims2()?.1,
            None => return Err(msg("a packed weight of no tensor".into())),
        };
        let mut n = None;
        let mut cut = Vec::with_capacity(parts.len());
        for stack in parts {
            let (tiles, rows) = Self::cut(stack, k)?;
            if n.is_some_and(|n| n != rows) {
                return Err(msg(format!(
                    "packed parts of {} and {rows} rows side by side",
                    n.unwrap_or_default()
                )));
            }
            n = Some(rows);
            cut.push(tiles);
        }
        let n = n.unwrap_or_default();
        let count = n.div_ceil(COLS);
        // tile by tile, each part's pieces
        let mut tiles: Vec<Vec<Vec<Piece>>> = (0..count).map(|_| Vec::new()).collect();
        for part in cut {
            for (j, pieces) in part.into_iter().enumerate() {
                if let Some(t) = tiles.get_mut(j) {
                    t.push(pieces);
                }
            }
        }
        Ok(Packed {
            k,
            n,
            parts: parts.len(),
            tiles,
        })
    }

    /// A stack of weights `[rows, k]` cut at the tiles' rows: each tile's pieces, and the
    /// rows in all.
    fn cut(stack: &[&QTensor], k: usize) -> candle_core::Result<(Vec<Vec<Piece>>, usize)> {
        let mut tiles: Vec<Vec<Piece>> = Vec::new();
        let mut at = 0usize;
        for t in stack {
            let (rows, kk) = t.shape().dims2()?;
            let dtype = t.dtype();
            let block = dtype.block_size();
            if kk != k || block == 0 || !k.is_multiple_of(block) {
                return Err(msg(format!(
                    "a packed weight [{rows}, {kk}] of {dtype:?} (blocks of {block}) beside rows of {k}"
                )));
            }
            if !t.device().is_cpu() {
                return Err(msg("a packed weight in tiles off the CPU".into()));
            }
            let row_bytes = k / block * dtype.type_size();
            let data = t.data()?;
            if rows.checked_mul(row_bytes) != Some(data.len()) {
                return Err(msg(format!(
                    "a packed weight [{rows}, {k}] of {dtype:?} in {} bytes",
                    data.len()
                )));
            }
            let mut r = 0;
            while r < rows {
                let j = (at + r) / COLS;
                let end = ((j + 1) * COLS - at).min(rows);
                if tiles.len() <= j {
                    tiles.resize_with(j + 1, Vec::new);
                }
                // rows of whole blocks: each slice starts at a multiple of the block's size,
                // where the source's blocks lie (its buffer is of blocks)
                let slice = &data[r * row_bytes..end * row_bytes];
                let data = if dequant::decodes(dtype) {
                    Data::Bytes {
                        dtype,
                        bytes: slice.to_vec(),
                    }
                } else {
                    Data::Candle(dtype.from_data(Cow::Borrowed(slice)))
                };
                tiles[j].push(Piece {
                    rows: end - r,
                    data,
                });
                r = end;
            }
            at += rows;
        }
        Ok((tiles, at))
    }

    /// Input columns.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Output columns of each part.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Parts side by side (the fused MLP's two).
    pub(super) fn parts(&self) -> usize {
        self.parts
    }

    /// Writes tile `j`'s block as [`product::Weight::Tiled`] holds it: for each part the
    /// weight's rows `j·COLS..`, `k` values each.
    fn dequantize_tile(&self, j: usize, out: &mut [f32]) -> candle_core::Result<()> {
        let k = self.k;
        let Some(parts) = self.tiles.get(j) else {
            return Err(msg(format!("tile {j} of a packed weight of {}", self.n)));
        };
        let c = COLS.min(self.n - j * COLS);
        for (pieces, block) in parts.iter().zip(out.chunks_exact_mut(k * c)) {
            let mut col = 0;
            for piece in pieces {
                let dst = &mut block[col * k..(col + piece.rows) * k];
                match &piece.data {
                    Data::Bytes { dtype, bytes } => {
                        if !dequant::decode(*dtype, bytes, dst) {
                            return Err(msg(format!(
                                "a packed {dtype:?} piece of {} bytes",
                                bytes.len()
                            )));
                        }
                    }
                    Data::Candle(data) => match data.dequantize(piece.rows * k)? {
                        CpuStorage::F32(rows) => dst.copy_from_slice(&rows),
                        _ => {
                            return Err(msg("a packed weight dequantized to other than f32".into()))
                        }
                    },
                }
                col += piece.rows;
            }
        }
        Ok(())
    }

    /// The rows `ids` of a single weight (the token embeddings), `[ids, k]`.
    pub fn rows(&self, ids: &[u32]) -> candle_core::Result<Vec<f32>> {
        let k = self.k;
        let mut out = vec![0f32; ids.len() * k];
        for (&id, dst) in ids.iter().zip(out.chunks_exact_mut(k.max(1))) {
            let id = id as usize;
            let piece = (id < self.n)
                .then(|| self.tiles.get(id / COLS)?.first())
                .flatten()
                .and_then(|pieces| {
                    let mut local = id % COLS;
                    pieces.iter().find_map(|p| {
                        if local < p.rows {
                            Some((p, local))
                        } else {
                            local -= p.rows;
                            None
                        }
                    })
                });
            let Some((p, local)) = piece else {
                return Err(msg(format!("token id {id} of {} embeddings", self.n)));
            };
            match &p.data {
                Data::Bytes { dtype, bytes } => {
                    let size = bytes.len() / p.rows.max(1);
                    let row = &bytes[local * size..(local + 1) * size];
                    if !dequant::decode(*dtype, row, dst) {
                        return Err(msg(format!("an embedding of {dtype:?} in {size} bytes")));
                    }
                }
                Data::Candle(data) => match data.embedding(&[local as u32], p.rows, k)? {
                    CpuStorage::F32(row) if row.len() == k => dst.copy_from_slice(&row),
                    _ => return Err(msg("an embedding dequantized to other than k f32".into())),
                },
            }
        }
        Ok(out)
    }
}

impl Decode for Packed {
    fn k(&self) -> usize {
        self.k
    }

    fn n(&self) -> usize {
        self.n
    }

    fn parts(&self) -> usize {
        self.parts
    }

    fn decode_tile(&self, j: usize, out: &mut [f32]) -> candle_core::Result<()> {
        self.dequantize_tile(j, out)
    }
}

/// `x · Wᵀ` of a packed weight on the CPU: [`Packed`]'s product as a candle operation.
pub(super) struct Product<'a>(pub &'a Packed);

impl CustomOp1 for Product<'_> {
    fn name(&self) -> &'static str {
        "packed-product"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let x = product::contiguous(s, l, "a projection's input")?;
        let (m, k) = l.shape().dims2()?;
        let n = self.0.n;
        if self.0.parts != 1 {
            return Err(msg("a product of a packed weight of two parts".into()));
        }
        let mut dst = vec![0f32; m * n];
        if k > 0 {
            let xm = faer::MatRef::from_row_major_slice(x, m, k);
            over_tiles(
                &mut dst,
                (m, n, k),
                Blocks::Packed(self.0),
                || (),
                |_, row, d, w| product::tile_product(d, xm, row, w),
            )?;
        }
        Ok((CpuStorage::F32(dst), Shape::from((m, n))))
    }
}

/// `x · Wᵀ` of `x` `[.., k]` by a packed weight: `[.., n]` (f32 on the CPU).
pub fn project(x: &Tensor, w: &Packed) -> candle_core::Result<Tensor> {
    let mut dims = x.dims().to_vec();
    let Some(last) = dims.last_mut() else {
        return Err(msg("a projection of a scalar".into()));
    };
    let k = *last;
    *last = w.n;
    if !product::cpu_f32(x) {
        return Err(msg("a packed product is for f32 on the CPU".into()));
    }
    let rows = x.elem_count() / k.max(1);
    x.contiguous()?
        .reshape((rows, k))?
        .apply_op1_no_bwd(&Product(w))?
        .reshape(dims)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::normal;
    use candle_core::quantized::GgmlDType;

    /// A packed product is the f32 product of the dequantized weight to the bit, for weights
    /// one tile wide, several, stacked (pieces straddling a tile) and of two types; the rows
    /// looked up are the dequantized rows.
    #[test]
    fn packed_products_are_the_dequantized_weights() {
        for (rows, k, ns, dtype) in [
            (3, 32, vec![7], GgmlDType::Q4_1),
            (300, 64, vec![COLS + 45], GgmlDType::Q4_0),
            (40, 64, vec![100, 150, 150], GgmlDType::Q8_0),
            (5, 256, vec![2 * COLS], GgmlDType::Q4K),
        ] {
            let x = normal(0f32, 1.0, (rows, k), 1).expect("x");
            let qs: Vec<QTensor> = ns
                .iter()
                .enumerate()
                .map(|(i, &n)| {
                    let w = normal(0f32, 1.0, (n, k), 2 + i as u64).expect("w");
                    QTensor::quantize(&w, dtype).expect("quantize")
                })
                .collect();
            let deq: Vec<Tensor> = qs
                .iter()
                .map(|q| q.dequantize(&candle_core::Device::Cpu).expect("deq"))
                .collect();
            let stacked = Tensor::cat(&deq, 0).expect("cat");
            let (tiled, _) = product::hold(&stacked).expect("hold");
            let want = product::project(&x, &tiled, product::Weight::Tiled)
                .and_then(|t| t.flatten_all()?.to_vec1::<f32>())
                .expect("f32");
            let refs: Vec<&QTensor> = qs.iter().collect();
            let packed = Packed::new(&[&refs]).expect("packed");
            let got = project(&x, &packed)
                .and_then(|t| t.flatten_all()?.to_vec1::<f32>())
                .expect("packed");
            assert_eq!(got, want, "{rows}x{k}x{ns:?} {dtype:?}");
            // the rows looked up
            let all = stacked.dim(0).expect("n") as u32;
            let ids = [0, 1, all - 1, COLS as u32 % all];
            let got = packed.rows(&ids).expect("rows");
            let want: Vec<f32> = ids
                .iter()
                .flat_map(|&i| {
                    stacked
                        .get(i as usize)
                        .and_then(|r| r.to_vec1::<f32>())
                        .expect("row")
                })
                .collect();
            assert_eq!(got, want);
            assert!(packed.rows(&[all]).is_err());
        }
        // weights of other widths do not stack; a block must not straddle rows
        let a = QTensor::quantize(&normal(0f32, 1.0, (4, 32), 3).expect("a"), GgmlDType::Q4_0);
        let b = QTensor::quantize(&normal(0f32, 1.0, (4, 64), 3).expect("b"), GgmlDType::Q4_0);
        let (a, b) = (a.expect("a"), b.expect("b"));
        assert!(Packed::new(&[&[&a, &b]]).is_err());
        assert!(Packed::new(&[&[&a], &[&b]]).is_err());
    }
}
