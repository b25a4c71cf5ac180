//! Exports: which table goes out, under which download name and media type, written to a sink
//! as the database yields rows (the web's sink holds the exporter back for a slow client).

use super::{ServiceError, ServiceResult};
use crate::store::export;
/// Where an export streams its bytes (the channel to a web client, a file).
pub use crate::store::export::{SafeCsv, Sink};
use crate::store::Db;
use natstudy_engine::formats::replication;
use natstudy_vocab::ids::StudyId;

/// A table a study exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Export {
    /// The labelled dataset, JSON lines or CSV.
    Dataset { csv: bool },
    /// The long vote table (crowd ids only when asked): the votes that count, or (`pilot`)
    /// only the pilot participants'.
    Votes { external_ids: bool, pilot: bool },
    /// The item × annotator matrix.
    Matrix,
    /// `survey.json` as the published package's `rq1.py` reads it (`all_items`: every rated
    /// item, not only those with five votes).
    Survey { all_items: bool },
    /// The participants of `survey.json`: `participant` (its `S<n>`), `code` (natstudy's).
    SurveyParticipants { all_items: bool },
    /// The patch review, one row per task: its decision, who made it and the verdicts.
    Reviews,
    /// The reviewers' verdicts in the import format (`tool,target,reviewer,verdict,note`).
    ReviewVerdicts,
    /// The repair tools' results as `import npr` reads them (`tool,target,status`).
    Npr,
    /// The cross-entropies as `import ce` reads them (`model,target,cross_entropy`).
    Ce,
    /// The participants table: crowd ids, outcome, code, time, gold, screener answers; the
    /// study's participants, or (`pilot`) only its pilot participants.
    Participants { pilot: bool },
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
                    pilot: false,
                },
                "text/csv",
            ),
            "pilot-votes.csv" => (
                Export::Votes {
                    external_ids: false,
                    pilot: true,
                },
                "text/csv",
            ),
            "matrix.csv" => (Export::Matrix, "text/csv"),
            "survey.json" => (Export::Survey { all_items: false }, "application/json"),
            "survey-participants.csv" => {
                (Export::SurveyParticipants { all_items: false }, "text/csv")
            }
            "reviews.csv" => (Export::Reviews, "text/csv"),
            "review_verdicts.csv" => (Export::ReviewVerdicts, "text/csv"),
            "npr_results.csv" => (Export::Npr, "text/csv"),
            "ce_scores.csv" => (Export::Ce, "text/csv"),
            "participants.csv" => (Export::Participants { pilot: false }, "text/csv"),
            "pilot-participants.csv" => (Export::Participants { pilot: true }, "text/csv"),
            _ => return None,
        })
    }

    /// An export laid out whole before its first byte (so a refusal is an answer, not a
    /// download cut short).
    pub fn laid_out(self) -> bool {
        matches!(
            self,
            Export::Survey { .. } | Export::SurveyParticipants { .. }
        )
    }
}

/// `survey.json` as the published package's `rq1.py` reads it: see
/// [`natstudy_engine::formats::replication`]. Refused (`Invalid`, naming the items) when the raters do
/// not fit its five columns.
pub async fn survey(
    db: &Db,
    study: StudyId,
    options: replication::Options,
) -> ServiceResult<replication::Layout> {
    let votes = export::survey_votes(db, study).await?;
    let layout = tokio::task::spawn_blocking(move || replication::lay_out(votes, options))
        .await?
        .map_err(|e| ServiceError::Invalid(e.to_string()))?;
    // an empty file without a word is no answer: say why no item is in it
    if layout.items == 0 && !layout.left_out.is_empty() {
        let mut counts: Vec<usize> = layout.left_out.iter().map(|(_, n)| *n).collect();
        counts.sort_unstable();
        counts.dedup();
        let counts: Vec<String> = counts.iter().map(ToString::to_string).collect();
        return Err(ServiceError::Invalid(format!(
            "survey.json holds the items with exactly {} votes (the published rq1.py reads {} \
             raters an item), and none of this study's {} rated items has that many (they have \
             {} votes): ask for every rated item (export --all-items), or use the votes table \
             (--what votes)",
            replication::RATERS,
            replication::RATERS,
            layout.left_out.len(),
            counts.join(" or ")
        )));
    }
    Ok(layout)
}

/// The mapping beside `survey.json`: `participant,code`, by number; the rows written.
pub fn survey_participants(layout: &replication::Layout, out: &mut dyn Sink) -> ServiceResult<u64> {
    let mut w = SafeCsv::new(out);
    let io = |e: csv::Error| ServiceError::Internal(e.into());
    w.write_record(["participant", "code"]).map_err(io)?;
    for (number, code) in &layout.participants {
        w.write_record([number, code]).map_err(io)?;
    }
    w.flush().map_err(|e| ServiceError::Internal(e.into()))?;
    Ok(layout.participants.len() as u64)
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
        Export::Votes {
            external_ids,
            pilot,
        } => export::votes_table(db, study, out, external_ids, pilot).await,
        Export::Matrix => export::matrix(db, study, out).await,
        Export::Survey { all_items } => {
            let layout = survey(db, study, replication::Options { all_items }).await?;
            out.write_all(layout.json.as_bytes())
                .map_err(|e| ServiceError::Internal(e.into()))?;
            return Ok(layout.votes as u64);
        }
        Export::SurveyParticipants { all_items } => {
            let layout = survey(db, study, replication::Options { all_items }).await?;
            return survey_participants(&layout, out);
        }
        Export::Reviews => return reviews(db, study, out, false).await,
        Export::ReviewVerdicts => return reviews(db, study, out, true).await,
        Export::Npr => crate::store::export_results::npr(db, study, out).await,
        Export::Ce => crate::store::export_results::ce(db, study, out).await,
        Export::Participants { pilot } => {
            return super::participants::write(db, study, out, pilot).await
        }
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
    use natstudy_engine::analysis::{states, DecidedBy, TaskState};
    let rows = crate::store::reviews::tasks(db, study).await?;
    let mut w = crate::store::export::SafeCsv::new(out);
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
        let tasks = crate::store::analysis::review_tasks(&rows);
        let by_id: std::collections::HashMap<
            natstudy_vocab::ids::ReviewTaskId,
            &crate::store::reviews::TaskRow,
        > = rows.iter().map(|t| (t.id, t)).collect();
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

/// Which items the benchmark export takes.
#[derive(Debug, Clone, Default)]
pub struct BenchmarkFilter {
    /// Naturalness categories (`natural`, `likely_natural`, `likely_unnatural`, `unnatural`,
    /// `unrated`); empty: all.
    pub categories: Vec<String>,
    /// Only items `natstudy verify` found to compile (and to test as the original).
    pub verified: bool,
}

impl BenchmarkFilter {
    /// Parses `natural,likely-natural,…` (dashes or underscores).
    pub fn categories(list: &str) -> ServiceResult<Vec<String>> {
        const KNOWN: [&str; 5] = [
            "natural",
            "likely_natural",
            "likely_unnatural",
            "unnatural",
            "unrated",
        ];
        list.split(',')
            .map(|c| c.trim().replace('-', "_"))
            .filter(|c| !c.is_empty())
            .map(|c| {
                if KNOWN.contains(&c.as_str()) {
                    Ok(c)
                } else {
                    Err(super::ServiceError::Invalid(format!(
                        "unknown category {c} (one of {})",
                        KNOWN.join(", ")
                    )))
                }
            })
            .collect()
    }
}

/// Writes the benchmark into `dir` (absent or empty): one folder per item with its
/// transformed buggy file, the transformed fixed file when known and `meta.json`, and
/// `index.jsonl`. Returns the folders written. The files are written on a blocking thread,
/// fed through a bounded channel while the items are read: no file system call on the async
/// threads, and no more than a few items in memory at once.
pub async fn benchmark(
    db: &Db,
    study: StudyId,
    dir: &std::path::Path,
    filter: &BenchmarkFilter,
) -> ServiceResult<u64> {
    use natstudy_engine::formats::benchmark;
    let internal = |e: anyhow::Error| super::ServiceError::Internal(e);
    let target = dir.to_owned();
    let fresh = tokio::task::spawn_blocking(move || -> std::io::Result<bool> {
        if target.exists()
            && std::fs::read_dir(&target)
                .map(|mut d| d.next().is_some())
                .unwrap_or(true)
        {
            return Ok(false);
        }
        std::fs::create_dir_all(&target)?;
        Ok(true)
    })
    .await?
    .map_err(|e| internal(e.into()))?;
    if !fresh {
        return Err(super::ServiceError::Invalid(format!(
            "{} is not an empty directory: give a new one",
            dir.display()
        )));
    }
    let data = crate::store::analysis::study_data(db, study).await?;
    let options = natstudy_engine::analysis::Options {
        bootstrap: 0,
        ..Default::default()
    };
    let report = tokio::task::spawn_blocking(move || {
        natstudy_engine::analysis::report_with(&data, &options)
    })
    .await?;
    let results: std::collections::HashMap<&str, &natstudy_engine::analysis::ItemResult> = report
        .item_results
        .iter()
        .map(|r| (r.key.as_str(), r))
        .collect();
    let mut rnc: std::collections::HashMap<&str, std::collections::BTreeMap<&str, f64>> =
        std::collections::HashMap::new();
    for (model, m) in &report.rnc {
        for row in &m.ranking {
            rnc.entry(row.key.as_str())
                .or_default()
                .insert(model.as_str(), row.rnc);
        }
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<benchmark::Entry>(32);
    let writer = tokio::task::spawn_blocking({
        let dir = dir.to_owned();
        move || write_entries(&dir, rx)
    });
    let mut taken = std::collections::HashSet::new();
    let streamed = crate::store::checks::benchmark(db, study, async |bug, item| {
        let result = results.get(item.key.as_str());
        let category = result.and_then(|r| r.category).map(|c| c.as_str());
        if !filter.categories.is_empty()
            && !filter
                .categories
                .iter()
                .any(|c| Some(c.as_str()) == category || (c == "unrated" && category.is_none()))
        {
            return Ok(());
        }
        if filter.verified && !item.check.as_ref().is_some_and(|c| c.verified()) {
            return Ok(());
        }
        let b = benchmark::Bug {
            key: &bug.key,
            project: &bug.project,
            file_path: &bug.file_path,
            method_name: &bug.method_name,
            method: &bug.method,
            file_source: bug.file_source.as_deref(),
            encoding: bug.encoding.as_deref(),
        };
        let i = benchmark::Item {
            key: &item.key,
            operator: &item.operator,
            level: &item.level,
            summary: &item.summary,
            source: &item.source,
            buggy_lines: &item.buggy_lines,
            line_map: item.line_map.as_ref(),
            fixed_source: item.fixed_source.as_deref(),
            category,
            votes: result.map_or(0, |r| r.votes),
            unnatural_votes: result.map_or(0, |r| r.unnatural_votes),
            rnc: rnc.get(item.key.as_str()).cloned().unwrap_or_default(),
            verification: item.check.as_ref(),
        };
        let e = benchmark::entry(&b, &i, &mut taken);
        // a closed channel means the writer failed: its error is the one reported
        tx.send(e)
            .await
            .map_err(|_| anyhow::anyhow!("the benchmark's writer stopped"))
    })
    .await;
    drop(tx);
    let written = writer.await?.map_err(internal)?;
    streamed.map_err(internal)?;
    Ok(written)
}

/// The export's writer (a blocking thread): each entry's files and its line of `index.jsonl`,
/// until the channel closes. Returns the entries written.
fn write_entries(
    dir: &std::path::Path,
    mut rx: tokio::sync::mpsc::Receiver<natstudy_engine::formats::benchmark::Entry>,
) -> anyhow::Result<u64> {
    use anyhow::Context as _;
    use std::io::Write as _;
    let index_path = dir.join("index.jsonl");
    let mut index = std::io::BufWriter::new(
        std::fs::File::create(&index_path)
            .with_context(|| format!("cannot create {}", index_path.display()))?,
    );
    let mut written = 0u64;
    while let Some(e) = rx.blocking_recv() {
        for (path, text) in &e.files {
            let p = dir.join(&e.dir).join(path);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("cannot create {}", parent.display()))?;
            }
            std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))?;
        }
        serde_json::to_writer(&mut index, &e.index)?;
        index.write_all(b"\n")?;
        written += 1;
    }
    index
        .flush()
        .with_context(|| format!("cannot write {}", index_path.display()))?;
    Ok(written)
}

/// The study's items in the interchange formats: `bugs.jsonl` into `bugs_out`,
/// `transformations.jsonl` into `items_out`; the items written.
pub async fn items(
    db: &Db,
    study: StudyId,
    bugs_out: &mut dyn Sink,
    items_out: &mut dyn Sink,
) -> ServiceResult<u64> {
    Ok(export::items(db, study, bugs_out, items_out).await?)
}

/// The `percent` most natural transformations by the RNC of `model`, most natural first, as
/// JSON lines with their sources (and the training pair, transformed buggy → transformed
/// fixed, where the fix followed): the rows written.
pub async fn top_natural(
    db: &Db,
    study: StudyId,
    model: &str,
    percent: f64,
    out: &mut dyn Sink,
) -> ServiceResult<u64> {
    use natstudy_engine::analysis;
    use std::collections::HashMap;
    let data = crate::store::analysis::study_data(db, study).await?;
    let options = analysis::Options {
        bootstrap: 0,
        ..Default::default()
    };
    let report = tokio::task::spawn_blocking(move || analysis::report_with(&data, &options))
        .await
        .map_err(|e| ServiceError::Internal(e.into()))?;
    let Some(m) = report.rnc.get(model) else {
        return Err(ServiceError::Invalid(format!(
            "no cross-entropy scores of model {model} in this study"
        )));
    };
    let sources: HashMap<String, String> = crate::store::analysis::sources(db, study)
        .await?
        .into_iter()
        .collect();
    let fixed: HashMap<String, String> = crate::store::analysis::fixed_sources(db, study)
        .await?
        .into_iter()
        .collect();
    let items: HashMap<&str, &analysis::ItemResult> = report
        .item_results
        .iter()
        .map(|r| (r.key.as_str(), r))
        .collect();
    let top = analysis::most_natural(m, percent);
    let io = |e: std::io::Error| ServiceError::Internal(e.into());
    for row in top {
        let it = items.get(row.key.as_str());
        let bug = it.map(|i| i.bug.clone()).unwrap_or_default();
        // a training pair (transformed buggy → transformed fixed) when the fix followed
        let transformed_fixed = fixed.get(&row.key);
        let rec = serde_json::json!({
            "id": row.key,
            "bug_id": bug,
            "operator": it.map(|i| i.operator.clone()),
            "level": it.map(|i| i.level),
            "category": row.category,
            "rnc": row.rnc,
            "original": sources.get(&bug),
            "transformed": sources.get(&row.key),
            "fixed": fixed.get(&bug),
            "transformed_fixed": transformed_fixed,
            "pair": transformed_fixed.map(|f| serde_json::json!({
                "buggy": sources.get(&row.key),
                "fixed": f,
            })),
        });
        serde_json::to_writer(&mut *out, &rec).map_err(|e| ServiceError::Internal(e.into()))?;
        out.write_all(b"\n").map_err(io)?;
        out.pace().await.map_err(io)?;
    }
    Ok(top.len() as u64)
}
