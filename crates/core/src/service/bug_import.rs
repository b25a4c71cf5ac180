//! Bugs from a bug dataset's checkouts (`natstudy import bugs`, the study page's zip upload):
//! the pairs read in parallel by the engine, the bugs written in one transaction (all or
//! nothing; the same bugs twice is a no-op), what was skipped said with its reason.

use std::sync::Arc;

use super::{ServiceError, ServiceResult};
use crate::store::Db;
use crate::store::{self, imports::Outcome};
use natstudy_engine::bugs::{self, archive, pairs, sources::Files, Options};
use natstudy_engine::formats::items::BugRecord;
use natstudy_vocab::ids::{StudyId, UserId};

/// What an import of bugs did.
#[derive(Debug, Clone)]
pub struct BugsImported {
    pub outcome: Outcome,
    /// The bugs taken, in the CSV's order.
    pub bugs: Vec<BugRecord>,
    /// `(bug_id, reason)` of the bugs not taken.
    pub skipped: Vec<(String, String)>,
}

impl BugsImported {
    /// The derived `bugs.jsonl` (the replication format), one record a line.
    pub fn jsonl(&self) -> String {
        let mut out = String::new();
        for b in &self.bugs {
            out.push_str(&serde_json::to_string(b).unwrap_or_default());
            out.push('\n');
        }
        out
    }

    /// What happened, in one paragraph for people: the bugs imported (or that it was done
    /// before) and each skipped bug with its reason.
    pub fn summary(&self) -> String {
        let ids: Vec<&str> = self.bugs.iter().map(|b| b.bug_id.as_str()).collect();
        let n = ids.len();
        let mut out = match self.outcome {
            Outcome::Imported { rows } => format!(
                "imported {n} bug{}{}{} ({rows} new)",
                if n == 1 { "" } else { "s" },
                if n > 0 { ": " } else { "" },
                ids.join(", ")
            ),
            Outcome::AlreadyImported => {
                format!("already imported ({n} bugs): nothing to do")
            }
        };
        if !self.skipped.is_empty() {
            out.push_str(&format!(
                "; skipped {}: {}",
                self.skipped.len(),
                self.skipped_text()
            ));
        }
        out
    }

    /// One line per skipped bug, for people: `Lang-4: a change outside any method`.
    pub fn skipped_text(&self) -> String {
        self.skipped
            .iter()
            .map(|(id, why)| format!("{id}: {why}"))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Reads the pairs of `csv_text` from `files` and imports their bugs into the study.
/// `progress` is called once per pair read.
pub async fn import_bugs(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    files: Arc<dyn Files + Send + Sync>,
    csv: (String, String),
    options: Options,
    progress: Arc<dyn Fn() + Send + Sync>,
) -> ServiceResult<BugsImported> {
    let (csv_name, csv_text) = csv;
    let pairs = pairs::parse(&csv_text, &csv_name)?;
    let imported = tokio::task::spawn_blocking(move || {
        bugs::import(files.as_ref(), &pairs, &csv_name, options, &|| progress())
    })
    .await??;
    let mut result = BugsImported {
        outcome: Outcome::AlreadyImported,
        bugs: imported.bugs,
        skipped: imported.skipped,
    };
    let jsonl = result.jsonl();
    let digest = store::imports::digest(&[&jsonl]);
    let mut report = String::new();
    if !result.skipped.is_empty() {
        report = format!("skipped {}", result.skipped_text());
        report.truncate(report.floor_char_boundary(4000));
    }
    result.outcome = store::imports::bugs(db, study, actor, &digest, &result.bugs, &report).await?;
    Ok(result)
}

/// Imports the bugs of an uploaded zip (`pairs.csv` and the checkouts it names), bounded by
/// `max_total` uncompressed bytes.
pub async fn import_bugs_zip(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    zip: Vec<u8>,
    max_total: u64,
) -> ServiceResult<BugsImported> {
    let limits = archive::Limits {
        max_entries: 100_000,
        max_total,
    };
    let a = tokio::task::spawn_blocking(move || archive::read(&zip, limits))
        .await?
        .map_err(|e| ServiceError::Invalid(format!("the zip is refused: {e}")))?;
    import_bugs(
        db,
        study,
        actor,
        Arc::new(a.files),
        (a.pairs_path, a.pairs),
        Options::default(),
        Arc::new(|| {}),
    )
    .await
}
