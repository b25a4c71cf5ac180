//! `natstudy lm …`: train the n-gram model and score a study's methods with it.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Subcommand;

use super::Global;
use crate::engine::lm::{self, tokenize::TokenizeOptions};

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
    },
    /// Compute the cross-entropy of every bug and transformation of a study and store them as
    /// this model's CE scores (the RNC analysis then uses them)
    Score {
        #[arg(long)]
        model: PathBuf,
        #[arg(long)]
        study: String,
        /// The model's name in the study (default: the file stem)
        #[arg(long)]
        name: Option<String>,
        /// Store −log10 per token (the published tool's unit) instead of bits per token
        #[arg(long)]
        log10: bool,
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
        } => {
            let opts = TokenizeOptions { max_string_len };
            let mut excluded: HashSet<u64> = HashSet::new();
            if let Some(s) = &exclude_study {
                let db = g.db().await?;
                let study = crate::store::studies::id_by_name(&db, s).await?;
                for src in crate::store::analysis::sources(&db, study)
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
                        let (model, _) = lm::estimate::estimate(filtered, order)?;
                        pb.finish_and_clear();
                        model
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
                                let toks: Vec<String> = l
                                    .split(' ')
                                    .filter(|t| !t.is_empty())
                                    .map(str::to_owned)
                                    .collect();
                                n_tok += toks.len() as u64;
                                toks
                            });
                        let (model, _) = lm::estimate::estimate(lines, order)?;
                        pb.finish_and_clear();
                        model
                    }
                    _ => bail!("give --corpus DIR or --tokens FILE"),
                };
                Ok((model, n_sent, n_tok))
            })
            .await??;
            let secs = started.elapsed().as_secs_f64();
            let mut w = std::io::BufWriter::new(
                std::fs::File::create(&out)
                    .with_context(|| format!("cannot create {}", out.display()))?,
            );
            if out.extension().is_some_and(|e| e == "bin") {
                lm::binary::write(&model, &mut w)?;
            } else {
                lm::arpa::write(&model, &mut w)?;
            }
            let sizes: Vec<String> = model
                .grams
                .iter()
                .enumerate()
                .map(|(i, g)| format!("{}-grams {}", i + 1, g.len()))
                .collect();
            println!(
                "trained on {sentences} sentences, {tokens_n} tokens in {secs:.2} s ({:.0} tokens/s): {}; wrote {}",
                tokens_n as f64 / secs.max(1e-9),
                sizes.join(", "),
                out.display()
            );
        }
        LmCommand::Score {
            model,
            study,
            name,
            log10,
            max_string_len,
        } => {
            let db = g.db().await?;
            let id = crate::store::studies::id_by_name(&db, &study).await?;
            let name = match name {
                Some(n) => n,
                None => model
                    .file_stem()
                    .map(|s| s.to_string_lossy().to_string())
                    .unwrap_or_else(|| "ngram".into()),
            };
            let m = crate::service::load_model(&model).await?;
            let opts = TokenizeOptions { max_string_len };
            let started = std::time::Instant::now();
            let pb = bar(0, "methods");
            let bar_len = pb.clone();
            let bar_inc = pb.clone();
            let scored = crate::service::score_study(
                &db,
                id,
                None,
                m,
                &name,
                opts,
                log10,
                move |n| bar_len.set_length(n),
                std::sync::Arc::new(move || bar_inc.inc(1)),
            )
            .await?;
            pb.finish_and_clear();
            let secs = started.elapsed().as_secs_f64();
            let (n, tokens_n) = (scored.methods, scored.tokens);
            println!("scored {n} methods ({tokens_n} tokens) in {secs:.2} s ({:.0} tokens/s) as model {name}", tokens_n as f64 / secs.max(1e-9));
        }
    }
    Ok(())
}
