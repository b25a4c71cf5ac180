//! What a model's weights take in memory once loaded (`weight_bytes`), read from its files'
//! headers before a loader commits to it, against the parameters its configuration implies:
//! a folder in f32 whatever its files store, a GGUF file packed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

mod common;
use common::reference;

/// A llama configuration's weights, counted from its sizes: the embeddings and the head
/// (vocabulary × hidden), the projections of each layer, and the norms (hidden each).
struct Counts {
    /// vocabulary × hidden, once
    embedding: u64,
    /// every projection of the layers and the head
    projections: u64,
    /// the norms' weights
    norms: u64,
}

fn counts(dir: &Path) -> Counts {
    let text = std::fs::read_to_string(dir.join("config.json")).expect("config");
    let c: serde_json::Value = serde_json::from_str(&text).expect("json");
    let n = |k: &str| c[k].as_u64().unwrap_or_else(|| panic!("config: {k}"));
    let (h, i, layers, vocab) = (
        n("hidden_size"),
        n("intermediate_size"),
        n("num_hidden_layers"),
        n("vocab_size"),
    );
    let d = n("head_dim");
    let (q, kv) = (n("num_attention_heads") * d, n("num_key_value_heads") * d);
    assert_eq!(
        c["tie_word_embeddings"], false,
        "the head is its own tensor"
    );
    let layer = q * h + 2 * kv * h + h * q + 3 * i * h;
    Counts {
        embedding: vocab * h,
        projections: layers * layer + vocab * h,
        norms: (2 * layers + 1) * h,
    }
}

/// The reference llama's single f32 file, then its tensors as bfloat16 sharded in two files:
/// both count four bytes a weight, the second from half the bytes on disk.
#[test]
fn a_folders_weights_count_in_f32_whatever_its_files_store() {
    let single = reference().join("models/llama");
    let c = counts(&single);
    let weights = c.embedding + c.projections + c.norms;
    let got = natstudy_nlm::weight_bytes(&single).expect("single");
    assert_eq!(got, 4 * weights);

    let tensors =
        candle_core::safetensors::load(single.join("model.safetensors"), &candle_core::Device::Cpu)
            .expect("weights");
    let dir = tempfile::tempdir().expect("dir");
    let mut names: Vec<&String> = tensors.keys().collect();
    names.sort();
    let mut map = serde_json::Map::new();
    let mut on_disk = 0;
    for k in 0..2 {
        let file = format!("model-0000{}-of-00002.safetensors", k + 1);
        let shard: HashMap<String, candle_core::Tensor> = names
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == k)
            .map(|(_, n)| {
                let t = tensors[*n]
                    .to_dtype(candle_core::DType::BF16)
                    .expect("bf16");
                ((*n).clone(), t)
            })
            .collect();
        candle_core::safetensors::save(&shard, dir.path().join(&file)).expect("shard");
        on_disk += std::fs::metadata(dir.path().join(&file))
            .expect("size")
            .len();
        for n in shard.keys() {
            map.insert(n.clone(), serde_json::Value::String(file.clone()));
        }
    }
    let index = serde_json::json!({"metadata": {}, "weight_map": map});
    std::fs::write(
        dir.path().join("model.safetensors.index.json"),
        index.to_string(),
    )
    .expect("index");
    assert!(on_disk < 2 * weights + 10_000, "{on_disk}");
    let got = natstudy_nlm::weight_bytes(dir.path()).expect("sharded");
    assert_eq!(got, 4 * weights);

    // a shard the index names that is not there is the loader's error, named
    std::fs::remove_file(dir.path().join("model-00002-of-00002.safetensors")).expect("rm");
    let e = natstudy_nlm::weight_bytes(dir.path())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("model-00002-of-00002.safetensors"), "{e}");
}

/// The reference llama written as GGUF (`tests/data/make_references.py`, every matrix
/// quantized): the projections, the head and the embeddings as packed blocks (Q8_0: 34 bytes
/// for 32 weights; Q4_0: 18) — the embeddings are looked up from the packed table — the norms
/// in f32, and a panel of dequantized tiles for each core.
#[test]
fn a_gguf_files_weights_count_packed_with_a_panel_per_core() {
    let c = counts(&reference().join("models/llama"));
    let data = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/gguf"));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let panels = cores * natstudy_nlm::PANEL_BYTES as u64;
    for (file, block_bytes) in [("llama-q8_0.gguf", 34), ("llama-q4_0.gguf", 18)] {
        let want = (c.projections + c.embedding) / 32 * block_bytes + 4 * c.norms + panels;
        let got = natstudy_nlm::weight_bytes(&data.join(file)).expect("gguf");
        assert_eq!(got, want, "{file}");
    }
}
