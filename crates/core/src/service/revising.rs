//! A designed study's answers revised before the finish, as the naturalness study's ratings
//! are: the list of the units the participant answered (each with its answers in words), a
//! unit shown again with the answers given, and the revision that replaces them. An
//! attention unit is a check: answered once, never listed or revised. A revision keeps the
//! unit's time on item (the first answer's: the time the participant first read it); the
//! replaced answers are kept in the store, marked replaced.

use natstudy_engine::design::kinds::form;
use natstudy_engine::design::record::stored_answer;
use natstudy_engine::design::{Design, Snippet};
use natstudy_types::{AnswerForm, AnsweredUnit, UnitView};

use super::ServiceResult;
use crate::store::units::{Answered, Claim};
use crate::store::{self, Db};
use natstudy_vocab::ids::{AnnotatorId, StudyId};

/// The most characters of a snippet's first line the list shows.
const FIRST_LINE_CHARS: usize = 60;

/// The units the participant answered, in the order answered, each named by its snippets'
/// first lines (what the participant read) and its answers in words.
pub async fn answered_units(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    design: &Design,
) -> ServiceResult<Vec<AnsweredUnit>> {
    let units = store::unit_revisions::answered_units(db, study, annotator).await?;
    let mut ids: Vec<String> = units.iter().flat_map(|u| u.shown.clone()).collect();
    ids.sort();
    ids.dedup();
    let snippets = super::designs::snippets_by_id(db, study, &ids).await?;
    Ok(units
        .into_iter()
        .map(|u| {
            let answers = u
                .records
                .iter()
                .filter_map(|r| stored_answer(r))
                .filter_map(|(id, a)| {
                    let q = design.question(&id)?;
                    Some(format!("{id}: {}", form::answer_words(q, &a, &u.shown)))
                })
                .collect::<Vec<_>>()
                .join("; ");
            AnsweredUnit {
                claim: u.claim,
                shown: shown_words(&u.shown, &snippets),
                answers,
            }
        })
        .collect())
}

/// A unit in words: each snippet as shown, by its label and its first line of code.
fn shown_words(shown: &[String], snippets: &[Snippet]) -> String {
    shown
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let line = snippets
                .iter()
                .find(|s| &s.id == id)
                .and_then(|s| s.code.lines().map(str::trim).find(|l| !l.is_empty()))
                .unwrap_or("");
            let mut line: String = line.chars().take(FIRST_LINE_CHARS).collect();
            if line.chars().count() == FIRST_LINE_CHARS {
                line.push('…');
            }
            if shown.len() == 1 {
                line
            } else {
                format!("{} {line}", form::label(i))
            }
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The participant's answered unit `claim` shown again with the answers given, to be
/// revised; `None` when it is not theirs to revise (not theirs, not answered, or a check).
pub async fn revise_view(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    design: &Design,
    claim: i64,
) -> ServiceResult<Option<UnitView>> {
    let Some(claim) = store::units::claim(db, study, annotator, claim).await? else {
        return Ok(None);
    };
    if claim.answered.is_none() || claim.attention.is_some() {
        return Ok(None);
    }
    let snippets = super::designs::snippets_by_id(db, study, &claim.shown).await?;
    let mut view = super::unit_page::unit_view(design, &snippets, &claim)?;
    let (records, _) = store::unit_revisions::answers_of(db, annotator, claim.id).await?;
    view.given = records
        .iter()
        .filter_map(|r| stored_answer(r))
        .filter_map(|(id, a)| Some(form::form_fields(design.question(&id)?, &a, &claim.shown)))
        .flatten()
        .collect();
    view.revising = true;
    Ok(Some(view))
}

/// Replaces the answers to the participant's answered unit with the form's, read and checked
/// as a first answer is (nothing stored on a refusal); the unit keeps its first answer's time.
/// Whether the unit may be revised (not a check, not after the finish, not past the most
/// revisions) is the store's to say, in the revision's own transaction.
pub(super) async fn revise(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    design: &Design,
    claim: &Claim,
    answer: &AnswerForm,
) -> ServiceResult<Answered> {
    let (_, seconds) = store::unit_revisions::answers_of(db, annotator, claim.id).await?;
    let (rows, _) =
        super::unit_page::read_answers(db, study, annotator, design, claim, answer, seconds)
            .await?;
    let now = crate::db::now_ms();
    Ok(
        store::unit_revisions::revise(db, study, annotator, claim.id, &answer.token, &rows, now)
            .await?,
    )
}
