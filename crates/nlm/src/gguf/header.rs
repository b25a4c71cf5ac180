//! A GGUF file's header, read under bounds. candle's reader checks each declared length
//! against the bytes left in the file, but it holds every element of a metadata array as a
//! `Value` of 32 bytes: a 32 MiB header that is one array of bytes made it build 1 GiB, at every
//! read. So the reader here sees the file as if it ended at [`HEADER_LIMIT`], and before
//! candle reads the header it is walked once without keeping anything ([`scan`]): it is refused
//! when an array holds more than [`MAX_ARRAY`] elements, when its values would take more than
//! [`MAX_VALUES_BYTES`] once read, or when it describes more than [`MAX_TENSORS`] tensors. The
//! tensors are then read from the whole file.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use candle_core::quantized::gguf_file::Content;

use crate::{NlmError, NlmResult};

/// The most bytes of a GGUF file's header read: metadata (tokenizer vocabulary and merges
/// included) and tensor descriptions. SmolLM2-135M's, with 49,152 tokens and 48,900 merges, is
/// 1.8 MB; a vocabulary five times that still fits several times over.
pub const HEADER_LIMIT: u64 = 32 << 20;

/// The most elements one metadata array holds. A vocabulary is the largest array a model's
/// header has: 49,152 tokens for SmolLM2, 256,000 for Gemma; a million leaves room.
pub const MAX_ARRAY: u64 = 1 << 20;

/// The most memory a header's metadata takes once read as candle holds it (32 bytes a value,
/// strings besides): SmolLM2-135M's takes about 4.6 MB.
pub const MAX_VALUES_BYTES: u64 = 256 << 20;

/// The most tensors a header describes (a 70B llama has 723).
pub const MAX_TENSORS: u64 = 1 << 16;

/// The most metadata entries a header has.
const MAX_ENTRIES: u64 = 1 << 16;

/// How deep arrays nest in a header (candle's own bound).
const MAX_DEPTH: usize = 2;

/// What a value of candle's `Value` type takes in memory, besides a string's bytes.
const VALUE_BYTES: u64 = 32;

/// Opens a GGUF file and reads its header: the file (for its tensors) and what the header says.
pub fn open(path: &Path) -> NlmResult<(File, Content)> {
    let at = |e: String| NlmError::Model(format!("{}: {e}", path.display()));
    let mut file = File::open(path).map_err(|e| at(e.to_string()))?;
    let len = file
        .seek(SeekFrom::End(0))
        .and_then(|len| file.seek(SeekFrom::Start(0)).map(|_| len))
        .map_err(|e| at(e.to_string()))?;
    scan(&mut Bounded {
        inner: BufReader::new(&mut file),
        at: 0,
        end: len.min(HEADER_LIMIT),
    })
    .map_err(|e| match len > HEADER_LIMIT && e.ends_with("ends early") {
        true => at(format!(
            "{e} (natstudy reads at most {} MiB of a GGUF file's header)",
            HEADER_LIMIT >> 20
        )),
        false => at(format!("a GGUF header natstudy does not read: {e}")),
    })?;
    file.seek(SeekFrom::Start(0))
        .map_err(|e| at(e.to_string()))?;
    let content = Content::read(&mut Bounded {
        inner: BufReader::new(&mut file),
        at: 0,
        end: len.min(HEADER_LIMIT),
    })
    .map_err(|e| {
        if len > HEADER_LIMIT {
            at(format!(
                "{e} (natstudy reads at most {} MiB of a GGUF file's header)",
                HEADER_LIMIT >> 20
            ))
        } else {
            at(e.to_string())
        }
    })?;
    Ok((file, content))
}

/// Walks a header's metadata keeping nothing, and says why it is refused: an array of more than
/// [`MAX_ARRAY`] elements, values that would take more than [`MAX_VALUES_BYTES`] once read,
/// more than [`MAX_TENSORS`] tensors, an unknown value type, or a header that ends early.
fn scan<R: Read>(r: &mut R) -> Result<(), String> {
    let mut walk = Walk {
        r,
        v1: false,
        cost: 0,
    };
    let magic = walk.u32()?;
    if magic != 0x4655_4747 && magic != 0x4747_5546 {
        return Err(format!("magic 0x{magic:08x} is not GGUF's"));
    }
    let version = walk.u32()?;
    if !(1..=3).contains(&version) {
        return Err(format!("GGUF version {version} (natstudy reads 1 to 3)"));
    }
    walk.v1 = version == 1;
    let tensors = walk.len()?;
    if tensors > MAX_TENSORS {
        return Err(format!("{tensors} tensors (at most {MAX_TENSORS})"));
    }
    let entries = walk.len()?;
    if entries > MAX_ENTRIES {
        return Err(format!(
            "{entries} metadata entries (at most {MAX_ENTRIES})"
        ));
    }
    for _ in 0..entries {
        let key = walk.key()?;
        let kind = walk.u32()?;
        walk.value(kind, 0)
            .map_err(|e| format!("metadata `{key}`: {e}"))?;
    }
    Ok(())
}

/// The state of [`scan`]: the reader, the header's version (1 writes lengths in 32 bits) and
/// what the values read so far would take in memory.
struct Walk<'r, R> {
    r: &'r mut R,
    v1: bool,
    cost: u64,
}

impl<R: Read> Walk<'_, R> {
    fn bytes<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut b = [0u8; N];
        self.r
            .read_exact(&mut b)
            .map_err(|_| "the header ends early".to_owned())?;
        Ok(b)
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.bytes()?))
    }

    /// A length or count: 32 bits in version 1, 64 after.
    fn len(&mut self) -> Result<u64, String> {
        Ok(match self.v1 {
            true => u64::from(self.u32()?),
            false => u64::from_le_bytes(self.bytes()?),
        })
    }

    /// Passes over `n` bytes.
    fn skip(&mut self, n: u64) -> Result<(), String> {
        let passed = std::io::copy(&mut self.r.by_ref().take(n), &mut std::io::sink())
            .map_err(|e| e.to_string())?;
        match passed == n {
            true => Ok(()),
            false => Err("the header ends early".into()),
        }
    }

    /// Counts `bytes` more of memory, refusing past [`MAX_VALUES_BYTES`].
    fn costs(&mut self, bytes: u64) -> Result<(), String> {
        self.cost = self.cost.saturating_add(bytes);
        match self.cost <= MAX_VALUES_BYTES {
            true => Ok(()),
            false => Err(format!(
                "its values would take over {} MiB once read (natstudy reads at most {} MiB)",
                MAX_VALUES_BYTES >> 20,
                MAX_VALUES_BYTES >> 20
            )),
        }
    }

    /// A metadata key, for messages (its first 100 bytes).
    fn key(&mut self) -> Result<String, String> {
        let n = self.len()?;
        self.costs(n)?;
        let mut head = Vec::new();
        self.r
            .by_ref()
            .take(n.min(100))
            .read_to_end(&mut head)
            .map_err(|e| e.to_string())?;
        self.skip(n.saturating_sub(head.len() as u64))?;
        Ok(String::from_utf8_lossy(&head).into_owned())
    }

    /// A value of type `kind` (GGUF's numbering), nested `depth` arrays deep.
    fn value(&mut self, kind: u32, depth: usize) -> Result<(), String> {
        self.costs(VALUE_BYTES)?;
        match kind {
            0 | 1 | 7 => self.skip(1),
            2 | 3 => self.skip(2),
            4..=6 => self.skip(4),
            10..=12 => self.skip(8),
            8 => {
                let n = self.len()?;
                self.costs(n)?;
                self.skip(n)
            }
            9 if depth >= MAX_DEPTH => Err(format!("arrays nested over {MAX_DEPTH} deep")),
            9 => {
                let of = self.u32()?;
                let n = self.len()?;
                if n > MAX_ARRAY {
                    return Err(format!(
                        "an array of {n} elements (natstudy reads at most {MAX_ARRAY})"
                    ));
                }
                let fixed = match of {
                    0 | 1 | 7 => Some(1),
                    2 | 3 => Some(2),
                    4..=6 => Some(4),
                    10..=12 => Some(8),
                    _ => None,
                };
                match fixed {
                    Some(size) => {
                        self.costs(n.saturating_mul(VALUE_BYTES))?;
                        self.skip(n.saturating_mul(size))
                    }
                    None => (0..n).try_for_each(|_| self.value(of, depth + 1)),
                }
            }
            other => Err(format!("value type {other} is not GGUF's")),
        }
    }
}

/// A file seen as if it ended at `end`, read through a buffer: candle's reader asks for a
/// header's values a few bytes at a time and for its position before each string and array
/// (SmolLM2's header: 600,000 system calls unbuffered), answered here from `at`.
struct Bounded<R> {
    inner: R,
    /// The position in the file.
    at: u64,
    end: u64,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.end.saturating_sub(self.at);
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..n])?;
        self.at += n as u64;
        Ok(n)
    }
}

impl<R: Seek> Seek for Bounded<R> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let to = match to {
            SeekFrom::End(by) => {
                SeekFrom::Start(self.end.checked_add_signed(by).ok_or_else(|| {
                    std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek out of range")
                })?)
            }
            other => other,
        };
        self.at = self.inner.seek(to)?;
        Ok(self.at)
    }

    fn stream_position(&mut self) -> std::io::Result<u64> {
        Ok(self.at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GGUF v3 header with no tensors and the metadata entries `(key, type, value bytes)`.
    fn header(entries: &[(&str, u32, Vec<u8>)]) -> Vec<u8> {
        let mut h = b"GGUF".to_vec();
        h.extend(3u32.to_le_bytes());
        h.extend(0u64.to_le_bytes());
        h.extend((entries.len() as u64).to_le_bytes());
        for (key, kind, value) in entries {
            h.extend((key.len() as u64).to_le_bytes());
            h.extend(key.as_bytes());
            h.extend(kind.to_le_bytes());
            h.extend(value);
        }
        h
    }

    /// An array of `n` bytes, as a metadata value (type 9 of type 0).
    fn byte_array(n: usize) -> Vec<u8> {
        let mut v = 0u32.to_le_bytes().to_vec();
        v.extend((n as u64).to_le_bytes());
        v.extend(std::iter::repeat_n(7u8, n));
        v
    }

    fn opened(bytes: &[u8]) -> Result<usize, String> {
        let dir = tempfile::tempdir().expect("dir");
        let p = dir.path().join("m.gguf");
        std::fs::write(&p, bytes).expect("write");
        open(&p)
            .map(|(_, c)| c.metadata.len())
            .map_err(|e| e.to_string())
    }

    /// The crafted file of the review: one metadata array of 33 M bytes (32 MiB on disk, about
    /// 1 GiB as candle holds it) is refused by the walk, before candle reads a value.
    #[test]
    fn a_header_of_one_huge_array_is_refused() {
        let e = opened(&header(&[("x.blob", 9, byte_array(33_000_000))])).expect_err("refused");
        assert!(
            e.contains("metadata `x.blob`: an array of 33000000 elements"),
            "{e}"
        );
        assert!(e.contains(&format!("at most {MAX_ARRAY}")), "{e}");
    }

    /// Arrays each within [`MAX_ARRAY`] that together would take more than
    /// [`MAX_VALUES_BYTES`] are refused; a header under the bounds is read.
    #[test]
    fn what_a_header_takes_in_memory_is_bounded() {
        let per = MAX_ARRAY as usize;
        let n = (MAX_VALUES_BYTES / (VALUE_BYTES * MAX_ARRAY)) as usize + 1;
        let entries: Vec<_> = (0..n)
            .map(|i| {
                (
                    ["a", "b", "c", "d", "e", "f", "g", "h", "i"][i % 9],
                    9,
                    byte_array(per),
                )
            })
            .collect();
        let e = opened(&header(&entries)).expect_err("refused");
        assert!(e.contains("once read"), "{e}");
        let fine = header(&[
            (
                "general.name",
                8,
                [5u64.to_le_bytes().as_slice(), b"tiny!"].concat(),
            ),
            ("x.list", 9, byte_array(1000)),
            ("general.alignment", 4, 32u32.to_le_bytes().to_vec()),
        ]);
        assert_eq!(opened(&fine), Ok(3));
    }

    /// Counts past the bounds, unknown value types and nesting are refused with the reason.
    #[test]
    fn a_crafted_header_is_refused_with_its_reason() {
        let mut many_tensors = b"GGUF".to_vec();
        many_tensors.extend(3u32.to_le_bytes());
        many_tensors.extend((MAX_TENSORS + 1).to_le_bytes());
        many_tensors.extend(0u64.to_le_bytes());
        for (bytes, says) in [
            (many_tensors, "tensors (at most"),
            (header(&[("k", 13, vec![0; 8])]), "value type 13"),
            (
                header(&[(
                    "k",
                    9,
                    [
                        9u32.to_le_bytes().as_slice(),
                        &2u64.to_le_bytes(),
                        &9u32.to_le_bytes(),
                        &1u64.to_le_bytes(),
                        &9u32.to_le_bytes(),
                        &1u64.to_le_bytes(),
                    ]
                    .concat(),
                )]),
                "nested",
            ),
            (
                header(&[("k", 8, 1_000u64.to_le_bytes().to_vec())]),
                "ends early",
            ),
        ] {
            let e = opened(&bytes).expect_err("refused");
            assert!(e.contains(says), "{says}: {e}");
        }
    }

    /// Reads stop at the bound, and the end is the bound.
    #[test]
    fn the_file_ends_at_the_bound() {
        let dir = tempfile::tempdir().expect("dir");
        let p = dir.path().join("f");
        std::fs::write(&p, [7u8; 100]).expect("write");
        let mut file = File::open(&p).expect("open");
        let mut b = Bounded {
            inner: BufReader::new(&mut file),
            at: 0,
            end: 10,
        };
        assert_eq!(b.seek(SeekFrom::End(0)).expect("end"), 10);
        assert_eq!(b.seek(SeekFrom::Start(4)).expect("start"), 4);
        let mut two = [0u8; 2];
        b.read_exact(&mut two).expect("read");
        assert_eq!(b.stream_position().expect("at"), 6);
        assert_eq!(b.seek(SeekFrom::Current(-1)).expect("back"), 5);
        let mut all = Vec::new();
        b.read_to_end(&mut all).expect("read");
        assert_eq!(all, [7u8; 5]);
        assert_eq!(b.stream_position().expect("at"), 10);
    }
}
