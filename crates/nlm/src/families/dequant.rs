//! GGUF's commonest block types decoded straight from their bytes into f32, as llama.cpp and
//! candle decode them (the same products in the same order: the same values to the bit):
//! `Q4_0`, `Q4_1`, `Q8_0` and the float types. [`super::packed`] holds these as bytes and
//! decodes a tile into its panel in one pass; the other types (the k-quants) go through
//! candle's own decoder.

use candle_core::quantized::GgmlDType;
use half::{bf16, f16};

/// Whether [`decode`] reads this type.
pub fn decodes(dtype: GgmlDType) -> bool {
    matches!(
        dtype,
        GgmlDType::Q4_0
            | GgmlDType::Q4_1
            | GgmlDType::Q8_0
            | GgmlDType::F32
            | GgmlDType::F16
            | GgmlDType::BF16
    )
}

fn half_at(b: &[u8], i: usize) -> f32 {
    f16::from_le_bytes([b[i], b[i + 1]]).to_f32()
}

/// Decodes the blocks `bytes` of `dtype` into `out` (as many values as they hold); `false`
/// where the type is not one [`decodes`] reads or the lengths disagree (nothing then is
/// written).
pub fn decode(dtype: GgmlDType, bytes: &[u8], out: &mut [f32]) -> bool {
    let (size, block) = (dtype.type_size(), dtype.block_size());
    if !decodes(dtype)
        || size == 0
        || !bytes.len().is_multiple_of(size)
        || bytes.len() / size * block != out.len()
    {
        return false;
    }
    match dtype {
        GgmlDType::Q4_0 => {
            for (b, o) in bytes.chunks_exact(18).zip(out.chunks_exact_mut(32)) {
                let d = half_at(b, 0);
                let (lo, hi) = o.split_at_mut(16);
                for ((q, l), h) in b[2..].iter().zip(lo).zip(hi) {
                    *l = f32::from(i16::from(q & 0x0F) - 8) * d;
                    *h = f32::from(i16::from(q >> 4) - 8) * d;
                }
            }
        }
        GgmlDType::Q4_1 => {
            for (b, o) in bytes.chunks_exact(20).zip(out.chunks_exact_mut(32)) {
                let (d, m) = (half_at(b, 0), half_at(b, 2));
                let (lo, hi) = o.split_at_mut(16);
                for ((q, l), h) in b[4..].iter().zip(lo).zip(hi) {
                    *l = f32::from(q & 0x0F) * d + m;
                    *h = f32::from(q >> 4) * d + m;
                }
            }
        }
        GgmlDType::Q8_0 => {
            for (b, o) in bytes.chunks_exact(34).zip(out.chunks_exact_mut(32)) {
                let d = half_at(b, 0);
                for (q, v) in b[2..].iter().zip(o) {
                    *v = f32::from(i8::from_le_bytes([*q])) * d;
                }
            }
        }
        GgmlDType::F32 => {
            for (b, v) in bytes.chunks_exact(4).zip(out) {
                *v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
        GgmlDType::F16 => {
            for (b, v) in bytes.chunks_exact(2).zip(out) {
                *v = f16::from_le_bytes([b[0], b[1]]).to_f32();
            }
        }
        GgmlDType::BF16 => {
            for (b, v) in bytes.chunks_exact(2).zip(out) {
                *v = bf16::from_le_bytes([b[0], b[1]]).to_f32();
            }
        }
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::quantized::QTensor;
    use candle_core::Device;

    /// Each type decodes to candle's dequantized values, to the bit; lengths that disagree and
    /// the k-quants are refused.
    #[test]
    fn decodes_as_candle() {
        let w = crate::families::normal(0f32, 1.0, (4, 64), 9).expect("w");
        for dtype in [
            GgmlDType::Q4_0,
            GgmlDType::Q4_1,
            GgmlDType::Q8_0,
            GgmlDType::F32,
            GgmlDType::F16,
            GgmlDType::BF16,
        ] {
            let q = QTensor::quantize(&w, dtype).expect("quantize");
            let want: Vec<f32> = q
                .dequantize(&Device::Cpu)
                .and_then(|t| t.flatten_all()?.to_vec1())
                .expect("dequantize");
            let bytes = q.data().expect("bytes");
            let mut got = vec![0f32; want.len()];
            assert!(decode(dtype, &bytes, &mut got), "{dtype:?}");
            assert_eq!(
                got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "{dtype:?}"
            );
            assert!(!decode(dtype, &bytes, &mut got[1..]));
        }
        let q = QTensor::quantize(
            &crate::families::normal(0f32, 1.0, (1, 256), 9).expect("w"),
            GgmlDType::Q4K,
        )
        .expect("q4k");
        assert!(!decode(
            GgmlDType::Q4K,
            &q.data().expect("bytes"),
            &mut [0f32; 256]
        ));
    }
}
