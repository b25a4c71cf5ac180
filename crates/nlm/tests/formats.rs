//! The families and formats `shared/reference/nlm` does not cover, against references made with
//! transformers by `tests/data/make_references.py` (kept in the repository, run by hand):
//! gpt_bigcode (multi-query and fused per-head attention) and GGUF files of the tiny llama
//! (Q8_0 and Q4_0, a SentencePiece tokenizer with scores and no merges; and a byte-level BPE
//! with merges), loaded by transformers itself for the reference.

use std::path::{Path, PathBuf};

use natstudy_nlm::gguf::Packing;
use natstudy_nlm::CausalLm;

mod common;
#[path = "support/crafted.rs"]
mod crafted;

fn data() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data"))
}

fn methods() -> Vec<String> {
    serde_json::from_str(
        &std::fs::read_to_string(common::reference().join("methods.json")).expect("methods"),
    )
    .expect("json")
}

fn expected(key: &str) -> serde_json::Value {
    let all: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(data().join("expected.json")).expect("expected"),
    )
    .expect("json");
    all[key].clone()
}

/// Every method's token ids equal the reference's, and each cross-entropy is within `tolerance`
/// (relative) of transformers'; returns the worst relative difference.
fn check(lm: &CausalLm, key: &str, tolerance: f64) -> f64 {
    let want = expected(key);
    assert_eq!(
        lm.max_len() as u64,
        want["max_len"].as_u64().expect("max_len"),
        "{key}"
    );
    let mut worst = 0f64;
    for (i, text) in methods().iter().enumerate() {
        let ids = lm.input_ids(text, None).expect("ids");
        let want_ids: Vec<u32> = serde_json::from_value(want["ids"][i].clone()).expect("ids");
        assert_eq!(ids, want_ids, "{key} method {i}: token ids");
        let got = lm.cross_entropy_of_ids(&ids).expect("ce").expect("scored");
        let ce = want["ce_nats"][i].as_f64().expect("ce");
        let rel = (got.ce_nats - ce).abs() / ce.abs();
        worst = worst.max(rel);
        assert!(
            rel < tolerance,
            "{key} method {i}: {} against transformers' {ce}",
            got.ce_nats
        );
    }
    eprintln!("{key}: worst relative difference {worst:e}");
    worst
}

fn folder(name: &str) -> CausalLm {
    let lm = CausalLm::load(&data().join(name)).expect("model");
    assert_eq!(lm.family(), natstudy_nlm::Family::GptBigCode);
    lm
}

fn gguf(name: &str, packing: Packing) -> CausalLm {
    let path: &Path = &data().join("gguf").join(format!("{name}.gguf"));
    CausalLm::load_gguf(path, candle_core::Device::Cpu, packing).expect("gguf")
}

#[test]
fn gpt_bigcode_with_multi_query_attention_scores_as_transformers() {
    check(&folder("bigcode"), "bigcode", 1e-5);
}

#[test]
fn gpt_bigcode_with_fused_attention_scores_as_transformers() {
    check(&folder("bigcode_mha"), "bigcode_mha", 1e-5);
}

/// Dequantized, a GGUF file is exactly the model transformers makes of it: the interleaved
/// rotary pairs undo the converter's permutation, and the tokenizer built from the file's
/// pieces and scores gives transformers' ids.
#[test]
fn a_gguf_file_dequantized_scores_as_transformers() {
    check(&gguf("llama-q8_0", Packing::F32), "llama-q8_0", 1e-5);
    check(&gguf("llama-q4_0", Packing::F32), "llama-q4_0", 1e-5);
}

/// Packed (each projection dequantized just before its product), a GGUF file scores as the
/// dequantized model too.
#[test]
fn a_gguf_file_packed_scores_as_transformers() {
    check(&gguf("llama-q8_0", Packing::Packed), "llama-q8_0", 1e-5);
    check(&gguf("llama-q4_0", Packing::Packed), "llama-q4_0", 1e-5);
}

/// The code a GPU runs (candle's tensor operations in place of the CPU's own), run on the CPU:
/// gpt_bigcode both ways, and a GGUF file packed (dequantized before each product, as a GPU
/// holds it) and dequantized at load, score as transformers.
#[test]
fn candles_operations_score_bigcode_and_gguf_as_transformers() {
    natstudy_nlm::with_candle_ops(|| {
        check(&folder("bigcode"), "bigcode", 1e-5);
        check(&folder("bigcode_mha"), "bigcode_mha", 1e-5);
        check(&gguf("llama-q4_0", Packing::Packed), "llama-q4_0", 1e-5);
        check(&gguf("llama-q4_0", Packing::F32), "llama-q4_0", 1e-5);
    });
}

/// A byte-level BPE in a GGUF file (`tokenizer.ggml.model = gpt2`, with merges: SmolLM2's and
/// StarCoder's kind) gives transformers' ids.
#[test]
fn a_gguf_files_byte_level_tokenizer_gives_transformers_ids() {
    check(
        &gguf("llama-gpt2-q8_0", Packing::F32),
        "llama-gpt2-q8_0",
        1e-5,
    );
}

/// `load_on` tells a GGUF file by its name and packs it.
#[test]
fn a_gguf_path_loads_packed() {
    let lm = CausalLm::load(&data().join("gguf/llama-q8_0.gguf")).expect("gguf");
    assert_eq!(lm.family(), natstudy_nlm::Family::Llama);
    assert_eq!(lm.max_len(), 512);
}

/// A file that is not what its name says is refused with the file's name, never a panic.
#[test]
fn broken_gguf_files_are_refused_clearly() {
    let dir = tempfile::tempdir().expect("dir");
    let good = std::fs::read(data().join("gguf/llama-q8_0.gguf")).expect("read");
    for (name, bytes) in [
        ("empty.gguf", Vec::new()),
        ("text.gguf", b"not a gguf file at all".to_vec()),
        ("cut.gguf", good[..good.len() / 2].to_vec()),
        ("header.gguf", good[..64].to_vec()),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).expect("write");
        let e = CausalLm::load(&p)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains(name), "{name}: {e}");
    }
}

/// Headers crafted to make a reader allocate or divide by what they declare: an array of 2⁴⁰
/// elements, a string of 2⁶⁰ bytes, an alignment of 0, and the reference file with its
/// embedding's dimensions set to 2³² × 2³² (a product that overflows). Each is an error naming
/// the file — no allocation of what the header claims, no panic out of the loader.
#[test]
fn crafted_gguf_headers_are_refused_clearly() {
    let dir = tempfile::tempdir().expect("dir");
    let array = {
        let mut t = 9u32.to_le_bytes().to_vec(); // an array
        t.extend_from_slice(&0u32.to_le_bytes()); // of u8
        t.extend_from_slice(&(1u64 << 40).to_le_bytes());
        t.extend_from_slice(&[0; 16]);
        t
    };
    let string = {
        let mut t = 8u32.to_le_bytes().to_vec();
        t.extend_from_slice(&(1u64 << 60).to_le_bytes());
        t.extend_from_slice(b"abc");
        t
    };
    let huge =
        crafted::huge_embedding(std::fs::read(data().join("gguf/llama-q8_0.gguf")).expect("read"));
    for (file, bytes) in [
        (
            "array.gguf",
            crafted::header(&[crafted::entry("x", &array)]),
        ),
        (
            "string.gguf",
            crafted::header(&[crafted::entry("x", &string)]),
        ),
        ("alignment.gguf", crafted::zero_alignment()),
        ("dims.gguf", huge),
    ] {
        let p = dir.path().join(file);
        std::fs::write(&p, bytes).expect("write");
        for packing in [Packing::Packed, Packing::F32] {
            let e = CausalLm::load_gguf(&p, candle_core::Device::Cpu, packing)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(file), "{file}: {e}");
        }
        // what the weights would take, read from the same header, likewise
        let e = natstudy_nlm::weight_bytes(&p)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains(file), "{file}: {e}");
    }
}

/// A header that is one true array of 33 Mi bytes — each of which candle's reader would hold
/// as a 32-byte value, 1 GiB — is refused by its count before candle reads a value; one that is
/// a string of 33 MiB, at the 32 MiB natstudy reads of a header; by the loader and by the
/// memory check alike.
#[test]
fn a_header_past_its_bound_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let n = 33usize << 20;
    let mut array = 9u32.to_le_bytes().to_vec(); // an array
    array.extend_from_slice(&0u32.to_le_bytes()); // of u8
    array.extend_from_slice(&(n as u64).to_le_bytes());
    array.resize(array.len() + n, 1);
    let mut string = 8u32.to_le_bytes().to_vec(); // a string
    string.extend_from_slice(&(n as u64).to_le_bytes());
    string.resize(string.len() + n, b'a');
    for (file, value, says) in [
        ("big-array.gguf", array, "an array of 34603008 elements"),
        ("big-string.gguf", string, "32 MiB"),
    ] {
        let p = dir.path().join(file);
        std::fs::write(&p, crafted::header(&[crafted::entry("x", &value)])).expect("write");
        let e = CausalLm::load_gguf(&p, candle_core::Device::Cpu, Packing::Packed)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains(file) && e.contains(says), "{e}");
        let e = natstudy_nlm::weight_bytes(&p)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains(file) && e.contains(says), "{e}");
    }
}

/// A load told to stop (a scoring job stopped while a large model loads, minutes) ends with
/// `Stopped` once told, reading no further tensor; told nothing, it asks once a tensor, saying
/// how many bytes of the tensors it has read of all the files hold. A folder and a GGUF file.
#[test]
fn a_load_stops_when_told_and_reads_no_further() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let folder = data().join("bigcode");
    let file = data().join("gguf").join("llama-q8_0.gguf");
    for path in [&folder, &file] {
        let asked = std::sync::Mutex::new(Vec::new());
        let all = CausalLm::load_until(path, candle_core::Device::Cpu, &|l| {
            asked.lock().expect("lock").push(l);
            false
        });
        assert!(all.is_ok(), "{}", path.display());
        let asked = asked.into_inner().expect("lock");
        let tensors = asked.len();
        assert!(tensors > 3, "{}: asked {tensors} times", path.display());
        // from nothing read, each tensor more, never all before the last tensor is read;
        // then all, once
        let of = asked[0].of;
        assert_eq!(asked[0].read, 0, "{}", path.display());
        for w in asked.windows(2) {
            assert!(w[0].read < w[1].read, "{}: {w:?}", path.display());
        }
        let (last, before) = asked.split_last().expect("asked");
        assert_eq!(
            *last,
            natstudy_nlm::Loaded { read: of, of },
            "{}",
            path.display()
        );
        assert!(
            before.iter().all(|l| l.of == of && l.read < of),
            "{asked:?}"
        );
        if path == &folder {
            let (_, in_files) = CausalLm::check_folder(path).expect("folder");
            assert_eq!(
                tensors,
                in_files + 1,
                "once a tensor, and once all are read"
            );
            // all: the file's bytes after its header
            let bytes = std::fs::read(path.join("model.safetensors")).expect("weights");
            let header = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
            assert_eq!(of, bytes.len() as u64 - 8 - header);
        } else {
            // all: the tensors as packed in the file, less than the file (its header and
            // vocabulary), more than half of it
            let bytes = std::fs::metadata(path).expect("file").len();
            assert!(of < bytes && of > bytes / 2, "{of} of a file of {bytes}");
        }
        let asked = AtomicUsize::new(0);
        let stopped = CausalLm::load_until(path, candle_core::Device::Cpu, &|_| {
            asked.fetch_add(1, Ordering::Relaxed) + 1 >= 3
        });
        assert!(
            matches!(stopped, Err(natstudy_nlm::NlmError::Stopped)),
            "{}: {:?}",
            path.display(),
            stopped.err()
        );
        assert_eq!(asked.load(Ordering::Relaxed), 3, "{}", path.display());
        // told once all is read: stopped still, before the model is made of it
        let late = CausalLm::load_until(path, candle_core::Device::Cpu, &|l| l.read == l.of);
        assert!(
            matches!(late, Err(natstudy_nlm::NlmError::Stopped)),
            "{}: {:?}",
            path.display(),
            late.err()
        );
    }
}

/// A GGUF file's weights held packed take about the file's tensors' bytes, read from its
/// header: its 2-D tensors as packed, its norms in f32, and a panel of tiles per core.
#[test]
fn a_gguf_files_packed_weights_take_its_size() {
    use natstudy_nlm::gguf::weight_bytes;
    let path = data().join("gguf").join("llama-q4_0.gguf");
    let bytes = weight_bytes(&path).expect("packed");
    let file = std::fs::metadata(&path).expect("file").len();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let panels = cores * natstudy_nlm::PANEL_BYTES as u64;
    // the norms in f32 weigh what their packed form does or more; the header is not weights
    assert!(
        bytes > panels && bytes - panels <= 2 * file,
        "{bytes} for a file of {file}"
    );
}
