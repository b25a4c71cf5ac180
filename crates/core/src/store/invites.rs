//! Invites and joining: invite links, joining through one (a participant code `S{n}` and a
//! resume code), the room a batch has left, enrolling a signed-in account.

use rand::RngCore;
use sqlx::Row;

use super::group_commit::jobs::grouped;
use super::resume_codes::Entry;
use super::{audit, Db, StoreError, StoreResult};
use crate::db::now_ms;
use crate::store::group_commit::shared::Shared;
use natstudy_vocab::ids::{AnnotatorId, BatchId, InviteId, StudyId, UserId};

/// Creates an invite link token for a batch (cap = how many participants it may create).
pub async fn create_invite(
    db: &Db,
    study: StudyId,
    batch: BatchId,
    cap: i64,
    actor: Option<UserId>,
) -> StoreResult<String> {
    insert_invite(db, study, Some(batch), cap, false, actor, "survey").await
}

/// An invite into a designed study's survey (its units are handed out to all its
/// participants: no batch); a pilot invite when `pilot` or in the study's pilot phase.
pub async fn create_design_invite(
    db: &Db,
    study: StudyId,
    cap: i64,
    pilot: bool,
    actor: Option<UserId>,
) -> StoreResult<String> {
    insert_invite(db, study, None, cap, pilot, actor, "survey").await
}

/// A pilot invite into a batch, whatever the study's phase: its participants are pilot
/// participants (a staff member trying the survey).
pub async fn create_pilot_invite(
    db: &Db,
    study: StudyId,
    batch: BatchId,
    cap: i64,
    actor: Option<UserId>,
) -> StoreResult<String> {
    insert_invite(db, study, Some(batch), cap, true, actor, "survey").await
}

/// A review-only invite: its participants review the study's patches (and take no survey).
pub async fn create_review_invite(
    db: &Db,
    study: StudyId,
    cap: i64,
    actor: Option<UserId>,
) -> StoreResult<String> {
    insert_invite(db, study, None, cap, false, actor, "review").await
}

/// An invite of `purpose` (`survey` or `review`) into a batch of the study or none; a pilot
/// invite when `pilot`, or when the study is in its pilot phase.
async fn insert_invite(
    db: &Db,
    study: StudyId,
    batch: Option<BatchId>,
    cap: i64,
    pilot: bool,
    actor: Option<UserId>,
    purpose: &str,
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
    let pilot: i64 = sqlx::query_scalar(
        "INSERT INTO invites (study_id, batch_id, token, cap, purpose, created_at, pilot) \
         VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7 = 1 THEN 1 ELSE (SELECT pilot FROM studies WHERE id = $1) END) \
         RETURNING pilot",
    )
    .bind(study)
    .bind(batch)
    .bind(&token)
    .bind(cap.max(1))
    .bind(purpose)
    .bind(now_ms())
    .bind(i64::from(pilot))
    .fetch_one(&mut *tx)
    .await?;
    let what = match batch {
        Some(batch) if pilot == 1 => format!("pilot, batch {batch}, cap {cap}"),
        Some(batch) => format!("batch {batch}, cap {cap}"),
        None if purpose == "survey" => format!("survey, cap {cap}"),
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
    identity: &Identity,
    mut resume: Option<&mut (dyn FnMut() -> String + Send)>,
    reviewer: bool,
) -> StoreResult<(AnnotatorId, String)> {
    // the code: `S` and the study's participants so far plus `past` (1, then on)
    let mut past = 1i64;
    loop {
        let resume_code = resume.as_mut().map(|draw| draw());
        let r = sqlx::query(
            "INSERT INTO annotators (study_id, code, user_id, external_pid, created_at, resume_code, reviewer, \
             platform, external_study, external_session) \
             SELECT $1, 'S' || CAST((SELECT COUNT(*) FROM annotators WHERE study_id = $1) + $2 AS TEXT), \
             $3, $4, $5, $6, $7, $8, $9, $10 WHERE NOT EXISTS (SELECT 1 FROM annotators WHERE resume_code = $6) \
             ON CONFLICT (study_id, code) DO NOTHING RETURNING id, code",
        )
        .bind(study)
        .bind(past)
        .bind(user)
        .bind(identity.pid.as_deref())
        .bind(now_ms())
        .bind(resume_code.as_deref())
        .bind(i64::from(reviewer))
        .bind(identity.platform())
        .bind(identity.study.as_deref())
        .bind(identity.session.as_deref())
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
/// a survey invite while its batch has an item without k ratings (the queue's index); a
/// designed study's invite (no batch) while a unit has fewer than k answers of counted
/// participants ([`units_full`]).
macro_rules! invite_full {
    () => {
        concat!(
            "((i.batch_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM batch_items bi \
              WHERE bi.batch_id = i.batch_id AND bi.rated_full = 0)) \
             OR (i.batch_id IS NULL AND i.purpose = 'survey' AND ",
            $crate::store::invites::units_full!("i.study_id"),
            "))"
        )
    };
}

/// The SQL of whether every unit of a designed study (`$study`: its id's expression) has k
/// answers of counted participants (true too when it has no units).
macro_rules! units_full {
    ($study:literal) => {
        concat!(
            "NOT EXISTS (SELECT 1 FROM design_units u WHERE u.study_id = ",
            $study,
            " AND u.attention IS NULL AND (SELECT COUNT(*) FROM unit_claims f JOIN annotators fa ON fa.id = f.annotator_id \
               WHERE f.unit_id = u.id AND fa.counted = 1 AND f.answered_at IS NOT NULL) \
             < (SELECT s2.ratings_per_item FROM studies s2 WHERE s2.id = ",
            $study,
            "))"
        )
    };
}
pub(crate) use invite_full;
pub(crate) use units_full;

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

/// Whether every unit of a designed study has its k answers ([`units_full`]).
pub async fn designed_full(db: &Db, study: StudyId) -> StoreResult<bool> {
    let full: i64 = sqlx::query_scalar(concat!(
        "SELECT CASE WHEN ",
        units_full!("$1"),
        " THEN 1 ELSE 0 END"
    ))
    .bind(study)
    .fetch_one(&db.pool)
    .await?;
    Ok(full != 0)
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
    identity: &Identity,
    current: Option<AnnotatorId>,
) -> StoreResult<Entry> {
    let invite = invite_ref(db, token)
        .await?
        .ok_or_else(|| StoreError::NotFound("invite".into()))?;
    join_via(db, &invite, identity, current).await
}

/// A participant's identity on the crowd platform that sent them (all `None`: none, or an
/// account). The platform's participant id is kept as `annotators.external_pid`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// The platform, when the participant came with its participant id.
    pub platform: Option<super::Platform>,
    pub pid: Option<String>,
    /// The platform's study (Prolific's `STUDY_ID`, MTurk's `hitId`).
    pub study: Option<String>,
    /// The platform's session (Prolific's `SESSION_ID`, MTurk's `assignmentId`).
    pub session: Option<String>,
}

impl Identity {
    /// The platform, stored only with a participant id (one platform id is one participant).
    fn platform(&self) -> Option<super::Platform> {
        self.platform.filter(|_| self.pid.is_some())
    }
}

/// The study's participant with this platform id, if one joined with it before.
async fn by_platform_id(
    conn: &mut sqlx::AnyConnection,
    study: StudyId,
    identity: &Identity,
) -> StoreResult<Option<(AnnotatorId, bool)>> {
    let (Some(platform), Some(pid)) = (identity.platform(), identity.pid.as_deref()) else {
        return Ok(None);
    };
    let r = sqlx::query(
        "SELECT id, reviewer FROM annotators WHERE study_id = $1 AND platform = $2 AND external_pid = $3",
    )
    .bind(study)
    .bind(platform)
    .bind(pid)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(match r {
        Some(r) => Some((r.try_get(0)?, r.try_get::<i64, _>(1)? != 0)),
        None => None,
    })
}

/// The study's participant who joined with this platform id, if any (one platform id is one
/// participant, on any device).
pub async fn platform_participant(
    db: &Db,
    study: StudyId,
    identity: &Identity,
) -> StoreResult<Option<AnnotatorId>> {
    if identity.platform().is_none() {
        return Ok(None);
    }
    let mut conn = db.pool.acquire().await?;
    Ok(by_platform_id(&mut conn, study, identity)
        .await?
        .map(|(a, _)| a))
}

/// [`join`] with the invite already found. A new participant is one group-commit job: the
/// invite's use (refused when it is closed or used up, in the same statement) and the
/// participant's row.
pub async fn join_via(
    db: &Db,
    invite: &InviteRef,
    identity: &Identity,
    current: Option<AnnotatorId>,
) -> StoreResult<Entry> {
    let study = invite.study;
    // one platform id is one participant: the same id continues them, on any device (and
    // without using a place of the invite, full or not)
    if identity.platform().is_some() {
        let mut conn = db.pool.acquire().await?;
        if let Some((annotator, review)) = by_platform_id(&mut conn, study, identity).await? {
            return Ok(Entry {
                annotator,
                study,
                review,
            });
        }
    }
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
    } else if !invite.review && designed_full(db, study).await? {
        return Err(StoreError::Forbidden(STUDY_FULL.into()));
    }
    let join = Join {
        study,
        invite: invite.id,
        review: invite.review,
        batch: invite.batch,
        identity: identity.clone(),
    };
    let (annotator, review) = grouped(db, study, move |conn, shared| {
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
    identity: Identity,
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
    ) -> StoreResult<StoreResult<(AnnotatorId, bool)>> {
        // the same platform id joined meanwhile (another browser): that participant continues
        // (the study's writes are one at a time, so two joins with one id never make two)
        if let Some(found) = by_platform_id(conn, self.study, &self.identity).await? {
            return Ok(Ok(found));
        }
        // the checks (open, not used up) and the use of the invite in one statement
        let used = sqlx::query(
            "UPDATE invites SET used = used + 1 \
             WHERE id = $1 AND used < cap AND closed_at IS NULL RETURNING pilot",
        )
        .bind(self.invite)
        .fetch_optional(&mut *conn)
        .await?;
        let Some(used) = used else {
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
        };
        let pilot = used.try_get::<i64, _>(0)? != 0;
        // with the code to continue elsewhere, now: the participant's first page writes nothing
        let (annotator, code) = insert_with_next_code(
            conn,
            self.study,
            None,
            &self.identity,
            Some(&mut super::resume_codes::fresh_resume_code),
            self.review,
        )
        .await?;
        if pilot {
            // a pilot participant counts nowhere from the start (migration 0032)
            sqlx::query("UPDATE annotators SET pilot = 1, counted = 0 WHERE id = $1")
                .bind(annotator)
                .execute(&mut *conn)
                .await?;
        }
        // the batch membership, the order seed and the audit row are written once for the
        // whole group, just before its commit: nothing in the group reads them back
        if let Some((batch, seed)) = self.batch {
            let order_seed =
                natstudy_engine::assignment::annotator_seed(seed as u64, annotator.get()) as i64
                    & i64::MAX;
            shared.join_batch(batch.into(), annotator.into(), order_seed);
        }
        shared.audit(now_ms(), Some(self.study.into()), "participant.join", code);
        Ok(Ok((annotator, self.review)))
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
    let id = enrol_user_in(&mut tx, study, user).await?;
    tx.commit().await?;
    Ok(id)
}

/// [`enrol_user`] inside a write transaction of the study (a batch's own).
pub(crate) async fn enrol_user_in(
    tx: &mut sqlx::AnyConnection,
    study: StudyId,
    user: UserId,
) -> StoreResult<AnnotatorId> {
    let linked = sqlx::query("SELECT id FROM annotators WHERE user_id = $1 AND study_id = $2")
        .bind(user)
        .bind(study)
        .fetch_optional(&mut *tx)
        .await?;
    if let Some(r) = linked {
        return Ok(r.try_get(0)?);
    }
    let (id, _) =
        insert_with_next_code(tx, study, Some(user), &Identity::default(), None, false).await?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let first = insert_with_next_code(
            &mut conn,
            study,
            None,
            &Identity::default(),
            Some(&mut draw),
            false,
        )
        .await
        .expect("first");
        assert_eq!(first.1, "S1");
        let second = insert_with_next_code(
            &mut conn,
            study,
            None,
            &Identity::default(),
            Some(&mut draw),
            false,
        )
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
        let third = insert_with_next_code(
            &mut conn,
            study,
            None,
            &Identity::default(),
            Some(&mut draw),
            false,
        )
        .await
        .expect("third");
        assert_eq!(third.1, "S4");
    }
}
