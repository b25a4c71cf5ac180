//! The language model against KenLM: `lmplz -o 4` on the reference corpus must be reproduced
//! n-gram by n-gram (probability and backoff within 1e-4 in log10), and held-out totals as
//! KenLM's `query` computes them (within 1e-3); probabilities of a context sum to 1; an ARPA
//! round trip scores the same.

use std::io::BufReader;
use std::path::PathBuf;

use natstudy_tests::cli;

use natstudy_engine::lm::{arpa, estimate::estimate, Model};

fn reference() -> PathBuf {
    natstudy_tests::reference_dir().join("lm")
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
    // what `lm score` and the scoring job use: the probing layout, built from the model
    let scorer = natstudy_engine::lm::Scorer::from_model(ours.clone()).expect("probing");
    assert!(matches!(scorer, natstudy_engine::lm::Scorer::Probing(_)));
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
        let p = scorer.score(&sentence);
        assert!(
            (p.total_log10 - total).abs() <= 1e-3,
            "line {line}: probing layout {} vs KenLM {total}",
            p.total_log10
        );
        assert_eq!(p.oov, oov, "line {line}: OOV count (probing layout)");
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

/// A corpus of Java files written for the test: methods assembled at random (seeded) from
/// statement templates, names, types and constants.
fn java_corpus(dir: &std::path::Path) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let names = [
        "count", "total", "index", "value", "size", "limit", "offset", "result", "item", "key",
        "sum", "max", "min", "start", "end", "next", "prev", "node", "list", "map", "name", "text",
        "buffer", "length", "width", "height", "depth", "flag",
    ];
    let types = [
        "int", "long", "double", "String", "boolean", "char", "float",
    ];
    let ops = ["+", "-", "*", "/", "%"];
    let cmps = ["<", ">", "<=", ">=", "==", "!="];
    for f in 0..60 {
        let mut src = format!("package p;\n\npublic class C{f} {{\n");
        for m in 0..10 {
            let pick = |rng: &mut rand_chacha::ChaCha8Rng, xs: &[&'static str]| -> String {
                let base = xs[rng.gen_range(0..xs.len())];
                // identifiers get Zipf-like suffixes, as real code has many rare names
                if xs.len() > 20 && rng.gen_bool(0.5) {
                    let r: f64 = rng.gen_range(0.0..1.0);
                    format!("{base}{}", (1.0 / (r + 0.02)) as u32)
                } else {
                    base.to_owned()
                }
            };
            let t = pick(&mut rng, &types);
            let (a, b) = (pick(&mut rng, &names), pick(&mut rng, &names));
            src.push_str(&format!("    public {t} m{m}(int {a}, int {b}) {{\n"));
            for _ in 0..rng.gen_range(1..6) {
                let (x, y, z) = (
                    pick(&mut rng, &names),
                    pick(&mut rng, &names),
                    pick(&mut rng, &names),
                );
                let (op, cmp, k) = (
                    pick(&mut rng, &ops),
                    pick(&mut rng, &cmps),
                    rng.gen_range(0..20),
                );
                let stmt = match rng.gen_range(0..6) {
                    0 => format!("        int {x} = {y} {op} {k};\n"),
                    1 => format!("        if ({x} {cmp} {y}) {{\n            {z} = {z} {op} {k};\n        }}\n"),
                    2 => format!("        for (int i = 0; i < {x}; i++) {{\n            {y} += i {op} {k};\n        }}\n"),
                    3 => format!("        while ({x} {cmp} {k}) {{\n            {x}--;\n        }}\n"),
                    4 => format!("        {x} = {y}.{z}({k});\n"),
                    _ => format!("        System.out.println({x} {op} {y});\n"),
                };
                src.push_str(&stmt);
            }
            src.push_str(&format!("        return {a};\n    }}\n\n"));
        }
        src.push_str("}\n");
        std::fs::write(dir.join(format!("C{f}.java")), src).expect("write java");
    }
}

#[tokio::test]
async fn a_study_gets_cross_entropies_from_natstudy_alone() {
    let (db, guard) = natstudy_tests::fresh_db(natstudy_tests::Store::Sqlite)
        .await
        .expect("db");
    let url = db.url.clone();
    natstudy_core::demo::ensure(&db).await.expect("demo study");
    let dir = tempfile::tempdir().expect("dir");
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).expect("mkdir");
    java_corpus(&corpus);
    let arpa_path = dir.path().join("java.arpa").display().to_string();
    let bin_path = dir.path().join("java.bin").display().to_string();
    let study = natstudy_core::demo::STUDY;
    let corpus_dir = corpus.display().to_string();
    for out in [&arpa_path, &bin_path] {
        let args = [
            "lm",
            "train",
            "--corpus",
            &corpus_dir,
            "--order",
            "4",
            "--out",
            out,
            "--exclude-study",
            study,
        ];
        cli(&url, &args).await.expect("train");
    }
    // ARPA and binary score the same
    let a = natstudy_engine::lm::binary::load(std::path::Path::new(&arpa_path)).expect("arpa");
    let b = natstudy_engine::lm::binary::load_scorer(std::path::Path::new(&bin_path)).expect("bin");
    assert!(
        matches!(b, natstudy_engine::lm::Scorer::Probing(_)),
        "a trained .bin is in the probing layout"
    );
    let toks = natstudy_engine::lm::tokenize::tokens(
        "int f(int count) { return count + 1; }",
        Default::default(),
    );
    let refs: Vec<&str> = toks.iter().map(String::as_str).collect();
    let (sa, sb) = (a.score(&refs), b.score(&refs));
    assert!(
        (sa.total_log10 - sb.total_log10).abs() < 1e-4,
        "{sa:?} vs {sb:?}"
    );

    cli(
        &url,
        &[
            "lm", "score", "--model", &arpa_path, "--study", study, "--name", "javalm",
        ],
    )
    .await
    .expect("score");
    let id = natstudy_core::store::studies::id_by_name(&db, study)
        .await
        .expect("study");
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM ce_scores WHERE study_id = $1 AND model = 'javalm'",
    )
    .bind(id)
    .fetch_one(&db.pool)
    .await
    .expect("count");
    assert_eq!(n, 4 + 15, "every bug and transformation scored");
    // scoring again replaces, not duplicates
    cli(
        &url,
        &[
            "lm", "score", "--model", &bin_path, "--study", study, "--name", "javalm",
        ],
    )
    .await
    .expect("score again");
    let n2: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM ce_scores WHERE study_id = $1")
        .bind(id)
        .fetch_one(&db.pool)
        .await
        .expect("count");
    assert_eq!(n2, 19);
    // the RNC analysis uses them like imported scores
    let out = tempfile::tempdir().expect("out");
    cli(
        &url,
        &[
            "report",
            "--study",
            study,
            "--bootstrap",
            "0",
            "--out",
            &out.path().display().to_string(),
        ],
    )
    .await
    .expect("report");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("report.json")).expect("report"))
            .expect("json");
    assert_eq!(report["rnc"]["javalm"]["items"], 15);
    assert_eq!(
        report["rnc"]["javalm"]["ranking"]
            .as_array()
            .map(|r| r.len()),
        Some(15)
    );
    guard.drop_now(db).await;
}
