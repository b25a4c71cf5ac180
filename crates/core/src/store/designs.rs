//! A designed study's data: its design, snippets and responses (migration 0034). Only SQL:
//! what a record holds and whether it is valid is the design engine's (`natstudy_engine::design`).

use std::collections::HashMap;

use sqlx::Row;

use super::imports::{already, imported_annotator, mark, Outcome};
pub use super::units::NewResponse;
use super::{Db, StoreError, StoreResult};
use crate::db::now_ms;
use natstudy_vocab::ids::{StudyId, UserId};

/// The study's design as stored (JSON), or `None` for the naturalness study.
pub async fn design(db: &Db, study: StudyId) -> StoreResult<Option<String>> {
    let row = sqlx::query("SELECT design FROM studies WHERE id = $1")
        .bind(study)
        .fetch_optional(&db.pool)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("study {study}")))?;
    Ok(row.try_get(0)?)
}

/// Sets the design of a study that has recorded nothing yet (no response, no vote).
pub async fn set_design(db: &Db, study: StudyId, design: &str) -> StoreResult<()> {
    let mut tx = db.begin_write(study).await?;
    let answered: i64 = sqlx::query(
        "SELECT (SELECT COUNT(*) FROM responses WHERE study_id = $1) \
         + (SELECT COUNT(*) FROM votes v JOIN items i ON i.id = v.item_id WHERE i.study_id = $1)",
    )
    .bind(study)
    .fetch_one(&mut *tx)
    .await?
    .try_get(0)?;
    if answered > 0 {
        return Err(StoreError::Invalid(format!(
            "the design is fixed once a response is recorded, and this study has {answered}: \
             make a new study for a new design"
        )));
    }
    sqlx::query("UPDATE studies SET design = $2 WHERE id = $1")
        .bind(study)
        .bind(design)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// The study's snippets' records (JSON), in the order imported.
pub async fn snippets(db: &Db, study: StudyId) -> StoreResult<Vec<String>> {
    sqlx::query("SELECT record FROM snippets WHERE study_id = $1 ORDER BY position")
        .bind(study)
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(|r| Ok(r.try_get(0)?))
        .collect()
}

/// The records of the study's snippets `ids` (a unit's: a few), in no particular order.
pub async fn snippets_by_id(db: &Db, study: StudyId, ids: &[String]) -> StoreResult<Vec<String>> {
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let r: Option<String> = sqlx::query_scalar(
            "SELECT record FROM snippets WHERE study_id = $1 AND snippet_key = $2",
        )
        .bind(study)
        .bind(id)
        .fetch_optional(&db.pool)
        .await?;
        out.extend(r);
    }
    Ok(out)
}

/// Adds snippets (id, record JSON) after those the study has, all or none, and replaces the
/// study's units by `units` (planned over all its snippets); an id the study already has is
/// refused, and so is any change once a participant was handed a unit.
pub async fn add_snippets(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    digest: &str,
    snippets: &[(String, String)],
    units: &[Vec<String>],
) -> StoreResult<Outcome> {
    let mut tx = db.begin_write(study).await?;
    if already(&mut tx, study, "snippets", digest).await? {
        return Ok(Outcome::AlreadyImported);
    }
    let start: i64 =
        sqlx::query("SELECT COALESCE(MAX(position), 0) FROM snippets WHERE study_id = $1")
            .bind(study)
            .fetch_one(&mut *tx)
            .await?
            .try_get(0)?;
    for (i, (key, record)) in snippets.iter().enumerate() {
        sqlx::query(
            "INSERT INTO snippets (study_id, snippet_key, position, record) VALUES ($1, $2, $3, $4)",
        )
        .bind(study)
        .bind(key)
        .bind(start + 1 + i as i64)
        .bind(record)
        .execute(&mut *tx)
        .await
        .map_err(|e| StoreError::conflict_on_unique(e, format!("snippet {key} (in this study)")))?;
    }
    super::units::replace_in(&mut tx, study, units).await?;
    mark(&mut tx, study, actor, "snippets", digest, snippets.len()).await?;
    super::studies::data_changed(&mut tx, study).await?;
    tx.commit().await?;
    Ok(Outcome::Imported {
        rows: snippets.len(),
    })
}

/// Imports responses in their order, all or none; their participants are made as imported
/// participants of the study ([`imported_code`]), as an imported vote's are.
pub async fn import_responses(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    digest: &str,
    responses: &[NewResponse],
) -> StoreResult<Outcome> {
    let mut tx = db.begin_write(study).await?;
    if already(&mut tx, study, "responses", digest).await? {
        return Ok(Outcome::AlreadyImported);
    }
    let now = now_ms();
    let mut annotators: HashMap<&str, i64> = HashMap::new();
    for r in responses {
        if !annotators.contains_key(r.participant.as_str()) {
            let id = imported_annotator(&mut tx, study, &r.participant, now).await?;
            annotators.insert(&r.participant, id);
        }
    }
    for r in responses {
        sqlx::query(
            "INSERT INTO responses (study_id, annotator_id, question, record, time_secs, submitted_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(study)
        .bind(annotators[r.participant.as_str()])
        .bind(&r.question)
        .bind(&r.record)
        .bind(super::OptReal(r.seconds))
        .bind(now)
        .execute(&mut *tx)
        .await?;
    }
    mark(&mut tx, study, actor, "responses", digest, responses.len()).await?;
    super::studies::data_changed(&mut tx, study).await?;
    tx.commit().await?;
    Ok(Outcome::Imported {
        rows: responses.len(),
    })
}

/// The study's responses as (participant's code, record JSON), in the order given — those
/// that count: a revision's replaced answers aside — (answers to attention units aside: they check the participant, not the snippets): those of counted
/// participants, and with `include_excluded` those of excluded ones too (never a
/// pilot's).
pub async fn responses(
    db: &Db,
    study: StudyId,
    include_excluded: bool,
) -> StoreResult<Vec<(String, String)>> {
    sqlx::query(
        "SELECT a.code, r.record FROM responses r JOIN annotators a ON a.id = r.annotator_id \
         WHERE r.study_id = $1 AND r.replaced_at IS NULL AND (a.counted = 1 OR ($2 = 1 AND a.pilot = 0)) \
         AND NOT EXISTS (SELECT 1 FROM unit_claims c JOIN design_units u ON u.id = c.unit_id \
           WHERE c.id = r.claim_id AND u.attention IS NOT NULL) ORDER BY r.id",
    )
    .bind(study)
    .bind(i64::from(include_excluded))
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
    .collect()
}
