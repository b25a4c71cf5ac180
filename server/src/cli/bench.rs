//! `natstudy bench`: measured figures, never timed tests.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Subcommand;

use super::Global;
use crate::db::{now_ms, Db};
use crate::store::assign::{self, BatchSpec, ItemFilter, Strategy, VoteInput};

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// "next item + submit" under many concurrent annotators (dynamic queue), until every item
    /// has k ratings. Uses a temporary SQLite database unless --database-url is given.
    Assign {
        #[arg(long, default_value_t = 200)]
        annotators: usize,
        #[arg(long, default_value_t = 400)]
        items: usize,
    },
}

pub async fn run(g: &Global, cmd: BenchCommand) -> Result<()> {
    match cmd {
        BenchCommand::Assign { annotators, items } => assign_bench(g, annotators, items).await,
    }
}

fn percentile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn assign_bench(g: &Global, annotators: usize, items: usize) -> Result<()> {
    let _tmp;
    let db = match &g.database_url {
        Some(_) => g.db().await?,
        None => {
            let dir = tempfile::tempdir()?;
            let url = Db::sqlite_url_in(dir.path())?;
            _tmp = dir;
            Db::connect(&url).await?
        }
    };
    let name = format!("bench-{}", now_ms());
    let study = crate::store::studies::create(&db, None, &name, "benchmark").await?;
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
    crate::service::import_items_text(&db, study, None, ("bugs", &bugs), ("t", &trs)).await?;
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
    let bar = indicatif::ProgressBar::new(items as u64 * k);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} votes {per_sec} eta {eta}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let db = Arc::new(db);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for a in pool {
        let db = db.clone();
        let bar = bar.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut n = 0u64;
            loop {
                let t0 = Instant::now();
                let Some(h) = assign::next_item(&db, study, a, now_ms()).await? else {
                    break;
                };
                let vote = VoteInput {
                    cr: 2,
                    cc: 2,
                    comment: String::new(),
                    time_secs: Some(10.0),
                    started_at: None,
                    context_opened: false,
                    token: format!("{a}-{n}"),
                };
                assign::submit(&db, study, a, h.item, &vote, now_ms()).await?;
                lat.push(t0.elapsed());
                n += 1;
                bar.inc(1);
            }
            anyhow::Ok(lat)
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await??);
    }
    let wall = start.elapsed();
    bar.finish_and_clear();
    all.sort();
    let over = assign::completed_per_item(&db, study)
        .await?
        .iter()
        .filter(|(_, n)| *n as u64 != k)
        .count();
    println!(
        "backend {:?}: {} annotators, {} items × k={} → {} votes in {:.2} s: {:.0} votes/s; next+submit latency median {:.1} ms, p99 {:.1} ms; items not at exactly k: {}",
        db.backend,
        annotators,
        items,
        k,
        all.len(),
        wall.as_secs_f64(),
        all.len() as f64 / wall.as_secs_f64(),
        percentile(&all, 0.5).as_secs_f64() * 1000.0,
        percentile(&all, 0.99).as_secs_f64() * 1000.0,
        over
    );
    Ok(())
}
