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
    };
    Ok(n?)
}
