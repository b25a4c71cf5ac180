//! Votes: recorded durably before they are acknowledged, never beyond k, each revision kept.

use futures_util::future::BoxFuture;
use sqlx::Row;

use super::*;
use crate::ids::{AnnotatorId, ItemId, StudyId};
use crate::store::grouped::{grouped, Work};
use crate::store::{Db, StoreError, StoreResult};

/// How often one annotator may revise one vote.
pub const MAX_REVISIONS: i64 = 20;

/// A vote to record: the two answers (1–4), the comment, time on item, when the item was shown,
/// whether the context was opened, and the submit token that makes a resent submit one vote.
#[derive(Debug, Clone, PartialEq)]
pub struct VoteInput {
    pub cr: u8,
    pub cc: u8,
    pub comment: String,
    pub time_secs: Option<f64>,
    pub started_at: Option<i64>,
    pub context_opened: bool,
    pub token: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submitted {
    /// A new vote (revision 1) or a new revision of it.
    Saved { revision: i64 },
    /// The same submit token was seen before: nothing changed.
    Duplicate { revision: i64 },
}

/// Records a vote, durably, before it is acknowledged. Refuses what would exceed k, what the
/// annotator was never handed, and revisions after the annotator finished. Runs in a group
/// commit: the vote is durable when this returns.
pub async fn submit(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    item: ItemId,
    vote: &VoteInput,
    now: i64,
) -> StoreResult<Submitted> {
    if !(1..=4).contains(&vote.cr) || !(1..=4).contains(&vote.cc) {
        return Err(StoreError::Invalid(
            "answers must be on the 1–4 scale".into(),
        ));
    }
    grouped(
        db,
        Submit {
            study,
            annotator,
            item,
            vote: vote.clone(),
            now,
        },
    )
    .await
}

struct Submit {
    study: StudyId,
    annotator: AnnotatorId,
    item: ItemId,
    vote: VoteInput,
    now: i64,
}

impl Work for Submit {
    type Output = Submitted;
    fn lock(&self) -> i64 {
        self.study.into()
    }
    fn run<'c>(
        &'c self,
        conn: &'c mut sqlx::AnyConnection,
    ) -> BoxFuture<'c, StoreResult<Submitted>> {
        Box::pin(submit_in(
            conn,
            self.study,
            self.annotator,
            self.item,
            &self.vote,
            self.now,
        ))
    }
}

async fn submit_in(
    conn: &mut sqlx::AnyConnection,
    study: StudyId,
    annotator: AnnotatorId,
    item: ItemId,
    vote: &VoteInput,
    now: i64,
) -> StoreResult<Submitted> {
    let k = k_in(conn, study).await?;
    if let Some(r) = sqlx::query(
        "SELECT revision FROM vote_revisions WHERE annotator_id = $1 AND submit_token = $2",
    )
    .bind(annotator)
    .bind(&vote.token)
    .fetch_optional(&mut *conn)
    .await?
    {
        return Ok(Submitted::Duplicate {
            revision: r.try_get(0)?,
        });
    }
    let a = sqlx::query(
        "SELECT a.id, a.status, a.lease_expires_at, a.original_left, an.finished_at FROM assignments a \
         JOIN annotators an ON an.id = a.annotator_id JOIN batches b ON b.id = a.batch_id \
         WHERE a.item_id = $1 AND a.annotator_id = $2 AND b.study_id = $3",
    )
    .bind(item)
    .bind(annotator)
    .bind(study)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| StoreError::Forbidden("this item is not assigned to you".into()))?;
    let status: AssignmentStatus = a.try_get("status")?;
    let finished: Option<i64> = a.try_get("finished_at")?;
    let assignment: i64 = a.try_get("id")?;
    let original_left: i64 = a.try_get("original_left")?;
    let revision = match status {
        AssignmentStatus::Done => {
            if finished.is_some() {
                return Err(StoreError::Forbidden(
                    "you finished this study: votes can no longer be revised".into(),
                ));
            }
            let r: i64 =
                sqlx::query("SELECT revision FROM votes WHERE item_id = $1 AND annotator_id = $2")
                    .bind(item)
                    .bind(annotator)
                    .fetch_one(&mut *conn)
                    .await?
                    .try_get(0)?;
            if r >= MAX_REVISIONS {
                return Err(StoreError::Conflict(format!(
                    "a vote may have at most {MAX_REVISIONS} revisions"
                )));
            }
            r + 1
        }
        AssignmentStatus::Released => {
            return Err(StoreError::Forbidden(
                "this item was released from you".into(),
            ))
        }
        AssignmentStatus::Assigned | AssignmentStatus::Leased => {
            let expired = status == AssignmentStatus::Leased
                && a.try_get::<Option<i64>, _>("lease_expires_at")?
                    .is_none_or(|t| t <= now);
            // ratings so far (online and imported), and others' open claims
            let r = sqlx::query(
                "SELECT (SELECT COUNT(*) FROM votes WHERE item_id = $1) AS rated, \
                 (SELECT COUNT(*) FROM votes WHERE item_id = $1 AND annotator_id = $2) AS mine, \
                 (SELECT COUNT(*) FROM assignments WHERE item_id = $1 AND annotator_id <> $2 \
                  AND (status = $4 OR (status = $5 AND lease_expires_at > $3))) AS claims",
            )
            .bind(item)
            .bind(annotator)
            .bind(now)
            .bind(AssignmentStatus::Assigned)
            .bind(AssignmentStatus::Leased)
            .fetch_one(&mut *conn)
            .await?;
            let (rated, mine, claims): (i64, i64, i64) = (
                r.try_get("rated")?,
                r.try_get("mine")?,
                r.try_get("claims")?,
            );
            // (the void claim is released when the annotator next asks for an item)
            if mine > 0 || rated >= k || (expired && rated + claims >= k) {
                return Err(StoreError::Conflict(if mine > 0 {
                    "you already rated this item".into()
                } else {
                    "this item has all its ratings: your lease expired".into()
                }));
            }
            1
        }
    };
    let comment = vote.comment.chars().take(4000).collect::<String>();
    let row = VoteRow {
        item,
        annotator,
        revision,
        vote,
        now,
        original_left,
        comment: &comment,
    };
    // every revision is kept; the vote that counts is the latest
    row.bind(sqlx::query(
        "INSERT INTO vote_revisions (item_id, annotator_id, revision, cr, cc, time_secs, started_at, submitted_at, \
         original_left, context_opened, comment, submit_token) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    ))
    .bind(&vote.token)
    .execute(&mut *conn)
    .await?;
    row.bind(sqlx::query(
        "INSERT INTO votes (item_id, annotator_id, revision, cr, cc, time_secs, started_at, submitted_at, \
         original_left, context_opened, comment) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
         ON CONFLICT (item_id, annotator_id) DO UPDATE SET revision = excluded.revision, cr = excluded.cr, \
         cc = excluded.cc, time_secs = excluded.time_secs, started_at = excluded.started_at, \
         submitted_at = excluded.submitted_at, context_opened = excluded.context_opened, comment = excluded.comment",
    ))
    .execute(&mut *conn)
    .await?;
    if revision == 1 {
        sqlx::query("UPDATE assignments SET status = $3, lease_expires_at = $1 WHERE id = $2")
            .bind(now)
            .bind(assignment)
            .bind(AssignmentStatus::Done)
            .execute(&mut *conn)
            .await?;
        refresh_full_item(conn, item, k).await?;
    }
    touch(conn, annotator, now).await?;
    crate::store::studies::data_changed(conn, study).await?;
    Ok(Submitted::Saved { revision })
}

/// The columns a vote and each of its revisions share, bound in one order.
struct VoteRow<'a> {
    item: ItemId,
    annotator: AnnotatorId,
    revision: i64,
    vote: &'a VoteInput,
    now: i64,
    original_left: i64,
    comment: &'a str,
}

impl<'a> VoteRow<'a> {
    /// Binds `item_id, annotator_id, revision, cr, cc, time_secs, started_at, submitted_at,
    /// original_left, context_opened, comment` as `$1`…`$11`.
    fn bind(
        &self,
        q: sqlx::query::Query<'a, sqlx::Any, sqlx::any::AnyArguments<'a>>,
    ) -> sqlx::query::Query<'a, sqlx::Any, sqlx::any::AnyArguments<'a>> {
        q.bind(self.item)
            .bind(self.annotator)
            .bind(self.revision)
            .bind(i64::from(self.vote.cr))
            .bind(i64::from(self.vote.cc))
            .bind(self.vote.time_secs)
            .bind(self.vote.started_at)
            .bind(self.now)
            .bind(self.original_left)
            .bind(i64::from(self.vote.context_opened))
            .bind(self.comment.to_owned())
    }
}
