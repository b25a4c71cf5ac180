//! Accounts: adding, signing in (throttled, one hash per core), passwords and disabling.
//! The one place these rules live; the web and the command line both call it.

use std::net::IpAddr;

use natstudy_types::{Role, User};

use super::error::{ServiceError, ServiceResult};
use super::throttle::Throttle;
use crate::store;
use crate::store::Db;
use natstudy_vocab::ids::UserId;

/// The endings of names natstudy gives people without an account: a participant reviewer of a
/// review-only invite (`S7@invite`) and an annotator of imported votes (`S3@import`). No
/// account takes them, or its verdicts and votes would mix with theirs.
pub const RESERVED_ENDINGS: [&str; 2] = ["@invite", "@import"];

/// Account names: 1–64 letters, digits, `_ - . @`, not ending as the names natstudy gives
/// participants ([`RESERVED_ENDINGS`]).
pub fn validate_username(name: &str) -> ServiceResult<()> {
    if let Some(end) = RESERVED_ENDINGS
        .iter()
        .find(|e| name.to_ascii_lowercase().ends_with(*e))
    {
        return Err(ServiceError::Invalid(format!(
            "usernames ending in {end} are reserved for participants without an account"
        )));
    }
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '@'));
    if ok {
        Ok(())
    } else {
        Err(ServiceError::Invalid(
            "username must be 1–64 characters: letters, digits, _ - . @".into(),
        ))
    }
}

/// Adds an account: validates the name, hashes the password, records the action.
pub async fn add_user(
    db: &Db,
    actor: Option<&User>,
    username: &str,
    password: &str,
    role: Role,
) -> ServiceResult<UserId> {
    validate_username(username)?;
    let hash = crate::password::hash_async(password.to_owned()).await?;
    let id = store::users::insert(db, username, &hash, role).await?;
    store::audit::record(
        &mut *db.write().await?,
        actor.map(|a| a.id),
        None,
        "user.add",
        &format!("{username} ({role})"),
    )
    .await?;
    Ok(id)
}

/// Sets a password; every session of the account ends (its session epoch moves on).
pub async fn set_password(
    db: &Db,
    actor: Option<&User>,
    username: &str,
    password: &str,
) -> ServiceResult<()> {
    let hash = crate::password::hash_async(password.to_owned()).await?;
    store::users::set_password(db, username, &hash).await?;
    store::audit::record(
        &mut *db.write().await?,
        actor.map(|a| a.id),
        None,
        "user.passwd",
        username,
    )
    .await?;
    Ok(())
}

/// Changes an account's role; its sessions end. Through the pages, the last enabled admin
/// stays an admin (nobody could manage accounts there any more); the command line — the
/// server's operator — may, and `user enable`/`user role` undo it.
pub async fn set_role(
    db: &Db,
    actor: Option<&User>,
    username: &str,
    role: Role,
) -> ServiceResult<()> {
    let keep_an_admin = actor.is_some() && role != Role::Admin;
    store::users::set_role(db, username, role.as_str(), keep_an_admin).await?;
    store::audit::record(
        &mut *db.write().await?,
        actor.map(|a| a.id),
        None,
        "user.role",
        &format!("{username} ({role})"),
    )
    .await?;
    Ok(())
}

/// Disables (or enables) an account; disabling ends its sessions. Nobody disables their own
/// account or the last enabled admin.
pub async fn set_disabled(
    db: &Db,
    actor: Option<&User>,
    username: &str,
    disabled: bool,
) -> ServiceResult<()> {
    if disabled && actor.is_some_and(|a| a.username == username) {
        return Err(ServiceError::Invalid(
            "you cannot disable your own account".into(),
        ));
    }
    // through the pages, never the last enabled admin
    let keep_an_admin = disabled && actor.is_some();
    store::users::set_disabled(db, username, disabled, keep_an_admin).await?;
    let action = if disabled {
        "user.disable"
    } else {
        "user.enable"
    };
    store::audit::record(
        &mut *db.write().await?,
        actor.map(|a| a.id),
        None,
        action,
        username,
    )
    .await?;
    Ok(())
}

/// A sign-in attempt: throttled before any hash is computed — per client address, per account
/// and address, and, unless the browser's device token (`device`) shows it signed in to this
/// account before, per account; unknown and disabled accounts are verified against a dummy
/// hash so timing does not tell them apart. Returns the account and its session epoch.
pub async fn authenticate(
    db: &Db,
    throttle: &Throttle,
    devices: &super::devices::DeviceKey,
    client: Option<IpAddr>,
    username: &str,
    password: &str,
    device: Option<&str>,
) -> ServiceResult<Option<(User, i64)>> {
    let known = device.is_some_and(|d| devices.recognises(d, username));
    if let Err(wait) = throttle.attempt(client, username, known) {
        tracing::warn!(?client, username = %username.chars().take(64).collect::<String>(), wait, "sign-in throttled");
        return Err(ServiceError::TooMany(wait));
    }
    let creds = if username.len() <= 64 {
        store::users::credentials(db, username).await?
    } else {
        None
    };
    let (hash, user) = match creds {
        Some(c) if !c.disabled => (
            c.password_hash.unwrap_or_default(),
            Some((crate::present::wire::user(c.user), c.session_epoch)),
        ),
        _ => (crate::password::dummy_hash().to_owned(), None),
    };
    let ok = crate::password::verify_async(password.to_owned(), hash).await?;
    Ok(user.filter(|_| ok))
}

/// The signed-in account of a session (`epoch`: the account's session epoch when it signed
/// in): none once the account is disabled or its sessions were ended.
pub async fn session_user(db: &Db, id: UserId, epoch: i64) -> ServiceResult<Option<User>> {
    Ok(store::users::by_session(db, id, epoch)
        .await?
        .map(crate::present::wire::user))
}

/// The account called `username`.
pub async fn id_by_name(db: &Db, username: &str) -> ServiceResult<UserId> {
    store::users::credentials(db, username)
        .await?
        .map(|c| c.user.id)
        .ok_or_else(|| ServiceError::NotFound(format!("account {username}")))
}

/// Every account, for the admins' page.
pub async fn list(db: &Db) -> ServiceResult<Vec<natstudy_types::UserRow>> {
    Ok(store::users::list(db)
        .await?
        .into_iter()
        .map(crate::present::wire::user_row)
        .collect())
}
