//! Who is asking (ssr only): the typed session, the role checks every server function makes,
//! per-study access, and the one mapping of backend errors to HTTP answers.
//!
//! Session rules (the page guard in the server applies the same ones through [`signed_in`]):
//! - a session ends after the server's idle timeout without a request; use slides it (the
//!   session is re-saved at most every quarter of the timeout, and at most once a minute);
//! - it ends in any case once it is older than the absolute lifetime ([`Backend::session_policy`]);
//! - a signed-in session remembers the account's session epoch: a password change or disabling
//!   moves the epoch on and every other session of that account ends.

use leptos::prelude::*;
use tower_sessions::Session;

use natstudy_types::backend::{Backend, BackendError, BackendHandle};
use natstudy_types::{Role, StudyId, User, UserId};

/// The key under which the signed-in user's id lives in the session.
pub const USER_ID_KEY: &str = "user_id";
/// The account's session epoch at sign-in.
pub const EPOCH_KEY: &str = "epoch";
/// When the session was started (sign-in or join), unix ms: the absolute lifetime counts from here.
pub const STARTED_KEY: &str = "started_at";
/// The session key of an invited (anonymous) participant's annotator id.
pub const PARTICIPANT_KEY: &str = "participant";
/// When the session was last re-saved, unix ms (sliding inactivity expiry).
const SEEN_KEY: &str = "seen_at";

/// The client's address as the server saw it (or as a trusted proxy header named it); the
/// server puts it into every request's extensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientIp(pub Option<std::net::IpAddr>);

/// The backend handle the server provided as context.
pub fn backend() -> Result<BackendHandle, ServerFnError> {
    use_context::<BackendHandle>()
        .ok_or_else(|| ServerFnError::new("server misconfigured: no backend in context"))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Marks a session as started now (at sign-in and at join).
pub async fn start(session: &Session) -> Result<(), ServerFnError> {
    let now = now_ms();
    session
        .insert(STARTED_KEY, now)
        .await
        .map_err(session_error)?;
    session.insert(SEEN_KEY, now).await.map_err(session_error)
}

/// A new session id when the request's session is a stored one (at sign-in and at join: a
/// planted id never carries over, which defeats session fixation). A session that was never
/// stored (no cookie, or a cookie naming no stored session) gets a fresh random id when it is
/// first saved anyway, so nothing is deleted for it: a burst of joins writes one row each.
pub async fn renew_id(session: &Session) -> Result<(), ServerFnError> {
    // loads the record: afterwards the session has an id only when the store held it
    session.is_empty().await;
    if session.id().is_none() {
        return Ok(());
    }
    session.cycle_id().await.map_err(session_error)
}

fn session_error(e: tower_sessions::session::Error) -> ServerFnError {
    tracing::error!(error = %e, "session store");
    ServerFnError::new("internal error")
}

/// Applies the lifetime rules to a session: `false` (and the session is ended) when it is too
/// old; otherwise its inactivity expiry is renewed (at most once a minute).
pub async fn keep_alive(session: &Session, backend: &dyn Backend) -> bool {
    let now = now_ms();
    let max_ms = backend.session_policy().max_age_secs.saturating_mul(1000);
    let started: Option<i64> = session.get(STARTED_KEY).await.ok().flatten();
    match started {
        Some(t) if now.saturating_sub(t) > max_ms => {
            let _ = session.flush().await;
            return false;
        }
        Some(_) => {}
        // a session from before these rules, or an anonymous one: its clock starts now
        None => {
            if session.is_empty().await {
                return true;
            }
            let _ = session.insert(STARTED_KEY, now).await;
        }
    }
    // re-saving moves the inactivity expiry on; often enough that it slides well before it
    // runs out, rarely enough that reads stay reads
    let every_ms = (backend.session_policy().idle_secs.saturating_mul(1000) / 4).clamp(1, 60_000);
    let seen: Option<i64> = session.get(SEEN_KEY).await.ok().flatten();
    if seen.is_none_or(|t| now.saturating_sub(t) >= every_ms) {
        let _ = session.insert(SEEN_KEY, now).await;
    }
    true
}

/// The signed-in account of a session, after the lifetime and epoch checks (the session is
/// ended when they fail). Used by server functions and by the server's page guard alike.
pub async fn signed_in(
    session: &Session,
    backend: &dyn Backend,
) -> Result<Option<User>, BackendError> {
    if !keep_alive(session, backend).await {
        return Ok(None);
    }
    let id: Option<UserId> = session.get(USER_ID_KEY).await.ok().flatten();
    let Some(id) = id else { return Ok(None) };
    let epoch: i64 = session.get(EPOCH_KEY).await.ok().flatten().unwrap_or(0);
    let user = backend.session_user(id, epoch).await?;
    if user.is_none() {
        // the account was disabled or its password changed: end this session
        let _ = session.flush().await;
    }
    Ok(user)
}

pub use natstudy_types::cookie::device_token;

/// The session of the current request.
pub async fn session() -> Result<Session, ServerFnError> {
    leptos_axum::extract::<Session>().await.map_err(|e| {
        tracing::error!(error = %e, "no session layer");
        ServerFnError::new("internal error")
    })
}

/// The client's address (see [`ClientIp`]).
pub async fn client_ip() -> Option<std::net::IpAddr> {
    leptos_axum::extract::<axum::Extension<ClientIp>>()
        .await
        .ok()
        .and_then(|e| e.0 .0)
}

/// The signed-in user, if any.
pub async fn current_user() -> Result<Option<User>, ServerFnError> {
    let session = session().await?;
    signed_in(&session, backend()?.as_ref())
        .await
        .map_err(internal)
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

/// As [`require`], and the user must also be allowed on `study`: admins on every study,
/// researchers on the studies they own or are members of.
pub async fn require_study(study: StudyId, roles: &[Role]) -> Result<User, ServerFnError> {
    let user = require(roles).await?;
    if !backend()?
        .may_access(&user, study)
        .await
        .map_err(internal)?
    {
        tracing::warn!(user = %user.username, %study, "refused: not a member of the study");
        set_status(axum::http::StatusCode::FORBIDDEN);
        return Err(ServerFnError::new("forbidden"));
    }
    Ok(user)
}

/// Who reviews patches of `study` in this request: a signed-in account that may act on the
/// study (a member of any role, or an admin) by its name, or a participant who joined through
/// the study's review-only invite (`S3@invite`).
pub async fn require_reviewer(study: StudyId) -> Result<String, ServerFnError> {
    let user = current_user().await?;
    let b = backend()?;
    if let Some(u) = &user {
        if b.may_access(u, study).await.map_err(internal)? {
            return Ok(u.username.clone());
        }
    } else {
        let participant: Option<natstudy_types::AnnotatorId> =
            session().await?.get(PARTICIPANT_KEY).await.ok().flatten();
        if let Some(p) = participant {
            if let Some(name) = b.review_participant(study, p).await.map_err(internal)? {
                return Ok(name);
            }
        }
        set_status(axum::http::StatusCode::UNAUTHORIZED);
        return Err(ServerFnError::new("not signed in"));
    }
    tracing::warn!(%study, "refused: not a reviewer of the study");
    set_status(axum::http::StatusCode::FORBIDDEN);
    Err(ServerFnError::new("forbidden"))
}

fn set_status(code: axum::http::StatusCode) {
    if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
        resp.set_status(code);
    }
}

/// A backend error as a server-function error with its HTTP status. Internal errors reach the
/// client as a generic message; their detail was logged where they arose.
pub fn internal(e: BackendError) -> ServerFnError {
    use axum::http::StatusCode;
    let code = match &e {
        BackendError::NotFound(_) => StatusCode::NOT_FOUND,
        BackendError::Conflict(_) => StatusCode::CONFLICT,
        BackendError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
        BackendError::Forbidden(_) => StatusCode::FORBIDDEN,
        BackendError::TooMany(_) => StatusCode::TOO_MANY_REQUESTS,
        BackendError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    set_status(code);
    if let BackendError::TooMany(secs) = &e {
        if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
            resp.insert_header(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(*secs),
            );
        }
    }
    ServerFnError::new(e.to_string())
}
