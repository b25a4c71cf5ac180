//! What the jobs of one group commit share ([`super`] runs the groups; this is what
//! the store's jobs have in common): values read once in the group's transaction (a study's k, a batch's
//! queue front) and the writes made once for the whole group just before it commits — the
//! annotators' `last_active`, done counts and order seeds, new batch memberships, audit rows, and the
//! studies' data versions in the writer's own part of them (`study_versions`,
//! `migrations/postgres/0013_study_versions.sql`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use futures_util::future::BoxFuture;
use sqlx::AnyConnection;

use super::{GroupState, MAX_GROUP};
use crate::db::Dialect;

/// What the jobs of one group share: values read once in the group's transaction, and writes
/// made once for the whole group just before it commits ([`GroupState::flush`]). Valid for one
/// transaction: each run of a group starts with an empty one.
#[derive(Debug, Clone)]
pub struct Shared {
    dialect: Dialect,
    /// Jobs in the group.
    jobs: usize,
    /// Per study, its k (ratings per item) as read in this transaction; no job of a group
    /// changes it, and the study's lock is held until the commit.
    k: BTreeMap<i64, i64>,
    /// Per study, its items per participant (N, `None`: no limit) as read in this transaction.
    per_participant: BTreeMap<i64, Option<i64>>,
    /// Per annotator, when it last acted (`annotators.last_active`), how many of its
    /// assignments the group's votes made done (added to `annotators.done_count`) and how many
    /// claims on items of fixed-group batches it made (added to `annotators.fixed_count`).
    active: BTreeMap<i64, Active>,
    /// New participants' batch memberships `(batch, annotator)` and, per annotator, its order
    /// seed (`annotators.order_seed`): joins write nothing else their group reads.
    members: Vec<(i64, i64)>,
    seeds: BTreeMap<i64, i64>,
    /// Audit rows `(at, study, action, detail)`, in the jobs' order.
    audit: Vec<(i64, Option<i64>, &'static str, String)>,
    /// Studies whose report data changed (their data version moves on once per group, in the
    /// writer's part: `study_versions` of `shard`).
    changed: BTreeSet<i64>,
    /// The writer's part of the data versions ([`VERSION_SHARDS`]).
    shard: i64,
    /// Per batch, its queue's front: `(rank, until)` — every item of the batch before `rank`
    /// (every item: `None`) in the queue's order without k ratings is taken (ratings + live
    /// claims ≥ k) at any time before `until` (the earliest expiry of a live lease among them).
    /// Within a group claims only grow unless a job releases some ([`Shared::forget_fronts`]).
    fronts: BTreeMap<i64, (Option<i64>, i64)>,
    /// Per annotator, the batch and the rank where its claims there begin to look
    /// (`annotators.own_batch`, `annotators.own_from`: see `store::assign::queue`'s `own_to!`),
    /// found by the group's claims: written at the flush, with the annotator's time.
    own: BTreeMap<i64, (i64, i64)>,
}

/// What the group writes of an annotator: when it last acted, how many of its assignments the
/// group made done, and how many it claimed in fixed-group batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Active {
    at: i64,
    done: i64,
    fixed: i64,
}

/// Statement lengths the flush pads its lists to (by repeating the last entry), so a few
/// statement texts serve every group and stay in the prepared-statement cache.
const LIST_LENGTHS: [usize; 4] = [1, 8, 32, MAX_GROUP];

impl Shared {
    fn empty(dialect: Dialect, jobs: usize, shard: i64) -> Shared {
        Shared {
            dialect,
            jobs,
            shard,
            k: BTreeMap::new(),
            per_participant: BTreeMap::new(),
            active: BTreeMap::new(),
            members: Vec::new(),
            seeds: BTreeMap::new(),
            audit: Vec::new(),
            changed: BTreeSet::new(),
            fronts: BTreeMap::new(),
            own: BTreeMap::new(),
        }
    }

    /// The database the group writes to (for the few statements whose best form differs).
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Whether the group holds enough jobs for a fact found once to pay off (one query found
    /// for several jobs instead of none saved for one).
    pub fn shares_work(&self) -> bool {
        self.jobs >= 4
    }

    /// The study's k if a job of this group read it already.
    pub fn k(&self, study: i64) -> Option<i64> {
        self.k.get(&study).copied()
    }

    /// Keeps the study's k as read in this transaction.
    pub fn keep_k(&mut self, study: i64, k: i64) {
        self.k.insert(study, k);
    }

    /// The study's items per participant if a job of this group read it already (`Some(None)`:
    /// read, and the study sets none).
    pub fn per_participant(&self, study: i64) -> Option<Option<i64>> {
        self.per_participant.get(&study).copied()
    }

    /// Keeps the study's items per participant as read in this transaction.
    pub fn keep_per_participant(&mut self, study: i64, n: Option<i64>) {
        self.per_participant.insert(study, n);
    }

    /// How many of the annotator's assignments this group's votes made done so far (not yet
    /// in `annotators.done_count`: written at the flush).
    pub fn done_in_group(&self, annotator: i64) -> i64 {
        self.active.get(&annotator).map_or(0, |a| a.done)
    }

    /// The batch's queue front at `now`, if this group found it and it still holds.
    pub fn front(&self, batch: i64, now: i64) -> Option<Option<i64>> {
        self.fronts
            .get(&batch)
            .filter(|&&(_, until)| now < until)
            .map(|&(rank, _)| rank)
    }

    /// A batch whose queue front this group found and that still holds at `now`, with that
    /// front: a claim asks for its first candidates along with the annotator's batches.
    pub fn front_hint(&self, now: i64) -> Option<(i64, Option<i64>)> {
        self.fronts
            .iter()
            .find(|&(_, &(_, until))| now < until)
            .map(|(&batch, &(rank, _))| (batch, rank))
    }

    /// Keeps the batch's queue front (see [`Shared::fronts`]).
    pub fn keep_front(&mut self, batch: i64, rank: Option<i64>, until: i64) {
        self.fronts.insert(batch, (rank, until));
    }

    /// Claims were released: an item before a front may have room again.
    pub fn forget_fronts(&mut self) {
        self.fronts.clear();
    }

    /// The annotator acted at `now` (written at the flush).
    pub fn touch(&mut self, annotator: i64, now: i64) {
        let a = self.active.entry(annotator).or_insert(Active {
            at: now,
            done: 0,
            fixed: 0,
        });
        a.at = a.at.max(now);
    }

    /// Every item of `batch` before rank `from` without k ratings is `annotator`'s, who asked
    /// for an item at `now`: their claims there begin to look at `from` (written at the flush).
    pub fn keep_own_from(&mut self, batch: i64, annotator: i64, from: i64, now: i64) {
        self.touch(annotator, now);
        self.own.insert(annotator, (batch, from));
    }

    /// The annotator's claims were released: what the group found of where their claims
    /// begin to look is not written (the release set it back).
    pub fn forget_own(&mut self, annotator: i64) {
        self.own.remove(&annotator);
    }

    /// The annotator's first vote on an item made its assignment done at `now` (the done
    /// count and the time are written at the flush). Call it only in the transaction that
    /// made it done, once per assignment: `annotators.done_count` is the number of the
    /// annotator's done assignments.
    pub fn made_done(&mut self, annotator: i64, now: i64) {
        self.touch(annotator, now);
        if let Some(a) = self.active.get_mut(&annotator) {
            a.done += 1;
        }
    }

    /// The annotator claimed an item of a fixed-group batch at `now`, a new assignment or a
    /// released one taken up again (the count and the time are written at the flush):
    /// `annotators.fixed_count` is the number of the annotator's assignments in fixed-group
    /// batches that are not released.
    pub fn claimed_fixed(&mut self, annotator: i64, now: i64) {
        self.touch(annotator, now);
        if let Some(a) = self.active.get_mut(&annotator) {
            a.fixed += 1;
        }
    }

    /// A new participant joins `batch` with its order seed (written at the flush).
    pub fn join_batch(&mut self, batch: i64, annotator: i64, order_seed: i64) {
        self.members.push((batch, annotator));
        self.seeds.insert(annotator, order_seed);
    }

    /// An audit row (written at the flush, with no acting user).
    pub fn audit(&mut self, at: i64, study: Option<i64>, action: &'static str, detail: String) {
        self.audit.push((at, study, action, detail));
    }

    /// The study's report data changed (its data version moves on at the flush).
    pub fn data_changed(&mut self, study: i64) {
        self.changed.insert(study);
    }

    /// Writes what the group's jobs deferred, a statement (or a few) for each kind: the
    /// annotators' times and order seeds, the batch memberships, the audit rows and the
    /// studies' data versions (each list at most [`MAX_GROUP`] entries: one a job).
    async fn write_out(&self, conn: &mut AnyConnection) -> sqlx::Result<()> {
        // each annotator's time, the counts the group added to and where its claims begin to
        // look (a group of claims and renewals of the dynamic queue writes the time alone)
        let done = self.active.values().any(|a| a.done > 0);
        let fixed = self.active.values().any(|a| a.fixed > 0);
        let own = !self.own.is_empty();
        let columns: Vec<Column> = [
            Some(Column::Set("last_active")),
            done.then_some(Column::Add("done_count")),
            fixed.then_some(Column::Add("fixed_count")),
            own.then_some(Column::SetGiven("own_batch")),
            own.then_some(Column::SetGiven("own_from")),
        ]
        .into_iter()
        .flatten()
        .collect();
        let rows: Vec<_> = self
            .active
            .iter()
            .map(|(&id, a)| {
                let mine = self.own.get(&id);
                let values = [
                    Some(Some(a.at)),
                    done.then_some(Some(a.done)),
                    fixed.then_some(Some(a.fixed)),
                    own.then_some(mine.map(|m| m.0)),
                    own.then_some(mine.map(|m| m.1)),
                ];
                (id, values.into_iter().flatten().collect())
            })
            .collect();
        update_annotators(conn, &columns, &rows).await?;
        let seeds: Vec<_> = self
            .seeds
            .iter()
            .map(|(&id, &s)| (id, vec![Some(s)]))
            .collect();
        update_annotators(conn, &[Column::Set("order_seed")], &seeds).await?;
        for chunk in self.members.chunks(MAX_GROUP) {
            // padded with repeats of the last pair, which the conflict clause skips
            let n = padded(chunk.len());
            let values: Vec<String> = (0..n)
                .map(|i| format!("(${}, ${})", 2 * i + 1, 2 * i + 2))
                .collect();
            let sql = format!(
                "INSERT INTO batch_annotators (batch_id, annotator_id) VALUES {} \
                 ON CONFLICT (batch_id, annotator_id) DO NOTHING",
                values.join(", ")
            );
            let mut q = sqlx::query(&sql);
            for i in 0..n {
                let (batch, annotator) = chunk[i.min(chunk.len() - 1)];
                q = q.bind(batch).bind(annotator);
            }
            q.execute(&mut *conn).await?;
        }
        // rows cannot repeat: exact lengths, the longest first
        let mut rows = &self.audit[..];
        while !rows.is_empty() {
            let n = LIST_LENGTHS
                .into_iter()
                .rev()
                .find(|&l| l <= rows.len())
                .unwrap_or(1);
            let (chunk, rest) = rows.split_at(n);
            let values: Vec<String> = (0..n)
                .map(|i| {
                    let p = 4 * i;
                    format!("(${}, ${}, ${}, ${})", p + 1, p + 2, p + 3, p + 4)
                })
                .collect();
            let sql = format!(
                "INSERT INTO audit_log (at, study_id, action, detail) VALUES {}",
                values.join(", ")
            );
            let mut q = sqlx::query(&sql);
            for (at, study, action, detail) in chunk {
                q = q.bind(*at).bind(*study).bind(*action).bind(detail.as_str());
            }
            q.execute(&mut *conn).await?;
            rows = rest;
        }
        // a group's jobs are mostly of one study: a statement each
        for &study in &self.changed {
            bump_version(conn, study, self.shard).await?;
        }
        Ok(())
    }
}

impl GroupState for Shared {
    fn writer_number() -> i64 {
        next_shard()
    }

    fn new(dialect: Dialect, jobs: usize, writer: i64) -> Shared {
        Shared::empty(dialect, jobs, writer)
    }

    fn flush<'c>(&'c self, conn: &'c mut AnyConnection) -> BoxFuture<'c, sqlx::Result<()>> {
        Box::pin(self.write_out(conn))
    }
}

/// How [`update_annotators`] writes a column of `annotators` (a column name of this file, never
/// input): set to the annotator's value, or that value added to it.
#[derive(Debug, Clone, Copy)]
enum Column {
    Set(&'static str),
    Add(&'static str),
    /// Set where the annotator has a value, kept where it has none (NULL).
    SetGiven(&'static str),
}

impl Column {
    fn name(self) -> &'static str {
        match self {
            Column::Set(name) | Column::Add(name) | Column::SetGiven(name) => name,
        }
    }
}

/// Writes `columns` of each annotator in `rows` (annotator → one value per column): one
/// statement per [`MAX_GROUP`] annotators, padded by repeating the last (`CASE` takes an id's
/// first match, so a repeat sets and adds nothing more).
async fn update_annotators(
    conn: &mut AnyConnection,
    columns: &[Column],
    rows: &[(i64, Vec<Option<i64>>)],
) -> sqlx::Result<()> {
    let per = columns.len() + 1;
    for chunk in rows.chunks(MAX_GROUP) {
        let n = padded(chunk.len());
        let sets: Vec<String> = columns
            .iter()
            .enumerate()
            .map(|(c, column)| {
                let name = column.name();
                let whens: String = (0..n)
                    .map(|i| {
                        let v = format!("${}", per * i + 2 + c);
                        let value = match column {
                            Column::SetGiven(_) => format!("COALESCE({v}, {name})"),
                            Column::Set(_) | Column::Add(_) => v,
                        };
                        format!(" WHEN ${} THEN {value}", per * i + 1)
                    })
                    .collect();
                match column {
                    Column::Add(_) => format!("{name} = {name} + CASE id{whens} END"),
                    Column::Set(_) | Column::SetGiven(_) => format!("{name} = CASE id{whens} END"),
                }
            })
            .collect();
        let ids: Vec<String> = (0..n).map(|i| format!("${}", per * i + 1)).collect();
        let sql = format!(
            "UPDATE annotators SET {} WHERE id IN ({})",
            sets.join(", "),
            ids.join(", ")
        );
        let mut q = sqlx::query(&sql);
        for i in 0..n {
            let (annotator, values) = &chunk[i.min(chunk.len() - 1)];
            q = q.bind(*annotator);
            for &v in values {
                q = q.bind(v);
            }
        }
        q.execute(&mut *conn).await?;
    }
    Ok(())
}

/// Parts a study's data version is kept in (`study_versions.shard`): the writers of a process
/// take them in turn, from a random one on, so two instances' writers share a part (and
/// their groups' commits wait for each other) only by chance, one time in this many.
pub const VERSION_SHARDS: u64 = 16;

/// Moves the study's data version on by one, in the part writer `shard` keeps (in the group's
/// transaction, whose commit publishes it with the data it counts).
pub async fn bump_version(conn: &mut AnyConnection, study: i64, shard: i64) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO study_versions (study_id, shard, version) VALUES ($1, $2, 1) \
         ON CONFLICT (study_id, shard) DO UPDATE SET version = study_versions.version + 1",
    )
    .bind(study)
    .bind(shard)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The next writer's part of the studies' data versions (see [`VERSION_SHARDS`]).
fn next_shard() -> i64 {
    static BASE: OnceLock<u64> = OnceLock::new();
    static TAKEN: AtomicU64 = AtomicU64::new(0);
    let base = *BASE.get_or_init(rand::random::<u64>);
    (base.wrapping_add(TAKEN.fetch_add(1, Ordering::Relaxed)) % VERSION_SHARDS) as i64
}

/// The shortest of [`LIST_LENGTHS`] that holds `n` entries.
fn padded(n: usize) -> usize {
    LIST_LENGTHS
        .into_iter()
        .find(|&l| l >= n)
        .unwrap_or(MAX_GROUP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_padded_to_a_few_lengths() {
        assert_eq!(padded(1), 1);
        assert_eq!(padded(2), 8);
        assert_eq!(padded(8), 8);
        assert_eq!(padded(9), 32);
        assert_eq!(padded(100), MAX_GROUP);
        assert_eq!(padded(MAX_GROUP), MAX_GROUP);
    }

    #[test]
    fn an_annotator_keeps_its_latest_time() {
        let mut s = Shared::empty(Dialect::Sqlite, 1, 0);
        s.touch(7, 20);
        s.touch(7, 10);
        s.touch(8, 5);
        s.made_done(8, 4);
        s.made_done(8, 6);
        s.claimed_fixed(8, 3);
        assert_eq!(
            s.active.get(&7),
            Some(&Active {
                at: 20,
                done: 0,
                fixed: 0
            })
        );
        assert_eq!(
            s.active.get(&8),
            Some(&Active {
                at: 6,
                done: 2,
                fixed: 1
            })
        );
        s.keep_k(3, 5);
        assert_eq!((s.k(3), s.k(4)), (Some(5), None));
        // a front holds until the first lease before it expires
        s.keep_front(9, Some(100), 50);
        assert_eq!(
            (s.front(9, 49), s.front(9, 50), s.front(1, 0)),
            (Some(Some(100)), None, None)
        );
        s.forget_fronts();
        assert_eq!(s.front(9, 0), None);
    }

    #[test]
    fn writers_of_a_process_take_distinct_parts() {
        let parts: BTreeSet<i64> = (0..VERSION_SHARDS).map(|_| next_shard()).collect();
        assert_eq!(parts.len() as u64, VERSION_SHARDS);
        assert!(parts
            .iter()
            .all(|&p| (0..VERSION_SHARDS as i64).contains(&p)));
    }
}
