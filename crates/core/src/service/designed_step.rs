//! A designed study's step once the guideline is read: a unit the participant asked to revise,
//! else their unit (held, or the next for them), else — nothing left for them now — the end
//! of their work with the units they answered (to revise before the finish), waiting while
//! units held by others may still come.

use natstudy_engine::design::Design;
use natstudy_types::AnnotateStep;

use super::ServiceError;
use crate::store::{self, Db, StoreError};
use natstudy_vocab::ids::{AnnotatorId, StudyId};

/// The step; `revise`: the participant's claim on a unit they answered, shown again with its
/// answers (ignored when it is not theirs to revise).
pub(super) async fn step(
    db: &Db,
    settings: &store::survey::StudySettings,
    (study, annotator): (StudyId, AnnotatorId),
    design: &Design,
    done: i64,
    waiting_since: Option<i64>,
    revise: Option<i64>,
) -> Result<AnnotateStep, StoreError> {
    let invalid = |e: ServiceError| StoreError::Invalid(e.to_string());
    if let Some(claim) = revise {
        if let Some(view) = super::revising::revise_view(db, study, annotator, design, claim)
            .await
            .map_err(invalid)?
        {
            return Ok(AnnotateStep::Answer(Box::new(view)));
        }
    }
    let now = crate::db::now_ms();
    let k = settings.ratings_per_item;
    let quota = settings.crowd.items_per_participant;
    let claim = super::answering::claim_unit(db, study, annotator, design, k, quota, now)
        .await
        .map_err(invalid)?;
    if let Some(claim) = claim {
        if waiting_since.is_some() {
            store::survey::set_waiting(db, study, annotator, None).await?;
        }
        let snippets = super::designs::snippets_by_id(db, study, &claim.shown)
            .await
            .map_err(invalid)?;
        let view = super::unit_page::unit_view(design, &snippets, &claim).map_err(invalid)?;
        return Ok(AnnotateStep::Answer(Box::new(view)));
    }
    let waiting = super::waiting::waiting(
        db,
        settings,
        (study, annotator),
        done,
        waiting_since,
        now,
        Some(k),
    )
    .await?;
    let units = super::revising::answered_units(db, study, annotator, design)
        .await
        .map_err(invalid)?;
    Ok(AnnotateStep::Review {
        rated: Vec::new(),
        page: 1,
        pages: 1,
        before: 0,
        total: u64::try_from(done).unwrap_or(0),
        waiting,
        required: quota.and_then(|n| u64::try_from(n).ok()),
        hold_lapsed: false,
        designed: true,
        units,
    })
}
