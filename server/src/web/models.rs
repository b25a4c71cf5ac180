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
/// the models directory, streaming it to disk, and returns to the study page. Staff only (the
/// page guard), same-origin only (the CSRF guard).
#[tracing::instrument(skip(state, form))]
pub async fn upload(
    State(state): State<AppState>,
    UrlPath(study): UrlPath<i64>,
    mut form: Multipart,
) -> Response {
    match receive(&state.models_dir, &mut form).await {
        Ok(name) => Redirect::to(&format!("/studies/{study}?model={name}#scoring")).into_response(),
        Err(msg) => (StatusCode::BAD_REQUEST, msg).into_response(),
    }
}

async fn receive(dir: &Path, form: &mut Multipart) -> Result<String, String> {
    while let Some(mut field) = form.next_field().await.map_err(|e| e.to_string())? {
        if field.name() != Some("model") {
            continue;
        }
        let name = field
            .file_name()
            .map(|n| n.rsplit(['/', '\\']).next().unwrap_or(n).to_owned())
            .unwrap_or_default();
        if !valid_name(&name) {
            return Err(format!(
                "model file name {name:?}: use letters, digits, - _ . and end in .arpa or .bin"
            ));
        }
        tokio::fs::create_dir_all(dir)
            .await
            .map_err(|e| e.to_string())?;
        let part = dir.join(format!(".{name}.part"));
        let mut f = tokio::fs::File::create(&part)
            .await
            .map_err(|e| e.to_string())?;
        while let Some(chunk) = field.chunk().await.map_err(|e| e.to_string())? {
            f.write_all(&chunk).await.map_err(|e| e.to_string())?;
        }
        f.sync_all().await.map_err(|e| e.to_string())?;
        tokio::fs::rename(&part, dir.join(&name))
            .await
            .map_err(|e| e.to_string())?;
        return Ok(name);
    }
    Err("no file in field `model`".into())
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
    fn model_names_stay_in_the_directory() {
        assert!(valid_name("java-4gram.arpa"));
        assert!(valid_name("m.bin"));
        assert!(!valid_name("../etc/passwd.arpa"));
        assert!(!valid_name(".hidden.arpa"));
        assert!(!valid_name("model.txt"));
        assert!(!valid_name("a b.arpa"));
    }
}
