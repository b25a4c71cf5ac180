//! A designed study's answers read back and revised (migration 0036): the units a participant
//! answered with the answers that count, and a revision that replaces them — the replaced
//! answers kept, marked with when. Only SQL: what a revision may change is the service's.

use sqlx::Row;

use super::assign::MAX_REVISIONS;
use super::unit_answers::{Answered, NewResponse};
use super::{Db, StoreError, StoreResult};
use natstudy_vocab::ids::{AnnotatorId, StudyId};

/// A unit the participant answered: their claim, the snippets in the order shown, and the
/// records (JSON) of the answers that count.
#[derive(Debug, Clone, PartialEq)]
pub struct AnsweredClaim {
    pub claim: i64,
    pub shown: Vec<String>,
    pub records: Vec<String>,
}

/// The most answered units one list holds (a participant's N is far below it).
pub const MAX_LISTED: i64 = 1_000;

/// The participant's answered units of the study (attention checks aside), in the order
/// answered, each with the records of its answers that count.
pub async fn answered_units(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
) -> StoreResult<Vec<AnsweredClaim>> {
    let rows = sqlx::query(
        "SELECT c.id, c.shown, r.record FROM unit_claims c JOIN design_units u ON u.id = c.unit_id \
         JOIN responses r ON r.claim_id = c.id AND r.replaced_at IS NULL \
         WHERE u.study_id = $1 AND c.annotator_id = $2 AND c.answered_at IS NOT NULL \
         AND u.attention IS NULL AND c.id IN (SELECT c2.id FROM unit_claims c2 \
           JOIN design_units u2 ON u2.id = c2.unit_id WHERE u2.study_id = $1 \
           AND c2.annotator_id = $2 AND c2.answered_at IS NOT NULL AND u2.attention IS NULL \
           ORDER BY c2.answered_at, c2.id LIMIT $3) \
         ORDER BY c.answered_at, c.id, r.id",
    )
    .bind(study)
    .bind(annotator)
    .bind(MAX_LISTED)
    .fetch_all(&db.pool)
    .await?;
    let mut out: Vec<AnsweredClaim> = Vec::new();
    for r in rows {
        let claim: i64 = r.try_get(0)?;
        let record: String = r.try_get(2)?;
        match out.last_mut() {
            Some(last) if last.claim == claim => last.records.push(record),
            _ => out.push(AnsweredClaim {
                claim,
                shown: super::units::list(&r.try_get::<String, _>(1)?)?,
                records: vec![record],
            }),
        }
    }
    Ok(out)
}

/// The records (JSON) of the answers that count to the participant's claim, and their time
/// on the unit (the first answer's).
pub async fn answers_of(
    db: &Db,
    annotator: AnnotatorId,
    claim: i64,
) -> StoreResult<(Vec<String>, Option<f64>)> {
    let rows = sqlx::query(
        "SELECT record, time_secs FROM responses WHERE claim_id = $1 AND annotator_id = $2 \
         AND replaced_at IS NULL ORDER BY id",
    )
    .bind(claim)
    .bind(annotator)
    .fetch_all(&db.pool)
    .await?;
    let seconds = match rows.first() {
        Some(r) => r.try_get::<Option<f64>, _>(1)?,
        None => None,
    };
    let records = rows
        .iter()
        .map(|r| r.try_get::<String, _>(0))
        .collect::<Result<_, _>>()?;
    Ok((records, seconds))
}

/// Replaces the answers to the participant's answered claim with `responses`, all or none,
/// under the submit `token` (the same token again is the same revision: nothing written). The
/// replaced answers stay, marked replaced now. Refused once the participant finished, for a
/// check, and past [`MAX_REVISIONS`] versions (the first answer one of them, as a vote's).
pub async fn revise(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    claim: i64,
    token: &str,
    responses: &[NewResponse],
    now: i64,
) -> StoreResult<Answered> {
    let mut tx = db.begin_write(study).await?;
    let r = sqlx::query(
        "SELECT c.answered_at, c.token, u.attention, a.finished_at FROM unit_claims c \
         JOIN design_units u ON u.id = c.unit_id JOIN annotators a ON a.id = c.annotator_id \
         WHERE c.id = $1 AND c.annotator_id = $2 AND u.study_id = $3",
    )
    .bind(claim)
    .bind(annotator)
    .bind(study)
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| StoreError::Forbidden("not a unit handed to you".into()))?;
    if r.try_get::<Option<i64>, _>(0)?.is_none() {
        return Err(StoreError::Invalid(
            "this unit is not answered yet: answer it first".into(),
        ));
    }
    if r.try_get::<Option<String>, _>(1)?.as_deref() == Some(token) && !token.is_empty() {
        return Ok(Answered::Again);
    }
    if r.try_get::<Option<String>, _>(2)?.is_some() {
        return Err(StoreError::Invalid(
            "this unit was a check: its answer is kept as given".into(),
        ));
    }
    if r.try_get::<Option<i64>, _>(3)?.is_some() {
        return Err(StoreError::Forbidden(
            "you finished this study: answers are final".into(),
        ));
    }
    // the versions of the answers so far (each writes one row a question), at most
    // MAX_REVISIONS as a vote's: the replaced answers are kept, so a loop of revisions would
    // grow the table without end
    let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM responses WHERE claim_id = $1")
        .bind(claim)
        .fetch_one(&mut *tx)
        .await?;
    let per_version = i64::try_from(responses.len()).unwrap_or(i64::MAX).max(1);
    if rows / per_version >= MAX_REVISIONS {
        return Err(StoreError::Invalid(format!(
            "the answers to a unit may have at most {MAX_REVISIONS} revisions"
        )));
    }
    sqlx::query(
        "UPDATE responses SET replaced_at = $3 WHERE claim_id = $1 AND annotator_id = $2 \
         AND replaced_at IS NULL",
    )
    .bind(claim)
    .bind(annotator)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    sqlx::query("UPDATE unit_claims SET token = $2 WHERE id = $1")
        .bind(claim)
        .bind(token)
        .execute(&mut *tx)
        .await?;
    super::unit_answers::store_responses(&mut tx, (study, annotator), claim, responses, now)
        .await?;
    tx.commit().await?;
    Ok(Answered::Stored)
}
