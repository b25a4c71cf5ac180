//! Exports: which table goes out, under which download name and media type, written to a sink
//! as the database yields rows (the web's sink holds the exporter back for a slow client).

use super::ServiceResult;
use crate::db::Db;
use crate::ids::StudyId;
use crate::store::export::{self, Sink};

/// A table a study exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Export {
    /// The labelled dataset, JSON lines or CSV.
    Dataset { csv: bool },
    /// The long vote table (crowd ids only when asked).
    Votes { external_ids: bool },
    /// The item × annotator matrix.
    Matrix,
    /// `survey.json` in the replication layout.
    Survey,
    /// The patch review, one row per task: its decision, who made it and the verdicts.
    Reviews,
    /// The reviewers' verdicts in the import format (`tool,target,reviewer,verdict,note`).
    ReviewVerdicts,
}

impl Export {
    /// The web's downloads: file name → export and media type.
    pub fn download(file: &str) -> Option<(Export, &'static str)> {
        Some(match file {
            "dataset.jsonl" => (Export::Dataset { csv: false }, "application/x-ndjson"),
            "dataset.csv" => (Export::Dataset { csv: true }, "text/csv"),
            "votes.csv" => (
                Export::Votes {
                    external_ids: false,
                },
                "text/csv",
            ),
            "matrix.csv" => (Export::Matrix, "text/csv"),
            "survey.json" => (Export::Survey, "application/json"),
            "reviews.csv" => (Export::Reviews, "text/csv"),
            "review_verdicts.csv" => (Export::ReviewVerdicts, "text/csv"),
            _ => return None,
        })
    }
}

/// Writes the export; returns the rows written.
pub async fn write(
    db: &Db,
    study: StudyId,
    what: Export,
    out: &mut dyn Sink,
) -> ServiceResult<u64> {
    let n = match what {
        Export::Dataset { csv } => export::dataset(db, study, csv, out).await,
        Export::Votes { external_ids } => export::votes_table(db, study, out, external_ids).await,
        Export::Matrix => export::matrix(db, study, out).await,
        Export::Survey => export::survey(db, study, out).await,
        Export::Reviews => return reviews(db, study, out, false).await,
        Export::ReviewVerdicts => return reviews(db, study, out, true).await,
    };
    Ok(n?)
}

/// The patch review as CSV: per task (its decision) or per verdict (the import format).
async fn reviews(
    db: &Db,
    study: StudyId,
    out: &mut dyn Sink,
    verdicts: bool,
) -> ServiceResult<u64> {
    use crate::engine::analysis::{states, DecidedBy, TaskState};
    let rows = crate::store::reviews::tasks(db, study).await?;
    let mut w = csv::Writer::from_writer(out);
    let mut n = 0;
    let io = |e: csv::Error| super::ServiceError::Internal(e.into());
    if verdicts {
        w.write_record(["tool", "target", "reviewer", "verdict", "note"])
            .map_err(io)?;
        for t in &rows {
            for (reviewer, verdict, note) in &t.verdicts {
                w.write_record([&t.tool, &t.target, reviewer, verdict.as_str(), note])
                    .map_err(io)?;
                n += 1;
            }
        }
    } else {
        let tasks = crate::store::analysis::review_tasks(rows.clone());
        let by_id: std::collections::HashMap<i64, &crate::store::reviews::TaskRow> =
            rows.iter().map(|t| (t.id, t)).collect();
        w.write_record([
            "tool",
            "target",
            "state",
            "status",
            "decided_by",
            "auto_reason",
            "same_as_tool",
            "verdicts",
            "note",
        ])
        .map_err(io)?;
        for (t, state) in rows.iter().zip(states(&tasks)) {
            let (state, status, by) = match state {
                TaskState::Pending => ("pending", "plausible", ""),
                TaskState::Disagreement => ("disagreement", "plausible", ""),
                TaskState::Decided { correct, by } => (
                    "decided",
                    if correct { "correct" } else { "plausible" },
                    match by {
                        DecidedBy::Auto => "auto",
                        DecidedBy::Reviewers => "reviewers",
                        DecidedBy::Admin => "admin",
                    },
                ),
            };
            let verdicts: Vec<String> = t
                .verdicts
                .iter()
                .map(|(r, v, _)| format!("{r}:{}", v.as_str()))
                .collect();
            let same_as = t
                .same_as
                .and_then(|id| by_id.get(&id))
                .map(|o| o.tool.as_str())
                .unwrap_or("");
            let auto = if t.sent_back {
                ""
            } else {
                t.auto.map(|a| a.as_str()).unwrap_or("")
            };
            w.write_record([
                t.tool.as_str(),
                t.target.as_str(),
                state,
                status,
                by,
                auto,
                same_as,
                &verdicts.join(";"),
                &t.auto_note,
            ])
            .map_err(io)?;
            n += 1;
        }
    }
    w.flush()
        .map_err(|e| super::ServiceError::Internal(e.into()))?;
    Ok(n)
}
