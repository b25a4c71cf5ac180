//! A model folder's weights: `model.safetensors`, or the shards a `model.safetensors.index.json`
//! names. Each file is read one tensor at a time (its header parsed and checked by the
//! `safetensors` crate, each tensor's bytes read at its offset and moved to the device as f32),
//! so loading holds the model once, plus one tensor's bytes — not a copy of the whole file
//! beside the model, and with no `unsafe` memory map. A tensor leaves the loader when the
//! model takes it, so that one the model keeps in another layout (transposed, fused) is not
//! held twice either.

use std::collections::{BTreeSet, HashMap};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use std::sync::Mutex;

use candle_core::{DType, Device, Shape, Tensor};
use candle_nn::var_builder::SimpleBackend;
use candle_nn::VarBuilder;
use safetensors::tensor::{Dtype, Metadata};

use crate::{NlmError, NlmResult};

/// The most a safetensors header may take (the format's own limit).
const MAX_HEADER: u64 = 100_000_000;

/// What a folder's weight headers may describe, from its configuration's layers: at most
/// [`TENSORS_PER_LAYER`] a layer and [`TENSORS_BESIDE`] besides (embeddings, norms, the head),
/// each in at most [`HEADER_PER_TENSOR`] bytes of a header. A real llama layer has 9 tensors
/// in about 120 bytes each; a crafted header of a million tensors (72 MB) made the parse take
/// 1.6 GB, and is refused here by its size before it is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bound {
    /// The most bytes of one file's header.
    header: u64,
    /// The most tensors of all the files together.
    tensors: usize,
}

const TENSORS_PER_LAYER: usize = 64;
const TENSORS_BESIDE: usize = 256;
const HEADER_PER_TENSOR: u64 = 512;
/// The layers assumed of a configuration that names none (a family's own key).
const LAYERS_UNSTATED: usize = 128;

impl Bound {
    /// The bound of the folder `dir`, from its `config.json` (read under its own bound; a
    /// folder without a readable one, whose loader says so itself, is bounded as a model of
    /// [`LAYERS_UNSTATED`] layers).
    fn of(dir: &Path) -> NlmResult<Bound> {
        let config = crate::folder::json(&dir.join("config.json")).ok();
        let layers = ["num_hidden_layers", "n_layer", "num_layers", "n_layers"]
            .iter()
            .find_map(|k| config.as_ref()?.get(*k).and_then(serde_json::Value::as_u64))
            .map_or(LAYERS_UNSTATED, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            });
        let tensors = layers
            .saturating_mul(TENSORS_PER_LAYER)
            .saturating_add(TENSORS_BESIDE);
        Ok(Bound {
            header: (tensors as u64)
                .saturating_mul(HEADER_PER_TENSOR)
                .min(MAX_HEADER),
            tensors,
        })
    }

    /// Refuses `seen` tensors past the bound.
    fn count(&self, seen: usize) -> Result<(), String> {
        match seen <= self.tensors {
            true => Ok(()),
            false => Err(format!(
                "its headers describe over {} tensors, more than a model of its configuration's layers has",
                self.tensors
            )),
        }
    }
}

/// The folder's weights, `stop` asked before each tensor is read ([`crate::Stop`]).
pub fn weights(dir: &Path, device: &Device, stop: crate::Stop) -> NlmResult<VarBuilder<'static>> {
    let files = files(dir)?;
    let bound = Bound::of(dir)?;
    // every file's header first: the bytes of all their tensors are the load's whole. One file
    // open and one header held at a time (each is read again to load its tensors): a folder of
    // many shards, each header up to 100 MB, holds neither all their headers nor all their
    // files open at once
    let mut loaded = crate::Loaded::default();
    let mut described = 0usize;
    for path in &files {
        let file = Opened::open(path.clone(), bound.header)?;
        loaded.of = loaded.of.saturating_add(file.meta.data_len() as u64);
        described = described.saturating_add(file.meta.tensors().len());
        bound
            .count(described)
            .map_err(|e| NlmError::Model(format!("{}: {e}", dir.display())))?;
    }
    let mut tensors: HashMap<String, Tensor> = HashMap::new();
    for path in files {
        Opened::open(path, bound.header)?.read(device, &mut tensors, (stop, &mut loaded))?;
    }
    // the last tensor read: the whole load, and a last chance to stop before the model is built
    if stop(loaded) {
        return Err(NlmError::Stopped);
    }
    Ok(VarBuilder::from_backend(
        Box::new(TakeOnce(Mutex::new(tensors))),
        DType::F32,
        device.clone(),
    ))
}

/// The tensors read, each handed out once: the loader lets go of it as the model takes it.
struct TakeOnce(Mutex<HashMap<String, Tensor>>);

impl TakeOnce {
    fn take(&self, name: &str) -> candle_core::Result<Tensor> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(name)
            .ok_or_else(|| candle_core::Error::CannotFindTensor {
                path: name.to_owned(),
            })
    }
}

impl SimpleBackend for TakeOnce {
    fn get(
        &self,
        shape: Shape,
        name: &str,
        _: candle_nn::Init,
        dtype: DType,
        dev: &Device,
    ) -> candle_core::Result<Tensor> {
        let t = self.take(name)?;
        if t.shape() != &shape {
            return Err(candle_core::Error::UnexpectedShape {
                msg: format!("shape of {name}"),
                expected: shape,
                got: t.shape().clone(),
            });
        }
        t.to_device(dev)?.to_dtype(dtype)
    }

    fn get_unchecked(&self, name: &str, dtype: DType, dev: &Device) -> candle_core::Result<Tensor> {
        self.take(name)?.to_device(dev)?.to_dtype(dtype)
    }

    fn contains_tensor(&self, name: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(name)
    }
}

/// The weight files of a folder: the single file, or the shards its index names (names only,
/// inside the folder).
fn files(dir: &Path) -> NlmResult<Vec<PathBuf>> {
    let single = dir.join("model.safetensors");
    if single.is_file() {
        return Ok(vec![single]);
    }
    let index = dir.join("model.safetensors.index.json");
    if !index.is_file() {
        return Err(NlmError::Model(format!(
            "{}: not found (no model.safetensors either)",
            index.display()
        )));
    }
    let v = crate::folder::json(&index)?;
    let names: BTreeSet<String> = v
        .get("weight_map")
        .and_then(|m| m.as_object())
        .map(|m| {
            m.values()
                .filter_map(|f| f.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if names.is_empty()
        || names
            .iter()
            .any(|n| n.contains('/') || n.contains('\\') || n.starts_with('.'))
    {
        return Err(NlmError::Model(format!(
            "{}: no usable weight_map",
            index.display()
        )));
    }
    Ok(names.into_iter().map(|n| dir.join(n)).collect())
}

/// Checks a folder's weight files without reading their tensors: the files its index names
/// are there, each a safetensors file whose header describes exactly its bytes, every tensor a
/// float. The number of tensors.
pub fn check(dir: &Path) -> NlmResult<usize> {
    let mut n = 0;
    each_tensor(dir, |_| n += 1)?;
    Ok(n)
}

/// The bytes a folder's weights take once loaded: every tensor as f32, the type the model
/// computes in, whatever the file stores (a bfloat16 checkpoint doubles), read from the files'
/// headers (each checked as [`check`] does) without reading a tensor.
pub fn f32_bytes(dir: &Path) -> NlmResult<u64> {
    let mut total = 0u64;
    each_tensor(dir, |info| {
        let (from, to) = info.data_offsets;
        let bits = (to.saturating_sub(from) as u64).saturating_mul(8);
        let elements = bits / info.dtype.bitsize().max(1) as u64;
        total = total.saturating_add(elements.saturating_mul(4));
    })?;
    Ok(total)
}

/// Every tensor the headers of a folder's weight files describe, each file's header checked
/// against its size and every tensor a float; an error names the file.
fn each_tensor(
    dir: &Path,
    mut tensor: impl FnMut(&safetensors::tensor::TensorInfo),
) -> NlmResult<()> {
    let bound = Bound::of(dir)?;
    let mut described = 0usize;
    for f in files(dir)? {
        let at = |e: String| NlmError::Model(format!("{}: {e}", f.display()));
        let mut file = std::fs::File::open(&f).map_err(|e| at(e.to_string()))?;
        let (meta, _) = header(&mut file, bound.header).map_err(at)?;
        described = described.saturating_add(meta.tensors().len());
        bound.count(described).map_err(at)?;
        for (name, info) in meta.tensors() {
            float(&name, info.dtype).map_err(at)?;
            tensor(info);
        }
    }
    Ok(())
}

/// A safetensors file's header of at most `limit` bytes ([`Bound`]), checked against the
/// file's size, and where its data starts.
fn header(file: &mut std::fs::File, limit: u64) -> Result<(Metadata, u64), String> {
    let size = file.metadata().map_err(|e| e.to_string())?.len();
    let mut n = [0u8; 8];
    file.read_exact(&mut n)
        .map_err(|_| "not a safetensors file: no header".to_string())?;
    let n = u64::from_le_bytes(n);
    if n > MAX_HEADER || n.saturating_add(8) > size {
        return Err(format!("not a safetensors file: a header of {n} bytes"));
    }
    if n > limit {
        return Err(format!(
            "a header of {n} bytes, more than the {limit} a model of its configuration's layers takes"
        ));
    }
    let mut header = vec![0u8; n as usize];
    file.read_exact(&mut header).map_err(|e| e.to_string())?;
    // the crate checks the offsets: in order, contiguous, each the size its shape and type say
    let meta: Metadata = serde_json::from_slice(&header).map_err(|e| format!("its header: {e}"))?;
    let start = 8 + n;
    if start.saturating_add(meta.data_len() as u64) != size {
        return Err(format!(
            "its header describes {} bytes of tensors, the file holds {}",
            meta.data_len(),
            size - start
        ));
    }
    Ok((meta, start))
}

/// A tensor's type as candle's, if it is a float.
fn float(name: &str, dtype: Dtype) -> Result<DType, String> {
    Ok(match dtype {
        Dtype::F32 => DType::F32,
        Dtype::F16 => DType::F16,
        Dtype::BF16 => DType::BF16,
        Dtype::F64 => DType::F64,
        other => return Err(format!("tensor `{name}`: type {other:?} is not a float")),
    })
}

/// A weight file open, its header read and checked.
struct Opened {
    path: PathBuf,
    file: std::fs::File,
    meta: Metadata,
    /// Where its tensors' bytes start.
    start: u64,
}

impl Opened {
    fn open(path: PathBuf, limit: u64) -> NlmResult<Opened> {
        let at = |e: String| NlmError::Model(format!("{}: {e}", path.display()));
        let mut file = std::fs::File::open(&path).map_err(|e| at(e.to_string()))?;
        let (meta, start) = header(&mut file, limit).map_err(at)?;
        Ok(Opened {
            path,
            file,
            meta,
            start,
        })
    }

    /// Reads every tensor of the file into `into`, as f32 on `device`, unless `stop` says to
    /// stop before one; `loaded` counts the bytes read.
    fn read(
        mut self,
        device: &Device,
        into: &mut HashMap<String, Tensor>,
        (stop, loaded): (crate::Stop, &mut crate::Loaded),
    ) -> NlmResult<()> {
        let path = &self.path;
        let at = |e: String| NlmError::Model(format!("{}: {e}", path.display()));
        let mut by_offset: Vec<(String, &safetensors::tensor::TensorInfo)> =
            self.meta.tensors().into_iter().collect();
        by_offset.sort_by_key(|(_, info)| info.data_offsets.0);
        let mut bytes = Vec::new();
        for (name, info) in by_offset {
            if stop(*loaded) {
                return Err(NlmError::Stopped);
            }
            let dtype = float(&name, info.dtype).map_err(at)?;
            let (from, to) = info.data_offsets;
            bytes.clear();
            bytes.resize(to - from, 0);
            (self.file)
                .seek(SeekFrom::Start(self.start + from as u64))
                .map_err(|e| at(e.to_string()))?;
            self.file
                .read_exact(&mut bytes)
                .map_err(|e| at(e.to_string()))?;
            let t = Tensor::from_raw_buffer(&bytes, dtype, &info.shape, device)
                .and_then(|t| t.to_dtype(DType::F32))
                .map_err(|e| at(format!("tensor `{name}`: {e}")))?;
            into.insert(name, t);
            loaded.read = loaded.read.saturating_add((to - from) as u64);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_file(
        path: &Path,
        device: &Device,
        into: &mut HashMap<String, Tensor>,
        stop: (crate::Stop, &mut crate::Loaded),
    ) -> NlmResult<()> {
        Opened::open(path.to_path_buf(), MAX_HEADER)?.read(device, into, stop)
    }

    fn write(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().expect("temp");
        std::io::Write::write_all(&mut f, bytes).expect("write");
        f
    }

    fn file_of(header: &str, data: &[u8]) -> Vec<u8> {
        let mut v = (header.len() as u64).to_le_bytes().to_vec();
        v.extend_from_slice(header.as_bytes());
        v.extend_from_slice(data);
        v
    }

    #[test]
    fn tensors_read_one_at_a_time_as_f32() {
        let data: Vec<u8> = [1.5f32, -2.0, 3.25]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .chain(half::f16::from_f32(0.5).to_le_bytes())
            .collect();
        let f = write(&file_of(
            r#"{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},"b":{"dtype":"F16","shape":[1],"data_offsets":[12,14]}}"#,
            &data,
        ));
        let mut got = HashMap::new();
        read_file(
            f.path(),
            &Device::Cpu,
            &mut got,
            (crate::NEVER, &mut Default::default()),
        )
        .expect("read");
        let a: Vec<f32> = got["a"].to_vec1().expect("a");
        assert_eq!(a, vec![1.5, -2.0, 3.25]);
        let b: Vec<f32> = got["b"].to_vec1().expect("b");
        assert_eq!(b, vec![0.5]);
    }

    /// A folder of one layer (`num_hidden_layers: 1`) and a `model.safetensors` of `n` tensors
    /// of one float, its header padded with spaces to `pad` bytes.
    fn folder_of(n: usize, pad: usize) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(
            dir.path().join("config.json"),
            r#"{"num_hidden_layers": 1}"#,
        )
        .expect("config");
        let entries: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    r#""t{i}":{{"dtype":"F32","shape":[1],"data_offsets":[{},{}]}}"#,
                    4 * i,
                    4 * i + 4
                )
            })
            .collect();
        let mut header = format!("{{{}}}", entries.join(","));
        if header.len() < pad {
            header.push_str(&" ".repeat(pad - header.len()));
        }
        std::fs::write(
            dir.path().join("model.safetensors"),
            file_of(&header, &vec![0u8; 4 * n]),
        )
        .expect("weights");
        dir
    }

    /// A weight header past what the configuration's layers take — in bytes (refused before it
    /// is parsed) or in tensors — is refused, saying so; one within is read.
    #[test]
    fn headers_are_bounded_by_the_configuration() {
        let bound = Bound::of(folder_of(1, 0).path()).expect("bound");
        assert_eq!(bound.tensors, TENSORS_PER_LAYER + TENSORS_BESIDE);
        assert_eq!(bound.header, bound.tensors as u64 * HEADER_PER_TENSOR);
        assert_eq!(check(folder_of(10, 0).path()).expect("ten tensors"), 10);
        let wide = folder_of(1, bound.header as usize + 1);
        let e = check(wide.path())
            .expect_err("a header too large")
            .to_string();
        assert!(
            e.contains("more than the") && e.contains("layers takes"),
            "{e}"
        );
        let many = folder_of(bound.tensors + 1, 0);
        let e = check(many.path())
            .expect_err("too many tensors")
            .to_string();
        assert!(e.contains("tensors, more than a model"), "{e}");
        let e = weights(many.path(), &Device::Cpu, crate::NEVER)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("tensors, more than a model"), "{e}");
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let cases: [(Vec<u8>, &str); 4] = [
            (vec![1, 2, 3], "no header"),
            (u64::MAX.to_le_bytes().to_vec(), "a header of"),
            (
                // offsets past the data
                file_of(
                    r#"{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}}"#,
                    &[0; 8],
                ),
                "holds 8",
            ),
            (
                // the shape says 3 floats, the offsets 2
                file_of(
                    r#"{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}"#,
                    &[0; 8],
                ),
                "header",
            ),
        ];
        for (bytes, want) in cases {
            let f = write(&bytes);
            let e = read_file(
                f.path(),
                &Device::Cpu,
                &mut HashMap::new(),
                (crate::NEVER, &mut Default::default()),
            )
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
            assert!(e.contains(want), "{want}: {e}");
        }
    }
}
