//! Export downloads for staff: streamed as the database yields rows.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use super::AppState;

/// A `Write` that forwards chunks to the response body.
struct ChannelWriter(tokio::sync::mpsc::UnboundedSender<Result<Vec<u8>, std::io::Error>>);

impl std::io::Write for ChannelWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .send(Ok(buf.to_vec()))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "client went away"))?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `GET /studies/{id}/export/{what}` — dataset.jsonl, dataset.csv, votes.csv, matrix.csv, survey.json.
/// Reached only through the page guard (admins and researchers).
#[tracing::instrument(skip(state))]
pub async fn export(
    State(state): State<AppState>,
    Path((study, what)): Path<(i64, String)>,
) -> Response {
    let (kind, mime) = match what.as_str() {
        "dataset.jsonl" => ("dataset-jsonl", "application/x-ndjson"),
        "dataset.csv" => ("dataset-csv", "text/csv"),
        "votes.csv" => ("votes", "text/csv"),
        "matrix.csv" => ("matrix", "text/csv"),
        "survey.json" => ("survey", "application/json"),
        _ => return (StatusCode::NOT_FOUND, "unknown export").into_response(),
    };
    if crate::store::monitor::settings(&state.db, study)
        .await
        .is_err()
    {
        return (StatusCode::NOT_FOUND, "no such study").into_response();
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let db = state.db.clone();
    tokio::spawn(async move {
        let err_tx = tx.clone();
        let mut w = ChannelWriter(tx);
        let res = match kind {
            "dataset-jsonl" => crate::store::export::dataset(&db, study, false, &mut w).await,
            "dataset-csv" => crate::store::export::dataset(&db, study, true, &mut w).await,
            "votes" => crate::store::export::votes_table(&db, study, &mut w, false).await,
            "matrix" => crate::store::export::matrix(&db, study, &mut w).await,
            _ => crate::store::export::survey(&db, study, &mut w).await,
        };
        if let Err(e) = res {
            tracing::error!(error = %e, "export failed");
            let _ = err_tx.send(Err(std::io::Error::other(e.to_string())));
        }
    });
    let stream = tokio_stream_from(rx);
    Response::builder()
        .header(header::CONTENT_TYPE, mime)
        .header(
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"study-{study}-{what}\""),
        )
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

fn tokio_stream_from(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<Result<Vec<u8>, std::io::Error>>,
) -> impl futures_util::Stream<Item = Result<Vec<u8>, std::io::Error>> {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}
