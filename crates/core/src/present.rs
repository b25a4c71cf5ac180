//! Engine results as people read them, in the wire types the pages take: the report's
//! headline lines and tables (plain cells; rendered as HTML on the results page and as
//! fixed-width text by `natstudy report`, one builder for both) and diff rows as diff lines.

use natstudy_engine::analysis::{MissingNpr, Report};
use natstudy_types::{DiffLine, FigureView, Seg, TableView};

fn opt(x: Option<f64>) -> String {
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
fn comparison_label(key: &str) -> String {
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

/// The headline lines of a report.
pub fn headline(study: &str, r: &Report) -> Vec<String> {
    let mut lines = Vec::new();
    // first, what the figures stand on: the items with all their ratings, and what is left out
    if let Some(k) = r.ratings_per_item {
        lines.push(format!(
            "{} of {} items have all k = {k} ratings: every figure of the votes below counts these only.",
            r.complete_items, r.items
        ));
        if !r.incomplete_items.is_empty() {
            lines.push(format!(
                "{} with some but not k ratings are left out until complete (table \"Incomplete items\").",
                natstudy_types::words::count(r.incomplete_items.len() as i64, "item")
            ));
        }
    }
    lines.extend(left_out_line(&r.left_out));
    lines.extend(missing_npr_line(r));
    lines.extend([
        format!(
            "Study {study}: {} items, {} votes, {} annotators",
            r.items, r.votes, r.annotators
        ),
        format!("Fleiss' kappa (binary judgement): {}", opt(r.fleiss_kappa)),
        format!(
            "full agreement: {} natural, {} unnatural",
            r.counts.full_natural, r.counts.full_unnatural
        ),
    ]);
    lines
}

/// What the report says of the excluded participants: how many, their votes, and whether
/// they are in the figures.
fn left_out_line(l: &natstudy_engine::analysis::LeftOut) -> Option<String> {
    if l.participants.is_empty() {
        return None;
    }
    let who = natstudy_types::words::count(l.participants.len() as i64, "participant");
    let votes =
        natstudy_types::words::count(l.participants.iter().map(|p| p.votes as i64).sum(), "vote");
    Some(if l.included {
        format!(
            "{who} excluded from the study are counted here all the same, as asked ({votes}; table \"Excluded participants\")."
        )
    } else {
        format!(
            "{who} excluded from the study: their {votes} are in no figure below (table \"Excluded participants\")."
        )
    })
}

/// What the report says of the targets without a repair status: how many, and how they were
/// read (the published package reads them as wrong).
fn missing_npr_line(r: &Report) -> Option<String> {
    let missing: usize = r.robustness.values().map(|t| t.missing.len()).sum();
    if missing == 0 {
        return None;
    }
    let targets = natstudy_types::words::count(missing as i64, "repair target");
    Some(match r.missing_npr {
        MissingNpr::Skip => format!(
            "{targets} without a repair status left out of the robustness figures, with every transformation of such a bug (table \"Targets without a repair status\"; `natstudy report --missing-npr wrong` reads them as wrong, as the published package does)."
        ),
        MissingNpr::Wrong => format!(
            "{targets} without a repair status read as wrong, as the published package reads them (table \"Targets without a repair status\")."
        ),
    })
}

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

/// Tables as fixed-width text, each column as wide as its widest cell.
pub fn tables_text(tables: &[TableView]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for t in tables {
        let _ = writeln!(s, "\n{}", t.title);
        if !t.note.is_empty() {
            let _ = writeln!(s, "({})", t.note);
        }
        let n = t.header.len();
        let width: Vec<usize> = (0..n)
            .map(|i| {
                std::iter::once(&t.header)
                    .chain(&t.rows)
                    .filter_map(|r| r.get(i))
                    .map(|c| c.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for row in std::iter::once(&t.header).chain(&t.rows) {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let pad = width[i].saturating_sub(c.chars().count());
                    if i == 0 {
                        format!("{c}{}", " ".repeat(pad))
                    } else {
                        format!("{}{c}", " ".repeat(pad))
                    }
                })
                .collect();
            let _ = writeln!(s, "{}", cells.join("  ").trim_end());
        }
    }
    s
}

/// The report as plain-text tables.
pub fn render_text(study: &str, r: &Report) -> String {
    let mut s = headline(study, r).join("\n");
    s.push('\n');
    s.push_str(&tables_text(&tables(r)));
    s
}

/// The engine's diff rows as the pages' diff lines.
pub fn wire_rows(rows: Vec<natstudy_engine::diff::Row>) -> Vec<DiffLine> {
    use natstudy_engine::diff::RowKind;
    let segs = |v: Vec<natstudy_engine::diff::Segment>| {
        v.into_iter()
            .map(|s| Seg {
                text: s.text,
                changed: s.changed,
            })
            .collect()
    };
    rows.into_iter()
        .map(|r| DiffLine {
            kind: match r.kind {
                RowKind::Same => "same",
                RowKind::Removed => "removed",
                RowKind::Added => "added",
                RowKind::Changed => "changed",
            }
            .to_owned(),
            old_no: r.old_no,
            new_no: r.new_no,
            old: segs(r.old),
            new: segs(r.new),
            buggy: r.buggy,
            buggy_new: false,
        })
        .collect()
}

/// The most rows one diff sends to a page.
pub const MAX_DIFF_ROWS: usize = 2000;
/// Unchanged lines kept on each side of a change when a long diff is shortened.
const DIFF_CONTEXT: usize = 3;

/// A diff as a page gets it: whole when it has at most [`MAX_DIFF_ROWS`] rows; otherwise every
/// run of unchanged lines longer than twice [`DIFF_CONTEXT`] becomes one `skip` row ("… 120
/// unchanged lines …") between the context it keeps, and what is still over the bound is cut
/// with a last `skip` row. What one response carries stays bounded whatever the methods' size.
pub fn bounded_rows(rows: Vec<DiffLine>) -> Vec<DiffLine> {
    if rows.len() <= MAX_DIFF_ROWS {
        return rows;
    }
    let skip = |text: String| DiffLine {
        kind: "skip".into(),
        old_no: None,
        new_no: None,
        old: vec![Seg {
            text: text.clone(),
            changed: false,
        }],
        new: vec![Seg {
            text,
            changed: false,
        }],
        buggy: false,
        buggy_new: false,
    };
    let mut out = Vec::new();
    let mut run: Vec<DiffLine> = Vec::new();
    let flush = |run: &mut Vec<DiffLine>, out: &mut Vec<DiffLine>, last: bool| {
        let first = out.is_empty();
        let keep_before = if first { 0 } else { DIFF_CONTEXT };
        let keep_after = if last { 0 } else { DIFF_CONTEXT };
        if run.len() > keep_before + keep_after + 1 {
            let hidden = run.len() - keep_before - keep_after;
            let tail = run.split_off(run.len() - keep_after);
            run.truncate(keep_before);
            out.append(run);
            out.push(skip(format!("… {hidden} unchanged lines …")));
            out.extend(tail);
        } else {
            out.append(run);
        }
    };
    for r in rows {
        // a buggy line is never hidden: it stands, with its context, like a change
        if r.kind == "same" && !r.buggy && !r.buggy_new {
            run.push(r);
        } else {
            flush(&mut run, &mut out, false);
            out.push(r);
        }
    }
    flush(&mut run, &mut out, true);
    if out.len() > MAX_DIFF_ROWS {
        let rest = out.len() - (MAX_DIFF_ROWS - 1);
        out.truncate(MAX_DIFF_ROWS - 1);
        out.push(skip(format!(
            "… {rest} more rows not shown: the diff is longer than a page shows"
        )));
    }
    out
}

/// A stored job as the scoring panel lists it.
pub fn job_row(j: crate::store::jobs::JobRecord) -> natstudy_types::JobRow {
    natstudy_types::JobRow {
        id: j.id,
        kind: j.kind.as_str().to_owned(),
        label: j.label,
        state: j.state.as_str().to_owned(),
        done: j.done,
        total: j.total,
        message: j.message,
        started_at_ms: j.started_at_ms,
        updated_at_ms: j.updated_at_ms,
        stopping: j.stop_requested && j.state == crate::store::JobState::Running,
        tokens: j.tokens,
        counting_ms: j.counting_ms,
        eta_ms: j
            .eta_ms
            .filter(|_| j.state == crate::store::JobState::Running),
        load_read: j.load_read,
        load_of: j.load_of,
    }
}

/// A participant found by a join or a resume code, as the server functions take it.
pub fn entry(e: crate::store::resume_codes::Entry) -> natstudy_types::Entry {
    natstudy_types::Entry {
        annotator: e.annotator,
        study: e.study,
        review: e.review,
    }
}

/// An account as the pages know the signed-in user.
pub fn user(a: crate::store::users::Account) -> natstudy_types::User {
    natstudy_types::User {
        id: a.id,
        username: a.username,
        role: a.role,
    }
}

/// An account in the admin's user list.
pub fn user_row(a: crate::store::users::AccountListing) -> natstudy_types::UserRow {
    natstudy_types::UserRow {
        id: a.account.id,
        username: a.account.username,
        role: a.account.role,
        disabled: a.disabled,
        created_at_ms: a.created_at_ms,
    }
}

/// A study's headline counts.
pub fn study_summary(c: crate::store::studies::StudyCounts) -> natstudy_types::StudySummary {
    natstudy_types::StudySummary {
        id: c.id,
        name: c.name,
        description: c.description,
        ratings_per_item: c.ratings_per_item,
        bugs: c.bugs,
        items: c.items,
        votes: c.votes,
        annotators: c.annotators,
    }
}

/// The study page's data from the store's parts.
pub fn study_detail(
    counts: crate::store::studies::StudyCounts,
    levels: Vec<(String, i64)>,
    items: Vec<crate::store::studies::ItemListing>,
    audit: Vec<crate::store::audit::AuditEntry>,
) -> natstudy_types::StudyDetail {
    use natstudy_types::{AuditRow, ItemRow, LevelCount};
    natstudy_types::StudyDetail {
        summary: study_summary(counts),
        levels: levels
            .into_iter()
            .map(|(level, items)| LevelCount { level, items })
            .collect(),
        items: items
            .into_iter()
            .map(|i| ItemRow {
                key: i.key,
                bug: i.bug,
                operator: i.operator,
                level: i.level,
                summary: i.summary,
                votes: i.votes,
            })
            .collect(),
        audit: audit
            .into_iter()
            .map(|a| AuditRow {
                at_ms: a.at_ms,
                user: a.user,
                action: a.action,
                detail: a.detail,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kind: &str, n: u32, buggy: bool) -> DiffLine {
        DiffLine {
            kind: kind.into(),
            old_no: Some(n),
            new_no: Some(n),
            old: vec![Seg {
                text: format!("line {n}"),
                changed: false,
            }],
            new: vec![],
            buggy,
            buggy_new: false,
        }
    }

    /// A short diff goes whole; a long one keeps its changes, their context and every buggy
    /// line, says what it left out, and never exceeds the bound.
    #[test]
    fn a_long_diff_is_shortened_around_its_changes() {
        let short: Vec<DiffLine> = (1..=50).map(|n| row("same", n, false)).collect();
        assert_eq!(bounded_rows(short.clone()), short);
        let mut long: Vec<DiffLine> = (1..=6000).map(|n| row("same", n, n == 100)).collect();
        long[2999] = row("changed", 3000, false);
        let out = bounded_rows(long);
        assert!(out.len() <= MAX_DIFF_ROWS, "{}", out.len());
        assert!(out
            .iter()
            .any(|r| r.kind == "changed" && r.old_no == Some(3000)));
        assert!(
            out.iter().any(|r| r.buggy && r.old_no == Some(100)),
            "the buggy line stays"
        );
        for n in [2997, 2998, 2999, 3001, 3002, 3003] {
            assert!(out.iter().any(|r| r.old_no == Some(n)), "context line {n}");
        }
        let skips: Vec<String> = out
            .iter()
            .filter(|r| r.kind == "skip")
            .map(|r| r.old[0].text.clone())
            .collect();
        assert_eq!(
            skips,
            vec![
                "… 96 unchanged lines …".to_owned(),
                "… 2893 unchanged lines …".to_owned(),
                "… 2997 unchanged lines …".to_owned(),
            ]
        );
        // a diff of changes only is cut, and says so
        let changes: Vec<DiffLine> = (1..=5000).map(|n| row("changed", n, false)).collect();
        let out = bounded_rows(changes);
        assert_eq!(out.len(), MAX_DIFF_ROWS);
        assert!(out[MAX_DIFF_ROWS - 1].old[0]
            .text
            .contains("3001 more rows not shown"));
    }
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

/// A table as LaTeX a stock TeX Live compiles (booktabs, and graphicx to shrink a table wider
/// than the text; no `siunitx`): the title and what it
/// measures as the caption, `\label{tab:ID}`, the first column left-aligned and the others
/// right-aligned, p-values as `< 0.001` or three significant digits, every special character
/// escaped and the report's symbols (κ, →, −, ≥, …) in math mode.
pub fn table_latex(t: &TableView) -> String {
    use std::fmt::Write;
    let p_col = t.header.iter().position(|h| h == "p");
    let cols: String = (0..t.header.len())
        .map(|i| if i == 0 { 'l' } else { 'r' })
        .collect();
    let mut s = String::new();
    let _ = writeln!(s, "% natstudy: {}", latex_escape(&t.title));
    let _ = writeln!(s, "\\begin{{table}}[t]\n  \\centering");
    let caption = if t.note.is_empty() {
        latex_escape(&t.title)
    } else {
        format!("{}. {}", latex_escape(&t.title), latex_escape(&t.note))
    };
    let _ = writeln!(s, "  \\caption{{{caption}}}");
    let _ = writeln!(s, "  \\label{{tab:{}}}", t.id);
    // a table wider than the text shrinks to it (graphicx), a narrower one keeps its size
    let _ = writeln!(
        s,
        "  \\resizebox{{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}}{{!}}{{%\n  \\begin{{tabular}}{{{cols}}}\n    \\toprule"
    );
    let row = |cells: &[String], header: bool| -> String {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if !header && Some(i) == p_col {
                    p_value(c)
                } else {
                    latex_escape(c)
                }
            })
            .collect::<Vec<_>>()
            .join(" & ")
    };
    let _ = writeln!(s, "    {} \\\\\n    \\midrule", row(&t.header, true));
    for r in &t.rows {
        let _ = writeln!(s, "    {} \\\\", row(r, false));
    }
    let _ = writeln!(s, "    \\bottomrule\n  \\end{{tabular}}}}\n\\end{{table}}");
    s
}

/// A p-value cell in LaTeX: `$<$ 0.001`, or its three significant digits.
fn p_value(cell: &str) -> String {
    match cell.trim() {
        "< 0.001" => "$<$ 0.001".into(),
        c => match c.parse::<f64>() {
            Ok(p) if p.is_finite() => p_text(p).replace('<', "$<$"),
            _ => latex_escape(c),
        },
    }
}

/// Text safe in LaTeX: its special characters escaped, the report's symbols in math mode.
pub fn latex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            'κ' => out.push_str("$\\kappa$"),
            'α' => out.push_str("$\\alpha$"),
            '→' => out.push_str("$\\rightarrow$"),
            '−' => out.push_str("$-$"),
            '—' => out.push_str("---"),
            '–' => out.push_str("--"),
            '≥' => out.push_str("$\\geq$"),
            '≤' => out.push_str("$\\leq$"),
            '·' => out.push_str("$\\cdot$"),
            '′' => out.push_str("$'$"),
            '×' => out.push_str("$\\times$"),
            _ => out.push(c),
        }
    }
    out
}

/// `report.tex`: a document that inputs every table (`tables/ID.tex`) and includes every figure
/// (`figures/ID.pdf`, with its title and caption and `\label{fig:ID}`), and compiles with
/// pdflatex from a stock TeX Live (article, inputenc, fontenc, booktabs, graphicx).
pub fn report_latex(study: &str, tables: &[TableView], figures: &[FigureView]) -> String {
    let mut s = String::from(
        "\\documentclass{article}\n% the figures are PDF 1.7; pdfTeX takes them without a warning when told\n\\ifdefined\\pdfminorversion\\pdfminorversion=7\\fi\n\\ifdefined\\pdfsuppresswarningpagegroup\\pdfsuppresswarningpagegroup=1\\fi\n\\usepackage[utf8]{inputenc}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n\\begin{document}\n",
    );
    s.push_str(&format!("\\section*{{{}}}\n", latex_escape(study)));
    for t in tables {
        s.push_str(&format!("\\input{{tables/{}}}\n", t.id));
    }
    for f in figures {
        s.push_str(&format!(
            "\\begin{{figure}}[htbp]\n  \\centering\n  \\includegraphics[width=\\linewidth,height=0.8\\textheight,keepaspectratio]{{figures/{}.pdf}}\n  \\caption{{{}. {}}}\n  \\label{{fig:{}}}\n\\end{{figure}}\n",
            f.id,
            latex_escape(&f.title),
            latex_escape(&f.caption),
            f.id
        ));
    }
    s.push_str("\\clearpage\n\\end{document}\n");
    s
}

/// The report's figures as the page and the paper take them.
pub fn figures(figures: Vec<natstudy_engine::plots::Figure>) -> Vec<FigureView> {
    figures
        .into_iter()
        .map(|f| FigureView {
            id: f.id,
            title: f.title,
            caption: f.caption,
            svg: f.svg,
            wide: f.wide,
        })
        .collect()
}

#[cfg(test)]
mod latex_tests {
    use super::*;

    #[test]
    fn cells_are_escaped_and_p_values_read_as_in_papers() {
        assert_eq!(
            latex_escape("a_b & 50% κ → x"),
            "a\\_b \\& 50\\% $\\kappa$ $\\rightarrow$ x"
        );
        assert_eq!(p_value("5.531e-3"), "0.00553");
        assert_eq!(p_value("0.2"), "0.200");
        assert_eq!(p_value("1.2e-7"), "$<$ 0.001");
        assert_eq!(p_value("—"), "---");
        assert_eq!(p_value("< 0.001"), "$<$ 0.001");
        assert_eq!(p_text(0.0123456), "0.0123");
        assert_eq!(p_text(0.5), "0.500");
        assert_eq!(p_text(2e-9), "< 0.001");
        assert_eq!(
            comparison_label("mww_naming_vs_expression"),
            "naming vs expression"
        );
        assert_eq!(
            comparison_label("mww_agreement_vs_disagreement"),
            "agreement vs disagreement"
        );
        let t = TableView {
            id: "time-tests".into(),
            title: "Mann-Whitney U".into(),
            note: "r = 1 − 2U/(n1·n2).".into(),
            header: vec!["comparison".into(), "U".into(), "p".into()],
            rows: vec![vec![
                "naming_vs_expression".into(),
                "12.0".into(),
                "4.2e-5".into(),
            ]],
        };
        let tex = table_latex(&t);
        assert!(tex.contains("\\begin{tabular}{lrr}"), "{tex}");
        assert!(tex.contains("\\label{tab:time-tests}"));
        assert!(
            tex.contains("naming\\_vs\\_expression & 12.0 & $<$ 0.001 \\\\"),
            "{tex}"
        );
        assert!(
            tex.contains("\\toprule") && tex.contains("\\midrule") && tex.contains("\\bottomrule")
        );
        assert!(tex.contains("$-$ 2U/(n1$\\cdot$n2)"), "{tex}");
    }
}
