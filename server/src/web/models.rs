//! The model upload route: a model file streamed into the models directory (the directory, the
//! loading and the scoring job are `service::scoring`).

use std::path::{Path, PathBuf};

use axum::extract::{Multipart, Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use tokio::io::AsyncWriteExt;
use tower_sessions::Session;

use crate::ids::StudyId;

use super::AppState;
use crate::service::models::valid_name;

/// `POST /studies/{id}/models` (multipart, field `model`): stores an ARPA or binary n-gram
/// model or a GGUF neural model in the models directory, streaming it to disk, and returns to the study page. Staff of the
/// study only (checked here on the decoded id, before a byte is read; the page guard checks
/// again), same-origin only (the CSRF guard), at most the upload limit.
/// The file goes to a temporary name of its own (removed if the upload breaks off) and never
/// replaces a model of the same name: other studies may use it.
#[tracing::instrument(skip(state, session, form))]
pub async fn upload(
    State(state): State<AppState>,
    session: Session,
    UrlPath(study): UrlPath<StudyId>,
    mut form: Multipart,
) -> Response {
    let actor = match super::access::staff_of(&state, &session, study).await {
        Ok(user) => user,
        Err(refused) => return refused,
    };
    let room = match crate::service::models::room(&state.db, study, state.model_quota_bytes).await {
        Ok(room) => room,
        Err(e) => return io_error(std::io::Error::other(e.to_string())).into_response(),
    };
    match receive(&state.models_dir, &mut form, room).await {
        Ok((name, bytes)) => {
            if let Err(e) =
                crate::service::models::uploaded(&state.db, study, Some(actor.id), &name, bytes)
                    .await
            {
                let _ = std::fs::remove_file(state.models_dir.join(&name));
                return io_error(std::io::Error::other(e.to_string())).into_response();
            }
            Redirect::to(&format!("/studies/{study}?model={name}#scoring")).into_response()
        }
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

/// Receives the model into the folder: its name and size. Past `room` bytes (what the study's
/// quota leaves) the upload is refused and nothing is kept.
async fn receive(
    dir: &Path,
    form: &mut Multipart,
    room: u64,
) -> Result<(String, u64), (StatusCode, String)> {
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
                    "model file name {name:?}: use letters, digits, - _ . and end in .arpa, .bin or .gguf"
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
        let mut bytes = 0u64;
        while let Some(chunk) = field.chunk().await.map_err(multipart)? {
            if head.len() < 64 {
                head.extend_from_slice(&chunk[..chunk.len().min(64)]);
            }
            bytes += chunk.len() as u64;
            if bytes > room {
                return Err((
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!(
                        "the study's model quota leaves {} MiB: delete a model of this study, or ask the admin for a larger --model-quota-mb",
                        room >> 20
                    ),
                ));
            }
            f.write_all(&chunk).await.map_err(io_error)?;
        }
        if !looks_like_a_model(&name, &head) {
            return Err((
                StatusCode::UNPROCESSABLE_ENTITY,
                "not a model: an ARPA file starts with \\data\\, a binary model with NSLM1, a GGUF file with GGUF".into(),
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
        return Ok((name, bytes));
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

/// A GGUF file named `.gguf` (its magic), or an n-gram model: an ARPA file (`\data\` after
/// optional blank space) or a binary model (its magic).
fn looks_like_a_model(name: &str, head: &[u8]) -> bool {
    if name.ends_with(".gguf") {
        return head.starts_with(b"GGUF");
    }
    let text = String::from_utf8_lossy(head);
    head.starts_with(b"NSLM1\0") || text.trim_start().starts_with("\\data\\")
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_model_files_are_kept() {
        use super::looks_like_a_model as model;
        assert!(model("m.arpa", b"\n\\data\\\nngram 1=2\n"));
        assert!(model("m.bin", b"NSLM1\0\x01\0\0\0"));
        assert!(model("m.gguf", b"GGUF\x03\0\0\0"));
        // a GGUF file by its name only, and a model under another kind's name, are not
        assert!(!model("m.gguf", b"\\data\\\n"));
        assert!(!model("m.arpa", b"GGUF\x03\0\0\0"));
        assert!(!model("m.arpa", b"<html>"));
        assert!(!model("m.bin", b""));
    }
}
