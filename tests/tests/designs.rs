//! Every design's analysis against the field's reference libraries, on the four studies of
//! `shared/reference/designs` (data nobody here wrote): krippendorff, statsmodels, pingouin,
//! R's ordinal, choix, FastChat's Elo — each figure to the tolerance the README of that folder
//! states.

use natstudy_engine::design::{self, report, responses, snippets};
use natstudy_tests::{fresh_db, natstudy_bin, on_both_stores, Store};
use serde_json::Value;

/// The tolerance of a figure, by the name of the entry it is under.
fn tolerance(path: &[String]) -> f64 {
    if path.iter().any(|p| p == "mixed_ordinal_model") {
        1e-3
    } else if path.iter().any(|p| p == "ordinal_model") {
        1e-4
    } else if path.iter().any(|p| p == "bradley_terry") {
        1e-6
    } else {
        1e-9
    }
}

/// Every number, null and string of `expected` at its place in `got`; the places that differ.
fn compare(expected: &Value, got: &Value, path: &mut Vec<String>, wrong: &mut Vec<String>) {
    match (expected, got) {
        (Value::Object(e), Value::Object(g)) => {
            for (k, v) in e {
                path.push(k.clone());
                compare(v, g.get(k).unwrap_or(&Value::Null), path, wrong);
                path.pop();
            }
        }
        (Value::Array(e), Value::Array(g)) if e.len() == g.len() => {
            for (i, (a, b)) in e.iter().zip(g).enumerate() {
                path.push(i.to_string());
                compare(a, b, path, wrong);
                path.pop();
            }
        }
        (Value::Number(e), Value::Number(g)) => {
            let (e, g) = (
                e.as_f64().unwrap_or(f64::NAN),
                g.as_f64().unwrap_or(f64::NAN),
            );
            let tol = tolerance(path);
            if (e - g).abs() > tol * e.abs().max(1.0) {
                wrong.push(format!(
                    "{}: expected {e}, got {g} (tolerance {tol})",
                    path.join(".")
                ));
            }
        }
        (e, g) if e == g => {}
        (e, g) => wrong.push(format!("{}: expected {e}, got {g}", path.join("."))),
    }
}

fn reference(name: &str) -> std::path::PathBuf {
    natstudy_tests::reference_dir().join("designs").join(name)
}

fn check_design(name: &str) {
    let dir = reference(name);
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect("reference file");
    let design = design::parse_design("design.toml", &read("design.toml")).expect("design");
    let snippets = snippets::parse_snippets("snippets.jsonl", &read("snippets.jsonl"), &design)
        .expect("snippets");
    let responses = responses::parse_responses(
        "responses.jsonl",
        &read("responses.jsonl"),
        &design,
        &snippets,
    )
    .expect("responses");
    let got = report::analyse(&design, &snippets, &responses);
    let expected: Value = serde_json::from_str(&read("expected.json")).expect("expected.json");
    let mut wrong = Vec::new();
    compare(&expected, &got, &mut Vec::new(), &mut wrong);
    assert!(
        wrong.is_empty(),
        "{name}: {} figures differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    // and none of them is NaN or infinite: JSON could not hold it
    assert!(!got.to_string().contains("NaN"));
}

#[test]
fn likert_figures_equal_krippendorff_statsmodels_pingouin_and_r_ordinal() {
    check_design("likert");
}

#[test]
fn pairwise_figures_equal_choix_and_fastchat() {
    check_design("pairwise");
}

#[test]
fn best_worst_scores_equal_the_reference() {
    check_design("best-worst");
}

#[test]
fn comprehension_figures_equal_statsmodels_wilson() {
    check_design("comprehension");
}

/// `natstudy` with these arguments on the database at `url`: (success, stdout, stderr).
fn natstudy(url: &str, args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(natstudy_bin().expect("binary"))
        .arg("--database-url")
        .arg(url)
        .args(args)
        .output()
        .expect("natstudy runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// A researcher's path with the command line alone, on each store: a study of each of the
/// four designs made from its design file, its snippets and responses imported, its report
/// equal to the reference libraries' figures, its responses exported as they were imported
/// (and as the long table with its codebook); a bad file refused by line with nothing
/// written; the design fixed once a response is recorded.
async fn a_study_of_each_design_from_the_command_line(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let url = guard.url().expect("url");
    let work = tempfile::tempdir().expect("dir");
    for name in ["likert", "pairwise", "best-worst", "comprehension"] {
        let dir = reference(name);
        let path = |f: &str| dir.join(f).display().to_string();
        let study = format!("Study of {name}");
        let ok = |args: &[&str]| {
            let (ok, out, err) = natstudy(&url, args);
            assert!(ok, "natstudy {args:?}: {err}");
            out
        };
        ok(&["study", "create", &study, "--design", &path("design.toml")]);
        let shown = ok(&["study", "design", "--study", &study]);
        let again = design::parse_design("shown", &shown).expect("the design as TOML");
        let read = std::fs::read_to_string(dir.join("design.toml")).expect("design");
        assert_eq!(
            again,
            design::parse_design("design.toml", &read).expect("design")
        );
        ok(&[
            "import",
            "snippets",
            "--study",
            &study,
            &path("snippets.jsonl"),
        ]);
        // a link into it (a designed study's needs no batch), and an attention unit made of
        // the first line of its responses, without its participant and time; the same line
        // with its participant is refused by line
        let link = ok(&["invite", "create", "--study", &study, "--cap", "3"]);
        assert!(link.trim().starts_with("/join/"), "{link}");
        let given_first = std::fs::read_to_string(dir.join("responses.jsonl"))
            .expect("responses")
            .lines()
            .next()
            .expect("a line")
            .to_owned();
        let mut check: Value = serde_json::from_str(&given_first).expect("json");
        let attention_bad = work.path().join(format!("{name}-attention-bad.jsonl"));
        std::fs::write(&attention_bad, format!("{check}\n")).expect("write");
        let (ok_bad, _, err) = natstudy(
            &url,
            &[
                "import",
                "attention",
                "--study",
                &study,
                &attention_bad.display().to_string(),
            ],
        );
        assert!(!ok_bad, "a participant in an attention line is refused");
        assert!(
            err.contains(&format!(
                "{name}-attention-bad.jsonl:1: field `participant`"
            )),
            "{err}"
        );
        if let Some(o) = check.as_object_mut() {
            o.remove("participant");
            o.remove("seconds");
        }
        let attention = work.path().join(format!("{name}-attention.jsonl"));
        std::fs::write(&attention, format!("{check}\n")).expect("write");
        ok(&[
            "import",
            "attention",
            "--study",
            &study,
            &attention.display().to_string(),
        ]);
        // a responses file with one bad line at its end: refused by line, nothing written
        let given = std::fs::read_to_string(dir.join("responses.jsonl")).expect("responses");
        let bad = work.path().join(format!("{name}-bad.jsonl"));
        let n = given.lines().count();
        std::fs::write(
            &bad,
            format!("{given}{{\"participant\": \"P1\", \"question\": \"nope\"}}\n"),
        )
        .expect("write");
        let (ok_bad, _, err) = natstudy(
            &url,
            &[
                "import",
                "responses",
                "--study",
                &study,
                &bad.display().to_string(),
            ],
        );
        assert!(!ok_bad, "a bad line is refused");
        assert!(
            err.contains(&format!("{name}-bad.jsonl:{}: field `question`", n + 1)),
            "{err}"
        );
        let out = work.path().join(format!("{name}.jsonl"));
        let out_s = out.display().to_string();
        ok(&[
            "export",
            "--study",
            &study,
            "--what",
            "responses",
            "--out",
            &out_s,
        ]);
        assert_eq!(
            std::fs::read_to_string(&out).expect("export"),
            "",
            "nothing was written"
        );
        ok(&[
            "import",
            "responses",
            "--study",
            &study,
            &path("responses.jsonl"),
        ]);
        let twice = ok(&[
            "import",
            "responses",
            "--study",
            &study,
            &path("responses.jsonl"),
        ]);
        assert!(twice.contains("already imported"), "{twice}");
        // the export gives back what was imported
        ok(&[
            "export",
            "--study",
            &study,
            "--what",
            "responses",
            "--out",
            &out_s,
        ]);
        let exported = std::fs::read_to_string(&out).expect("export");
        assert_eq!(
            lines(&exported),
            lines(&given),
            "{name}: export after import"
        );
        let csv_out = work.path().join(format!("{name}.csv"));
        ok(&[
            "export",
            "--study",
            &study,
            "--what",
            "responses",
            "--format",
            "csv",
            "--out",
            &csv_out.display().to_string(),
        ]);
        let table = std::fs::read_to_string(&csv_out).expect("csv");
        assert_eq!(
            table.lines().count(),
            n + 1,
            "a row a response and the header"
        );
        let book = std::fs::read_to_string(work.path().join(format!("{name}-codebook.csv")))
            .expect("codebook");
        assert!(
            book.starts_with("question,kind,prompt,scale,labels"),
            "{book}"
        );
        // the report's figures are the reference libraries'
        let report_dir = work.path().join(format!("{name}-report"));
        ok(&[
            "report",
            "--study",
            &study,
            "--out",
            &report_dir.display().to_string(),
        ]);
        let report: Value = serde_json::from_str(
            &std::fs::read_to_string(report_dir.join("report.json")).expect("report.json"),
        )
        .expect("JSON");
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("expected.json")).expect("expected"),
        )
        .expect("JSON");
        let mut wrong = Vec::new();
        compare(&expected, &report["questions"], &mut Vec::new(), &mut wrong);
        assert!(wrong.is_empty(), "{name}: {}", wrong.join("\n"));
        if name == "likert" {
            for q in ["readability", "convention"] {
                let svg = report_dir.join(format!("figures/{q}_by_condition.svg"));
                assert!(svg.is_file(), "{}", svg.display());
            }
        }
        // beside it, each question's tables and report.tex, which LaTeX compiles
        let tables = std::fs::read_dir(report_dir.join("tables"))
            .expect("tables")
            .count();
        assert!(tables >= 2, "{name}: {tables} table files");
        let latex = std::process::Command::new("pdflatex")
            .args(["-interaction=nonstopmode", "-halt-on-error", "report.tex"])
            .current_dir(&report_dir)
            .output()
            .expect("pdflatex (scripts/setup --browser installs it)");
        assert!(
            latex.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&latex.stdout)
        );
        if name == "likert" {
            // an excluded participant's responses count nowhere; --include-excluded puts them back
            let count = |extra: &[&str]| {
                let mut args = vec!["report", "--study", study.as_str(), "--json"];
                args.extend_from_slice(extra);
                let text = ok(&args);
                let v: Value = serde_json::from_str(&text).expect("JSON");
                v["responses"].as_u64().expect("responses")
            };
            let p1 = given.lines().filter(|l| l.contains("\"P1\"")).count() as u64;
            ok(&[
                "participant",
                "exclude",
                "--study",
                &study,
                "--reason",
                "failed attention",
                "P1@import",
            ]);
            assert_eq!(count(&[]), n as u64 - p1);
            assert_eq!(count(&["--include-excluded"]), n as u64);
            ok(&[
                "participant",
                "include",
                "--study",
                &study,
                "--reason",
                "a mistake",
                "P1@import",
            ]);
            assert_eq!(count(&[]), n as u64);
        }
        // the design is fixed now
        let id = natstudy_core::service::studies::id_by_name(&db, &study)
            .await
            .expect("id");
        let other = design::parse_design("naturalness", design::NATURALNESS).expect("design");
        let mut changed = natstudy_core::service::designs::of(&db, id)
            .await
            .expect("design");
        changed.title = other.title;
        let refused = natstudy_core::service::designs::set(&db, id, &changed)
            .await
            .expect_err("fixed");
        assert!(
            refused
                .to_string()
                .contains("fixed once a response is recorded"),
            "{refused}"
        );
    }
    // the results page's data: the questions' tables, to the study's staff
    let app = natstudy_tests::TestApp::start(db.clone())
        .await
        .expect("server");
    app.add_user("ada", "a-long-password", natstudy_tests::Role::Admin)
        .await
        .expect("admin");
    let ada = app
        .signed_in("ada", "a-long-password")
        .await
        .expect("sign in");
    let id = natstudy_core::service::studies::id_by_name(&db, "Study of pairwise")
        .await
        .expect("id");
    let page = ada
        .post(app.url("/api/studies/results"))
        .form(&[("study", id.to_string())])
        .send()
        .await
        .expect("results");
    assert!(page.status().is_success(), "{}", page.status());
    let body = page.text().await.expect("body");
    for want in ["better-ranking", "Bradley–Terry", "95% interval", "Elo"] {
        assert!(body.contains(want), "{want} in {body}");
    }
    // snippets are for a designed study; a naturalness study says so
    let (created, _, err) = natstudy(&url, &["study", "create", "Nat"]);
    assert!(created, "{err}");
    let snippets = reference("likert")
        .join("snippets.jsonl")
        .display()
        .to_string();
    let (ok, _, err) = natstudy(&url, &["import", "snippets", "--study", "Nat", &snippets]);
    assert!(!ok && err.contains("naturalness study"), "{err}");
    guard.drop_now(db).await;
}

on_both_stores!(a_study_of_each_design_from_the_command_line => a_study_of_each_design_from_the_command_line_sqlite, a_study_of_each_design_from_the_command_line_postgres);

/// The analysis at scale, on synthetic studies drawn from known latent models: every key
/// figure defined, and the models find the effects the data were drawn with (the transformed
/// snippets rated lower; the better snippets stronger). And `natstudy bench report --design
/// all` runs.
#[test]
fn synthetic_studies_of_every_design_are_analysed_as_drawn() {
    for kind in design::synthetic::KINDS {
        let (d, s, r) = design::synthetic::study(kind, 40, 1200, 30).expect("study");
        let out = report::analyse(&d, &s, &r);
        let q = &out["q"];
        let key = match kind {
            "likert" => "mixed_ordinal_model",
            "pairwise" => "bradley_terry",
            "best-worst" => "scores",
            _ => "items",
        };
        assert!(q[key].is_object(), "{kind}: {q}");
        assert!(!out.to_string().contains("NaN"));
        if kind == "likert" {
            for model in ["ordinal_model", "mixed_ordinal_model"] {
                let b = q[model]["coefficients"]["transformed"]
                    .as_f64()
                    .expect("coefficient");
                assert!(b < -0.3, "{model}: transformed drawn 0.7 lower, fitted {b}");
            }
        }
    }
    let (ok, out, err) = {
        let o = std::process::Command::new(natstudy_bin().expect("binary"))
            .args([
                "bench",
                "report",
                "--design",
                "all",
                "--responses",
                "2000",
                "--snippets",
                "40",
                "--participants",
                "30",
            ])
            .output()
            .expect("bench");
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    assert!(ok, "{err}");
    for kind in design::synthetic::KINDS {
        assert!(out.contains(&format!("{kind}: 2000 responses")), "{out}");
    }
}

/// Data a figure is undefined on — a question with one answer, every answer the same, a
/// participant in every cell, a snippet never compared, an unbeaten snippet — gives `null`
/// with its reason beside it, never NaN, never a panic.
#[test]
fn undefined_figures_are_null_with_their_reason() {
    let likert = design::parse_design(
        "d.toml",
        "title = \"T\"\nconditions = [\"a\", \"b\"]\n[[question]]\nid = \"q\"\nkind = \"likert\"\nprompt = \"P\"\npoints = 5\n",
    )
    .expect("design");
    let snippets = snippets::parse_snippets(
        "s.jsonl",
        "{\"id\": \"S1\", \"code\": \"x\", \"condition\": \"a\"}\n{\"id\": \"S2\", \"code\": \"y\", \"condition\": \"b\"}\n",
        &likert,
    )
    .expect("snippets");
    let line = |p: &str, s: &str, a: u32| {
        format!(
            "{{\"participant\": \"{p}\", \"question\": \"q\", \"item\": \"{s}\", \"answer\": {a}}}"
        )
    };
    for (what, lines) in [
        ("one answer", vec![line("P1", "S1", 3)]),
        (
            "every answer the same",
            vec![
                line("P1", "S1", 3),
                line("P2", "S1", 3),
                line("P1", "S2", 3),
                line("P2", "S2", 3),
            ],
        ),
        (
            "a participant in every cell",
            vec![line("P1", "S1", 2), line("P1", "S2", 4)],
        ),
    ] {
        let r = responses::parse_responses("r.jsonl", &lines.join("\n"), &likert, &snippets)
            .expect("responses");
        let out = report::analyse(&likert, &snippets, &r);
        let text = out.to_string();
        assert!(!text.contains("NaN"), "{what}: {text}");
        let q = &out["q"];
        for key in [
            "fleiss_kappa",
            "icc",
            "ordinal_model",
            "mixed_ordinal_model",
        ] {
            if q[key].is_null() {
                assert!(
                    q[format!("{key}_reason")].is_string(),
                    "{what}: {key} null without a reason: {q}"
                );
            }
        }
        assert!(
            q["alpha"]["nominal"].is_null(),
            "{what}: alpha is undefined: {q}"
        );
        assert!(q["alpha"]["nominal_reason"].is_string(), "{what}: {q}");
    }
    // pairwise: S3 never compared, S1 never beaten
    let pairwise = design::parse_design(
        "d.toml",
        "title = \"T\"\n[[question]]\nid = \"q\"\nkind = \"pairwise\"\nprompt = \"P\"\n",
    )
    .expect("design");
    let snippets = snippets::parse_snippets(
        "s.jsonl",
        "{\"id\": \"S1\", \"code\": \"x\"}\n{\"id\": \"S2\", \"code\": \"y\"}\n{\"id\": \"S3\", \"code\": \"z\"}\n",
        &pairwise,
    )
    .expect("snippets");
    let r = responses::parse_responses(
        "r.jsonl",
        "{\"participant\": \"P1\", \"question\": \"q\", \"pair\": [\"S1\", \"S2\"], \"answer\": \"S1\"}\n",
        &pairwise,
        &snippets,
    )
    .expect("responses");
    let out = report::analyse(&pairwise, &snippets, &r);
    let q = &out["q"];
    assert!(q["bradley_terry"].is_null(), "{q}");
    let why = q["bradley_terry_reason"].as_str().expect("reason");
    assert!(why.contains("[S1]") && why.contains("[S2]"), "{why}");
    assert_eq!(q["never_compared"], serde_json::json!(["S3"]));
    assert_eq!(q["win_rate"]["S1"], 1.0);
    assert!(!out.to_string().contains("NaN"));
}
