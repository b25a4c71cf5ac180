//! A designed study's report (`service::designs::report_json`) as tables: what the results
//! page, `report.tex` and `tables/*.csv` show, each figure with its interval where it has one,
//! an undefined figure with its reason.

use natstudy_types::TableView;
use serde_json::Value;

/// A number as a table shows it (4 decimals; an integer whole), or the reason it has none.
fn cell(v: &Value) -> String {
    match v {
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(x)) => format!("{x:.4}"),
            _ => n.to_string(),
        },
        Value::Null => "—".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `figure` of `entry`, or "undefined: reason".
fn figure(entry: &Value, key: &str) -> String {
    match &entry[key] {
        Value::Null => match entry[format!("{key}_reason")].as_str() {
            Some(why) => format!("undefined: {why}"),
            None => "—".into(),
        },
        v => cell(v),
    }
}

fn table(
    id: String,
    title: String,
    note: String,
    header: &[&str],
    rows: Vec<Vec<String>>,
) -> TableView {
    TableView {
        id,
        title,
        note,
        header: header.iter().map(|h| (*h).to_owned()).collect(),
        rows,
    }
}

/// The headline: the study's size.
pub fn headline(study: &str, report: &Value) -> Vec<String> {
    let questions = report["questions"].as_object().map_or(0, |q| q.len());
    vec![format!(
        "Study {study}: {} snippets, {} responses, {questions} questions",
        cell(&report["snippets"]),
        cell(&report["responses"])
    )]
}

/// Every question's tables, in the design's order.
pub fn tables(report: &Value) -> Vec<TableView> {
    let mut out = Vec::new();
    let prompts: Vec<(String, String)> = report["design"]["questions"]
        .as_array()
        .map(|qs| {
            qs.iter()
                .map(|q| {
                    (
                        q["id"].as_str().unwrap_or_default().to_owned(),
                        q["prompt"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    for (id, prompt) in prompts {
        let q = &report["questions"][&id];
        let n = cell(&q["answers"]);
        let title = |what: &str| format!("{id}: {what}");
        let note = |what: &str| format!("“{prompt}” — {what} {n} answers.");
        match q["kind"].as_str().unwrap_or_default() {
            "likert" => {
                let rows = vec![
                    vec![
                        "Krippendorff's alpha, nominal".into(),
                        figure(&q["alpha"], "nominal"),
                    ],
                    vec![
                        "Krippendorff's alpha, ordinal".into(),
                        figure(&q["alpha"], "ordinal"),
                    ],
                    vec![
                        "Krippendorff's alpha, interval".into(),
                        figure(&q["alpha"], "interval"),
                    ],
                    vec![
                        "Krippendorff's alpha, ratio".into(),
                        figure(&q["alpha"], "ratio"),
                    ],
                    vec!["Fleiss' kappa".into(), figure(q, "fleiss_kappa")],
                    vec![
                        "ICC(1,1)".into(),
                        match &q["icc"] {
                            Value::Null => figure(q, "icc"),
                            v => cell(&v["ICC1"]),
                        },
                    ],
                    vec![
                        "ICC(1,k)".into(),
                        match &q["icc"] {
                            Value::Null => figure(q, "icc"),
                            v => cell(&v["ICC1k"]),
                        },
                    ],
                ];
                out.push(table(
                    format!("{id}-agreement"),
                    title("agreement"),
                    note("Over"),
                    &["Figure", "Value"],
                    rows,
                ));
                let mut rows = Vec::new();
                for (model, name) in [
                    ("ordinal_model", "cumulative logit"),
                    (
                        "mixed_ordinal_model",
                        "with participant and snippet intercepts",
                    ),
                ] {
                    let m = &q[model];
                    if m.is_null() {
                        rows.push(vec![
                            name.into(),
                            figure(q, model),
                            String::new(),
                            String::new(),
                        ]);
                        continue;
                    }
                    if let Some(cs) = m["coefficients"].as_object() {
                        for (c, b) in cs {
                            rows.push(vec![
                                format!("{name}: {c}"),
                                cell(b),
                                cell(&m["standard_errors"][c]),
                                cell(&m["p_values"][c]),
                            ]);
                        }
                    }
                    if let Some(ts) = m["thresholds"].as_array() {
                        for (j, t) in ts.iter().enumerate() {
                            rows.push(vec![
                                format!("{name}: threshold {}|{}", j + 1, j + 2),
                                cell(t),
                                String::new(),
                                String::new(),
                            ]);
                        }
                    }
                    if m["sd"].is_object() {
                        rows.push(vec![
                            format!("{name}: sd participant"),
                            cell(&m["sd"]["participant"]),
                            String::new(),
                            String::new(),
                        ]);
                        rows.push(vec![
                            format!("{name}: sd snippet"),
                            cell(&m["sd"]["item"]),
                            String::new(),
                            String::new(),
                        ]);
                    }
                    rows.push(vec![
                        format!("{name}: log-likelihood"),
                        cell(&m["log_likelihood"]),
                        String::new(),
                        String::new(),
                    ]);
                }
                out.push(table(format!("{id}-models"), title("ordinal models"), note("logit P(answer ≤ j) = threshold j − coefficient × condition, the first condition the baseline; over"), &["Term", "Estimate", "SE", "p"], rows));
                let rows = q["conditions"]
                    .as_object()
                    .map(|cs| {
                        cs.iter()
                            .map(|(c, v)| {
                                let counts: Vec<String> = v["counts"]
                                    .as_array()
                                    .map(|a| a.iter().map(cell).collect())
                                    .unwrap_or_default();
                                vec![
                                    c.clone(),
                                    cell(&v["answers"]),
                                    cell(&v["mean"]),
                                    counts.join(" / "),
                                ]
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                out.push(table(
                    format!("{id}-conditions"),
                    title("answers by condition"),
                    note("Counts per point, 1 first; over"),
                    &["Condition", "Answers", "Mean", "Counts"],
                    rows,
                ));
            }
            "pairwise" => {
                let bt = &q["bradley_terry"];
                let mut ids: Vec<(String, f64)> = q["win_rate"]
                    .as_object()
                    .map(|w| {
                        w.keys()
                            .map(|k| (k.clone(), bt[k].as_f64().unwrap_or(f64::NEG_INFINITY)))
                            .collect()
                    })
                    .unwrap_or_default();
                ids.sort_by(|a, b| b.1.total_cmp(&a.1));
                let rows = ids
                    .iter()
                    .map(|(s, _)| {
                        let interval = &q["bradley_terry_interval"][s];
                        vec![
                            s.clone(),
                            if bt.is_null() {
                                figure(q, "bradley_terry")
                            } else {
                                cell(&bt[s])
                            },
                            if interval.is_array() {
                                format!("[{}, {}]", cell(&interval[0]), cell(&interval[1]))
                            } else {
                                String::new()
                            },
                            cell(&q["elo"][s]),
                            cell(&q["win_rate"][s]),
                        ]
                    })
                    .collect();
                let bias = &q["position_bias"];
                let what = format!(
                    "A chosen in {} of {} decisive answers (p = {}); over",
                    cell(&bias["a_chosen"]),
                    cell(&bias["decisive"]),
                    figure(bias, "p_value")
                );
                out.push(table(
                    format!("{id}-ranking"),
                    title("ranking"),
                    note(&what),
                    &[
                        "Snippet",
                        "Bradley–Terry",
                        "95% interval",
                        "Elo",
                        "Win rate",
                    ],
                    rows,
                ));
            }
            "best-worst" => {
                let mut rows: Vec<(f64, Vec<String>)> = q["scores"]
                    .as_object()
                    .map(|s| {
                        s.iter()
                            .map(|(k, v)| {
                                let c = &q["counts"][k];
                                (
                                    v.as_f64().unwrap_or(0.0),
                                    vec![
                                        k.clone(),
                                        cell(v),
                                        cell(&c["best"]),
                                        cell(&c["worst"]),
                                        cell(&c["appearances"]),
                                    ],
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                rows.sort_by(|a, b| b.0.total_cmp(&a.0));
                let split = match &q["split_half"] {
                    Value::Null => figure(q, "split_half"),
                    v => cell(&v["spearman_brown"]),
                };
                out.push(table(
                    format!("{id}-scores"),
                    title("best–worst scores"),
                    note(&format!(
                        "(best − worst) / appearances; split-half reliability {split}; over"
                    )),
                    &["Snippet", "Score", "Best", "Worst", "Appearances"],
                    rows.into_iter().map(|(_, r)| r).collect(),
                ));
            }
            "answer" => {
                let rows = q["items"]
                    .as_object()
                    .map(|items| {
                        items
                            .iter()
                            .map(|(k, v)| {
                                vec![
                                    k.clone(),
                                    cell(&v["correct"]),
                                    format!("[{}, {}]", cell(&v["low"]), cell(&v["high"])),
                                    figure(v, "median_seconds"),
                                    cell(&v["answers"]),
                                ]
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                out.push(table(
                    format!("{id}-items"),
                    title("correct answers"),
                    note("The share correct with its Wilson 95% interval; over"),
                    &[
                        "Snippet",
                        "Correct",
                        "95% interval",
                        "Median seconds",
                        "Answers",
                    ],
                    rows,
                ));
            }
            "choice" | "multi" => {
                let rows = q["options"]
                    .as_object()
                    .map(|o| {
                        o.iter()
                            .map(|(k, v)| vec![k.clone(), cell(&v["count"]), cell(&v["share"])])
                            .collect()
                    })
                    .unwrap_or_default();
                out.push(table(
                    format!("{id}-options"),
                    title("options chosen"),
                    note("Over"),
                    &["Option", "Count", "Share"],
                    rows,
                ));
            }
            "number" => {
                let rows = ["mean", "q1", "median", "q3"]
                    .iter()
                    .map(|k| vec![(*k).to_owned(), figure(q, k)])
                    .collect();
                out.push(table(
                    format!("{id}-summary"),
                    title("summary"),
                    note("Over"),
                    &["Figure", "Value"],
                    rows,
                ));
            }
            _ => {
                let rows = vec![
                    vec!["answers".into(), n.clone()],
                    vec!["blank".into(), cell(&q["blank"])],
                ];
                out.push(table(
                    format!("{id}-answers"),
                    title("answers"),
                    note("The answers are in the responses export; over"),
                    &["Figure", "Value"],
                    rows,
                ));
            }
        }
    }
    out
}
