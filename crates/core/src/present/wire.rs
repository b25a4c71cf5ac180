//! Store rows and engine results in the pages' wire types: diff rows as diff lines (bounded),
//! accounts, studies, jobs and figures.

use natstudy_types::{DiffLine, FigureView, Seg};

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
