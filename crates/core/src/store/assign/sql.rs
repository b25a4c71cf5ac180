//! The assignment queries' shared SQL fragments, as macros so that each statement is one
//! `concat!`ed constant: room under k, a candidate's checks, positions in an annotator's order,
//! how long a lease may be held and renewed, whose work a move takes, the queue's front.

/// The queue's one rule, as SQL: item `$item` has room when its ratings (online or imported)
/// and its live claims — planned (`$assigned`) or leased (`$leased`) until after `$now` —
/// number fewer than k (`$k`), of those that count (`counted`: not a pilot's, not an excluded
/// participant's, whose ratings would not count either). The candidates, the claim and the queue's front all ask it.
macro_rules! has_room {
    ($item:literal, $assigned:literal, $leased:literal, $now:literal, $k:literal) => {
        concat!(
            "(SELECT COUNT(*) FROM votes v WHERE v.item_id = ",
            $item,
            " AND v.counted = 1) + (SELECT COUNT(*) FROM assignments c WHERE c.item_id = ",
            $item,
            " AND c.status IN (",
            $assigned,
            ", ",
            $leased,
            ") AND (c.status = ",
            $assigned,
            " OR c.lease_expires_at > ",
            $now,
            ") AND (SELECT ca.counted FROM annotators ca WHERE ca.id = c.annotator_id) = 1) < ",
            $k
        )
    };
}

/// The checks of a candidate `bi` (see [`CANDIDATES_SQL`]): it has room ([`has_room!`]), and
/// the annotator (`$annotator`) has no claim on it but a released one (`$released`) and no
/// vote. Room first: the items a claim steps over are mostly those others' claims filled (in
/// a start-up burst, every claim of a group steps over the items the group's earlier claims
/// filled), and for them the first check is the only one asked.
macro_rules! candidate_checks {
    ($annotator:literal, $released:literal, $assigned:literal, $leased:literal, $now:literal, $k:literal) => {
        concat!(
            has_room!("bi.item_id", $assigned, $leased, $now, $k),
            " AND (SELECT COUNT(*) FROM assignments m WHERE m.item_id = bi.item_id AND m.annotator_id = ",
            $annotator,
            " AND m.status <> ",
            $released,
            ") = 0 AND (SELECT COUNT(*) FROM votes mv WHERE mv.item_id = bi.item_id AND mv.annotator_id = ",
            $annotator,
            ") = 0"
        )
    };
}

/// The place after the last of annotator `$annotator`'s assignments in their order, from the
/// end of each status's range of the annotator's index (`assignments_annotator_order
/// (annotator_id, status, position, id)`; on SQLite `assignments_annotator`, which ends in the
/// rowid): four lookups, one per status (`$assigned`, `$leased`, `$done`, `$released`:
/// every status there is, by the table's `CHECK`), each the last entry of a range read
/// backwards — `ORDER BY … LIMIT 1`, which no statistics turn into an aggregate over the
/// whole range, as PostgreSQL does with `MAX` on a table it believes small. `MAX(position)` over the
/// annotator alone went through every assignment they ever had — status is the index's second
/// column — so each claim cost more than the one before: in a pool of 10 annotators who each
/// rate half of 20,000 items, 10,000 entries a claim by the end.
macro_rules! next_position {
    ($annotator:literal, $assigned:literal, $leased:literal, $done:literal, $released:literal) => {
        concat!(
            "(SELECT COALESCE(MAX(p), -1) + 1 FROM (",
            last_position!($annotator, $assigned),
            " AS p UNION ALL ",
            last_position!($annotator, $leased),
            " UNION ALL ",
            last_position!($annotator, $done),
            " UNION ALL ",
            last_position!($annotator, $released),
            ") AS ends)"
        )
    };
}

/// The last position among annotator `$annotator`'s assignments of status `$status` (NULL:
/// none), for [`next_position!`]: the end of one range of the annotator's index, read backwards.
macro_rules! last_position {
    ($annotator:literal, $status:literal) => {
        concat!(
            "SELECT (SELECT position FROM assignments WHERE annotator_id = ",
            $annotator,
            " AND status = ",
            $status,
            " ORDER BY position DESC LIMIT 1)"
        )
    };
}

/// [`max_hold_ms`] in SQL (the bounds are the constants').
macro_rules! max_hold {
    ($lease:literal) => {
        concat!(
            "(CASE WHEN 3000 * ",
            $lease,
            " > 7200000 THEN 7200000 WHEN 3000 * ",
            $lease,
            " < 1800000 THEN 1800000 ELSE 3000 * ",
            $lease,
            " END)"
        )
    };
}

/// A claim's longest hold in SQL: its batch's `hold_ms` (`$hold`, from the study's time on
/// item) where set, else [`max_hold!`] of its lease.
macro_rules! longest_hold {
    ($hold:literal, $lease:literal) => {
        concat!("COALESCE(", $hold, ", ", max_hold!($lease), ")")
    };
}

/// A lease renewed at `$now`: its length from now, but never past its claim (`$claimed`) plus
/// its longest hold ([`longest_hold!`] of `$hold` and `$lease`).
macro_rules! renewed_until {
    ($now:literal, $lease:literal, $claimed:literal, $hold:literal) => {
        concat!(
            "(CASE WHEN ",
            $now,
            " + 1000 * ",
            $lease,
            " < ",
            $claimed,
            " + ",
            longest_hold!($hold, $lease),
            " THEN ",
            $now,
            " + 1000 * ",
            $lease,
            " ELSE ",
            $claimed,
            " + ",
            longest_hold!($hold, $lease),
            " END)"
        )
    };
}

/// Where annotator `$annotator`'s claims in batch `$batch` begin to look (see [`own_to!`]):
/// the stored `annotators.own_from` when it is of that batch (`own_batch`), else 0 (the
/// beginning).
macro_rules! own_from {
    ($batch:literal, $annotator:literal) => {
        concat!(
            "COALESCE((SELECT x.own_from FROM annotators x WHERE x.id = ",
            $annotator,
            " AND x.own_batch = ",
            $batch,
            "), 0)"
        )
    };
}

/// The rank where annotator `$annotator`'s claims in batch `$batch` may begin to look, found
/// from the stored one (`$from`, NULL: the beginning), as column `own_to`: the first item from
/// there without k ratings that the annotator holds no claim on but a released one (`$released`)
/// — every item before it without k ratings is theirs, so none of them can be their next. The
/// largest rank there is when every item from there is theirs. Queue ranks are not negative.
/// The items read are those the annotator took since the stored rank: it moves on with their
/// claims ([`Shared::keep_own_from`]), so an annotator ahead of everyone else — whose rated
/// items still have room for others — does not step over all of them at every claim.
macro_rules! own_to {
    ($batch:literal, $from:literal, $annotator:literal, $released:literal) => {
        concat!(
            "COALESCE((SELECT p.queue_rank FROM batch_items p WHERE p.batch_id = ",
            $batch,
            " AND p.rated_full = 0 AND p.queue_rank >= COALESCE(",
            $from,
            ", 0) AND (SELECT COUNT(*) FROM assignments m WHERE m.item_id = p.item_id AND m.annotator_id = ",
            $annotator,
            " AND m.status <> ",
            $released,
            ") = 0 ORDER BY p.queue_rank LIMIT 1), 9223372036854775807) AS own_to"
        )
    };
}

/// The annotator $1's open claim in study $2 at time $3 — a live lease ($5) first, else the
/// first planned assignment ($4) — as a row of kind 0 (at most one, with its item's ratings
/// `rated` and the annotator's own `mine`), then the annotator's batches in the study as rows
/// of kind 1, in batch order, each with its `strategy`, the bug of the item the annotator
/// rated ($6) last (`last_bug`, for avoid-same-bug) and where the annotator's claims in it
/// begin to look (`own_from` as stored, `own_to` as found now: [`own_to!`]), then — only when
/// there is no open claim — the first candidates ([`CANDIDATES_SQL`]) of batch $7, if it is
/// one of the annotator's, from rank $8 on — or from the annotator's own rank in it
/// ([`own_from!`]), when that is later — (k $9, released $10, at most $11) as rows of kind 2
/// (`item_id`, `queue_rank`, `bug_id`):
/// the batch whose queue front the group already found (`Shared::front_hint`), so the common
/// claim asks once where it asked twice. Columns a kind does not use are NULL. `$candidates`
/// is the candidates' filter: with or without the item lock of PostgreSQL.
macro_rules! open_or_candidates {
    ($candidates:expr) => {
        concat!(
            "WITH o AS (SELECT a.id, a.item_id, a.batch_id, a.original_left, a.lease_expires_at, a.status, b.lease_secs, \
               (SELECT COUNT(*) FROM votes v WHERE v.item_id = a.item_id AND v.counted = 1) AS rated, \
               (SELECT COUNT(*) FROM votes mv WHERE mv.item_id = a.item_id AND mv.annotator_id = a.annotator_id) AS mine \
               FROM assignments a JOIN batches b ON b.id = a.batch_id WHERE a.annotator_id = $1 AND b.study_id = $2 \
               AND a.status IN ($4, $5) AND (a.status = $4 OR a.lease_expires_at > $3) \
               ORDER BY CASE WHEN a.status = $5 THEN 0 ELSE 1 END, a.position, a.id LIMIT 1) \
             SELECT 0 AS kind, o.id, o.item_id, o.batch_id, o.original_left, \
               o.lease_expires_at, o.status, o.lease_secs, o.rated, o.mine, \
               NULL AS seed, NULL AS avoid_same_bug, NULL AS last_bug, \
               CAST(NULL AS BIGINT) AS queue_rank, CAST(NULL AS BIGINT) AS bug_id, CAST(NULL AS TEXT) AS strategy, \
               CAST(NULL AS BIGINT) AS own_from, CAST(NULL AS BIGINT) AS own_to FROM o \
             UNION ALL \
             SELECT 1, bt.id, NULL, NULL, NULL, NULL, NULL, bt.lease_secs, NULL, NULL, bt.seed, bt.avoid_same_bug, \
               (SELECT i.bug_id FROM items i WHERE i.id = (SELECT a.item_id FROM assignments a \
                WHERE a.annotator_id = $1 AND a.status = $6 ORDER BY a.position DESC, a.id DESC LIMIT 1)), NULL, NULL, bt.strategy, \
               CASE WHEN an.own_batch = bt.id THEN an.own_from END AS own_from, ",
            own_to!(
                "bt.id",
                "CASE WHEN an.own_batch = bt.id THEN an.own_from END",
                "$1",
                "$10"
            ),
            " FROM batch_annotators ba JOIN batches bt ON bt.id = ba.batch_id \
             JOIN annotators an ON an.id = ba.annotator_id \
             WHERE ba.annotator_id = $1 AND bt.study_id = $2 \
             UNION ALL \
             SELECT * FROM (SELECT 2 AS kind, CAST(NULL AS BIGINT) AS id, bi.item_id, CAST(NULL AS BIGINT) AS batch_id, \
               CAST(NULL AS BIGINT) AS original_left, CAST(NULL AS BIGINT) AS lease_expires_at, \
               CAST(NULL AS TEXT) AS status, CAST(NULL AS BIGINT) AS lease_secs, CAST(NULL AS BIGINT) AS rated, \
               CAST(NULL AS BIGINT) AS mine, CAST(NULL AS BIGINT) AS seed, CAST(NULL AS BIGINT) AS avoid_same_bug, \
               CAST(NULL AS BIGINT) AS last_bug, bi.queue_rank, i.bug_id, CAST(NULL AS TEXT) AS strategy, \
               CAST(NULL AS BIGINT) AS own_from, CAST(NULL AS BIGINT) AS own_to FROM batch_items bi JOIN items i ON i.id = bi.item_id \
               WHERE NOT EXISTS (SELECT 1 FROM o) \
               AND EXISTS (SELECT 1 FROM batch_annotators ba JOIN batches bt ON bt.id = ba.batch_id \
                 WHERE ba.batch_id = $7 AND ba.annotator_id = $1 AND bt.study_id = $2) \
               AND bi.batch_id = $7 AND bi.rated_full = 0 AND bi.queue_rank >= CASE WHEN ",
            own_from!("$7", "$1"),
            " > $8 THEN ",
            own_from!("$7", "$1"),
            " ELSE $8 END AND ",
            $candidates,
            " ORDER BY bi.queue_rank LIMIT $11) AS c \
             ORDER BY 1, 2, 14"
        )
    };
}
