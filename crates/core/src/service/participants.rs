//! The participants table (`export --what participants`, the study page's
//! `participants.csv`): one row per participant with their crowd identity, how their work
//! ended and the code it earned, their time on item and gold results, and their screener
//! answers — the table a crowd platform's approval list is a filter of.

use super::monitor::Figures;
use super::ServiceResult;
use crate::store::export::{csv_line, Sink};
use crate::store::{self, Db, Outcome};
use natstudy_vocab::ids::StudyId;

/// The columns before the screener's, in order.
pub const COLUMNS: [&str; 17] = [
    "participant",
    "platform",
    "external_id",
    "external_study",
    "external_session",
    "joined_at",
    "finished_at",
    "items_rated",
    "items_required",
    "outcome",
    "completion_code",
    "median_time_secs",
    "gold_passed",
    "gold_failed",
    "speeder",
    "excluded",
    "exclusion_reason",
];

/// A time in seconds to the millisecond the browser measures it in (`3.514`, not the
/// `3.5140000000000002` a median of two such times may be), with no trailing zeros.
pub fn seconds(t: f64) -> String {
    let s = format!("{t:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_owned()
    }
}

/// Writes the table: the [`COLUMNS`] (times in unix ms, as the vote table's), then one column
/// per screener question (`screener_NAME`), the study's questions first and any other answer
/// a participant gave after them. `outcome` is `in_progress` until they finish
/// (`timed_out` once they have been away longer than the study's longest hold, their items
/// given back);
/// `completion_code` the code their outcome earned; `speeder` whether their median time on
/// item is under the study's threshold (empty: no threshold, or no measured time);
/// `excluded` whether their votes are left out of the analysis, and `exclusion_reason` why
/// (a staff member's words, or the attention rule's). The study's participants, or (`pilot`)
/// only its pilot participants, who are in no other export. The number of rows.
pub async fn write(db: &Db, study: StudyId, out: &mut dyn Sink, pilot: bool) -> ServiceResult<u64> {
    let settings = store::survey::study_settings(db, study).await?;
    let rows = store::monitor::participants(db, study, pilot).await?;
    let lease = store::monitor::longest_lease_ms(db, study).await?;
    let now = crate::db::now_ms();
    let votes = store::monitor::votes(db, study).await?;
    let figures = Figures::of(&votes, settings.ratings_per_item);
    // the screener's questions: the study's, then any name an answer has that they lack
    let mut names: Vec<String> = super::screener::of(&settings.screener_json)
        .into_iter()
        .map(|q| q.name)
        .collect();
    let answers: Vec<serde_json::Map<String, serde_json::Value>> = rows
        .iter()
        .map(|r| serde_json::from_str(&r.screener_json).unwrap_or_default())
        .collect();
    for a in &answers {
        for name in a.keys() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    let fail = |e: anyhow::Error| super::ServiceError::Internal(e);
    let header: Vec<String> = COLUMNS
        .iter()
        .map(|c| c.to_string())
        .chain(names.iter().map(|n| format!("screener_{n}")))
        .collect();
    out.write_all(&csv_line(&header).map_err(fail)?)
        .map_err(|e| fail(e.into()))?;
    let crowd = &settings.crowd;
    let mut n = 0;
    for (r, answers) in rows.iter().zip(&answers) {
        out.pace().await.map_err(|e| fail(e.into()))?;
        let (outcome, code) = match (r.finished_at, r.outcome) {
            // gone longer than their items are held: Prolific's "timed-out"
            (None, _) if now - r.last_active.unwrap_or(r.joined_at) > lease => ("timed_out", None),
            (None, _) => ("in_progress", None),
            (Some(_), Some(Outcome::Completed)) => {
                ("completed", settings.completion_code.as_deref())
            }
            (Some(_), Some(Outcome::Partial)) => ("partial", crowd.partial_code.as_deref()),
            (Some(_), Some(Outcome::ScreenedOut)) => {
                ("screened_out", crowd.screenout_code.as_deref())
            }
            (Some(_), Some(Outcome::Returned) | None) => ("returned", None),
        };
        let (gold_seen, gold_passed) = figures.gold.get(&r.id).copied().unwrap_or((0, 0));
        let opt = |v: &Option<String>| v.clone().unwrap_or_default();
        let mut record: Vec<String> = vec![
            r.code.clone(),
            r.platform
                .map(|p| p.as_str().to_owned())
                .unwrap_or_default(),
            opt(&r.external_pid),
            opt(&r.external_study),
            opt(&r.external_session),
            r.joined_at.to_string(),
            r.finished_at.map(|t| t.to_string()).unwrap_or_default(),
            r.rated.to_string(),
            crowd
                .items_per_participant
                .map(|n| n.to_string())
                .unwrap_or_default(),
            outcome.to_owned(),
            code.unwrap_or_default().to_owned(),
            figures.median_time(r.id).map(seconds).unwrap_or_default(),
            gold_passed.to_string(),
            (gold_seen - gold_passed).to_string(),
            super::monitor::speeder(figures.median_time(r.id), crowd.speeder_seconds)
                .map(|s| s.to_string())
                .unwrap_or_default(),
            r.excluded.is_some().to_string(),
            r.excluded.clone().unwrap_or_default(),
        ];
        record.extend(names.iter().map(|name| match answers.get(name) {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        }));
        out.write_all(&csv_line(&record).map_err(fail)?)
            .map_err(|e| fail(e.into()))?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    #[test]
    fn seconds_are_written_to_the_millisecond() {
        assert_eq!(super::seconds(3.514_000_000_000_000_2), "3.514");
        assert_eq!(super::seconds(12.0), "12");
        assert_eq!(super::seconds(0.0006), "0.001");
        assert_eq!(super::seconds(7.25), "7.25");
    }
}
