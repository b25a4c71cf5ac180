//! A study scored by a neural causal model (#41), on SQLite and PostgreSQL: `natstudy lm score
//! --model <Hugging Face folder>` scores every bug's method and every transformation as the
//! published tool does (transformers' loss with `--nats`, bits per token by default), stores
//! them under the model's name for the RNC analysis, and writes `ce_scores.csv` with `--out`.

use natstudy_nlm::CausalLm;
use natstudy_tests::{cli, fresh_db, on_both_stores, reference_dir, Store};

async fn scored(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = natstudy_tests::reference_study(&db, "S", true)
        .await
        .expect("study");
    let model = reference_dir().join("nlm/models/llama");
    let dir = tempfile::tempdir().expect("dir");
    let out = dir.path().join("ce_scores.csv");
    let m = model.display().to_string();
    let o = out.display().to_string();
    cli(
        &db.url,
        &[
            "lm", "score", "--model", &m, "--study", "S", "--nats", "--out", &o,
        ],
    )
    .await
    .expect("score");
    cli(
        &db.url,
        &[
            "lm",
            "score",
            "--model",
            &m,
            "--study",
            "S",
            "--name",
            "llama-bits",
        ],
    )
    .await
    .expect("bits");
    let sources = natstudy::store::analysis::sources(&db, study)
        .await
        .expect("sources");
    let rows = natstudy::service::scoring::ce_of_model(&db, study, "llama")
        .await
        .expect("rows");
    let bits = natstudy::service::scoring::ce_of_model(&db, study, "llama-bits")
        .await
        .expect("rows");
    assert_eq!(
        rows.len(),
        sources.len(),
        "every method has two tokens or more"
    );
    assert_eq!(bits.len(), rows.len());
    // the stored loss is the model's own, and bits are nats over ln 2
    let lm = CausalLm::load(&model).expect("model");
    for (target, text) in sources.iter().step_by(37) {
        let want = lm
            .cross_entropy(text, None)
            .expect("ce")
            .expect("scored")
            .ce_nats;
        let got = rows
            .iter()
            .find(|r| &r.target == target)
            .expect("row")
            .cross_entropy;
        assert!(
            (got - want).abs() <= 1e-12 * want.abs(),
            "{target}: {got} vs {want}"
        );
        let b = bits
            .iter()
            .find(|r| &r.target == target)
            .expect("row")
            .cross_entropy;
        assert!(
            (b - want / std::f64::consts::LN_2).abs() < 1e-12 * b.abs(),
            "{target}"
        );
    }
    let csv = std::fs::read_to_string(&out).expect("csv");
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("model,target,cross_entropy"));
    assert_eq!(lines.count(), rows.len());
    // the RNC analysis reads the model like any other
    let rep = dir.path().join("report");
    let r = rep.display().to_string();
    cli(
        &db.url,
        &["report", "--study", "S", "--bootstrap", "0", "--out", &r],
    )
    .await
    .expect("report");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(rep.join("report.json")).expect("report"))
            .expect("json");
    assert!(
        report["rnc"]["llama"]["items"]
            .as_u64()
            .is_some_and(|n| n > 0),
        "{}",
        report["rnc"]
    );
    guard.drop_now(db).await;
}

on_both_stores!(scored => a_study_is_scored_by_a_neural_model_sqlite, a_study_is_scored_by_a_neural_model_postgres);
