//! The report's tables as plain cells (`TableView`), rendered as HTML by the results page, as
//! text by `natstudy report` (`text`) and as LaTeX (`latex`).

use natstudy_engine::analysis::{MissingNpr, Report};
use natstudy_types::TableView;

/// A figure to four decimals, or a dash where there is none.
pub(super) fn opt(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.4}")).unwrap_or_else(|| "—".into())
}

/// A p-value as papers print it: `< 0.001`, or three significant digits.
pub fn p_text(p: f64) -> String {
    if !p.is_finite() {
        "—".into()
    } else if p < 0.001 {
        "< 0.001".into()
    } else {
        let digits = (2 - p.abs().log10().floor() as i32).clamp(0, 6) as usize;
        format!("{p:.digits$}")
    }
}

/// A Mann-Whitney comparison's key as people read it: `mww_naming_vs_expression` →
/// "naming vs expression".
pub(super) fn comparison_label(key: &str) -> String {
    key.strip_prefix("mww_")
        .unwrap_or(key)
        .replace("_vs_", " vs ")
        .replace('_', " ")
}

fn table(id: &str, title: &str, header: &[&str], rows: Vec<Vec<String>>) -> TableView {
    TableView {
        id: id.into(),
        title: title.into(),
        note: note(id).into(),
        header: header.iter().map(|h| (*h).to_owned()).collect(),
        rows,
    }
}

/// One line under each table: what it measures.
fn note(id: &str) -> &'static str {
    match id {
        "excluded" => "Participants excluded from the study (by a staff member, with the reason given, or by the study's attention items): their ratings count toward no item's k and are in no figure unless the report is asked to include them (report --include-excluded).",
        "npr-missing" => "The study's bugs and transformations a repair tool has no status for. Left out: a transformation without one, and every transformation of a bug without one; read as wrong: as the published package's scripts read a target without a row (natstudy report --missing-npr wrong).",
        "incomplete" => "Items that have some ratings but not the study's k: no category and no share in kappa until they are complete.",
        "naturalness" => "Items by naturalness category: an annotator judges an item unnatural when readability (CR) or conventions (CC) is 3 or 4; natural ≤ 1 such vote of 5, likely natural 2, likely unnatural 3, unnatural ≥ 4.",
        "operators" => "The same categories per transformation operator.",
        "time" => "Seconds on an item per vote, times at or above the 99th percentile dropped; agreement = natural and unnatural items, disagreement = the two likely categories.",
        "time-tests" => "Mann-Whitney U, one-sided (first group faster); r = 1 − 2U/(n1·n2).",
        "robustness" => "Prediction changes of each repair tool (transformations whose status differs from their bug's); the false-alarm rate is the share caused by unnatural items; rates over natural transformations, normalised per bug.",
        "robustness-all" => "The same rates over all transformations: how much of the drop natural transformations alone explain.",
        "robustness-levels" => "Bugs with a natural transformation of each level, and those of them whose status rises (positive), falls (negative) or either (Table 17 of the journal version).",
        "pdm" => "Over the bugs a tool repairs correctly on the original: PDM = share of their transformations it no longer repairs correctly; PDA = share of those bugs with at least one such transformation.",
        "pairs" => "Difference between two tools (first − second) in bugs fixed, on the originals and normalised over their transformations.",
        "applicability" => "Bugs with at least one transformation of each level, all and natural only (independent of tools).",
        "patch-review" => "Plausible patches decided without people (no-op: same tokens as the buggy method; SYE: same tokens as the developer's fix; TCE: identical class files), by two reviewers (correct only if both say so), or by an admin on a disagreement; Cohen's κ between the reviewers with a bootstrap 95% interval.",
        "rnc" => "Relative naturalness change RNC = (H(b′) − H(b)) / H(b) under each language model; AUC of separating natural from unnatural items by RNC, NC and CE; Spearman's rank correlation of H(b′) and H(b) over the categorised items, as the published rq3.py computes it, and over every scored item.",
        _ => "",
    }
}

fn counts_row(name: &str, c: &natstudy_engine::analysis::CategoryCounts) -> Vec<String> {
    vec![
        name.to_owned(),
        c.natural.to_string(),
        c.likely_natural.to_string(),
        c.likely_unnatural.to_string(),
        c.unnatural.to_string(),
    ]
}

const COUNT_COLUMNS: [&str; 5] = [
    "level",
    "natural",
    "likely natural",
    "likely unnatural",
    "unnatural",
];

/// The report as tables: what the results page shows and `natstudy report` prints.
pub fn tables(r: &Report) -> Vec<TableView> {
    let mut out = tables_of(r);
    // what each table stands on, in numbers: its caption says it
    for t in &mut out {
        let on = data_note(r, &t.id);
        if !on.is_empty() {
            t.note = format!("{} {on}", t.note).trim().to_owned();
        }
    }
    out
}

/// The data a table stands on (n), as its caption's last sentence.
fn data_note(r: &Report, id: &str) -> String {
    let items = match r.ratings_per_item {
        Some(k) => format!("{} items with exactly {k} ratings", r.complete_items),
        None => format!("{} rated items", r.complete_items),
    };
    match id {
        "naturalness" | "operators" => format!("n = {items}."),
        "time" | "time-tests" => r.time.as_ref().map_or_else(String::new, |t| {
            format!(
                "n = {} votes of {items} ({} at or above {:.1} s dropped).",
                t.n, t.dropped, t.p99_cutoff
            )
        }),
        "robustness" | "robustness-all" | "robustness-levels" | "pdm" | "pairs" => {
            let bugs = r.applicability_total.bugs_all;
            format!(
                "n = {bugs} bugs with a transformation; transformations categorised on {items}."
            )
        }
        "applicability" => format!("n = {} bugs.", r.applicability_total.bugs_all),
        "rnc" => format!("Transformations categorised on {items}."),
        _ => String::new(),
    }
}

fn tables_of(r: &Report) -> Vec<TableView> {
    let mut out = Vec::new();
    let read_as = match r.missing_npr {
        MissingNpr::Skip => "left out",
        MissingNpr::Wrong => "wrong",
    };
    let missing: Vec<Vec<String>> = r
        .robustness
        .iter()
        .flat_map(|(tool, t)| {
            t.missing
                .iter()
                .map(move |target| vec![tool.clone(), target.clone(), read_as.to_owned()])
        })
        .collect();
    if !missing.is_empty() {
        out.push(table(
            "npr-missing",
            "Targets without a repair status",
            &["tool", "target", "read as"],
            missing,
        ));
    }
    if !r.left_out.participants.is_empty() {
        let rows = r
            .left_out
            .participants
            .iter()
            .map(|p| vec![p.annotator.clone(), p.votes.to_string(), p.reason.clone()])
            .collect();
        out.push(table(
            "excluded",
            "Excluded participants",
            &["participant", "votes", "reason"],
            rows,
        ));
    }
    if let (Some(k), false) = (r.ratings_per_item, r.incomplete_items.is_empty()) {
        let rows = r
            .incomplete_items
            .iter()
            .map(|i| vec![i.key.clone(), i.votes.to_string(), k.to_string()])
            .collect();
        out.push(table(
            "incomplete",
            "Incomplete items",
            &["item", "ratings", "of k"],
            rows,
        ));
    }
    let c = &r.counts;
    let mut rows = vec![vec![
        "all".to_owned(),
        c.natural.to_string(),
        c.likely_natural.to_string(),
        c.likely_unnatural.to_string(),
        c.unnatural.to_string(),
    ]];
    rows.extend(
        in_level_order(&r.counts_by_level)
            .into_iter()
            .map(|(l, c)| counts_row(l, c)),
    );
    out.push(table(
        "naturalness",
        "Naturalness by level",
        &COUNT_COLUMNS,
        rows,
    ));
    if !r.counts_by_operator.is_empty() {
        let mut cols = COUNT_COLUMNS;
        cols[0] = "operator";
        let rows = r
            .counts_by_operator
            .iter()
            .map(|(o, c)| counts_row(o, c))
            .collect();
        out.push(table("operators", "Naturalness by operator", &cols, rows));
    }
    if let Some(t) = &r.time {
        let mut rows = vec![vec![
            "all".to_owned(),
            t.n.to_string(),
            format!("{:.2}", t.mean),
            format!("{:.2}", t.std),
        ]];
        let ms_row = |name: &str, ms: &natstudy_engine::analysis::MeanStd| {
            vec![
                name.to_owned(),
                ms.n.to_string(),
                format!("{:.2}", ms.mean),
                format!("{:.2}", ms.std),
            ]
        };
        rows.extend(
            in_level_order(&t.by_level)
                .into_iter()
                .map(|(level, ms)| ms_row(level, ms)),
        );
        if let Some(ms) = &t.agreement {
            rows.push(ms_row("agreement", ms));
        }
        if let Some(ms) = &t.disagreement {
            rows.push(ms_row("disagreement", ms));
        }
        let title = format!(
            "Time on item (s), below the 99th percentile {:.2}",
            t.p99_cutoff
        );
        out.push(table("time", &title, &["group", "n", "mean", "std"], rows));
        let rows = t
            .tests
            .iter()
            .map(|(name, m)| {
                vec![
                    comparison_label(name),
                    format!("{:.1}", m.u),
                    p_text(m.p_value),
                    format!("{:.4}", m.effect_size),
                ]
            })
            .collect();
        out.push(table(
            "time-tests",
            "Mann-Whitney U (one-sided, less)",
            &["comparison", "U", "p", "r"],
            rows,
        ));
    }
    if !r.robustness.is_empty() {
        let rows = r
            .robustness
            .iter()
            .map(|(tool, t)| {
                let n = &t.natural;
                vec![
                    tool.clone(),
                    t.changes_all.to_string(),
                    opt(t.false_alarm_rate),
                    n.bugs.to_string(),
                    format!("{} → {:.2}", n.original_plausible, n.transformed_plausible),
                    opt(n.plausible_drop),
                    format!("{} → {:.2}", n.original_correct, n.transformed_correct),
                    opt(n.correct_drop),
                ]
            })
            .collect();
        out.push(table(
            "robustness",
            "Robustness of repair tools",
            &[
                "tool",
                "changes",
                "false-alarm rate",
                "bugs (natural)",
                "plausible orig → trans",
                "drop",
                "correct orig → trans",
                "drop",
            ],
            rows,
        ));
        robustness_tables(r, &mut out);
    }
    if !r.applicability.is_empty() {
        let mut rows: Vec<Vec<String>> = in_level_order(&r.applicability)
            .into_iter()
            .map(|(level, a)| {
                vec![
                    level.clone(),
                    a.bugs_all.to_string(),
                    a.bugs_natural.to_string(),
                ]
            })
            .collect();
        rows.push(vec![
            "any level".to_owned(),
            r.applicability_total.bugs_all.to_string(),
            r.applicability_total.bugs_natural.to_string(),
        ]);
        out.push(table(
            "applicability",
            "Applicability: bugs with a transformation",
            &["level", "all", "natural"],
            rows,
        ));
    }
    if let Some(p) = &r.patch_review {
        patch_review_table(p, &mut out);
    }
    if !r.rnc.is_empty() {
        let rows = r
            .rnc
            .iter()
            .map(|(model, m)| {
                vec![
                    model.clone(),
                    m.items.to_string(),
                    opt(m.auc_rnc),
                    opt(m.auc_nc),
                    opt(m.auc_ce),
                    opt(m.spearman_original_vs_transformed),
                    opt(m.spearman_all_scored),
                    m.mww_natural_vs_unnatural
                        .as_ref()
                        .map(|x| p_text(x.p_value))
                        .unwrap_or_else(|| "—".into()),
                ]
            })
            .collect();
        out.push(table(
            "rnc",
            "RNC per language model",
            &[
                "model",
                "items",
                "AUC (RNC)",
                "AUC (NC)",
                "AUC (CE)",
                "Spearman H(b′) vs H(b)",
                "Spearman, every scored item",
                "p (natural < unnatural)",
            ],
            rows,
        ));
    }
    out
}

fn count_arrow(original: usize, transformed: f64) -> String {
    format!("{original} → {transformed:.2}")
}

/// Robustness over all transformations, per level over natural ones, PDM/PDA, tool pairs.
fn robustness_tables(r: &Report, out: &mut Vec<TableView>) {
    let rows = r
        .robustness
        .iter()
        .map(|(tool, t)| {
            let a = &t.all;
            vec![
                tool.clone(),
                a.bugs.to_string(),
                count_arrow(a.original_plausible, a.transformed_plausible),
                opt(a.plausible_drop),
                count_arrow(a.original_correct, a.transformed_correct),
                opt(a.correct_drop),
                format!("{} / {}", a.positive_changes, a.negative_changes),
            ]
        })
        .collect();
    out.push(table(
        "robustness-all",
        "Robustness over all transformations",
        &[
            "tool",
            "bugs",
            "plausible orig → trans",
            "drop",
            "correct orig → trans",
            "drop",
            "changes + / −",
        ],
        rows,
    ));
    let mut rows = Vec::new();
    for (tool, t) in &r.robustness {
        for (level, l) in in_level_order(&t.natural.by_level) {
            rows.push(vec![
                tool.clone(),
                level.clone(),
                l.bugs.to_string(),
                l.bugs_positive.to_string(),
                l.bugs_negative.to_string(),
                l.bugs_changed.to_string(),
            ]);
        }
    }
    out.push(table(
        "robustness-levels",
        "Prediction changes per level, natural transformations only",
        &["tool", "level", "bugs", "positive", "negative", "changed"],
        rows,
    ));
    let mut rows = Vec::new();
    for (tool, t) in &r.robustness {
        for (pool, n) in [("natural", &t.natural), ("all", &t.all)] {
            rows.push(vec![
                tool.clone(),
                pool.to_owned(),
                n.repairable_bugs.to_string(),
                n.variants.to_string(),
                opt(n.pdm),
                opt(n.pda),
            ]);
        }
    }
    out.push(table(
        "pdm",
        "Prediction dependency (PDM, PDA)",
        &[
            "tool",
            "transformations",
            "repaired bugs",
            "variants",
            "PDM",
            "PDA",
        ],
        rows,
    ));
    if !r.robustness_pairs.is_empty() {
        let rows = r
            .robustness_pairs
            .iter()
            .flat_map(|(pair, d)| {
                [("all", &d.all), ("natural", &d.natural)].map(|(pool, x)| {
                    vec![
                        pair.replace("_vs_", " vs "),
                        pool.to_owned(),
                        format!(
                            "{:+.0} → {:+.2}",
                            x.original_plausible, x.transformed_plausible
                        ),
                        format!("{:+.0} → {:+.2}", x.original_correct, x.transformed_correct),
                    ]
                })
            })
            .collect();
        out.push(table(
            "pairs",
            "Tool pairs: difference in fixed bugs",
            &[
                "pair",
                "transformations",
                "plausible orig → trans",
                "correct orig → trans",
            ],
            rows,
        ));
    }
}

fn patch_review_table(p: &natstudy_engine::analysis::PatchReview, out: &mut Vec<TableView>) {
    let ci = |c: Option<(f64, f64)>| {
        c.map(|(a, b)| format!("[{a:.3}, {b:.3}]"))
            .unwrap_or_else(|| "—".into())
    };
    let mut rows = vec![vec![
        "all".to_owned(),
        p.tasks.to_string(),
        format!("{} / {} / {}", p.auto_noop, p.auto_sye, p.auto_tce),
        p.duplicates.to_string(),
        p.reviewed.to_string(),
        p.pending.to_string(),
        format!("{} ({} adjudicated)", p.disagreements, p.adjudicated),
        p.correct.to_string(),
        opt(p.cohen_kappa),
        ci(p.cohen_kappa_ci),
    ]];
    rows.extend(p.by_tool.iter().map(|(tool, t)| {
        vec![
            tool.clone(),
            t.tasks.to_string(),
            String::new(),
            String::new(),
            t.pairs.to_string(),
            String::new(),
            String::new(),
            t.correct.to_string(),
            opt(t.cohen_kappa),
            ci(t.cohen_kappa_ci),
        ]
    }));
    out.push(table(
        "patch-review",
        "Patch review",
        &[
            "",
            "patches",
            "no-op / SYE / TCE",
            "duplicates",
            "reviewed",
            "pending",
            "disagreements",
            "correct",
            "Cohen's κ",
            "95% CI",
        ],
        rows,
    ));
}

/// A map keyed by level in the order a paper reads levels: naming, expression, statement (then
/// any other key, as it sorts).
fn in_level_order<V>(map: &std::collections::BTreeMap<String, V>) -> Vec<(&String, &V)> {
    let rank = |k: &str| {
        natstudy_vocab::Level::parse(k)
            .and_then(|l| natstudy_vocab::Level::ALL.iter().position(|x| *x == l))
            .unwrap_or(usize::MAX)
    };
    let mut v: Vec<(&String, &V)> = map.iter().collect();
    v.sort_by_key(|(k, _)| rank(k));
    v
}
