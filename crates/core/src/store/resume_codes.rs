//! Resume codes: a participant's way back to their study on another device or after their
//! session ended (Crockford's base 32, 50 random bits).

use rand::RngCore;
use sqlx::Row;

use super::{Db, StoreError, StoreResult};
use natstudy_vocab::ids::{AnnotatorId, StudyId};

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
pub(super) fn fresh_resume_code() -> String {
    let mut bytes = [0u8; RESUME_LEN];
    rand::thread_rng().fill_bytes(&mut bytes);
    bytes
        .iter()
        .map(|b| RESUME_ALPHABET[usize::from(b % 32)] as char)
        .collect()
}

/// Gives the participant a fresh random resume code (retrying on the unlikely collision);
/// for participants who did not join through an invite.
pub(super) async fn give_resume_code(db: &Db, annotator: AnnotatorId) -> StoreResult<String> {
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
