//! Export downloads for staff: streamed as the database yields rows.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use natstudy_vocab::ids::StudyId;
use tower_sessions::Session;

use super::AppState;

type Chunk = Result<Vec<u8>, std::io::Error>;

/// Bytes buffered before a chunk goes to the client.
const CHUNK: usize = 64 * 1024;
/// Chunks in flight: with a slow client the export waits once this many are queued, so an
/// export holds at most about `CHUNK * (IN_FLIGHT + 1)` bytes whatever its size.
const IN_FLIGHT: usize = 8;

/// Exports running at once, and how long a client may stall one before it is cut off (its
/// database connection and slot go back).
#[derive(Debug, Clone)]
pub struct ExportLimits {
    pub stall: std::time::Duration,
    slots: std::sync::Arc<tokio::sync::Semaphore>,
}

impl ExportLimits {
    pub fn new(concurrent: usize, stall: std::time::Duration) -> ExportLimits {
        ExportLimits {
            stall,
            slots: std::sync::Arc::new(tokio::sync::Semaphore::new(concurrent.max(1))),
        }
    }
}

impl Default for ExportLimits {
    fn default() -> Self {
        ExportLimits::new(2, std::time::Duration::from_secs(30))
    }
}

/// A sink that buffers rows and hands full chunks to the response body through a bounded
/// channel; `pace` waits for room.
struct ChannelSink {
    buf: Vec<u8>,
    tx: tokio::sync::mpsc::Sender<Chunk>,
    /// How long a send may wait for the client before the export gives up.
    stall: std::time::Duration,
}

impl std::io::Write for ChannelSink {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl ChannelSink {
    async fn send_buffer(&mut self) -> std::io::Result<()> {
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
        match tokio::time::timeout(self.stall, self.tx.send(Ok(chunk))).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "client went away",
            )),
            Err(_) => Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "client stalled: export cut off",
            )),
        }
    }
}

impl natstudy_core::service::exports::Sink for ChannelSink {
    fn pace(&mut self) -> futures_util::future::BoxFuture<'_, std::io::Result<()>> {
        Box::pin(async move {
            if self.buf.len() >= CHUNK {
                self.send_buffer().await?;
            }
            Ok(())
        })
    }
}

/// `GET /studies/{id}/export/{what}` — dataset.jsonl, dataset.csv, votes.csv, matrix.csv, survey.json
/// (and survey-participants.csv),
/// reviews.csv, review_verdicts.csv, npr_results.csv, ce_scores.csv.
/// Staff of the study only, checked here on the decoded id (the page guard checks again).
#[tracing::instrument(skip(state, session))]
pub async fn export(
    State(state): State<AppState>,
    session: Session,
    Path((study, what)): Path<(StudyId, String)>,
) -> Response {
    if let Err(refused) = super::access::staff_of(&state, &session, study).await {
        return refused;
    }
    let Some((kind, mime)) = natstudy_core::service::exports::Export::download(&what) else {
        return (StatusCode::NOT_FOUND, "unknown export").into_response();
    };
    if !natstudy_core::service::studies::exists(&state.db, study)
        .await
        .unwrap_or(false)
    {
        return (StatusCode::NOT_FOUND, "no such study").into_response();
    }
    let Ok(slot) = state.exports.slots.clone().try_acquire_owned() else {
        return busy();
    };
    if kind.laid_out() {
        // laid out whole first: a study that does not fit the layout gets its reason
        let mut body = Vec::new();
        let written =
            natstudy_core::service::exports::write(&state.db, study, kind, &mut body).await;
        drop(slot);
        return match written {
            Ok(_) => download(mime, &format!("study-{study}-{what}"), Body::from(body)),
            Err(natstudy_core::service::ServiceError::Invalid(why)) => {
                (StatusCode::UNPROCESSABLE_ENTITY, why).into_response()
            }
            Err(e) => {
                tracing::warn!(error = %e, "export failed");
                (StatusCode::INTERNAL_SERVER_ERROR, "export failed").into_response()
            }
        };
    }
    let (tx, rx) = tokio::sync::mpsc::channel(IN_FLIGHT);
    let db = state.db.clone();
    let stall = state.exports.stall;
    tokio::spawn(async move {
        let _slot = slot;
        let mut w = ChannelSink {
            buf: Vec::with_capacity(CHUNK),
            tx: tx.clone(),
            stall,
        };
        let res = natstudy_core::service::exports::write(&db, study, kind, &mut w).await;
        let res = match res {
            Ok(_) => w.send_buffer().await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = res {
            tracing::warn!(error = %e, "export ended early");
            let _ = tx.try_send(Err(std::io::Error::other("export failed")));
        }
    });
    let stream = tokio_stream_from(rx);
    download(
        mime,
        &format!("study-{study}-{what}"),
        Body::from_stream(stream),
    )
}

/// A download's answer: its media type, its file name, its body.
fn download(mime: &str, name: &str, body: Body) -> Response {
    Response::builder()
        .header(header::CONTENT_TYPE, mime)
        .header(header::CONTENT_DISPOSITION, attachment(name))
        .body(body)
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// `GET /studies/{id}/charts/{id}.svg|pdf|png` — a figure of the results, to download. Staff of
/// the study only, checked here on the decoded id. PDFs embed the bundled font; PNGs are drawn
/// at 300 dpi of the figure's print size with it.
#[tracing::instrument(skip(state, session))]
pub async fn chart(
    State(state): State<AppState>,
    session: Session,
    Path((study, file)): Path<(StudyId, String)>,
) -> Response {
    result_download(&state, &session, study, &file, ResultFile::Figure).await
}

/// `GET /studies/{id}/tables/{id}.csv|tex` — a table of the results, to download. Staff of the
/// study only, checked here on the decoded id.
#[tracing::instrument(skip(state, session))]
pub async fn table(
    State(state): State<AppState>,
    session: Session,
    Path((study, file)): Path<(StudyId, String)>,
) -> Response {
    result_download(&state, &session, study, &file, ResultFile::Table).await
}

/// Which of the results a download is.
#[derive(Debug, Clone, Copy)]
enum ResultFile {
    Figure,
    Table,
}

/// A figure or table of the study's results, for its staff.
async fn result_download(
    state: &AppState,
    session: &Session,
    study: StudyId,
    file: &str,
    kind: ResultFile,
) -> Response {
    if let Err(refused) = super::access::staff_of(state, session, study).await {
        return refused;
    }
    // drawing a PDF or a 300-dpi PNG is CPU work: it takes an export slot like the exports
    let drawn = matches!(kind, ResultFile::Figure) && !file.ends_with(".svg");
    let _slot = if drawn {
        match state.exports.slots.clone().try_acquire_owned() {
            Ok(slot) => Some(slot),
            Err(_) => return busy(),
        }
    } else {
        None
    };
    let (found, missing) = match kind {
        ResultFile::Figure => (
            natstudy_core::service::reports::chart(&state.reports, &state.db, study, file).await,
            "no such figure (yet)",
        ),
        ResultFile::Table => (
            natstudy_core::service::reports::table(&state.reports, &state.db, study, file).await,
            "no such table (yet)",
        ),
    };
    result_file(study, file, found, missing)
}

/// `GET /studies/{id}/paper.zip` — every table and figure of the results in every form, and
/// `report.tex`. Staff of the study only, checked here on the decoded id.
#[tracing::instrument(skip(state, session))]
pub async fn paper_zip(
    State(state): State<AppState>,
    session: Session,
    Path(study): Path<StudyId>,
) -> Response {
    if let Err(refused) = super::access::staff_of(&state, &session, study).await {
        return refused;
    }
    // every figure drawn in three forms: CPU work, bounded by the export slots
    let Ok(_slot) = state.exports.slots.clone().try_acquire_owned() else {
        return busy();
    };
    let zipped = natstudy_core::service::reports::paper_zip(&state.reports, &state.db, study).await;
    result_file(
        study,
        "paper.zip",
        zipped.map(|b| Some((b, "application/zip"))),
        "",
    )
}

/// The answer when every export slot (`--max-exports`) is taken.
fn busy() -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::RETRY_AFTER, "10")],
        "other exports are running: try again in a few seconds",
    )
        .into_response()
}

/// A file of the results as an attachment named after the study, or why there is none.
fn result_file(
    study: StudyId,
    file: &str,
    found: natstudy_core::service::ServiceResult<Option<(Vec<u8>, &'static str)>>,
    missing: &'static str,
) -> Response {
    match found {
        Ok(Some((bytes, mime))) => {
            download(mime, &format!("study-{study}-{file}"), Body::from(bytes))
        }
        Ok(None) => (StatusCode::NOT_FOUND, missing).into_response(),
        Err(e) => super::access::error_response(e),
    }
}

/// A `Content-Disposition: attachment` value for a file name from anywhere (a model's name, a
/// path segment) as RFC 6266 and RFC 8187 spell it: `filename` with every character outside
/// printable ASCII, and `"` and `\`, replaced by `_`; `filename*` with the exact name
/// percent-encoded in UTF-8. No name can end the header, add a parameter or break the response.
pub fn attachment(name: &str) -> HeaderValue {
    let plain: String = name
        .chars()
        .map(|c| match c {
            ' '..='~' if c != '"' && c != '\\' => c,
            _ => '_',
        })
        .collect();
    let exact =
        percent_encoding::utf8_percent_encode(name, natstudy_core::service::urls::NOT_UNRESERVED);
    HeaderValue::from_str(&format!(
        "attachment; filename=\"{plain}\"; filename*=UTF-8''{exact}"
    ))
    .unwrap_or_else(|_| HeaderValue::from_static("attachment"))
}

fn tokio_stream_from(
    mut rx: tokio::sync::mpsc::Receiver<Chunk>,
) -> impl futures_util::Stream<Item = Chunk> {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn download_names_cannot_break_the_header() {
        assert_eq!(
            attachment("study-1-votes.csv"),
            "attachment; filename=\"study-1-votes.csv\"; filename*=UTF-8''study-1-votes.csv"
        );
        assert_eq!(
            attachment("a\"; x=\"y.svg"),
            "attachment; filename=\"a_; x=_y.svg\"; filename*=UTF-8''a%22%3B%20x%3D%22y.svg"
        );
        let crlf = attachment("m\r\nSet-Cookie: x=1.png");
        assert!(!crlf.as_bytes().iter().any(|b| *b == b'\r' || *b == b'\n'));
        assert_eq!(
            attachment("Modèle.png"),
            "attachment; filename=\"Mod_le.png\"; filename*=UTF-8''Mod%C3%A8le.png"
        );
    }
    use natstudy_core::service::exports::Sink;
    use std::io::Write;
    use std::time::Duration;

    /// With nobody reading, the exporter is held at `pace` once `IN_FLIGHT` chunks wait, and it
    /// goes on as soon as the client takes one.
    #[tokio::test]
    async fn a_slow_client_holds_the_export_back() {
        let (tx, mut rx) = tokio::sync::mpsc::channel(IN_FLIGHT);
        let mut w = ChannelSink {
            buf: Vec::new(),
            tx,
            stall: Duration::from_secs(3600),
        };
        let row = vec![b'x'; 1024];
        let mut written = 0usize;
        loop {
            w.write_all(&row).expect("buffer");
            written += row.len();
            let paced = tokio::time::timeout(Duration::from_millis(100), w.pace()).await;
            if paced.is_err() {
                break;
            }
            assert!(written < CHUNK * (IN_FLIGHT + 2), "never held back");
        }
        assert_eq!(rx.len(), IN_FLIGHT, "held once the channel is full");
        assert!(written <= CHUNK * (IN_FLIGHT + 1));
        let first = rx.recv().await.expect("chunk").expect("bytes");
        assert_eq!(first.len(), CHUNK);
        w.write_all(&row).expect("buffer");
        tokio::time::timeout(Duration::from_secs(5), w.pace())
            .await
            .expect("room again")
            .expect("sent");
    }
}
