//! The live monitor of a study: how many items have how many ratings, Fleiss' kappa over the
//! complete items so far, each annotator's progress, median time and gold accuracy, the
//! batches and the settings. The store gives the facts; the figures are computed here.

use std::collections::HashMap;

use super::ServiceResult;
use crate::store::Db;
use crate::store::{self, monitor::VoteFact};
use natstudy_engine::{analysis, stats};
use natstudy_types::{AnnotatorRow, BatchRow, Monitor};
use natstudy_vocab::ids::{AnnotatorId, ItemId, StudyId};

/// The longest item id an attention item is looked up by (the page's field allows as many).
pub const MAX_ITEM_ID: usize = 1_000;

/// Marks an item as a gold (attention) item whose expected judgement is `expect`: `natural`,
/// `unnatural`, or `none` to clear it.
pub async fn set_gold(db: &Db, study: StudyId, item: &str, expect: &str) -> ServiceResult<()> {
    // a hand-made request is bounded as the page's field is (and nothing long is echoed)
    if item.len() > MAX_ITEM_ID {
        return Err(super::ServiceError::Invalid(format!(
            "an item id is at most {MAX_ITEM_ID} characters"
        )));
    }
    let value = match expect {
        "natural" => Some(false),
        "unnatural" => Some(true),
        "none" => None,
        other => {
            return Err(super::ServiceError::Invalid(format!(
                "expected natural, unnatural or none, not {other}"
            )))
        }
    };
    Ok(store::monitor::set_gold(db, study, item, value).await?)
}

pub async fn monitor(db: &Db, study: StudyId) -> ServiceResult<Monitor> {
    let settings = store::survey::study_settings(db, study).await?;
    let k = settings.ratings_per_item;
    let counts = store::assign::completed_per_item(db, study).await?;
    let votes = store::monitor::votes(db, study).await?;
    let annotators = store::monitor::annotators(db, study).await?;
    let batches = store::monitor::batches(db, study).await?;
    let (pilot_participants, pilot_votes) = store::pilot::summary(db, study).await?;
    let invites = store::monitor::invites(db, study)
        .await?
        .into_iter()
        .map(|i| natstudy_types::InviteRow {
            id: i.id,
            path: format!("/join/{}", i.token),
            batch: i.batch,
            cap: i.cap,
            used: i.used,
            closed: i.closed,
            full: i.full,
            pilot: i.pilot,
        })
        .collect();
    let figures = Figures::of(&votes, k);
    let mut items_with = vec![0i64; k.max(0) as usize + 1];
    for (_, n) in &counts {
        items_with[(*n).clamp(0, k) as usize] += 1;
    }
    let annotators = annotators
        .into_iter()
        .map(|a| {
            let (gold_seen, gold_correct) = figures.gold.get(&a.id).copied().unwrap_or((0, 0));
            AnnotatorRow {
                id: a.id,
                code: a.code,
                account: a.account,
                done: a.done,
                total: a.total,
                last_active_ms: a.last_active_ms,
                median_time: figures.median_time(a.id),
                gold_seen,
                gold_correct,
                finished: a.finished,
                imported: a.imported,
                leases: a.leases,
                external_id: a.external_id,
                speeder: speeder(figures.median_time(a.id), settings.crowd.speeder_seconds)
                    == Some(true),
                excluded: a.excluded,
            }
        })
        .collect();
    let batches = batches
        .into_iter()
        .map(|b| BatchRow {
            id: b.id,
            name: b.name,
            strategy: b.strategy.as_str().to_owned(),
            items: b.items,
            complete: b.complete,
            annotators: b.annotators,
            lease_minutes: (b.lease_secs + 59) / 60,
        })
        .collect();
    let units = match store::designs::design(db, study).await? {
        Some(_) => {
            let (units, complete, answered) = store::units::progress(db, study, k).await?;
            Some(natstudy_types::UnitsProgress {
                units,
                complete,
                answered,
            })
        }
        None => None,
    };
    Ok(Monitor {
        invites,
        k,
        items_with,
        annotators,
        batches,
        fleiss_kappa: figures.fleiss_kappa,
        complete_items: figures.complete_items,
        settings: super::studies::settings_form(&settings),
        pilot_participants,
        pilot_votes,
        units,
    })
}

/// Whether a participant of median time on item `median` (seconds) is a speeder under the
/// study's threshold (`None`: the study sets none, or they have no measured time).
pub fn speeder(median: Option<f64>, threshold: Option<i64>) -> Option<bool> {
    Some(median? < threshold? as f64)
}

/// The figures the monitor computes from the votes.
#[derive(Debug, Default)]
pub(super) struct Figures {
    times: HashMap<AnnotatorId, Vec<f64>>,
    /// (gold items seen, judged as expected) per annotator.
    pub(super) gold: HashMap<AnnotatorId, (i64, i64)>,
    fleiss_kappa: Option<f64>,
    complete_items: i64,
}

impl Figures {
    pub(super) fn of(votes: &[VoteFact], k: i64) -> Figures {
        let mut f = Figures::default();
        let mut per_item: HashMap<ItemId, (usize, usize)> = HashMap::new();
        for v in votes {
            let unnatural = analysis::judges_unnatural(v.cr, v.cc);
            if let Some(t) = v.time_secs {
                f.times.entry(v.annotator).or_default().push(t);
            }
            if let Some(g) = v.gold_unnatural {
                let e = f.gold.entry(v.annotator).or_default();
                e.0 += 1;
                e.1 += i64::from(g == unnatural);
            }
            // kappa stands on the votes that count, as the analysis' does
            if v.counted {
                let e = per_item.entry(v.item).or_default();
                e.0 += 1;
                e.1 += usize::from(unnatural);
            }
        }
        let table: Vec<Vec<f64>> = per_item
            .values()
            .filter(|(n, _)| *n as i64 == k)
            .map(|(n, u)| vec![(n - u) as f64, *u as f64])
            .collect();
        f.complete_items = table.len() as i64;
        f.fleiss_kappa = if table.len() >= 2 {
            stats::fleiss_kappa(&table).ok().filter(|x| x.is_finite())
        } else {
            None
        };
        f
    }

    pub(super) fn median_time(&self, a: AnnotatorId) -> Option<f64> {
        let mut v = self.times.get(&a)?.clone();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        Some(if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vote(a: i64, item: i64, cr: u8, cc: u8, t: f64, gold: Option<bool>) -> VoteFact {
        VoteFact {
            annotator: AnnotatorId(a),
            item: ItemId(item),
            cr,
            cc,
            time_secs: Some(t),
            gold_unnatural: gold,
            counted: true,
        }
    }

    /// A speeder has a median under the threshold; without a threshold or a measured time,
    /// nobody is judged.
    #[test]
    fn a_speeder_is_under_the_threshold() {
        assert_eq!(speeder(Some(2.9), Some(3)), Some(true));
        assert_eq!(speeder(Some(3.0), Some(3)), Some(false));
        assert_eq!(speeder(None, Some(3)), None);
        assert_eq!(speeder(Some(1.0), None), None);
    }

    #[test]
    fn figures_count_complete_items_gold_and_median_times() {
        let votes = [
            vote(1, 10, 4, 1, 3.0, Some(true)),
            vote(2, 10, 1, 1, 5.0, Some(true)),
            vote(1, 11, 1, 1, 9.0, None),
            vote(2, 11, 1, 2, 1.0, None),
            vote(1, 12, 1, 1, 4.0, None),
        ];
        let f = Figures::of(&votes, 2);
        assert_eq!(f.complete_items, 2);
        assert_eq!(f.gold[&AnnotatorId(1)], (1, 1));
        assert_eq!(f.gold[&AnnotatorId(2)], (1, 0));
        assert_eq!(f.median_time(AnnotatorId(1)), Some(4.0));
        assert_eq!(f.median_time(AnnotatorId(2)), Some(3.0));
        assert_eq!(f.median_time(AnnotatorId(3)), None);
        // two complete items: one split, one agreed natural
        let expected = stats::fleiss_kappa(&[vec![1.0, 1.0], vec![2.0, 0.0]]).ok();
        assert_eq!(f.fleiss_kappa, expected.filter(|x| x.is_finite()));
    }
}
