//! Accounts.

use sqlx::Row;

use super::{Db, StoreError, StoreResult};
use crate::db::now_ms;
use natstudy_vocab::ids::UserId;
use natstudy_vocab::Role;

/// An account: its id, name and role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub id: UserId,
    pub username: String,
    pub role: Role,
}

/// An account as the admin's list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountListing {
    pub account: Account,
    pub disabled: bool,
    pub created_at_ms: i64,
}

/// An account with its password hash, for sign-in.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub user: Account,
    pub password_hash: Option<String>,
    pub disabled: bool,
    /// Sessions signed in under another epoch are no longer valid.
    pub session_epoch: i64,
}

fn role_of(s: &str) -> Result<Role, sqlx::Error> {
    Role::parse(s).ok_or_else(|| sqlx::Error::Decode(format!("unknown role {s}").into()))
}

pub async fn insert(
    db: &Db,
    username: &str,
    password_hash: &str,
    role: Role,
) -> StoreResult<UserId> {
    let row = sqlx::query(
        "INSERT INTO users (username, password_hash, role, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(username)
    .bind(password_hash)
    .bind(role.as_str())
    .bind(now_ms())
    .fetch_one(&mut *db.write().await?)
    .await
    .map_err(|e| StoreError::conflict_on_unique(e, format!("user {username}")))?;
    Ok(row.try_get(0)?)
}

/// Sets the password hash and ends every session of the account (a new session epoch).
pub async fn set_password(db: &Db, username: &str, password_hash: &str) -> StoreResult<()> {
    update_ending_sessions(
        db,
        username,
        "password_hash",
        password_hash.to_owned(),
        false,
    )
    .await
}

/// Disables or enables an account; either ends its sessions (a new session epoch). With
/// `keep_an_admin`, refuses to disable the last enabled admin.
pub async fn set_disabled(
    db: &Db,
    username: &str,
    disabled: bool,
    keep_an_admin: bool,
) -> StoreResult<()> {
    update_ending_sessions(db, username, "disabled", i64::from(disabled), keep_an_admin).await
}

/// Changes an account's role; its sessions end (the new rights apply at the next sign-in).
/// With `keep_an_admin`, refuses to take the role from the last enabled admin.
pub async fn set_role(db: &Db, username: &str, role: &str, keep_an_admin: bool) -> StoreResult<()> {
    update_ending_sessions(db, username, "role", role.to_owned(), keep_an_admin).await
}

/// The lock that serialises changes of accounts' roles and states (study ids are positive).
const ACCOUNTS_LOCK: i64 = -1;

/// Sets one column of the account and moves its session epoch on. With `keep_an_admin` the
/// check (is this the last enabled admin?) and the change are one transaction under the
/// accounts' lock, so two admins demoting each other at once leave one admin.
async fn update_ending_sessions<T>(
    db: &Db,
    username: &str,
    column: &'static str,
    value: T,
    keep_an_admin: bool,
) -> StoreResult<()>
where
    T: for<'q> sqlx::Encode<'q, sqlx::Any> + sqlx::Type<sqlx::Any> + Send + 'static,
{
    let sql = format!(
        "UPDATE users SET {column} = $1, session_epoch = session_epoch + 1 WHERE username = $2"
    );
    let mut tx = db.begin_write(ACCOUNTS_LOCK).await?;
    if keep_an_admin {
        let r = sqlx::query(
            "SELECT COUNT(*) AS n, COALESCE(SUM(CASE WHEN username = $1 THEN 1 ELSE 0 END), 0) AS me \
             FROM users WHERE role = $2 AND disabled = 0",
        )
        .bind(username)
        .bind(Role::Admin.as_str())
        .fetch_one(&mut *tx)
        .await?;
        let (admins, me): (i64, i64) = (r.try_get("n")?, r.try_get("me")?);
        if me > 0 && admins <= 1 {
            return Err(StoreError::Invalid(format!(
                "{username} is the last enabled admin: make another admin first"
            )));
        }
    }
    let r = sqlx::query(&sql)
        .bind(value)
        .bind(username)
        .execute(&mut *tx)
        .await?;
    if r.rows_affected() == 0 {
        return Err(StoreError::NotFound(format!("user {username}")));
    }
    tx.commit().await?;
    Ok(())
}

pub async fn credentials(db: &Db, username: &str) -> StoreResult<Option<Credentials>> {
    let row = sqlx::query(
        "SELECT id, username, role, password_hash, disabled, session_epoch FROM users WHERE username = $1",
    )
    .bind(username)
    .fetch_optional(&db.pool)
    .await?;
    row.map(|r| {
        Ok(Credentials {
            user: account_of(&r)?,
            password_hash: r.try_get("password_hash")?,
            disabled: r.try_get::<i64, _>("disabled")? != 0,
            session_epoch: r.try_get("session_epoch")?,
        })
    })
    .transpose()
    .map_err(StoreError::Db)
}

/// The enabled account with this id.
pub async fn by_id(db: &Db, id: UserId) -> StoreResult<Option<Account>> {
    let row = sqlx::query("SELECT id, username, role FROM users WHERE id = $1 AND disabled = 0")
        .bind(id)
        .fetch_optional(&db.pool)
        .await?;
    user_of(row)
}

/// The enabled account with this id, if a session of `epoch` is still valid for it.
pub async fn by_session(db: &Db, id: UserId, epoch: i64) -> StoreResult<Option<Account>> {
    let row = sqlx::query(
        "SELECT id, username, role FROM users WHERE id = $1 AND disabled = 0 AND session_epoch = $2",
    )
    .bind(id)
    .bind(epoch)
    .fetch_optional(&db.pool)
    .await?;
    user_of(row)
}

fn user_of(row: Option<sqlx::any::AnyRow>) -> StoreResult<Option<Account>> {
    Ok(row.as_ref().map(account_of).transpose()?)
}

fn account_of(r: &sqlx::any::AnyRow) -> Result<Account, sqlx::Error> {
    Ok(Account {
        id: r.try_get("id")?,
        username: r.try_get("username")?,
        role: role_of(&r.try_get::<String, _>("role")?)?,
    })
}

pub async fn list(db: &Db) -> StoreResult<Vec<AccountListing>> {
    let rows =
        sqlx::query("SELECT id, username, role, disabled, created_at FROM users ORDER BY username")
            .fetch_all(&db.pool)
            .await?;
    rows.into_iter()
        .map(|r| {
            Ok(AccountListing {
                account: account_of(&r)?,
                disabled: r.try_get::<i64, _>("disabled")? != 0,
                created_at_ms: r.try_get("created_at")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(StoreError::Db)
}
