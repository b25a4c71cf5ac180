//! Authorisation of the routes outside the server functions (downloads, charts, model
//! uploads): on the study id as axum decoded and typed it, through the service's one rule
//! (`service::access`). The page guard's check of the raw path is a second check, never the
//! only one: `/studies/%31/…` decodes to study 1 here whatever the guard made of it.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use natstudy_types::User;
use tower_sessions::Session;

use super::AppState;
use natstudy_core::service;
use natstudy_vocab::ids::StudyId;

/// The signed-in account, if it is staff of `study`; otherwise the answer to send (401 when
/// nobody is signed in, 403 when the account may not act on the study).
pub async fn staff_of(
    state: &AppState,
    session: &Session,
    study: StudyId,
) -> Result<User, Response> {
    let user = match app::auth::signed_in(session, state.backend.as_ref()).await {
        Ok(Some(u)) => u,
        Ok(None) => return Err((StatusCode::UNAUTHORIZED, "sign in first").into_response()),
        Err(e) => {
            tracing::error!(error = %e, "session lookup");
            return Err((StatusCode::INTERNAL_SERVER_ERROR, "internal error").into_response());
        }
    };
    match service::access::require_staff(&state.db, &user, study).await {
        Ok(()) => Ok(user),
        Err(e) => Err(error_response(e)),
    }
}

/// A service error as a plain HTTP answer (the pages' server functions map theirs in
/// `app::auth::internal`); internal details are logged, not sent.
pub(super) fn error_response(e: natstudy_core::service::ServiceError) -> Response {
    use natstudy_core::service::ServiceError;
    let (code, text) = match e {
        ServiceError::NotFound(what) => (StatusCode::NOT_FOUND, format!("not found: {what}")),
        ServiceError::Invalid(why) => (StatusCode::UNPROCESSABLE_ENTITY, why),
        ServiceError::Conflict(why) => (StatusCode::CONFLICT, why),
        ServiceError::Forbidden(why) => (StatusCode::FORBIDDEN, why),
        ServiceError::TooMany(secs) => (
            StatusCode::TOO_MANY_REQUESTS,
            format!("too many attempts: try again in {secs} s"),
        ),
        ServiceError::Internal(e) => {
            tracing::error!(error = %format!("{e:#}"), "internal error");
            (StatusCode::INTERNAL_SERVER_ERROR, "internal error".into())
        }
    };
    (code, text).into_response()
}
