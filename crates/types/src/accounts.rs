//! The accounts as the pages see them.

use serde::{Deserialize, Serialize};

use crate::{Role, UserId};

/// The signed-in account as the pages see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    pub id: UserId,
    pub username: String,
    pub role: Role,
}

/// One row of the admin's user list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserRow {
    pub id: UserId,
    pub username: String,
    pub role: Role,
    pub disabled: bool,
    pub created_at_ms: i64,
}
