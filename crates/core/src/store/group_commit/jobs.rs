//! The survey's short writes (joins, consent, claims, votes, lease renewals, sessions) as jobs
//! of the database's group commit ([`super`]): each runs in a transaction shared with
//! the writes that arrived with it, and its caller is answered only after that transaction
//! committed.

use futures_util::future::BoxFuture;
use sqlx::AnyConnection;
use tokio::sync::oneshot;

use super::shared::Shared;
use super::Job;
use crate::store::{Db, StoreError, StoreResult};

/// Store work for a group commit: given the group's connection and what the group shares, it
/// does its writes. It may run twice (when its group runs again with savepoints), so it takes
/// its arguments by copy or clone on each run. Any closure of that shape is one.
pub(crate) trait Work<T>:
    for<'c> Fn(&'c mut AnyConnection, &'c mut Shared) -> BoxFuture<'c, StoreResult<T>>
    + Send
    + Sync
    + 'static
{
}

impl<T, W> Work<T> for W where
    W: for<'c> Fn(&'c mut AnyConnection, &'c mut Shared) -> BoxFuture<'c, StoreResult<T>>
        + Send
        + Sync
        + 'static
{
}

struct Grouped<T, W> {
    lock: Option<i64>,
    work: W,
    /// The last run's result.
    result: Option<StoreResult<T>>,
    reply: oneshot::Sender<StoreResult<T>>,
}

fn not_committed(e: &sqlx::Error) -> StoreError {
    StoreError::Db(sqlx::Error::Io(std::io::Error::other(format!(
        "the write was not committed: {e}"
    ))))
}

impl<T: Send + 'static, W: Work<T>> Job<Shared> for Grouped<T, W> {
    fn lock(&self) -> Option<i64> {
        self.lock
    }

    fn run<'c>(
        &'c mut self,
        conn: &'c mut AnyConnection,
        shared: &'c mut Shared,
    ) -> BoxFuture<'c, bool> {
        Box::pin(async move {
            let r = (self.work)(conn, shared).await;
            let ok = r.is_ok();
            self.result = Some(r);
            ok
        })
    }

    fn finish(self: Box<Self>, commit: Result<(), &sqlx::Error>) {
        let answer = match (self.result, commit) {
            // a job that failed was rolled back: its own error, whatever the commit did
            (Some(Err(e)), _) => Err(e),
            (Some(Ok(v)), Ok(())) => Ok(v),
            (_, Err(e)) => Err(not_committed(e)),
            (None, Ok(())) => Err(StoreError::Db(sqlx::Error::Io(std::io::Error::other(
                "the write never ran",
            )))),
        };
        let _ = self.reply.send(answer);
    }
}

/// Runs `work` in the next group commit, serialised with the other writers of `lock` (the
/// study), and returns its result once it is durable.
pub(crate) async fn grouped<T, W>(db: &Db, lock: impl Into<i64>, work: W) -> StoreResult<T>
where
    T: Send + 'static,
    W: Work<T>,
{
    submit(db, Some(lock.into()), work).await
}

/// As [`grouped`] for a write that belongs to no study (a session's): it takes no study's lock.
pub(crate) async fn grouped_unlocked<T, W>(db: &Db, work: W) -> StoreResult<T>
where
    T: Send + 'static,
    W: Work<T>,
{
    submit(db, None, work).await
}

async fn submit<T, W>(db: &Db, lock: Option<i64>, work: W) -> StoreResult<T>
where
    T: Send + 'static,
    W: Work<T>,
{
    let (reply, answer) = oneshot::channel();
    db.grouped(Box::new(Grouped {
        lock,
        work,
        result: None,
        reply,
    }))
    .await;
    answer.await.map_err(|_| {
        StoreError::Db(sqlx::Error::Io(std::io::Error::other(
            "the database writer stopped",
        )))
    })?
}
