//! The survey's short writes (joins, claims, votes, lease renewals) as jobs of the database's group
//! commit (`db::group_commit`): each runs in its own savepoint of a shared transaction and its
//! caller is answered only after that transaction committed.

use futures_util::future::BoxFuture;
use tokio::sync::oneshot;

use crate::db::group_commit::Job;
use crate::store::{Db, StoreError, StoreResult};

/// Store work for a group commit: what it locks and what it does on the group's connection.
pub(crate) trait Work: Send + Sync + 'static {
    type Output: Send + 'static;
    /// The study whose writers it is serialised with.
    fn lock(&self) -> i64;
    fn run<'c>(
        &'c self,
        conn: &'c mut sqlx::AnyConnection,
    ) -> BoxFuture<'c, StoreResult<Self::Output>>;
}

struct Grouped<W: Work> {
    work: W,
    /// The last run's result.
    result: Option<StoreResult<W::Output>>,
    reply: oneshot::Sender<StoreResult<W::Output>>,
}

fn not_committed(e: &sqlx::Error) -> StoreError {
    StoreError::Db(sqlx::Error::Io(std::io::Error::other(format!(
        "the write was not committed: {e}"
    ))))
}

impl<W: Work> Job for Grouped<W> {
    fn lock(&self) -> i64 {
        self.work.lock()
    }

    fn run<'c>(&'c mut self, conn: &'c mut sqlx::AnyConnection) -> BoxFuture<'c, bool> {
        Box::pin(async move {
            let r = self.work.run(conn).await;
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

/// Runs the work in the next group commit and returns its result once it is durable.
pub(crate) async fn grouped<W: Work>(db: &Db, work: W) -> StoreResult<W::Output> {
    let (reply, answer) = oneshot::channel();
    db.grouped(Box::new(Grouped {
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
