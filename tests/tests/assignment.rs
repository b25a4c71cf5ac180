//! Batches and the exactly-k invariant on SQLite and PostgreSQL: fixed groups, the dynamic
//! queue under hundreds of concurrent annotators, lease expiry and reclaim, drop-outs.

use std::sync::Arc;

use natstudy_core::db::now_ms;
use natstudy_core::service::Db;
use natstudy_core::store::assign::{self, BatchSpec, ItemFilter, Strategy, Submitted};
use natstudy_tests::{fresh_db, on_both_stores, Store};
use std::collections::{HashMap, HashSet};

use natstudy_vocab::ids::{AnnotatorId, ItemId, StudyId};
use rand::{Rng, SeedableRng};

/// A study with `bugs` bugs of 3 transformations each.
async fn study_with_items(db: &Db, bugs: usize) -> StudyId {
    let study = natstudy_core::store::studies::create(db, None, "conc", "")
        .await
        .expect("study");
    let mut b = String::new();
    let mut t = String::new();
    for i in 0..bugs {
        b.push_str(&format!(
            "{{\"bug_id\": \"B-{i}\", \"project\": \"P{}\", \"file\": \"A.java\", \"method\": \"m\", \"source\": \"int m() {{ return {i}; }}\\n\", \"buggy_lines\": [1]}}\n",
            i % 3
        ));
        for j in 0..3 {
            let level = ["naming", "expression", "statement"][j];
            t.push_str(&format!(
                "{{\"id\": \"{level}_{i}\", \"bug_id\": \"B-{i}\", \"operator\": \"Op{j}\", \"level\": \"{level}\", \"source\": \"int m() {{ return {i} + {j}; }}\\n\", \"summary\": \"s\"}}\n"
            ));
        }
    }
    natstudy_core::service::imports::import_items_text(db, study, None, ("b", &b), ("t", &t))
        .await
        .expect("items");
    study
}

fn vote(token: String) -> natstudy_core::domain::Vote {
    natstudy_tests::test_vote(&token, 2, 3, Some(4.0))
}

/// The annotator's next item at `at` (ms), which must be there.
async fn claim_at(
    db: &Db,
    study: StudyId,
    a: natstudy_vocab::ids::AnnotatorId,
    at: i64,
) -> assign::Handed {
    assign::next_item(db, study, a, at)
        .await
        .expect("next")
        .expect("an item")
}

/// Annotator `a` takes the next item of the queue and rates it (submit token `token`).
async fn rate_next(
    db: &Db,
    study: StudyId,
    a: natstudy_vocab::ids::AnnotatorId,
    token: &str,
) -> natstudy_vocab::ids::ItemId {
    let h = claim_at(db, study, a, now_ms()).await;
    assign::submit(db, study, a, h.item, &vote(token.into()), now_ms())
        .await
        .expect("vote");
    h.item
}

/// Sets the study's k straight in the database.
async fn set_k(db: &Db, study: StudyId, k: i64) {
    sqlx::query("UPDATE studies SET ratings_per_item = $2 WHERE id = $1")
        .bind(study)
        .bind(k)
        .execute(&mut *db.write().await.expect("write"))
        .await
        .expect("k");
}

/// A dynamic-queue batch of every item of the study for `annotators`; returns it.
async fn queue_batch(
    db: &Db,
    study: StudyId,
    annotators: Vec<natstudy_vocab::ids::AnnotatorId>,
    seed: u64,
    lease_secs: i64,
    avoid_same_bug: bool,
) -> natstudy_vocab::ids::BatchId {
    let spec = BatchSpec {
        name: format!("queue {seed}"),
        strategy: Strategy::DynamicQueue,
        filter: ItemFilter::default(),
        annotators,
        seed,
        lease_secs,
        avoid_same_bug,
    };
    assign::create_batch(db, study, None, &spec)
        .await
        .expect("batch")
        .id
}

async fn assert_at_most_k(db: &Db, study: StudyId, k: i64) {
    for (item, n) in assign::completed_per_item(db, study).await.expect("counts") {
        assert!(n <= k, "item {item} has {n} > {k} ratings");
    }
}

/// Every annotator's done count (`annotators.done_count`, what the progress bar reads) is the
/// number of its done assignments, and its fixed-group count (`annotators.fixed_count`, the
/// bar's total for fixed groups) the number of its assignments in fixed-group batches that are
/// not released; and the study has some done.
async fn assert_done_counts(db: &Db, study: StudyId) {
    let done: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM assignments a JOIN annotators an ON an.id = a.annotator_id \
         WHERE an.study_id = $1 AND a.status = 'done'",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await
    .expect("done");
    assert!(done > 0, "nothing done");
    assert_kept_counts(db, study).await;
}

/// As [`assert_done_counts`], whether anything is done or not.
async fn assert_kept_counts(db: &Db, study: StudyId) {
    let counts: Vec<(i64, i64, i64, i64, i64)> = sqlx::query_as(
        "SELECT an.id, an.done_count, (SELECT COUNT(*) FROM assignments a \
         WHERE a.annotator_id = an.id AND a.status = 'done'), an.fixed_count, \
         (SELECT COUNT(*) FROM assignments a JOIN batches b ON b.id = a.batch_id \
          WHERE a.annotator_id = an.id AND b.strategy = 'fixed_groups' AND a.status <> 'released') \
         FROM annotators an WHERE an.study_id = $1 ORDER BY an.id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await
    .expect("counts");
    let wrong: Vec<_> = counts.iter().filter(|c| c.1 != c.2 || c.3 != c.4).collect();
    assert!(
        wrong.is_empty(),
        "(annotator, kept done, done, kept fixed, fixed): {wrong:?}"
    );
}

async fn dynamic_queue_never_exceeds_k(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = study_with_items(&db, 10).await; // 30 items
    let annotators = assign::ensure_pool(&db, study, 200).await.expect("pool");
    let spec = BatchSpec {
        name: "queue".into(),
        strategy: Strategy::DynamicQueue,
        filter: ItemFilter::default(),
        annotators: annotators.clone(),
        seed: 11,
        lease_secs: 1200,
        avoid_same_bug: true,
    };
    assign::create_batch(&db, study, None, &spec)
        .await
        .expect("batch");
    let db = Arc::new(db);
    let mut tasks = Vec::new();
    for (n, a) in annotators.iter().copied().enumerate() {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(n as u64);
            let mut submitted = 0;
            for step in 0..6 {
                let Some(h) = assign::next_item(&db, study, a, now_ms())
                    .await
                    .expect("next")
                else {
                    break;
                };
                for _ in 0..rng.gen_range(0..3) {
                    tokio::task::yield_now().await;
                }
                // some annotators walk away mid-item (their lease would expire)
                if rng.gen_bool(0.1) {
                    assign::release(&db, study, a, None).await.expect("release");
                    continue;
                }
                let token = format!("{a}-{step}");
                match assign::submit(&db, study, a, h.item, &vote(token.clone()), now_ms()).await {
                    Ok(Submitted::Saved { .. }) => submitted += 1,
                    Ok(Submitted::Duplicate { .. }) => panic!("fresh token seen as duplicate"),
                    Err(e) => panic!("submit failed: {e}"),
                }
                // resending the same submit is harmless
                let again = assign::submit(&db, study, a, h.item, &vote(token), now_ms())
                    .await
                    .expect("resend");
                assert!(matches!(again, Submitted::Duplicate { .. }));
                assert_at_most_k(&db, study, 5).await;
            }
            submitted
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.expect("task");
    }
    let counts = assign::completed_per_item(&db, study)
        .await
        .expect("counts");
    assert_eq!(counts.len(), 30);
    assert!(
        counts.iter().all(|&(_, n)| n == 5),
        "every item exactly k: {counts:?}"
    );
    assert_eq!(total, 150);
    assert_done_counts(&db, study).await;
    let db = Arc::try_unwrap(db).expect("sole owner");
    guard.drop_now(db).await;
}

on_both_stores!(multi_thread: dynamic_queue_never_exceeds_k => dynamic_queue_never_exceeds_k_sqlite, dynamic_queue_never_exceeds_k_postgres);

/// A study of k = 1 whose dynamic queue holds one item (`naming_0`), leased for
/// `lease_secs`, and two annotators in it.
async fn one_item_queue(db: &Db, lease_secs: i64) -> (StudyId, Vec<AnnotatorId>) {
    let study = study_with_items(db, 1).await; // 3 items
    set_k(db, study, 1).await;
    let pool = assign::ensure_pool(db, study, 2).await.expect("pool");
    let spec = BatchSpec {
        name: "one".into(),
        strategy: Strategy::DynamicQueue,
        filter: ItemFilter {
            ids: vec!["naming_0".into()],
            ..Default::default()
        },
        annotators: pool.clone(),
        seed: 1,
        lease_secs,
        avoid_same_bug: false,
    };
    assign::create_batch(db, study, None, &spec)
        .await
        .expect("batch");
    (study, pool)
}

async fn leases_expire_and_are_reclaimed(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, pool) = one_item_queue(&db, 60).await;
    let t0 = now_ms();
    let a = assign::next_item(&db, study, pool[0], t0)
        .await
        .expect("next")
        .expect("leased");
    // while A's lease lives, B gets nothing (k = 1)
    assert_eq!(
        assign::next_item(&db, study, pool[1], t0 + 1_000)
            .await
            .expect("next"),
        None
    );
    // asking again renews A's lease
    let renewed = assign::next_item(&db, study, pool[0], t0 + 30_000)
        .await
        .expect("next")
        .expect("same");
    assert_eq!(renewed.item, a.item);
    assert_eq!(renewed.lease_expires_at, Some(t0 + 30_000 + 60_000));
    // the open page's heartbeat keeps the lease alive
    assert_eq!(
        assign::renew_leases(&db, study, pool[0], t0 + 80_000)
            .await
            .expect("renew"),
        1
    );
    assert_eq!(
        assign::next_item(&db, study, pool[1], t0 + 120_000)
            .await
            .expect("next"),
        None
    );
    // after expiry B gets the item, and the reclaim marks A's lease released
    let later = t0 + 200_000;
    let b = assign::next_item(&db, study, pool[1], later)
        .await
        .expect("next")
        .expect("reclaimed");
    assert_eq!(b.item, a.item);
    assign::submit(&db, study, pool[1], b.item, &vote("b".into()), later + 1)
        .await
        .expect("B votes");
    // A comes back too late: refused, k not exceeded
    let late = assign::submit(&db, study, pool[0], a.item, &vote("a".into()), later + 2).await;
    assert!(late.is_err(), "late vote must be refused");
    assert_eq!(
        assign::reclaim_expired(&db, study, later + 3)
            .await
            .expect("reclaim"),
        1
    );
    assert_at_most_k(&db, study, 1).await;
    guard.drop_now(db).await;
}

#[tokio::test]
async fn leases_expire_and_are_reclaimed_sqlite() {
    leases_expire_and_are_reclaimed(Store::Sqlite).await;
}

#[tokio::test]
async fn leases_expire_and_are_reclaimed_postgres() {
    leases_expire_and_are_reclaimed(Store::Postgres).await;
}

/// A page that stays open (or a script that joins and only beats) keeps its lease no longer
/// than the claim's longest hold (`max_hold_ms`: half an hour for a one-minute lease): the
/// heartbeat and asking again renew it up to there, and then the item goes to someone else.
async fn a_lease_is_held_at_most_its_longest_hold(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, pool) = one_item_queue(&db, 60).await;
    let hold = assign::max_hold_ms(60);
    assert_eq!(hold, 30 * 60 * 1000);
    assert_eq!(assign::max_hold_ms(1200), 60 * 60 * 1000);
    assert_eq!(assign::max_hold_ms(i64::MAX), 2 * 60 * 60 * 1000);
    held_until(&db, study, &pool, hold).await;
    guard.drop_now(db).await;
}

/// Once the study's times on item are known, the longest hold follows them (twice the 99th
/// percentile, at least the lease): a study whose participants answer within 2.5 minutes lets a
/// beating page keep an item 5 minutes, not half an hour.
async fn the_longest_hold_follows_the_studys_times(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, pool) = one_item_queue(&db, 60).await;
    assert_eq!(
        assign::set_study_hold(&db, study, Some(5 * 60 * 1000))
            .await
            .expect("hold"),
        1
    );
    held_until(&db, study, &pool, 5 * 60 * 1000).await;
    // too few measured votes: back to the lease's rule
    assign::set_study_hold(&db, study, None)
        .await
        .expect("none");
    let holds = assign::study_holds(&db, study).await.expect("holds");
    assert!(holds.iter().all(|(_, h)| h.is_none()), "{holds:?}");
    guard.drop_now(db).await;
}

/// The reference study's participants answered within 83 s (99th percentile): twice that is
/// shorter than the queue's 10-minute lease, so the lease itself is the longest hold.
async fn the_hold_is_set_from_the_votes(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = natstudy_tests::reference_study(&db, "Held", true)
        .await
        .expect("study");
    natstudy_tests::open_queue(&db, study, 5)
        .await
        .expect("queue");
    let asked = natstudy_core::service::lease_hold::refresh(&db, study)
        .await
        .expect("refresh")
        .expect("enough measured votes");
    assert!(asked > 60_000 && asked < 600_000, "{asked} ms");
    let holds = assign::study_holds(&db, study).await.expect("holds");
    assert_eq!(holds.len(), 1);
    assert_eq!(holds[0].1, Some(600_000), "at least the lease");
    guard.drop_now(db).await;
}

/// The lease of pool[0]'s claim lives under heartbeats until exactly `hold` after the claim,
/// and then the item goes to pool[1].
async fn held_until(db: &Db, study: StudyId, pool: &[AnnotatorId], hold: i64) {
    let t0 = now_ms();
    let a = assign::next_item(db, study, pool[0], t0)
        .await
        .expect("next")
        .expect("leased");
    // a heartbeat every 50 s for the whole hold: the lease lives
    let mut t = t0;
    while t + 50_000 < t0 + hold {
        t += 50_000;
        assert_eq!(
            assign::renew_leases(db, study, pool[0], t)
                .await
                .expect("renew"),
            1,
            "renewed at {}",
            t - t0
        );
    }
    // asking again near the end: the lease ends at the hold, not a lease length later
    let again = assign::next_item(db, study, pool[0], t)
        .await
        .expect("next")
        .expect("same");
    assert_eq!(again.item, a.item);
    assert_eq!(again.lease_expires_at, Some(t0 + hold));
    assert_eq!(
        assign::next_item(db, study, pool[1], t0 + hold - 1)
            .await
            .expect("next"),
        None,
        "still held"
    );
    // past it, the beat renews nothing and the item goes to the other participant
    assert_eq!(
        assign::renew_leases(db, study, pool[0], t0 + hold + 1)
            .await
            .expect("renew"),
        0
    );
    let b = assign::next_item(db, study, pool[1], t0 + hold + 2)
        .await
        .expect("next")
        .expect("the item is free again");
    assert_eq!(b.item, a.item);
    assert_at_most_k(db, study, 1).await;
}

on_both_stores!(the_longest_hold_follows_the_studys_times => the_longest_hold_follows_the_studys_times_sqlite, the_longest_hold_follows_the_studys_times_postgres);
on_both_stores!(the_hold_is_set_from_the_votes => the_hold_is_set_from_the_votes_sqlite, the_hold_is_set_from_the_votes_postgres);

on_both_stores!(a_lease_is_held_at_most_its_longest_hold => a_lease_is_held_at_most_its_longest_hold_sqlite, a_lease_is_held_at_most_its_longest_hold_postgres);

/// Two instances on one database (two `Db` handles, each with its own pools and group-commit
/// writer; on PostgreSQL their groups run at the same time, serialised per item): 60
/// annotators claim through one and vote through the other at once, a fifth of them pausing
/// until their lease expired, and no item ever has more than k ratings; once every lease has
/// expired, the items that still have room are rated, and every item ends with exactly k.
async fn two_instances_never_exceed_k(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let other = Db::connect(&db.url).await.expect("a second instance");
    let study = study_with_items(&db, 4).await; // 12 items
    set_k(&db, study, 3).await;
    let pool = assign::ensure_pool(&db, study, 60).await.expect("pool");
    queue_batch(&db, study, pool.clone(), 5, 60, false).await;
    let dbs = Arc::new([db, other]);
    let start = std::time::Instant::now();
    let t0 = now_ms();
    // a clock a hundred times faster than the wall's: a 60 s lease lasts 600 ms, and a vote
    // refused on a lease that still lives would mean its item was claimed beyond k
    let clock = move || t0 + start.elapsed().as_millis() as i64 * 100;
    let mut tasks = Vec::new();
    for (n, a) in pool.iter().copied().enumerate() {
        let dbs = dbs.clone();
        tasks.push(tokio::spawn(async move {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(n as u64);
            let (mut saved, mut refused) = (0, 0);
            for step in 0..12 {
                let claim = assign::next_item(&dbs[(n + step) % 2], study, a, clock()).await;
                let Some(h) = claim.expect("next") else {
                    break;
                };
                if rng.gen_bool(0.2) {
                    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
                }
                // (a stalled machine may let a lease expire without the pause)
                let at = clock();
                let late = h.lease_expires_at.is_some_and(|t| t <= at);
                let token = format!("{a}-{step}");
                let db = &dbs[(n + step + 1) % 2];
                match assign::submit(db, study, a, h.item, &vote(token), at).await {
                    Ok(Submitted::Saved { .. }) => saved += 1,
                    Err(natstudy_core::store::StoreError::Conflict(_)) if late => refused += 1,
                    other => panic!("annotator {a}, item {}: {other:?}", h.item),
                }
                assert_at_most_k(db, study, 3).await;
            }
            (saved, refused)
        }));
    }
    let (mut saved, mut refused) = (0, 0);
    for t in tasks {
        let (s, r) = t.await.expect("annotator");
        (saved, refused) = (saved + s, refused + r);
    }
    let [db, other] = Arc::try_unwrap(dbs)
        .map_err(|_| ())
        .expect("one handle each");
    assert!(
        db.group.stats().jobs > 0 && other.group.stats().jobs > 0,
        "both instances wrote"
    );
    // each instance's writer keeps its own part of the study's data version
    assert_ne!(db.group.shard(), other.group.shard());
    let parts: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT shard, version FROM study_versions WHERE study_id = $1 ORDER BY shard",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await
    .expect("parts");
    assert_eq!(parts.len(), 2, "{parts:?}");
    assert!(parts.iter().all(|&(_, v)| v > 0), "{parts:?}");
    // an hour later every lease has expired: the rest of the room is rated
    let later = clock() + 3_600_000;
    for (n, &a) in pool.iter().enumerate() {
        while let Some(h) = assign::next_item(&db, study, a, later).await.expect("next") {
            let token = format!("{a}-later-{n}-{}", h.item);
            assign::submit(&other, study, a, h.item, &vote(token), later)
                .await
                .expect("vote");
            saved += 1;
        }
    }
    let counts = assign::completed_per_item(&db, study)
        .await
        .expect("counts");
    assert_eq!(counts.len(), 12);
    assert!(counts.iter().all(|&(_, n)| n == 3), "exactly k: {counts:?}");
    assert_eq!(
        saved, 36,
        "every acknowledged vote counted ({refused} refused as late)"
    );
    // both instances' votes counted in the annotators' done counts
    assert_done_counts(&db, study).await;
    other.close().await;
    guard.drop_now(db).await;
}

on_both_stores!(multi_thread: two_instances_never_exceed_k => two_instances_never_exceed_k_sqlite, two_instances_never_exceed_k_postgres);

/// A burst of joins through one invite shares group commits, which write the joins' batch
/// memberships, order seeds and audit rows once per group (lists of several lengths): every
/// participant admitted is a member with its seed and its audit row, every one refused past
/// the cap (its group run again with savepoints) left none, and each member gets an item.
async fn a_burst_of_joins_is_written_whole(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = study_with_items(&db, 4).await;
    let batch = queue_batch(&db, study, vec![], 77, 600, false).await;
    let token = natstudy_core::store::invites::create_invite(&db, study, batch, 45, None)
        .await
        .expect("invite");
    let db = Arc::new(db);
    let joins =
        futures_util::future::join_all((0..50).map(|_| {
            let (db, token) = (db.clone(), token.clone());
            async move {
                natstudy_core::store::invites::join(&db, &token, &Default::default(), None).await
            }
        }))
        .await;
    let admitted: Vec<_> = joins.iter().flatten().map(|e| e.annotator).collect();
    assert_eq!(admitted.len(), 45, "the cap: {joins:?}");
    assert!(joins.iter().filter(|j| j.is_err()).all(|j| matches!(
        j,
        Err(natstudy_core::store::StoreError::Forbidden(m)) if m.contains("used up")
    )));
    let members: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT a.id, a.order_seed FROM batch_annotators ba JOIN annotators a ON a.id = ba.annotator_id \
         WHERE ba.batch_id = $1 ORDER BY a.id",
    )
    .bind(batch)
    .fetch_all(&db.pool)
    .await
    .expect("members");
    let mut ids: Vec<i64> = admitted.iter().map(|a| a.get()).collect();
    ids.sort_unstable();
    assert_eq!(members.iter().map(|m| m.0).collect::<Vec<_>>(), ids);
    for (id, seed) in &members {
        let want = natstudy_engine::assignment::annotator_seed(77, *id) as i64 & i64::MAX;
        assert_eq!(*seed, want, "annotator {id}'s order seed");
    }
    let audited: Vec<String> = sqlx::query_scalar(
        "SELECT detail FROM audit_log WHERE study_id = $1 AND action = 'participant.join' ORDER BY id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await
    .expect("audit");
    let mut codes: Vec<String> =
        sqlx::query_scalar("SELECT code FROM annotators WHERE study_id = $1 ORDER BY id")
            .bind(study)
            .fetch_all(&db.pool)
            .await
            .expect("codes");
    let mut audited_sorted = audited.clone();
    audited_sorted.sort();
    codes.sort();
    assert_eq!(audited_sorted, codes, "one audit row per participant");
    for &a in &admitted {
        let h = assign::next_item(&db, study, a, now_ms())
            .await
            .expect("next");
        assert!(h.is_some(), "participant {a} is in the batch");
    }
    let db = Arc::try_unwrap(db).expect("one handle");
    guard.drop_now(db).await;
}

on_both_stores!(a_burst_of_joins_is_written_whole => a_burst_of_joins_is_written_whole_sqlite, a_burst_of_joins_is_written_whole_postgres);

/// Claims sent together share a group, which finds the queue's front (the first item with room)
/// once: a claim made later than the earliest lease before that front expires must not trust
/// it — the item behind the expired lease is the first with room again.
async fn a_group_sees_leases_expire(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = study_with_items(&db, 1).await; // 3 items
    set_k(&db, study, 1).await;
    let mut pool = assign::ensure_pool(&db, study, 8).await.expect("pool");
    let seed = 3;
    let batch = queue_batch(&db, study, pool.clone(), seed, 60, false).await;
    let items: Vec<i64> = sqlx::query_scalar("SELECT item_id FROM batch_items WHERE batch_id = $1")
        .bind(batch)
        .fetch_all(&db.pool)
        .await
        .expect("items");
    let t0 = now_ms();
    let first = assign::next_item(&db, study, pool[0], t0)
        .await
        .expect("next")
        .expect("the queue's first item");
    // the late claim is made by one whose own order puts that first item first: once every
    // lease expired, it is theirs unless the claim trusted the group's stale front
    let own_first = |a: AnnotatorId| {
        items
            .iter()
            .copied()
            .min_by_key(|&i| assign::own_order(seed, a, ItemId(i)))
    };
    let late_one = (1..pool.len())
        .find(|&i| own_first(pool[i]) == Some(first.item.get()))
        .expect("an annotator who prefers the first item");
    let last = pool.len() - 1;
    pool.swap(late_one, last);
    // six claims while that lease lives (a group large enough to look for the front once),
    // and one after every lease so far has expired
    let db = Arc::new(db);
    let times = [1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 100_000].map(|d| t0 + d);
    let handed = futures_util::future::join_all(pool[1..].iter().zip(times).map(|(&a, t)| {
        let db = db.clone();
        async move { assign::next_item(&db, study, a, t).await.expect("next") }
    }))
    .await;
    let early: Vec<_> = handed[..6].iter().flatten().map(|h| h.item).collect();
    assert_eq!(early.len(), 2, "two items had room: {handed:?}");
    assert!(!early.contains(&first.item), "{handed:?}");
    let late = handed[6].as_ref().expect("the late claim gets an item");
    assert_eq!(
        late.item, first.item,
        "every lease expired: the first item is open again, and the late one's first"
    );
    assert_at_most_k(&db, study, 1).await;
    let db = Arc::try_unwrap(db).expect("one handle");
    guard.drop_now(db).await;
}

on_both_stores!(a_group_sees_leases_expire => a_group_sees_leases_expire_sqlite, a_group_sees_leases_expire_postgres);

/// The dynamic queue never hands an annotator two items of one bug back to back while an item
/// of another bug has room: two bugs of three items each come strictly alternating, whatever
/// the queue's order (when its next items are of the bug just rated, the queue looks further).
async fn the_queue_avoids_the_bug_just_rated(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = study_with_items(&db, 2).await; // 6 items, 3 a bug
    set_k(&db, study, 10).await; // room for every annotator below
    for seed in 1..=8u64 {
        let pool = assign::ensure_pool(&db, study, seed as usize)
            .await
            .expect("pool");
        let a = pool[seed as usize - 1];
        queue_batch(&db, study, vec![a], seed, 600, true).await;
        let mut bugs = Vec::new();
        let mut next = assign::next_item(&db, study, a, now_ms())
            .await
            .expect("next");
        while let Some(h) = next {
            let bug: i64 = sqlx::query_scalar("SELECT bug_id FROM items WHERE id = $1")
                .bind(h.item)
                .fetch_one(&db.pool)
                .await
                .expect("bug");
            bugs.push(bug);
            let v = vote(format!("{a}-{}", h.item));
            // half the annotators take the participant's path: the next item claimed in the
            // vote's own job, which must take the item just rated as the last one
            next = if seed % 2 == 0 {
                assign::submit_then_next(
                    &db,
                    study,
                    a,
                    h.item,
                    &v,
                    now_ms(),
                    assign::Consent::NotAsked,
                )
                .await
                .expect("vote")
                .1
            } else {
                assign::submit(&db, study, a, h.item, &v, now_ms())
                    .await
                    .expect("vote");
                assign::next_item(&db, study, a, now_ms())
                    .await
                    .expect("next")
            };
        }
        assert_eq!(bugs.len(), 6, "seed {seed}: {bugs:?}");
        // the progress bar: every item of the dynamic batch
        assert_eq!(
            assign::progress(&db, study, a).await.expect("progress"),
            (6, 6)
        );
        assert!(
            bugs.windows(2).all(|w| w[0] != w[1]),
            "seed {seed}: the same bug twice in a row: {bugs:?}"
        );
    }
    guard.drop_now(db).await;
}

on_both_stores!(the_queue_avoids_the_bug_just_rated => the_queue_avoids_the_bug_just_rated_sqlite, the_queue_avoids_the_bug_just_rated_postgres);

/// A participant's vote needs its consent — checked in the vote's own query, so a claim made
/// without it (a moved or planned item) is still refused; staff tools vote for the pool's
/// offline annotators, who never consent.
async fn votes_wait_for_consent(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = study_with_items(&db, 1).await; // 3 items
    let pool = assign::ensure_pool(&db, study, 2).await.expect("pool");
    queue_batch(&db, study, pool.clone(), 1, 600, false).await;
    let mut items = Vec::new();
    for &a in &pool {
        let h = assign::next_item(&db, study, a, now_ms())
            .await
            .expect("next")
            .expect("an item");
        items.push(h.item);
    }
    let required = assign::submit_as(
        &db,
        study,
        pool[0],
        items[0],
        &vote("c1".into()),
        now_ms(),
        assign::Consent::Required,
    )
    .await;
    assert!(
        matches!(&required, Err(natstudy_core::store::StoreError::Forbidden(m)) if m.contains("consent")),
        "{required:?}"
    );
    natstudy_core::store::survey::consent(&db, study, pool[0], "{}")
        .await
        .expect("consent");
    for (a, item, consent) in [
        (pool[0], items[0], assign::Consent::Required),
        (pool[1], items[1], assign::Consent::NotAsked),
    ] {
        let r = assign::submit_as(
            &db,
            study,
            a,
            item,
            &vote(format!("{a}")),
            now_ms(),
            consent,
        )
        .await
        .expect("vote");
        assert_eq!(r, Submitted::Saved { revision: 1 });
    }
    guard.drop_now(db).await;
}

on_both_stores!(votes_wait_for_consent => votes_wait_for_consent_sqlite, votes_wait_for_consent_postgres);

/// A vote claims the annotator's next item in the same job (one writer wait, one commit): the
/// claim follows the vote (not the item just rated), is the open claim the queue then hands
/// out, and is nothing when nothing is left. A refused vote claims nothing.
async fn a_vote_claims_the_next_item_with_it(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = study_with_items(&db, 1).await; // 3 items
    let pool = assign::ensure_pool(&db, study, 1).await.expect("pool");
    let me = pool[0];
    queue_batch(&db, study, pool, 1, 600, false).await;
    let first = assign::next_item(&db, study, me, now_ms())
        .await
        .expect("next")
        .expect("an item");
    let leased = || {
        let db = db.clone();
        async move {
            let n: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM assignments WHERE annotator_id = $1 AND status = 'leased'",
            )
            .bind(me.0)
            .fetch_one(&db.pool)
            .await
            .expect("count");
            n
        }
    };
    let then_next = |item, token: &str| {
        let (db, vote) = (db.clone(), vote(token.into()));
        async move {
            assign::submit_then_next(
                &db,
                study,
                me,
                item,
                &vote,
                now_ms(),
                assign::Consent::Required,
            )
            .await
        }
    };
    let refused = then_next(first.item, "t0").await;
    assert!(
        matches!(&refused, Err(natstudy_core::store::StoreError::Forbidden(m)) if m.contains("consent")),
        "{refused:?}"
    );
    assert_eq!(leased().await, 1, "a refused vote claims nothing");
    natstudy_core::store::survey::consent(&db, study, me, "{}")
        .await
        .expect("consent");
    let mut rated = vec![first.item];
    let mut item = first.item;
    loop {
        let jobs = db.group.stats().jobs;
        let (saved, next) = then_next(item, &format!("t{item}")).await.expect("vote");
        assert_eq!(saved, Submitted::Saved { revision: 1 });
        assert_eq!(
            db.group.stats().jobs,
            jobs + 1,
            "the vote and the claim: one job"
        );
        let Some(next) = next else {
            break;
        };
        assert!(!rated.contains(&next.item), "{:?} again", next.item);
        assert_eq!(leased().await, 1, "only the new claim is open");
        let handed = assign::next_item(&db, study, me, now_ms())
            .await
            .expect("next")
            .expect("the open claim");
        assert_eq!(
            (handed.assignment, handed.item),
            (next.assignment, next.item),
            "the queue hands out the vote's claim"
        );
        rated.push(next.item);
        item = next.item;
    }
    assert_eq!(rated.len(), 3, "every item rated once");
    assert_eq!(leased().await, 0);
    guard.drop_now(db).await;
}

on_both_stores!(a_vote_claims_the_next_item_with_it => a_vote_claims_the_next_item_with_it_sqlite, a_vote_claims_the_next_item_with_it_postgres);

/// A vote whose annotator's next planned item filled meanwhile (k lowered, another's vote)
/// claims the one after it in the same job, and the void claim is released.
async fn a_vote_steps_over_a_planned_item_that_filled(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = study_with_items(&db, 1).await; // 3 items
    let pool = assign::ensure_pool(&db, study, 5).await.expect("pool");
    let spec = BatchSpec {
        name: "g".into(),
        strategy: Strategy::FixedGroups,
        filter: ItemFilter::default(),
        annotators: pool.clone(),
        seed: 3,
        lease_secs: 600,
        avoid_same_bug: false,
    };
    assign::create_batch(&db, study, None, &spec)
        .await
        .expect("batch");
    set_k(&db, study, 1).await;
    let (me, other) = (pool[0], pool[1]);
    let order: Vec<i64> = sqlx::query_scalar(
        "SELECT item_id FROM assignments WHERE annotator_id = $1 ORDER BY position, id",
    )
    .bind(me.0)
    .fetch_all(&db.pool)
    .await
    .expect("order");
    assert_eq!(order.len(), 3);
    let first = assign::next_item(&db, study, me, now_ms())
        .await
        .expect("next")
        .expect("an item");
    assert_eq!(first.item.0, order[0]);
    // another annotator of the group fills my second item (k = 1)
    let second = natstudy_vocab::ids::ItemId(order[1]);
    assign::submit(&db, study, other, second, &vote("o1".into()), now_ms())
        .await
        .expect("other's vote");
    let (saved, next) = assign::submit_then_next(
        &db,
        study,
        me,
        first.item,
        &vote("m1".into()),
        now_ms(),
        assign::Consent::NotAsked,
    )
    .await
    .expect("vote");
    assert_eq!(saved, Submitted::Saved { revision: 1 });
    assert_eq!(
        next.map(|h| h.item.0),
        Some(order[2]),
        "the full item is stepped over"
    );
    let status: String = sqlx::query_scalar(
        "SELECT status FROM assignments WHERE annotator_id = $1 AND item_id = $2",
    )
    .bind(me.0)
    .bind(order[1])
    .fetch_one(&db.pool)
    .await
    .expect("status");
    assert_eq!(status, "released");
    assert_at_most_k(&db, study, 1).await;
    guard.drop_now(db).await;
}

on_both_stores!(a_vote_steps_over_a_planned_item_that_filled => a_vote_steps_over_a_planned_item_that_filled_sqlite, a_vote_steps_over_a_planned_item_that_filled_postgres);

async fn fixed_groups_and_drop_outs(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = study_with_items(&db, 4).await; // 12 items
    let pool = assign::ensure_pool(&db, study, 11).await.expect("pool"); // 2 groups of 5 + 1 reserve
    let spec = BatchSpec {
        name: "groups".into(),
        strategy: Strategy::FixedGroups,
        filter: ItemFilter::default(),
        annotators: pool.clone(),
        seed: 5,
        lease_secs: 1200,
        avoid_same_bug: true,
    };
    let info = assign::create_batch(&db, study, None, &spec)
        .await
        .expect("batch");
    assert_eq!((info.items, info.assignments), (12, 60));
    assert_kept_counts(&db, study).await;
    for &a in &pool[..10] {
        assert_eq!(
            assign::progress(&db, study, a).await.expect("progress"),
            (0, 6)
        );
    }
    // the reserve has nothing while everything is planned
    assert_eq!(
        assign::next_item(&db, study, pool[10], now_ms())
            .await
            .expect("next"),
        None
    );
    // everyone but S3 and S4 rates everything; their order never repeats a bug back to back
    for (i, &a) in pool[..10].iter().enumerate() {
        if i == 2 || i == 3 {
            continue;
        }
        let mut last_bug = None;
        while let Some(h) = assign::next_item(&db, study, a, now_ms())
            .await
            .expect("next")
        {
            let bug: i64 = sqlx::query_scalar("SELECT bug_id FROM items WHERE id = $1")
                .bind(h.item)
                .fetch_one(&db.pool)
                .await
                .expect("bug");
            assert_ne!(Some(bug), last_bug, "same bug twice in a row");
            last_bug = Some(bug);
            assign::submit(
                &db,
                study,
                a,
                h.item,
                &vote(format!("{a}-{}", h.item)),
                now_ms(),
            )
            .await
            .expect("vote");
        }
    }
    // S3 drops out: released items go to the pool and the reserve takes them
    let released = assign::release(&db, study, pool[2], None)
        .await
        .expect("release");
    assert_eq!(released, 6);
    assert_kept_counts(&db, study).await;
    assert_eq!(
        assign::progress(&db, study, pool[2])
            .await
            .expect("progress"),
        (0, 0)
    );
    let mut reserve = 0;
    while let Some(h) = assign::next_item(&db, study, pool[10], now_ms())
        .await
        .expect("next")
    {
        assign::submit(
            &db,
            study,
            pool[10],
            h.item,
            &vote(format!("r-{}", h.item)),
            now_ms(),
        )
        .await
        .expect("vote");
        reserve += 1;
    }
    assert_eq!(reserve, 6);
    // the reserve's claims in the groups' batch count as its plan
    assert_kept_counts(&db, study).await;
    assert_eq!(
        assign::progress(&db, study, pool[10])
            .await
            .expect("progress"),
        (6, 6)
    );
    // S4's unfinished items move to S6 (the other group, who has none of them)
    let moved = assign::move_unrated(&db, study, pool[3], pool[5], None)
        .await
        .expect("move");
    assert_eq!(moved, 6);
    assert_eq!(
        assign::progress(&db, study, pool[5])
            .await
            .expect("progress"),
        (6, 12)
    );
    assert_eq!(
        assign::progress(&db, study, pool[3])
            .await
            .expect("progress"),
        (0, 0)
    );
    assert_kept_counts(&db, study).await;
    // the moved items follow S6's own, each at a place of its own
    let order: Vec<(i64, String)> = sqlx::query_as(
        "SELECT position, status FROM assignments WHERE annotator_id = $1 ORDER BY position, id",
    )
    .bind(pool[5])
    .fetch_all(&db.pool)
    .await
    .expect("order");
    let statuses: Vec<&str> = order.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(
        statuses,
        [vec!["done"; 6], vec!["assigned"; 6]].concat(),
        "{order:?}"
    );
    assert!(order.windows(2).all(|w| w[0].0 < w[1].0), "{order:?}");
    while let Some(h) = assign::next_item(&db, study, pool[5], now_ms())
        .await
        .expect("next")
    {
        assign::submit(
            &db,
            study,
            pool[5],
            h.item,
            &vote(format!("m-{}", h.item)),
            now_ms(),
        )
        .await
        .expect("vote");
    }
    let counts = assign::completed_per_item(&db, study)
        .await
        .expect("counts");
    assert!(counts.iter().all(|&(_, n)| n == 5), "{counts:?}");
    let audit = natstudy_core::store::audit::for_study(&db, study, 10)
        .await
        .expect("audit");
    assert!(audit.iter().any(|a| a.action == "annotator.release"));
    assert!(audit.iter().any(|a| a.action == "annotator.move"));
    assert_done_counts(&db, study).await;
    guard.drop_now(db).await;
}

#[tokio::test]
async fn fixed_groups_and_drop_outs_sqlite() {
    fixed_groups_and_drop_outs(Store::Sqlite).await;
}

#[tokio::test]
async fn fixed_groups_and_drop_outs_postgres() {
    fixed_groups_and_drop_outs(Store::Postgres).await;
}

async fn revisions_are_kept(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = study_with_items(&db, 1).await;
    let pool = assign::ensure_pool(&db, study, 5).await.expect("pool");
    let spec = BatchSpec {
        name: "r".into(),
        strategy: Strategy::FixedGroups,
        filter: ItemFilter::default(),
        annotators: pool.clone(),
        seed: 2,
        lease_secs: 60,
        avoid_same_bug: false,
    };
    assign::create_batch(&db, study, None, &spec)
        .await
        .expect("batch");
    let item = rate_next(&db, study, pool[0], "t1").await;
    let v = natstudy_tests::test_vote("t2", 4, 3, Some(4.0));
    assert_eq!(
        assign::submit(&db, study, pool[0], item, &v, now_ms())
            .await
            .expect("revise"),
        Submitted::Saved { revision: 2 }
    );
    let (cr, rev): (i64, i64) =
        sqlx::query_as("SELECT cr, revision FROM votes WHERE item_id = $1 AND annotator_id = $2")
            .bind(item)
            .bind(pool[0])
            .fetch_one(&db.pool)
            .await
            .expect("vote");
    assert_eq!((cr, rev), (4, 2));
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM vote_revisions WHERE item_id = $1")
        .bind(item)
        .fetch_one(&db.pool)
        .await
        .expect("n");
    assert_eq!(n, 2, "both revisions kept");
    // an item never handed out is refused
    let other: i64 = sqlx::query_scalar("SELECT id FROM items WHERE id <> $1 LIMIT 1")
        .bind(item)
        .fetch_one(&db.pool)
        .await
        .expect("id");
    let _ = other;
    guard.drop_now(db).await;
}

#[tokio::test]
async fn revisions_are_kept_sqlite() {
    revisions_are_kept(Store::Sqlite).await;
}

#[tokio::test]
async fn revisions_are_kept_postgres() {
    revisions_are_kept(Store::Postgres).await;
}

/// Votes and claims sent together share one group commit: a vote refused in the group (an item
/// never handed out, a resent token) leaves the others saved and acknowledged, and the queue's
/// index follows k — items that reached k leave the queue, and come back when k is raised.
async fn grouped_writes_fail_alone_and_the_queue_follows_k(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = study_with_items(&db, 4).await; // 12 items
    let mut settings = natstudy_core::service::studies::settings(&db, study)
        .await
        .expect("settings");
    settings.ratings_per_item = 2;
    natstudy_core::service::studies::update_settings(&db, study, None, &settings)
        .await
        .expect("k = 2");
    let pool = assign::ensure_pool(&db, study, 40).await.expect("pool");
    queue_batch(&db, study, pool.clone(), 5, 600, false).await;
    // 40 claims at once: 12 items × k = 2 leave room for 24
    let db = Arc::new(db);
    let claims = futures_util::future::join_all(pool.iter().map(|&a| {
        let db = db.clone();
        async move { (a, assign::next_item(&db, study, a, now_ms()).await) }
    }))
    .await;
    let handed: Vec<_> = claims
        .into_iter()
        .filter_map(|(a, h)| h.expect("claim").map(|h| (a, h.item)))
        .collect();
    assert_eq!(handed.len(), 24, "k × items claims, no more");
    let stranger = pool
        .iter()
        .copied()
        .find(|a| !handed.iter().any(|(b, _)| b == a))
        .expect("an annotator without an item");
    // every holder votes at once; a stranger votes on an item never handed to it, and one
    // holder resends its vote: in the same groups
    let mut sends = Vec::new();
    for (n, &(a, item)) in handed.iter().enumerate() {
        sends.push((a, item, format!("v{n}")));
    }
    sends.push((stranger, handed[0].1, "x".into()));
    sends.push((handed[1].0, handed[1].1, "v1".into()));
    let before = db.group.stats();
    let version_before = natstudy_core::store::studies::data_version(&db, study)
        .await
        .expect("version");
    // each send at its own time, later than every claim: the annotators' `last_active`
    // (written once per group) must say exactly when each acted last
    let t0 = now_ms() + 60_000;
    let results =
        futures_util::future::join_all(sends.iter().enumerate().map(|(n, (a, item, token))| {
            let db = db.clone();
            async move {
                assign::submit(&db, study, *a, *item, &vote(token.clone()), t0 + n as i64).await
            }
        }))
        .await;
    let saved = results
        .iter()
        .filter(|r| matches!(r, Ok(Submitted::Saved { revision: 1 })))
        .count();
    let duplicates = results
        .iter()
        .filter(|r| matches!(r, Ok(Submitted::Duplicate { .. })))
        .count();
    assert_eq!(saved + duplicates, 25, "{results:?}");
    assert_eq!(saved, 24, "{results:?}");
    let after = db.group.stats();
    assert_eq!(after.jobs - before.jobs, 26);
    assert!(
        after.groups - before.groups < 26,
        "votes sent together share transactions: {before:?} → {after:?}"
    );
    // the stranger's refusal is an answer, not a failure: it wrote nothing, so its group
    // commits as it ran, without a second run in savepoints
    assert_eq!(
        after.reruns, before.reruns,
        "a refused vote makes no group run again: {before:?} → {after:?}"
    );
    assert!(
        matches!(
            results[24],
            Err(natstudy_core::store::StoreError::Forbidden(_))
        ),
        "{:?}",
        results[24]
    );
    assert_done_counts(&db, study).await;
    let last_active = |a: natstudy_vocab::ids::AnnotatorId| {
        let db = db.clone();
        async move {
            sqlx::query_scalar::<_, Option<i64>>("SELECT last_active FROM annotators WHERE id = $1")
                .bind(a)
                .fetch_one(&db.pool)
                .await
                .expect("last_active")
        }
    };
    for (n, &(a, _)) in handed.iter().enumerate() {
        assert_eq!(last_active(a).await, Some(t0 + n as i64), "annotator {a}");
    }
    let stranger_seen = last_active(stranger).await;
    assert!(
        stranger_seen.is_none_or(|t| t < t0),
        "a refused vote does not count as activity: {stranger_seen:?}"
    );
    let version_after = natstudy_core::store::studies::data_version(&db, study)
        .await
        .expect("version");
    assert!(
        version_after > version_before
            && version_after - version_before <= (after.groups - before.groups) as i64,
        "the data version moves on once per group with votes: {version_before} → {version_after}"
    );
    let counts = assign::completed_per_item(&db, study)
        .await
        .expect("counts");
    assert!(counts.iter().all(|(_, n)| *n == 2), "{counts:?}");
    // every item has k: nothing left, and the index says so
    assert!(assign::next_item(&db, study, stranger, now_ms())
        .await
        .expect("next")
        .is_none());
    let open: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM batch_items WHERE rated_full = 0")
        .fetch_one(&db.pool)
        .await
        .expect("open");
    assert_eq!(open, 0);
    // k = 3: every item has room again
    settings.ratings_per_item = 3;
    natstudy_core::service::studies::update_settings(&db, study, None, &settings)
        .await
        .expect("k = 3");
    assert!(assign::next_item(&db, study, stranger, now_ms())
        .await
        .expect("next")
        .is_some());
    let db = Arc::try_unwrap(db).expect("one handle");
    guard.drop_now(db).await;
}

#[tokio::test]
async fn grouped_writes_fail_alone_and_the_queue_follows_k_sqlite() {
    grouped_writes_fail_alone_and_the_queue_follows_k(Store::Sqlite).await;
}

#[tokio::test]
async fn grouped_writes_fail_alone_and_the_queue_follows_k_postgres() {
    grouped_writes_fail_alone_and_the_queue_follows_k(Store::Postgres).await;
}

/// A group-commit job that reads one setting on the group's connection.
struct ShowSetting {
    name: &'static str,
    value: Option<String>,
    reply: Option<tokio::sync::oneshot::Sender<Option<String>>>,
}

impl natstudy_core::store::group_commit::Job<natstudy_core::store::group_commit::shared::Shared>
    for ShowSetting
{
    fn lock(&self) -> Option<i64> {
        None
    }

    fn run<'c>(
        &'c mut self,
        conn: &'c mut sqlx::AnyConnection,
        _shared: &'c mut natstudy_core::store::group_commit::shared::Shared,
    ) -> futures_util::future::BoxFuture<'c, bool> {
        Box::pin(async move {
            let sql = format!("SELECT current_setting('{}')", self.name);
            self.value = sqlx::query_scalar::<_, String>(&sql)
                .fetch_one(&mut *conn)
                .await
                .ok();
            self.value.is_some()
        })
    }

    fn finish(mut self: Box<Self>, _commit: Result<(), &sqlx::Error>) {
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(self.value.take());
        }
    }
}

/// PostgreSQL: the writer's statements are planned once, not at every execution
/// (`group_commit::PLANNED_ONCE` on its own connection) without sequential scans where an index
/// serves (`group_commit::NO_SCANS`), while the pool's keep PostgreSQL's
/// default. With the tables analysed, re-planning at every bind halved the votes per second.
#[tokio::test]
async fn the_writer_plans_its_statements_once_postgres() {
    let (db, guard) = fresh_db(Store::Postgres).await.expect("db");
    let (reply, answer) = tokio::sync::oneshot::channel();
    db.grouped(Box::new(ShowSetting {
        name: "plan_cache_mode",
        value: None,
        reply: Some(reply),
    }))
    .await;
    let writer = answer.await.expect("answer");
    assert_eq!(writer.as_deref(), Some("force_generic_plan"));
    let pool: String = sqlx::query_scalar("SELECT current_setting('plan_cache_mode')")
        .fetch_one(&db.pool)
        .await
        .expect("pool setting");
    assert_eq!(pool, "auto");
    // nor does it scan where an index serves; the pool's connections (reports) may
    let (reply, answer) = tokio::sync::oneshot::channel();
    db.grouped(Box::new(ShowSetting {
        name: "enable_seqscan",
        value: None,
        reply: Some(reply),
    }))
    .await;
    assert_eq!(answer.await.expect("answer").as_deref(), Some("off"));
    let pool: String = sqlx::query_scalar("SELECT current_setting('enable_seqscan')")
        .fetch_one(&db.pool)
        .await
        .expect("pool setting");
    assert_eq!(pool, "on");
    guard.drop_now(db).await;
}

/// PostgreSQL: a pooled connection plans its statements again once a period
/// (`db::REPLAN`): a generic plan made while a table was analysed empty (a scan) is not
/// kept while the table grows to 100,000 rows, as it was until an `ANALYZE` came.
#[tokio::test]
async fn pooled_connections_plan_again_as_tables_grow_postgres() {
    let (db, guard) = fresh_db(Store::Postgres).await.expect("db");
    async fn plan(c: &mut sqlx::AnyConnection) -> String {
        let lines: Vec<String> = sqlx::query_scalar("EXPLAIN EXECUTE by_k(1)")
            .fetch_all(&mut *c)
            .await
            .expect("explain");
        lines.join("\n")
    }
    async fn pid_of(c: &mut sqlx::AnyConnection) -> Result<i32, sqlx::Error> {
        sqlx::query_scalar("SELECT pg_backend_pid()")
            .fetch_one(&mut *c)
            .await
    }
    let mut c = db.pool.acquire().await.expect("connection");
    sqlx::raw_sql(
        "CREATE TABLE growing (id BIGSERIAL PRIMARY KEY, k BIGINT NOT NULL); \
         CREATE INDEX growing_k ON growing (k); ANALYZE growing; \
         PREPARE by_k(BIGINT) AS SELECT COUNT(*) FROM growing WHERE k = $1",
    )
    .execute(&mut *c)
    .await
    .expect("table");
    for _ in 0..6 {
        sqlx::raw_sql("EXECUTE by_k(1)")
            .execute(&mut *c)
            .await
            .expect("execute");
    }
    let before = plan(&mut c).await;
    assert!(
        before.contains("Seq Scan") && before.contains("$1"),
        "a generic plan for an empty table: {before}"
    );
    let pid = pid_of(&mut c).await.expect("pid");
    sqlx::raw_sql("INSERT INTO growing (k) SELECT g % 1000 FROM generate_series(1, 100000) g")
        .execute(&mut *c)
        .await
        .expect("grow");
    drop(c);
    tokio::time::sleep(natstudy_core::db::REPLAN + std::time::Duration::from_millis(300)).await;
    // the same connection out of the pool again (the others held meanwhile)
    let mut held = Vec::new();
    let mut same = None;
    for _ in 0..16 {
        let mut c = db.pool.acquire().await.expect("connection");
        if pid_of(&mut c).await.expect("pid") == pid {
            same = Some(c);
            break;
        }
        held.push(c);
    }
    let mut c = same.expect("the connection that prepared the statement");
    let after = plan(&mut c).await;
    assert!(
        !after.contains("Seq Scan"),
        "planned again for 100,000 rows: {after}"
    );
    drop((c, held));
    guard.drop_now(db).await;
}

/// The list of an annotator's rated items comes a page at a time, in rating order: full pages
/// of `REVIEW_PAGE`, then the rest; a page past the last is the last; the count is of every
/// vote; and the list is of the annotator's own study only.
async fn rated_items_come_a_page_at_a_time(store: Store) {
    use natstudy_core::store::my_votes::{my_votes, REVIEW_PAGE};
    let (db, guard) = fresh_db(store).await.expect("db");
    let per = REVIEW_PAGE as usize;
    // two pages and a half
    let n = 2 * per + per / 2;
    let study = study_with_items(&db, n.div_ceil(3)).await;
    let pool = assign::ensure_pool(&db, study, 2).await.expect("pool");
    queue_batch(&db, study, pool.clone(), 5, 600, false).await;
    let mut order = Vec::new();
    for i in 0..n {
        order.push(rate_next(&db, study, pool[0], &format!("t{i}")).await);
    }
    // the other annotator's vote is not on the list
    rate_next(&db, study, pool[1], "other").await;
    let items = |page: &natstudy_core::store::my_votes::MyVotes| {
        page.rows.iter().map(|r| r.0).collect::<Vec<_>>()
    };
    let first = my_votes(&db, study, pool[0], 0).await.expect("page 1");
    assert_eq!((first.page, first.total), (0, n as i64));
    assert_eq!(items(&first), order[..per]);
    assert_eq!(
        (first.rows[0].2, first.rows[0].3, first.rows[0].1.as_str()),
        (2, 3, "s"),
        "answers and summary"
    );
    let second = my_votes(&db, study, pool[0], 1).await.expect("page 2");
    assert_eq!(items(&second), order[per..2 * per]);
    let last = my_votes(&db, study, pool[0], 2).await.expect("page 3");
    assert_eq!((last.page, items(&last)), (2, order[2 * per..].to_vec()));
    for past in [3, 1_000_000, i64::MAX] {
        let clamped = my_votes(&db, study, pool[0], past).await.expect("past");
        assert_eq!(clamped, last, "page {past} is the last");
    }
    let before = my_votes(&db, study, pool[0], -5).await.expect("before");
    assert_eq!(before, first);
    // the annotator in another study: nothing, and page 0
    let elsewhere = natstudy_core::store::studies::create(&db, None, "other", "")
        .await
        .expect("study");
    let none = my_votes(&db, elsewhere, pool[0], 4).await.expect("none");
    assert_eq!((none.rows.len(), none.page, none.total), (0, 0, 0));
    guard.drop_now(db).await;
}

on_both_stores!(rated_items_come_a_page_at_a_time => rated_items_come_a_page_at_a_time_sqlite, rated_items_come_a_page_at_a_time_postgres);

/// Where an annotator's claims in a batch begin to look (`annotators.own_from`, when it is of
/// that batch).
async fn own_from(
    db: &Db,
    batch: natstudy_vocab::ids::BatchId,
    a: natstudy_vocab::ids::AnnotatorId,
) -> Option<i64> {
    sqlx::query_scalar(
        "SELECT CASE WHEN own_batch = $1 THEN own_from END FROM annotators WHERE id = $2",
    )
    .bind(batch)
    .bind(a)
    .fetch_one(&db.pool)
    .await
    .expect("own_from")
}

/// A study with a dynamic queue for two annotators ([`queue_of_two`]).
struct QueueOfTwo {
    db: Db,
    guard: natstudy_tests::DbGuard,
    study: StudyId,
    batch: natstudy_vocab::ids::BatchId,
    /// The items' `(id, rank)` in the queue's order.
    order: Vec<(i64, i64)>,
    a: natstudy_vocab::ids::AnnotatorId,
    b: natstudy_vocab::ids::AnnotatorId,
}

/// A study of `bugs` bugs (3 items each) at k = `k`, with a dynamic queue (seed `seed`, leases
/// of a minute, no avoid-same-bug) for two annotators.
async fn queue_of_two(store: Store, bugs: usize, k: i64, seed: u64) -> QueueOfTwo {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = study_with_items(&db, bugs).await;
    set_k(&db, study, k).await;
    let pool = assign::ensure_pool(&db, study, 2).await.expect("pool");
    let batch = queue_batch(&db, study, pool.clone(), seed, 60, false).await;
    let order: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT item_id, queue_rank FROM batch_items WHERE batch_id = $1 ORDER BY queue_rank",
    )
    .bind(batch)
    .fetch_all(&db.pool)
    .await
    .expect("order");
    QueueOfTwo {
        db,
        guard,
        study,
        batch,
        order,
        a: pool[0],
        b: pool[1],
    }
}

/// The queue's choice for annotator `a` of a batch of seed `seed`: among the first
/// [`assign::QUEUE_WINDOW`] items of the queue's `order` that are `open` to them, the first in
/// their own order ([`assign::own_order`]).
fn queue_choice(
    order: &[(i64, i64)],
    open: impl Fn(i64) -> bool,
    seed: u64,
    a: AnnotatorId,
) -> i64 {
    order
        .iter()
        .map(|&(item, _)| item)
        .filter(|&i| open(i))
        .take(assign::QUEUE_WINDOW as usize)
        .min_by_key(|&i| assign::own_order(seed, a, ItemId(i)))
        .expect("an open item")
}

/// The rank of the first item of the queue's `order` that is `open`.
fn first_open(order: &[(i64, i64)], open: impl Fn(i64) -> bool) -> i64 {
    order
        .iter()
        .find(|&&(item, _)| open(item))
        .map(|&(_, rank)| rank)
        .expect("an open item")
}

/// An annotator ahead of the others — whose rated items still have room for others — begins
/// to look at the first item that is not theirs, not at the queue's front: the rank moves on
/// with their claims. A lease of theirs that expired and was reclaimed is theirs to take again:
/// the reclaim sets the rank back, and that item is in their window again. Every claim is the
/// queue's choice: the first in the annotator's own order among the window of the first items
/// open to them.
async fn a_claim_looks_from_where_the_annotator_is(store: Store) {
    // 12 items at k = 2
    let seed = 9;
    let QueueOfTwo {
        db,
        guard,
        study,
        batch,
        order,
        a,
        b,
    } = queue_of_two(store, 4, 2, seed).await;
    let mut ratings: HashMap<i64, i64> = HashMap::new();
    // B rates two, its own choice each: full at k = 2 once A has rated them too
    for i in 0..2 {
        let open = |it: i64| !ratings.contains_key(&it);
        let expected = queue_choice(&order, open, seed, b);
        let got = rate_next(&db, study, b, &format!("b{i}")).await.get();
        assert_eq!(got, expected, "B's claim {i}");
        ratings.insert(got, 1);
    }
    // A alone rates four; each claim the queue's choice among the items not A's with room
    let t0 = now_ms();
    let mut mine: HashSet<i64> = HashSet::new();
    let open_to_a = |mine: &HashSet<i64>, ratings: &HashMap<i64, i64>, it: i64| {
        !mine.contains(&it) && ratings.get(&it).copied().unwrap_or(0) < 2
    };
    let mut seen = Vec::new();
    for i in 0..4 {
        let expected = queue_choice(&order, |it| open_to_a(&mine, &ratings, it), seed, a);
        let h = claim_at(&db, study, a, t0).await;
        assert_eq!(h.item.get(), expected, "A's claim {i}");
        assign::submit(&db, study, a, h.item, &vote(format!("a{i}")), t0)
            .await
            .expect("vote");
        mine.insert(expected);
        *ratings.entry(expected).or_default() += 1;
        seen.push(expected);
    }
    // A's own order is not the queue's: four items of its window in another order
    let queue_order: Vec<i64> = order
        .iter()
        .map(|&(it, _)| it)
        .filter(|it| seen.contains(it))
        .collect();
    assert_ne!(seen, queue_order, "A's claims in the queue's order");
    let own = first_open(&order, |it| open_to_a(&mine, &ratings, it));
    let expected = queue_choice(&order, |it| open_to_a(&mine, &ratings, it), seed, a);
    let fifth = claim_at(&db, study, a, t0).await;
    assert_eq!(fifth.item.get(), expected);
    assert_eq!(own_from(&db, batch, a).await, Some(own));
    mine.insert(expected);
    // the fifth lease expires unrated; A's next claim passes it (still A's) and moves on
    let later = t0 + 61_000;
    let own = first_open(&order, |it| open_to_a(&mine, &ratings, it));
    let expected = queue_choice(&order, |it| open_to_a(&mine, &ratings, it), seed, a);
    let sixth = claim_at(&db, study, a, later).await;
    assert_eq!(sixth.item.get(), expected);
    assert_eq!(own_from(&db, batch, a).await, Some(own));
    assign::submit(&db, study, a, sixth.item, &vote("a5".into()), later)
        .await
        .expect("vote");
    mine.insert(expected);
    *ratings.entry(expected).or_default() += 1;
    // reclaimed, the fifth is open to A again and in its window
    assert_eq!(
        assign::reclaim_expired(&db, study, later)
            .await
            .expect("reclaim"),
        1
    );
    assert_eq!(own_from(&db, batch, a).await, None);
    mine.remove(&fifth.item.get());
    let window: Vec<i64> = order
        .iter()
        .map(|&(it, _)| it)
        .filter(|&it| open_to_a(&mine, &ratings, it))
        .take(assign::QUEUE_WINDOW as usize)
        .collect();
    assert!(
        window.contains(&fifth.item.get()),
        "the reclaimed item in A's window"
    );
    let expected = queue_choice(&order, |it| open_to_a(&mine, &ratings, it), seed, a);
    let again = claim_at(&db, study, a, later).await;
    assert_eq!(again.item.get(), expected);
    assign::submit(&db, study, a, again.item, &vote("a4".into()), later)
        .await
        .expect("vote");
    assert_done_counts(&db, study).await;
    guard.drop_now(db).await;
}

on_both_stores!(a_claim_looks_from_where_the_annotator_is => a_claim_looks_from_where_the_annotator_is_sqlite, a_claim_looks_from_where_the_annotator_is_postgres);

/// Items with k ratings are passed by where an annotator's claims begin to look; once k is
/// raised they have room again, and the annotator's next claim looks at them again.
async fn items_with_room_again_are_looked_at_again(store: Store) {
    // 6 items at k = 1
    let seed = 4;
    let QueueOfTwo {
        db,
        guard,
        study,
        batch,
        order,
        a,
        b,
    } = queue_of_two(store, 2, 1, seed).await;
    let mut full: HashSet<i64> = HashSet::new();
    for i in 0..3 {
        full.insert(rate_next(&db, study, a, &format!("k{i}")).await.get());
    }
    let by_a = full.clone();
    // B finds A's three full: its claims take two of the other three, its own choice each
    let mut mine: HashSet<i64> = HashSet::new();
    let mut own = 0;
    for i in 0..2 {
        let open = |it: i64| !full.contains(&it) && !mine.contains(&it);
        own = first_open(&order, open);
        let expected = queue_choice(&order, open, seed, b);
        assert!(!by_a.contains(&expected));
        assert_eq!(
            rate_next(&db, study, b, &format!("l{i}")).await.get(),
            expected
        );
        full.insert(expected);
        mine.insert(expected);
    }
    assert_eq!(own_from(&db, batch, b).await, Some(own));
    let mut settings = natstudy_core::store::survey::study_settings(&db, study)
        .await
        .expect("settings");
    settings.ratings_per_item = 2;
    natstudy_core::store::monitor::update_settings(&db, study, None, &settings)
        .await
        .expect("k = 2");
    assert_eq!(own_from(&db, batch, b).await, None);
    // every item but B's own has room again: B's choice is among A's three and the last one
    let expected = queue_choice(&order, |it| !mine.contains(&it), seed, b);
    let first = claim_at(&db, study, b, now_ms()).await;
    assert_eq!(first.item.get(), expected);
    assert!(
        by_a.contains(&expected),
        "an item of A's, with room again (seed {seed})"
    );
    assert_done_counts(&db, study).await;
    guard.drop_now(db).await;
}

on_both_stores!(items_with_room_again_are_looked_at_again => items_with_room_again_are_looked_at_again_sqlite, items_with_room_again_are_looked_at_again_postgres);

/// The participants who share the queue's front items meet them each in their own order:
/// with the queue's order alone, the first k participants of a study with N items each got the
/// same items in the same order, an item at the same place in every session. Every claim stays
/// in the window at the queue's front (items fill to k from the front) and no item gets more
/// than k.
async fn participants_meet_the_front_items_in_their_own_order(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = study_with_items(&db, 4).await; // 12 items
    set_k(&db, study, 3).await;
    let pool = assign::ensure_pool(&db, study, 3).await.expect("pool");
    let seed = 11;
    let batch = queue_batch(&db, study, pool.clone(), seed, 600, false).await;
    let order: Vec<i64> = sqlx::query_scalar(
        "SELECT item_id FROM batch_items WHERE batch_id = $1 ORDER BY queue_rank",
    )
    .bind(batch)
    .fetch_all(&db.pool)
    .await
    .expect("order");
    let order: Vec<(i64, i64)> = order.into_iter().zip(0..).collect();
    let mut sessions = Vec::new();
    for (p, &a) in pool.iter().enumerate() {
        let mut session: Vec<i64> = Vec::new();
        for i in 0..4 {
            // k = 3 and three participants: every item is open to each but their own; the
            // window the first 8 of those
            let expected = queue_choice(&order, |it| !session.contains(&it), seed, a);
            let got = rate_next(&db, study, a, &format!("p{p}-{i}")).await.get();
            assert_eq!(got, expected, "participant {p}'s claim {i}");
            session.push(got);
        }
        sessions.push(session);
    }
    let firsts: HashSet<i64> = sessions.iter().map(|s| s[0]).collect();
    assert!(
        firsts.len() > 1,
        "every session begins with the same item: {sessions:?}"
    );
    assert!(
        sessions.windows(2).all(|w| w[0] != w[1]),
        "two sessions alike: {sessions:?}"
    );
    assert_at_most_k(&db, study, 3).await;
    assert_done_counts(&db, study).await;
    guard.drop_now(db).await;
}

on_both_stores!(participants_meet_the_front_items_in_their_own_order => participants_meet_the_front_items_in_their_own_order_sqlite, participants_meet_the_front_items_in_their_own_order_postgres);

/// The database as it was before migration `version`, which added `column` to `annotators`:
/// the column dropped and the migration forgotten; then the next instance to start
/// (`Db::connect`) migrates it again.
async fn migrated_again(db: Db, guard: &natstudy_tests::DbGuard, column: &str, version: i64) -> Db {
    {
        let mut w = db.write().await.expect("write");
        sqlx::query(&format!("ALTER TABLE annotators DROP COLUMN {column}"))
            .execute(&mut *w)
            .await
            .expect("drop");
        sqlx::query("DELETE FROM _sqlx_migrations WHERE version = $1")
            .bind(version)
            .execute(&mut *w)
            .await
            .expect("forget");
    }
    let url = guard.url().expect("url");
    db.close().await;
    Db::connect(&url).await.expect("migrated again")
}

/// A database made before migration 0015 gets each annotator's done count from the
/// assignments done there: the column taken away (and the migration forgotten), the instance
/// that starts next migrates it back with the counts, and the progress bar reads them.
async fn the_done_count_migration_counts_what_was_done(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = study_with_items(&db, 3).await; // 9 items
    let pool = assign::ensure_pool(&db, study, 3).await.expect("pool");
    queue_batch(&db, study, pool.clone(), 5, 600, false).await;
    for (n, &a) in pool.iter().enumerate() {
        for i in 0..=n {
            rate_next(&db, study, a, &format!("{a}-{i}")).await;
        }
    }
    // one more claimed, not rated: not done
    assign::next_item(&db, study, pool[0], now_ms())
        .await
        .expect("next")
        .expect("an item");
    let db = migrated_again(db, &guard, "done_count", 15).await;
    let kept: Vec<i64> =
        sqlx::query_scalar("SELECT done_count FROM annotators WHERE study_id = $1 ORDER BY id")
            .bind(study)
            .fetch_all(&db.pool)
            .await
            .expect("counts");
    assert_eq!(kept, vec![1, 2, 3]);
    assert_done_counts(&db, study).await;
    for (n, &a) in pool.iter().enumerate() {
        let (done, _) = assign::progress(&db, study, a).await.expect("progress");
        assert_eq!(done, n as i64 + 1);
    }
    // and the next vote adds to it
    rate_next(&db, study, pool[0], "after").await;
    let (done, _) = assign::progress(&db, study, pool[0])
        .await
        .expect("progress");
    assert_eq!(done, 2);
    assert_done_counts(&db, study).await;
    guard.drop_now(db).await;
}

on_both_stores!(the_done_count_migration_counts_what_was_done => the_done_count_migration_counts_what_was_done_sqlite, the_done_count_migration_counts_what_was_done_postgres);

/// A database made before migration 0016 gets each annotator's fixed-group count from its
/// assignments there (planned, leased or done, in fixed-group batches; released ones not), and
/// the progress bar's total reads it: the column taken away and the migration forgotten, the
/// instance that starts next migrates it back.
async fn the_fixed_count_migration_counts_the_plans(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = study_with_items(&db, 2).await; // 6 items
    let pool = assign::ensure_pool(&db, study, 10).await.expect("pool"); // 2 groups of 5
    let spec = BatchSpec {
        name: "groups".into(),
        strategy: Strategy::FixedGroups,
        filter: ItemFilter::default(),
        annotators: pool.clone(),
        seed: 3,
        lease_secs: 1200,
        avoid_same_bug: true,
    };
    assign::create_batch(&db, study, None, &spec)
        .await
        .expect("batch");
    rate_next(&db, study, pool[0], "a").await;
    rate_next(&db, study, pool[1], "b").await;
    assign::release(&db, study, pool[1], None)
        .await
        .expect("release");
    let before: Vec<(i64, i64)> =
        futures_util::future::try_join_all(pool.iter().map(|&a| assign::progress(&db, study, a)))
            .await
            .expect("progress");
    assert_eq!(&before[..2], &[(1, 3), (1, 1)]);
    let db = migrated_again(db, &guard, "fixed_count", 16).await;
    assert_done_counts(&db, study).await;
    let after: Vec<(i64, i64)> =
        futures_util::future::try_join_all(pool.iter().map(|&a| assign::progress(&db, study, a)))
            .await
            .expect("progress");
    assert_eq!(after, before);
    guard.drop_now(db).await;
}

on_both_stores!(the_fixed_count_migration_counts_the_plans => the_fixed_count_migration_counts_the_plans_sqlite, the_fixed_count_migration_counts_the_plans_postgres);

/// PostgreSQL: an annotator's votes (the participant's list of rated items) are read through
/// `votes_annotator` (migration 0014): the index is there and valid, and the query's plan
/// searches it, then each vote's item by its key — whatever the statistics, as no `ANALYZE`
/// has run yet.
#[tokio::test]
async fn my_votes_come_from_the_annotator_index_postgres() {
    let (db, guard) = fresh_db(Store::Postgres).await.expect("db");
    let valid: Vec<bool> = sqlx::query_scalar(
        "SELECT x.indisvalid FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid \
         WHERE c.relname = 'votes_annotator'",
    )
    .fetch_all(&db.pool)
    .await
    .expect("index");
    assert_eq!(valid, vec![true]);
    // on empty tables a scan is as cheap as anything: take it off the table, as the writer
    // does, so the plan shows which index serves (without this one: a scan of the votes, or
    // the whole of their (item, annotator) key)
    let mut tx = db.pool.begin().await.expect("transaction");
    sqlx::raw_sql("SET LOCAL enable_seqscan = off")
        .execute(&mut *tx)
        .await
        .expect("set");
    let plan: Vec<String> = sqlx::query_scalar(&format!(
        "EXPLAIN {}",
        natstudy_core::store::my_votes::MY_VOTES_SQL
    ))
    .bind(1i64)
    .bind(1i64)
    .bind(natstudy_core::store::my_votes::REVIEW_PAGE)
    .bind(0i64)
    .fetch_all(&mut *tx)
    .await
    .expect("explain");
    let plan = plan.join("\n");
    // the votes by the index (a scan of it, or a bitmap; the few rows may then be sorted),
    // each one's item by its key
    assert!(
        plan.contains("using votes_annotator on votes v") || plan.contains("on votes_annotator"),
        "{plan}"
    );
    // the study checked once, on the annotator's row, never on the items
    assert!(
        plan.contains("Index Scan using items_pkey on items i")
            // the annotator's row by an index: its key, or (on empty tables, a tie) the
            // (study, account) key whose study it checks
            && plan.contains("Index Scan using annotators_")
            && plan.contains(" on annotators an")
            && plan.matches("study_id = ").count() == 1
            && !plan.contains("Seq Scan"),
        "{plan}"
    );
    drop(tx);
    guard.drop_now(db).await;
}

/// PostgreSQL: instances that start together on a new database all open it: one applies the
/// migrations while the others wait for the migrations' lock, then finds them applied. (An
/// index built `CONCURRENTLY` in a migration waits for the snapshot of a statement waiting for
/// that lock: a deadlock, and an instance that fails to start.)
#[tokio::test]
async fn instances_that_start_together_all_migrate_postgres() {
    let guard = natstudy_tests::empty_postgres().await.expect("database");
    let url = guard.url().expect("url");
    let opened = futures_util::future::join_all((0..4).map(|_| Db::connect(&url))).await;
    let mut dbs = Vec::new();
    for db in opened {
        dbs.push(db.expect("an instance opens the database"));
    }
    let applied: Vec<(i64, bool)> =
        sqlx::query_as("SELECT version, success FROM _sqlx_migrations ORDER BY version")
            .fetch_all(&dbs[0].pool)
            .await
            .expect("migrations");
    let expected = natstudy_core::db::migrations(natstudy_core::db::Dialect::Postgres);
    assert_eq!(
        applied,
        expected.iter().map(|&v| (v, true)).collect::<Vec<_>>()
    );
    let first = dbs.remove(0);
    for db in dbs {
        db.close().await;
    }
    guard.drop_now(first).await;
}

/// PostgreSQL: the group commit's writer has a connection of its own (on a thread of its own);
/// when the server loses every connection — PostgreSQL restarted, a connection killed — the
/// writer opens a new one and claims and votes go on, with nothing half-written.
#[tokio::test]
async fn the_writer_comes_back_after_its_connection_is_lost_postgres() {
    let (db, guard) = fresh_db(Store::Postgres).await.expect("db");
    let study = study_with_items(&db, 2).await; // 6 items
    let pool = assign::ensure_pool(&db, study, 3).await.expect("pool");
    queue_batch(&db, study, pool.clone(), 3, 600, false).await;
    rate_next(&db, study, pool[0], "before").await;
    // every connection to this database but the one that kills them (the pools' and the
    // writer's), from outside the server
    let killer = natstudy_core::service::Db::connect(&db.url)
        .await
        .expect("another handle");
    let killed: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    .fetch_all(&killer.pool)
    .await
    .expect("terminate");
    killer.close().await;
    assert!(
        killed.len() >= 2,
        "the pool's and the writer's connections: {killed:?}"
    );
    // the writer's next group runs on a new connection: every annotator goes on
    for (n, &a) in pool.iter().enumerate() {
        let mut rated = None;
        // a connection killed while it sat in the pool may fail one request; never two
        for attempt in 0..2 {
            let h = assign::next_item(&db, study, a, now_ms()).await;
            match h {
                Ok(Some(h)) => {
                    assign::submit(&db, study, a, h.item, &vote(format!("after{n}")), now_ms())
                        .await
                        .expect("vote after the connections were lost");
                    rated = Some(h.item);
                    break;
                }
                Ok(None) => panic!("annotator {a} found no item"),
                Err(e) => assert_eq!(attempt, 0, "annotator {a}: {e}"),
            }
        }
        assert!(rated.is_some(), "annotator {a} rated after the loss");
    }
    let votes: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM votes")
        .fetch_one(&db.pool)
        .await
        .expect("votes");
    assert_eq!(votes, 4, "the vote before and one per annotator after");
    guard.drop_now(db).await;
}

/// What the survey reads on every page: its one-statement standing (settings, the annotator,
/// progress) agrees with the separate reads and knows only the study's own annotators; the
/// server's cache of who belongs where remembers members, never a refusal, and never lets a
/// member of one study into another.
async fn the_survey_reads_agree(store: Store) {
    use natstudy_core::service::annotate::SurveyCache;
    use natstudy_core::store::survey;
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = study_with_items(&db, 2).await; // 6 items
    let other = natstudy_core::store::studies::create(&db, None, "other", "")
        .await
        .expect("study");
    let pool = assign::ensure_pool(&db, study, 2).await.expect("pool");
    let stranger = assign::ensure_pool(&db, other, 1).await.expect("pool")[0];
    queue_batch(&db, study, vec![pool[0]], 1, 600, false).await;
    rate_next(&db, study, pool[0], "s-1").await;
    survey::consent(&db, study, pool[0], "{}")
        .await
        .expect("consent");
    survey::guideline_seen(&db, study, pool[1])
        .await
        .expect("guideline");
    for (a, progress, consented, seen) in [
        (pool[0], (1, 6), true, false),
        (pool[1], (0, 0), false, true),
    ] {
        let st = survey::standing_issuing_resume_code(&db, study, a)
            .await
            .expect("standing");
        assert_eq!(st.progress, progress);
        assert_eq!(
            st.progress,
            assign::progress(&db, study, a).await.expect("progress")
        );
        let settings = survey::study_settings(&db, study).await.expect("settings");
        assert_eq!(
            (
                st.settings.name.as_str(),
                st.settings.ratings_per_item,
                &st.settings.guideline
            ),
            (
                settings.name.as_str(),
                settings.ratings_per_item,
                &settings.guideline
            )
        );
        assert_eq!(
            (
                st.annotator.consented,
                st.annotator.guideline_seen,
                st.annotator.finished
            ),
            (consented, seen, false),
            "{a}"
        );
    }
    // consent and the guideline are the study's: another study's id changes nothing
    survey::consent(&db, other, pool[1], "{}")
        .await
        .expect("no-op");
    let st = survey::standing_issuing_resume_code(&db, study, pool[1])
        .await
        .expect("standing");
    assert!(!st.annotator.consented);
    assert!(matches!(
        survey::standing_issuing_resume_code(&db, other, pool[0]).await,
        Err(natstudy_core::store::StoreError::NotFound(_))
    ));

    let cache = SurveyCache::default();
    for _ in 0..2 {
        assert_eq!(
            cache
                .annotator_in(&db, study, Some(pool[0]), None)
                .await
                .expect("in"),
            Some(pool[0])
        );
        assert_eq!(
            cache
                .annotator_in(&db, other, Some(pool[0]), None)
                .await
                .expect("in"),
            None,
            "a member of one study is not one of another"
        );
        assert_eq!(
            cache
                .annotator_in(&db, study, Some(stranger), None)
                .await
                .expect("in"),
            None
        );
    }
    guard.drop_now(db).await;
}

on_both_stores!(the_survey_reads_agree => the_survey_reads_agree_sqlite, the_survey_reads_agree_postgres);

/// PostgreSQL: the groups of two instances move the study's data version in parts of their
/// own, so neither waits for the other's commit on it; two groups in one part do wait (what
/// every group did on the study's one row before).
#[tokio::test]
async fn writers_move_the_data_version_without_waiting_postgres() {
    use natstudy_core::store::group_commit::shared::bump_version;
    use sqlx::Connection;
    let (db, guard) = fresh_db(Store::Postgres).await.expect("db");
    let study = study_with_items(&db, 1).await;
    let version = || natstudy_core::store::studies::data_version(&db, study);
    let before = version().await.expect("version");
    let mut a = db.pool.acquire().await.expect("connection");
    let mut b = db.pool.acquire().await.expect("connection");
    // a group of writer 3 holds its part until it commits
    let mut ta = a.begin().await.expect("begin");
    bump_version(&mut ta, study.into(), 3).await.expect("bump");
    // another writer's group moves its own part at once and commits first
    let mut tb = b.begin().await.expect("begin");
    sqlx::query("SET LOCAL lock_timeout = '300ms'")
        .execute(&mut *tb)
        .await
        .expect("timeout");
    bump_version(&mut tb, study.into(), 4)
        .await
        .expect("another part does not wait");
    tb.commit().await.expect("commit");
    assert_eq!(version().await.expect("version"), before + 1);
    // a group of the same part waits for the lock (here: until its timeout)
    let mut tb = b.begin().await.expect("begin");
    sqlx::query("SET LOCAL lock_timeout = '300ms'")
        .execute(&mut *tb)
        .await
        .expect("timeout");
    let waited = bump_version(&mut tb, study.into(), 3)
        .await
        .expect_err("the same part waits");
    assert_eq!(
        waited.as_database_error().and_then(|e| e.code()).as_deref(),
        Some("55P03"),
        "{waited}"
    );
    tb.rollback().await.expect("rollback");
    ta.commit().await.expect("commit");
    assert_eq!(version().await.expect("version"), before + 2);
    drop((a, b));
    guard.drop_now(db).await;
}

/// How a vote's page timed it: what reaches the two nullable columns, `time_secs` and
/// `started_at`, in every combination.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Timing {
    /// The page measured the time and knew when it showed the item.
    Measured,
    /// Sent before the page was interactive: no time, no start (the server times it).
    ServerTimed,
    /// An absurd time (kept as unknown) with a start the page knew.
    Unmeasured,
    /// A time, with a start that cannot be when the item was shown (kept as unknown).
    MeasuredNoStart,
}

const TIMINGS: [Timing; 4] = [
    Timing::Unmeasured,
    Timing::Measured,
    Timing::ServerTimed,
    Timing::MeasuredNoStart,
];

impl Timing {
    /// A vote so timed, sent at `now`, and the (`time_secs`, `started_at`) it must be stored with.
    fn vote(
        self,
        token: &str,
        cr: u8,
        now: i64,
    ) -> (natstudy_core::domain::Vote, (Option<f64>, Option<i64>)) {
        let (sent, stored) = match self {
            Timing::Measured => (
                (Some(4.25), Some(now - 4250)),
                (Some(4.25), Some(now - 4250)),
            ),
            Timing::ServerTimed => ((None, None), (None, None)),
            Timing::Unmeasured => ((Some(1e12), Some(now - 5000)), (None, Some(now - 5000))),
            Timing::MeasuredNoStart => ((Some(7.5), Some(now + 86_400_000)), (Some(7.5), None)),
        };
        let form = natstudy_types::VoteForm {
            cr: Some(cr),
            cc: Some(5 - cr),
            comment: format!("{self:?}"),
            time_secs: sent.0,
            started_at: sent.1,
            context_opened: cr.is_multiple_of(2),
            token: natstudy_tests::test_vote(token, 1, 1, None)
                .token()
                .to_owned(),
        };
        let vote = natstudy_core::domain::Vote::parse(form, now).expect("a valid vote");
        (vote, stored)
    }
}

/// What a step of the vote-kind matrix does.
#[derive(Debug, Clone, Copy, PartialEq)]
enum VoteKind {
    /// A first vote on a live claim (the common vote, written in the round trip that reads).
    First,
    /// A first vote on a lease that expired while the item still has room (read, then written).
    Late,
    /// A new revision of the annotator's latest vote.
    Revise,
    /// The annotator's latest submit sent again: recognised, nothing written.
    Resend,
}

const VOTE_KINDS: [VoteKind; 4] = [
    VoteKind::First,
    VoteKind::Late,
    VoteKind::Revise,
    VoteKind::Resend,
];

/// A vote as stored: (revision, `time_secs`, `started_at`).
type Stored = (i64, Option<f64>, Option<i64>);

/// What the matrix expects the store to hold: each vote that counts by (item, annotator), and
/// each annotator's latest submit, to resend.
#[derive(Default)]
struct Ledger {
    votes: std::collections::BTreeMap<(i64, i64), Stored>,
    latest: std::collections::HashMap<
        i64,
        (
            natstudy_vocab::ids::ItemId,
            natstudy_core::domain::Vote,
            i64,
        ),
    >,
    revisions: i64,
    steps: u64,
}

/// The matrix's study: 36 items, k = 2, a queue over six annotators with one-minute leases;
/// the first three consented and vote as participants (their consent asked), the others as
/// staff tools do.
async fn matrix_study(db: &Db) -> (StudyId, Vec<AnnotatorId>) {
    let study = study_with_items(db, 12).await;
    set_k(db, study, 2).await;
    let pool = assign::ensure_pool(db, study, 6).await.expect("pool");
    queue_batch(db, study, pool.clone(), 3, 60, false).await;
    for &a in &pool[..3] {
        natstudy_core::store::survey::consent(db, study, a, "{}")
            .await
            .expect("consent");
    }
    (study, pool)
}

/// One step of the matrix: annotator `a` (of index `ai`) votes as `kind` says, timed as `timing`;
/// the answer must be the one the step asks for.
async fn matrix_step(
    db: &Db,
    study: StudyId,
    a: AnnotatorId,
    ai: usize,
    kind: VoteKind,
    timing: Timing,
    ledger: &std::sync::Mutex<Ledger>,
) {
    let consent = match ai < 3 {
        true => assign::Consent::Required,
        false => assign::Consent::NotAsked,
    };
    let now = now_ms();
    let step = {
        let mut l = ledger.lock().expect("ledger");
        l.steps += 1;
        l.steps
    };
    let (item, vote, stored, expected) = match kind {
        VoteKind::First | VoteKind::Late => {
            let at = match kind {
                VoteKind::Late => now - 120_000,
                _ => now,
            };
            let h = claim_at(db, study, a, at).await;
            let (vote, stored) = timing.vote(&format!("{a}/{step}"), 1 + (step % 4) as u8, now);
            (h.item, vote, stored, Submitted::Saved { revision: 1 })
        }
        VoteKind::Revise => {
            let (item, _, revision) = ledger.lock().expect("ledger").latest[&a.0].clone();
            let (vote, stored) = timing.vote(&format!("{a}/{step}"), 1 + (step % 4) as u8, now);
            (
                item,
                vote,
                stored,
                Submitted::Saved {
                    revision: revision + 1,
                },
            )
        }
        VoteKind::Resend => {
            let (item, vote, revision) = ledger.lock().expect("ledger").latest[&a.0].clone();
            (item, vote, (None, None), Submitted::Duplicate { revision })
        }
    };
    let answer = assign::submit_as(db, study, a, item, &vote, now, consent).await;
    assert_eq!(
        answer.as_ref().ok(),
        Some(&expected),
        "step {step}: {kind:?} {timing:?} by annotator {ai} ({consent:?}): {answer:?}"
    );
    if let Submitted::Saved { revision } = expected {
        let mut l = ledger.lock().expect("ledger");
        l.votes
            .insert((item.0, a.0), (revision, stored.0, stored.1));
        l.latest.insert(a.0, (item, vote, revision));
        l.revisions += 1;
    }
}

/// Every kind of vote — measured, server-timed, unmeasured, timed without a start; first on a
/// live claim, first on an expired lease, revised, resent; with the consent asked and not — in
/// sequence, interleaved and all at once, on one store. On PostgreSQL every vote goes through
/// the writer's one connection, where each statement is prepared once with the parameter types
/// of its first execution: one vote without a time made every later measured vote fail there
/// ("incorrect binary data format in bind parameter 12"). Each vote is stored as sent.
async fn every_kind_of_vote_on_one_connection(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, pool) = matrix_study(&db).await;
    let ledger = std::sync::Mutex::new(Ledger::default());
    // in sequence: a whole round of each timing, the unmeasured first
    for timing in TIMINGS {
        for (ai, &a) in pool.iter().enumerate() {
            matrix_step(&db, study, a, ai, VoteKind::First, timing, &ledger).await;
        }
    }
    for kind in [VoteKind::Revise, VoteKind::Resend] {
        for timing in TIMINGS {
            for (ai, &a) in pool.iter().enumerate() {
                matrix_step(&db, study, a, ai, kind, timing, &ledger).await;
            }
        }
    }
    // interleaved: every kind with every timing, no two steps alike in a row
    for round in 0..TIMINGS.len() {
        for (ki, kind) in VOTE_KINDS.into_iter().enumerate() {
            let timing = TIMINGS[(round + ki) % TIMINGS.len()];
            let ai = (round * VOTE_KINDS.len() + ki) % pool.len();
            matrix_step(&db, study, pool[ai], ai, kind, timing, &ledger).await;
        }
    }
    // all at once (the writer's groups mix them): each annotator a first vote timed its own way,
    // then each a revision and a resend
    for kinds in [
        [VoteKind::First, VoteKind::First],
        [VoteKind::Revise, VoteKind::Resend],
    ] {
        let steps =
            pool.iter().enumerate().map(|(ai, &a)| {
                let kind = kinds[ai % 2];
                let ledger = &ledger;
                let db = &db;
                async move {
                    matrix_step(db, study, a, ai, kind, TIMINGS[ai % TIMINGS.len()], ledger).await
                }
            });
        futures_util::future::join_all(steps).await;
    }
    let ledger = ledger.into_inner().expect("ledger");
    type Row = (i64, i64, i64, Option<f64>, Option<i64>);
    let stored: Vec<Row> = sqlx::query_as(
        "SELECT item_id, annotator_id, revision, time_secs, started_at FROM votes ORDER BY item_id, annotator_id",
    )
    .fetch_all(&db.pool)
    .await
    .expect("votes");
    let stored: std::collections::BTreeMap<(i64, i64), Stored> = stored
        .into_iter()
        .map(|(i, a, r, t, s)| ((i, a), (r, t, s)))
        .collect();
    assert_eq!(stored, ledger.votes);
    let revisions: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM vote_revisions")
        .fetch_one(&db.pool)
        .await
        .expect("revisions");
    assert_eq!(
        revisions, ledger.revisions,
        "every revision kept, no resend"
    );
    assert_at_most_k(&db, study, 2).await;
    assert_done_counts(&db, study).await;
    guard.drop_now(db).await;
}

on_both_stores!(every_kind_of_vote_on_one_connection => every_kind_of_vote_on_one_connection_sqlite, every_kind_of_vote_on_one_connection_postgres);

/// An imported survey whose first vote has no time and whose others have one is written whole
/// on both stores (the import binds each vote's time on one connection, as the writer does).
async fn an_import_mixes_timed_and_untimed_votes(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = natstudy_tests::reference_study(&db, "mixed times", false)
        .await
        .expect("study");
    let dir = natstudy_tests::reference_dir().join("study-small");
    let text = std::fs::read_to_string(dir.join("survey.json")).expect("survey");
    let mut survey: serde_json::Value = serde_json::from_str(&text).expect("json");
    // the first participant's first and third votes untimed, the rest as they were
    let mut untimed = 0;
    let first_level = survey
        .as_object_mut()
        .and_then(|levels| levels.values_mut().next())
        .and_then(|items| items.as_object_mut())
        .expect("a level");
    for (n, votes) in first_level.values_mut().enumerate() {
        if n % 2 == 0 {
            if let Some(vote) = votes.as_object_mut().and_then(|v| v.values_mut().next()) {
                vote["Time"] = serde_json::Value::Null;
                untimed += 1;
            }
        }
    }
    let file = tempfile::NamedTempFile::new().expect("file");
    std::fs::write(file.path(), survey.to_string()).expect("write");
    natstudy_core::service::imports::import_votes(&db, study, file.path())
        .await
        .expect("the import is written whole");
    let (all, timed): (i64, i64) = sqlx::query_as("SELECT COUNT(*), COUNT(time_secs) FROM votes")
        .fetch_one(&db.pool)
        .await
        .expect("votes");
    assert!(untimed > 1, "{untimed}");
    assert_eq!(all - timed, untimed);
    let revisions: i64 = sqlx::query_scalar("SELECT COUNT(time_secs) FROM vote_revisions")
        .fetch_one(&db.pool)
        .await
        .expect("revisions");
    assert_eq!(revisions, timed);
    guard.drop_now(db).await;
}

on_both_stores!(an_import_mixes_timed_and_untimed_votes => an_import_mixes_timed_and_untimed_votes_sqlite, an_import_mixes_timed_and_untimed_votes_postgres);

/// Lease starvation, second form: joins that claim a 3-item study's items and let the leases
/// lapse without answering get no new lease when they ask again (each new claim restarted the
/// hold, and 10 of 15 such joins took the items again ahead of the real participant); the real
/// participant gets one, and joins that never held still may.
async fn lapsed_joins_without_an_answer_claim_no_more(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = study_with_items(&db, 1).await; // 3 items
    set_k(&db, study, 1).await;
    let pool = assign::ensure_pool(&db, study, 16).await.expect("pool");
    queue_batch(&db, study, pool.clone(), 5, 60, false).await;
    let (fakes, real) = (&pool[..15], pool[15]);
    let t0 = now_ms() - 3_600_000;
    let mut holders = Vec::new();
    for &f in fakes {
        if assign::next_item(&db, study, f, t0)
            .await
            .expect("next")
            .is_some()
        {
            holders.push(f);
        }
    }
    assert_eq!(holders.len(), 3, "three items, three holders");
    // the holds lapse; the holders ask again first, then the real participant
    let later = t0 + assign::max_hold_ms(60) + 1_000;
    for &f in &holders {
        let again = assign::next_item(&db, study, f, later).await.expect("next");
        assert_eq!(
            again, None,
            "a join that let its lease lapse unanswered claims again"
        );
    }
    let got = assign::next_item(&db, study, real, later + 1)
        .await
        .expect("next");
    assert!(got.is_some(), "the real participant is starved");
    // joins that never held are not refused: the two items left go to the first two
    let mut rest = 0;
    for &f in fakes.iter().filter(|f| !holders.contains(f)) {
        rest += usize::from(
            assign::next_item(&db, study, f, later + 2)
                .await
                .expect("next")
                .is_some(),
        );
    }
    assert_eq!(rest, 2);
    assert_at_most_k(&db, study, 1).await;
    guard.drop_now(db).await;
}

on_both_stores!(lapsed_joins_without_an_answer_claim_no_more => lapsed_joins_without_an_answer_claim_no_more_sqlite, lapsed_joins_without_an_answer_claim_no_more_postgres);
