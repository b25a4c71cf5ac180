//! `shared/reference/nlm`: tiny llama, gpt_neo and bloom models saved by transformers, and the
//! cross-entropy the published tool computes for 20 JDK methods (`expected_ce.json`: the token
//! ids it used and `model(ids, labels=ids).loss`). The tokenizer must give the same ids, and the
//! forward pass the same loss.

use natstudy_nlm::CausalLm;

mod common;
use common::reference;

/// The 20 reference methods.
fn methods(dir: &std::path::Path) -> Vec<String> {
    serde_json::from_str(&std::fs::read_to_string(dir.join("methods.json")).expect("methods"))
        .expect("json")
}

fn check(folder: &str, key: &str) {
    check_in(&reference().join("models").join(folder), key);
}

/// The model in `model` scores the reference methods as transformers scored model `key`.
fn check_in(model: &std::path::Path, key: &str) {
    let dir = reference();
    let methods = methods(&dir);
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("expected_ce.json")).expect("expected"),
    )
    .expect("json");
    let want = &expected[key];
    let lm = CausalLm::load(model).expect("model");
    assert_eq!(
        lm.max_len() as u64,
        want["max_len"].as_u64().expect("max_len")
    );
    let mut worst = 0f64;
    for (i, text) in methods.iter().enumerate() {
        let mut ids = lm.tokenize(text).expect("tokens");
        ids.truncate(lm.max_len());
        let want_ids: Vec<u32> = serde_json::from_value(want["ids"][i].clone()).expect("ids");
        assert_eq!(ids, want_ids, "{key} method {i}: token ids");
        let got = lm
            .cross_entropy(text, None)
            .expect("ce")
            .expect("two tokens or more");
        let ce = want["ce_nats"][i].as_f64().expect("ce");
        assert_eq!(got.tokens as u64, want["n_tokens"][i].as_u64().expect("n"));
        let rel = (got.ce_nats - ce).abs() / ce.abs();
        worst = worst.max(rel);
        assert!(
            rel < 1e-5,
            "{key} method {i}: {} against transformers' {ce}",
            got.ce_nats
        );
    }
    eprintln!("{key}: worst relative difference {worst:e}");
}

/// Methods scored in batches (padded on the right, as `lm score` runs them) score as each alone.
#[test]
fn batches_score_as_each_method_alone() {
    let dir = reference();
    let methods = methods(&dir);
    for folder in ["llama", "gptneo", "bloom"] {
        let lm = CausalLm::load(&dir.join("models").join(folder)).expect("model");
        let ids: Vec<Vec<u32>> = methods
            .iter()
            .map(|m| lm.input_ids(m, None).expect("ids"))
            .collect();
        let lengths: Vec<usize> = ids.iter().map(Vec::len).collect();
        let batching = natstudy_nlm::Batching {
            sequences: 6,
            ..Default::default()
        };
        let batches = lm.plan(&lengths, batching);
        assert!(
            batches.iter().any(|b| b.len() > 1),
            "{folder}: some batch holds several"
        );
        let mut seen = 0;
        for b in batches {
            let seqs: Vec<&[u32]> = b.iter().map(|&i| ids[i].as_slice()).collect();
            let got = lm.score_batch(&seqs).expect("batch");
            for (&i, g) in b.iter().zip(got) {
                let alone = lm.cross_entropy_of_ids(&ids[i]).expect("alone");
                let (g, alone) = (g.expect("scored"), alone.expect("scored"));
                assert_eq!(g.tokens, alone.tokens);
                let rel = (g.ce_nats - alone.ce_nats).abs() / alone.ce_nats;
                assert!(
                    rel < 1e-6,
                    "{folder} method {i}: {} in a batch, {} alone",
                    g.ce_nats,
                    alone.ce_nats
                );
                seen += 1;
            }
        }
        assert_eq!(seen, methods.len());
    }
}

/// Batches run by several workers (the costliest first, each worker taking the next when it is
/// free) give every method once, with the score it has alone.
#[test]
fn workers_score_every_method_once_as_alone() {
    let dir = reference();
    let methods = methods(&dir);
    let texts: Vec<&str> = methods.iter().map(String::as_str).collect();
    let lm = CausalLm::load(&dir.join("models").join("llama")).expect("model");
    let mut got = vec![None; texts.len()];
    let batching = natstudy_nlm::Batching {
        sequences: 3,
        workers: 3,
        ..Default::default()
    };
    lm.score_texts(&texts, None, batching, |scored| {
        for (i, s) in scored {
            assert!(got[*i].is_none(), "method {i} twice");
            got[*i] = Some(s.expect("scored").ce_nats);
        }
        true
    })
    .expect("scored");
    for (i, text) in texts.iter().enumerate() {
        let alone = lm
            .cross_entropy_of_ids(&lm.input_ids(text, None).expect("ids"))
            .expect("alone")
            .expect("scored")
            .ce_nats;
        let g = got[i].expect("every method");
        assert!(
            (g - alone).abs() / alone < 1e-6,
            "method {i}: {g} vs {alone}"
        );
    }
}

/// A prepared scoring's work is what its batches cost, each method its batch's share: a
/// method longer than the model's context costs what its truncation does (its bytes would say
/// more), and a longer batch costs more than a short one of as many methods.
#[test]
fn a_methods_work_is_its_share_of_its_batch() {
    let dir = reference();
    let methods = methods(&dir);
    let texts: Vec<&str> = methods.iter().map(String::as_str).collect();
    let lm = CausalLm::load(&dir.join("models").join("llama")).expect("model");
    let batching = natstudy_nlm::Batching {
        sequences: 3,
        ..Default::default()
    };
    let prepared = lm.prepare(&texts, None, batching).expect("prepared");
    let (work, tokens): (&[u64], Vec<usize>) = (prepared.work(), prepared.tokens().collect());
    assert_eq!((work.len(), tokens.len()), (texts.len(), texts.len()));
    // the reference holds one method longer than the context: truncated, it costs a full
    // context alone or with others of its batch
    let long = (0..texts.len())
        .find(|&i| lm.tokenize(texts[i]).expect("tokens").len() > lm.max_len())
        .expect("a method longer than the context");
    assert_eq!(tokens[long], lm.max_len());
    assert_eq!(work[long], lm.cost().batch(1, lm.max_len()));
    // each batch's methods share its cost, padding included
    let lengths: Vec<usize> = texts
        .iter()
        .map(|t| lm.input_ids(t, None).expect("ids").len())
        .collect();
    assert_eq!(lengths, tokens);
    let batches = lm.plan(&lengths, batching);
    let mut total = 0u64;
    for b in &batches {
        let longest = b.iter().map(|&i| lengths[i]).max().expect("a batch");
        for &i in b {
            assert_eq!(work[i], lm.cost().batch(1, longest), "method {i}");
        }
        total += lm.cost().batch(b.len(), longest);
    }
    assert_eq!(work.iter().sum::<u64>(), total);
    let (short, longer) = (lm.cost().batch(3, 50), lm.cost().batch(3, 100));
    assert!(
        longer > 2 * short,
        "attention grows faster than the positions"
    );
    // a prepared scoring scores as the texts do
    let mut got = vec![None; texts.len()];
    lm.score_prepared(&prepared, |scored| {
        for (i, s) in scored {
            got[*i] = *s;
        }
        true
    })
    .expect("scored");
    for (i, g) in got.iter().enumerate() {
        let alone = lm.cross_entropy(texts[i], None).expect("alone");
        assert_eq!(g.map(|g| g.tokens), alone.map(|a| a.tokens), "method {i}");
    }
    // another model — even the same files loaded again — does not score them: its
    // vocabulary, context and cost are not what they were planned for
    let other = CausalLm::load(&dir.join("models").join("gptneo")).expect("other model");
    let again = CausalLm::load(&dir.join("models").join("llama")).expect("loaded again");
    for lm in [&other, &again] {
        let mut called = false;
        let e = lm.score_prepared(&prepared, |_| {
            called = true;
            true
        });
        let e = e.expect_err("refused").to_string();
        assert!(e.contains("prepared by another model"), "{e}");
        assert!(!called, "nothing scored");
    }
}

#[test]
fn llama_scores_as_transformers() {
    check("llama", "llama");
}

#[test]
fn gpt_neo_scores_as_transformers() {
    check("gptneo", "gptneo");
}

#[test]
fn bloom_scores_as_transformers() {
    check("bloom", "bloom");
}

/// The code a GPU runs — candle's tensor operations in place of the CPU's own (head-major
/// attention, the gate then up MLP, candle's norms, log-softmax and gather) — run on the CPU:
/// every family scores as transformers, and the masked model fills as it does.
#[test]
fn candles_operations_score_as_transformers() {
    natstudy_nlm::with_candle_ops(|| {
        check("llama", "llama");
        check("gptneo", "gptneo");
        check("bloom", "bloom");
        roberta_fills();
    });
}

/// CodeBERT's architecture, fill-mask: at each masked method's `<mask>`, the log-probabilities
/// over the whole vocabulary as transformers gives them, and the same top 5 in the same order.
#[test]
fn roberta_fills_masks_as_transformers() {
    roberta_fills();
}

fn roberta_fills() {
    roberta_fills_in(&reference().join("models/roberta"));
}

/// The masked model in `model` fills the reference's masks as transformers filled roberta's.
fn roberta_fills_in(model: &std::path::Path) {
    let dir = reference();
    let masked: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("masked.json")).expect("masked"))
            .expect("json");
    let expected: Vec<serde_json::Value> = serde_json::from_str(
        &std::fs::read_to_string(dir.join("expected_fill.json")).expect("expected"),
    )
    .expect("json");
    let lm = natstudy_nlm::MaskedLm::load(model).expect("model");
    let mut worst = 0f64;
    for want in &expected {
        let i = want["masked"].as_u64().expect("index") as usize;
        let fills = lm.fill(&masked[i]).expect("fill");
        assert_eq!(fills.len(), 1, "one mask in method {i}");
        let f = &fills[0];
        assert_eq!(
            f.position as u64,
            want["mask_position"].as_u64().expect("pos"),
            "method {i}"
        );
        let all: Vec<f64> = serde_json::from_value(want["logp_all"].clone()).expect("logp");
        assert_eq!(all.len(), f.logp.len());
        for (got, w) in f.logp.iter().zip(&all) {
            let d = (f64::from(*got) - w).abs();
            worst = worst.max(d);
            assert!(d < 1e-4, "method {i}: {got} vs {w}");
        }
        let top: Vec<u64> = want["top5"]
            .as_array()
            .expect("top5")
            .iter()
            .map(|t| t["id"].as_u64().expect("id"))
            .collect();
        let got: Vec<u64> = f.top(5).iter().map(|(id, _)| u64::from(*id)).collect();
        assert_eq!(got, top, "method {i}: the top 5 in order");
        assert_eq!(
            lm.token(got[0] as u32).as_deref(),
            want["top5"][0]["token"].as_str(),
            "method {i}"
        );
    }
    eprintln!("roberta: worst absolute difference {worst:e}");
}

/// A `tokenizer.json` that sets truncation and padding (files saved for fine-tuning do) scores
/// and fills as the file without them: transformers' `tokenize` and its fill-mask pipeline
/// apply neither. (The crate's `encode` would cut every method to 8 tokens and pad it to 600.)
#[test]
fn a_tokenizers_own_truncation_and_padding_are_ignored() {
    let tmp = tempfile::tempdir().expect("dir");
    for folder in ["llama", "roberta"] {
        let from = reference().join("models").join(folder);
        let to = tmp.path().join(folder);
        std::fs::create_dir(&to).expect("dir");
        for f in ["config.json", "model.safetensors"] {
            std::fs::copy(from.join(f), to.join(f)).expect("copy");
        }
        let mut t: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(from.join("tokenizer.json")).expect("read"),
        )
        .expect("json");
        t["truncation"] = serde_json::json!({
            "direction": "Right", "max_length": 8, "strategy": "LongestFirst", "stride": 0
        });
        t["padding"] = serde_json::json!({
            "strategy": {"Fixed": 600}, "direction": "Right", "pad_to_multiple_of": null,
            "pad_id": 0, "pad_type_id": 0, "pad_token": "<unk>"
        });
        std::fs::write(to.join("tokenizer.json"), t.to_string()).expect("write");
    }
    check_in(&tmp.path().join("llama"), "llama");
    roberta_fills_in(&tmp.path().join("roberta"));
}

/// A checkpoint sharded as transformers shards big models (`model.safetensors.index.json` and
/// its files) loads and scores as the single file does.
#[test]
fn a_sharded_checkpoint_scores_as_the_single_file() {
    use std::collections::HashMap;
    let dir = reference();
    let single = dir.join("models/llama");
    let tensors =
        candle_core::safetensors::load(single.join("model.safetensors"), &candle_core::Device::Cpu)
            .expect("weights");
    let sharded = tempfile::tempdir().expect("dir");
    for f in ["config.json", "tokenizer.json"] {
        std::fs::copy(single.join(f), sharded.path().join(f)).expect("copy");
    }
    let mut names: Vec<String> = tensors.keys().cloned().collect();
    names.sort();
    let mut map = serde_json::Map::new();
    for (k, file) in [
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
    ]
    .into_iter()
    .enumerate()
    {
        let shard: HashMap<String, candle_core::Tensor> = names
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == k)
            .map(|(_, n)| (n.clone(), tensors[n].clone()))
            .collect();
        candle_core::safetensors::save(&shard, sharded.path().join(file)).expect("shard");
        for n in shard.keys() {
            map.insert(n.clone(), serde_json::Value::String(file.into()));
        }
    }
    let index = serde_json::json!({"metadata": {}, "weight_map": map});
    std::fs::write(
        sharded.path().join("model.safetensors.index.json"),
        index.to_string(),
    )
    .expect("index");
    let methods = methods(&dir);
    let one = CausalLm::load(&single).expect("single");
    let two = CausalLm::load(sharded.path()).expect("sharded");
    for m in methods.iter().take(5) {
        let x = one.cross_entropy(m, None).expect("ce").expect("scored");
        let y = two.cross_entropy(m, None).expect("ce").expect("scored");
        assert_eq!(x, y);
    }
}
