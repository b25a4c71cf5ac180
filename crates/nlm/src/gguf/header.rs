//! A GGUF file's header, read under a bound. candle's reader checks each declared length
//! against the bytes left in the file, but it holds every element of a metadata array as a
//! `Value` of 32 bytes: a 1 GB file that is one array of bytes would make it build 32 GB. The
//! reader here sees the file as if it ended at [`HEADER_LIMIT`], so that a header can make it
//! hold at most about 32 × that; the tensors are then read from the whole file.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
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
