//! What `natstudy bench` measures the store by: a fresh study, the vote path run as participants'
//! pages run it, a batch and a link for the load over HTTP, and the database's raw durable
//! commit rate as the anchor. The command line times and prints; the data is reached here.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use natstudy_vocab::ids::StudyId;

use crate::db::now_ms;
use crate::store::assign::{self, BatchSpec, ItemFilter, Strategy};
use crate::store::Db;

/// A fresh study of `items` bugs with one transformation each.
pub async fn study(db: &Db, items: usize) -> Result<StudyId> {
    let name = format!("bench-{}", now_ms());
    let study = crate::store::studies::create(db, None, &name, "benchmark").await?;
    let mut bugs = String::new();
    let mut trs = String::new();
    for i in 0..items {
        bugs.push_str(&format!(
            "{{\"bug_id\": \"B-{i}\", \"project\": \"P\", \"file\": \"A.java\", \"method\": \"m\", \"source\": \"int m() {{ return {i}; }}\\n\", \"buggy_lines\": [1]}}\n"
        ));
        trs.push_str(&format!(
            "{{\"id\": \"naming_{i}\", \"bug_id\": \"B-{i}\", \"operator\": \"RenameVariable-1\", \"level\": \"naming\", \"source\": \"int m() {{ return {i} + 0; }}\\n\", \"summary\": \"s\"}}\n"
        ));
    }
    crate::service::imports::import_items_text(db, study, None, ("bugs", &bugs), ("t", &trs))
        .await?;
    Ok(study)
}

/// One run of the vote path: every participant's latencies, the wall time, k, and how many
/// items did not end at exactly k ratings.
#[derive(Debug)]
pub struct VotePathRun {
    pub latencies: Vec<Duration>,
    pub wall: Duration,
    pub k: u64,
    pub off_k: usize,
}

/// `annotators` participants of a dynamic queue over the study's items, each asking for its
/// first item and then submitting each vote with the next claim (one job), as the page does,
/// until every item has k ratings; `on_vote` after each vote.
pub async fn vote_path(
    db: Arc<Db>,
    study: StudyId,
    annotators: usize,
    on_vote: Arc<dyn Fn() + Send + Sync>,
) -> Result<VotePathRun> {
    let pool = assign::ensure_pool(&db, study, annotators).await?;
    let spec = BatchSpec {
        name: "bench".into(),
        strategy: Strategy::DynamicQueue,
        filter: ItemFilter::default(),
        annotators: pool.clone(),
        seed: 1,
        lease_secs: 1200,
        avoid_same_bug: true,
    };
    assign::create_batch(&db, study, None, &spec).await?;
    let k = assign::ratings_per_item(&db, study).await? as u64;
    let start = Instant::now();
    let mut tasks = Vec::new();
    for a in pool {
        let db = db.clone();
        let on_vote = on_vote.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut n = 0u64;
            let mut t0 = Instant::now();
            let mut next = assign::next_item(&db, study, a, now_ms()).await?;
            while let Some(h) = next {
                let vote = crate::domain::Vote::parse(
                    natstudy_types::VoteForm {
                        cr: Some(2),
                        cc: Some(2),
                        time_secs: Some(10.0),
                        // 32 hex digits, one per vote of the run
                        token: format!("{:016x}{:016x}", a.get(), n),
                        ..Default::default()
                    },
                    now_ms(),
                )
                .map_err(|e| anyhow::anyhow!("{e}"))?;
                (_, next) = assign::submit_then_next(
                    &db,
                    study,
                    a,
                    h.item,
                    &vote,
                    now_ms(),
                    assign::Consent::NotAsked,
                )
                .await?;
                lat.push(t0.elapsed());
                t0 = Instant::now();
                n += 1;
                on_vote();
            }
            anyhow::Ok(lat)
        }));
    }
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await??);
    }
    let wall = start.elapsed();
    let off_k = assign::completed_per_item(&db, study)
        .await?
        .iter()
        .filter(|(_, n)| *n as u64 != k)
        .count();
    Ok(VotePathRun {
        latencies,
        wall,
        k,
        off_k,
    })
}

/// A dynamic batch of every item and a link for `participants`: the link's token.
pub async fn load_batch(db: &Db, study: StudyId, participants: usize) -> Result<String> {
    let spec = BatchSpec {
        name: "load".into(),
        strategy: Strategy::DynamicQueue,
        filter: Default::default(),
        annotators: vec![],
        seed: 1,
        lease_secs: 1200,
        avoid_same_bug: true,
    };
    let batch = assign::create_batch(db, study, None, &spec).await?.id;
    Ok(crate::store::invites::create_invite(db, study, batch, participants as i64, None).await?)
}

/// Brings PostgreSQL's planner statistics up to date (`ANALYZE`).
pub async fn analyze(db: &Db) -> Result<()> {
    sqlx::query("ANALYZE")
        .execute(&mut *db.write().await?)
        .await?;
    Ok(())
}

/// How many items have more than k counted ratings.
pub async fn items_over_k(db: &Db, study: StudyId) -> Result<usize> {
    let k = assign::ratings_per_item(db, study).await?;
    Ok(assign::completed_per_item(db, study)
        .await?
        .iter()
        .filter(|(_, n)| *n > k)
        .count())
}

/// The database's raw durable commit rate: one small insert a transaction, committed one after
/// another for `span`, on a scratch table dropped afterwards (the anchor for the vote path).
pub async fn durable_commit_rate(db: &Db, span: Duration) -> Result<f64> {
    use sqlx::Connection;
    let mut w = db.write().await?;
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS bench_commits (id BIGINT PRIMARY KEY, at BIGINT NOT NULL)",
    )
    .execute(&mut *w)
    .await?;
    sqlx::query("DELETE FROM bench_commits")
        .execute(&mut *w)
        .await?;
    let start = Instant::now();
    let mut n = 0i64;
    while start.elapsed() < span {
        let mut tx = w.begin().await?;
        sqlx::query("INSERT INTO bench_commits (id, at) VALUES ($1, $2)")
            .bind(n)
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        n += 1;
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    sqlx::query("DROP TABLE bench_commits")
        .execute(&mut *w)
        .await?;
    Ok(rate)
}

/// A designed study of `snippets` Java snippets, its design `design` (the design file's text)
/// and k = `k`: its units planned at the snippets' import.
pub async fn designed_study(db: &Db, design: &str, snippets: usize, k: i64) -> Result<StudyId> {
    let d = natstudy_engine::design::parse_design("bench.toml", design)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let name = format!("bench-units-{}", now_ms());
    let study = crate::service::designs::create(db, None, None, &name, "benchmark", &d).await?;
    let lines: String = (0..snippets)
        .map(|i| {
            format!(
                "{{\"id\": \"S{i}\", \"code\": \"int f{i}() {{ return {i}; }}\", \"language\": \"java\"}}\n"
            )
        })
        .collect();
    crate::service::designs::import_snippets_text(db, study, None, "bench.jsonl", &lines).await?;
    let mut settings = crate::service::studies::settings(db, study).await?;
    settings.ratings_per_item = k;
    crate::service::studies::update_settings(db, study, None, &settings).await?;
    Ok(study)
}

/// One run of a designed study's hand-out: each claim's and each answer's latency, the wall
/// time, the units, how many ended short of k answers, and the answers in all (units × k when
/// none is short or over).
#[derive(Debug)]
pub struct UnitPathRun {
    pub claims: Vec<Duration>,
    pub answers: Vec<Duration>,
    pub wall: Duration,
    pub k: i64,
    pub units: usize,
    pub short: usize,
    pub answered: i64,
}

/// `participants` of the designed study at once, each claiming its next unit and answering it
/// (`fields`: the form's fields, the same for every unit) until no unit is left for anyone;
/// `on_answer` after each answer.
pub async fn unit_path(
    db: Arc<Db>,
    study: StudyId,
    participants: usize,
    fields: Vec<(String, String)>,
    on_answer: Arc<dyn Fn() + Send + Sync>,
) -> Result<UnitPathRun> {
    let pool = assign::ensure_pool(&db, study, participants).await?;
    let design = Arc::new(crate::service::designs::of(&db, study).await?);
    let k = assign::ratings_per_item(&db, study).await?;
    let start = Instant::now();
    let mut tasks = Vec::new();
    for a in pool {
        let (db, design, fields, on_answer) = (
            db.clone(),
            design.clone(),
            fields.clone(),
            on_answer.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let (mut claims, mut answers) = (Vec::new(), Vec::new());
            loop {
                let t0 = Instant::now();
                let Some(claim) = crate::service::answering::claim_unit(
                    &db,
                    study,
                    a,
                    &design,
                    k,
                    None,
                    now_ms(),
                )
                .await?
                else {
                    break;
                };
                claims.push(t0.elapsed());
                let t1 = Instant::now();
                let form = natstudy_types::AnswerForm {
                    claim: claim.id,
                    token: format!("{:016x}{:016x}", a.get(), claim.id),
                    time_secs: Some(10.0),
                    fields: fields.clone(),
                    revise: false,
                };
                crate::service::answering::submit(&db, study, a, form).await?;
                answers.push(t1.elapsed());
                on_answer();
            }
            anyhow::Ok((claims, answers))
        }));
    }
    let (mut claims, mut answers) = (Vec::new(), Vec::new());
    for t in tasks {
        let (c, a) = t.await??;
        claims.extend(c);
        answers.extend(a);
    }
    let wall = start.elapsed();
    let (units, full, answered) = crate::store::units::progress(&db, study, k).await?;
    Ok(UnitPathRun {
        claims,
        answers,
        wall,
        k,
        units: usize::try_from(units).unwrap_or(0),
        short: usize::try_from(units - full).unwrap_or(0),
        answered,
    })
}
