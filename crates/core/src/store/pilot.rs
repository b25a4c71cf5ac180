//! A study's pilot (migration 0032): pilot participants — joined through a pilot invite link,
//! made while the study was in its pilot phase or by a staff member trying the survey — count
//! nowhere (`counted` = 0 from their join), and clearing the pilot deletes them with their
//! votes, revisions and claims.

use sqlx::Row;

use super::{audit, Db, StoreResult};
use natstudy_vocab::ids::{StudyId, UserId};

/// The pilot's participants and their votes (`$1` the study).
const SUMMARY_SQL: &str = "SELECT COUNT(*) AS participants, \
     (SELECT COUNT(*) FROM votes v JOIN annotators p ON p.id = v.annotator_id \
      WHERE p.study_id = $1 AND p.pilot = 1) AS votes \
     FROM annotators a WHERE a.study_id = $1 AND a.pilot = 1";

fn summary_of(r: &sqlx::any::AnyRow) -> StoreResult<(i64, i64)> {
    Ok((r.try_get("participants")?, r.try_get("votes")?))
}

/// The pilot's participants and their votes so far.
pub async fn summary(db: &Db, study: StudyId) -> StoreResult<(i64, i64)> {
    let r = sqlx::query(SUMMARY_SQL)
        .bind(study)
        .fetch_one(&db.pool)
        .await?;
    summary_of(&r)
}

/// Deletes the study's pilot participants with everything of theirs (their votes, every
/// revision, their claims and memberships go with them: `ON DELETE CASCADE`), with an audit
/// row: (participants, votes) deleted. The votes that count are untouched.
pub async fn clear(db: &Db, study: StudyId, actor: Option<UserId>) -> StoreResult<(i64, i64)> {
    let mut tx = db.begin_write(study).await?;
    let r = sqlx::query(SUMMARY_SQL)
        .bind(study)
        .fetch_one(&mut *tx)
        .await?;
    let (participants, votes) = summary_of(&r)?;
    sqlx::query("DELETE FROM annotators WHERE study_id = $1 AND pilot = 1")
        .bind(study)
        .execute(&mut *tx)
        .await?;
    // their claims are gone: the queue's own-rank hints start over
    super::assign::refresh_full_study(&mut tx, study).await?;
    super::studies::data_changed(&mut tx, study).await?;
    audit::record(
        &mut *tx,
        actor,
        Some(study),
        "pilot.clear",
        &format!("{participants} pilot participants, {votes} votes"),
    )
    .await?;
    tx.commit().await?;
    Ok((participants, votes))
}
