//! `natstudy import …`

use std::path::PathBuf;

use anyhow::Result;
use clap::Subcommand;

use super::Global;
use natstudy_core::service::imports::Outcome;

#[derive(Subcommand, Debug)]
pub enum ImportCommand {
    /// Bugs from a bug dataset's buggy/fixed checkouts (PAIRS.csv: bug_id,project,buggy,fixed;
    /// each a checkout folder or a file, relative to the CSV): per bug the buggy method, its
    /// buggy lines (every line the fix deletes or replaces; for a pure insertion the line
    /// after it) and the fixed method. A fix in several methods or outside any method is
    /// skipped with its reason
    Bugs {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// The CSV of pairs (bug_id,project,buggy,fixed)
        pairs: PathBuf,
        /// Also write the derived bugs.jsonl here
        #[arg(long)]
        out: Option<PathBuf>,
        /// One record per touched method (`Lang-7#translate`) instead of skipping the bug
        #[arg(long)]
        multi_method: bool,
        /// The sources' encoding (default: UTF-8 where valid, else ISO-8859-1)
        #[arg(long)]
        encoding: Option<String>,
    },
    /// Bugs and their transformations (bugs.jsonl, transformations.jsonl)
    Items {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// The bugs: one JSON object a line (bug_id, project, file, method, source, buggy lines)
        bugs: PathBuf,
        /// Their transformations: one JSON object a line (id, bug_id, operator, level, source)
        transformations: PathBuf,
    },
    /// Snippets of a study made from a design (snippets.jsonl: a line per snippet, id, code,
    /// language, and where the design needs them original, condition, key, options, context)
    Snippets {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// The JSON lines file
        file: PathBuf,
    },
    /// Attention units of a study made from a design (attention.jsonl: the responses format
    /// without participant and seconds, a line per question checked: question, item/pair/set,
    /// the agreed answer or best and worst); every participant is shown each, outside k, and
    /// its misses count toward the study's attention limit. Replaces the study's attention units
    Attention {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// The JSON lines file
        file: PathBuf,
    },
    /// Responses to a study made from a design (responses.jsonl, the format `export --what
    /// responses` writes: participant, question, item/pair/set, answer or best and worst,
    /// seconds); participants are made as imported participants
    Responses {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// The JSON lines file
        file: PathBuf,
    },
    /// Votes in the published replication layout (survey.json)
    Votes {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// The published replication's survey.json
        survey: PathBuf,
    },
    /// Program-repair results (npr_results.csv: tool,target,status)
    Npr {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// The CSV file: tool,target,status (wrong, plausible, correct or 0, 1, 2)[,patch]
        file: PathBuf,
    },
    /// Cross-entropy scores (ce_scores.csv: model,target,cross_entropy)
    Ce {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// The CSV file: model,target,cross_entropy
        file: PathBuf,
    },
    /// Reviewers' verdicts on patches (reviews.csv: tool,target,reviewer,verdict[,note];
    /// verdict correct, wrong or unsure; tasks from `natstudy review create`)
    Reviews {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// The CSV file: tool,target,reviewer,verdict[,note]
        file: PathBuf,
    },
}

pub async fn run(g: &Global, cmd: ImportCommand) -> Result<()> {
    let db = g.db().await?;
    if let ImportCommand::Bugs {
        study,
        pairs,
        out,
        multi_method,
        encoding,
    } = &cmd
    {
        return import_bugs(
            &db,
            study,
            pairs,
            out.as_deref(),
            *multi_method,
            encoding.as_deref(),
        )
        .await;
    }
    let (study, outcome) = match &cmd {
        ImportCommand::Bugs { .. } => unreachable!("handled above"),
        ImportCommand::Items {
            study,
            bugs,
            transformations,
        } => {
            let id = natstudy_core::service::studies::id_by_name(&db, study).await?;
            (
                study,
                natstudy_core::service::imports::import_items(&db, id, bugs, transformations)
                    .await?,
            )
        }
        ImportCommand::Snippets { study, file } => {
            let id = natstudy_core::service::studies::id_by_name(&db, study).await?;
            (
                study,
                natstudy_core::service::designs::import_snippets(&db, id, file).await?,
            )
        }
        ImportCommand::Attention { study, file } => {
            let id = natstudy_core::service::studies::id_by_name(&db, study).await?;
            (
                study,
                natstudy_core::service::designs::import_attention(&db, id, file).await?,
            )
        }
        ImportCommand::Responses { study, file } => {
            let id = natstudy_core::service::studies::id_by_name(&db, study).await?;
            (
                study,
                natstudy_core::service::designs::import_responses(&db, id, file).await?,
            )
        }
        ImportCommand::Votes { study, survey } => {
            let id = natstudy_core::service::studies::id_by_name(&db, study).await?;
            (
                study,
                natstudy_core::service::imports::import_votes(&db, id, survey).await?,
            )
        }
        ImportCommand::Npr { study, file } => {
            let id = natstudy_core::service::studies::id_by_name(&db, study).await?;
            (
                study,
                natstudy_core::service::imports::import_results(
                    &db,
                    id,
                    natstudy_core::service::imports::ResultsTable::Npr,
                    file,
                )
                .await?,
            )
        }
        ImportCommand::Ce { study, file } => {
            let id = natstudy_core::service::studies::id_by_name(&db, study).await?;
            (
                study,
                natstudy_core::service::imports::import_results(
                    &db,
                    id,
                    natstudy_core::service::imports::ResultsTable::Ce,
                    file,
                )
                .await?,
            )
        }
        ImportCommand::Reviews { study, file } => {
            let id = natstudy_core::service::studies::id_by_name(&db, study).await?;
            (
                study,
                natstudy_core::service::reviews::import_reviews(&db, id, file).await?,
            )
        }
    };
    match outcome {
        Outcome::Imported { rows } => println!("imported {rows} rows into {study}"),
        Outcome::AlreadyImported => println!("already imported into {study}: nothing to do"),
    }
    Ok(())
}

async fn import_bugs(
    db: &natstudy_core::service::Db,
    study: &str,
    pairs: &std::path::Path,
    out: Option<&std::path::Path>,
    multi_method: bool,
    encoding: Option<&str>,
) -> Result<()> {
    use anyhow::Context as _;
    use natstudy_engine::bugs::{encoding::Encoding, sources::Disk, Options};
    let id = natstudy_core::service::studies::id_by_name(db, study).await?;
    let name = pairs.display().to_string();
    let text = std::fs::read_to_string(pairs).with_context(|| format!("cannot read {name}"))?;
    let n_pairs = text
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .count();
    let options = Options {
        multi_method,
        encoding: match encoding {
            Some(e) => Encoding::parse(e)?,
            None => Encoding::Detect,
        },
    };
    let base = pairs
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                std::path::Path::new(".")
            } else {
                p
            }
        })
        .unwrap_or(std::path::Path::new("."))
        .to_path_buf();
    let pb = super::lm::bar(n_pairs as u64, "pairs");
    let tick = pb.clone();
    let started = std::time::Instant::now();
    let result = natstudy_core::service::bug_import::import_bugs(
        db,
        id,
        None,
        std::sync::Arc::new(Disk { base }),
        (name, text),
        options,
        std::sync::Arc::new(move || tick.inc(1)),
    )
    .await;
    pb.finish_and_clear();
    let r = result?;
    if let Some(out) = out {
        std::fs::write(out, r.jsonl())
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    match r.outcome {
        Outcome::Imported { rows } => println!(
            "{} bugs from {rows_in} pairs in {:.2} s: {rows} new in {study}",
            r.bugs.len(),
            started.elapsed().as_secs_f64(),
            rows_in = n_pairs,
        ),
        Outcome::AlreadyImported => println!(
            "{} bugs from {n_pairs} pairs: already imported into {study}, nothing to do",
            r.bugs.len()
        ),
    }
    if !r.skipped.is_empty() {
        println!("skipped {}:", r.skipped.len());
        for (id, why) in &r.skipped {
            println!("  {id}: {why}");
        }
    }
    if let Some(out) = out {
        println!("bugs.jsonl → {}", out.display());
    }
    Ok(())
}
