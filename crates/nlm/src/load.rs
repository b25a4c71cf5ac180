//! A model folder's weights: `model.safetensors`, or the shards a `model.safetensors.index.json`
//! names. Read into memory (safetensors' own bounds checks; no `unsafe` memory map here).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;

use crate::{NlmError, NlmResult};

pub fn weights(dir: &Path, device: &Device) -> NlmResult<VarBuilder<'static>> {
    let single = dir.join("model.safetensors");
    let files: Vec<std::path::PathBuf> = if single.is_file() {
        vec![single]
    } else {
        let index = dir.join("model.safetensors.index.json");
        let text = std::fs::read_to_string(&index).map_err(|e| {
            NlmError::Model(format!(
                "{}: {e} (no model.safetensors either)",
                index.display()
            ))
        })?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| NlmError::Model(format!("{}: {e}", index.display())))?;
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
        names.into_iter().map(|n| dir.join(n)).collect()
    };
    let mut tensors: HashMap<String, Tensor> = HashMap::new();
    for f in files {
        let loaded = candle_core::safetensors::load(&f, device)
            .map_err(|e| NlmError::Model(format!("{}: {e}", f.display())))?;
        for (name, t) in loaded {
            tensors.insert(name, t.to_dtype(DType::F32)?);
        }
    }
    Ok(VarBuilder::from_tensors(tensors, DType::F32, device))
}
