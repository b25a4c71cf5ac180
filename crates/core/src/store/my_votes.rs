//! What a participant has rated: their vote on an item, the review page of their votes (by
//! the annotator's index), and which side their assignment shows the original on.

use sqlx::Row;

use super::{Db, StoreResult};
use natstudy_vocab::ids::{AnnotatorId, ItemId, StudyId};

/// The annotator's current vote on an item (CR, CC, comment), if any.
pub async fn my_vote(
    db: &Db,
    annotator: AnnotatorId,
    item: ItemId,
) -> StoreResult<Option<(u8, u8, String)>> {
    let r =
        sqlx::query("SELECT cr, cc, comment FROM votes WHERE annotator_id = $1 AND item_id = $2")
            .bind(annotator)
            .bind(item)
            .fetch_optional(&db.pool)
            .await?;
    Ok(r.map(|r| -> Result<_, sqlx::Error> {
        Ok((
            r.try_get::<i64, _>(0)? as u8,
            r.try_get::<i64, _>(1)? as u8,
            r.try_get(2)?,
        ))
    })
    .transpose()?)
}

/// How many of an annotator's rated items the review lists at once: the list is paged, so a
/// participant of a 20,000-item pool study is not sent 10,000 rows in one page.
pub const REVIEW_PAGE: i64 = 100;

/// A page of the annotator's votes in a study, in rating order: a range of the index
/// `votes_annotator` (migration 0014), each vote's item then found by its key — not a scan of
/// every vote, nor of the study's items. The item is a subquery of the vote so that the votes
/// come first whatever the statistics say: as a join, PostgreSQL before its first `ANALYZE`
/// guessed a study holds a few items and went through every one of them. An annotator is of one
/// study: that is checked once (`annotators`), not per vote. `$1` annotator, `$2` study, `$3`
/// rows at most, `$4` rows skipped (the offset runs along the same range of the index: bounded
/// by the annotator's own votes).
pub const MY_VOTES_SQL: &str =
    "SELECT v.item_id, (SELECT i.summary FROM items i WHERE i.id = v.item_id), v.cr, v.cc \
     FROM votes v WHERE v.annotator_id = $1 \
     AND EXISTS (SELECT 1 FROM annotators an WHERE an.id = $1 AND an.study_id = $2) \
     ORDER BY v.id LIMIT $3 OFFSET $4";

/// How many votes the annotator has in the study: a count of the same range. `$1` annotator,
/// `$2` study.
pub const MY_VOTE_COUNT_SQL: &str = "SELECT COUNT(*) FROM votes v WHERE v.annotator_id = $1 \
     AND EXISTS (SELECT 1 FROM annotators an WHERE an.id = $1 AND an.study_id = $2)";

/// A page of the review: the annotator's rated items on it — (item, summary, CR, CC), in
/// rating order —, the page shown (counted from 0) and how many items they rated in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MyVotes {
    pub rows: Vec<(ItemId, String, u8, u8)>,
    pub page: i64,
    pub total: i64,
}

impl MyVotes {
    /// Pages in all (at least 1: an empty list is one page).
    pub fn pages(&self) -> i64 {
        (self.total - 1).max(0) / REVIEW_PAGE + 1
    }

    /// The rated items on the pages before this one.
    pub fn before(&self) -> i64 {
        self.page * REVIEW_PAGE
    }
}

/// Page `page` (from 0) of the annotator's rated items of a study, [`REVIEW_PAGE`] to a page;
/// a page past the last is the last.
pub async fn my_votes(
    db: &Db,
    study: StudyId,
    annotator: AnnotatorId,
    page: i64,
) -> StoreResult<MyVotes> {
    let total: i64 = sqlx::query_scalar(MY_VOTE_COUNT_SQL)
        .bind(annotator)
        .bind(study)
        .fetch_one(&db.pool)
        .await?;
    let mut mine = MyVotes {
        rows: Vec::new(),
        page: 0,
        total,
    };
    mine.page = page.clamp(0, mine.pages() - 1);
    let rows = sqlx::query(MY_VOTES_SQL)
        .bind(annotator)
        .bind(study)
        .bind(REVIEW_PAGE)
        .bind(mine.before())
        .fetch_all(&db.pool)
        .await?;
    mine.rows = rows
        .iter()
        .map(|r| {
            Ok((
                r.try_get(0)?,
                r.try_get(1)?,
                r.try_get::<i64, _>(2)? as u8,
                r.try_get::<i64, _>(3)? as u8,
            ))
        })
        .collect::<Result<_, sqlx::Error>>()?;
    Ok(mine)
}

/// Whether the annotator's side assignment shows the original on the left.
pub async fn original_left(db: &Db, annotator: AnnotatorId, item: ItemId) -> StoreResult<bool> {
    let r = sqlx::query(
        "SELECT original_left FROM assignments WHERE annotator_id = $1 AND item_id = $2",
    )
    .bind(annotator)
    .bind(item)
    .fetch_optional(&db.pool)
    .await?;
    Ok(r.map(|r| r.try_get::<i64, _>(0))
        .transpose()?
        .is_none_or(|v| v != 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SQLite's plan for an annotator's votes: a range of `votes_annotator`, each item by its
    /// key — no scan of the votes nor of the items.
    #[tokio::test]
    async fn my_votes_come_from_the_annotator_index_in_order() {
        let (db, _dir) = crate::store::temp_sqlite().await;
        let plan: Vec<String> = sqlx::query(&format!("EXPLAIN QUERY PLAN {MY_VOTES_SQL}"))
            .bind(1i64)
            .bind(1i64)
            .bind(REVIEW_PAGE)
            .bind(0i64)
            .fetch_all(&db.pool)
            .await
            .expect("plan")
            .iter()
            .map(|r| r.try_get::<String, _>("detail").expect("detail"))
            .collect();
        let all = plan.join("\n");
        assert!(
            plan.iter()
                .any(|d| d.starts_with("SEARCH v USING INDEX votes_annotator (annotator_id=?)")),
            "{all}"
        );
        assert!(
            plan.iter()
                .any(|d| d.starts_with("SEARCH i USING INTEGER PRIMARY KEY (rowid=?)")),
            "{all}"
        );
        assert!(
            !all.contains("SCAN v") && !all.contains("SCAN i") && !all.contains("TEMP B-TREE"),
            "{all}"
        );
    }
}
