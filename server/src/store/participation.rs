//! Participants: invites, consent, the guideline, the item to rate, finishing.

use rand::RngCore;
use sqlx::Row;

use super::group_commit::jobs::grouped;
use super::{audit, Db, StoreError, StoreResult};
use crate::db::now_ms;
use crate::ids::{AnnotatorId, BatchId, InviteId, ItemId, StudyId, UserId};
use crate::store::group_commit::shared::Shared;

/// Creates an invite link token for a batch (cap = how many participants it may create).
pub async fn create_invite(
    db: &Db,
    study: StudyId,
    batch: BatchId,
    cap: i64,
    actor: Option<UserId>,
) -> StoreResult<String> {
    insert_invite(db, study, Some(batch), cap, actor).await
}

/// A review-only invite: its participants review the study's patches (and take no survey).
pub async fn create_review_invite(
    db: &Db,
    study: StudyId,
    cap: i64,
    actor: Option<UserId>,
) -> StoreResult<String> {
    insert_invite(db, study, None, cap, actor).await
}

/// An invite into a batch of the study, or (no batch) a review-only invite.
async fn insert_invite(
    db: &Db,
    study: StudyId,
    batch: Option<BatchId>,
    cap: i64,
    actor: Option<UserId>,
) -> StoreResult<String> {
    let mut bytes = [0u8; 18];
    rand::thread_rng().fill_bytes(&mut bytes);
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let mut tx = db.begin_write(study).await?;
    if let Some(batch) = batch {
        sqlx::query("SELECT 1 FROM batches WHERE id = $1 AND study_id = $2")
            .bind(batch)
            .bind(study)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("batch {batch} in this study")))?;
    }
    let purpose = if batch.is_some() { "survey" } else { "review" };
    sqlx::query("INSERT INTO invites (study_id, batch_id, token, cap, purpose, created_at) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(study)
        .bind(batch)
        .bind(&token)
        .bind(cap.max(1))
        .bind(purpose)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
    let what = match batch {
        Some(batch) => format!("batch {batch}, cap {cap}"),
        None => format!("patch review, cap {cap}"),
    };
    audit::record(&mut *tx, actor, Some(study), "invite.create", &what).await?;
    tx.commit().await?;
    Ok(token)
}

/// The reviewer name of a participant who joined `study` through a review-only invite.
pub async fn reviewer_participant(
    db: &Db,
    study: StudyId,
    participant: AnnotatorId,
) -> StoreResult<Option<String>> {
    let r =
        sqlx::query("SELECT code FROM annotators WHERE id = $1 AND study_id = $2 AND reviewer = 1")
            .bind(participant)
            .bind(study)
            .fetch_optional(&db.pool)
            .await?;
    Ok(r.map(|r| r.try_get::<String, _>(0))
        .transpose()?
        .map(|code| format!("{code}@invite")))
}

/// The alphabet of resume codes: Crockford's base 32 (no I, L, O, U: nothing to misread).
const RESUME_ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// Characters of a resume code (50 random bits).
const RESUME_LEN: usize = 10;

/// A resume code as people type it: letters in upper case, separators and spaces dropped,
/// and the look-alikes Crockford's base 32 folds (I, L → 1; O → 0).
pub fn normalise_resume_code(code: &str) -> String {
    code.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| match c.to_ascii_uppercase() {
            'I' | 'L' => '1',
            'O' => '0',
            c => c,
        })
        .take(RESUME_LEN + 1)
        .collect()
}

/// A resume code as shown: two groups of five (`K3M9Q-X2P7A`).
pub fn display_resume_code(code: &str) -> String {
    let mut out = String::with_capacity(code.len() + 1);
    for (i, c) in code.chars().enumerate() {
        if i == RESUME_LEN / 2 {
            out.push('-');
        }
        out.push(c);
    }
    out
}

/// A fresh random resume code.
fn fresh_resume_code() -> String {
    let mut bytes = [0u8; RESUME_LEN];
    rand::thread_rng().fill_bytes(&mut bytes);
    bytes
        .iter()
        .map(|b| RESUME_ALPHABET[usize::from(b % 32)] as char)
        .collect()
}

/// Gives the participant a fresh random resume code (retrying on the unlikely collision);
/// for participants who did not join through an invite.
async fn give_resume_code(db: &Db, annotator: AnnotatorId) -> StoreResult<String> {
    loop {
        let code = fresh_resume_code();
        let r = sqlx::query(
            "UPDATE annotators SET resume_code = $1 WHERE id = $2 AND resume_code IS NULL",
        )
        .bind(&code)
        .bind(annotator)
        .execute(&mut *db.write().await?)
        .await;
        match r {
            Ok(_) => {
                let stored: Option<String> =
                    sqlx::query("SELECT resume_code FROM annotators WHERE id = $1")
                        .bind(annotator)
                        .fetch_one(&db.pool)
                        .await?
                        .try_get(0)?;
                return stored.ok_or_else(|| StoreError::NotFound("participant".into()));
            }
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// A participant as a join or a resume code finds them: who, in which study, and whether they
/// joined through a review-only invite (the patch review) rather than for the survey.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub annotator: AnnotatorId,
    pub study: StudyId,
    pub review: bool,
}

/// The participant a resume code belongs to.
pub async fn by_resume_code(db: &Db, code: &str) -> StoreResult<Option<Entry>> {
    let code = normalise_resume_code(code);
    if code.len() != RESUME_LEN {
        return Ok(None);
    }
    let r = sqlx::query("SELECT id, study_id, reviewer FROM annotators WHERE resume_code = $1")
        .bind(&code)
        .fetch_optional(&db.pool)
        .await?;
    Ok(r.map(|r| {
        Ok::<_, sqlx::Error>(Entry {
            annotator: r.try_get(0)?,
            study: r.try_get(1)?,
            review: r.try_get::<i64, _>(2)? != 0,
        })
    })
    .transpose()?)
}

/// A new annotator of `study` with the next free code `S{n}` (in the caller's write
/// transaction, so two joins never get the same code) — with `resume`, also a resume code
/// no one holds (drawn from `codes`; checked in the same statement: a code or resume code
/// already taken inserts nothing, so the unlikely collision never fails the statement; a taken
/// resume code is drawn again for the same `S{n}`, a taken `S{n}` moves to the next) — and the
/// reviewer flag. One statement in the common case.
async fn insert_with_next_code(
    tx: &mut sqlx::AnyConnection,
    study: StudyId,
    user: Option<UserId>,
    pid: Option<&str>,
    mut resume: Option<&mut (dyn FnMut() -> String + Send)>,
    reviewer: bool,
) -> StoreResult<(AnnotatorId, String)> {
    // the code: `S` and the study's participants so far plus `past` (1, then on)
    let mut past = 1i64;
    loop {
        let resume_code = resume.as_mut().map(|draw| draw());
        let r = sqlx::query(
            "INSERT INTO annotators (study_id, code, user_id, external_pid, created_at, resume_code, reviewer) \
             SELECT $1, 'S' || CAST((SELECT COUNT(*) FROM annotators WHERE study_id = $1) + $2 AS TEXT), \
             $3, $4, $5, $6, $7 WHERE NOT EXISTS (SELECT 1 FROM annotators WHERE resume_code = $6) \
             ON CONFLICT (study_id, code) DO NOTHING RETURNING id, code",
        )
        .bind(study)
        .bind(past)
        .bind(user)
        .bind(pid)
        .bind(now_ms())
        .bind(resume_code.as_deref())
        .bind(i64::from(reviewer))
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(r) = r {
            return Ok((r.try_get(0)?, r.try_get(1)?));
        }
        // nothing inserted: the resume code was taken (draw another for the same S{n}) or S{n}
        let resume_taken = match &resume_code {
            Some(code) => sqlx::query("SELECT 1 FROM annotators WHERE resume_code = $1")
                .bind(code)
                .fetch_optional(&mut *tx)
                .await?
                .is_some(),
            None => false,
        };
        if !resume_taken {
            past += 1;
        }
    }
}

/// Why a join is refused when the invite's batch has no item without k ratings.
pub const STUDY_FULL: &str = "this study is full: every item already has all the ratings it needs, so there is nothing to rate. Thank you for your interest.";

/// What an invite link leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InviteInfo {
    pub study: StudyId,
    pub study_name: String,
    pub cap: i64,
    pub used: i64,
    /// A review-only invite (else the survey).
    pub review: bool,
    /// Closed by an admin: admits no one new.
    pub closed: bool,
    /// A survey invite whose batch has no item left without k ratings ([`batch_has_room`]):
    /// a new participant would get nothing to rate.
    pub full: bool,
}

/// The SQL of whether an invite (`i`) can give a new participant work: a review invite always;
/// a survey invite while its batch has an item without k ratings (the queue's index).
macro_rules! invite_full {
    () => {
        "(i.batch_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM batch_items bi \
          WHERE bi.batch_id = i.batch_id AND bi.rated_full = 0))"
    };
}
pub(crate) use invite_full;

/// Whether a batch still has an item without k ratings (one index probe).
pub async fn batch_has_room(db: &Db, batch: BatchId) -> StoreResult<bool> {
    Ok(
        sqlx::query("SELECT 1 FROM batch_items WHERE batch_id = $1 AND rated_full = 0 LIMIT 1")
            .bind(batch)
            .fetch_optional(&db.pool)
            .await?
            .is_some(),
    )
}

/// Whether the participant has finished the study.
pub async fn has_finished(db: &Db, annotator: AnnotatorId) -> StoreResult<bool> {
    let r = sqlx::query("SELECT finished_at FROM annotators WHERE id = $1")
        .bind(annotator)
        .fetch_optional(&db.pool)
        .await?;
    Ok(match r {
        Some(r) => r.try_get::<Option<i64>, _>(0)?.is_some(),
        None => false,
    })
}

/// What an invite link leads to, or nothing.
pub async fn invite(db: &Db, token: &str) -> StoreResult<Option<InviteInfo>> {
    let r = sqlx::query(concat!(
        "SELECT s.id, s.name, i.cap, i.used, i.purpose, i.closed_at, CASE WHEN ",
        invite_full!(),
        " THEN 1 ELSE 0 END AS full FROM invites i JOIN studies s ON s.id = i.study_id WHERE i.token = $1",
    ))
    .bind(token)
    .fetch_optional(&db.pool)
    .await?;
    Ok(r.map(|r| {
        Ok::<_, sqlx::Error>(InviteInfo {
            study: r.try_get(0)?,
            study_name: r.try_get(1)?,
            cap: r.try_get(2)?,
            used: r.try_get(3)?,
            review: r.try_get::<String, _>(4)? == "review",
            closed: r.try_get::<Option<i64>, _>(5)?.is_some(),
            full: r.try_get::<i64, _>(6)? != 0,
        })
    })
    .transpose()?)
}

/// What of an invite never changes once it is made (invites are never deleted; their study,
/// batch and purpose are never rewritten, nor is a batch's seed): what a join needs before its
/// write, so a server may keep it (see `service::annotate::SurveyCache`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InviteRef {
    pub id: InviteId,
    pub token: String,
    pub study: StudyId,
    /// The invite's batch and the batch's seed (none for a review-only invite).
    pub batch: Option<(BatchId, i64)>,
    /// A review-only invite.
    pub review: bool,
}

/// The [`InviteRef`] of a token, or nothing.
pub async fn invite_ref(db: &Db, token: &str) -> StoreResult<Option<InviteRef>> {
    let r = sqlx::query(
        "SELECT i.id, i.study_id, i.batch_id, i.purpose, b.seed \
         FROM invites i LEFT JOIN batches b ON b.id = i.batch_id WHERE i.token = $1",
    )
    .bind(token)
    .fetch_optional(&db.pool)
    .await?;
    let Some(r) = r else { return Ok(None) };
    let batch: Option<BatchId> = r.try_get("batch_id")?;
    let seed: Option<i64> = r.try_get("seed")?;
    Ok(Some(InviteRef {
        id: r.try_get("id")?,
        token: token.to_owned(),
        study: r.try_get("study_id")?,
        batch: batch.zip(seed),
        review: r.try_get::<String, _>("purpose")? == "review",
    }))
}

/// Uses an invite: a new participant `S{n}` in the invite's study and batch — unless
/// `current` (the caller's participant) is already in that study: then the same participant
/// continues and the invite is not used again.
pub async fn join(
    db: &Db,
    token: &str,
    pid: Option<&str>,
    current: Option<AnnotatorId>,
) -> StoreResult<Entry> {
    let invite = invite_ref(db, token)
        .await?
        .ok_or_else(|| StoreError::NotFound("invite".into()))?;
    join_via(db, &invite, pid, current).await
}

/// [`join`] with the invite already found. A new participant is one group-commit job: the
/// invite's use (refused when it is closed or used up, in the same statement) and the
/// participant's row.
pub async fn join_via(
    db: &Db,
    invite: &InviteRef,
    pid: Option<&str>,
    current: Option<AnnotatorId>,
) -> StoreResult<Entry> {
    let study = invite.study;
    if let Some(annotator) = current {
        let mine = sqlx::query("SELECT reviewer FROM annotators WHERE id = $1 AND study_id = $2")
            .bind(annotator)
            .bind(study)
            .fetch_optional(&db.pool)
            .await?;
        if let Some(r) = mine {
            return Ok(Entry {
                annotator,
                study,
                review: r.try_get::<i64, _>(0)? != 0,
            });
        }
    }
    // a participant who could rate nothing is turned away before they consent, and no place
    // of the invite is used up by them
    if let Some((batch, _)) = invite.batch {
        if !batch_has_room(db, batch).await? {
            return Err(StoreError::Forbidden(STUDY_FULL.into()));
        }
    }
    let join = Join {
        study,
        invite: invite.id,
        review: invite.review,
        batch: invite.batch,
        pid: pid.map(str::to_owned),
    };
    let review = join.review;
    let annotator = grouped(db, study, move |conn, shared| {
        let join = join.clone();
        Box::pin(async move { join.run_in(conn, shared).await })
    })
    .await??;
    Ok(Entry {
        annotator,
        study,
        review,
    })
}

/// A join's writes, in a group commit (a burst of joins shares durable commits).
#[derive(Clone)]
struct Join {
    study: StudyId,
    invite: InviteId,
    review: bool,
    /// The invite's batch and its seed.
    batch: Option<(BatchId, i64)>,
    pid: Option<String>,
}

impl Join {
    /// Two statements (each a round trip on PostgreSQL, inside the group's serial writer) and
    /// three rows the group writes at its flush; a third statement only when it is refused.
    /// A refusal (the inner `Err`) wrote nothing: it is an answer, not a failed job, so it
    /// does not make the group run again with savepoints — a flood of joins through a closed
    /// or used-up link costs the other writers of its groups nothing more.
    async fn run_in(
        &self,
        conn: &mut sqlx::AnyConnection,
        shared: &mut Shared,
    ) -> StoreResult<StoreResult<AnnotatorId>> {
        // the checks (open, not used up) and the use of the invite in one statement
        let used = sqlx::query(
            "UPDATE invites SET used = used + 1 \
             WHERE id = $1 AND used < cap AND closed_at IS NULL RETURNING used",
        )
        .bind(self.invite)
        .fetch_optional(&mut *conn)
        .await?;
        if used.is_none() {
            // refused: say why (a rare path; a read in the same transaction)
            let closed: Option<i64> = sqlx::query("SELECT closed_at FROM invites WHERE id = $1")
                .bind(self.invite)
                .fetch_one(&mut *conn)
                .await?
                .try_get(0)?;
            return Ok(Err(StoreError::Forbidden(match closed {
                Some(_) => "this invite link was closed by the study's organisers".into(),
                None => "this invite link has been used up".into(),
            })));
        }
        // with the code to continue elsewhere, now: the participant's first page writes nothing
        let (annotator, code) = insert_with_next_code(
            conn,
            self.study,
            None,
            self.pid.as_deref(),
            Some(&mut fresh_resume_code),
            self.review,
        )
        .await?;
        // the batch membership, the order seed and the audit row are written once for the
        // whole group, just before its commit: nothing in the group reads them back
        if let Some((batch, seed)) = self.batch {
            let order_seed = crate::engine::assignment::annotator_seed(seed as u64, annotator.get())
                as i64
                & i64::MAX;
            shared.join_batch(batch.into(), annotator.into(), order_seed);
        }
        shared.audit(now_ms(), Some(self.study.into()), "participant.join", code);
        Ok(Ok(annotator))
    }
}

/// The annotator of `study` for a session participant or a signed-in account.
pub async fn annotator_in(
    db: &Db,
    study: StudyId,
    participant: Option<AnnotatorId>,
    user: Option<UserId>,
) -> StoreResult<Option<AnnotatorId>> {
    if let Some(p) = participant {
        let ok = sqlx::query("SELECT id FROM annotators WHERE id = $1 AND study_id = $2")
            .bind(p)
            .bind(study)
            .fetch_optional(&db.pool)
            .await?;
        if ok.is_some() {
            return Ok(Some(p));
        }
    }
    if let Some(u) = user {
        let r = sqlx::query("SELECT id FROM annotators WHERE user_id = $1 AND study_id = $2")
            .bind(u)
            .bind(study)
            .fetch_optional(&db.pool)
            .await?;
        return Ok(r.map(|r| r.try_get(0)).transpose()?);
    }
    Ok(None)
}

/// Links an account to a study as an annotator (a new code), or returns the existing link.
pub async fn enrol_user(db: &Db, study: StudyId, user: UserId) -> StoreResult<AnnotatorId> {
    if let Some(a) = annotator_in(db, study, None, Some(user)).await? {
        return Ok(a);
    }
    let mut tx = db.begin_write(study).await?;
    let (id, _) = insert_with_next_code(&mut tx, study, Some(user), None, None, false).await?;
    tx.commit().await?;
    Ok(id)
}

/// What the annotation page needs to know about the annotator.
#[derive(Debug, Clone)]
pub struct AnnotatorState {
    pub code: String,
    /// The code that continues this participant on another device (invited participants).
    pub resume_code: Option<String>,
    pub consented: bool,
    pub guideline_seen: bool,
    pub finished: bool,
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
        resume_code = Some(give_resume_code(db, annotator).await?);
    }
    Ok(AnnotatorState {
        code: r.try_get("code")?,
        resume_code,
        consented: r.try_get::<Option<i64>, _>("consented_at")?.is_some(),
        guideline_seen: r.try_get::<Option<i64>, _>("guideline_seen_at")?.is_some(),
        finished: r.try_get::<Option<i64>, _>("finished_at")?.is_some(),
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

pub async fn finish(db: &Db, study: StudyId, annotator: AnnotatorId) -> StoreResult<()> {
    let mut tx = db.begin_write(study).await?;
    // unrated items go back to the pool
    super::assign::release_open(&mut tx, annotator).await?;
    sqlx::query("UPDATE annotators SET finished_at = $1 WHERE id = $2 AND finished_at IS NULL")
        .bind(now_ms())
        .bind(annotator)
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
}

/// The `studies` columns of [`StudySettings`], for a query over `studies s`.
macro_rules! settings_columns {
    () => {
        "s.name, s.ratings_per_item, s.guideline, s.consent_text, s.screener, s.blind_operator, \
         s.blind_bug_id, s.randomise_sides, s.completion_code, s.min_rated_for_code"
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
        ", a.code, a.user_id, a.resume_code, a.consented_at, a.guideline_seen_at, a.finished_at, ",
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

/// The annotator's current vote on an item (CR, CC, comment), if any.
pub async fn my_vote(
    db: &Db,
    annotator: AnnotatorId,
    item: ItemId,
) -> StoreResult<Option<(u8, u8, String)>> {
    let r =
        sqlx::query("SELECT cr, cc, comment FROM votes WHERE annotator_id = $1 AND item_id = $2")
            .bind(annotator)
            .bind(item)
            .fetch_optional(&db.pool)
            .await?;
    Ok(r.map(|r| -> Result<_, sqlx::Error> {
        Ok((
            r.try_get::<i64, _>(0)? as u8,
            r.try_get::<i64, _>(1)? as u8,
            r.try_get(2)?,
        ))
    })
    .transpose()?)
}

/// How many of an annotator's rated items the review lists at once: the list is paged, so a
/// participant of a 20,000-item pool study is not sent 10,000 rows in one page.
pub const REVIEW_PAGE: i64 = 100;

/// A page of the annotator's votes in a study, in rating order: a range of the index
/// `votes_annotator` (migration 0014), each vote's item then found by its key — not a scan of
/// every vote, nor of the study's items. The item is a subquery of the vote so that the votes
/// come first whatever the statistics say: as a join, PostgreSQL before its first `ANALYZE`
/// guessed a study holds a few items and went through every one of them. An annotator is of one
/// study: that is checked once (`annotators`), not per vote. `$1` annotator, `$2` study, `$3`
/// rows at most, `$4` rows skipped (the offset runs along the same range of the index: bounded
/// by the annotator's own votes).
pub const MY_VOTES_SQL: &str =
    "SELECT v.item_id, (SELECT i.summary FROM items i WHERE i.id = v.item_id), v.cr, v.cc \
     FROM votes v WHERE v.annotator_id = $1 \
     AND EXISTS (SELECT 1 FROM annotators an WHERE an.id = $1 AND an.study_id = $2) \
     ORDER BY v.id LIMIT $3 OFFSET $4";

/// How many votes the annotator has in the study: a count of the same range. `$1` annotator,
/// `$2` study.
pub const MY_VOTE_COUNT_SQL: &str = "SELECT COUNT(*) FROM votes v WHERE v.annotator_id = $1 \
     AND EXISTS (SELECT 1 FROM annotators an WHERE an.id = $1 AND an.study_id = $2)";

/// A page of the review: the annotator's rated items on it — (item, summary, CR, CC), in
/// rating order —, the page shown (counted from 0) and how many items they rated in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MyVotes {
    pub rows: Vec<(ItemId, String, u8, u8)>,
    pub page: i64,
    pub total: i64,
}

impl MyVotes {
    /// Pages in all (at least 1: an empty list is one page).
    pub fn pages(&self) -> i64 {
        (self.total - 1).max(0) / REVIEW_PAGE + 1
    }

    /// The rated items on the pages before this one.
    pub fn before(&self) -> i64 {
        self.page * REVIEW_PAGE
    }
}

/// Page `page` (from 0) of the annotator's rated items of a study, [`REVIEW_PAGE`] to a page;
/// a page past the last is the last.
pub async fn my_votes(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    page: i64,
) -> StoreResult<MyVotes> {
    let total: i64 = sqlx::query_scalar(MY_VOTE_COUNT_SQL)
        .bind(annotator)
        .bind(study)
        .fetch_one(&db.pool)
        .await?;
    let mut mine = MyVotes {
        rows: Vec::new(),
        page: 0,
        total,
    };
    mine.page = page.clamp(0, mine.pages() - 1);
    let rows = sqlx::query(MY_VOTES_SQL)
        .bind(annotator)
        .bind(study)
        .bind(REVIEW_PAGE)
        .bind(mine.before())
        .fetch_all(&db.pool)
        .await?;
    mine.rows = rows
        .iter()
        .map(|r| {
            Ok((
                r.try_get(0)?,
                r.try_get(1)?,
                r.try_get::<i64, _>(2)? as u8,
                r.try_get::<i64, _>(3)? as u8,
            ))
        })
        .collect::<Result<_, sqlx::Error>>()?;
    Ok(mine)
}

/// Whether the annotator's side assignment shows the original on the left.
pub async fn original_left(db: &Db, annotator: AnnotatorId, item: ItemId) -> StoreResult<bool> {
    let r = sqlx::query(
        "SELECT original_left FROM assignments WHERE annotator_id = $1 AND item_id = $2",
    )
    .bind(annotator)
    .bind(item)
    .fetch_optional(&db.pool)
    .await?;
    Ok(r.map(|r| r.try_get::<i64, _>(0))
        .transpose()?
        .is_none_or(|v| v != 0))
}

/// The studies in which an account annotates: (id, name).
pub async fn studies_of_user(db: &Db, user: UserId) -> StoreResult<Vec<(StudyId, String)>> {
    let rows = sqlx::query("SELECT s.id, s.name FROM studies s JOIN annotators a ON a.study_id = s.id WHERE a.user_id = $1 ORDER BY s.name")
        .bind(user)
        .fetch_all(&db.pool)
        .await?;
    Ok(rows
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect::<Result<_, sqlx::Error>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SQLite's plan for an annotator's votes: a range of `votes_annotator`, each item by its
    /// key — no scan of the votes nor of the items.
    #[tokio::test]
    async fn my_votes_come_from_the_annotator_index_in_order() {
        let (db, _dir) = crate::store::temp_sqlite().await;
        let plan: Vec<String> = sqlx::query(&format!("EXPLAIN QUERY PLAN {MY_VOTES_SQL}"))
            .bind(1i64)
            .bind(1i64)
            .bind(REVIEW_PAGE)
            .bind(0i64)
            .fetch_all(&db.pool)
            .await
            .expect("plan")
            .iter()
            .map(|r| r.try_get::<String, _>("detail").expect("detail"))
            .collect();
        let all = plan.join("\n");
        assert!(
            plan.iter()
                .any(|d| d.starts_with("SEARCH v USING INDEX votes_annotator (annotator_id=?)")),
            "{all}"
        );
        assert!(
            plan.iter()
                .any(|d| d.starts_with("SEARCH i USING INTEGER PRIMARY KEY (rowid=?)")),
            "{all}"
        );
        assert!(
            !all.contains("SCAN v") && !all.contains("SCAN i") && !all.contains("TEMP B-TREE"),
            "{all}"
        );
    }

    /// A resume code someone holds is drawn again for the same participant code: S{n} is
    /// never skipped for it. A taken S{n} moves to the next.
    #[tokio::test]
    async fn a_taken_resume_code_is_drawn_again_for_the_same_code() {
        let (db, _dir) = crate::store::temp_sqlite().await;
        let study = crate::store::studies::create(&db, None, "codes", "")
            .await
            .expect("study");
        let mut conn = db.write().await.expect("write");
        let mut draws = [
            "AAAAAAAAAA",
            "AAAAAAAAAA",
            "BBBBBBBBBB",
            "CCCCCCCCCC",
            "DDDDDDDDDD",
        ]
        .into_iter()
        .map(str::to_owned);
        let mut draw = || draws.next().expect("a code");
        let first = insert_with_next_code(&mut conn, study, None, None, Some(&mut draw), false)
            .await
            .expect("first");
        assert_eq!(first.1, "S1");
        let second = insert_with_next_code(&mut conn, study, None, None, Some(&mut draw), false)
            .await
            .expect("second");
        assert_eq!(second.1, "S2", "the collision did not skip S2");
        let codes: Vec<Option<String>> =
            sqlx::query_scalar("SELECT resume_code FROM annotators ORDER BY id")
                .fetch_all(&mut *conn)
                .await
                .expect("codes");
        assert_eq!(
            codes,
            vec![Some("AAAAAAAAAA".into()), Some("BBBBBBBBBB".into())]
        );
        // S3 taken already (a participant counted out, say): the next free one
        sqlx::query("UPDATE annotators SET code = 'S3' WHERE id = $1")
            .bind(second.0)
            .execute(&mut *conn)
            .await
            .expect("rename");
        let third = insert_with_next_code(&mut conn, study, None, None, Some(&mut draw), false)
            .await
            .expect("third");
        assert_eq!(third.1, "S4");
    }
}
