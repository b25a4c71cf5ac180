//! A participant answering a designed study: the unit handed to them (claimed by the design
//! engine's rules — the least answered first, then their own seeded or Latin-square order;
//! what is shown counterbalanced by the unit's nth response), shown as the page asks it, and
//! their answers read from the page's form by each question's kind and stored with what was
//! shown and the time on the unit.

use natstudy_engine::design::kinds::form;
use natstudy_engine::design::{attention, Answer};
use natstudy_engine::design::{units, Design, Kind, Response, Snippet};
use natstudy_engine::formats::survey::is_time_on_item;
use natstudy_types::{AnswerForm, Ask, DiffLine, QuestionView, Seg, SnippetView, UnitView};

use super::{ServiceError, ServiceResult};
use crate::present::wire::{bounded_rows, wire_rows};
use crate::store::units::NewResponse;
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

/// The page's view of a claimed unit.
pub fn unit_view(design: &Design, snippets: &[Snippet], claim: &Claim) -> ServiceResult<UnitView> {
    let shown: Vec<&Snippet> = claim
        .shown
        .iter()
        .map(|id| {
            snippets.iter().find(|s| &s.id == id).ok_or_else(|| {
                ServiceError::Invalid(format!("snippet {id} of a unit is not in the study"))
            })
        })
        .collect::<ServiceResult<_>>()?;
    let views = shown
        .iter()
        .enumerate()
        .map(|(i, s)| snippet_view(i, s))
        .collect();
    let first = shown.first().copied();
    let questions = design
        .questions
        .iter()
        .map(|q| QuestionView {
            id: q.id.clone(),
            prompt: q.prompt.clone(),
            ask: ask(&q.kind, first.and_then(|s| s.options.get(&q.id))),
        })
        .collect();
    let heading = match shown.len() {
        1 => "Read this snippet".to_owned(),
        2 => "Compare these two snippets".to_owned(),
        n => format!("Read these {n} snippets"),
    };
    Ok(UnitView {
        claim: claim.id,
        snippets: views,
        questions,
        token: super::participation::fresh_token(),
        heading,
    })
}

/// How a question of `kind` is asked; `options`: a comprehension question's options of the
/// snippet (none: a typed answer).
fn ask(kind: &Kind, options: Option<&Vec<String>>) -> Ask {
    match kind {
        Kind::Likert(l) => Ask::Scale {
            labels: (1..=l.points)
                .map(|p| l.label(p).map(str::to_owned))
                .collect(),
        },
        Kind::Choice(o) => Ask::Choice {
            options: o.options.clone(),
        },
        Kind::Multi(o) => Ask::Multi {
            options: o.options.clone(),
        },
        Kind::Text(t) => Ask::Text {
            max_chars: t.max_chars,
        },
        Kind::Number(n) => Ask::Number {
            min: n.min,
            max: n.max,
        },
        Kind::Pairwise(p) => Ask::Pair { ties: p.ties },
        Kind::BestWorst(_) => Ask::BestWorst,
        Kind::Answer(_) => match options {
            Some(list) => Ask::Choice {
                options: list.clone(),
            },
            None => Ask::Text {
                max_chars: natstudy_engine::design::kinds::answer::MAX_ANSWER_CHARS as u32,
            },
        },
    }
}

/// A snippet as shown: a diff against its original, or its own lines.
fn snippet_view(i: usize, s: &Snippet) -> SnippetView {
    let (rows, is_diff) = match &s.original {
        Some(original) => (
            wire_rows(natstudy_engine::diff::diff_rows(original, &s.code, &[])),
            true,
        ),
        None => (
            s.code
                .lines()
                .enumerate()
                .map(|(n, line)| {
                    let seg = vec![Seg {
                        text: line.to_owned(),
                        changed: false,
                    }];
                    DiffLine {
                        kind: "same".into(),
                        old_no: Some(n as u32 + 1),
                        new_no: Some(n as u32 + 1),
                        old: seg.clone(),
                        new: seg,
                        buggy: false,
                        buggy_new: false,
                    }
                })
                .collect(),
            false,
        ),
    };
    SnippetView {
        label: form::label(i),
        language: s.language.clone(),
        highlighted: s.language.eq_ignore_ascii_case("java"),
        rows: bounded_rows(rows),
        is_diff,
        context: s.context.clone(),
    }
}

/// Reads and stores the participant's answers to a unit they were handed: every question of
/// the design answered by its kind's rules (refused in words, naming the question, with
/// nothing stored), with what was shown and the time on the unit — the page's measure when it
/// is one (finite, positive, not longer than the unit was held), else the server's.
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
    let snippets = super::designs::snippets_by_id(db, study, &claim.shown).await?;
    let code = store::units::participant_code(db, annotator).await?;
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
    let field = |name: &str| {
        answer
            .fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let first = claim
        .shown
        .first()
        .and_then(|id| snippets.iter().find(|s| &s.id == id));
    // an attention unit: its expected answers, which the given ones are checked against
    let expect: std::collections::BTreeMap<String, Answer> = match &claim.attention {
        Some(json) => serde_json::from_str(json).map_err(|e| {
            ServiceError::Invalid(format!("a stored attention unit is unreadable: {e}"))
        })?,
        None => Default::default(),
    };
    let mut missed = false;
    let mut rows = Vec::with_capacity(design.questions.len());
    for q in &design.questions {
        let options = first.and_then(|s| s.options.get(&q.id)).map(Vec::as_slice);
        let given =
            form::form_answer(q, field, &claim.shown, options).map_err(ServiceError::Invalid)?;
        if expect
            .get(&q.id)
            .is_some_and(|e| !attention::agrees(e, &given))
        {
            missed = true;
        }
        let shown = form::shown_as(&q.kind, &claim.shown).map_err(ServiceError::Invalid)?;
        let response = Response {
            participant: code.clone(),
            question: q.id.clone(),
            shown,
            answer: given,
            seconds,
        };
        rows.push(NewResponse {
            participant: code.clone(),
            question: q.id.clone(),
            record: response.to_json_line(),
            seconds,
        });
    }
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
