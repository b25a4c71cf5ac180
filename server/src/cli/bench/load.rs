//! `natstudy bench http`: the survey's vote path over real HTTP on loopback. The server runs in
//! this process on a free port (or several, `--instances`; or the load goes to servers running
//! in processes of their own, `--servers`); N participants join through one invite link at
//! once (the start-up burst), consent, read the guideline, then ask for their item, think, and
//! vote, until the time is up. Reports joins, the state and vote requests' p50/p99,
//! acknowledged votes per second, the group commit's sizes, the CPU time each vote took in this
//! process and in a local PostgreSQL's processes, and the database's raw durable commit rate
//! measured on the same disk in the same run.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use tokio::sync::Mutex;

use super::fixture::{bench_db, commit_anchor, percentile};
use crate::cli::Global;
use crate::survey_client;
use natstudy_core::service::Db;
use natstudy_vocab::ids::StudyId;

/// What the load test does.
#[derive(Debug, Clone)]
pub struct Setup {
    pub participants: usize,
    pub items: usize,
    /// Mean think time between seeing an item and voting (each pause drawn from ±50%).
    pub think: Duration,
    pub duration: Duration,
    /// Servers on the same database (each its own process-like stack: pool, writer, sessions);
    /// participants are spread over them round-robin.
    pub instances: usize,
    /// Running servers of the bench's database to drive instead of servers in this process
    /// (base URLs); participants are spread over them round-robin.
    pub servers: Vec<String>,
    /// PostgreSQL: `ANALYZE` after the set-up (see `natstudy bench http --analyze`).
    pub analyze: bool,
}

/// Latencies of each kind of request, and what went wrong.
#[derive(Default)]
struct Tally {
    joins: Vec<Duration>,
    /// The three requests of a join, each: invite, consent, guideline.
    join_steps: [Vec<Duration>; 3],
    states: Vec<Duration>,
    votes: Vec<Duration>,
    /// State and vote requests sent after every participant had joined (the steady state).
    after_burst: Vec<Duration>,
    /// Participants who finished joining.
    joined: usize,
    errors: Vec<String>,
}

pub async fn run(g: &Global, s: Setup) -> Result<()> {
    if s.participants == 0 || s.items == 0 || s.instances == 0 {
        bail!("--participants, --items and --instances must be at least 1");
    }
    if s.instances > 16 || s.participants > 10_000 {
        bail!("at most 16 instances and 10,000 participants");
    }
    if !s.servers.is_empty() && g.database_url.is_none() {
        bail!("--servers needs --database-url: the database those servers serve");
    }
    let (db, _tmp) = bench_db(g).await?;
    if s.analyze && db.dialect != natstudy_core::db::Dialect::Postgres {
        // natstudy never analyses SQLite: statistics there would be a state no deployment has
        bail!("--analyze is for PostgreSQL (give --database-url postgres://…)");
    }
    let study = natstudy_core::bench::study(&db, s.items).await?;
    let invite = natstudy_core::bench::load_batch(&db, study, s.participants).await?;
    if s.analyze {
        natstudy_core::bench::analyze(&db)
            .await
            .context("ANALYZE")?;
    }

    // the first instance uses the set-up's handle; others connect anew, like other processes
    let mut servers = Vec::new();
    let mut bases = Vec::new();
    let mut dbs = vec![db.clone()];
    let external = !s.servers.is_empty();
    for _ in 1..s.instances {
        dbs.push(Db::connect(&db.url).await?);
    }
    for url in &s.servers {
        bases.push(url.trim_end_matches('/').to_owned());
    }
    let in_process: &[Db] = if external { &[] } else { &dbs };
    for d in in_process {
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let mut config = crate::web::WebConfig::new(([127, 0, 0, 1], 0).into());
        // every simulated participant comes from loopback; on the internet each has an address
        config.joins.per_ip_burst = 0;
        config.connections.per_client = 0;
        servers.push(tokio::spawn(crate::web::serve(
            d.clone(),
            config,
            move |addr| {
                let _ = ready_tx.send(addr);
            },
        )));
        let addr = ready_rx.await.context("the server did not start")?;
        bases.push(format!("http://{addr}"));
    }

    let tally = Arc::new(Mutex::new(Tally::default()));
    let stats = |dbs: &[Db]| {
        dbs.iter().fold((0, 0), |(g, j), d| {
            let s = d.group.stats();
            (g + s.groups, j + s.jobs)
        })
    };
    let groups_before = stats(&dbs);
    let local_pg = db.dialect == natstudy_core::db::Dialect::Postgres;
    let cpu_before = super::cpu_time::sample(local_pg);
    let start = Instant::now();
    let deadline = start + s.duration;
    let mut tasks = Vec::with_capacity(s.participants);
    for n in 0..s.participants {
        let base = bases[n % bases.len()].clone();
        let (invite, tally, s) = (invite.clone(), tally.clone(), s.clone());
        tasks.push(tokio::spawn(async move {
            if let Err(e) = participant(n, &base, study, &invite, &s, deadline, &tally).await {
                tally.lock().await.errors.push(format!("{e:#}"));
            }
        }));
    }
    for t in tasks {
        t.await?;
    }
    let wall = start.elapsed();
    let cpu = cpu_before
        .zip(super::cpu_time::sample(local_pg))
        .map(|(a, b)| a.until(&b));
    let groups = stats(&dbs);
    for server in servers {
        server.abort();
    }
    let mut t = std::mem::take(&mut *tally.lock().await);
    for v in [
        &mut t.joins,
        &mut t.states,
        &mut t.votes,
        &mut t.after_burst,
    ]
    .into_iter()
    .chain(t.join_steps.iter_mut())
    {
        v.sort();
    }
    let mut all: Vec<Duration> = t
        .join_steps
        .iter()
        .flatten()
        .chain(&t.states)
        .chain(&t.votes)
        .copied()
        .collect();
    all.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let votes_per_s = t.votes.len() as f64 / wall.as_secs_f64();
    println!(
        "HTTP on loopback, {:?}{}, {} {}, {} participants, think {:.1} s (±50%), {} items, {:.1} s:",
        db.dialect,
        if s.analyze { " (analysed after the set-up)" } else { "" },
        bases.len(),
        if external {
            "server(s) of their own"
        } else {
            "instance(s) in this process"
        },
        s.participants,
        s.think.as_secs_f64(),
        s.items,
        wall.as_secs_f64()
    );
    for (what, v) in [
        ("joins (invite + consent + guideline)", &t.joins),
        ("  invite (join)", &t.join_steps[0]),
        ("  consent (annotate/consent)", &t.join_steps[1]),
        ("  guideline read (annotate/start)", &t.join_steps[2]),
        (
            "first item, or one a vote's answer lacked (annotate/state)",
            &t.states,
        ),
        (
            "votes, answered with the next item (annotate/vote)",
            &t.votes,
        ),
        ("every request", &all),
        ("requests after every join (steady)", &t.after_burst),
    ] {
        println!(
            "  {what}: {} — p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            v.len(),
            ms(percentile(v, 0.5)),
            ms(percentile(v, 0.99)),
            ms(v.last().copied().unwrap_or_default())
        );
    }
    println!(
        "  acknowledged votes: {} = {votes_per_s:.0} votes/s; errors: {}",
        t.votes.len(),
        t.errors.len()
    );
    for e in t.errors.iter().take(5) {
        println!("    error: {e}");
    }
    let (g, j) = (groups.0 - groups_before.0, groups.1 - groups_before.1);
    if !external {
        println!(
            "  group commit: {g} transactions for {j} claims, votes and renewals ({:.1} a transaction)",
            j as f64 / g.max(1) as f64
        );
    }
    if let Some(cpu) = cpu.filter(|_| !t.votes.is_empty()) {
        let per_vote = |secs: f64| secs * 1e6 / t.votes.len() as f64;
        let postgres = if cpu.postgres > 0.0 {
            format!(
                ", PostgreSQL's processes on this machine {:.0} µs",
                per_vote(cpu.postgres)
            )
        } else {
            String::new()
        };
        println!(
            "  CPU per vote (joins included): this process — {} — {:.0} µs{postgres}; the machine {:.0}% idle",
            if external {
                "the load client"
            } else {
                "servers and load client"
            },
            per_vote(cpu.own),
            cpu.idle * 100.0
        );
    }
    let over = natstudy_core::bench::items_over_k(&db, study).await?;
    println!("  items over k: {over}");
    commit_anchor(&db, votes_per_s).await
}

/// One participant: joins, then rates until the deadline or the queue is empty.
async fn participant(
    n: usize,
    base: &str,
    study: StudyId,
    invite: &str,
    s: &Setup,
    deadline: Instant,
    tally: &Mutex<Tally>,
) -> Result<()> {
    let c = survey_client::client(Duration::from_secs(120))?;
    let t0 = Instant::now();
    for step in 0..survey_client::JOIN_STEPS.len() {
        let t = Instant::now();
        survey_client::join_step(&c, base, study, invite, step).await?;
        tally.lock().await.join_steps[step].push(t.elapsed());
    }
    {
        let mut t = tally.lock().await;
        t.joins.push(t0.elapsed());
        t.joined += 1;
    }
    // a participant's own pseudo-random pauses (SplitMix64)
    let mut state = 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(n as u64 + 1);
    let mut pause = move |mean: Duration| {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let u = (z ^ (z >> 31)) as f64 / u64::MAX as f64;
        mean.mul_f64(0.5 + u)
    };
    let mut k = 0u64;
    // the state a vote's answer carried, as the page takes it
    let mut carried = None;
    while Instant::now() < deadline {
        let st = match carried.take() {
            Some(st) => st,
            None => {
                let steady = tally.lock().await.joined == s.participants;
                let t = Instant::now();
                let st = survey_client::state(&c, base, study).await?;
                let mut tl = tally.lock().await;
                tl.states.push(t.elapsed());
                if steady {
                    tl.after_burst.push(t.elapsed());
                }
                st
            }
        };
        let Some((item, token)) = survey_client::rate_step(&st) else {
            return Ok(()); // nothing left to rate
        };
        tokio::time::sleep(pause(s.think)).await;
        k += 1;
        let steady = tally.lock().await.joined == s.participants;
        let t = Instant::now();
        let answers = survey_client::Answers {
            cr: (1 + k % 4) as u8,
            cc: (1 + (k / 4) % 4) as u8,
            comment: "",
        };
        let r = survey_client::vote(&c, base, study, item, &token, answers).await?;
        let status = r.status();
        carried = survey_client::next_state(r)
            .await
            .with_context(|| format!("annotate/vote: {status}"))?;
        let mut tl = tally.lock().await;
        tl.votes.push(t.elapsed());
        if steady {
            tl.after_burst.push(t.elapsed());
        }
    }
    Ok(())
}
