//! The model upload route: a model file streamed into the models directory (the directory, the
//! loading and the scoring job are `service::scoring`).

use std::path::{Path, PathBuf};

use axum::extract::{Multipart, Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use tokio::io::AsyncWriteExt;
use tower_sessions::Session;

use natstudy_vocab::ids::StudyId;

use super::AppState;
use natstudy_core::service::models::{valid_folder_name, valid_name, Reservation};

/// `POST /studies/{id}/models` (multipart: field `model`, or fields `folder` and `files`):
/// stores an ARPA or binary n-gram model, a GGUF file or a Hugging Face model folder in the
/// models directory, streaming it to disk, and returns to the study page. Staff of the study
/// only (checked here on the decoded id, before a byte is read; the page guard checks again),
/// same-origin only (the CSRF guard), at most the upload limit and the study's quota.
/// The upload goes to a temporary name of its own (removed if the upload breaks off or the
/// model fails its check) and never replaces a model of the same name: other studies may use
/// it.
#[tracing::instrument(skip(state, session, form))]
pub async fn upload(
    State(state): State<AppState>,
    session: Session,
    UrlPath(study): UrlPath<StudyId>,
    headers: axum::http::HeaderMap,
    mut form: Multipart,
) -> Response {
    let actor = match super::access::staff_of(&state, &session, study).await {
        Ok(user) => user,
        Err(refused) => return refused,
    };
    let reserved = natstudy_core::service::models::Reservation::start(
        &state.db,
        study,
        state.model_quota_bytes,
    );
    let mut quota = match reserved.await {
        Ok(quota) => quota,
        Err(e) => return io_error(std::io::Error::other(e.to_string())).into_response(),
    };
    // the declared length bounds the file: reserved at once when there is room
    let declared = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(declared) = declared {
        if let Err(e) = quota.ahead(declared).await {
            quota.release().await;
            return io_error(std::io::Error::other(e.to_string())).into_response();
        }
    }
    match receive(&state.models_dir, &mut form, &mut quota).await {
        Ok(name) => {
            if let Err(e) = natstudy_core::service::models::uploaded(
                &state.db,
                study,
                Some(actor.id),
                &name,
                quota,
            )
            .await
            {
                // not recorded: not kept (a file, or a folder)
                let path = state.models_dir.join(&name);
                let _ = if path.is_dir() {
                    tokio::fs::remove_dir_all(&path).await
                } else {
                    tokio::fs::remove_file(&path).await
                };
                return io_error(std::io::Error::other(e.to_string())).into_response();
            }
            Redirect::to(&format!("/studies/{study}?model={name}#scoring")).into_response()
        }
        Err((code, msg)) => {
            quota.release().await;
            (code, msg).into_response()
        }
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

/// Receives the model into the folder: its name (its size is what `quota` received). Either
/// one file in field `model` (an n-gram model or a GGUF file), or a Hugging Face model folder:
/// its files in field `files` (a browser's folder picker names each `folder/file`), after an
/// optional name in field `folder`. Each chunk is covered by the upload's reservation of the
/// study's quota first; one the quota has no room for ends the upload, and nothing is kept.
async fn receive(
    dir: &Path,
    form: &mut Multipart,
    quota: &mut Reservation,
) -> Result<String, (StatusCode, String)> {
    let mut name_given = String::new();
    let mut folder: Option<FolderUpload> = None;
    while let Some(mut field) = form.next_field().await.map_err(multipart)? {
        match field.name() {
            Some("model") if folder.is_none() => return receive_file(dir, field, quota).await,
            Some("folder") => {
                while let Some(chunk) = field.chunk().await.map_err(multipart)? {
                    name_given.push_str(&String::from_utf8_lossy(&chunk));
                    if name_given.len() > 200 {
                        return Err(unprocessable("the folder name is too long"));
                    }
                }
            }
            Some("files") => {
                let upload = match &mut folder {
                    Some(f) => f,
                    None => folder.insert(
                        FolderUpload::start(dir, name_given.trim(), field.file_name()).await?,
                    ),
                };
                upload.take(field, quota).await?;
            }
            _ => {}
        }
    }
    match folder {
        Some(f) => f.finish(dir).await,
        None => Err(unprocessable("no file in field `model` or `files`")),
    }
}

fn multipart(e: axum::extract::multipart::MultipartError) -> (StatusCode, String) {
    (e.status(), e.body_text())
}

fn unprocessable(msg: impl Into<String>) -> (StatusCode, String) {
    (StatusCode::UNPROCESSABLE_ENTITY, msg.into())
}

/// Covers `more` bytes of an upload by its reservation, or refuses the upload (413).
async fn cover(quota: &mut Reservation, more: usize) -> Result<(), (StatusCode, String)> {
    match quota.cover(more as u64).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(room)) => Err(over_quota(room)),
        Err(e) => Err(io_error(std::io::Error::other(e.to_string()))),
    }
}

fn over_quota(room: u64) -> (StatusCode, String) {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "the study's model quota leaves {} MiB: delete a model of this study, or ask the admin for a larger --model-quota-mb",
            room >> 20
        ),
    )
}

fn taken(name: &str) -> (StatusCode, String) {
    (
        StatusCode::CONFLICT,
        format!("a model named {name} exists already: choose another name"),
    )
}

/// One model file (field `model`).
async fn receive_file(
    dir: &Path,
    mut field: axum::extract::multipart::Field<'_>,
    quota: &mut Reservation,
) -> Result<String, (StatusCode, String)> {
    let name = field
        .file_name()
        .map(|n| n.rsplit(['/', '\\']).next().unwrap_or(n).to_owned())
        .unwrap_or_default();
    if !valid_name(&name) {
        return Err(unprocessable(format!(
            "model file name {name:?}: use letters, digits, - _ . and end in .arpa, .bin or .gguf"
        )));
    }
    let target = dir.join(&name);
    if target.exists() {
        return Err(taken(&name));
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
        cover(quota, chunk.len()).await?;
        f.write_all(&chunk).await.map_err(io_error)?;
    }
    if !looks_like_a_model(&name, &head) {
        return Err(unprocessable(
            "not a model: an ARPA file starts with \\data\\, a binary model with NSLM1, a GGUF file with GGUF",
        ));
    }
    f.sync_all().await.map_err(io_error)?;
    drop(f);
    if name.ends_with(".gguf") {
        if let Err(e) = natstudy_core::service::models::check_gguf(&part.path).await {
            // the message names the hidden file; the user knows it by its name
            let hidden = part.path.display().to_string();
            return Err(unprocessable(format!(
                "not a GGUF model natstudy runs: {}",
                e.to_string().replace(&hidden, &name)
            )));
        }
    }
    // a hard link never replaces: if another upload took the name meanwhile, it stays
    match tokio::fs::hard_link(&part.path, &target).await {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(taken(&name)),
        Err(e) => return Err(io_error(e)),
    }
    drop(part);
    Ok(name)
}

/// The most files a model folder upload stores (a sharded checkpoint has a few dozen).
const MAX_FOLDER_FILES: usize = 256;

/// A Hugging Face model folder being received into a hidden folder of its own (removed, with
/// what it holds, when dropped unless it was kept), moved to its name once checked.
struct FolderUpload {
    name: String,
    part: PathBuf,
    kept: bool,
    files: std::collections::BTreeSet<String>,
}

impl Drop for FolderUpload {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_dir_all(&self.part);
        }
    }
}

impl FolderUpload {
    /// The folder's name: the one given, else the folder the browser's picker names in the
    /// first file's path (`folder/config.json`).
    async fn start(
        dir: &Path,
        given: &str,
        first_file: Option<&str>,
    ) -> Result<FolderUpload, (StatusCode, String)> {
        let picked = first_file
            .map(|f| f.replace('\\', "/"))
            .and_then(|f| f.split_once('/').map(|(root, _)| root.to_owned()))
            .unwrap_or_default();
        let name = if given.is_empty() {
            picked
        } else {
            given.to_owned()
        };
        if name.is_empty() {
            return Err(unprocessable(
                "name the model folder (field `folder`), or choose a folder rather than files",
            ));
        }
        if !valid_folder_name(&name) || valid_name(&name) {
            return Err(unprocessable(format!(
                "model folder name {name:?}: use letters, digits, - _ . (not starting with a dot, not ending in .arpa, .bin or .gguf)"
            )));
        }
        if dir.join(&name).exists() {
            return Err(taken(&name));
        }
        tokio::fs::create_dir_all(dir).await.map_err(io_error)?;
        let part = dir.join(format!(".{name}.{}.part", unique()));
        tokio::fs::create_dir(&part).await.map_err(io_error)?;
        Ok(FolderUpload {
            name,
            part,
            kept: false,
            files: Default::default(),
        })
    }

    /// Stores one file of the folder, if it is one a model needs (see [`model_file`]); others
    /// (a README, `.gitattributes`, PyTorch `.bin` weights, anything in a subfolder) are
    /// skipped unread.
    async fn take(
        &mut self,
        mut field: axum::extract::multipart::Field<'_>,
        quota: &mut Reservation,
    ) -> Result<(), (StatusCode, String)> {
        let Some(base) = field.file_name().and_then(model_file) else {
            return Ok(());
        };
        if !self.files.insert(base.clone()) {
            return Err(unprocessable(format!("{base} twice in one folder")));
        }
        if self.files.len() > MAX_FOLDER_FILES {
            return Err(unprocessable(format!(
                "more than {MAX_FOLDER_FILES} model files in one folder"
            )));
        }
        let path = self.part.join(&base);
        let mut f = tokio::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .await
            .map_err(io_error)?;
        while let Some(chunk) = field.chunk().await.map_err(multipart)? {
            cover(quota, chunk.len()).await?;
            f.write_all(&chunk).await.map_err(io_error)?;
        }
        f.sync_all().await.map_err(io_error)?;
        Ok(())
    }

    /// Checks the folder as a model (configuration, tokenizer, weight headers) and moves it to
    /// its name, never over another model.
    async fn finish(mut self, dir: &Path) -> Result<String, (StatusCode, String)> {
        if self.files.is_empty() {
            return Err(unprocessable(
                "no model files in the upload: a Hugging Face folder holds config.json, tokenizer.json and *.safetensors",
            ));
        }
        if let Err(e) = natstudy_core::service::models::check_folder(&self.part).await {
            // the message names the hidden folder; the user knows it by its name
            let hidden = self.part.display().to_string();
            return Err(unprocessable(format!(
                "not a model folder natstudy runs: {}",
                e.to_string().replace(&hidden, &self.name)
            )));
        }
        let target = dir.join(&self.name);
        if target.exists() {
            return Err(taken(&self.name));
        }
        // a folder is never renamed over a model's: a non-empty one makes this fail
        tokio::fs::rename(&self.part, &target)
            .await
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists
                | std::io::ErrorKind::DirectoryNotEmpty
                | std::io::ErrorKind::NotADirectory => taken(&self.name),
                _ => io_error(e),
            })?;
        self.kept = true;
        Ok(std::mem::take(&mut self.name))
    }
}

/// The name a model folder's file is stored under, if a model needs it: `config.json`,
/// `tokenizer.json`, the weights (`*.safetensors` and their index) and the small configuration
/// files beside them; at the folder's top (`folder/file` or `file`), never below.
fn model_file(path: &str) -> Option<String> {
    let path = path.replace('\\', "/");
    let parts: Vec<&str> = path.split('/').collect();
    let base = match parts.as_slice() {
        [base] | [_, base] => *base,
        _ => return None,
    };
    let wanted = matches!(
        base,
        "config.json"
            | "tokenizer.json"
            | "model.safetensors.index.json"
            | "generation_config.json"
            | "tokenizer_config.json"
            | "special_tokens_map.json"
    ) || (base.ends_with(".safetensors") && valid_folder_name(base));
    wanted.then(|| base.to_owned())
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

    /// A folder's files are kept by their name at the folder's top, and only those a model
    /// needs.
    #[test]
    fn a_folder_keeps_its_model_files() {
        use super::model_file as keep;
        for (path, want) in [
            ("codellama/config.json", Some("config.json")),
            ("config.json", Some("config.json")),
            ("m\\tokenizer.json", Some("tokenizer.json")),
            (
                "m/model-00001-of-00002.safetensors",
                Some("model-00001-of-00002.safetensors"),
            ),
            (
                "m/model.safetensors.index.json",
                Some("model.safetensors.index.json"),
            ),
            ("m/README.md", None),
            ("m/pytorch_model.bin", None),
            ("m/.git/config", None),
            ("m/onnx/model.safetensors", None),
            ("m/../model.safetensors", None),
            ("m/.hidden.safetensors", None),
            ("m/a b.safetensors", None),
            ("", None),
        ] {
            assert_eq!(keep(path).as_deref(), want, "{path}");
        }
    }
}
