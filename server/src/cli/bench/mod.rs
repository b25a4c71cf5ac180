//! `natstudy bench`: measured figures, never timed tests. The benchmarks live in this tree,
//! out of the domain's modules: the load over HTTP (`load`), the engines' and the store's
//! benchmarks here, the language models' (`lm`), the Java compile check (`compile`), what
//! they stand on (`fixture`) and a process's CPU time (`cpu_time`).

mod compile;
mod cpu_time;
mod designs;
mod fixture;
mod lm;
mod load;
mod units;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Subcommand;

use crate::cli::Global;
use fixture::{bench_db, commit_anchor, percentile};

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// "next item + submit" under many concurrent annotators (dynamic queue), until every item
    /// has k ratings. Uses a temporary SQLite database unless --database-url is given.
    Assign {
        /// Annotators asking for items at once
        #[arg(long, default_value_t = 200)]
        annotators: usize,
        /// Items in the study, each asked for until it has k ratings
        #[arg(long, default_value_t = 400)]
        items: usize,
    },
    /// A designed study's hand-out: participants at once claim their next unit and answer it
    /// until every unit has k answers (a pairwise design: every pair of --snippets snippets;
    /// likert: each snippet); per claim and per answer p50/p99, answers/s. Uses a temporary
    /// SQLite database unless --database-url is given.
    Units {
        /// Participants answering at once
        #[arg(long, default_value_t = 50)]
        participants: usize,
        /// Snippets of the study (pairwise: n(n−1)/2 units)
        #[arg(long, default_value_t = 40)]
        snippets: usize,
        /// Answers each unit needs (k)
        #[arg(long, default_value_t = 3)]
        k: i64,
        /// pairwise or likert
        #[arg(long, default_value = "pairwise")]
        design: String,
    },
    /// The survey over real HTTP on loopback: participants join through one invite at once,
    /// then ask for an item, think, and vote until the time is up; p50/p99 per request,
    /// votes/s, and the database's durable commit rate in the same run. Uses a temporary
    /// SQLite database unless --database-url is given.
    Http {
        /// Participants voting at once
        #[arg(long, default_value_t = 200)]
        participants: usize,
        /// Items in the study (the published study's 2,177 by default)
        #[arg(long, default_value_t = 2177)]
        items: usize,
        /// Mean seconds between seeing an item and voting (each pause ±50%)
        #[arg(long, default_value_t = 10.0)]
        think: f64,
        /// Seconds participants keep voting
        #[arg(long, default_value_t = 60.0)]
        duration: f64,
        /// Servers on the same database, participants spread over them (PostgreSQL: the
        /// scale-out set-up)
        #[arg(long, default_value_t = 1)]
        instances: usize,
        /// Drive these running servers (`http://HOST:PORT`, comma-separated) instead of
        /// servers in this process: each must serve the database of `--database-url` (started
        /// with `serve --join-burst 0 --max-connections-per-client 0`, as every simulated
        /// participant comes from one address)
        #[arg(long, value_delimiter = ',', conflicts_with = "instances")]
        servers: Vec<String>,
        /// PostgreSQL: analyse the database after the set-up, as autovacuum does for a running
        /// instance, so the run is planned with statistics (without it, a database made for
        /// the run is never analysed, a state no deployment stays in)
        #[arg(long)]
        analyze: bool,
    },
    /// The full analysis (engine only) of a synthetic study: items × 5 votes, 5 repair tools,
    /// 2 language models
    Report {
        /// Items in the synthetic study
        #[arg(long, default_value_t = 100_000)]
        items: usize,
        /// Bootstrap replicates for the agreement intervals
        #[arg(long, default_value_t = 1000)]
        bootstrap: usize,
        /// Instead: a designed study's analysis (likert, pairwise, best-worst, answer; `all`
        /// for each), on a synthetic study of --responses answers to --snippets snippets
        #[arg(long)]
        design: Option<String>,
        /// Responses of the designed study
        #[arg(long, default_value_t = 100_000)]
        responses: usize,
        /// Snippets of the designed study
        #[arg(long, default_value_t = 1000)]
        snippets: usize,
        /// Participants of the designed study
        #[arg(long, default_value_t = 200)]
        participants: usize,
        /// With --design likert: also time the mixed ordinal model, on this many responses
        /// (0: not), and write them as CSV into --out for R's clmm (crates/stats/bench/clmm.R)
        #[arg(long, default_value_t = 0)]
        mixed: usize,
        /// Where --mixed writes its data (mixed.csv)
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// Training a language model from a pre-tokenised corpus (one sentence a line): tokens/s,
    /// time to write the ARPA file, peak memory of the process. Compare with KenLM's
    /// `lmplz -o ORDER -S MEMORY < FILE > model.arpa` on the same file.
    Lm {
        /// The token file: one sentence a line, tokens separated by spaces
        #[arg(long)]
        tokens: std::path::PathBuf,
        /// The n-gram order (lmplz's -o)
        #[arg(long, default_value_t = 4)]
        order: usize,
        /// Memory for the raw n-gram counts (lmplz's -S)
        #[arg(long, default_value = "1G", value_parser = crate::cli::lm::parse_size)]
        memory: usize,
        /// Where the ARPA file goes (default: a temporary file, removed)
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        /// Also load the written model and score this token file on one core (compare with
        /// KenLM's `query model.bin < FILE`)
        #[arg(long)]
        heldout: Option<std::path::PathBuf>,
    },
    /// A neural causal model (a Hugging Face folder or a GGUF file) on a JSON list of methods
    /// (as shared/reference/nlm/methods.json): load time, tokens/s of forward passes over all
    /// positions (batches of similar lengths), peak memory. Compare with transformers on the
    /// same methods and threads (`crates/nlm/bench/transformers_score.py`)
    #[command(name = "lm-neural")]
    LmNeural {
        /// A Hugging Face model folder or a GGUF file
        #[arg(long)]
        model: std::path::PathBuf,
        /// A JSON list of methods' source texts
        #[arg(long)]
        methods: std::path::PathBuf,
        /// Passes over the methods (the first warms the caches)
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// cpu, or cuda (a build with `--features cuda`)
        #[arg(long, default_value = "cpu")]
        device: String,
        /// Methods in one forward pass (1: one at a time, as the published tool)
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=256))]
        batch: u16,
        /// Threads on the CPU, each scoring its own batches (default: every core)
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
        threads: Option<u16>,
        /// A GGUF file's weights: `auto` (as `lm score` holds them: packed), `packed`, or `f32`
        /// (dequantized at load: the f32 kernels' speed on three to eight times the memory)
        #[arg(long, default_value = "auto", value_parser = ["auto", "packed", "f32"])]
        gguf: String,
        /// Writes each method's tokens and cross-entropy (nats) of the last round as JSON, in
        /// the methods' order (`crates/nlm/bench/compare.py` compares it with transformers')
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// Every operator on every method of a directory of .java files (every line counted as
    /// buggy, every application kept): methods/s, and engine time against parse time alone
    Transform {
        /// A directory of .java files
        #[arg(long)]
        corpus: std::path::PathBuf,
        /// Operators, comma-separated: names, `studied` (the published 18) or `all`
        #[arg(long, default_value = "all")]
        operators: String,
        /// Also compile every application in its file with javac (the compile server of
        /// `natstudy verify`), each file's original first: applications, failures and time per
        /// operator
        #[arg(long)]
        compile: bool,
        /// With --compile: the files belong to this module of the JDK that compiles them
        /// (`java.base` for the JDK's own `lib/src.zip`: javac --patch-module)
        #[arg(long)]
        patch_module: Option<String>,
        /// With --compile: the `java` of that JDK
        #[arg(long, default_value = "java")]
        java: std::path::PathBuf,
        /// Take files (sorted by path) until they hold this many lines
        #[arg(long)]
        max_lines: Option<usize>,
        /// With --compile: compilers at once (default: the cores)
        #[arg(long)]
        workers: Option<usize>,
    },
}

pub async fn run(g: &Global, cmd: BenchCommand) -> Result<()> {
    match cmd {
        BenchCommand::Assign { annotators, items } => assign_bench(g, annotators, items).await,
        BenchCommand::Units {
            participants,
            snippets,
            k,
            design,
        } => units::run(g, participants, snippets, k, &design).await,
        BenchCommand::Http {
            participants,
            items,
            think,
            duration,
            instances,
            servers,
            analyze,
        } => {
            let secs = |x: f64, what: &str| {
                Duration::try_from_secs_f64(x)
                    .map_err(|_| anyhow::anyhow!("--{what} must be a number of seconds ≥ 0"))
            };
            let setup = load::Setup {
                participants,
                items,
                think: secs(think, "think")?,
                duration: secs(duration, "duration")?,
                instances,
                servers,
                analyze,
            };
            load::run(g, setup).await
        }
        BenchCommand::Report {
            items,
            bootstrap,
            design: None,
            ..
        } => {
            tokio::task::spawn_blocking(move || report_bench(items, bootstrap)).await?;
            Ok(())
        }
        BenchCommand::Report {
            design: Some(design),
            responses,
            snippets,
            participants,
            mixed,
            out,
            ..
        } => {
            let shape = designs::Shape {
                responses,
                snippets,
                participants,
                mixed,
                out,
            };
            tokio::task::spawn_blocking(move || designs::run(&design, &shape)).await?
        }
        BenchCommand::Lm {
            tokens,
            order,
            memory,
            out,
            heldout,
        } => {
            tokio::task::spawn_blocking(move || {
                lm::lm_bench(&tokens, order, memory, out, heldout.as_deref())
            })
            .await?
        }
        BenchCommand::LmNeural {
            model,
            methods,
            rounds,
            device,
            batch,
            threads,
            gguf,
            out,
        } => {
            let run = natstudy_core::service::neural::Run {
                batch: usize::from(batch),
                threads: threads.map(usize::from),
                ..Default::default()
            };
            tokio::task::spawn_blocking(move || {
                lm::lm_neural_bench(
                    &model,
                    &methods,
                    (rounds, &device, run, &gguf),
                    out.as_deref(),
                )
            })
            .await?
        }
        BenchCommand::Transform {
            corpus,
            operators,
            compile: false,
            max_lines,
            ..
        } => {
            tokio::task::spawn_blocking(move || transform_bench(&corpus, &operators, max_lines))
                .await?
        }
        BenchCommand::Transform {
            corpus,
            operators,
            compile: true,
            patch_module,
            java,
            max_lines,
            workers,
        } => {
            let setup = compile::Setup {
                operators,
                patch_module,
                java,
                max_lines,
                workers: workers
                    .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            };
            tokio::task::spawn_blocking(move || compile::run(&corpus, &setup)).await?
        }
    }
}

async fn assign_bench(g: &Global, annotators: usize, items: usize) -> Result<()> {
    let (db, _tmp) = bench_db(g).await?;
    let study = natstudy_core::bench::study(&db, items).await?;
    let k = natstudy_core::service::studies::settings(&db, study)
        .await?
        .ratings_per_item as u64;
    let bar = indicatif::ProgressBar::new(items as u64 * k);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} votes {per_sec} eta {eta}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let db = Arc::new(db);
    let tick = bar.clone();
    let run = natstudy_core::bench::vote_path(
        db.clone(),
        study,
        annotators,
        Arc::new(move || tick.inc(1)),
    )
    .await?;
    bar.finish_and_clear();
    let (k, over, wall) = (run.k, run.off_k, run.wall);
    let mut all = run.latencies;
    all.sort();
    let votes_per_s = all.len() as f64 / wall.as_secs_f64();
    let g = db.group.stats();
    println!(
        "group commit: {} transactions for {} claims and votes ({:.1} a transaction)",
        g.groups,
        g.jobs,
        g.jobs as f64 / g.groups.max(1) as f64
    );
    println!(
        "dialect {:?}: {} annotators, {} items × k={} → {} votes in {:.2} s: {:.0} votes/s; latency of a vote with the next claim median {:.1} ms, p99 {:.1} ms; items not at exactly k: {}",
        db.dialect,
        annotators,
        items,
        k,
        all.len(),
        wall.as_secs_f64(),
        votes_per_s,
        percentile(&all, 0.5).as_secs_f64() * 1000.0,
        percentile(&all, 0.99).as_secs_f64() * 1000.0,
        over
    );
    commit_anchor(&db, votes_per_s).await
}

fn report_bench(n: usize, bootstrap: usize) {
    use natstudy_engine::analysis;
    let data = analysis::synthetic::study(n, 3);
    let t0 = Instant::now();
    let options = analysis::Options {
        bootstrap,
        ..Default::default()
    };
    let report = analysis::report_with(&data, &options);
    let analysis_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let charts = natstudy_engine::plots::report_figures(&report)
        .map(|c| c.len())
        .unwrap_or(0);
    let json = serde_json::to_vec(&report).map(|v| v.len()).unwrap_or(0);
    println!(
        "report of {n} items × 5 votes ({} votes, 5 tools, 2 models, bootstrap {bootstrap}): analysis {analysis_s:.2} s, {charts} charts + JSON ({} KiB) {:.2} s",
        data.votes.len(),
        json / 1024,
        t1.elapsed().as_secs_f64()
    );
}

/// One thread, so the figures are per core.
fn transform_bench(
    corpus: &std::path::Path,
    operators: &str,
    max_lines: Option<usize>,
) -> Result<()> {
    use natstudy_engine::transform::{self, syntax, MethodSel, Request};
    let ops = natstudy_engine::generate::parse_operators(operators)?;
    let files: Vec<String> = compile::read_corpus(corpus, max_lines)?
        .into_iter()
        .map(|(_, text)| text)
        .collect();
    let lines: usize = files.iter().map(|f| f.lines().count()).sum();
    let spans: Vec<(usize, transform::MethodSpan)> = files
        .iter()
        .enumerate()
        .flat_map(|(i, f)| transform::methods(f).into_iter().map(move |m| (i, m)))
        .collect();
    println!(
        "{} files, {lines} lines, {} methods and constructors, {} operators",
        files.len(),
        spans.len(),
        ops.len()
    );
    // parse alone: one parse of the method's file per method, what any request must pay
    let t = Instant::now();
    for (i, _) in &spans {
        std::hint::black_box(syntax::parse(&files[*i]));
    }
    let parse = t.elapsed();
    let pb = crate::cli::lm::bar(spans.len() as u64, "methods");
    let (mut produced, mut failed) = (0usize, 0usize);
    let t = Instant::now();
    for (i, m) in &spans {
        let all: Vec<usize> = (1..=m.last_line - m.first_line + 1).collect();
        let req = Request {
            source: &files[*i],
            method_only: false,
            method: MethodSel::Lines(m.first_line, m.last_line),
            buggy_lines: &all,
            operators: &ops,
            all_sites: true,
        };
        match transform::transform(&req, None) {
            Ok(ts) => produced += ts.len(),
            Err(_) => failed += 1,
        }
        pb.inc(1);
    }
    let engine = t.elapsed();
    pb.finish_and_clear();
    let secs = engine.as_secs_f64();
    println!(
        "engine: {secs:.2} s for {} methods = {:.1} methods/s ({:.0} lines/s), {produced} transformations ({:.0}/s), {failed} methods with syntax errors skipped",
        spans.len(),
        spans.len() as f64 / secs.max(1e-9),
        lines as f64 / secs.max(1e-9),
        produced as f64 / secs.max(1e-9)
    );
    println!(
        "parse alone: {:.2} s; engine / parse = {:.1}",
        parse.as_secs_f64(),
        secs / parse.as_secs_f64().max(1e-9)
    );
    Ok(())
}
