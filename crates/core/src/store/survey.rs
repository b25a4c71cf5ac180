//! The survey as a participant goes through it: where they stand, consent, the guideline, the
//! item to rate, their votes so far, finishing.

use sqlx::Row;

use super::group_commit::jobs::grouped;
use super::{Db, StoreError, StoreResult};
use crate::db::now_ms;
use natstudy_vocab::ids::{AnnotatorId, ItemId, StudyId, UserId};

/// What the annotation page needs to know about the annotator.
#[derive(Debug, Clone)]
pub struct AnnotatorState {
    pub code: String,
    /// The code that continues this participant on another device (invited participants).
    pub resume_code: Option<String>,
    pub consented: bool,
    pub guideline_seen: bool,
    pub finished: bool,
    /// How their work ended (`None` while it goes on, or for a finish before outcomes).
    pub outcome: Option<super::Outcome>,
    /// Since when they have had nothing to rate while items held by others may come.
    pub waiting_since: Option<i64>,
    /// They were told that an attention item's answer differed from the expected one.
    pub attention_warned: bool,
}

/// The [`AnnotatorState`] in a row of `annotators`' columns (giving a resume code to a
/// participant who joined before they existed).
async fn annotator_state_issuing_resume_code(
    db: &Db,
    annotator: AnnotatorId,
    r: &sqlx::any::AnyRow,
) -> StoreResult<AnnotatorState> {
    let account: Option<i64> = r.try_get("user_id")?;
    let mut resume_code: Option<String> = r.try_get("resume_code")?;
    if resume_code.is_none() && account.is_none() {
        // participants who joined before resume codes existed get one on their next visit
        resume_code = Some(super::resume_codes::give_resume_code(db, annotator).await?);
    }
    Ok(AnnotatorState {
        code: r.try_get("code")?,
        resume_code,
        consented: r.try_get::<Option<i64>, _>("consented_at")?.is_some(),
        guideline_seen: r.try_get::<Option<i64>, _>("guideline_seen_at")?.is_some(),
        finished: r.try_get::<Option<i64>, _>("finished_at")?.is_some(),
        outcome: r.try_get("outcome")?,
        waiting_since: r.try_get("waiting_since")?,
        attention_warned: r
            .try_get::<Option<i64>, _>("attention_warned_at")?
            .is_some(),
    })
}

/// Records the participant's consent and screener answers (once), in the study's group commit:
/// a burst of participants starting together shares durable commits.
pub async fn consent(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    screener_json: &str,
) -> StoreResult<()> {
    let sql = "UPDATE annotators SET consented_at = $1, screener = $4 \
               WHERE id = $2 AND study_id = $3 AND consented_at IS NULL";
    first_step(db, study, annotator, sql, Some(screener_json.to_owned())).await
}

/// Records the consent and screener answers of a participant the screener turns away, who
/// finishes with them (outcome screened out), in one statement: they never rate.
pub async fn screen_out(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    screener_json: &str,
) -> StoreResult<()> {
    let mut tx = db.begin_write(study).await?;
    super::assign::release_open(&mut tx, annotator).await?;
    sqlx::query(
        "UPDATE annotators SET consented_at = $1, screener = $4, finished_at = $1, outcome = $5 \
         WHERE id = $2 AND study_id = $3 AND consented_at IS NULL",
    )
    .bind(now_ms())
    .bind(annotator)
    .bind(study)
    .bind(screener_json)
    .bind(super::Outcome::ScreenedOut)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// How many of `annotators` have no vote (in any study). A few hundred at most are asked: the
/// joins one address made within an hour.
pub async fn unanswered(db: &Db, annotators: &[AnnotatorId]) -> StoreResult<usize> {
    // one statement text per chunk length ($1…$n), the ids bound as values
    const CHUNK: usize = 100;
    let mut n = 0;
    for chunk in annotators.chunks(CHUNK) {
        let params = (1..=chunk.len())
            .map(|i| format!("${i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql =
            format!("SELECT COUNT(*) FROM annotators WHERE id IN ({params}) AND done_count > 0");
        let mut q = sqlx::query_scalar::<_, i64>(&sql);
        for a in chunk {
            q = q.bind(*a);
        }
        let answered = q.fetch_one(&db.pool).await?;
        n += chunk.len().saturating_sub(answered.max(0) as usize);
    }
    Ok(n)
}

/// Records that the participant read the guideline (once), in the study's group commit.
pub async fn guideline_seen(db: &Db, study: StudyId, annotator: AnnotatorId) -> StoreResult<()> {
    let sql = "UPDATE annotators SET guideline_seen_at = $1 \
               WHERE id = $2 AND study_id = $3 AND guideline_seen_at IS NULL";
    first_step(db, study, annotator, sql, None).await
}

/// One of a participant's first steps: `sql` binds the time, the annotator, the study and
/// (when given) `extra`.
async fn first_step(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    sql: &'static str,
    extra: Option<String>,
) -> StoreResult<()> {
    grouped(db, study, move |conn, _shared| {
        let extra = extra.clone();
        Box::pin(async move {
            let q = sqlx::query(sql).bind(now_ms()).bind(annotator).bind(study);
            match extra {
                Some(x) => q.bind(x),
                None => q,
            }
            .execute(&mut *conn)
            .await?;
            Ok(())
        })
    })
    .await
}

/// Ends the participant's work with `outcome` (once: a second finish changes nothing); their
/// unrated claims go back to the pool.
pub async fn finish(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    outcome: super::Outcome,
) -> StoreResult<()> {
    finish_excluding(db, study, annotator, outcome, None).await
}

/// [`finish`], and when `excluded` gives a reason (a rule of the study ended the survey, such
/// as its attention items), the participant leaves the analysis in the same transaction
/// ([`super::exclusions`]).
pub async fn finish_excluding(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    outcome: super::Outcome,
    excluded: Option<&str>,
) -> StoreResult<()> {
    let mut tx = db.begin_write(study).await?;
    if let Some(reason) = excluded {
        super::exclusions::exclude_in(&mut tx, study, annotator, None, reason).await?;
    }
    // unrated items go back to the pool
    super::assign::release_open(&mut tx, annotator).await?;
    sqlx::query(
        "UPDATE annotators SET finished_at = $1, outcome = $3, waiting_since = NULL \
         WHERE id = $2 AND finished_at IS NULL",
    )
    .bind(now_ms())
    .bind(annotator)
    .bind(outcome)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Whether more items may still come to the participant while the queue has none for them:
/// an item of one of their dynamic-queue batches without k votes, that they neither rated nor
/// hold, is held by someone else's live claim (`None`: none is; nothing can ever come to
/// them). Its value is when the first such claim's lease runs out (ms), as a hint of the wait.
pub async fn work_may_come(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    now: i64,
) -> StoreResult<Option<i64>> {
    use super::AssignmentStatus as S;
    let r = sqlx::query(
        "SELECT COUNT(*) AS n, MIN(c.lease_expires_at) AS until \
         FROM batch_annotators ba JOIN batches b ON b.id = ba.batch_id \
         JOIN batch_items bi ON bi.batch_id = b.id \
         JOIN assignments c ON c.item_id = bi.item_id AND c.annotator_id <> $1 \
           AND c.status = $4 AND c.lease_expires_at > $3 \
           AND (SELECT ca.counted FROM annotators ca WHERE ca.id = c.annotator_id) = 1 \
         WHERE ba.annotator_id = $1 AND b.study_id = $2 AND b.strategy = $7 AND bi.rated_full = 0 \
         AND (SELECT COUNT(*) FROM votes v WHERE v.item_id = bi.item_id AND v.counted = 1) \
           < (SELECT s.ratings_per_item FROM studies s WHERE s.id = $2) \
         AND (SELECT COUNT(*) FROM votes mv WHERE mv.item_id = bi.item_id AND mv.annotator_id = $1) = 0 \
         AND (SELECT COUNT(*) FROM assignments m WHERE m.item_id = bi.item_id AND m.annotator_id = $1 \
           AND m.status IN ($5, $6)) = 0",
    )
    .bind(annotator)
    .bind(study)
    .bind(now)
    .bind(S::Leased)
    .bind(S::Assigned)
    .bind(S::Done)
    .bind(super::assign::Strategy::DynamicQueue)
    .fetch_one(&db.pool)
    .await?;
    let n: i64 = r.try_get("n")?;
    Ok((n > 0).then(|| {
        r.try_get::<Option<i64>, _>("until")
            .ok()
            .flatten()
            .unwrap_or(now)
    }))
}

/// The participant's votes on attention (gold) items: (CR, CC, expected unnatural).
pub async fn gold_votes(db: &Db, annotator: AnnotatorId) -> StoreResult<Vec<(u8, u8, bool)>> {
    let rows = sqlx::query(
        "SELECT v.cr, v.cc, i.gold_unnatural FROM votes v JOIN items i ON i.id = v.item_id \
         WHERE v.annotator_id = $1 AND i.gold_unnatural IS NOT NULL",
    )
    .bind(annotator)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get::<i64, _>("cr")?.clamp(0, 255) as u8,
                r.try_get::<i64, _>("cc")?.clamp(0, 255) as u8,
                r.try_get::<i64, _>("gold_unnatural")? != 0,
            ))
        })
        .collect()
}

/// Notes that the participant was told about an attention item (once).
pub async fn attention_warned(db: &Db, study: StudyId, annotator: AnnotatorId) -> StoreResult<()> {
    let sql = "UPDATE annotators SET attention_warned_at = $1 \
               WHERE id = $2 AND study_id = $3 AND attention_warned_at IS NULL";
    first_step(db, study, annotator, sql, None).await
}

/// Notes when the participant began to wait for items held by others (`Some`: only if not
/// waiting already) or that they have something to rate again (`None`).
pub async fn set_waiting(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    since: Option<i64>,
) -> StoreResult<()> {
    let sql = match since {
        Some(_) => {
            "UPDATE annotators SET waiting_since = $1 WHERE id = $2 AND study_id = $3 \
                    AND waiting_since IS NULL AND finished_at IS NULL"
        }
        None => {
            "UPDATE annotators SET waiting_since = $1 WHERE id = $2 AND study_id = $3 \
                 AND waiting_since IS NOT NULL"
        }
    };
    let mut tx = db.begin_write(study).await?;
    sqlx::query(sql)
        .bind(since)
        .bind(annotator)
        .bind(study)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// Study settings the survey needs.
#[derive(Debug, Clone)]
pub struct StudySettings {
    pub name: String,
    /// k: ratings per item.
    pub ratings_per_item: i64,
    pub consent_text: String,
    pub screener_json: String,
    pub guideline: String,
    pub blind_operator: bool,
    pub blind_bug_id: bool,
    pub randomise_sides: bool,
    pub completion_code: Option<String>,
    /// The completion code is given only to participants who rated at least this many items.
    pub min_rated_for_code: i64,
    /// A paid crowd study's settings.
    pub crowd: CrowdSettings,
}

/// A paid crowd study's settings (`migrations/*/0027_crowd_work.sql`): the work each
/// participant is paid for and the way back to the crowd platform.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CrowdSettings {
    /// N: the ratings a participant is asked for (`None`: all they can be given).
    pub items_per_participant: Option<i64>,
    /// Minutes of waiting for items held by others after which the partial code is offered
    /// (`None`: never).
    pub partial_after_minutes: Option<i64>,
    pub partial_code: Option<String>,
    /// Where a finished participant is sent, `{code}` standing for their code.
    pub completion_url: Option<String>,
    pub screenout_code: Option<String>,
    pub screenout_url: Option<String>,
    /// A participant whose median time on item is under this many seconds is a speeder.
    pub speeder_seconds: Option<i64>,
    /// After this many attention (gold) items judged against their expected answer, the
    /// participant's survey ends with the screen-out code.
    pub gold_failures: Option<i64>,
    /// The study is in its pilot phase: the invite links made now are pilot links
    /// (migration 0032).
    pub pilot: bool,
}

/// The `studies` columns of [`StudySettings`], for a query over `studies s`.
macro_rules! settings_columns {
    () => {
        "s.name, s.ratings_per_item, s.guideline, s.consent_text, s.screener, s.blind_operator, \
         s.blind_bug_id, s.randomise_sides, s.completion_code, s.min_rated_for_code, \
         s.items_per_participant, s.partial_after_minutes, s.partial_code, s.completion_url, \
         s.screenout_code, s.screenout_url, s.speeder_seconds, s.gold_failures, s.pilot"
    };
}

fn settings_of(r: &sqlx::any::AnyRow) -> StoreResult<StudySettings> {
    Ok(StudySettings {
        name: r.try_get("name")?,
        ratings_per_item: r.try_get("ratings_per_item")?,
        consent_text: r.try_get("consent_text")?,
        screener_json: r.try_get("screener")?,
        guideline: r.try_get("guideline")?,
        blind_operator: r.try_get::<i64, _>("blind_operator")? != 0,
        blind_bug_id: r.try_get::<i64, _>("blind_bug_id")? != 0,
        randomise_sides: r.try_get::<i64, _>("randomise_sides")? != 0,
        completion_code: r.try_get("completion_code")?,
        min_rated_for_code: r.try_get("min_rated_for_code")?,
        crowd: CrowdSettings {
            items_per_participant: r.try_get("items_per_participant")?,
            partial_after_minutes: r.try_get("partial_after_minutes")?,
            partial_code: r.try_get("partial_code")?,
            completion_url: r.try_get("completion_url")?,
            screenout_code: r.try_get("screenout_code")?,
            screenout_url: r.try_get("screenout_url")?,
            speeder_seconds: r.try_get("speeder_seconds")?,
            gold_failures: r.try_get("gold_failures")?,
            pilot: r.try_get::<i64, _>("pilot")? != 0,
        },
    })
}

pub async fn study_settings(db: &Db, study: StudyId) -> StoreResult<StudySettings> {
    let r = sqlx::query(concat!(
        "SELECT ",
        settings_columns!(),
        " FROM studies s WHERE s.id = $1"
    ))
    .bind(study)
    .fetch_optional(&db.pool)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("study {study}")))?;
    settings_of(&r)
}

/// Where a participant stands, read at once: the study's settings, the annotator's state and
/// progress (one statement: the survey asks on every page).
#[derive(Debug, Clone)]
pub struct Standing {
    pub settings: StudySettings,
    pub annotator: AnnotatorState,
    /// (rated, total), as [`super::assign::progress`].
    pub progress: (i64, i64),
}

/// The participant's [`Standing`] in the study, giving the annotator a resume code first if
/// they have none (the one write); not found unless the annotator is the study's.
pub async fn standing_issuing_resume_code(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
) -> StoreResult<Standing> {
    let q = sqlx::query(concat!(
        "SELECT ",
        settings_columns!(),
        ", a.code, a.user_id, a.resume_code, a.consented_at, a.guideline_seen_at, a.finished_at, \
         a.outcome, a.waiting_since, a.attention_warned_at, ",
        super::assign::progress_columns!(),
        " FROM annotators a JOIN studies s ON s.id = a.study_id WHERE a.id = $1 AND a.study_id = $2"
    ));
    let r = super::assign::bind_progress(q, study, annotator)
        .fetch_optional(&db.pool)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("participant {annotator} of study {study}")))?;
    Ok(Standing {
        settings: settings_of(&r)?,
        annotator: annotator_state_issuing_resume_code(db, annotator, &r).await?,
        progress: super::assign::progress_of(&r)?,
    })
}

/// An item with its bug, for display.
#[derive(Debug, Clone)]
pub struct ItemForDisplay {
    pub id: i64,
    pub summary: String,
    pub operator: String,
    pub source: String,
    pub bug_key: String,
    pub bug_source: String,
    pub file_path: String,
    pub file_source: Option<String>,
    pub method: String,
    pub buggy_lines: Vec<u32>,
    /// The buggy lines in the transformed method (`None` for items stored before line data).
    pub transformed_buggy_lines: Option<Vec<u32>>,
    pub project: String,
}

pub async fn item_for_display(
    db: &Db,
    study: StudyId,
    item: ItemId,
) -> StoreResult<ItemForDisplay> {
    let r = sqlx::query(
        "SELECT i.id, i.summary, i.operator, i.source, b.bug_key, b.source AS bug_source, b.file_path, b.file_source, b.method, \
         b.buggy_lines, i.buggy_lines AS item_buggy_lines, p.name AS project FROM items i JOIN bugs b ON b.id = i.bug_id \
         JOIN projects p ON p.id = b.project_id WHERE i.id = $1 AND i.study_id = $2",
    )
    .bind(item)
    .bind(study)
    .fetch_optional(&db.pool)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("item {item}")))?;
    let lines: String = r.try_get("buggy_lines")?;
    Ok(ItemForDisplay {
        id: r.try_get("id")?,
        summary: r.try_get("summary")?,
        operator: r.try_get("operator")?,
        source: r.try_get("source")?,
        bug_key: r.try_get("bug_key")?,
        bug_source: r.try_get("bug_source")?,
        file_path: r.try_get("file_path")?,
        file_source: r.try_get("file_source")?,
        method: r.try_get("method")?,
        buggy_lines: serde_json::from_str(&lines).unwrap_or_default(),
        transformed_buggy_lines: r
            .try_get::<Option<String>, _>("item_buggy_lines")?
            .and_then(|t| serde_json::from_str(&t).ok()),
        project: r.try_get("project")?,
    })
}

/// Whether the annotator may see the item of the study: it is planned for them, held by them
/// or rated by them (an item given back, or anyone else's, is not theirs to read).
pub async fn may_see(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    item: ItemId,
) -> StoreResult<bool> {
    use super::codec::AssignmentStatus;
    Ok(sqlx::query(
        "SELECT 1 FROM items i WHERE i.id = $1 AND i.study_id = $2 AND (\
         EXISTS (SELECT 1 FROM assignments a WHERE a.item_id = i.id AND a.annotator_id = $3 \
                 AND a.status IN ($4, $5, $6)) \
         OR EXISTS (SELECT 1 FROM votes v WHERE v.item_id = i.id AND v.annotator_id = $3))",
    )
    .bind(item)
    .bind(study)
    .bind(annotator)
    .bind(AssignmentStatus::Assigned)
    .bind(AssignmentStatus::Leased)
    .bind(AssignmentStatus::Done)
    .fetch_optional(&db.pool)
    .await?
    .is_some())
}

/// A study in which an account annotates, as [`studies_of_user`] lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyOfUser {
    pub study: StudyId,
    pub name: String,
    /// The account's annotator in the study.
    pub annotator: AnnotatorId,
    pub finished: bool,
}

/// The studies in which an account annotates, by name.
pub async fn studies_of_user(db: &Db, user: UserId) -> StoreResult<Vec<StudyOfUser>> {
    let rows = sqlx::query(
        "SELECT s.id, s.name, a.id, a.finished_at FROM studies s JOIN annotators a ON a.study_id = s.id \
         WHERE a.user_id = $1 ORDER BY s.name, s.id",
    )
    .bind(user)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| {
            Ok(StudyOfUser {
                study: r.try_get(0)?,
                name: r.try_get(1)?,
                annotator: r.try_get(2)?,
                finished: r.try_get::<Option<i64>, _>(3)?.is_some(),
            })
        })
        .collect::<Result<_, sqlx::Error>>()?)
}

/// The study in which a participant rates items (not a review-only participant's).
pub async fn study_of_participant(
    db: &Db,
    participant: AnnotatorId,
) -> StoreResult<Option<StudyOfUser>> {
    let row = sqlx::query(
        "SELECT s.id, s.name, a.id, a.finished_at FROM studies s JOIN annotators a ON a.study_id = s.id \
         WHERE a.id = $1 AND a.reviewer = 0",
    )
    .bind(participant)
    .fetch_optional(&db.pool)
    .await?;
    Ok(row
        .map(|r| {
            Ok::<_, sqlx::Error>(StudyOfUser {
                study: r.try_get(0)?,
                name: r.try_get(1)?,
                annotator: r.try_get(2)?,
                finished: r.try_get::<Option<i64>, _>(3)?.is_some(),
            })
        })
        .transpose()?)
}
