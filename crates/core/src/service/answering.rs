//! A participant answering a designed study: the unit handed to them (claimed by the design
//! engine's rules — the least answered first, then their own seeded or Latin-square order;
//! what is shown counterbalanced by the unit's nth response), shown as the page asks it, and
//! their answers read from the page's form by each question's kind and stored with what was
//! shown and the time on the unit.

use natstudy_engine::design::{attention, units, Design};
use natstudy_engine::formats::survey::is_time_on_item;
use natstudy_types::AnswerForm;

use super::{ServiceError, ServiceResult};
use crate::store::units::{Answered, Claim, HandOut};
use crate::store::{self, Db};
use natstudy_vocab::ids::{AnnotatorId, StudyId};

pub use natstudy_engine::design::units::{HOLD_MS, MAX_HOLD_MS};

/// The participant's unit — the one they hold, or the next for them — or `None` when no unit
/// is left for them now.
pub async fn claim_unit(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    design: &Design,
    k: i64,
    quota: Option<i64>,
    now: i64,
) -> ServiceResult<Option<Claim>> {
    let seed = super::designs::study_seed(study);
    let count = usize::try_from(store::units::planned(db, study).await?).unwrap_or(0);
    // the participant's own order: a seeded shuffle, or their row of the Latin square
    let row = match design.item_order {
        natstudy_engine::design::ItemOrder::Random => annotator.get() as u64,
        natstudy_engine::design::ItemOrder::LatinSquare => {
            store::units::participant_rank(db, study, annotator).await?
        }
    };
    let order = units::participant_order(count, design.item_order, seed, row);
    let choose = move |open: &[(usize, u64)]| units::next_unit(open, &order);
    let shown = move |members: &[String], position: usize, nth: u64| {
        let local: Vec<usize> = (0..members.len()).collect();
        units::shown(&local, position, nth as usize, seed)
            .into_iter()
            .filter_map(|i| members.get(i).cloned())
            .collect()
    };
    let rules = HandOut {
        now,
        k,
        hold_ms: HOLD_MS,
        quota,
        choose: &choose,
        attention_due: &attention::attention_due,
        shown: &shown,
    };
    Ok(store::units::claim_next(db, study, annotator, &rules).await?)
}

/// Reads and stores the participant's answers to a unit they were handed: every question of
/// the design answered by its kind's rules (refused in words, naming the question, with
/// nothing stored), with what was shown and the time on the unit — the page's measure when it
/// is one (finite, positive, not longer than the unit was held), else the server's. With
/// `answer.revise`, the answers replace those given before to the unit
/// ([`super::revising::revise`]).
pub async fn submit(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    answer: AnswerForm,
) -> ServiceResult<Answered> {
    let design = super::designs::of(db, study).await?;
    let claim = store::units::claim(db, study, annotator, answer.claim)
        .await?
        .ok_or_else(|| ServiceError::Forbidden("not a unit handed to you".into()))?;
    if claim.answered.is_some() && answer.revise {
        return super::revising::revise(db, study, annotator, &design, &claim, &answer).await;
    }
    if claim.answered.is_some() {
        // the same submit again is the same answer; another is refused (the store says which)
        return Ok(store::units::answer(
            db,
            study,
            annotator,
            claim.id,
            &answer.token,
            &[],
            0,
            false,
        )
        .await?);
    }
    let now = crate::db::now_ms();
    if store::invites::has_finished(db, annotator).await? {
        return Err(ServiceError::Forbidden(
            "you finished this study: no more answers are taken".into(),
        ));
    }
    // the page's time when it is a time on item (no subnormal, at most a day) within the
    // hold; else the server's, untimed past a day (what the responses file accepts)
    let held_secs = (now - claim.claimed_at).max(0) as f64 / 1000.0;
    let seconds = match answer.time_secs {
        Some(t) if is_time_on_item(t) && t > 0.0 && t <= held_secs + 1.0 => Some(t),
        _ => Some(held_secs).filter(|&t| is_time_on_item(t)),
    };
    let (rows, missed) =
        super::unit_page::read_answers(db, study, annotator, &design, &claim, &answer, seconds)
            .await?;
    Ok(store::units::answer(
        db,
        study,
        annotator,
        claim.id,
        &answer.token,
        &rows,
        now,
        missed,
    )
    .await?)
}
