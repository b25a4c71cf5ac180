//! The reference study through the command line, on SQLite and PostgreSQL: import every file,
//! write report.json, and compare every figure of expected.json and expected-robustness.json
//! (counts exactly, the rest to 1e-9 relative). Also: every import error class, all-or-nothing, re-import idempotence.

use std::path::PathBuf;

use natstudy_tests::cli;

use natstudy_tests::{fresh_db, Store};
use serde_json::Value;

fn reference() -> PathBuf {
    natstudy_tests::reference_dir().join("study-small")
}

use natstudy_tests::compare_json as compare;

async fn reference_study(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let url = db.url.clone();
    let r = reference();
    let p = |f: &str| r.join(f).display().to_string();
    cli(&url, &["study", "create", "ref"])
        .await
        .expect("create");
    cli(
        &url,
        &[
            "import",
            "items",
            "--study",
            "ref",
            &p("bugs.jsonl"),
            &p("transformations.jsonl"),
        ],
    )
    .await
    .expect("items");
    cli(
        &url,
        &["import", "votes", "--study", "ref", &p("survey.json")],
    )
    .await
    .expect("votes");
    cli(
        &url,
        &["import", "npr", "--study", "ref", &p("npr_results.csv")],
    )
    .await
    .expect("npr");
    cli(
        &url,
        &["import", "ce", "--study", "ref", &p("ce_scores.csv")],
    )
    .await
    .expect("ce");
    // importing the same files again changes nothing
    cli(
        &url,
        &[
            "import",
            "items",
            "--study",
            "ref",
            &p("bugs.jsonl"),
            &p("transformations.jsonl"),
        ],
    )
    .await
    .expect("items again");
    cli(
        &url,
        &["import", "votes", "--study", "ref", &p("survey.json")],
    )
    .await
    .expect("votes again");
    let out = tempfile::tempdir().expect("dir");
    cli(
        &url,
        &[
            "report",
            "--study",
            "ref",
            "--out",
            &out.path().display().to_string(),
        ],
    )
    .await
    .expect("report");
    let report: Value = serde_json::from_slice(
        &std::fs::read(out.path().join("report.json")).expect("report.json"),
    )
    .expect("json");
    let expected: Value =
        serde_json::from_slice(&std::fs::read(r.join("expected.json")).expect("expected"))
            .expect("json");
    let mut failures = Vec::new();
    compare(&expected, &report, "", &mut failures);
    // Table 17 (natural changes per level) and PDM/PDA, from the same generator and seed
    let expected_robustness: Value = serde_json::from_slice(
        &std::fs::read(r.join("expected-robustness.json")).expect("expected-robustness"),
    )
    .expect("json");
    compare(&expected_robustness, &report, "", &mut failures);
    // the time's Mann-Whitney p-values agree with scipy's to 1e-12 relative (libm's erfc;
    // statrs's agreed to 8.1e-11, its interval constants cut to 32-bit floats)
    let tests = expected["time"].as_object().expect("time");
    let mut p_values = 0;
    for (name, test) in tests.iter().filter(|(n, _)| n.starts_with("mww_")) {
        let want = test["p_value"].as_f64().expect("scipy's p");
        let got = report["time"][name]["p_value"].as_f64().unwrap_or(f64::NAN);
        let rel = (got - want).abs() / want.abs();
        if rel.is_nan() || rel > 1e-12 {
            failures.push(format!(
                "time.{name}.p_value: {got} vs scipy's {want} ({rel:e} relative)"
            ));
        }
        p_values += 1;
    }
    assert_eq!(p_values, 4, "the four Mann-Whitney tests");
    assert!(
        failures.is_empty(),
        "{} figures differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let studies = natstudy_core::store::studies::list(&db)
        .await
        .expect("list");
    assert_eq!(studies[0].votes, 297 * 5, "votes imported once");
    // figures with the expected series
    let chart = |name: &str| {
        std::fs::read_to_string(out.path().join("figures").join(name))
            .unwrap_or_else(|_| panic!("{name} written"))
    };
    for (name, labels) in [
        (
            "naturalness_by_level.svg",
            vec!["naming", "expression", "statement", "unnatural"],
        ),
        ("robustness.svg", vec!["alpharepair", "recoder", "selfapr"]),
        (
            "roc_rnc.svg",
            vec!["ngram (AUC 0.731)", "codellama (AUC 0.715)"],
        ),
        ("time_by_level.svg", vec!["time on item (s)"]),
        (
            "rnc_by_category_ngram.svg",
            vec!["natural", "likely natural", "unnatural", "RNC (%)"],
        ),
        (
            "naturalness_by_operator.svg",
            vec!["RenameVariable-1", "SwitchRelation", "DividingComposedIf"],
        ),
        ("rate_drop.svg", vec!["recoder, natural", "correct rate"]),
    ] {
        let svg = chart(name);
        assert!(svg.starts_with("<svg"), "{name}");
        for l in labels {
            assert!(
                svg.contains(&format!(">{l}<")) || svg.contains(&format!(">\n{l}\n<")),
                "{name} lacks {l}"
            );
        }
    }
    // the agreement section's binary kappa is the headline figure, computed another way
    let k = report["agreement"]["binary_fleiss_kappa"]["value"]
        .as_f64()
        .expect("kappa");
    assert!((k - expected["fleiss_kappa"].as_f64().expect("expected")).abs() < 1e-12);

    // exports round-trip: items + survey.json out, into a new study, the same figures
    let dir = tempfile::tempdir().expect("dir");
    let d = |f: &str| dir.path().join(f).display().to_string();
    cli(
        &url,
        &[
            "export",
            "--study",
            "ref",
            "--what",
            "items",
            "--out",
            &dir.path().display().to_string(),
        ],
    )
    .await
    .expect("items out");
    cli(
        &url,
        &[
            "export",
            "--study",
            "ref",
            "--what",
            "survey",
            "--out",
            &d("survey.json"),
        ],
    )
    .await
    .expect("survey out");
    cli(
        &url,
        &[
            "export",
            "--study",
            "ref",
            "--what",
            "top-natural",
            "--model",
            "ngram",
            "--percent",
            "10",
            "--out",
            &d("top.jsonl"),
        ],
    )
    .await
    .expect("top");
    let top = std::fs::read_to_string(dir.path().join("top.jsonl")).expect("top");
    assert_eq!(top.lines().count(), 30, "10% of 297, rounded up");
    let rncs: Vec<f64> = top
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).expect("json")["rnc"]
                .as_f64()
                .expect("rnc")
        })
        .collect();
    assert!(rncs.windows(2).all(|w| w[0] <= w[1]), "most natural first");
    for what in ["dataset", "votes", "matrix"] {
        cli(
            &url,
            &[
                "export",
                "--study",
                "ref",
                "--what",
                what,
                "--out",
                &d(&format!("{what}.out")),
            ],
        )
        .await
        .expect("export");
    }
    cli(&url, &["study", "create", "copy"])
        .await
        .expect("create copy");
    cli(
        &url,
        &[
            "import",
            "items",
            "--study",
            "copy",
            &d("bugs.jsonl"),
            &d("transformations.jsonl"),
        ],
    )
    .await
    .expect("items in");
    cli(
        &url,
        &["import", "votes", "--study", "copy", &d("survey.json")],
    )
    .await
    .expect("votes in");
    cli(
        &url,
        &["import", "npr", "--study", "copy", &p("npr_results.csv")],
    )
    .await
    .expect("npr in");
    cli(
        &url,
        &["import", "ce", "--study", "copy", &p("ce_scores.csv")],
    )
    .await
    .expect("ce in");
    let out2 = tempfile::tempdir().expect("dir");
    cli(
        &url,
        &[
            "report",
            "--study",
            "copy",
            "--bootstrap",
            "0",
            "--out",
            &out2.path().display().to_string(),
        ],
    )
    .await
    .expect("report");
    let copy: Value = serde_json::from_slice(
        &std::fs::read(out2.path().join("report.json")).expect("report.json"),
    )
    .expect("json");
    let mut failures = Vec::new();
    compare(&expected, &copy, "", &mut failures);
    compare(&expected_robustness, &copy, "", &mut failures);
    assert!(
        failures.is_empty(),
        "round trip differs:\n{}",
        failures.join("\n")
    );
    assert_eq!(copy["item_results"], report["item_results"]);
    // the dataset has one row per transformation, labelled
    let dataset = std::fs::read_to_string(dir.path().join("dataset.out")).expect("dataset");
    assert_eq!(dataset.lines().count(), 297);
    let first: Value = serde_json::from_str(dataset.lines().next().expect("row")).expect("json");
    assert!(
        first["category"].is_string() && first["rnc"]["ngram"].is_number(),
        "{first}"
    );
    let matrix = std::fs::read_to_string(dir.path().join("matrix.out")).expect("matrix");
    assert_eq!(matrix.lines().count(), 298);
    let votes = std::fs::read_to_string(dir.path().join("votes.out")).expect("votes");
    assert_eq!(votes.lines().count(), 297 * 5 + 1);
    guard.drop_now(db).await;
}

#[tokio::test]
async fn reference_study_sqlite() {
    reference_study(Store::Sqlite).await;
}

#[tokio::test]
async fn reference_study_postgres() {
    reference_study(Store::Postgres).await;
}

/// Each error class names file, line, field and reason, and nothing is written.
#[tokio::test]
async fn bad_imports_name_the_problem_and_write_nothing() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let url = db.url.clone();
    cli(&url, &["study", "create", "s"]).await.expect("create");
    let dir = tempfile::tempdir().expect("dir");
    let bug = r#"{"bug_id": "B-1", "project": "P", "file": "A.java", "method": "m", "source": "void m() {\n  int a = 1;\n}\n", "buggy_lines": [2]}"#;
    let tr = |id: &str, bug: &str, level: &str, src: &str| {
        format!(
            r#"{{"id": "{id}", "bug_id": "{bug}", "operator": "RenameVariable-1", "level": "{level}", "source": "{src}", "summary": "s"}}"#
        )
    };
    let good = tr(
        "naming_1",
        "B-1",
        "naming",
        "void m() {\\n  int b = 1;\\n}\\n",
    );
    let cases: Vec<(String, String, &str, &str)> = vec![
        (
            bug.into(),
            format!("{good}\n{}", tr("naming_2", "B-9", "naming", "x")),
            "2",
            "unknown bug id B-9",
        ),
        (
            bug.into(),
            format!("{good}\n{good}"),
            "2",
            "duplicate id naming_1",
        ),
        (
            bug.into(),
            tr(
                "naming_1",
                "B-1",
                "naming",
                "void m() {\\n  int a = 1;\\n}\\n",
            ),
            "1",
            "identical to the original",
        ),
        (
            bug.into(),
            format!("{good}\n{{not json"),
            "2",
            "unparsable JSON",
        ),
        (
            bug.into(),
            tr("naming_1", "B-1", "nomenclature", "x"),
            "1",
            "unknown level",
        ),
        (
            bug.replace("[2]", "[7]"),
            good.clone(),
            "1",
            "outside the method",
        ),
    ];
    for (i, (bugs, trs, line, reason)) in cases.iter().enumerate() {
        let b = dir.path().join(format!("bugs{i}.jsonl"));
        let t = dir.path().join(format!("t{i}.jsonl"));
        std::fs::write(&b, bugs).expect("write");
        std::fs::write(&t, trs).expect("write");
        let err = cli(
            &url,
            &[
                "import",
                "items",
                "--study",
                "s",
                &b.display().to_string(),
                &t.display().to_string(),
            ],
        )
        .await
        .expect_err("must fail");
        let msg = format!("{err:#}");
        assert!(msg.contains(&format!(":{line}: field")), "case {i}: {msg}");
        assert!(msg.contains(reason), "case {i}: {msg}");
    }
    let s = &natstudy_core::store::studies::list(&db)
        .await
        .expect("list")[0];
    assert_eq!((s.bugs, s.items), (0, 0), "nothing half-imported");

    // votes: a Likert value out of range
    let b = dir.path().join("bugs.jsonl");
    let t = dir.path().join("t.jsonl");
    std::fs::write(&b, bug).expect("write");
    std::fs::write(&t, &good).expect("write");
    cli(
        &url,
        &[
            "import",
            "items",
            "--study",
            "s",
            &b.display().to_string(),
            &t.display().to_string(),
        ],
    )
    .await
    .expect("good items");
    let survey = dir.path().join("survey.json");
    std::fs::write(&survey, "{\"naming\": {\"1\": {\"S1\": {\"CR\": 2, \"CC\": 1, \"Time\": 3},\n \"S2\": {\"CR\": 0, \"CC\": 1, \"Time\": 3}}}}").expect("write");
    let err = cli(
        &url,
        &[
            "import",
            "votes",
            "--study",
            "s",
            &survey.display().to_string(),
        ],
    )
    .await
    .expect_err("Likert 0");
    let msg = format!("{err:#}");
    assert!(
        msg.contains(":2: field `naming.1.S2.CR`: Likert value 0 out of 1–4"),
        "{msg}"
    );
    let s = &natstudy_core::store::studies::list(&db)
        .await
        .expect("list")[0];
    assert_eq!(s.votes, 0, "no vote of the bad file was written");

    // npr: unknown target and bad status
    let npr = dir.path().join("npr.csv");
    std::fs::write(
        &npr,
        "tool,target,status\nt,B-1,correct\nt,naming_9,wrong\nt,naming_1,fixed\n",
    )
    .expect("write");
    let err = cli(
        &url,
        &["import", "npr", "--study", "s", &npr.display().to_string()],
    )
    .await
    .expect_err("bad npr");
    let msg = format!("{err:#}");
    assert!(
        msg.contains(":3: field `target`: unknown target \"naming_9\""),
        "{msg}"
    );
    assert!(msg.contains(":4: field `status`"), "{msg}");
    guard.drop_now(db).await;
}

/// A target without a tool's repair status is never dropped silently: the report lists it per
/// tool, and `--missing-npr wrong` reads it as wrong, as the published package's scripts do —
/// the same figures as a file that says `wrong` there; the default leaves it out (a bug
/// without a status takes its transformations with it).
#[tokio::test]
async fn a_missing_repair_status_is_listed_and_read_as_asked() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let r = natstudy_tests::reference_dir().join("study-small");
    let full = std::fs::read_to_string(r.join("npr_results.csv")).expect("npr");
    let rows: Vec<&str> = full.lines().collect();
    // one tool's first bug row and first transformation row go missing
    let tool = rows[1].split(',').next().expect("tool").to_owned();
    let bug_row = rows
        .iter()
        .position(|l| l.starts_with(&format!("{tool},")) && l.contains('-'))
        .expect("a bug row");
    let item_row = rows
        .iter()
        .position(|l| l.starts_with(&format!("{tool},")) && l.contains('_'))
        .expect("an item row");
    let target = |i: usize| rows[i].split(',').nth(1).expect("target").to_owned();
    let gone = [target(bug_row), target(item_row)];
    let dir = tempfile::tempdir().expect("dir");
    let with_gaps: String = rows
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != bug_row && *i != item_row)
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    let as_wrong: String = rows
        .iter()
        .enumerate()
        .map(|(i, l)| match i == bug_row || i == item_row {
            true => format!("{tool},{},wrong\n", target(i)),
            false => format!("{l}\n"),
        })
        .collect();
    std::fs::write(dir.path().join("gaps.csv"), with_gaps).expect("gaps");
    std::fs::write(dir.path().join("wrong.csv"), as_wrong).expect("wrong");
    let report = |study: &'static str, extra: &'static [&'static str]| {
        let (url, out) = (
            db.url.clone(),
            dir.path().join(format!("{study}{}", extra.len())),
        );
        async move {
            let out_s = out.display().to_string();
            let mut args = vec![
                "report",
                "--study",
                study,
                "--bootstrap",
                "0",
                "--out",
                &out_s,
            ];
            args.extend_from_slice(extra);
            cli(&url, &args).await.expect("report");
            let text = std::fs::read_to_string(out.join("report.json")).expect("report.json");
            serde_json::from_str::<Value>(&text).expect("json")
        }
    };
    for (study, file) in [("Gaps", "gaps.csv"), ("Wrong", "wrong.csv")] {
        natstudy_tests::reference_study(&db, study, true)
            .await
            .expect("study");
        let f = dir.path().join(file).display().to_string();
        cli(&db.url, &["import", "npr", "--study", study, &f])
            .await
            .expect("npr");
    }
    let skipped = report("Gaps", &[]).await;
    let read_wrong = report("Gaps", &["--missing-npr", "wrong"]).await;
    let stated = report("Wrong", &[]).await;
    let missing: Vec<String> =
        serde_json::from_value(skipped["robustness"][&tool]["missing"].clone())
            .expect("the tool's missing targets");
    let mut want = gone.to_vec();
    want.sort();
    assert_eq!(missing, want);
    assert_eq!(
        read_wrong["robustness"][&tool]["missing"],
        skipped["robustness"][&tool]["missing"]
    );
    assert_eq!(
        stated["robustness"][&tool]["missing"],
        serde_json::json!([])
    );
    for part in ["all", "natural", "changes_all", "by_level"] {
        assert_eq!(
            read_wrong["robustness"][&tool][part], stated["robustness"][&tool][part],
            "{part}: read as wrong = stated wrong"
        );
    }
    let bugs = |r: &Value| {
        r["robustness"][&tool]["all"]["bugs"]
            .as_u64()
            .expect("bugs")
    };
    assert_eq!(
        bugs(&skipped) + 1,
        bugs(&stated),
        "the bug without a status is left out"
    );
    // the report says how it read them, and lists them in a table (the results page's too)
    assert_eq!(skipped["missing_npr"], "skip");
    assert_eq!(read_wrong["missing_npr"], "wrong");
    for (out, read) in [("Gaps0", "left out"), ("Gaps2", "wrong")] {
        let table = std::fs::read_to_string(dir.path().join(out).join("tables/npr-missing.csv"))
            .expect("the table of targets without a status");
        let mut rows: Vec<String> = table.lines().skip(1).map(str::to_owned).collect();
        rows.sort();
        let mut want: Vec<String> = gone.iter().map(|t| format!("{tool},{t},{read}")).collect();
        want.sort();
        assert_eq!(rows, want, "{out}");
    }
    assert!(
        !dir.path().join("Wrong0/tables/npr-missing.csv").exists(),
        "no table when every target has a status"
    );
    let app = natstudy_tests::TestApp::start(db.clone())
        .await
        .expect("server");
    app.add_user("ada", "a-long-password", natstudy_tests::Role::Admin)
        .await
        .expect("admin");
    let c = app
        .signed_in("ada", "a-long-password")
        .await
        .expect("sign in");
    let gaps = natstudy_core::store::studies::id_by_name(&db, "Gaps")
        .await
        .expect("id");
    let page = c
        .post(app.url("/api/studies/results"))
        .form(&[("study", gaps.to_string())])
        .send()
        .await
        .expect("results")
        .text()
        .await
        .expect("text");
    assert!(
        page.contains("Targets without a repair status")
            && page.contains("2 repair targets without a repair status left out")
            && gone.iter().all(|t| page.contains(&format!("\"{t}\""))),
        "{page:.2000}"
    );
    drop(app);
    guard.drop_now(db).await;
}
