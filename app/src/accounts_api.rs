//! Server functions of accounts and sessions: who is signed in, signing in and out, the
//! accounts page. Each checks the caller's role on the server before it acts (see
//! `auth::require`).

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use crate::auth::{backend, internal, require};
#[cfg(feature = "ssr")]
use natstudy_types::Role;
use natstudy_types::{User, UserId, UserRow};

/// The signed-in user, or `None`.
#[server(endpoint = "whoami")]
pub async fn whoami() -> Result<Option<User>, ServerFnError> {
    crate::auth::current_user().await
}

/// Signs in: checks the password, rotates the session id, remembers the user.
#[server(endpoint = "login")]
pub async fn login(
    username: String,
    password: String,
    next: Option<String>,
) -> Result<(), ServerFnError> {
    let username = username.trim().to_owned();
    let client = crate::auth::client_ip().await;
    // a browser that signed in to this account before carries its device token
    let headers = leptos_axum::extract::<axum::http::HeaderMap>()
        .await
        .unwrap_or_default();
    let device = headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(crate::auth::device_token)
        .map(str::to_owned);
    let user = backend()?
        .authenticate(&username, &password, client, device.as_deref())
        .await
        .map_err(internal)?;
    let Some((user, epoch)) = user else {
        if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
            resp.set_status(axum::http::StatusCode::UNAUTHORIZED);
        }
        return Err(ServerFnError::new("wrong username or password"));
    };
    let session = crate::auth::session().await?;
    // A new id at every login defeats session fixation.
    crate::auth::renew_id(&session).await?;
    session
        .insert(crate::auth::USER_ID_KEY, user.id)
        .await
        .map_err(|e| ServerFnError::new(format!("session: {e}")))?;
    session
        .insert(crate::auth::EPOCH_KEY, epoch)
        .await
        .map_err(|e| ServerFnError::new(format!("session: {e}")))?;
    crate::auth::start(&session).await?;
    if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
        if let Ok(v) = axum::http::HeaderValue::from_str(&backend()?.device_cookie(&user.username))
        {
            resp.append_header(axum::http::header::SET_COOKIE, v);
        }
    }
    tracing::info!(user = %user.username, role = %user.role, "signed in");
    leptos_axum::redirect(&safe_next(next.as_deref()));
    Ok(())
}

/// Only same-site paths are followed after login: a `/` then letters, digits and
/// `/ - _ . ~ ? = & % + ,` (no `//`, backslash, control character or space, which browsers
/// may read as another host), at most 512 bytes. Anything else goes to `/`.
#[cfg(feature = "ssr")]
fn safe_next(next: Option<&str>) -> String {
    let safe = |p: &str| {
        p.len() <= 512
            && p.starts_with('/')
            && !p.starts_with("//")
            && p.bytes().all(|b| {
                b.is_ascii_alphanumeric()
                    || matches!(
                        b,
                        b'/' | b'-' | b'_' | b'.' | b'~' | b'?' | b'=' | b'&' | b'%' | b'+' | b','
                    )
            })
    };
    match next {
        Some(p) if safe(p) => p.to_owned(),
        _ => "/".to_owned(),
    }
}

/// Signs out: the session is deleted from the store.
#[server(endpoint = "logout")]
pub async fn logout() -> Result<(), ServerFnError> {
    let session = crate::auth::session().await?;
    session
        .flush()
        .await
        .map_err(|e| ServerFnError::new(format!("session: {e}")))?;
    leptos_axum::redirect("/login");
    Ok(())
}

/// Every account (admins only).
#[server(endpoint = "users/list")]
pub async fn list_users() -> Result<Vec<UserRow>, ServerFnError> {
    require(Role::ADMINS).await?;
    backend()?.list_users().await.map_err(internal)
}

/// Adds an account (admins only).
#[server(endpoint = "users/add")]
pub async fn add_user(
    username: String,
    password: String,
    role: String,
) -> Result<UserId, ServerFnError> {
    let actor = require(Role::ADMINS).await?;
    let role =
        Role::parse(&role).ok_or_else(|| ServerFnError::new(format!("unknown role {role}")))?;
    backend()?
        .add_user(&actor, username.trim(), &password, role)
        .await
        .map_err(internal)
}

/// Changes an account's role (admins only); the account's sessions end.
#[server(endpoint = "users/role")]
pub async fn set_user_role(username: String, role: String) -> Result<(), ServerFnError> {
    let actor = require(Role::ADMINS).await?;
    let role =
        Role::parse(&role).ok_or_else(|| ServerFnError::new(format!("unknown role {role}")))?;
    backend()?
        .set_role(&actor, username.trim(), role)
        .await
        .map_err(internal)
}

/// Sets an account's password (admins only); the account's sessions end.
#[server(endpoint = "users/password")]
pub async fn reset_user_password(username: String, password: String) -> Result<(), ServerFnError> {
    let actor = require(Role::ADMINS).await?;
    backend()?
        .reset_password(&actor, username.trim(), &password)
        .await
        .map_err(internal)
}

/// Disables (`disabled` = true) or enables an account (admins only).
#[server(endpoint = "users/disable")]
pub async fn set_user_disabled(username: String, disabled: bool) -> Result<(), ServerFnError> {
    let actor = require(Role::ADMINS).await?;
    backend()?
        .set_disabled(&actor, username.trim(), disabled)
        .await
        .map_err(internal)
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::safe_next;

    #[test]
    fn next_is_same_site_only() {
        assert_eq!(safe_next(Some("/studies/1")), "/studies/1");
        assert_eq!(safe_next(Some("//evil.example")), "/");
        assert_eq!(safe_next(Some("https://evil.example")), "/");
        assert_eq!(safe_next(Some("/\\evil")), "/");
        assert_eq!(safe_next(None), "/");
        // what browsers read as another host, and what cannot be a header value
        assert_eq!(safe_next(Some("/\t/evil.example")), "/");
        assert_eq!(safe_next(Some("/\n")), "/");
        assert_eq!(safe_next(Some("/ /evil.example")), "/");
        assert_eq!(
            safe_next(Some("/studies/1?tab=results")),
            "/studies/1?tab=results"
        );
        assert_eq!(safe_next(Some(&format!("/{}", "a".repeat(600)))), "/");
    }
}
