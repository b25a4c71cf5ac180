//! Tables a paper can use (#42, first part): `natstudy report --out DIR` writes every table of
//! the results page as `tables/ID.csv` (the cells) and `tables/ID.tex` (booktabs, caption and
//! label, escaped, p-values as papers print them), and a `report.tex` that inputs them all.

use natstudy_tests::{cli, fresh_db, Store};

#[tokio::test]
async fn the_report_writes_its_tables_as_csv_and_latex() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    natstudy_tests::reference_study(&db, "S", true)
        .await
        .expect("study");
    let dir = tempfile::tempdir().expect("dir");
    let out = dir.path().display().to_string();
    cli(
        &db.url,
        &["report", "--study", "S", "--bootstrap", "0", "--out", &out],
    )
    .await
    .expect("report");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("report.json")).expect("json"))
            .expect("json");
    assert!(report["items"].as_u64().is_some_and(|n| n > 0));
    let doc = std::fs::read_to_string(dir.path().join("report.tex")).expect("report.tex");
    assert!(doc.contains("\\usepackage{booktabs}") && doc.ends_with("\\end{document}\n"));
    let mut seen = 0;
    for line in doc.lines().filter(|l| l.starts_with("\\input{tables/")) {
        let id = &line["\\input{tables/".len()..line.len() - 1];
        let tex =
            std::fs::read_to_string(dir.path().join(format!("tables/{id}.tex"))).expect("tex");
        assert!(tex.contains(&format!("\\label{{tab:{id}}}")), "{id}");
        assert!(
            tex.contains("\\toprule") && tex.contains("\\bottomrule"),
            "{id}"
        );
        assert_eq!(
            tex.matches("\\begin{").count(),
            tex.matches("\\end{").count(),
            "{id}: balanced"
        );
        let body_rows = tex.lines().filter(|l| l.ends_with(" \\\\")).count();
        let mut csv =
            csv::Reader::from_path(dir.path().join(format!("tables/{id}.csv"))).expect("csv");
        let header_cells = csv.headers().expect("header").len();
        let rows = csv.records().count();
        assert_eq!(body_rows, rows + 1, "{id}: the header and every row");
        let first = tex
            .lines()
            .find(|l| l.contains("\\begin{tabular}"))
            .expect("tabular");
        assert!(
            first.contains(&format!("{{l{}}}", "r".repeat(header_cells - 1))),
            "{id}: {first}"
        );
        // nothing LaTeX would read as markup is left unescaped in the cells
        for l in tex.lines().filter(|l| l.ends_with(" \\\\")) {
            assert!(!l.contains(" _") && !l.contains("% "), "{id}: {l}");
        }
        seen += 1;
    }
    assert!(seen >= 4, "{seen} tables");
    let tests = std::fs::read_to_string(dir.path().join("tables/time-tests.tex")).expect("tex");
    let rows: Vec<&str> = tests
        .lines()
        .filter(|l| l.ends_with(" \\\\"))
        .skip(1)
        .collect();
    assert!(!rows.is_empty());
    assert!(
        rows.iter().all(|l| !l.contains("e-")),
        "p-values as papers print them:\n{tests}"
    );
    guard.drop_now(db).await;
}
