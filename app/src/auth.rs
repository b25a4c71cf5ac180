//! Who is asking (ssr only): the typed session and the role checks every server function makes.

use leptos::prelude::*;
use tower_sessions::Session;

use crate::backend::{BackendError, BackendHandle};
use crate::model::{Role, User};

/// The key under which the signed-in user's id lives in the session.
pub const USER_ID_KEY: &str = "user_id";

/// The backend handle the server provided as context.
pub fn backend() -> Result<BackendHandle, ServerFnError> {
    use_context::<BackendHandle>()
        .ok_or_else(|| ServerFnError::new("server misconfigured: no backend in context"))
}

/// The session of the current request.
pub async fn session() -> Result<Session, ServerFnError> {
    leptos_axum::extract::<Session>()
        .await
        .map_err(|e| ServerFnError::new(format!("no session: {e}")))
}

/// The signed-in user, if any.
pub async fn current_user() -> Result<Option<User>, ServerFnError> {
    let session = session().await?;
    let id: Option<i64> = session
        .get(USER_ID_KEY)
        .await
        .map_err(|e| ServerFnError::new(format!("session: {e}")))?;
    match id {
        None => Ok(None),
        Some(id) => {
            let user = backend()?.user(id).await.map_err(internal)?;
            if user.is_none() {
                // The account was removed or disabled: end the session.
                let _ = session.flush().await;
            }
            Ok(user)
        }
    }
}

/// The signed-in user if their role is one of `roles`; otherwise 401/403 and an error.
pub async fn require(roles: &[Role]) -> Result<User, ServerFnError> {
    let Some(user) = current_user().await? else {
        set_status(axum::http::StatusCode::UNAUTHORIZED);
        return Err(ServerFnError::new("not signed in"));
    };
    if !roles.contains(&user.role) {
        tracing::warn!(user = %user.username, role = %user.role, "refused");
        set_status(axum::http::StatusCode::FORBIDDEN);
        return Err(ServerFnError::new("forbidden"));
    }
    Ok(user)
}

fn set_status(code: axum::http::StatusCode) {
    if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
        resp.set_status(code);
    }
}

/// A backend error as a server-function error (with a fitting HTTP status).
pub fn internal(e: BackendError) -> ServerFnError {
    let code = match &e {
        BackendError::NotFound(_) => axum::http::StatusCode::NOT_FOUND,
        BackendError::Conflict(_) => axum::http::StatusCode::CONFLICT,
        BackendError::Invalid(_) => axum::http::StatusCode::UNPROCESSABLE_ENTITY,
        BackendError::Forbidden(_) => axum::http::StatusCode::FORBIDDEN,
        BackendError::Internal(_) => axum::http::StatusCode::INTERNAL_SERVER_ERROR,
    };
    set_status(code);
    ServerFnError::new(e.to_string())
}
