//! The language models' benchmarks: the n-gram model's training (and, with a held-out file,
//! its scoring), and a neural model's scoring speed and peak memory.

use std::time::Instant;

use anyhow::Result;

pub(super) fn lm_bench(
    file: &std::path::Path,
    order: usize,
    memory: usize,
    out: Option<std::path::PathBuf>,
    heldout: Option<&std::path::Path>,
) -> Result<()> {
    use anyhow::Context;
    use std::io::BufRead;
    let started = Instant::now();
    let f = std::fs::File::open(file).with_context(|| format!("cannot read {}", file.display()))?;
    let mut n_tokens = 0u64;
    let mut n_sentences = 0u64;
    let lines = std::io::BufReader::with_capacity(1 << 20, f)
        .lines()
        .map_while(|l| l.ok())
        .map(|l| {
            n_sentences += 1;
            let toks = crate::cli::lm::token_line(&l);
            n_tokens += toks.len() as u64;
            toks
        });
    let budget = natstudy_engine::lm::sorted::Budget {
        memory,
        temp_dir: None,
    };
    let trained = crate::cli::lm::Trained::estimate(lines, order, &budget)?;
    let estimated = started.elapsed().as_secs_f64();
    let sizes = trained.sizes();
    let spilled = trained.spilled_runs();
    let tmp = tempfile::Builder::new().suffix(".arpa").tempfile()?;
    let path = out.unwrap_or_else(|| tmp.path().to_owned());
    let t = Instant::now();
    trained.write(&path)?;
    let written = t.elapsed().as_secs_f64();
    let total = started.elapsed().as_secs_f64();
    println!(
        "lm train, order {order}: {n_sentences} sentences, {n_tokens} tokens; n-grams {sizes:?}; \
         counting + estimation {estimated:.2} s, model file written in {written:.2} s ({} MiB), total {total:.2} s \
         = {:.0} tokens/s; {spilled} runs spilled; peak memory {} MiB",
        std::fs::metadata(&path).map(|m| m.len() >> 20).unwrap_or(0),
        n_tokens as f64 / total.max(1e-9),
        peak_rss_mib().map_or("?".into(), |m| m.to_string()),
    );
    if let Some(heldout) = heldout {
        score_bench(&path, heldout)?;
    }
    Ok(())
}

/// Loads an ARPA model as `lm score` does and scores a token file on one core.
fn score_bench(model: &std::path::Path, heldout: &std::path::Path) -> Result<()> {
    use natstudy_engine::lm;
    let t = Instant::now();
    let m = lm::binary::load_scorer(model)?; // ARPA or binary, as `lm score` loads it
    let loaded = t.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(heldout)?;
    let lines: Vec<Vec<String>> = text.lines().map(crate::cli::lm::token_line).collect();
    let t = Instant::now();
    let (mut tokens, mut total) = (0usize, 0.0f64);
    for l in &lines {
        let refs: Vec<&str> = l.iter().map(String::as_str).collect();
        let s = m.score(&refs);
        tokens += s.token_log10.len();
        total += s.total_log10;
    }
    let scored = t.elapsed().as_secs_f64();
    println!(
        "lm score: model loaded in {loaded:.2} s; {} sentences, {tokens} tokens (</s> included) scored in {scored:.2} s on one core = {:.0} tokens/s; total log10 {total:.1}",
        lines.len(),
        tokens as f64 / scored.max(1e-9)
    );
    Ok(())
}

pub(super) fn lm_neural_bench(
    model: &std::path::Path,
    methods: &std::path::Path,
    (rounds, device, run, gguf): (usize, &str, natstudy_core::service::neural::Run, &str),
    out: Option<&std::path::Path>,
) -> Result<()> {
    use anyhow::Context as _;
    let text = std::fs::read_to_string(methods)
        .with_context(|| format!("cannot read {}", methods.display()))?;
    let methods: Vec<String> = serde_json::from_str(&text)
        .with_context(|| format!("{}: a JSON list of strings", methods.display()))?;
    let texts: Vec<&str> = methods.iter().map(String::as_str).collect();
    let t0 = Instant::now();
    let on = natstudy_nlm::device(device)?;
    natstudy_core::service::neural::check_memory(model, &on)?;
    let packing = match gguf {
        "packed" => natstudy_nlm::gguf::Packing::Packed,
        "f32" => natstudy_nlm::gguf::Packing::F32,
        _ => natstudy_nlm::gguf::Packing::Packed,
    };
    if natstudy_nlm::gguf::is_gguf(model) {
        println!("GGUF projections: {packing:?}");
    }
    let lm = natstudy_nlm::CausalLm::load_packed_until(model, on, packing, &|_| false)?;
    let batching = run.batching(&lm, texts.len());
    println!(
        "{} ({}, at most {} tokens) loaded on {device} in {:.3} s; batches of {}, {} at once",
        model.display(),
        lm.family().name(),
        lm.max_len(),
        t0.elapsed().as_secs_f64(),
        batching.sequences,
        batching.workers,
    );
    let mut scores = vec![None; texts.len()];
    for round in 1..=rounds.max(1) {
        let start = Instant::now();
        let mut tokens = 0usize;
        lm.score_texts(&texts, None, batching, |scored| {
            for &(i, s) in scored {
                tokens += s.map_or(0, |s| s.tokens);
                if let Some(slot) = scores.get_mut(i) {
                    *slot = s;
                }
            }
            true
        })?;
        let secs = start.elapsed().as_secs_f64();
        println!(
            "round {round}: {} methods, {tokens} tokens in {secs:.3} s = {:.0} tokens/s",
            methods.len(),
            tokens as f64 / secs.max(1e-9)
        );
    }
    println!(
        "peak memory {} MiB",
        peak_rss_mib().map_or("?".into(), |m| m.to_string())
    );
    if let Some(out) = out {
        let rows: Vec<serde_json::Value> = scores
            .iter()
            .map(|s| match s {
                Some(s) => serde_json::json!({ "tokens": s.tokens, "ce_nats": s.ce_nats }),
                None => serde_json::Value::Null,
            })
            .collect();
        std::fs::write(out, serde_json::to_string(&rows)?)
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    Ok(())
}

/// The process's peak resident memory (Linux: `VmHWM`), in MiB.
fn peak_rss_mib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024)
}
