//! Tables and figures a paper can use (#42): `natstudy report --out DIR` writes every table of
//! the results page as `tables/ID.csv` (the cells) and `tables/ID.tex` (booktabs, caption and
//! label, escaped, p-values as papers print them), every figure as `figures/ID.svg`, `.pdf`
//! and `.png`, and a `report.tex` that inputs and includes them all — and that compiles with
//! pdflatex (where it is on PATH; CI installs it), its tables holding report.json's numbers.

use natstudy_tests::{cli, fresh_db, Store};

#[tokio::test]
async fn the_report_writes_its_tables_as_csv_and_latex() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    natstudy_tests::reference_study_with_results(&db, "S")
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
    // every figure included, in its three forms
    let figures: Vec<&str> = doc
        .lines()
        .filter_map(|l| l.split("{figures/").nth(1))
        .filter_map(|l| l.split_once(".pdf}").map(|(id, _)| id))
        .collect();
    // at the size each was drawn (never stretched to the text's width), in a text as wide as
    // the widest
    assert!(!doc.contains("width=\\linewidth"), "{doc}");
    assert!(doc.contains("{geometry}"), "{doc}");
    assert!(figures.len() >= 7, "{figures:?}");
    for id in &figures {
        assert!(doc.contains(&format!("\\label{{fig:{id}}}")), "{id}");
        print_ready(dir.path(), id);
    }
    numbers_are_the_reports(dir.path(), &report);
    // a caption says what the table stands on
    let n = report["complete_items"].as_u64().expect("complete items");
    let naturalness =
        std::fs::read_to_string(dir.path().join("tables/naturalness.tex")).expect("tex");
    assert!(
        naturalness.contains(&format!("n = {n} items with exactly 5 ratings")),
        "{naturalness}"
    );
    compiles(dir.path());
    guard.drop_now(db).await;
}

/// One figure of the reference study in its three forms: the SVG declares its print size and
/// has no text under 8 pt at it; the PDF parses, has one page of that size and embeds its font;
/// the PNG has 300 dots per inch of it and stays under 200 KB.
fn print_ready(dir: &std::path::Path, id: &str) {
    let svg = std::fs::read_to_string(dir.join(format!("figures/{id}.svg"))).expect("svg");
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    let root = doc.root_element();
    let inches = |a: &str| -> f64 {
        root.attribute(a)
            .and_then(|v| v.strip_suffix("in"))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{id}: {a} in inches"))
    };
    let (w_in, h_in) = (inches("width"), inches("height"));
    let units: f64 = root
        .attribute("viewBox")
        .and_then(|v| v.split_whitespace().nth(2))
        .and_then(|v| v.parse().ok())
        .expect("viewBox");
    let smallest = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.attribute("font-size").and_then(|s| s.parse::<f64>().ok()))
        .fold(f64::INFINITY, f64::min)
        * w_in
        * 72.0
        / units;
    assert!(smallest >= 8.0, "{id}: text of {smallest:.2} pt");
    let pdf = lopdf::Document::load(dir.join(format!("figures/{id}.pdf"))).expect("the PDF parses");
    assert_eq!(pdf.get_pages().len(), 1, "{id}: one page");
    let font = pdf.objects.values().any(|o| {
        o.as_dict()
            .is_ok_and(|d| d.has(b"FontFile2") || d.has(b"FontFile3") || d.has(b"FontFile"))
    });
    assert!(font, "{id}: its font embedded");
    let page_id = *pdf.get_pages().values().next().expect("page");
    let media = pdf
        .get_object(page_id)
        .and_then(|p| p.as_dict())
        .and_then(|p| p.get(b"MediaBox"))
        .and_then(|m| m.as_array())
        .expect("MediaBox")
        .iter()
        .map(|v| {
            v.as_float()
                .map(f64::from)
                .or_else(|_| v.as_i64().map(|i| i as f64))
        })
        .collect::<Result<Vec<f64>, _>>()
        .expect("numbers");
    assert!(
        (media[2] - w_in * 72.0).abs() < 0.5 && (media[3] - h_in * 72.0).abs() < 0.5,
        "{id}: {media:?}"
    );
    let png = std::fs::read(dir.join(format!("figures/{id}.png"))).expect("png");
    let width = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
    assert_eq!(f64::from(width), (w_in * 300.0).round(), "{id}: 300 dpi");
    assert!(png.len() < 200_000, "{id}: {} bytes", png.len());
}

/// A table's body rows, cells split, from its LaTeX (math and escapes undone) and from its CSV.
fn rows_of(dir: &std::path::Path, id: &str) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let tex = std::fs::read_to_string(dir.join(format!("tables/{id}.tex"))).expect("tex");
    let unescape = |c: &str| {
        c.trim()
            .replace("$<$", "<")
            .replace("$-$", "-")
            .replace("\\_", "_")
            .replace("$\\rightarrow$", "→")
    };
    let from_tex: Vec<Vec<String>> = tex
        .lines()
        .filter(|l| l.ends_with(" \\\\"))
        .skip(1)
        .map(|l| {
            l.trim_end_matches(" \\\\")
                .split(" & ")
                .map(unescape)
                .collect()
        })
        .collect();
    let mut csv = csv::Reader::from_path(dir.join(format!("tables/{id}.csv"))).expect("csv");
    let from_csv: Vec<Vec<String>> = csv
        .records()
        .map(|r| r.expect("row").iter().map(str::to_owned).collect())
        .collect();
    (from_tex, from_csv)
}

/// The numbers of the tables, read back from their LaTeX and their CSV, are report.json's
/// (to the digits printed).
fn numbers_are_the_reports(dir: &std::path::Path, report: &serde_json::Value) {
    let close = |cell: &str, want: f64, what: &str| {
        let got: f64 = cell.parse().unwrap_or_else(|_| panic!("{what}: {cell:?}"));
        let digits = cell.split('.').nth(1).map_or(0, str::len) as i32;
        assert!(
            (got - want).abs() <= 0.5 * 10f64.powi(-digits) + 1e-12,
            "{what}: {cell} against report.json's {want}"
        );
    };
    for (rows, form) in [rows_of(dir, "naturalness").0, rows_of(dir, "naturalness").1]
        .into_iter()
        .zip(["tex", "csv"])
    {
        assert_eq!(rows[0][0], "all", "{form}");
        for (r, level) in rows
            .iter()
            .skip(1)
            .zip(["naming", "expression", "statement"])
        {
            assert_eq!(r[0], level, "{form}: levels in the paper's order");
            for (cell, key) in
                r[1..]
                    .iter()
                    .zip(["natural", "likely_natural", "likely_unnatural", "unnatural"])
            {
                let want = report["counts_by_level"][level][key]
                    .as_f64()
                    .expect("count");
                close(cell, want, &format!("{form} naturalness {level} {key}"));
            }
        }
    }
    for (rows, form) in [rows_of(dir, "rnc").0, rows_of(dir, "rnc").1]
        .into_iter()
        .zip(["tex", "csv"])
    {
        assert!(rows.len() >= 2, "{form}");
        for r in &rows {
            let m = &report["rnc"][&r[0]];
            close(
                &r[1],
                m["items"].as_f64().expect("items"),
                &format!("{form} rnc items"),
            );
            for (cell, key) in r[2..5].iter().zip(["auc_rnc", "auc_nc", "auc_ce"]) {
                let want = m[key].as_f64().expect("auc");
                close(cell, want, &format!("{form} rnc {} {key}", r[0]));
            }
        }
    }
    for (rows, form) in [rows_of(dir, "robustness").0, rows_of(dir, "robustness").1]
        .into_iter()
        .zip(["tex", "csv"])
    {
        for r in &rows {
            let t = &report["robustness"][&r[0]];
            close(
                &r[1],
                t["changes_all"].as_f64().expect("changes"),
                &format!("{form} changes"),
            );
            close(
                &r[2],
                t["false_alarm_rate"].as_f64().expect("rate"),
                &format!("{form} false alarms {}", r[0]),
            );
        }
    }
}

/// report.tex compiles with pdflatex, every table and figure in it — where pdflatex is on PATH.
fn compiles(dir: &std::path::Path) {
    let Ok(out) = std::process::Command::new("pdflatex")
        .args(["-interaction=nonstopmode", "-halt-on-error", "report.tex"])
        .current_dir(dir)
        .output()
    else {
        eprintln!("SKIPPED: no pdflatex on PATH (scripts/setup --browser installs it)");
        return;
    };
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "pdflatex failed:\n{log}");
    assert!(!log.contains("pdfTeX warning"), "{log}");
    let pdf = std::fs::read(dir.join("report.pdf")).expect("report.pdf");
    assert!(pdf.starts_with(b"%PDF"));
}
