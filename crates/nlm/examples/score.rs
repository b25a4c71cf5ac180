//! Scores a JSON list of methods with a model — a Hugging Face folder or a GGUF file — on the
//! CPU or a GPU, as `natstudy lm score` does (the published recipe, in batches), and prints the
//! load time and tokens/s of each round; `--out` writes each method's token count and
//! cross-entropy (nats) as JSON, to compare with transformers on the same methods.
//!
//!     cargo run --release -p natstudy-nlm --example score -- --model DIR --methods methods.json
//!     cargo build --release -p natstudy-nlm --features cuda --example score   # a GPU build

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use natstudy_nlm::{gguf::Packing, Batching, CausalLm};

#[derive(Parser)]
struct Args {
    #[arg(long)]
    model: PathBuf,
    #[arg(long)]
    methods: PathBuf,
    /// cpu or cuda
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Methods in one forward pass (1: one at a time, as the published tool)
    #[arg(long, default_value_t = 8)]
    batch: usize,
    /// CPU threads, each scoring its own batches (default: every core)
    #[arg(long)]
    threads: Option<usize>,
    /// Passes over the methods (the first warms the caches)
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// GGUF files: dequantize the projections to f32 at load
    #[arg(long)]
    f32: bool,
    #[arg(long)]
    out: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    // the threads score batches side by side; candle's own pool would only make them queue
    std::env::set_var("CANDLE_NUM_THREADS", "1");
    let methods: Vec<String> = serde_json::from_str(&std::fs::read_to_string(&a.methods)?)?;
    let texts: Vec<&str> = methods.iter().map(String::as_str).collect();
    let device = natstudy_nlm::device(&a.device)?;
    let t0 = Instant::now();
    let lm = if natstudy_nlm::gguf::is_gguf(&a.model) {
        let packing = if a.f32 { Packing::F32 } else { Packing::Packed };
        CausalLm::load_gguf(&a.model, device, packing)?
    } else {
        CausalLm::load_on(&a.model, device)?
    };
    println!(
        "{} ({}, at most {} tokens) loaded on {} in {:.2} s",
        a.model.display(),
        lm.family().name(),
        lm.max_len(),
        a.device,
        t0.elapsed().as_secs_f64()
    );
    let batching = if a.device == "cpu" {
        let threads = a
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        Batching::for_cpu(texts.len(), threads, a.batch)
    } else {
        Batching {
            sequences: a.batch.max(1),
            ..Batching::default()
        }
    };
    let mut scores = vec![None; texts.len()];
    for round in 1..=a.rounds.max(1) {
        let start = Instant::now();
        let mut tokens = 0usize;
        lm.score_texts(&texts, None, batching, |batch| {
            for (i, s) in batch {
                tokens += s.map_or(0, |s| s.tokens);
                scores[*i] = *s;
            }
            true
        })?;
        let secs = start.elapsed().as_secs_f64();
        println!(
            "round {round}: {} methods, {tokens} tokens in {secs:.3} s = {:.0} tokens/s (batches of {}, {} at once)",
            texts.len(),
            tokens as f64 / secs.max(1e-9),
            batching.sequences,
            batching.workers
        );
    }
    if let Some(out) = a.out {
        let rows: Vec<serde_json::Value> = scores
            .iter()
            .map(|s| match s {
                Some(s) => serde_json::json!({"tokens": s.tokens, "ce_nats": s.ce_nats}),
                None => serde_json::Value::Null,
            })
            .collect();
        std::fs::write(out, serde_json::to_string(&rows)?)?;
    }
    Ok(())
}
