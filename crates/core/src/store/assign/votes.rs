//! Votes: recorded durably before they are acknowledged, never beyond k, each revision kept.

use sqlx::Row;

use super::vote_sql::SQL;
use super::*;
use crate::db::Dialect;
use crate::domain::vote::{Value, COLUMNS};
pub use crate::domain::Vote;
use crate::store::group_commit::jobs::grouped;
use crate::store::group_commit::shared::Shared;
use crate::store::{Db, StoreError, StoreResult};
use natstudy_vocab::ids::{AnnotatorId, ItemId, StudyId};

/// How often one annotator may revise one vote.
pub const MAX_REVISIONS: i64 = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submitted {
    /// A new vote (revision 1) or a new revision of it.
    Saved { revision: i64 },
    /// The same submit token was seen before: nothing changed.
    Duplicate { revision: i64 },
}

/// Whether a vote needs the annotator's consent first: a participant's does; staff tools and
/// benchmarks vote for the pool's offline annotators (`ensure_pool`), who never consent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consent {
    Required,
    NotAsked,
}

/// Records a vote, durably, before it is acknowledged. Refuses what would exceed k, what the
/// annotator was never handed, revisions after the annotator finished, and with
/// [`Consent::Required`] votes before the annotator's consent (checked in the same query).
/// Runs in a group commit: the vote is durable when this returns.
pub async fn submit_as(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    item: ItemId,
    vote: &Vote,
    now: i64,
    consent: Consent,
) -> StoreResult<Submitted> {
    let (submitted, _) = vote_job(db, study, annotator, item, vote, now, consent, false).await?;
    Ok(submitted)
}

/// [`submit_as`], then the annotator's next item claimed in the same job, as [`next_item`]
/// claims it: the claim sees the vote (the item just rated is done, nothing is open), and the
/// two share one durable commit, so a vote and the item that follows it cost one wait for the
/// writer instead of two. A refused vote claims nothing; a failed claim fails the vote with it
/// (nothing was acknowledged).
pub async fn submit_then_next(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    item: ItemId,
    vote: &Vote,
    now: i64,
    consent: Consent,
) -> StoreResult<(Submitted, Option<Handed>)> {
    vote_job(db, study, annotator, item, vote, now, consent, true).await
}

/// [`submit_as`] without asking for consent (staff tools, imports of offline annotators,
/// benchmarks).
pub async fn submit(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    item: ItemId,
    vote: &Vote,
    now: i64,
) -> StoreResult<Submitted> {
    submit_as(db, study, annotator, item, vote, now, Consent::NotAsked).await
}

/// The group-commit job of a vote, and of the next claim when `claim_next`.
#[allow(clippy::too_many_arguments)]
async fn vote_job(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    item: ItemId,
    vote: &Vote,
    now: i64,
    consent: Consent,
    claim_next: bool,
) -> StoreResult<(Submitted, Option<Handed>)> {
    let vote = vote.clone();
    grouped(db, study, move |conn, shared| {
        let vote = vote.clone();
        Box::pin(async move {
            let submitted =
                match submit_in(conn, shared, study, annotator, item, &vote, now, consent).await? {
                    Ok(submitted) => submitted,
                    Err(refused) => return Ok(Err(refused)),
                };
            let next = match claim_next {
                true => {
                    super::queue::next_item_in(conn, shared, study, annotator, now, true).await?
                }
                false => None,
            };
            Ok(Ok((submitted, next)))
        })
    })
    .await?
}

/// The vote's job. The outer `Err` is a failure: the group rolls back and runs again with a
/// savepoint around each job. A refusal (seen before is no refusal; not this annotator's, no
/// consent, finished, too many revisions, released, rated, full) is an answer, the inner
/// `Err`: every refusal comes before the vote's first write, so there is nothing to roll back
/// and the group — other participants' claims and votes — commits as usual; a flood of
/// refused votes no longer makes every group it lands in run twice.
async fn submit_in(
    conn: &mut sqlx::AnyConnection,
    shared: &mut Shared,
    study: StudyId,
    annotator: AnnotatorId,
    item: ItemId,
    vote: &Vote,
    now: i64,
    consent: Consent,
) -> StoreResult<StoreResult<Submitted>> {
    // one round trip: the assignment, a submit seen before, k, the item's ratings and others'
    // open claims, with the common first vote written in the same round trip
    // (`fast_pg`, `fast_sqlite`). On PostgreSQL a vote on an expired lease,
    // which takes room only if there is some, first takes the item's lock and reads again (see
    // the module `assign`).
    let pg = shared.dialect() == Dialect::Postgres;
    let first = read_for_vote(
        conn,
        study,
        annotator,
        item,
        vote,
        now,
        Some((consent, shared.dialect())),
    );
    let mut a = match first.await? {
        Ok(k) => {
            // the statement made the assignment done
            shared.keep_k(study.into(), k);
            shared.made_done(annotator.into(), now);
            shared.data_changed(study.into());
            return Ok(Ok(Submitted::Saved { revision: 1 }));
        }
        Err(read) => read,
    };
    if pg && a.as_ref().is_some_and(|a| lease_expired(a, now)) {
        sqlx::query(concat!(
            "SELECT 1 FROM (SELECT ",
            crate::store::group_commit::item_lock!("pg_advisory_xact_lock", "$1"),
            ") AS held"
        ))
        .bind(item)
        .execute(&mut *conn)
        .await?;
        a = read_for_vote(conn, study, annotator, item, vote, now, None)
            .await?
            .err()
            .flatten();
    }
    let Some(a) = a else {
        // a resent submit is recognised whatever it names
        return Ok(match seen_before(conn, annotator, vote.token()).await? {
            Some(revision) => Ok(Submitted::Duplicate { revision }),
            None => Err(StoreError::Forbidden(
                "this item is not assigned to you".into(),
            )),
        });
    };
    if let Some(revision) = a.try_get::<Option<i64>, _>("seen")? {
        return Ok(Ok(Submitted::Duplicate { revision }));
    }
    if consent == Consent::Required && a.try_get::<Option<i64>, _>("consented_at")?.is_none() {
        return Ok(Err(StoreError::Forbidden(
            "give your consent before rating".into(),
        )));
    }
    let Some(k) = a.try_get::<Option<i64>, _>("k")? else {
        return Ok(Err(StoreError::NotFound(format!("study {study}"))));
    };
    shared.keep_k(study.into(), k);
    let mine: Option<i64> = a.try_get("mine")?;
    let status: AssignmentStatus = a.try_get("status")?;
    let finished: Option<i64> = a.try_get("finished_at")?;
    let assignment: i64 = a.try_get("id")?;
    let original_left: i64 = a.try_get("original_left")?;
    // ratings so far (online and imported)
    let rated: i64 = a.try_get("rated")?;
    let revision = match status {
        AssignmentStatus::Done => {
            if finished.is_some() {
                return Ok(Err(StoreError::Forbidden(
                    "you finished this study: votes can no longer be revised".into(),
                )));
            }
            let r = mine.ok_or(StoreError::Db(sqlx::Error::RowNotFound))?;
            if r >= MAX_REVISIONS {
                return Ok(Err(StoreError::Conflict(format!(
                    "a vote may have at most {MAX_REVISIONS} revisions"
                ))));
            }
            r + 1
        }
        AssignmentStatus::Released => {
            return Ok(Err(StoreError::Forbidden(
                "this item was released from you".into(),
            )))
        }
        AssignmentStatus::Assigned | AssignmentStatus::Leased => {
            let expired = lease_expired(&a, now);
            // others' open claims
            let claims: i64 = a.try_get("claims")?;
            // (the void claim is released when the annotator next asks for an item)
            if mine.is_some() || rated >= k || (expired && rated + claims >= k) {
                return Ok(Err(StoreError::Conflict(if mine.is_some() {
                    "you already rated this item".into()
                } else {
                    "this item has all its ratings: your lease expired".into()
                })));
            }
            1
        }
    };
    let row = RowBinds {
        item,
        annotator,
        revision,
        now,
        original_left,
        token: vote.token(),
    };
    // every revision is kept; the vote that counts is the latest; the first revision marks
    // the assignment done. One round trip: on PostgreSQL one statement, on SQLite its
    // statements in one query (the writer's thread runs them one after the other; each round
    // trip to it costs two thread wake-ups, more than most of these statements).
    let first = revision == 1;
    // the queue's index: `rated_full` was 0 (rated < k) and changes only if this vote fills
    // the item
    let fills = first && rated + 1 >= k;
    if shared.dialect() == Dialect::Postgres {
        let q = match first {
            true => row
                .bind(sqlx::query(&SQL.pg_first))
                .bind(AssignmentStatus::Done)
                .bind(assignment),
            false => row.bind(sqlx::query(&SQL.pg_revise)),
        };
        bind_vote(q, vote).execute(&mut *conn).await?;
        if fills {
            sqlx::query(refresh_full!("$2"))
                .bind(item)
                .bind(k)
                .execute(&mut *conn)
                .await?;
        }
    } else {
        let sql = match (first, fills) {
            (true, true) => &SQL.sqlite_first_fills,
            (true, false) => &SQL.sqlite_first,
            (false, _) => &SQL.sqlite_revise,
        };
        let q = row
            .bind(sqlx::query(sql))
            .bind(AssignmentStatus::Done)
            .bind(assignment)
            .bind(k);
        bind_vote(q, vote).execute(&mut *conn).await?;
    }
    match first {
        true => shared.made_done(annotator.into(), now),
        false => shared.touch(annotator.into(), now),
    }
    shared.data_changed(study.into());
    Ok(Ok(Submitted::Saved { revision }))
}

/// Binds `$1`…`$7` of `vote_read!`.
fn bind_read<'q>(
    q: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    study: StudyId,
    annotator: AnnotatorId,
    item: ItemId,
    vote: &'q Vote,
    now: i64,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    q.bind(item)
        .bind(annotator)
        .bind(study)
        .bind(vote.token())
        .bind(now)
        .bind(AssignmentStatus::Assigned)
        .bind(AssignmentStatus::Leased)
}

/// What a vote checks, in one round trip (see [`submit_in`]): `Err` with the read — nothing
/// when the item is not the annotator's in this study — for the caller to decide on. With
/// `write_first` (the consent asked, and the database) the common first vote is written in
/// the same round trip (`fast_pg`, `fast_sqlite`), and `Ok(k)` says it
/// was.
async fn read_for_vote(
    conn: &mut sqlx::AnyConnection,
    study: StudyId,
    annotator: AnnotatorId,
    item: ItemId,
    vote: &Vote,
    now: i64,
    write_first: Option<(Consent, Dialect)>,
) -> StoreResult<Result<i64, Option<sqlx::any::AnyRow>>> {
    let read = || bind_read(sqlx::query(vote_read!()), study, annotator, item, vote, now);
    let Some((consent, dialect)) = write_first else {
        return Ok(Err(read().fetch_optional(&mut *conn).await?));
    };
    let sql = match dialect {
        Dialect::Postgres => SQL.fast_pg.as_str(),
        Dialect::Sqlite => SQL.fast_sqlite.as_str(),
    };
    let q = bind_read(sqlx::query(sql), study, annotator, item, vote, now)
        .bind(i64::from(consent == Consent::Required))
        .bind(AssignmentStatus::Done);
    let q = bind_vote(q, vote);
    if dialect == Dialect::Postgres {
        return match q.fetch_optional(&mut *conn).await? {
            Some(r) if r.try_get::<i64, _>("saved")? > 0 => Ok(Ok(r.try_get("k")?)),
            other => Ok(Err(other)),
        };
    }
    // a row of kind 0 when the revision was written, then k (kind 1)
    let mut written = false;
    let mut k = None;
    for r in q.fetch_all(&mut *conn).await? {
        match r.try_get::<i64, _>("kind")? {
            0 => written = true,
            _ => k = r.try_get::<Option<i64>, _>("k")?,
        }
    }
    if written {
        // written under `k IS NOT NULL`
        return Ok(Ok(k.ok_or(StoreError::Db(sqlx::Error::RowNotFound))?));
    }
    // not written: the read, for the caller to decide on
    Ok(Err(read().fetch_optional(&mut *conn).await?))
}

/// Whether the assignment read by [`read_for_vote`] is a lease that expired at `now` (its room
/// may have gone to someone else).
fn lease_expired(a: &sqlx::any::AnyRow, now: i64) -> bool {
    a.try_get::<AssignmentStatus, _>("status").ok() == Some(AssignmentStatus::Leased)
        && a.try_get::<Option<i64>, _>("lease_expires_at")
            .ok()
            .flatten()
            .is_none_or(|t| t <= now)
}

/// The revision a submit token was recorded with, if it was.
async fn seen_before(
    conn: &mut sqlx::AnyConnection,
    annotator: AnnotatorId,
    token: &str,
) -> StoreResult<Option<i64>> {
    Ok(sqlx::query(
        "SELECT revision FROM vote_revisions WHERE annotator_id = $1 AND submit_token = $2",
    )
    .bind(annotator)
    .bind(token)
    .fetch_optional(&mut *conn)
    .await?
    .map(|r| r.try_get(0))
    .transpose()?)
}

/// A vote row's own columns, bound in one order: `item_id, annotator_id, revision,
/// submitted_at, original_left` and the submit token as `$1`…`$6` (the vote's columns follow,
/// [`bind_vote`]).
struct RowBinds<'a> {
    item: ItemId,
    annotator: AnnotatorId,
    revision: i64,
    now: i64,
    original_left: i64,
    token: &'a str,
}

type AnyQuery<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>;

impl RowBinds<'_> {
    fn bind<'q>(&self, q: AnyQuery<'q>) -> AnyQuery<'q> {
        q.bind(self.item)
            .bind(self.annotator)
            .bind(self.revision)
            .bind(self.now)
            .bind(self.original_left)
            .bind(self.token.to_owned())
    }
}

/// Binds the vote's columns ([`COLUMNS`], in their order) after what `q` holds.
fn bind_vote<'q>(q: AnyQuery<'q>, vote: &Vote) -> AnyQuery<'q> {
    COLUMNS
        .iter()
        .fold(q, |q, column| match (column.value)(vote) {
            Value::Int(v) => q.bind(v),
            Value::OptInt(v) => q.bind(v),
            Value::OptReal(v) => q.bind(crate::store::OptReal(v)),
            Value::Text(v) => q.bind(v.to_owned()),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOK: &str = "0123456789abcdef0123456789abcdef";

    /// SQLite's common vote is written in the round trip that reads it
    /// (`fast_sqlite`): the revision, the vote, the assignment done and — as the
    /// vote fills its item at k = 1 — the queue's index. The same submit again writes nothing
    /// and returns the read (seen before), as does a vote on an item never handed out.
    #[tokio::test]
    async fn the_common_vote_is_written_in_the_round_trip_that_reads_it() {
        let (db, _dir) = crate::store::temp_sqlite().await;
        let study = crate::store::studies::create(&db, None, "fast", "")
            .await
            .expect("study");
        crate::service::imports::import_items_text(
            &db,
            study,
            None,
            ("b", "{\"bug_id\": \"B\", \"project\": \"P\", \"file\": \"A.java\", \"method\": \"m\", \"source\": \"int m() { return 1; }\\n\", \"buggy_lines\": [1]}\n"),
            ("t", "{\"id\": \"naming_1\", \"bug_id\": \"B\", \"operator\": \"RenameVariable-1\", \"level\": \"naming\", \"source\": \"int m() { return 1 + 0; }\\n\", \"summary\": \"s\"}\n"),
        )
        .await
        .expect("items");
        let mut conn = db.write().await.expect("write");
        sqlx::query("UPDATE studies SET ratings_per_item = 1 WHERE id = $1")
            .bind(study)
            .execute(&mut *conn)
            .await
            .expect("k = 1");
        drop(conn);
        let pool = ensure_pool(&db, study, 1).await.expect("pool");
        let spec = BatchSpec {
            name: "q".into(),
            strategy: Strategy::DynamicQueue,
            filter: ItemFilter::default(),
            annotators: pool.clone(),
            seed: 1,
            lease_secs: 600,
            avoid_same_bug: false,
        };
        create_batch(&db, study, None, &spec).await.expect("batch");
        let now = crate::db::now_ms();
        let h = next_item(&db, study, pool[0], now)
            .await
            .expect("next")
            .expect("an item");
        let vote = Vote::parse(
            crate::domain::vote::VoteForm {
                cr: Some(3),
                cc: Some(1),
                comment: "c".into(),
                time_secs: Some(2.0),
                context_opened: true,
                token: TOK.into(),
                ..Default::default()
            },
            now,
        )
        .expect("a vote");
        let fast = Some((Consent::NotAsked, Dialect::Sqlite));
        let mut conn = db.write().await.expect("write");
        let first = read_for_vote(&mut conn, study, pool[0], h.item, &vote, now, fast)
            .await
            .expect("vote");
        assert!(matches!(first, Ok(1)), "written at once, k = 1");
        let written: (i64, i64, i64, String, i64) = sqlx::query_as(
            "SELECT v.cr, v.cc, v.revision, a.status, bi.rated_full FROM votes v \
             JOIN assignments a ON a.item_id = v.item_id AND a.annotator_id = v.annotator_id \
             JOIN batch_items bi ON bi.item_id = v.item_id WHERE v.item_id = $1",
        )
        .bind(h.item)
        .fetch_one(&mut *conn)
        .await
        .expect("the vote");
        assert_eq!(written, (3, 1, 1, "done".into(), 1));
        let revisions = || {
            sqlx::query_scalar::<_, i64>(
                "SELECT COUNT(*) FROM vote_revisions WHERE submit_token = '0123456789abcdef0123456789abcdef'",
            )
        };
        assert_eq!(revisions().fetch_one(&mut *conn).await.expect("n"), 1);
        // the same submit again: the read, seen before, nothing written
        let again = read_for_vote(&mut conn, study, pool[0], h.item, &vote, now, fast)
            .await
            .expect("again");
        let Err(Some(read)) = again else {
            panic!("a resent vote is not written again");
        };
        assert_eq!(
            read.try_get::<Option<i64>, _>("seen").expect("seen"),
            Some(1)
        );
        assert_eq!(revisions().fetch_one(&mut *conn).await.expect("n"), 1);
        // an item never handed out: no read, nothing written
        let stranger = read_for_vote(
            &mut conn,
            study,
            pool[0],
            ItemId(h.item.0 + 1000),
            &vote,
            now,
            fast,
        )
        .await
        .expect("stranger");
        assert!(matches!(stranger, Err(None)));
    }
}
