//! The report as fixed-width text (`natstudy report`) and its headline lines: the same tables
//! the results page shows (`tables`), one builder for both.

use natstudy_engine::analysis::{MissingNpr, Report};
use natstudy_types::TableView;

use super::tables::{opt, tables};

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
