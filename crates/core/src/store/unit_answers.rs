//! A designed study's answers stored: the answer that ends a claim (all or none, once per
//! submit token) and the units a participant answered. Only SQL.

use sqlx::Row;

use super::{Db, StoreError, StoreResult};
use natstudy_vocab::ids::{AnnotatorId, StudyId};

/// One response to store: the participant's code as given, the question, the record (JSON)
/// and the time on item.
#[derive(Debug, Clone)]
pub struct NewResponse {
    pub participant: String,
    pub question: String,
    pub record: String,
    pub seconds: Option<f64>,
}

/// How an answer was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answered {
    /// Stored now.
    Stored,
    /// The same submit again (its token): stored before, nothing written.
    Again,
}

/// Stores the answers to a claim of the participant, all or none, and ends the claim — also
/// a claim whose hold lapsed (the work was done; the unit may get one response more than k).
/// The same token again is the same answer; another answer to an answered claim is refused.
pub async fn answer(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    claim: i64,
    token: &str,
    responses: &[NewResponse],
    now: i64,
    missed: bool,
) -> StoreResult<Answered> {
    let mut tx = db.begin_write(study).await?;
    let r = sqlx::query(
        "SELECT c.answered_at, c.token FROM unit_claims c JOIN design_units u ON u.id = c.unit_id \
         WHERE c.id = $1 AND c.annotator_id = $2 AND u.study_id = $3",
    )
    .bind(claim)
    .bind(annotator)
    .bind(study)
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| StoreError::Forbidden("not a unit handed to you".into()))?;
    if r.try_get::<Option<i64>, _>(0)?.is_some() {
        let stored: Option<String> = r.try_get(1)?;
        return if stored.as_deref() == Some(token) && !token.is_empty() {
            Ok(Answered::Again)
        } else {
            Err(StoreError::Invalid(
                "this unit is answered already: your answer to it is kept".into(),
            ))
        };
    }
    sqlx::query("UPDATE unit_claims SET answered_at = $2, token = $3, missed = $4 WHERE id = $1")
        .bind(claim)
        .bind(now)
        .bind(token)
        .bind(i64::from(missed))
        .execute(&mut *tx)
        .await?;
    store_responses(&mut tx, (study, annotator), claim, responses, now).await?;
    tx.commit().await?;
    Ok(Answered::Stored)
}

/// Writes the responses to the participant's claim at `now` in the caller's transaction, with
/// the participant's last activity and the study's data version.
pub(super) async fn store_responses(
    tx: &mut sqlx::AnyConnection,
    (study, annotator): (StudyId, AnnotatorId),
    claim: i64,
    responses: &[NewResponse],
    now: i64,
) -> StoreResult<()> {
    for resp in responses {
        sqlx::query(
            "INSERT INTO responses (study_id, annotator_id, question, record, time_secs, submitted_at, claim_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(study)
        .bind(annotator)
        .bind(&resp.question)
        .bind(&resp.record)
        .bind(super::OptReal(resp.seconds))
        .bind(now)
        .bind(claim)
        .execute(&mut *tx)
        .await?;
    }
    sqlx::query("UPDATE annotators SET last_active = $2 WHERE id = $1")
        .bind(annotator)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    super::studies::data_changed(tx, study).await
}

/// The units the participant answered, their work: the attention units they answered are
/// checks, not counted (the quota N and the progress count the work alone).
pub async fn answered(db: &Db, study: StudyId, annotator: AnnotatorId) -> StoreResult<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COUNT(*) FROM unit_claims c JOIN design_units u ON u.id = c.unit_id \
         WHERE u.study_id = $1 AND c.annotator_id = $2 AND c.answered_at IS NOT NULL \
         AND u.attention IS NULL",
    )
    .bind(study)
    .bind(annotator)
    .fetch_one(&db.pool)
    .await?)
}
