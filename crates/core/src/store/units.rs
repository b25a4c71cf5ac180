//! A designed study's units and their hand-out (migration 0035): which unit a participant
//! holds, claimed in one write transaction of the study (the answer that ends a claim is
//! `unit_answers.rs`).
//! Only SQL: which unit comes next and in what order its snippets are shown are the design
//! engine's rules (`natstudy_engine::design::units`), given to [`claim_next`] as functions.

use sqlx::Row;

pub use super::unit_answers::{answer, answered, Answered, NewResponse};
use super::{Db, StoreError, StoreResult};
use natstudy_vocab::ids::{AnnotatorId, StudyId};

/// One participant's hold on one unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    pub id: i64,
    /// The unit's place in the study's plan (0-based).
    pub position: usize,
    /// The unit's snippets (ids) in the order shown to this participant.
    pub shown: Vec<String>,
    /// When it was handed out (ms).
    pub claimed_at: i64,
    /// When it was answered (ms), with the submit token of that answer.
    pub answered: Option<(i64, Option<String>)>,
    /// An attention unit's expected answers (JSON: question → answer).
    pub attention: Option<String>,
}

/// Of the open units (position, fill), the participant's next.
pub type Choose = dyn Fn(&[(usize, u64)]) -> Option<usize> + Send + Sync;
/// A unit's snippets (as planned), its position and its nth response: the order shown.
pub type ShownOrder = dyn Fn(&[String], usize, u64) -> Vec<String> + Send + Sync;

/// What [`claim_next`] asks of the design's rules.
pub struct HandOut<'a> {
    pub now: i64,
    /// Responses a unit needs (the study's k); holds and answers of counted participants fill it.
    pub k: i64,
    /// How long a hold lasts (ms) before the unit may go to someone else.
    pub hold_ms: i64,
    /// The units a participant answers at most (N), if the study sets it.
    pub quota: Option<i64>,
    /// Of the open units (position, fill), the participant's next.
    pub choose: &'a Choose,
    /// Whether an attention unit is due, after (regular, attention) units answered.
    pub attention_due: &'a (dyn Fn(u64, u64) -> bool + Send + Sync),
    /// A unit's snippets (as planned) in the order its `nth` response shows them.
    pub shown: &'a ShownOrder,
}

/// Why a study's units cannot be planned again.
pub const UNITS_FIXED: &str = "participants have been handed units of this study, so its snippets are fixed: make a new study for other snippets";

/// Replaces the study's units (inside the snippets' import transaction); refused once a
/// participant holds or answered one.
pub(crate) async fn replace_in(
    tx: &mut sqlx::AnyConnection,
    study: StudyId,
    units: &[Vec<String>],
) -> StoreResult<()> {
    let claimed = sqlx::query(
        "SELECT 1 FROM unit_claims c JOIN design_units u ON u.id = c.unit_id \
         WHERE u.study_id = $1 LIMIT 1",
    )
    .bind(study)
    .fetch_optional(&mut *tx)
    .await?;
    if claimed.is_some() {
        return Err(StoreError::Invalid(UNITS_FIXED.into()));
    }
    sqlx::query("DELETE FROM design_units WHERE study_id = $1 AND attention IS NULL")
        .bind(study)
        .execute(&mut *tx)
        .await?;
    for (i, members) in units.iter().enumerate() {
        let json =
            serde_json::to_string(members).map_err(|e| StoreError::Invalid(e.to_string()))?;
        sqlx::query("INSERT INTO design_units (study_id, position, members) VALUES ($1, $2, $3)")
            .bind(study)
            .bind(i as i64)
            .bind(json)
            .execute(&mut *tx)
            .await?;
    }
    Ok(())
}

/// The number of units the study has to be answered (its attention units, checks outside the
/// work, not counted).
pub async fn count(db: &Db, study: StudyId) -> StoreResult<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COUNT(*) FROM design_units WHERE study_id = $1 AND attention IS NULL",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await?)
}

pub(super) fn list(json: &str) -> StoreResult<Vec<String>> {
    serde_json::from_str(json)
        .map_err(|e| StoreError::Invalid(format!("a stored unit is unreadable: {e}")))
}

const CLAIM_COLUMNS: &str =
    "c.id, u.position, c.shown, c.claimed_at, c.answered_at, c.token, c.held_until, u.id, u.attention";

fn claim_of(r: &sqlx::any::AnyRow) -> StoreResult<Claim> {
    let answered: Option<i64> = r.try_get(4)?;
    Ok(Claim {
        id: r.try_get(0)?,
        position: usize::try_from(r.try_get::<i64, _>(1)?).unwrap_or(0),
        shown: list(&r.try_get::<String, _>(2)?)?,
        claimed_at: r.try_get(3)?,
        answered: answered.map(|at| (at, r.try_get(5).ok().flatten())),
        attention: r.try_get(8)?,
    })
}

/// The SQL of a unit's fill at `$now`: the answers and live holds of counted participants.
const FILL: &str = "(SELECT COUNT(*) FROM unit_claims f JOIN annotators fa ON fa.id = f.annotator_id \
     WHERE f.unit_id = u.id AND fa.counted = 1 AND (f.answered_at IS NOT NULL OR f.held_until > $2))";

/// The participant's unit: the one they hold (renewed; one that lapsed is theirs again while
/// the unit still has room, else let go), or the next by `rules` — `None` when nothing is left
/// for them. One write transaction of the study: two participants never overfill a unit.
pub async fn claim_next(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    rules: &HandOut<'_>,
) -> StoreResult<Option<Claim>> {
    let now = rules.now;
    let mut tx = db.begin_write(study).await?;
    let held = sqlx::query(&format!(
        "SELECT {CLAIM_COLUMNS}, {FILL} FROM unit_claims c JOIN design_units u ON u.id = c.unit_id \
         WHERE u.study_id = $1 AND c.annotator_id = $3 AND c.answered_at IS NULL"
    ))
    .bind(study)
    .bind(now)
    .bind(annotator)
    .fetch_optional(&mut *tx)
    .await?;
    if let Some(r) = held {
        let claim = claim_of(&r)?;
        let live = r.try_get::<i64, _>(6)? > now;
        let fill: i64 = r.try_get(9)?;
        // a lapsed hold no longer counts in its unit's fill: is there room for it again?
        if live || fill < rules.k || claim.attention.is_some() {
            sqlx::query("UPDATE unit_claims SET held_until = $2 WHERE id = $1")
                .bind(claim.id)
                .bind(now + rules.hold_ms)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            return Ok(Some(claim));
        }
        sqlx::query("DELETE FROM unit_claims WHERE id = $1")
            .bind(claim.id)
            .execute(&mut *tx)
            .await?;
    }
    // the units answered: (regular, attention)
    let done = sqlx::query(
        "SELECT COALESCE(SUM(CASE WHEN u.attention IS NULL THEN 1 ELSE 0 END), 0), \
                COALESCE(SUM(CASE WHEN u.attention IS NULL THEN 0 ELSE 1 END), 0) \
         FROM unit_claims c JOIN design_units u ON u.id = c.unit_id \
         WHERE u.study_id = $1 AND c.annotator_id = $2 AND c.answered_at IS NOT NULL",
    )
    .bind(study)
    .bind(annotator)
    .fetch_one(&mut *tx)
    .await?;
    let (regular, attention): (i64, i64) = (done.try_get(0)?, done.try_get(1)?);
    if rules.quota.is_some_and(|n| regular >= n) {
        tx.commit().await?;
        return Ok(None);
    }
    // an attention unit they have not had, when one is due (or when nothing else is left)
    let check = sqlx::query(
        "SELECT u.id, u.position, u.members FROM design_units u \
         WHERE u.study_id = $1 AND u.attention IS NOT NULL AND NOT EXISTS \
         (SELECT 1 FROM unit_claims m WHERE m.unit_id = u.id AND m.annotator_id = $2) \
         ORDER BY u.position LIMIT 1",
    )
    .bind(study)
    .bind(annotator)
    .fetch_optional(&mut *tx)
    .await?;
    let (regular, attention) = (
        u64::try_from(regular).unwrap_or(0),
        u64::try_from(attention).unwrap_or(0),
    );
    if let Some(r) = &check {
        if (rules.attention_due)(regular, attention) {
            let claim = insert_claim(&mut tx, annotator, r, now + rules.hold_ms, now).await?;
            tx.commit().await?;
            return Ok(Some(claim));
        }
    }
    let rows = sqlx::query(&format!(
        "SELECT u.position, u.id, u.members, {FILL} FROM design_units u \
         WHERE u.study_id = $1 AND u.attention IS NULL AND NOT EXISTS \
         (SELECT 1 FROM unit_claims m WHERE m.unit_id = u.id AND m.annotator_id = $3)"
    ))
    .bind(study)
    .bind(now)
    .bind(annotator)
    .fetch_all(&mut *tx)
    .await?;
    let mut open = Vec::new();
    for r in &rows {
        let fill: i64 = r.try_get(3)?;
        if fill < rules.k {
            let position = usize::try_from(r.try_get::<i64, _>(0)?).unwrap_or(0);
            open.push((position, u64::try_from(fill).unwrap_or(0)));
        }
    }
    let Some(position) = (rules.choose)(&open) else {
        // nothing else is left: the attention units they have not had, after some work
        let claim = match &check {
            Some(r) if regular > 0 => {
                Some(insert_claim(&mut tx, annotator, r, now + rules.hold_ms, now).await?)
            }
            _ => None,
        };
        tx.commit().await?;
        return Ok(claim);
    };
    let Some(r) = rows
        .iter()
        .find(|r| r.try_get::<i64, _>(0).ok() == Some(position as i64))
    else {
        return Err(StoreError::Invalid(format!(
            "no unit {position} to hand out"
        )));
    };
    let unit: i64 = r.try_get(1)?;
    let nth = u64::try_from(r.try_get::<i64, _>(3)?).unwrap_or(0);
    let shown = (rules.shown)(&list(&r.try_get::<String, _>(2)?)?, position, nth);
    let json = serde_json::to_string(&shown).map_err(|e| StoreError::Invalid(e.to_string()))?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO unit_claims (unit_id, annotator_id, nth, shown, claimed_at, held_until) \
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
    )
    .bind(unit)
    .bind(annotator)
    .bind(nth as i64)
    .bind(json)
    .bind(now)
    .bind(now + rules.hold_ms)
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Some(Claim {
        id,
        position,
        shown,
        claimed_at: now,
        answered: None,
        attention: None,
    }))
}

/// Hands the attention unit of `r` (id, position, members) to the participant, shown as given.
async fn insert_claim(
    tx: &mut sqlx::AnyConnection,
    annotator: AnnotatorId,
    r: &sqlx::any::AnyRow,
    held_until: i64,
    now: i64,
) -> StoreResult<Claim> {
    let (unit, position, members): (i64, i64, String) =
        (r.try_get(0)?, r.try_get(1)?, r.try_get(2)?);
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO unit_claims (unit_id, annotator_id, nth, shown, claimed_at, held_until) \
         VALUES ($1, $2, 0, $3, $4, $5) RETURNING id",
    )
    .bind(unit)
    .bind(annotator)
    .bind(&members)
    .bind(now)
    .bind(held_until)
    .fetch_one(&mut *tx)
    .await?;
    let attention: Option<String> =
        sqlx::query_scalar("SELECT attention FROM design_units WHERE id = $1")
            .bind(unit)
            .fetch_one(&mut *tx)
            .await?;
    Ok(Claim {
        id,
        position: usize::try_from(position).unwrap_or(0),
        shown: list(&members)?,
        claimed_at: now,
        answered: None,
        attention,
    })
}

/// The units of a designed study (`json`: an attention unit's snippets and its expected
/// answers) replacing its attention units; refused once a participant was handed one.
pub async fn replace_attention(
    db: &Db,
    study: StudyId,
    units: &[(Vec<String>, String)],
) -> StoreResult<()> {
    let mut tx = db.begin_write(study).await?;
    let handed = sqlx::query(
        "SELECT 1 FROM unit_claims c JOIN design_units u ON u.id = c.unit_id \
         WHERE u.study_id = $1 AND u.attention IS NOT NULL LIMIT 1",
    )
    .bind(study)
    .fetch_optional(&mut *tx)
    .await?;
    if handed.is_some() {
        return Err(StoreError::Invalid(
            "participants have been shown this study's attention units: they are fixed".into(),
        ));
    }
    sqlx::query("DELETE FROM design_units WHERE study_id = $1 AND attention IS NOT NULL")
        .bind(study)
        .execute(&mut *tx)
        .await?;
    for (i, (members, expect)) in units.iter().enumerate() {
        let json =
            serde_json::to_string(members).map_err(|e| StoreError::Invalid(e.to_string()))?;
        sqlx::query(
            "INSERT INTO design_units (study_id, position, members, attention) VALUES ($1, $2, $3, $4)",
        )
        .bind(study)
        .bind(ATTENTION_POSITIONS + i as i64)
        .bind(json)
        .bind(expect)
        .execute(&mut *tx)
        .await?;
    }
    super::studies::data_changed(&mut tx, study).await?;
    tx.commit().await?;
    Ok(())
}

/// Where a study's attention units are numbered from (past any plan's units).
const ATTENTION_POSITIONS: i64 = 1_000_000;

/// The participant's attention units answered against their expected answers.
pub async fn attention_misses(db: &Db, annotator: AnnotatorId) -> StoreResult<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COUNT(*) FROM unit_claims WHERE annotator_id = $1 AND missed = 1",
    )
    .bind(annotator)
    .fetch_one(&db.pool)
    .await?)
}

/// The number of the study's regular units (its plan's, attention units aside).
pub async fn planned(db: &Db, study: StudyId) -> StoreResult<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COUNT(*) FROM design_units WHERE study_id = $1 AND attention IS NULL",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await?)
}

/// A claim of the participant in the study, answered or not.
pub async fn claim(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    claim: i64,
) -> StoreResult<Option<Claim>> {
    sqlx::query(&format!(
        "SELECT {CLAIM_COLUMNS} FROM unit_claims c JOIN design_units u ON u.id = c.unit_id \
         WHERE c.id = $1 AND c.annotator_id = $2 AND u.study_id = $3"
    ))
    .bind(claim)
    .bind(annotator)
    .bind(study)
    .fetch_optional(&db.pool)
    .await?
    .map(|r| claim_of(&r))
    .transpose()
}

/// Whether work may still come to the participant, and from when: a unit they have not had
/// whose answers (of counted participants) are fewer than k — free now (`now`), or held by
/// others (the first of those holds to end). `None`: nothing can come.
pub async fn work_may_come(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    k: i64,
    now: i64,
) -> StoreResult<Option<i64>> {
    let rows = sqlx::query(
        "SELECT u.id, \
           (SELECT COUNT(*) FROM unit_claims f JOIN annotators fa ON fa.id = f.annotator_id \
             WHERE f.unit_id = u.id AND fa.counted = 1 AND f.answered_at IS NOT NULL) AS done, \
           (SELECT COUNT(*) FROM unit_claims f JOIN annotators fa ON fa.id = f.annotator_id \
             WHERE f.unit_id = u.id AND fa.counted = 1 AND f.answered_at IS NULL AND f.held_until > $3) AS held, \
           (SELECT MIN(f.held_until) FROM unit_claims f \
             WHERE f.unit_id = u.id AND f.answered_at IS NULL AND f.held_until > $3) AS until \
         FROM design_units u WHERE u.study_id = $1 AND u.attention IS NULL AND NOT EXISTS \
           (SELECT 1 FROM unit_claims m WHERE m.unit_id = u.id AND m.annotator_id = $2 \
            AND m.answered_at IS NOT NULL)",
    )
    .bind(study)
    .bind(annotator)
    .bind(now)
    .fetch_all(&db.pool)
    .await?;
    let mut first: Option<i64> = None;
    for r in rows {
        let (done, held): (i64, i64) = (r.try_get(1)?, r.try_get(2)?);
        if done >= k {
            continue;
        }
        let at = if done + held < k {
            now
        } else {
            r.try_get::<Option<i64>, _>(3)?.unwrap_or(now)
        };
        first = Some(first.map_or(at, |f| f.min(at)));
        if at <= now {
            break;
        }
    }
    Ok(first)
}

/// Extends the participant's live hold in the study (the page's heartbeat) to `hold_ms` from
/// now, never past `max_hold_ms` from its claim: a page left open lets the unit go.
pub async fn renew(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    now: i64,
    hold_ms: i64,
    max_hold_ms: i64,
) -> StoreResult<()> {
    sqlx::query(
        "UPDATE unit_claims SET held_until = CASE WHEN $3 > claimed_at + $5 \
           THEN claimed_at + $5 ELSE $3 END \
         WHERE annotator_id = $1 AND answered_at IS NULL AND held_until > $4 \
         AND unit_id IN (SELECT id FROM design_units WHERE study_id = $2)",
    )
    .bind(annotator)
    .bind(study)
    .bind(now + hold_ms)
    .bind(now)
    .bind(max_hold_ms)
    .execute(&mut *db.write().await?)
    .await?;
    Ok(())
}

/// The participant's place among the study's participants (0-based, by joining): their row
/// of a Latin square.
pub async fn participant_rank(db: &Db, study: StudyId, annotator: AnnotatorId) -> StoreResult<u64> {
    let n: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM annotators WHERE study_id = $1 AND id < $2")
            .bind(study)
            .bind(annotator)
            .fetch_one(&db.pool)
            .await?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// The participant's code in their study (what their responses are exported under).
pub async fn participant_code(db: &Db, annotator: AnnotatorId) -> StoreResult<String> {
    sqlx::query_scalar("SELECT code FROM annotators WHERE id = $1")
        .bind(annotator)
        .fetch_optional(&db.pool)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("participant {annotator}")))
}

/// A designed study's units, those with k answers of counted participants, and those answers.
pub async fn progress(db: &Db, study: StudyId, k: i64) -> StoreResult<(i64, i64, i64)> {
    let rows: Vec<i64> = sqlx::query_scalar(
        "SELECT (SELECT COUNT(*) FROM unit_claims f JOIN annotators fa ON fa.id = f.annotator_id \
           WHERE f.unit_id = u.id AND fa.counted = 1 AND f.answered_at IS NOT NULL) \
         FROM design_units u WHERE u.study_id = $1 AND u.attention IS NULL",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    Ok((
        rows.len() as i64,
        rows.iter().filter(|&&n| n >= k).count() as i64,
        rows.iter().sum(),
    ))
}
