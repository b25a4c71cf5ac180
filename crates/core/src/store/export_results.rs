//! The repair tools' results and the language models' cross-entropies in the layouts `import
//! npr` and `import ce` read (`npr_results.csv`, `ce_scores.csv`), so that a study's results
//! leave it and come back as they were (the published package's scripts read the same files).

use futures_util::TryStreamExt;
use sqlx::Row;

use super::export::{csv_line, Sink};
use super::Db;
use natstudy_vocab::ids::StudyId;

/// A status as `import npr` reads it.
fn status_word(status: i64) -> anyhow::Result<&'static str> {
    Ok(match status {
        0 => "wrong",
        1 => "plausible",
        2 => "correct",
        other => anyhow::bail!("a repair status of {other}"),
    })
}

/// `tool,target,status`, by tool and target; the number of rows. A tool's patches stay out
/// (the patch review's own exports carry its verdicts).
pub async fn npr(db: &Db, study: StudyId, out: &mut dyn Sink) -> anyhow::Result<u64> {
    out.write_all(&csv_line(["tool", "target", "status"])?)?;
    let mut rows = sqlx::query(
        "SELECT tool, target, status FROM npr_results WHERE study_id = $1 ORDER BY tool, target",
    )
    .bind(study)
    .fetch(&db.pool);
    let mut n = 0;
    while let Some(r) = rows.try_next().await? {
        out.pace().await?;
        let status = status_word(r.try_get("status")?)?;
        let (tool, target): (String, String) = (r.try_get("tool")?, r.try_get("target")?);
        out.write_all(&csv_line([tool.as_str(), target.as_str(), status])?)?;
        n += 1;
    }
    Ok(n)
}

/// `model,target,cross_entropy`, by model and target, each number in its shortest form that
/// reads back to the same `f64`; the number of rows.
pub async fn ce(db: &Db, study: StudyId, out: &mut dyn Sink) -> anyhow::Result<u64> {
    out.write_all(&csv_line(["model", "target", "cross_entropy"])?)?;
    let mut rows = sqlx::query(
        "SELECT model, target, cross_entropy FROM ce_scores WHERE study_id = $1 ORDER BY model, target",
    )
    .bind(study)
    .fetch(&db.pool);
    let mut n = 0;
    while let Some(r) = rows.try_next().await? {
        out.pace().await?;
        let (model, target): (String, String) = (r.try_get("model")?, r.try_get("target")?);
        let ce: f64 = r.try_get("cross_entropy")?;
        out.write_all(&csv_line([
            model.as_str(),
            target.as_str(),
            &ce.to_string(),
        ])?)?;
        n += 1;
    }
    Ok(n)
}
