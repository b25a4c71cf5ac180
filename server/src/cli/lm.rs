//! `natstudy lm …`: train the n-gram model and score a study's methods with it.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Subcommand;

use super::Global;
use natstudy_engine::lm::{self, tokenize::TokenizeOptions};

#[derive(Subcommand, Debug)]
pub enum LmCommand {
    /// Estimate an interpolated modified Kneser-Ney model (as KenLM's lmplz)
    Train {
        /// A directory of .java files: every method becomes a sentence (deduplicated)
        #[arg(long, conflicts_with = "tokens")]
        corpus: Option<PathBuf>,
        /// A pre-tokenised corpus: one sentence per line, tokens separated by spaces
        #[arg(long)]
        tokens: Option<PathBuf>,
        /// The n-gram order (lmplz's -o)
        #[arg(long, default_value_t = 4)]
        order: usize,
        /// The model: ARPA, or the binary form when the name ends in .bin
        #[arg(long)]
        out: PathBuf,
        /// Leave out every method of this study (exact match of tokens)
        #[arg(long)]
        exclude_study: Option<String>,
        /// Replace string literals longer than this by <STR>
        #[arg(long)]
        max_string_len: Option<usize>,
        /// Memory for the raw n-gram counts (e.g. 1G, 512M); beyond it sorted runs go to
        /// disk and are merged (lmplz's -S)
        #[arg(long, default_value = "1G", value_parser = parse_size)]
        memory: usize,
        /// Where spilled runs go (lmplz's -T; default: the system's temporary directory)
        #[arg(long)]
        temp_dir: Option<PathBuf>,
    },
    /// Write a directory's methods as a token file: one method a line (deduplicated), tokens
    /// separated by spaces — what `train --tokens` and KenLM's lmplz read
    Tokenize {
        /// A directory of .java files: every method becomes a line (deduplicated)
        #[arg(long)]
        corpus: PathBuf,
        /// The token file written
        #[arg(long)]
        out: PathBuf,
        /// Replace string literals longer than this by <STR>
        #[arg(long)]
        max_string_len: Option<usize>,
    },
    /// Score every bug's method and every transformation of a study and store the
    /// cross-entropies as this model's CE scores (the RNC analysis then uses them): with an
    /// n-gram model (ARPA or binary file) or a neural causal model (a Hugging Face model folder
    /// — llama, gpt_neo, bloom, gpt_bigcode — or a GGUF file of the llama family); the kind is
    /// told by the path
    Score {
        /// An n-gram model (ARPA, or binary `.bin`), a Hugging Face model folder or a GGUF file
        #[arg(long)]
        model: PathBuf,
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// The model's name in the study (default: the file or folder name)
        #[arg(long)]
        name: Option<String>,
        /// Store −log10 per token instead of bits per token
        #[arg(long, conflicts_with = "nats")]
        log10: bool,
        /// Neural models: store nats per token (transformers' `loss` exactly)
        #[arg(long)]
        nats: bool,
        /// Neural models: the most tokens of a method scored (default and at most: the model's)
        #[arg(long)]
        max_len: Option<usize>,
        /// Also write the scores as ce_scores.csv (model,target,cross_entropy)
        #[arg(long)]
        out: Option<PathBuf>,
        /// Neural models: cpu, or cuda (a build with `--features cuda`)
        #[arg(long, default_value = "cpu")]
        device: String,
        /// Neural models: methods run in one forward pass (similar lengths together; 1: one
        /// at a time, as the published tool). Larger batches use more memory
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=256))]
        batch: u16,
        /// Neural models on the CPU: threads, each scoring its own batches (default: every
        /// core). Memory grows with them: a batch's activations each
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
        threads: Option<u16>,
        /// N-gram models: replace string literals longer than this by <STR>, as the model's
        /// training did
        #[arg(long)]
        max_string_len: Option<usize>,
    },
}

fn key(tokens: &[String]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    tokens.hash(&mut h);
    h.finish()
}

pub(super) fn java_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            java_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "java") {
            out.push(path);
        }
    }
    Ok(())
}

/// A trained model: sorted (orders up to 4) or in hash maps (higher orders).
pub(super) enum Trained {
    Sorted(lm::sorted::Estimate),
    General(lm::Model),
}

impl Trained {
    pub(super) fn estimate<I, S>(
        sentences: I,
        order: usize,
        budget: &lm::sorted::Budget,
    ) -> Result<Trained>
    where
        I: IntoIterator<Item = Vec<S>>,
        S: AsRef<str>,
    {
        Ok(if order <= lm::sorted::MAX_PACKED_ORDER {
            Trained::Sorted(lm::sorted::estimate(sentences, order, budget)?)
        } else {
            Trained::General(lm::estimate::estimate_general(sentences, order)?.0)
        })
    }

    pub(super) fn sizes(&self) -> Vec<usize> {
        match self {
            Trained::Sorted(e) => e.sizes(),
            Trained::General(m) => m.grams.iter().map(|g| g.len()).collect(),
        }
    }

    pub(super) fn spilled_runs(&self) -> usize {
        match self {
            Trained::Sorted(e) => e.spilled_runs,
            Trained::General(_) => 0,
        }
    }

    /// Writes the model: the binary form when the name ends in `.bin` — the probing layout,
    /// scored as it lies, for orders up to 4 — else ARPA.
    pub(super) fn write(self, out: &Path) -> Result<()> {
        let mut w = std::io::BufWriter::new(
            std::fs::File::create(out)
                .with_context(|| format!("cannot create {}", out.display()))?,
        );
        let binary = out.extension().is_some_and(|e| e == "bin");
        match (self, binary) {
            (Trained::Sorted(e), false) => e.write_arpa(&mut w)?,
            (Trained::Sorted(e), true) => e.write_probing(&mut w)?,
            (Trained::General(m), false) => lm::arpa::write(&m, &mut w)?,
            (Trained::General(m), true) if m.order() <= lm::probing::MAX_ORDER => {
                lm::probing::write(&m, &mut w)?
            }
            (Trained::General(m), true) => lm::binary::write(&m, &mut w)?,
        }
        std::io::Write::flush(&mut w)?;
        Ok(())
    }
}

/// The tokens of a line of a token file (separated by spaces).
pub(super) fn token_line(line: &str) -> Vec<String> {
    line.split(' ')
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A size as people write it: bytes, or a number with K, M, G or T (powers of 1024).
pub(super) fn parse_size(s: &str) -> std::result::Result<usize, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => s.split_at(i),
        None => (s, ""),
    };
    let n: f64 = num.parse().map_err(|_| format!("not a size: {s}"))?;
    let scale = match unit
        .trim()
        .to_ascii_uppercase()
        .trim_end_matches(['B', 'I'])
    {
        "" => 1.0,
        "K" => 1024.0,
        "M" => 1024.0 * 1024.0,
        "G" => 1024.0 * 1024.0 * 1024.0,
        "T" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("not a size: {s} (use K, M, G or T)")),
    };
    let bytes = n * scale;
    if !(1.0..=1.0e15).contains(&bytes) {
        return Err(format!("size out of range: {s}"));
    }
    Ok(bytes as usize)
}

pub(super) fn bar(len: u64, what: &str) -> indicatif::ProgressBar {
    let b = indicatif::ProgressBar::new(len);
    let style = indicatif::ProgressStyle::with_template(&format!(
        "{{bar:40}} {{pos}}/{{len}} {what} {{per_sec}} eta {{eta}}"
    ))
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    b.set_style(style);
    b
}

pub async fn run(g: &Global, cmd: LmCommand) -> Result<()> {
    match cmd {
        LmCommand::Train {
            corpus,
            tokens,
            order,
            out,
            exclude_study,
            max_string_len,
            memory,
            temp_dir,
        } => {
            let budget = lm::sorted::Budget { memory, temp_dir };
            let out_name = out.display().to_string();
            let opts = TokenizeOptions { max_string_len };
            let mut excluded: HashSet<u64> = HashSet::new();
            if let Some(s) = &exclude_study {
                let db = g.db().await?;
                let study = natstudy_core::service::studies::id_by_name(&db, s).await?;
                for src in natstudy_core::service::scoring::study_sources(&db, study)
                    .await?
                    .into_iter()
                    .map(|(_, s)| s)
                {
                    excluded.insert(key(&lm::tokenize::tokens(&src, opts)));
                }
            }
            let started = std::time::Instant::now();
            let (model, sentences, tokens_n) = tokio::task::spawn_blocking(move || -> Result<_> {
                let mut seen: HashSet<u64> = HashSet::new();
                let mut n_sent = 0u64;
                let mut n_tok = 0u64;
                let model = match (corpus, tokens) {
                    (Some(dir), None) => {
                        let mut files = Vec::new();
                        java_files(&dir, &mut files)?;
                        let pb = bar(files.len() as u64, "files");
                        let sentences = files.into_iter().flat_map(|f| {
                            pb.inc(1);
                            let text = std::fs::read_to_string(&f).unwrap_or_default();
                            lm::tokenize::methods(&text, opts)
                        });
                        let filtered = sentences.filter(|m| {
                            let k = key(m);
                            let keep = !excluded.contains(&k) && seen.insert(k);
                            if keep {
                                n_sent += 1;
                                n_tok += m.len() as u64;
                            }
                            keep
                        });
                        let trained = Trained::estimate(filtered, order, &budget)?;
                        pb.finish_and_clear();
                        trained
                    }
                    (None, Some(file)) => {
                        use std::io::BufRead;
                        let f = std::fs::File::open(&file)
                            .with_context(|| format!("cannot read {}", file.display()))?;
                        let size = f.metadata().map(|m| m.len()).unwrap_or(0);
                        let pb = bar(size, "bytes");
                        let lines = std::io::BufReader::new(f)
                            .lines()
                            .map_while(|l| l.ok())
                            .map(|l| {
                                pb.inc(l.len() as u64 + 1);
                                n_sent += 1;
                                let toks = token_line(&l);
                                n_tok += toks.len() as u64;
                                toks
                            });
                        let trained = Trained::estimate(lines, order, &budget)?;
                        pb.finish_and_clear();
                        trained
                    }
                    _ => bail!("give --corpus DIR or --tokens FILE"),
                };
                Ok((model, n_sent, n_tok))
            })
            .await??;
            let secs = started.elapsed().as_secs_f64();
            let sizes: Vec<String> = model
                .sizes()
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{}-grams {n}", i + 1))
                .collect();
            let spilled = model.spilled_runs();
            tokio::task::spawn_blocking(move || model.write(&out).map(|()| out)).await??;
            println!(
                "trained on {sentences} sentences, {tokens_n} tokens in {secs:.2} s ({:.0} tokens/s{}): {}; wrote {}",
                tokens_n as f64 / secs.max(1e-9),
                if spilled > 0 { format!(", {spilled} sorted runs spilled to disk") } else { String::new() },
                sizes.join(", "),
                out_name
            );
        }
        LmCommand::Tokenize {
            corpus,
            out,
            max_string_len,
        } => {
            let opts = TokenizeOptions { max_string_len };
            let (sentences, tokens) = tokio::task::spawn_blocking(move || -> Result<(u64, u64)> {
                let mut files = Vec::new();
                java_files(&corpus, &mut files)?;
                let pb = bar(files.len() as u64, "files");
                let mut w = std::io::BufWriter::new(
                    std::fs::File::create(&out)
                        .with_context(|| format!("cannot create {}", out.display()))?,
                );
                let mut seen: HashSet<u64> = HashSet::new();
                let (mut n_sent, mut n_tok) = (0u64, 0u64);
                for f in files {
                    pb.inc(1);
                    let text = std::fs::read_to_string(&f).unwrap_or_default();
                    for m in lm::tokenize::methods(&text, opts) {
                        if seen.insert(key(&m)) {
                            n_sent += 1;
                            n_tok += m.len() as u64;
                            std::io::Write::write_all(&mut w, m.join(" ").as_bytes())?;
                            std::io::Write::write_all(&mut w, b"\n")?;
                        }
                    }
                }
                std::io::Write::flush(&mut w)?;
                pb.finish_and_clear();
                Ok((n_sent, n_tok))
            })
            .await??;
            println!("wrote {sentences} methods, {tokens} tokens");
        }
        LmCommand::Score {
            model,
            study,
            name,
            log10,
            nats,
            max_len,
            out,
            device,
            batch,
            threads,
            max_string_len,
        } => {
            let db = g.db().await?;
            let id = natstudy_core::service::studies::id_by_name(&db, &study).await?;
            if natstudy_core::service::neural::is_neural(&model) {
                let unit = match (nats, log10) {
                    (true, _) => natstudy_core::service::neural::Unit::Nats,
                    (_, true) => natstudy_core::service::neural::Unit::Log10,
                    _ => natstudy_core::service::neural::Unit::Bits,
                };
                let target = NeuralTarget {
                    model: &model,
                    device: &device,
                    name,
                    unit,
                    max_len,
                    batch: usize::from(batch),
                    threads: threads.map(usize::from),
                };
                return score_neural(&db, id, target, out.as_deref()).await;
            }
            if nats || max_len.is_some() || device != "cpu" {
                anyhow::bail!(
                    "--nats, --max-len and --device are for neural models (a model folder or a GGUF file)"
                );
            }
            let name = match name {
                Some(n) => n,
                None => model
                    .file_stem()
                    .map(|s| s.to_string_lossy().to_string())
                    .unwrap_or_else(|| "ngram".into()),
            };
            let m = std::sync::Arc::new(natstudy_core::service::models::load_model(&model).await?);
            let opts = TokenizeOptions { max_string_len };
            let started = std::time::Instant::now();
            let pb = bar(0, "methods");
            let bar_len = pb.clone();
            let bar_inc = pb.clone();
            let scored = natstudy_core::service::scoring::score_study(
                &db,
                id,
                None,
                m,
                &name,
                opts,
                log10,
                move |n| bar_len.set_length(n),
                std::sync::Arc::new(move || {
                    bar_inc.inc(1);
                    true
                }),
            )
            .await?;
            pb.finish_and_clear();
            let secs = started.elapsed().as_secs_f64();
            let (n, tokens_n) = (scored.methods, scored.tokens);
            println!("scored {n} methods ({tokens_n} tokens) in {secs:.2} s ({:.0} tokens/s) as model {name}", tokens_n as f64 / secs.max(1e-9));
            if let Some(out) = out {
                let rows = natstudy_core::service::scoring::ce_of_model(&db, id, &name).await?;
                write_ce_csv(&out, &rows)?;
            }
        }
    }
    Ok(())
}

/// `ce_scores.csv` (model,target,cross_entropy) of scored rows.
fn write_ce_csv(out: &Path, rows: &[natstudy_engine::formats::results::CeRecord]) -> Result<()> {
    let file =
        std::fs::File::create(out).with_context(|| format!("cannot write {}", out.display()))?;
    let mut w = natstudy_core::service::exports::SafeCsv::new(std::io::BufWriter::new(file));
    w.write_record(["model", "target", "cross_entropy"])?;
    for r in rows {
        w.write_record([
            r.model.as_str(),
            r.target.as_str(),
            &format!("{}", r.cross_entropy),
        ])?;
    }
    w.flush()?;
    println!("ce_scores.csv → {}", out.display());
    Ok(())
}

/// What `lm score` runs a neural model with.
struct NeuralTarget<'a> {
    model: &'a Path,
    device: &'a str,
    name: Option<String>,
    unit: natstudy_core::service::neural::Unit,
    max_len: Option<usize>,
    batch: usize,
    threads: Option<usize>,
}

/// `lm score` with a neural model: loaded once, the methods scored in batches of similar
/// lengths, shortest first, with a bar of tokens/s.
async fn score_neural(
    db: &natstudy_core::service::Db,
    study: natstudy_vocab::ids::StudyId,
    target: NeuralTarget<'_>,
    out: Option<&Path>,
) -> Result<()> {
    let NeuralTarget {
        model,
        device,
        name,
        unit,
        max_len,
        batch,
        threads,
    } = target;
    let name = name.unwrap_or_else(|| natstudy_core::service::neural::default_name(model));
    let loading = std::time::Instant::now();
    let lm = std::sync::Arc::new(natstudy_core::service::neural::load_on(model, device).await?);
    println!(
        "loaded {} ({}, at most {} tokens) in {:.2} s",
        model.display(),
        lm.family().name(),
        lm.max_len(),
        loading.elapsed().as_secs_f64()
    );
    let started = std::time::Instant::now();
    // the bar counts the methods' work (multiply-adds, padding and attention included: the
    // costliest go first, so a count of methods would put the end too far away)
    let pb = bar(0, "methods");
    if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:40} {msg} eta {eta}") {
        pb.set_style(style);
    }
    let (bar_len, bar_inc) = (pb.clone(), pb.clone());
    // counted as a scoring job counts them
    // no time budget: the command line's user stops it
    let counters = natstudy_core::service::jobs::Counters::within(None);
    let seen = counters.clone();
    let t0 = started;
    let scored = natstudy_core::service::neural::score_study(
        db,
        study,
        None,
        lm,
        &name,
        natstudy_core::service::neural::Run {
            unit,
            max_len,
            batch,
            threads,
        },
        move |n, work| {
            counters.begin(n, work);
            bar_len.set_length(work);
        },
        std::sync::Arc::new(move |tokens, work| {
            use std::sync::atomic::Ordering::Relaxed;
            seen.step(tokens, work);
            bar_inc.set_message(format!(
                "{}/{} methods, {:.0} tokens/s",
                seen.done.load(Relaxed),
                seen.total.load(Relaxed),
                seen.tokens.load(Relaxed) as f64 / t0.elapsed().as_secs_f64().max(1e-9)
            ));
            bar_inc.inc(work);
            true
        }),
    )
    .await?;
    pb.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    println!(
        "scored {} methods ({} tokens) in {secs:.2} s ({:.0} tokens/s) as model {name}",
        scored.methods,
        scored.tokens,
        scored.tokens as f64 / secs.max(1e-9)
    );
    if let Some(out) = out {
        write_ce_csv(out, &scored.rows)?;
    }
    Ok(())
}
