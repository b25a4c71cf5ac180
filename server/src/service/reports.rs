//! Reports: the study's analysis as the results page shows it (tables and charts) and its
//! charts as downloads. CPU work runs off the async threads.

use app::model::ResultsView;

use super::{ServiceError, ServiceResult};
use crate::db::Db;
use crate::engine::{analysis, plots};
use crate::ids::StudyId;
use crate::store;

/// Bootstrap replicates of the results page (a short run keeps the page quick).
pub const PAGE_BOOTSTRAP: usize = 200;

/// The analysis of the study's current votes: headline, tables and charts.
pub async fn results_view(db: &Db, study: StudyId) -> ServiceResult<ResultsView> {
    let name = store::participation::study_settings(db, study).await?.name;
    let data = store::analysis::study_data(db, study).await?;
    let votes = data.votes.len() as i64;
    let (headline, tables, charts) = tokio::task::spawn_blocking(move || {
        let options = analysis::Options {
            bootstrap: PAGE_BOOTSTRAP,
            ..Default::default()
        };
        let report = analysis::report_with(&data, &options);
        let charts = plots::report_charts(&report, &data);
        (
            crate::present::headline(&name, &report),
            crate::present::tables(&report),
            charts,
        )
    })
    .await?;
    Ok(ResultsView {
        headline,
        tables,
        charts: charts.map_err(|e| ServiceError::Internal(e.into()))?,
        votes,
    })
}

/// One chart of the results as a download: `NAME.svg`, or `NAME.png` drawn at twice the size
/// with the bundled font. `None` when the study has no such chart (yet).
pub async fn chart(
    db: &Db,
    study: StudyId,
    file: &str,
) -> ServiceResult<Option<(Vec<u8>, &'static str)>> {
    let (stem, png) = match (file.strip_suffix(".svg"), file.strip_suffix(".png")) {
        (Some(s), _) => (s.to_owned(), false),
        (_, Some(s)) => (s.to_owned(), true),
        _ => return Ok(None),
    };
    let data = store::analysis::study_data(db, study).await?;
    let drawn = tokio::task::spawn_blocking(move || {
        let options = analysis::Options {
            bootstrap: 0,
            ..Default::default()
        };
        let report = analysis::report_with(&data, &options);
        let charts = plots::report_charts(&report, &data)?;
        let Some((_, svg)) = charts
            .into_iter()
            .find(|(n, _)| *n == format!("{stem}.svg"))
        else {
            return Ok(None);
        };
        if png {
            plots::svg_to_png(&stem, &svg, 2.0).map(|b| Some((b, "image/png")))
        } else {
            Ok(Some((svg.into_bytes(), "image/svg+xml")))
        }
    })
    .await?;
    drawn.map_err(|e| ServiceError::Internal(e.into()))
}
