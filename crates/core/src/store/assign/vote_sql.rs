//! The SQL of a vote, built once from the vote's columns: the read every vote makes
//! (`vote_read!`), the common first vote in one round trip (`fast_pg`, `fast_sqlite`) and the
//! revisions' writes (`Statements`), which `votes.rs` binds.

use std::sync::LazyLock;

use crate::domain::vote::COLUMNS;

/// What a vote checks, as one row (none when the item is not the annotator's in this study):
/// the assignment, the side its page showed (the original on the left unless the study
/// randomises sides, then the assignment's drawn side: what the vote stores), the
/// annotator's consent and finish, a revision recorded under the submit
/// token (`seen`), k, the item's ratings (`rated`), the annotator's own (`mine`) and others'
/// open claims (`claims`). `$1` item, `$2` annotator, `$3` study, `$4` submit token, `$5` now,
/// `$6`/`$7` the statuses planned and leased (`bind_read`).
macro_rules! vote_read {
    () => {
        "SELECT a.id, a.status, a.lease_expires_at, \
         CASE WHEN (SELECT randomise_sides FROM studies WHERE id = $3) = 0 THEN 1 ELSE a.original_left END AS original_left, \
         an.finished_at, an.consented_at, \
         (SELECT revision FROM vote_revisions WHERE annotator_id = $2 AND submit_token = $4) AS seen, \
         (SELECT ratings_per_item FROM studies WHERE id = $3) AS k, \
         (SELECT COUNT(*) FROM votes WHERE item_id = $1 AND counted = 1) AS rated, \
         (SELECT revision FROM votes WHERE item_id = $1 AND annotator_id = $2) AS mine, \
         (SELECT COUNT(*) FROM assignments c WHERE c.item_id = $1 AND c.annotator_id <> $2 \
          AND c.status IN ($6, $7) AND (c.status = $6 OR c.lease_expires_at > $5) \
          AND (SELECT ca.counted FROM annotators ca WHERE ca.id = c.annotator_id) = 1) AS claims \
         FROM assignments a JOIN annotators an ON an.id = a.annotator_id JOIN batches b ON b.id = a.batch_id \
         WHERE a.item_id = $1 AND a.annotator_id = $2 AND b.study_id = $3"
    };
}

/// The queue's index after a vote on item `$1` that may fill it at k (`$k`): `rated_full` says
/// whether it has the study's k ratings, in every batch that holds it.
macro_rules! refresh_full {
    ($k:literal) => {
        concat!(
            "UPDATE batch_items SET rated_full = CASE WHEN \
             (SELECT COUNT(*) FROM votes v WHERE v.item_id = $1 AND v.counted = 1) >= ",
            $k,
            " THEN 1 ELSE 0 END WHERE item_id = $1"
        )
    };
}

/// The SQL of a vote's writes, built once from the vote's columns ([`COLUMNS`]): the row's own
/// columns come first with fixed numbers, the vote's after them.
pub(super) struct Statements {
    /// PostgreSQL's common vote in one statement ([`fast_pg`]).
    pub(super) fast_pg: String,
    /// SQLite's common vote in one round trip ([`fast_sqlite`]).
    pub(super) fast_sqlite: String,
    /// PostgreSQL's first revision (made done) and later revision, as `RowBinds` (`votes.rs`) binds them.
    pub(super) pg_first: String,
    pub(super) pg_revise: String,
    /// SQLite's first revision filling the item, first revision, later revision.
    pub(super) sqlite_first_fills: String,
    pub(super) sqlite_first: String,
    pub(super) sqlite_revise: String,
}

pub(super) static SQL: LazyLock<Statements> = LazyLock::new(Statements::new);

/// Where the vote's columns start in the common vote's binds: after [`vote_read!`]'s seven,
/// the consent asked (`$8`) and the status done (`$9`).
const FAST_VOTE_FROM: usize = 10;

/// `$first, $first+1, …`, one a vote column.
fn vote_params(first: usize) -> String {
    (first..first + COLUMNS.len())
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The head of a revision's `INSERT`: the row's columns (as `RowBinds` (`votes.rs`) binds them), the
/// submit token, then the vote's.
fn revision_into() -> String {
    let cols: Vec<_> = COLUMNS.iter().map(|c| c.name).collect();
    format!(
        "INSERT INTO vote_revisions (item_id, annotator_id, revision, submitted_at, original_left, submit_token, {})",
        cols.join(", ")
    )
}

/// The head of a vote's `INSERT`: the row's columns, then the vote's.
fn vote_into() -> String {
    let cols: Vec<_> = COLUMNS.iter().map(|c| c.name).collect();
    format!(
        "INSERT INTO votes (item_id, annotator_id, revision, submitted_at, original_left, {})",
        cols.join(", ")
    )
}

/// A new revision replaces the vote that counts (its side stays the first revision's).
fn vote_replaces() -> String {
    let mut set = vec![
        "revision = excluded.revision".to_owned(),
        "submitted_at = excluded.submitted_at".to_owned(),
    ];
    set.extend(
        COLUMNS
            .iter()
            .map(|c| format!("{0} = excluded.{0}", c.name)),
    );
    format!(
        "ON CONFLICT (item_id, annotator_id) DO UPDATE SET {}",
        set.join(", ")
    )
}

/// A revision of a vote: `RowBinds` (`votes.rs`)' `$1`…`$6`, the vote's columns from `$vote_from`.
fn insert_revision(vote_from: usize) -> String {
    format!(
        "{} VALUES ($1, $2, $3, $4, $5, $6, {})",
        revision_into(),
        vote_params(vote_from)
    )
}

/// The vote that counts (the latest revision): `$1`…`$5`, the vote's columns from `$vote_from`.
fn upsert_vote(vote_from: usize) -> String {
    format!(
        "{} VALUES ($1, $2, $3, $4, $5, {}) {}",
        vote_into(),
        vote_params(vote_from),
        vote_replaces()
    )
}

/// The first revision marks the assignment done: `$4` now, `$7` the status done, `$8` the
/// assignment.
const MADE_DONE: &str = "UPDATE assignments SET status = $7, lease_expires_at = $4 WHERE id = $8";

impl Statements {
    fn new() -> Statements {
        // PostgreSQL: only the parameters a statement names are bound
        let pg_first = format!(
            "WITH r AS ({}), v AS ({}), a AS ({MADE_DONE}) SELECT 1",
            insert_revision(9),
            upsert_vote(9)
        );
        let pg_revise = format!(
            "WITH r AS ({}), v AS ({}) SELECT 1",
            insert_revision(7),
            upsert_vote(7)
        );
        // SQLite: every statement is bound the same ($9 k), the vote's columns from $10
        let (rev, vote) = (insert_revision(10), upsert_vote(10));
        Statements {
            fast_pg: fast_pg(),
            fast_sqlite: fast_sqlite(),
            pg_first,
            pg_revise,
            sqlite_first_fills: format!("{rev}; {vote}; {MADE_DONE}; {}", refresh_full!("$9")),
            sqlite_first: format!("{rev}; {vote}; {MADE_DONE}"),
            sqlite_revise: format!("{rev}; {vote}"),
        }
    }
}

/// The common first vote's conditions over the read `c` ([`vote_read!`]), as the table `ok`
/// (the assignment, its side, whether the vote fills the item) — one row when the vote may be
/// written at once: not seen before, consent given if asked (`$8` = 1), the item not rated by
/// the annotator nor full, the claim planned (`$6`) or a lease (`$7`) still live at `$5`.
macro_rules! fast_ok {
    () => {
        "ok AS (SELECT c.id, c.original_left, c.rated + 1 >= c.k AS fills FROM c \
         WHERE c.seen IS NULL AND c.mine IS NULL AND c.k IS NOT NULL AND c.rated < c.k \
         AND ($8 = 0 OR c.consented_at IS NOT NULL) \
         AND (c.status = $6 OR (c.status = $7 AND c.lease_expires_at > $5)))"
    };
}

/// PostgreSQL's common vote in one statement (one round trip on the writer's connection,
/// where every claim and vote waits its turn): reads what [`vote_read!`] reads and, when that
/// allows a first revision at once — not seen before, consent given if asked (`$8` = 1), the
/// item not rated by the annotator nor full, the claim planned or a lease still live — writes
/// it: the revision, the vote, the assignment done and, when this vote fills the item, the
/// queue's index (`rated_full`; the statement's snapshot counts the group's earlier votes,
/// not this one). Returns the read with `saved` = 1 when it wrote, else 0 and nothing written:
/// the caller then decides from the read as on SQLite (a duplicate, a refusal, a revision, a
/// lease that expired). `$9` is the status done, the vote's columns from `$10`.
fn fast_pg() -> String {
    let vote = vote_params(FAST_VOTE_FROM);
    format!(
        "WITH c AS ({read}), {ok}, r AS ({rev} SELECT $1, $2, 1, $5, ok.original_left, $4, {vote} FROM ok), \
         v AS ({into} SELECT $1, $2, 1, $5, ok.original_left, {vote} FROM ok {replaces}), \
         d AS (UPDATE assignments SET status = $9, lease_expires_at = $5 WHERE id IN (SELECT id FROM ok)), \
         f AS (UPDATE batch_items SET rated_full = 1 WHERE item_id = $1 AND EXISTS (SELECT 1 FROM ok WHERE ok.fills)) \
         SELECT c.*, (SELECT COUNT(*) FROM ok) AS saved FROM c",
        read = vote_read!(),
        ok = fast_ok!(),
        rev = revision_into(),
        into = vote_into(),
        replaces = vote_replaces(),
    )
}

/// SQLite's common vote in one round trip to the writer (as [`fast_pg`] on PostgreSQL; SQLite
/// has no writing `WITH`, so statements, run one after the other): the revision, written only
/// under [`fast_ok!`] over the read ([`vote_read!`]), returning a row of kind 0 when it was;
/// then the vote, the assignment done and the queue's index, each only if the statement before
/// it changed a row (`changes()`); last a row of kind 1 with k. The read itself comes back
/// only when the vote was not written (`read_for_vote` asks for it then: a duplicate, a
/// refusal, a revision, an expired lease — the uncommon cases pay a second round trip, the
/// common one reads once). Binds as [`fast_pg`].
fn fast_sqlite() -> String {
    let vote = vote_params(FAST_VOTE_FROM);
    format!(
        "WITH c AS ({read}), {ok} {rev} SELECT $1, $2, 1, $5, ok.original_left, $4, {vote} FROM ok RETURNING 0 AS kind; \
         {into} SELECT $1, $2, 1, $5, r.original_left, {vote} FROM vote_revisions r \
         WHERE changes() = 1 AND r.annotator_id = $2 AND r.submit_token = $4; \
         UPDATE assignments SET status = $9, lease_expires_at = $5 \
         WHERE item_id = $1 AND annotator_id = $2 AND changes() = 1; \
         {full} AND changes() = 1; SELECT 1 AS kind, {k} AS k",
        read = vote_read!(),
        ok = fast_ok!(),
        rev = revision_into(),
        into = vote_into(),
        full = refresh_full!("(SELECT ratings_per_item FROM studies WHERE id = $3)"),
        k = "(SELECT ratings_per_item FROM studies WHERE id = $3)",
    )
}
