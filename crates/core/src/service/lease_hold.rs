//! How long a participant may keep an item by keeping its page open: a lease is renewed by the
//! page's heartbeat, and by asking again, only up to the claim's longest hold. Once a study has
//! enough measured times on item, that hold follows them — twice the 99th percentile, never
//! shorter than the batch's lease nor longer than two hours — so that a page left open, or a
//! stranger's script that joins and beats without answering, lets go of the item about as soon
//! as a real participant would have answered. Until then the lease's own rule holds (three
//! leases, within half an hour and two hours).

use std::time::Duration;

use super::ServiceResult;
use crate::store::assign;
use crate::store::Db;
use natstudy_vocab::ids::StudyId;

/// Measured votes a study needs before its times set the hold.
pub const MIN_MEASURED: usize = 50;

/// The hold the study's measured times (seconds) call for, in ms: twice their 99th percentile;
/// `None` with fewer than [`MIN_MEASURED`] of them (the batches' leases then bound it).
pub fn hold_from_times(times: &[f64]) -> Option<i64> {
    let finite: Vec<f64> = times
        .iter()
        .copied()
        .filter(|t| t.is_finite() && *t >= 0.0)
        .collect();
    if finite.len() < MIN_MEASURED {
        return None;
    }
    let p99 = natstudy_engine::stats::percentile(&finite, 99.0).ok()?;
    // bounded before the cast: the store clamps it to two hours anyway
    Some((2000.0 * p99).clamp(0.0, 1e12) as i64)
}

/// Sets the study's longest hold from its votes' times; returns the hold asked for (ms).
pub async fn refresh(db: &Db, study: StudyId) -> ServiceResult<Option<i64>> {
    let times = assign::measured_times(db, study).await?;
    let hold = hold_from_times(&times);
    assign::set_study_hold(db, study, hold).await?;
    Ok(hold)
}

/// Keeps every study's hold up to date with its votes, every `every`, for as long as the server
/// runs (each instance alike: the update is the same whoever makes it).
pub async fn keep_fresh(db: Db, every: Duration) {
    loop {
        match assign::studies_with_batches(&db).await {
            Ok(studies) => {
                for study in studies {
                    if let Err(e) = refresh(&db, study).await {
                        tracing::warn!(error = %e, %study, "cannot set the study's longest hold");
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot list the studies' batches"),
        }
        tokio::time::sleep(every).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hold_is_twice_the_99th_percentile_once_there_are_enough_times() {
        let few: Vec<f64> = (0..MIN_MEASURED - 1).map(|i| i as f64).collect();
        assert_eq!(hold_from_times(&few), None);
        // 1 s to 100 s: the 99th percentile (linear, as numpy) is 99.01 s
        let times: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(hold_from_times(&times), Some(198_020));
        // what no one could have measured is not counted
        let mut odd = times.clone();
        odd.extend([f64::NAN, f64::INFINITY, -1.0]);
        assert_eq!(hold_from_times(&odd), Some(198_020));
        assert_eq!(hold_from_times(&[f64::MAX; 60]), Some(1_000_000_000_000));
    }

    #[test]
    fn a_study_hold_lies_between_the_lease_and_two_hours() {
        assert_eq!(assign::study_hold_ms(198_020, 60), 198_020);
        assert_eq!(assign::study_hold_ms(10_000, 1200), 1_200_000);
        assert_eq!(assign::study_hold_ms(i64::MAX, 60), 2 * 60 * 60 * 1000);
    }
}
