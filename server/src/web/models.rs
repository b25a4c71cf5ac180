//! Language model files on the server: the directory the study page lists, the upload route,
//! and the background scoring job.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::extract::{Multipart, Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use tokio::io::AsyncWriteExt;

use super::AppState;
use crate::db::Db;
use app::model::ModelFile;

/// A model's file name: letters, digits, `-`, `_`, `.`; ending in `.arpa` or `.bin`.
pub fn valid_name(name: &str) -> bool {
    let ok_chars = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    ok_chars && (name.ends_with(".arpa") || name.ends_with(".bin"))
}

/// The models in the directory, by name.
pub fn list(dir: &Path) -> Vec<ModelFile> {
    let mut out: Vec<ModelFile> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let meta = e.metadata().ok()?;
                    (meta.is_file() && valid_name(&name)).then_some(ModelFile {
                        name,
                        bytes: meta.len(),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// `POST /studies/{id}/models` (multipart, field `model`): stores an ARPA or binary model in
/// the models directory, streaming it to disk, and returns to the study page. Staff of the
/// study only (the page guard), same-origin only (the CSRF guard), at most the upload limit.
/// The file goes to a temporary name of its own (removed if the upload breaks off) and never
/// replaces a model of the same name: other studies may use it.
#[tracing::instrument(skip(state, form))]
pub async fn upload(
    State(state): State<AppState>,
    UrlPath(study): UrlPath<i64>,
    mut form: Multipart,
) -> Response {
    match receive(&state.models_dir, &mut form).await {
        Ok(name) => Redirect::to(&format!("/studies/{study}?model={name}#scoring")).into_response(),
        Err((code, msg)) => (code, msg).into_response(),
    }
}

/// A file being received: removed when dropped unless it was kept.
struct PartFile {
    path: PathBuf,
    kept: bool,
}

impl Drop for PartFile {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn io_error(e: std::io::Error) -> (StatusCode, String) {
    tracing::error!(error = %e, "model upload");
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        "cannot store the model".into(),
    )
}

async fn receive(dir: &Path, form: &mut Multipart) -> Result<String, (StatusCode, String)> {
    let multipart = |e: axum::extract::multipart::MultipartError| (e.status(), e.body_text());
    while let Some(mut field) = form.next_field().await.map_err(multipart)? {
        if field.name() != Some("model") {
            continue;
        }
        let name = field
            .file_name()
            .map(|n| n.rsplit(['/', '\\']).next().unwrap_or(n).to_owned())
            .unwrap_or_default();
        if !valid_name(&name) {
            return Err((
                StatusCode::UNPROCESSABLE_ENTITY,
                format!(
                    "model file name {name:?}: use letters, digits, - _ . and end in .arpa or .bin"
                ),
            ));
        }
        let target = dir.join(&name);
        if target.exists() {
            return Err((
                StatusCode::CONFLICT,
                format!("a model named {name} exists already: choose another name"),
            ));
        }
        tokio::fs::create_dir_all(dir).await.map_err(io_error)?;
        let part = PartFile {
            path: dir.join(format!(".{name}.{}.part", unique())),
            kept: false,
        };
        let mut f = tokio::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&part.path)
            .await
            .map_err(io_error)?;
        let mut head = Vec::new();
        while let Some(chunk) = field.chunk().await.map_err(multipart)? {
            if head.len() < 64 {
                head.extend_from_slice(&chunk[..chunk.len().min(64)]);
            }
            f.write_all(&chunk).await.map_err(io_error)?;
        }
        if !looks_like_a_model(&head) {
            return Err((
                StatusCode::UNPROCESSABLE_ENTITY,
                "not a model: an ARPA file starts with \\data\\, a binary model with NSLM1".into(),
            ));
        }
        f.sync_all().await.map_err(io_error)?;
        drop(f);
        // a hard link never replaces: if another upload took the name meanwhile, it stays
        match tokio::fs::hard_link(&part.path, &target).await {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err((
                    StatusCode::CONFLICT,
                    format!("a model named {name} exists already: choose another name"),
                ))
            }
            Err(e) => return Err(io_error(e)),
        }
        drop(part);
        return Ok(name);
    }
    Err((
        StatusCode::UNPROCESSABLE_ENTITY,
        "no file in field `model`".into(),
    ))
}

fn unique() -> String {
    use rand::RngCore;
    let mut b = [0u8; 8];
    rand::thread_rng().fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// An ARPA file (`\data\` after optional blank space) or a binary model (its magic).
fn looks_like_a_model(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    head.starts_with(b"NSLM1\0") || text.trim_start().starts_with("\\data\\")
}

/// Scores every bug and transformation of the study with the model and stores the CE scores
/// under the model's name (its file stem), reporting progress in the job's row.
pub async fn run_scoring(
    db: Db,
    job: i64,
    study: i64,
    actor: Option<i64>,
    path: PathBuf,
    log10: bool,
) {
    let started = std::time::Instant::now();
    let result = score(&db, job, study, actor, &path, log10).await;
    let (state, message) = match result {
        Ok((methods, tokens)) => (
            "done",
            format!(
                "scored {methods} methods ({tokens} tokens) in {:.1} s",
                started.elapsed().as_secs_f64()
            ),
        ),
        Err(e) => ("failed", format!("{e:#}")),
    };
    if let Err(e) = crate::store::jobs::finish(&db, job, state, &message).await {
        tracing::error!(error = %e, job, "cannot record the end of a job");
    }
}

async fn score(
    db: &Db,
    job: i64,
    study: i64,
    actor: Option<i64>,
    path: &Path,
    log10: bool,
) -> anyhow::Result<(usize, u64)> {
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "ngram".into());
    let model = crate::service::load_model(path).await?;
    let done = Arc::new(AtomicU64::new(0));
    let total = Arc::new(AtomicU64::new(0));
    let (counter, size) = (done.clone(), total.clone());
    let work = crate::service::score_study(
        db,
        study,
        actor,
        model,
        &name,
        Default::default(),
        log10,
        move |n| size.store(n, Ordering::Relaxed),
        Arc::new(move || {
            counter.fetch_add(1, Ordering::Relaxed);
        }),
    );
    tokio::pin!(work);
    let scored = loop {
        tokio::select! {
            res = &mut work => break res?,
            _ = tokio::time::sleep(std::time::Duration::from_millis(300)) => {
                let (d, t) = (done.load(Ordering::Relaxed), total.load(Ordering::Relaxed));
                crate::store::jobs::progress(db, job, d, t).await?;
            }
        }
    };
    let n = scored.methods as u64;
    crate::store::jobs::progress(db, job, n, n).await?;
    Ok((scored.methods, scored.tokens))
}

#[cfg(test)]
mod tests {
    use super::valid_name;

    #[test]
    fn only_model_files_are_kept() {
        assert!(super::looks_like_a_model(b"\n\\data\\\nngram 1=2\n"));
        assert!(super::looks_like_a_model(b"NSLM1\0\x01\0\0\0"));
        assert!(!super::looks_like_a_model(b"<html>"));
        assert!(!super::looks_like_a_model(b""));
    }

    #[test]
    fn model_names_stay_in_the_directory() {
        assert!(valid_name("java-4gram.arpa"));
        assert!(valid_name("m.bin"));
        assert!(!valid_name("../etc/passwd.arpa"));
        assert!(!valid_name(".hidden.arpa"));
        assert!(!valid_name("model.txt"));
        assert!(!valid_name("a b.arpa"));
    }
}
