//! A GGUF file's header, read under a bound. candle's reader checks each declared length
//! against the bytes left in the file, but it holds every element of a metadata array as a
//! `Value` of 32 bytes: a 1 GB file that is one array of bytes would make it build 32 GB. The
//! reader here sees the file as if it ended at [`HEADER_LIMIT`], so that a header can make it
//! hold at most about 32 × that; the tensors are then read from the whole file.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use candle_core::quantized::gguf_file::Content;

use crate::{NlmError, NlmResult};

/// The most bytes of a GGUF file's header read: metadata (tokenizer vocabulary and merges
/// included) and tensor descriptions. SmolLM2-135M's, with 49,152 tokens and 48,900 merges, is
/// 1.8 MB; a vocabulary five times that still fits several times over.
pub const HEADER_LIMIT: u64 = 32 << 20;

/// Opens a GGUF file and reads its header: the file (for its tensors) and what the header says.
pub fn open(path: &Path) -> NlmResult<(File, Content)> {
    let at = |e: String| NlmError::Model(format!("{}: {e}", path.display()));
    let mut file = File::open(path).map_err(|e| at(e.to_string()))?;
    let len = file
        .seek(SeekFrom::End(0))
        .and_then(|len| file.seek(SeekFrom::Start(0)).map(|_| len))
        .map_err(|e| at(e.to_string()))?;
    let content = Content::read(&mut Bounded {
        inner: &mut file,
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

/// A file seen as if it ended at `end`.
struct Bounded<'a> {
    inner: &'a mut File,
    end: u64,
}

impl Read for Bounded<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.end.saturating_sub(self.inner.stream_position()?);
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        self.inner.read(&mut buf[..n])
    }
}

impl Seek for Bounded<'_> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        match to {
            SeekFrom::End(by) => {
                let at = self.end.checked_add_signed(by).ok_or_else(|| {
                    std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek out of range")
                })?;
                self.inner.seek(SeekFrom::Start(at))
            }
            other => self.inner.seek(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads stop at the bound, and the end is the bound.
    #[test]
    fn the_file_ends_at_the_bound() {
        let dir = tempfile::tempdir().expect("dir");
        let p = dir.path().join("f");
        std::fs::write(&p, [7u8; 100]).expect("write");
        let mut file = File::open(&p).expect("open");
        let mut b = Bounded {
            inner: &mut file,
            end: 10,
        };
        assert_eq!(b.seek(SeekFrom::End(0)).expect("end"), 10);
        assert_eq!(b.seek(SeekFrom::Start(4)).expect("start"), 4);
        let mut all = Vec::new();
        b.read_to_end(&mut all).expect("read");
        assert_eq!(all, [7u8; 6]);
    }
}
