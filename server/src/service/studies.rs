//! Studies: creating one (the one rule for its name), and who belongs to it.

use super::{ServiceError, ServiceResult};
use crate::db::Db;
use crate::store;

/// The longest study name, in characters.
pub const MAX_NAME: usize = 200;
/// The longest description, in characters.
pub const MAX_DESCRIPTION: usize = 10_000;

/// Creates a study: its name is trimmed and must then have 1–200 characters; it belongs to
/// `owner` (else to `actor`, when there is one).
pub async fn create(
    db: &Db,
    actor: Option<i64>,
    owner: Option<i64>,
    name: &str,
    description: &str,
) -> ServiceResult<i64> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME {
        return Err(ServiceError::Invalid(format!(
            "a study needs a name of 1–{MAX_NAME} characters"
        )));
    }
    if description.chars().count() > MAX_DESCRIPTION {
        return Err(ServiceError::Invalid(format!(
            "a description has at most {MAX_DESCRIPTION} characters"
        )));
    }
    Ok(store::studies::create_owned(db, actor, owner, name, description.trim()).await?)
}
