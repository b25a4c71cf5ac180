//! How well a scoring's time left is foretold: scores a JSON list of methods as `natstudy lm
//! score` does (on the CPU, every core) and, at a tenth, a quarter, half and three quarters of
//! the methods, compares the time that was left with what the pace so far foretold by each
//! unit of progress — methods, bytes, and the work `Prepared::work` counts (multiply-adds).
//!
//!     cargo run --release -p natstudy-nlm --example pace -- --model DIR|FILE.gguf --methods methods.json

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use natstudy_nlm::{Batching, CausalLm};

#[derive(Parser)]
struct Args {
    /// A Hugging Face model folder or a GGUF file
    #[arg(long)]
    model: PathBuf,
    #[arg(long)]
    methods: PathBuf,
    /// CPU threads, each scoring its own batches (default: every core)
    #[arg(long)]
    threads: Option<usize>,
}

/// After a batch: seconds since the start, and methods, bytes and work done so far.
struct Mark {
    secs: f64,
    done: [f64; 3],
}

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    std::env::set_var("CANDLE_NUM_THREADS", "1");
    let methods: Vec<String> = serde_json::from_str(&std::fs::read_to_string(&a.methods)?)?;
    let texts: Vec<&str> = methods.iter().map(String::as_str).collect();
    let lm = CausalLm::load(&a.model)?;
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let batching = Batching::for_cpu(texts.len(), threads, 8);
    let start = Instant::now();
    let prepared = lm.prepare(&texts, None, batching)?;
    let work = prepared.work().to_vec();
    let all = [
        texts.len() as f64,
        texts.iter().map(|t| t.len() as f64).sum(),
        work.iter().map(|&w| w as f64).sum(),
    ];
    let mut so_far = [0f64; 3];
    let mut marks = Vec::new();
    lm.score_prepared(&prepared, |batch| {
        for (i, _) in batch {
            so_far[0] += 1.0;
            so_far[1] += texts[*i].len() as f64;
            so_far[2] += work[*i] as f64;
        }
        marks.push(Mark {
            secs: start.elapsed().as_secs_f64(),
            done: so_far,
        });
        true
    })?;
    let total = start.elapsed().as_secs_f64();
    println!(
        "{} methods in {total:.1} s on {threads} threads; time left foretold by the pace so far:",
        texts.len()
    );
    println!("at methods  elapsed  left    by methods  by bytes  by work");
    for share in [0.1, 0.25, 0.5, 0.75] {
        let Some(m) = marks.iter().find(|m| m.done[0] >= share * all[0]) else {
            continue;
        };
        let left = total - m.secs;
        let foretold: Vec<String> = (0..3)
            .map(|u| {
                let f = m.secs * (all[u] - m.done[u]) / m.done[u];
                format!("{f:7.1} s")
            })
            .collect();
        println!(
            "{:>4.0}%      {:6.1} s {left:6.1} s {}",
            100.0 * m.done[0] / all[0],
            m.secs,
            foretold.join("  ")
        );
    }
    Ok(())
}
