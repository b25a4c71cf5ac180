//! The store's handle: the database's connections ([`Database`], which knows no table) and the
//! group commit that writes the survey's short jobs together ([`group_commit`]), with what a
//! group's jobs share as the store defines it ([`Shared`]).

use std::ops::Deref;
use std::path::Path;

use super::group_commit::shared::Shared;
use super::group_commit::{self, GroupCommit};
use crate::db::Database;

/// A migrated database and its writer of grouped jobs. Derefs to the [`Database`]: its pools,
/// [`Database::write`], [`Database::begin_write`].
#[derive(Clone, Debug)]
pub struct Db {
    database: Database,
    /// The writer that commits claims and votes in groups, started on first use.
    pub group: GroupCommit<Shared>,
}

impl Deref for Db {
    type Target = Database;
    fn deref(&self) -> &Database {
        &self.database
    }
}

impl Db {
    /// Connects to `url` (`sqlite://…` or `postgres://…`) and applies the migrations.
    pub async fn connect(url: &str) -> anyhow::Result<Db> {
        Ok(Db {
            database: Database::connect(url).await?,
            group: GroupCommit::default(),
        })
    }

    /// The SQLite URL for `natstudy.db` in `data_dir` ([`Database::sqlite_url_in`]).
    pub fn sqlite_url_in(data_dir: &Path) -> anyhow::Result<String> {
        Database::sqlite_url_in(data_dir)
    }

    /// Runs a short write job in the next group commit; the job answers its caller itself once
    /// the group's transaction ended.
    pub async fn grouped(&self, job: Box<dyn group_commit::Job<Shared>>) {
        self.group.submit(&self.database, job).await
    }
}

/// A fresh SQLite database in a temporary directory (kept while the directory lives), for
/// unit tests.
#[cfg(test)]
pub(crate) async fn temp_sqlite() -> (Db, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::connect(&Db::sqlite_url_in(dir.path()).expect("url"))
        .await
        .expect("db");
    (db, dir)
}
