//! The study monitor: rating counts, annotators' progress and quality, batches, settings.

use std::collections::HashMap;

use sqlx::Row;

use super::{audit, Db, StoreError, StoreResult};
use app::model::{AnnotatorRow, BatchRow, Monitor, StudySettingsForm};

pub async fn settings(db: &Db, study: i64) -> StoreResult<StudySettingsForm> {
    let s = super::participation::study_settings(db, study).await?;
    Ok(StudySettingsForm {
        ratings_per_item: super::assign::ratings_per_item(db, study).await?,
        guideline: s.guideline,
        blind_operator: s.blind_operator,
        blind_bug_id: s.blind_bug_id,
        randomise_sides: s.randomise_sides,
        completion_code: s.completion_code.unwrap_or_default(),
        consent_text: s.consent_text,
        screener_json: s.screener_json,
    })
}

pub async fn update_settings(
    db: &Db,
    study: i64,
    actor: Option<i64>,
    f: &StudySettingsForm,
) -> StoreResult<()> {
    if !(1..=50).contains(&f.ratings_per_item) {
        return Err(StoreError::Invalid("ratings per item must be 1–50".into()));
    }
    let questions: Vec<app::model::ScreenerQuestion> = serde_json::from_str(&f.screener_json)
        .map_err(|e| {
            StoreError::Invalid(format!(
                "screener: not a list of {{name, label, options}}: {e}"
            ))
        })?;
    if questions.iter().any(|q| {
        q.name.is_empty()
            || !q
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
    }) {
        return Err(StoreError::Invalid(
            "screener: each name must be letters, digits or _".into(),
        ));
    }
    let mut tx = db.begin_write(study).await?;
    let code = Some(f.completion_code.trim()).filter(|c| !c.is_empty());
    let n = sqlx::query(
        "UPDATE studies SET ratings_per_item = $1, guideline = $2, blind_operator = $3, blind_bug_id = $4, randomise_sides = $5, \
         completion_code = $6, consent_text = $7, screener = $8 WHERE id = $9",
    )
    .bind(f.ratings_per_item)
    .bind(&f.guideline)
    .bind(i64::from(f.blind_operator))
    .bind(i64::from(f.blind_bug_id))
    .bind(i64::from(f.randomise_sides))
    .bind(code)
    .bind(&f.consent_text)
    .bind(serde_json::to_string(&questions).unwrap_or_else(|_| "[]".into()))
    .bind(study)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if n == 0 {
        return Err(StoreError::NotFound(format!("study {study}")));
    }
    audit::record(
        &mut *tx,
        actor,
        Some(study),
        "study.settings",
        &format!(
            "k={}, blind operator={}, blind bug={}, randomise sides={}",
            f.ratings_per_item, f.blind_operator, f.blind_bug_id, f.randomise_sides
        ),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

fn median(mut v: Vec<f64>) -> Option<f64> {
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

pub async fn monitor(db: &Db, study: i64) -> StoreResult<Monitor> {
    let k = super::assign::ratings_per_item(db, study).await?;
    let counts = super::assign::completed_per_item(db, study).await?;
    let mut items_with = vec![0i64; k.max(0) as usize + 1];
    for (_, n) in &counts {
        let slot = (*n).clamp(0, k) as usize;
        items_with[slot] += 1;
    }
    // every vote with its annotator, judgement and gold expectation
    let votes = sqlx::query(
        "SELECT v.annotator_id, v.item_id, v.cr, v.cc, v.time_secs, i.gold_unnatural FROM votes v \
         JOIN items i ON i.id = v.item_id WHERE i.study_id = $1",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    let mut times: HashMap<i64, Vec<f64>> = HashMap::new();
    let mut gold: HashMap<i64, (i64, i64)> = HashMap::new();
    let mut per_item: HashMap<i64, (usize, usize)> = HashMap::new();
    for r in &votes {
        let a: i64 = r.try_get("annotator_id")?;
        let unnatural = crate::engine::analysis::judges_unnatural(
            r.try_get::<i64, _>("cr")? as u8,
            r.try_get::<i64, _>("cc")? as u8,
        );
        if let Some(t) = r.try_get::<Option<f64>, _>("time_secs")? {
            times.entry(a).or_default().push(t);
        }
        if let Some(g) = r.try_get::<Option<i64>, _>("gold_unnatural")? {
            let e = gold.entry(a).or_default();
            e.0 += 1;
            e.1 += i64::from((g != 0) == unnatural);
        }
        let e = per_item.entry(r.try_get("item_id")?).or_default();
        e.0 += 1;
        e.1 += usize::from(unnatural);
    }
    let table: Vec<Vec<f64>> = per_item
        .values()
        .filter(|(n, _)| *n as i64 == k)
        .map(|(n, u)| vec![(n - u) as f64, *u as f64])
        .collect();
    let fleiss_kappa = if table.len() >= 2 {
        crate::engine::stats::fleiss_kappa(&table)
            .ok()
            .filter(|x| x.is_finite())
    } else {
        None
    };
    let rows = sqlx::query(
        "SELECT a.id, a.code, u.username, a.last_active, a.finished_at FROM annotators a LEFT JOIN users u ON u.id = a.user_id \
         WHERE a.study_id = $1 ORDER BY a.id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?;
    let mut annotators = Vec::new();
    for r in rows {
        let id: i64 = r.try_get("id")?;
        let (done, total) = super::assign::progress(db, study, id).await?;
        let (gold_seen, gold_correct) = gold.get(&id).copied().unwrap_or((0, 0));
        annotators.push(AnnotatorRow {
            id,
            code: r.try_get("code")?,
            account: r.try_get("username")?,
            done,
            total,
            last_active_ms: r.try_get("last_active")?,
            median_time: median(times.remove(&id).unwrap_or_default()),
            gold_seen,
            gold_correct,
            finished: r.try_get::<Option<i64>, _>("finished_at")?.is_some(),
        });
    }
    let batches = sqlx::query(
        "SELECT b.id, b.name, b.strategy, (SELECT COUNT(*) FROM batch_items bi WHERE bi.batch_id = b.id) AS items, \
         (SELECT COUNT(*) FROM batch_annotators ba WHERE ba.batch_id = b.id) AS annotators FROM batches b WHERE b.study_id = $1 ORDER BY b.id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(|r| {
        Ok(BatchRow {
            id: r.try_get("id")?,
            name: r.try_get("name")?,
            strategy: r.try_get("strategy")?,
            items: r.try_get("items")?,
            annotators: r.try_get("annotators")?,
        })
    })
    .collect::<Result<_, sqlx::Error>>()?;
    Ok(Monitor {
        k,
        items_with,
        annotators,
        batches,
        fleiss_kappa,
        complete_items: table.len() as i64,
        settings: settings(db, study).await?,
    })
}

/// Marks an item as a gold/attention item with the expected judgement (None clears it).
pub async fn set_gold(
    db: &Db,
    study: i64,
    item_key: &str,
    unnatural: Option<bool>,
) -> StoreResult<()> {
    let n =
        sqlx::query("UPDATE items SET gold_unnatural = $1 WHERE study_id = $2 AND item_key = $3")
            .bind(unnatural.map(i64::from))
            .bind(study)
            .bind(item_key)
            .execute(&db.pool)
            .await?
            .rows_affected();
    if n == 0 {
        return Err(StoreError::NotFound(format!("item {item_key}")));
    }
    Ok(())
}
