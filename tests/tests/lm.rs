//! The language model against KenLM: `lmplz -o 4` on the reference corpus must be reproduced
//! n-gram by n-gram (probability and backoff within 1e-4 in log10), and held-out totals as
//! KenLM's `query` computes them (within 1e-3); probabilities of a context sum to 1; an ARPA
//! round trip scores the same.

use std::io::BufReader;
use std::path::PathBuf;

use natstudy::engine::lm::{arpa, estimate::estimate, Model};

fn reference() -> PathBuf {
    match std::env::var("NATSTUDY_SHARED") {
        Ok(dir) => PathBuf::from(dir).join("reference/lm"),
        Err(_) => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/reference/lm"
        )),
    }
}

fn trained() -> Model {
    let corpus = std::fs::read_to_string(reference().join("corpus.txt")).expect("corpus");
    let (model, _) = estimate(
        corpus
            .lines()
            .map(|l| l.split(' ').filter(|t| !t.is_empty()).collect()),
        4,
    )
    .expect("estimate");
    model
}

fn kenlm() -> Model {
    let f = std::fs::File::open(reference().join("model.arpa")).expect("model.arpa");
    arpa::read(BufReader::new(f)).expect("parse")
}

#[test]
fn estimates_match_lmplz_ngram_by_ngram() {
    let ours = trained();
    let theirs = kenlm();
    assert_eq!(ours.order(), theirs.order());
    let mut failures = Vec::new();
    for n in 0..theirs.order() {
        assert_eq!(
            ours.grams[n].len(),
            theirs.grams[n].len(),
            "number of {}-grams",
            n + 1
        );
        for (gram, e) in &theirs.grams[n] {
            let words: Vec<&str> = gram
                .iter()
                .map(|w| theirs.words[*w as usize].as_str())
                .collect();
            let ids: Option<Vec<u32>> = words.iter().map(|w| ours.id(w)).collect();
            let Some(mine) = ids.and_then(|ids| ours.grams[n].get(&ids).copied()) else {
                failures.push(format!("missing {words:?}"));
                continue;
            };
            if (mine.prob - e.prob).abs() > 1e-4 || (mine.backoff - e.backoff).abs() > 1e-4 {
                failures.push(format!("{words:?}: ours {:?}, lmplz {:?}", mine, e));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} n-grams differ, e.g.:\n{}",
        failures.len(),
        failures
            .iter()
            .take(15)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn heldout_totals_match_kenlm_query() {
    let ours = trained();
    let heldout = std::fs::read_to_string(reference().join("heldout.txt")).expect("heldout");
    let scores = std::fs::read_to_string(reference().join("heldout_scores.tsv")).expect("scores");
    let mut checked = 0;
    for row in scores.lines() {
        let cols: Vec<&str> = row.split('\t').collect();
        let (Ok(line), Ok(total), Ok(oov)) = (
            cols[0].parse::<usize>(),
            cols[1].parse::<f64>(),
            cols[2].parse::<usize>(),
        ) else {
            continue; // header
        };
        let sentence: Vec<&str> = heldout
            .lines()
            .nth(line - 1)
            .expect("line")
            .split(' ')
            .filter(|t| !t.is_empty())
            .collect();
        let s = ours.score(&sentence);
        assert!(
            (s.total_log10 - total).abs() <= 1e-3,
            "line {line}: ours {} vs KenLM {total}",
            s.total_log10
        );
        assert_eq!(s.oov, oov, "line {line}: OOV count");
        checked += 1;
    }
    assert_eq!(checked, 200);
}

#[test]
fn probabilities_of_a_context_sum_to_one_and_arpa_round_trips() {
    let ours = trained();
    let vocab: Vec<u32> = (0..ours.words.len() as u32)
        .filter(|w| ours.words[*w as usize] != "<s>")
        .collect();
    // a few contexts of every length, including ones never seen
    let id = |w: &str| ours.id(w).expect("word");
    let contexts: Vec<Vec<u32>> = vec![
        vec![],
        vec![id("<s>")],
        vec![id("<s>"), id("private")],
        vec![id("(")],
        vec![id("int"), id("i"), id("=")],
        vec![id("String"), id("String"), id("String")],
    ];
    for ctx in &contexts {
        let sum: f64 = vocab
            .iter()
            .map(|w| 10f64.powf(ours.log10_prob(ctx, *w)))
            .sum();
        assert!((sum - 1.0).abs() < 1e-6, "context {ctx:?}: Σ p = {sum}");
    }
    let mut buf = Vec::new();
    arpa::write(&ours, &mut buf).expect("write");
    let back = arpa::read(BufReader::new(buf.as_slice())).expect("read");
    let heldout = std::fs::read_to_string(reference().join("heldout.txt")).expect("heldout");
    for line in heldout.lines().take(50) {
        let toks: Vec<&str> = line.split(' ').filter(|t| !t.is_empty()).collect();
        assert!((ours.score(&toks).total_log10 - back.score(&toks).total_log10).abs() < 1e-5);
    }
}
