//! Every design's analysis against the field's reference libraries, on the four studies of
//! `shared/reference/designs` (data nobody here wrote): krippendorff, statsmodels, pingouin,
//! R's ordinal, choix, FastChat's Elo — each figure to the tolerance the README of that folder
//! states.

use natstudy_engine::design::{self, report, responses, snippets};
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

fn check_design(name: &str) {
    let dir = natstudy_tests::reference_dir().join("designs").join(name);
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
