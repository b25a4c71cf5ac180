//! Engine results as people read them, in the wire types the pages take: the report's
//! headline lines and tables (plain cells; rendered as HTML on the results page and as
//! fixed-width text by `natstudy report`, one builder for both) and diff rows as diff lines.

use crate::engine::analysis::Report;
use app::model::{DiffLine, Seg, TableView};

fn opt(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.4}")).unwrap_or_else(|| "—".into())
}

fn table(id: &str, title: &str, header: &[&str], rows: Vec<Vec<String>>) -> TableView {
    TableView {
        id: id.into(),
        title: title.into(),
        header: header.iter().map(|h| (*h).to_owned()).collect(),
        rows,
    }
}

fn counts_row(name: &str, c: &crate::engine::analysis::CategoryCounts) -> Vec<String> {
    vec![
        name.to_owned(),
        c.natural.to_string(),
        c.likely_natural.to_string(),
        c.likely_unnatural.to_string(),
        c.unnatural.to_string(),
    ]
}

const COUNT_COLUMNS: [&str; 5] = [
    "",
    "natural",
    "likely natural",
    "likely unnatural",
    "unnatural",
];

/// The headline lines of a report.
pub fn headline(study: &str, r: &Report) -> Vec<String> {
    vec![
        format!(
            "Study {study}: {} items, {} votes, {} annotators",
            r.items, r.votes, r.annotators
        ),
        format!("Fleiss' kappa (binary judgement): {}", opt(r.fleiss_kappa)),
        format!(
            "full agreement: {} natural, {} unnatural",
            r.counts.full_natural, r.counts.full_unnatural
        ),
    ]
}

/// The report as tables: what the results page shows and `natstudy report` prints.
pub fn tables(r: &Report) -> Vec<TableView> {
    let mut out = Vec::new();
    let c = &r.counts;
    let mut rows = vec![vec![
        "all".to_owned(),
        c.natural.to_string(),
        c.likely_natural.to_string(),
        c.likely_unnatural.to_string(),
        c.unnatural.to_string(),
    ]];
    rows.extend(r.counts_by_level.iter().map(|(l, c)| counts_row(l, c)));
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
        rows.extend(t.by_level.iter().map(|(level, ms)| {
            vec![
                level.clone(),
                ms.n.to_string(),
                format!("{:.2}", ms.mean),
                format!("{:.2}", ms.std),
            ]
        }));
        let title = format!(
            "Time on item (s), below the 99th percentile {:.2}",
            t.p99_cutoff
        );
        out.push(table("time", &title, &["", "n", "mean", "std"], rows));
        let rows = t
            .tests
            .iter()
            .map(|(name, m)| {
                vec![
                    name.clone(),
                    format!("{:.1}", m.u),
                    format!("{:.3e}", m.p_value),
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
                    m.mww_natural_vs_unnatural
                        .as_ref()
                        .map(|x| format!("{:.3e}", x.p_value))
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
                "p (natural < unnatural)",
            ],
            rows,
        ));
    }
    out
}

/// Tables as fixed-width text, each column as wide as its widest cell.
pub fn tables_text(tables: &[TableView]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for t in tables {
        let _ = writeln!(s, "\n{}", t.title);
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
pub fn wire_rows(rows: Vec<crate::engine::diff::Row>) -> Vec<DiffLine> {
    use crate::engine::diff::RowKind;
    let segs = |v: Vec<crate::engine::diff::Segment>| {
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
        })
        .collect()
}

/// A stored job as the scoring panel lists it.
pub fn job_row(j: crate::store::jobs::JobRecord) -> app::model::JobRow {
    app::model::JobRow {
        id: j.id,
        kind: j.kind,
        label: j.label,
        state: j.state.as_str().to_owned(),
        done: j.done,
        total: j.total,
        message: j.message,
        started_at_ms: j.started_at_ms,
        updated_at_ms: j.updated_at_ms,
    }
}

/// An account as the pages know the signed-in user.
pub fn user(a: crate::store::users::Account) -> app::model::User {
    app::model::User {
        id: a.id,
        username: a.username,
        role: a.role,
    }
}

/// An account in the admin's user list.
pub fn user_row(a: crate::store::users::AccountListing) -> app::model::UserRow {
    app::model::UserRow {
        id: a.account.id,
        username: a.account.username,
        role: a.account.role,
        disabled: a.disabled,
        created_at_ms: a.created_at_ms,
    }
}

/// A study's headline counts.
pub fn study_summary(c: crate::store::studies::StudyCounts) -> app::model::StudySummary {
    app::model::StudySummary {
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
) -> app::model::StudyDetail {
    use app::model::{AuditRow, ItemRow, LevelCount};
    app::model::StudyDetail {
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
