//! Hostile `tokenizer.json` files: the `tokenizers` crate panics on some of them (at parse or
//! when encoding); natstudy answers each with an error naming the file. A test binary of its
//! own: the sweep silences the process's panic hook while it runs.

use std::path::{Path, PathBuf};

use natstudy_nlm::tokenizer::Tokenizer;
use natstudy_nlm::{CausalLm, MaskedLm};
use serde_json::{json, Value};

mod common;

fn models() -> PathBuf {
    common::reference().join("models")
}

fn tokenizer_json(model: &str) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(models().join(model).join("tokenizer.json")).expect("read"),
    )
    .expect("json")
}

/// A copy of reference model `model` in `to` whose `tokenizer.json` is `edit`ed.
fn folder_with(model: &str, to: &Path, edit: impl FnOnce(&mut Value)) {
    std::fs::create_dir_all(to).expect("dir");
    for f in ["config.json", "model.safetensors"] {
        std::fs::copy(models().join(model).join(f), to.join(f)).expect("copy");
    }
    let mut t = tokenizer_json(model);
    edit(&mut t);
    std::fs::write(to.join("tokenizer.json"), t.to_string()).expect("write");
}

const METHOD: &str = "public int sum(int[] xs) {\n  int total = 0; // <s> </s> <mask> é 字 😀\n  for (int x : xs) total += x;\n  return total;\n}\n";

/// Three files the crate panics on, one for each place it does: loading the model (or
/// scoring with it) is an error that names the file and says the library failed.
#[test]
fn a_tokenizer_file_the_library_panics_on_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().expect("dir");
    // a continuing-subword prefix that cuts the byte-level `Ġ` inside its character: the
    // crate (0.22) sliced a string at a byte that is not a character's boundary while
    // reading; 0.23 refuses the token as out of its vocabulary. Either way: an error naming
    // the file
    let cut = tmp.path().join("cut");
    folder_with("gptneo", &cut, |t| {
        t["model"]["continuing_subword_prefix"] = json!("(")
    });
    let e = CausalLm::load(&cut)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.contains("cut/tokenizer.json")
            && ((e.contains("the tokenizers library failed reading it")
                && e.contains("char boundary"))
                || e.contains("out of vocabulary")),
        "{e}"
    );
    // a SentencePiece normalization table of garbage bytes
    let table = tmp.path().join("table");
    folder_with("roberta", &table, |t| {
        t["normalizer"] = json!({"type": "Precompiled", "precompiled_charsmap": "AAAA"})
    });
    let e = MaskedLm::load(&table)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.contains("table/tokenizer.json") && e.contains("failed reading it"),
        "{e}"
    );
    // a template that places a special token its list lacks: reads, then fails each encoding
    // that adds special tokens
    let template = tmp.path().join("template");
    folder_with("llama", &template, |t| {
        t["post_processor"]["special_tokens"] = json!({})
    });
    let text = std::fs::read_to_string(template.join("tokenizer.json")).expect("read");
    let tk = Tokenizer::parse(&text, "template/tokenizer.json").expect("reads");
    let e = tk.encode(METHOD, true).expect_err("fails").to_string();
    assert!(
        e.contains("template/tokenizer.json: the tokenizers library failed encoding a text"),
        "{e}"
    );
    // the causal model's scoring adds no special tokens, so it runs
    let lm = CausalLm::load(&template).expect("loads");
    assert!(lm.cross_entropy(METHOD, None).expect("scores").is_some());
}

/// Every field of two reference tokenizers (the vocabulary and merges whole) replaced in turn
/// by values of the wrong kind or hostile ones: reading, encoding, decoding and looking up
/// tokens answer or err, and never panic. Some of the variants do panic inside the crate.
#[test]
fn no_mutation_of_a_tokenizer_file_panics() {
    fn paths(v: &Value, at: &[String], out: &mut Vec<Vec<String>>) {
        out.push(at.to_vec());
        let child = |k: String| [at, &[k]].concat();
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    if k == "vocab" || k == "merges" {
                        out.push(child(k.clone()));
                    } else {
                        paths(x, &child(k.clone()), out);
                    }
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate().take(4) {
                    paths(x, &child(i.to_string()), out);
                }
            }
            _ => {}
        }
    }
    fn at<'a>(v: &'a mut Value, path: &[String]) -> &'a mut Value {
        path.iter().fold(v, |v, k| match v {
            Value::Array(a) => &mut a[k.parse::<usize>().expect("index")],
            v => &mut v[k.as_str()],
        })
    }
    let values = [
        Value::Null,
        json!(-1),
        json!(0),
        json!(u32::MAX),
        json!(""),
        json!("("),
        json!([]),
        json!({}),
        json!("Sequence"),
        json!("Unigram"),
        json!({"type": "Precompiled", "precompiled_charsmap": "/////w=="}),
        json!({"direction": "Right", "max_length": 0, "strategy": "LongestFirst", "stride": 5}),
    ];
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let (mut variants, mut read, mut panicked) = (0, 0, 0);
    for model in ["llama", "roberta"] {
        let base = tokenizer_json(model);
        let mut all = Vec::new();
        paths(&base, &[], &mut all);
        for path in &all {
            for value in &values {
                let mut t = base.clone();
                *at(&mut t, path) = value.clone();
                variants += 1;
                let outcome = std::panic::catch_unwind(|| {
                    let mut errors = Vec::new();
                    match Tokenizer::parse(&t.to_string(), "tokenizer.json") {
                        Err(e) => errors.push(e.to_string()),
                        Ok(tk) => {
                            for special in [false, true] {
                                match tk.encode(METHOD, special) {
                                    Ok(ids) => {
                                        tk.decode(&ids);
                                    }
                                    Err(e) => errors.push(e.to_string()),
                                }
                            }
                            tk.decode(&[0, 5, u32::MAX]);
                            tk.id_to_token(u32::MAX);
                            tk.token_to_id("<mask>");
                        }
                    }
                    errors
                });
                let errors = match outcome {
                    Ok(errors) => errors,
                    Err(_) => {
                        std::panic::set_hook(hook);
                        panic!("{model}: {path:?} = {value}: a panic got out");
                    }
                };
                read += usize::from(errors.is_empty());
                panicked += usize::from(
                    errors
                        .iter()
                        .any(|e| e.contains("the tokenizers library failed")),
                );
            }
        }
    }
    std::panic::set_hook(hook);
    eprintln!("{variants} variants: {read} read and encoded, {panicked} caught panicking");
    assert!(read > 0 && panicked > 0, "the sweep reaches both outcomes");
}

/// A pre-tokenizer whose regex backtracks exponentially on a long word (`(\w|\w)*=`: 2^n ways
/// to fail on n word characters): Oniguruma stops a match after ten million steps, the crate
/// panics on that error, and scoring is an error naming the file — not a search for ever.
#[test]
fn a_regex_that_backtracks_for_ever_is_an_error() {
    let tmp = tempfile::tempdir().expect("dir");
    let folder = tmp.path().join("regex");
    folder_with("gptneo", &folder, |t| {
        t["pre_tokenizer"] = json!({"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "(\\w|\\w)*="}, "behavior": "Isolated",
             "invert": false},
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true,
             "use_regex": true}
        ]})
    });
    let lm = CausalLm::load(&folder).expect("reads");
    // short words end their match in a few steps
    assert!(lm.cross_entropy(METHOD, None).expect("scores").is_some());
    let long = "int aVariableNamedAtLengthAsSomeJavaCodeDoesItsLetters = 0;";
    let e = lm
        .cross_entropy(long, None)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.contains("regex/tokenizer.json: the tokenizers library failed encoding a text")
            && e.contains("retry-limit-in-match over"),
        "{e}"
    );
}
