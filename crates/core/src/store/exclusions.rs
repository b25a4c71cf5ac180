//! Participants left out of the analysis (`annotators.counted`, `votes.counted`: migration
//! 0031). An excluded participant's votes count toward no item's k — the items they rated go
//! back to the queue until k others have — and reach no figure and no export; including them
//! again puts every vote back. Each change is an audit row (who, when, why) besides the
//! participant's own `excluded_at`, `excluded_by` and `exclusion_reason`.

use sqlx::Row;

use super::{audit, Db, StoreError, StoreResult};
use crate::db::now_ms;
use natstudy_vocab::ids::{AnnotatorId, StudyId, UserId};

/// What an exclusion or re-inclusion did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changed {
    /// The participant's state changed; their votes (this many) moved with it.
    Yes { votes: u64 },
    /// They were already excluded (or already counted): nothing changed.
    Already,
}

/// Excludes the participant with `reason`, by `actor` (`None`: a rule of the study, such as
/// its attention items), in one transaction.
pub async fn exclude(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    actor: Option<UserId>,
    reason: &str,
) -> StoreResult<Changed> {
    let mut tx = db.begin_write(study).await?;
    let changed = exclude_in(&mut tx, study, annotator, actor, reason).await?;
    tx.commit().await?;
    Ok(changed)
}

/// [`exclude`] in the caller's transaction.
pub(crate) async fn exclude_in(
    conn: &mut sqlx::AnyConnection,
    study: StudyId,
    annotator: AnnotatorId,
    actor: Option<UserId>,
    reason: &str,
) -> StoreResult<Changed> {
    let code = code_of(conn, study, annotator).await?;
    let n = sqlx::query(
        "UPDATE annotators SET counted = 0, excluded_at = $1, excluded_by = $2, exclusion_reason = $3 \
         WHERE id = $4 AND study_id = $5 AND counted = 1",
    )
    .bind(now_ms())
    .bind(actor)
    .bind(reason)
    .bind(annotator)
    .bind(study)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    if n == 0 {
        return Ok(Changed::Already);
    }
    let votes = set_votes(conn, annotator, false).await?;
    // what they hold goes back to the pool with their votes' items
    super::assign::release_open(conn, annotator).await?;
    after_change(conn, study).await?;
    audit::record(
        &mut *conn,
        actor,
        Some(study),
        "participant.exclude",
        &format!("participant {code} ({votes} votes): {reason}"),
    )
    .await?;
    Ok(Changed::Yes { votes })
}

/// Counts the participant's votes again (they were excluded), by `actor`, with `reason`.
/// Their items may then have more than k ratings: the analysis lists those as incomplete.
/// A pilot participant ([`super::pilot`]) counts nowhere, whatever is asked.
pub async fn include(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    actor: Option<UserId>,
    reason: &str,
) -> StoreResult<Changed> {
    let mut tx = db.begin_write(study).await?;
    let code = code_of(&mut tx, study, annotator).await?;
    let n = sqlx::query(
        "UPDATE annotators SET counted = 1, excluded_at = NULL, excluded_by = NULL, exclusion_reason = '' \
         WHERE id = $1 AND study_id = $2 AND counted = 0 AND pilot = 0",
    )
    .bind(annotator)
    .bind(study)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if n == 0 {
        return Ok(Changed::Already);
    }
    let votes = set_votes(&mut tx, annotator, true).await?;
    after_change(&mut tx, study).await?;
    audit::record(
        &mut *tx,
        actor,
        Some(study),
        "participant.include",
        &format!("participant {code} ({votes} votes): {reason}"),
    )
    .await?;
    tx.commit().await?;
    Ok(Changed::Yes { votes })
}

async fn code_of(
    conn: &mut sqlx::AnyConnection,
    study: StudyId,
    annotator: AnnotatorId,
) -> StoreResult<String> {
    sqlx::query("SELECT code FROM annotators WHERE id = $1 AND study_id = $2")
        .bind(annotator)
        .bind(study)
        .fetch_optional(&mut *conn)
        .await?
        .map(|r| r.try_get(0))
        .transpose()?
        .ok_or_else(|| StoreError::NotFound(format!("participant {annotator} in this study")))
}

async fn set_votes(
    conn: &mut sqlx::AnyConnection,
    annotator: AnnotatorId,
    counted: bool,
) -> StoreResult<u64> {
    Ok(
        sqlx::query("UPDATE votes SET counted = $1 WHERE annotator_id = $2")
            .bind(i64::from(counted))
            .bind(annotator)
            .execute(&mut *conn)
            .await?
            .rows_affected(),
    )
}

/// The queue's index (which items have k counted ratings) and the report's data version follow.
async fn after_change(conn: &mut sqlx::AnyConnection, study: StudyId) -> StoreResult<()> {
    super::assign::refresh_full_study(conn, study).await?;
    super::studies::data_changed(conn, study).await
}

/// A participant left out of the analysis, as the report names them.
#[derive(Debug, Clone, PartialEq)]
pub struct Excluded {
    pub code: String,
    pub reason: String,
    /// Their votes (which count nowhere while they are excluded).
    pub votes: i64,
}

/// The study's excluded participants in id order (pilot participants are not excluded: they
/// never counted).
pub async fn excluded(db: &Db, study: StudyId) -> StoreResult<Vec<Excluded>> {
    let rows = sqlx::query(
        "SELECT a.code, a.exclusion_reason, (SELECT COUNT(*) FROM votes v WHERE v.annotator_id = a.id) AS votes \
         FROM annotators a WHERE a.study_id = $1 AND a.counted = 0 AND a.pilot = 0 ORDER BY a.id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| {
            Ok(Excluded {
                code: r.try_get("code")?,
                reason: r.try_get("exclusion_reason")?,
                votes: r.try_get("votes")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()?)
}
