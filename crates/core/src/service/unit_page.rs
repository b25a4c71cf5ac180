//! A unit as the participant's page shows it (its snippets, each question asked as its kind
//! asks it) and the page's form read back into the responses to store, by each question's
//! kind — for a first answer ([`super::answering`]) and a revision ([`super::revising`]).

use natstudy_engine::design::kinds::form;
use natstudy_engine::design::{attention, Answer};
use natstudy_engine::design::{Design, Kind, Response, Snippet};
use natstudy_types::{AnswerForm, Ask, DiffLine, QuestionView, Seg, SnippetView, UnitView};

use super::{ServiceError, ServiceResult};
use crate::present::wire::{bounded_rows, wire_rows};
use crate::store::units::{Claim, NewResponse};
use crate::store::{self, Db};
use natstudy_vocab::ids::{AnnotatorId, StudyId};

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
        given: Vec::new(),
        revising: false,
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

/// The form's answers to the unit of `claim`, read by each question's kind into the responses
/// to store (timed `seconds`), and whether an attention unit's expected answer was missed.
pub(super) async fn read_answers(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    design: &Design,
    claim: &Claim,
    answer: &AnswerForm,
    seconds: Option<f64>,
) -> ServiceResult<(Vec<NewResponse>, bool)> {
    let snippets = super::designs::snippets_by_id(db, study, &claim.shown).await?;
    let code = store::units::participant_code(db, annotator).await?;
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
    Ok((rows, missed))
}
