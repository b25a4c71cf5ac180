//! What the study monitor reads: every vote with its gold expectation, the annotators with
//! their progress, the batches, and the settings. Facts only; the service computes the figures
//! (agreement, medians, gold accuracy).

use sqlx::Row;

use super::assign::Strategy;
use super::survey::StudySettings;
use super::{audit, Db, StoreError, StoreResult};
use natstudy_vocab::ids::{AnnotatorId, BatchId, InviteId, ItemId, StudyId, UserId};

/// One vote as the monitor needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct VoteFact {
    pub annotator: AnnotatorId,
    pub item: ItemId,
    pub cr: u8,
    pub cc: u8,
    pub time_secs: Option<f64>,
    /// The item's expected judgement when it is a gold item.
    pub gold_unnatural: Option<bool>,
    /// It counts (its participant is not excluded: [`super::exclusions`]).
    pub counted: bool,
}

/// An annotator of the study with their progress.
#[derive(Debug, Clone, PartialEq)]
pub struct AnnotatorProgress {
    pub id: AnnotatorId,
    pub code: String,
    /// The account, for annotators who are accounts (invited participants have none).
    pub account: Option<String>,
    pub last_active_ms: Option<i64>,
    pub finished: bool,
    pub done: i64,
    pub total: i64,
    /// Made by a votes import: their votes are imported, they were never online.
    pub imported: bool,
    /// Items they hold a live lease on now (at most one in a dynamic queue).
    pub leases: i64,
    /// The crowd platform's participant id they came with (`platform: id`).
    pub external_id: Option<String>,
    /// Why they are excluded from the analysis, when they are.
    pub excluded: Option<String>,
}

/// A batch with its size.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchSummary {
    pub id: BatchId,
    pub name: String,
    pub strategy: Strategy,
    pub items: i64,
    /// Its items with the study's k counted ratings (as `completed_per_item` counts them).
    pub complete: i64,
    pub annotators: i64,
    pub lease_secs: i64,
}

/// Every vote of the study, with the judgement inputs, time and gold expectation.
pub async fn votes(db: &Db, study: StudyId) -> StoreResult<Vec<VoteFact>> {
    let rows = sqlx::query(
        "SELECT v.annotator_id, v.item_id, v.cr, v.cc, v.time_secs, i.gold_unnatural, v.counted FROM votes v \
         JOIN items i ON i.id = v.item_id WHERE i.study_id = $1",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| {
            Ok(VoteFact {
                annotator: r.try_get("annotator_id")?,
                item: r.try_get("item_id")?,
                cr: r.try_get::<i64, _>("cr")?.clamp(0, 255) as u8,
                cc: r.try_get::<i64, _>("cc")?.clamp(0, 255) as u8,
                time_secs: r.try_get("time_secs")?,
                gold_unnatural: r
                    .try_get::<Option<i64>, _>("gold_unnatural")?
                    .map(|g| g != 0),
                counted: r.try_get::<i64, _>("counted")? != 0,
            })
        })
        .collect::<Result<_, sqlx::Error>>()?)
}

/// The study's annotators in id order, with (rated, total) as their progress bars show it
/// (the pilot's are not: [`super::pilot::summary`] counts them).
pub async fn annotators(db: &Db, study: StudyId) -> StoreResult<Vec<AnnotatorProgress>> {
    let rows = sqlx::query(
        "SELECT a.id, a.code, u.username, a.last_active, a.finished_at, a.imported, a.platform, a.external_pid, \
         a.counted, a.exclusion_reason, \
         (SELECT COUNT(*) FROM votes v WHERE v.annotator_id = a.id) AS voted, \
         (SELECT COUNT(*) FROM assignments c WHERE c.annotator_id = a.id AND c.status = $2 \
            AND c.lease_expires_at > $3) AS leases \
         FROM annotators a LEFT JOIN users u ON u.id = a.user_id \
         WHERE a.study_id = $1 AND a.pilot = 0 ORDER BY a.id",
    )
    .bind(study)
    .bind(super::AssignmentStatus::Leased)
    .bind(crate::db::now_ms())
    .fetch_all(&db.pool)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let id: AnnotatorId = r.try_get("id")?;
        let imported = r.try_get::<i64, _>("imported")? != 0;
        // an imported annotator's work is their imported votes; they were never online
        let (done, total) = if imported {
            let voted: i64 = r.try_get("voted")?;
            (voted, voted)
        } else {
            super::assign::progress(db, study, id).await?
        };
        out.push(AnnotatorProgress {
            imported,
            leases: r.try_get("leases")?,
            id,
            code: r.try_get("code")?,
            account: r.try_get("username")?,
            last_active_ms: r.try_get("last_active")?,
            finished: r.try_get::<Option<i64>, _>("finished_at")?.is_some(),
            done,
            total,
            external_id: match (
                r.try_get::<Option<super::Platform>, _>("platform")?,
                r.try_get::<Option<String>, _>("external_pid")?,
            ) {
                (Some(p), Some(id)) => Some(format!("{p}: {id}")),
                (None, Some(id)) => Some(id),
                _ => None,
            },
            excluded: excluded_reason(&r)?,
        });
    }
    Ok(out)
}

/// A participant as the participants table lists them (`export --what participants`).
#[derive(Debug, Clone, PartialEq)]
pub struct ParticipantRow {
    pub id: AnnotatorId,
    pub code: String,
    pub platform: Option<super::Platform>,
    pub external_pid: Option<String>,
    pub external_study: Option<String>,
    pub external_session: Option<String>,
    pub joined_at: i64,
    pub finished_at: Option<i64>,
    pub outcome: Option<super::Outcome>,
    /// Their last request of the survey (unix ms), when they made one.
    pub last_active: Option<i64>,
    /// Their votes (online or imported).
    pub rated: i64,
    /// Their screener answers as stored (a JSON object).
    pub screener_json: String,
    /// Why they are excluded from the analysis, when they are.
    pub excluded: Option<String>,
}

/// The longest hold of the study's batches, in ms: a participant idle for longer has had their
/// items given back.
pub async fn longest_lease_ms(db: &Db, study: StudyId) -> StoreResult<i64> {
    let secs: Option<i64> = sqlx::query("SELECT MAX(lease_secs) FROM batches WHERE study_id = $1")
        .bind(study)
        .fetch_one(&db.pool)
        .await?
        .try_get(0)?;
    Ok(secs.unwrap_or(1200) * 1000)
}

/// The study's participants in id order, with their votes counted: those of the study, or
/// (`pilot`) its pilot participants.
pub async fn participants(
    db: &Db,
    study: StudyId,
    pilot: bool,
) -> StoreResult<Vec<ParticipantRow>> {
    let rows = sqlx::query(
        "SELECT a.id, a.code, a.platform, a.external_pid, a.external_study, a.external_session, \
         a.created_at, a.finished_at, a.outcome, a.screener, a.counted, a.exclusion_reason, \
         a.last_active, (SELECT COUNT(*) FROM votes v WHERE v.annotator_id = a.id) AS rated \
         FROM annotators a WHERE a.study_id = $1 AND a.pilot = $2 ORDER BY a.id",
    )
    .bind(study)
    .bind(i64::from(pilot))
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| {
            Ok(ParticipantRow {
                id: r.try_get("id")?,
                code: r.try_get("code")?,
                platform: r.try_get("platform")?,
                external_pid: r.try_get("external_pid")?,
                external_study: r.try_get("external_study")?,
                external_session: r.try_get("external_session")?,
                joined_at: r.try_get("created_at")?,
                finished_at: r.try_get("finished_at")?,
                outcome: r.try_get("outcome")?,
                last_active: r.try_get("last_active")?,
                rated: r.try_get("rated")?,
                screener_json: r.try_get("screener")?,
                // a pilot participant counts nowhere, but is not excluded (no one left them out)
                excluded: if pilot { None } else { excluded_reason(r)? },
            })
        })
        .collect::<Result<_, sqlx::Error>>()?)
}

/// Why the row's participant is excluded (`counted`, `exclusion_reason`), when they are.
fn excluded_reason(r: &sqlx::any::AnyRow) -> Result<Option<String>, sqlx::Error> {
    Ok(if r.try_get::<i64, _>("counted")? == 0 {
        Some(r.try_get("exclusion_reason")?)
    } else {
        None
    })
}

/// The study's batches in id order.
pub async fn batches(db: &Db, study: StudyId) -> StoreResult<Vec<BatchSummary>> {
    let rows = sqlx::query(
        "SELECT b.id, b.name, b.strategy, b.lease_secs, (SELECT COUNT(*) FROM batch_items bi WHERE bi.batch_id = b.id) AS items, \
         (SELECT COUNT(*) FROM batch_items bi WHERE bi.batch_id = b.id AND \
          (SELECT COUNT(*) FROM votes v WHERE v.item_id = bi.item_id AND v.counted = 1) >= s.ratings_per_item) AS complete, \
         (SELECT COUNT(*) FROM batch_annotators ba WHERE ba.batch_id = b.id) AS annotators \
         FROM batches b JOIN studies s ON s.id = b.study_id WHERE b.study_id = $1 ORDER BY b.id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| {
            Ok(BatchSummary {
                id: r.try_get("id")?,
                name: r.try_get("name")?,
                strategy: r.try_get("strategy")?,
                items: r.try_get("items")?,
                complete: r.try_get("complete")?,
                annotators: r.try_get("annotators")?,
                lease_secs: r.try_get("lease_secs")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()?)
}

/// Writes the study's settings (all but its name), with an audit line. The caller has
/// validated them (`service::studies::update_settings`).
pub async fn update_settings(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    s: &StudySettings,
) -> StoreResult<()> {
    let mut tx = db.begin_write(study).await?;
    let n = sqlx::query(
        "UPDATE studies SET ratings_per_item = $1, guideline = $2, blind_operator = $3, blind_bug_id = $4, randomise_sides = $5, \
         completion_code = $6, consent_text = $7, screener = $8, min_rated_for_code = $9, \
         items_per_participant = $11, partial_after_minutes = $12, partial_code = $13, \
         completion_url = $14, screenout_code = $15, screenout_url = $16, speeder_seconds = $17, \
         gold_failures = $18, pilot = $19 WHERE id = $10",
    )
    .bind(s.ratings_per_item)
    .bind(&s.guideline)
    .bind(i64::from(s.blind_operator))
    .bind(i64::from(s.blind_bug_id))
    .bind(i64::from(s.randomise_sides))
    .bind(s.completion_code.as_deref())
    .bind(&s.consent_text)
    .bind(&s.screener_json)
    .bind(s.min_rated_for_code)
    .bind(study)
    .bind(s.crowd.items_per_participant)
    .bind(s.crowd.partial_after_minutes)
    .bind(s.crowd.partial_code.as_deref())
    .bind(s.crowd.completion_url.as_deref())
    .bind(s.crowd.screenout_code.as_deref())
    .bind(s.crowd.screenout_url.as_deref())
    .bind(s.crowd.speeder_seconds)
    .bind(s.crowd.gold_failures)
    .bind(i64::from(s.crowd.pilot))
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if n == 0 {
        return Err(StoreError::NotFound(format!("study {study}")));
    }
    audit::record(
        &mut *tx,
        actor,
        Some(study),
        "study.settings",
        &format!(
            "k={}, blind operator={}, blind bug={}, randomise sides={}",
            s.ratings_per_item, s.blind_operator, s.blind_bug_id, s.randomise_sides
        ),
    )
    .await?;
    // k may have changed: the queue's index says which items are full
    super::assign::refresh_full_study(&mut tx, study).await?;
    super::studies::data_changed(&mut tx, study).await?;
    tx.commit().await?;
    Ok(())
}

/// Marks an item as a gold/attention item with the expected judgement (None clears it).
pub async fn set_gold(
    db: &Db,
    study: StudyId,
    item_key: &str,
    unnatural: Option<bool>,
) -> StoreResult<()> {
    let mut tx = db.begin_write(study).await?;
    let n =
        sqlx::query("UPDATE items SET gold_unnatural = $1 WHERE study_id = $2 AND item_key = $3")
            .bind(unnatural.map(i64::from))
            .bind(study)
            .bind(item_key)
            .execute(&mut *tx)
            .await?
            .rows_affected();
    if n == 0 {
        return Err(StoreError::NotFound(format!("item {item_key}")));
    }
    super::studies::data_changed(&mut tx, study).await?;
    tx.commit().await?;
    Ok(())
}

/// An invite link of a study, as the study page lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InviteListing {
    pub id: InviteId,
    pub token: String,
    /// The batch it joins (`None`: a review-only invite).
    pub batch: Option<String>,
    pub cap: i64,
    pub used: i64,
    pub closed: bool,
    /// Open, but its batch has no item without k ratings: it gives a new participant nothing.
    pub full: bool,
    /// A pilot link ([`super::pilot`]).
    pub pilot: bool,
}

/// Every invite link of the study, newest first.
pub async fn invites(db: &Db, study: StudyId) -> StoreResult<Vec<InviteListing>> {
    let rows = sqlx::query(concat!(
        "SELECT i.id, i.token, b.name AS batch, i.cap, i.used, i.closed_at, i.pilot, CASE WHEN ",
        super::invites::invite_full!(),
        " THEN 1 ELSE 0 END AS full FROM invites i \
         LEFT JOIN batches b ON b.id = i.batch_id WHERE i.study_id = $1 ORDER BY i.id DESC",
    ))
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(InviteListing {
                id: r.try_get("id")?,
                token: r.try_get("token")?,
                batch: r.try_get("batch")?,
                cap: r.try_get("cap")?,
                used: r.try_get("used")?,
                closed: r.try_get::<Option<i64>, _>("closed_at")?.is_some(),
                full: r.try_get::<i64, _>("full")? != 0,
                pilot: r.try_get::<i64, _>("pilot")? != 0,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Into::into)
}

/// Closes an invite of the study: its link admits no one new.
pub async fn close_invite(
    db: &Db,
    study: StudyId,
    invite: InviteId,
    actor: Option<natstudy_vocab::ids::UserId>,
) -> StoreResult<()> {
    let mut tx = db.begin_write(study).await?;
    let r = sqlx::query(
        "UPDATE invites SET closed_at = $1 WHERE id = $2 AND study_id = $3 AND closed_at IS NULL",
    )
    .bind(crate::db::now_ms())
    .bind(invite)
    .bind(study)
    .execute(&mut *tx)
    .await?;
    if r.rows_affected() == 0 {
        return Err(super::StoreError::NotFound(format!(
            "open invite {invite} of this study"
        )));
    }
    super::audit::record(
        &mut *tx,
        actor,
        Some(study),
        "invite.close",
        &format!("invite {invite}"),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
