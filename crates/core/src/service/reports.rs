//! Reports: the study's analysis as the results page shows it (tables and charts) and its
//! charts as downloads, computed once per change of the study's data and shared.
//!
//! Every write that changes what the report reads moves the study's `data_version` on (in the
//! writer's transaction). [`ReportCache`] keeps the last report of each study with the version it
//! was computed at: a request at the same version gets it at once; the first request after a
//! change starts one computation in the background (later requests join it) and waits for it a
//! short while, after which it is answered with the previous report, marked as being updated.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use natstudy_types::ResultsView;
use tokio::sync::watch;

use super::{ServiceError, ServiceResult};
use crate::store;
use crate::store::Db;
use natstudy_engine::{analysis, plots};
use natstudy_vocab::ids::StudyId;

/// Bootstrap replicates of the results page.
pub const PAGE_BOOTSTRAP: usize = 1000;

/// A study's report as computed at one data version.
#[derive(Debug)]
pub struct Computed {
    pub version: i64,
    /// The study's name (the paper bundle's title).
    pub study: String,
    pub view: ResultsView,
}

type Outcome = Option<Result<Arc<Computed>, String>>;

/// One study's entry: the last finished report and the computation under way, if any.
#[derive(Default)]
struct Entry {
    done: Option<Arc<Computed>>,
    /// The version being computed and where its outcome will appear.
    running: Option<(i64, watch::Receiver<Outcome>)>,
    used: u64,
}

/// Reports by study, computed once per data version (see the module's text).
pub struct ReportCache {
    entries: Mutex<HashMap<StudyId, Entry>>,
    computed: AtomicU64,
    clock: AtomicU64,
    /// How many studies' reports are kept (the least recently used goes first).
    pub capacity: usize,
    /// How long a request waits for a new computation before the previous report is served.
    pub wait: Duration,
}

impl Default for ReportCache {
    fn default() -> Self {
        ReportCache {
            entries: Mutex::default(),
            computed: AtomicU64::new(0),
            clock: AtomicU64::new(0),
            capacity: 32,
            wait: Duration::from_secs(5),
        }
    }
}

impl std::fmt::Debug for ReportCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReportCache")
            .field("computed", &self.computed())
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl ReportCache {
    /// How many reports this cache has computed.
    pub fn computed(&self) -> u64 {
        self.computed.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<StudyId, Entry>> {
        // a panic while the lock was held leaves plain data behind: keep using it
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The study's report at its current data version (or, while that is computed for longer
    /// than `wait`, the previous one).
    pub async fn get(self: &Arc<Self>, db: &Db, study: StudyId) -> ServiceResult<Arc<Computed>> {
        let version = store::studies::data_version(db, study).await?;
        let (previous, mut rx) = {
            let mut entries = self.lock();
            let tick = self.clock.fetch_add(1, Ordering::Relaxed);
            let entry = entries.entry(study).or_default();
            entry.used = tick;
            if let Some(done) = entry.done.as_ref().filter(|d| d.version >= version) {
                return Ok(done.clone());
            }
            let rx = match &entry.running {
                // join the computation under way, unless its task is gone (then start anew)
                Some((v, rx)) if *v >= version && rx.has_changed().is_ok() => rx.clone(),
                _ => {
                    let (tx, rx) = watch::channel(None);
                    entry.running = Some((version, rx.clone()));
                    self.spawn(db.clone(), study, version, tx);
                    rx
                }
            };
            let previous = entry.done.clone();
            self.evict(&mut entries);
            (previous, rx)
        };
        let outcome = async {
            loop {
                if let Some(o) = rx.borrow_and_update().clone() {
                    return Some(o);
                }
                if rx.changed().await.is_err() {
                    return None;
                }
            }
        };
        let waited = match &previous {
            Some(_) => tokio::time::timeout(self.wait, outcome)
                .await
                .ok()
                .flatten(),
            None => outcome.await,
        };
        match (waited, previous) {
            (Some(Ok(c)), _) => Ok(c),
            (Some(Err(e)), _) => Err(ServiceError::Internal(anyhow::anyhow!(e))),
            (None, Some(p)) => Ok(p),
            (None, None) => Err(ServiceError::Internal(anyhow::anyhow!(
                "the report computation stopped"
            ))),
        }
    }

    /// Computes the study's report at `version` in the background (a request that goes away
    /// does not cancel it) and publishes the outcome.
    fn spawn(self: &Arc<Self>, db: Db, study: StudyId, version: i64, tx: watch::Sender<Outcome>) {
        let cache = self.clone();
        tokio::spawn(async move {
            let outcome = compute(&db, study, version).await.map(Arc::new);
            cache.computed.fetch_add(1, Ordering::Relaxed);
            {
                let mut entries = cache.lock();
                let entry = entries.entry(study).or_default();
                if entry.running.as_ref().is_some_and(|(v, _)| *v == version) {
                    entry.running = None;
                }
                if let Ok(c) = &outcome {
                    if entry.done.as_ref().is_none_or(|d| d.version < c.version) {
                        entry.done = Some(c.clone());
                    }
                }
            }
            if let Err(e) = &outcome {
                tracing::error!(error = %e, %study, "cannot compute the study's report");
            }
            let _ = tx.send(Some(outcome.map_err(|e| e.to_string())));
        });
    }

    /// Drops the least recently used studies beyond the capacity (never one being computed).
    fn evict(&self, entries: &mut HashMap<StudyId, Entry>) {
        while entries.len() > self.capacity.max(1) {
            let Some(oldest) = entries
                .iter()
                .filter(|(_, e)| e.running.is_none())
                .min_by_key(|(_, e)| e.used)
                .map(|(s, _)| *s)
            else {
                break;
            };
            entries.remove(&oldest);
        }
    }
}

/// The analysis of the study's data: headline, tables and charts.
async fn compute(db: &Db, study: StudyId, version: i64) -> ServiceResult<Computed> {
    let name = store::survey::study_settings(db, study).await?.name;
    if super::designs::is_designed(db, study).await? {
        // a study of another design: its questions' tables and figures
        let report = super::designs::report_json(db, study, false).await?;
        let responses = report["responses"].as_i64().unwrap_or(0);
        let (report, figures) = tokio::task::spawn_blocking(move || {
            let figures = plots::question_figures(&report);
            (report, figures)
        })
        .await?;
        return Ok(Computed {
            version,
            study: name.clone(),
            view: ResultsView {
                headline: crate::present::questions::headline(&name, &report),
                tables: crate::present::questions::tables(&report),
                figures: crate::present::wire::figures(
                    figures.map_err(|e| ServiceError::Internal(e.into()))?,
                ),
                votes: responses,
                analysed_votes: responses,
            },
        });
    }
    let data = store::analysis::study_data(db, study).await?;
    let votes = data.votes.len() as i64;
    let study_name = name.clone();
    let (headline, tables, figures, analysed_votes) = tokio::task::spawn_blocking(move || {
        let options = analysis::Options {
            bootstrap: PAGE_BOOTSTRAP,
            ..Default::default()
        };
        let report = analysis::report_with(&data, &options);
        let figures = plots::report_figures(&report);
        (
            crate::present::text::headline(&name, &report),
            crate::present::tables::tables(&report),
            figures,
            report.votes as i64,
        )
    })
    .await?;
    Ok(Computed {
        version,
        study: study_name,
        view: ResultsView {
            headline,
            tables,
            figures: crate::present::wire::figures(
                figures.map_err(|e| ServiceError::Internal(e.into()))?,
            ),
            votes,
            analysed_votes,
        },
    })
}

/// The study's analysis with the command line's `options` and its figures, computed off the
/// async threads; `include_excluded` puts excluded participants' votes back.
pub async fn analyse(
    db: &Db,
    study: StudyId,
    include_excluded: bool,
    options: analysis::Options,
) -> ServiceResult<(
    analysis::Report,
    Result<Vec<plots::Figure>, plots::PlotError>,
)> {
    let data = store::analysis::study_data_with(db, study, include_excluded).await?;
    tokio::task::spawn_blocking(move || {
        let report = analysis::report_with(&data, &options);
        let figures = plots::report_figures(&report);
        (report, figures)
    })
    .await
    .map_err(|e| ServiceError::Internal(e.into()))
}

/// The analysis of the study's current data: headline, tables and charts.
pub async fn results_view(
    cache: &Arc<ReportCache>,
    db: &Db,
    study: StudyId,
) -> ServiceResult<ResultsView> {
    Ok(cache.get(db, study).await?.view.clone())
}

/// One figure of the results as a download: `ID.svg`, `ID.pdf` (vector, the font embedded) or
/// `ID.png` (300 dpi of its print size). `None` when the study has no such figure (yet).
pub async fn chart(
    cache: &Arc<ReportCache>,
    db: &Db,
    study: StudyId,
    file: &str,
) -> ServiceResult<Option<(Vec<u8>, &'static str)>> {
    let Some((stem, format)) = file.rsplit_once('.') else {
        return Ok(None);
    };
    let mime = match format {
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        "png" => "image/png",
        _ => return Ok(None),
    };
    let report = cache.get(db, study).await?;
    let Some(figure) = report.view.figures.iter().find(|f| f.id == stem).cloned() else {
        return Ok(None);
    };
    let format = format.to_owned();
    let drawn =
        tokio::task::spawn_blocking(move || super::paper::figure_file(&figure, &format)).await??;
    Ok(drawn.map(|b| (b, mime)))
}

/// One table of the results as a download: `ID.csv` or `ID.tex` (booktabs). `None` when the
/// study has no such table (yet).
pub async fn table(
    cache: &Arc<ReportCache>,
    db: &Db,
    study: StudyId,
    file: &str,
) -> ServiceResult<Option<(Vec<u8>, &'static str)>> {
    let Some((stem, format)) = file.rsplit_once('.') else {
        return Ok(None);
    };
    let report = cache.get(db, study).await?;
    let Some(t) = report.view.tables.iter().find(|t| t.id == stem) else {
        return Ok(None);
    };
    Ok(match format {
        "csv" => Some((super::paper::table_csv(t)?, "text/csv; charset=utf-8")),
        "tex" => Some((
            crate::present::latex::table_latex(t).into_bytes(),
            "application/x-tex; charset=utf-8",
        )),
        _ => None,
    })
}

/// Every table and figure of the results and `report.tex`, as one zip.
pub async fn paper_zip(
    cache: &Arc<ReportCache>,
    db: &Db,
    study: StudyId,
) -> ServiceResult<Vec<u8>> {
    let report = cache.get(db, study).await?;
    tokio::task::spawn_blocking(move || {
        let files = super::paper::files(&report.study, &report.view.tables, &report.view.figures)?;
        super::paper::zip(&files)
    })
    .await?
}
