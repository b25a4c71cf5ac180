//! `natstudy export`: the labelled dataset, the long vote table, the item × annotator matrix,
//! `survey.json` in the replication layout, and the items in the interchange formats.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use super::Global;
use natstudy_core::service::exports::{self, Export};

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The study, by its name (`natstudy study list` lists them)
    #[arg(long)]
    pub study: String,
    /// dataset, votes, matrix, survey (survey.json as the published package's rq1.py reads
    /// it), survey-participants, items, top-natural, reviews (one row per patch: its
    /// decision), review-verdicts (the reviewers' verdicts, as `import reviews` reads them), npr
    /// and ce (the repair results and cross-entropies, as `import npr` and `import ce` read
    /// them), participants (one row per participant: crowd ids, outcome, code, time, gold,
    /// screener answers) or benchmark (a folder per item: transformed buggy and fixed files,
    /// meta.json; index.jsonl); for a study made from a design, responses (JSON lines, the
    /// format `import responses` reads; `--format csv`: the same long table, with its codebook
    /// beside the file)
    #[arg(long)]
    pub what: String,
    /// For the dataset: jsonl or csv
    #[arg(long, default_value = "jsonl")]
    pub format: String,
    /// A file (a directory for `items`); standard output when absent
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Include crowd-worker ids in the vote table
    #[arg(long)]
    pub with_external_ids: bool,
    /// With `votes` or `participants`: the pilot participants' (who are in no other export)
    #[arg(long)]
    pub pilot: bool,
    /// For `top-natural`: the language model whose RNC ranks the transformations
    #[arg(long)]
    pub model: Option<String>,
    /// For `top-natural`: the share of transformations to keep, most natural first
    #[arg(long, default_value_t = 10.0)]
    pub percent: f64,
    /// For `benchmark`: only these naturalness categories, comma-separated (natural,
    /// likely-natural, likely-unnatural, unnatural, unrated)
    #[arg(long)]
    pub category: Option<String>,
    /// For `benchmark`: only items `natstudy verify` found to compile (and test as the original)
    #[arg(long)]
    pub verified: bool,
    /// For `survey` and `survey-participants`: every rated item, not only those with five
    /// votes (the file is then for `import votes` and other readers, not `rq1.py`)
    #[arg(long)]
    pub all_items: bool,
}

/// `survey.json` as the published package's `rq1.py` reads it and, beside a file, the
/// participants' numbers (`NAME-participants.csv`); what was left out on standard error.
async fn survey(
    db: &natstudy_core::service::Db,
    study: natstudy_vocab::ids::StudyId,
    a: &ExportArgs,
) -> Result<u64> {
    let options = natstudy_engine::formats::replication::Options {
        all_items: a.all_items,
    };
    let layout = exports::survey(db, study, options).await?;
    let mut out = sink(&a.out)?;
    out.write_all(layout.json.as_bytes())?;
    out.flush()?;
    if let Some(path) = &a.out {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "survey".into());
        let mapping = path.with_file_name(format!("{stem}-participants.csv"));
        let mut m = sink(&Some(mapping.clone()))?;
        exports::survey_participants(&layout, &mut m)?;
        m.flush()?;
        eprintln!(
            "{} participants' numbers in {}",
            layout.participants.len(),
            mapping.display()
        );
    }
    eprintln!(
        "{} items, {} votes in the published order (naming, expression, statement)",
        layout.items, layout.votes
    );
    if !layout.left_out.is_empty() {
        eprintln!(
            "left out {} items without exactly five votes (--all-items keeps them): {}",
            layout.left_out.len(),
            layout
                .left_out
                .iter()
                .take(10)
                .map(|(k, n)| format!("{k} ({n})"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if layout.untimed > 0 {
        eprintln!(
            "{} untimed votes written as \"Time\": NaN (rq1.py's time figures then read nan)",
            layout.untimed
        );
    }
    if layout.highest_number() > 10 {
        eprintln!(
            "participants are numbered up to S{}: rq1.py reads S1 to S10 (its `ID -= 5`); each \
             item's raters are in distinct columns (n - 1) mod 5",
            layout.highest_number()
        );
    }
    Ok(layout.votes as u64)
}

/// The responses of a designed study: JSON lines, or with `--format csv` the long table and,
/// beside a file, its codebook (`NAME-codebook.csv`).
async fn responses(
    db: &natstudy_core::service::Db,
    study: natstudy_vocab::ids::StudyId,
    a: &ExportArgs,
) -> Result<u64> {
    let mut out = sink(&a.out)?;
    let n = match a.format.as_str() {
        "jsonl" => {
            let text = natstudy_core::service::designs::export_responses(db, study).await?;
            out.write_all(text.as_bytes())?;
            text.lines().count() as u64
        }
        "csv" => {
            let (table, codebook) =
                natstudy_core::service::designs::export_responses_csv(db, study).await?;
            out.write_all(table.as_bytes())?;
            if let Some(path) = &a.out {
                let stem = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "responses".into());
                let book = path.with_file_name(format!("{stem}-codebook.csv"));
                std::fs::write(&book, codebook)
                    .with_context(|| format!("cannot write {}", book.display()))?;
                eprintln!(
                    "the codebook (each question, its kind, scale and labels) in {}",
                    book.display()
                );
            }
            table.lines().count().saturating_sub(1) as u64
        }
        other => bail!("unknown format {other} (jsonl or csv)"),
    };
    out.flush()?;
    Ok(n)
}

fn sink(path: &Option<PathBuf>) -> Result<Box<dyn Write + Send>> {
    Ok(match path {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout())),
    })
}

pub async fn run(g: &Global, a: ExportArgs) -> Result<()> {
    let db = g.db().await?;
    let study = natstudy_core::service::studies::id_by_name(&db, &a.study).await?;
    if a.pilot && !matches!(a.what.as_str(), "votes" | "participants") {
        bail!("--pilot exports the pilot's votes or participants: --what votes or participants");
    }
    let n = match a.what.as_str() {
        "responses" => responses(&db, study, &a).await?,
        "dataset" => {
            let csv = match a.format.as_str() {
                "jsonl" => false,
                "csv" => true,
                other => bail!("unknown format {other} (jsonl or csv)"),
            };
            exports::write(&db, study, Export::Dataset { csv }, &mut sink(&a.out)?).await?
        }
        "votes" => {
            let what = Export::Votes {
                external_ids: a.with_external_ids,
                pilot: a.pilot,
            };
            exports::write(&db, study, what, &mut sink(&a.out)?).await?
        }
        "matrix" => exports::write(&db, study, Export::Matrix, &mut sink(&a.out)?).await?,
        "survey" => survey(&db, study, &a).await?,
        "survey-participants" => {
            let what = Export::SurveyParticipants {
                all_items: a.all_items,
            };
            exports::write(&db, study, what, &mut sink(&a.out)?).await?
        }
        "reviews" => exports::write(&db, study, Export::Reviews, &mut sink(&a.out)?).await?,
        "npr" => exports::write(&db, study, Export::Npr, &mut sink(&a.out)?).await?,
        "ce" => exports::write(&db, study, Export::Ce, &mut sink(&a.out)?).await?,
        "participants" => {
            let what = Export::Participants { pilot: a.pilot };
            exports::write(&db, study, what, &mut sink(&a.out)?).await?
        }
        "review-verdicts" => {
            exports::write(&db, study, Export::ReviewVerdicts, &mut sink(&a.out)?).await?
        }
        "benchmark" => {
            let Some(dir) = &a.out else {
                bail!("--what benchmark needs --out DIR")
            };
            let filter = exports::BenchmarkFilter {
                categories: match &a.category {
                    Some(list) => exports::BenchmarkFilter::categories(list)?,
                    None => Vec::new(),
                },
                verified: a.verified,
            };
            exports::benchmark(&db, study, dir, &filter).await?
        }
        "items" => {
            let Some(dir) = &a.out else {
                bail!("--what items needs --out DIR")
            };
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            let mut b = sink(&Some(dir.join("bugs.jsonl")))?;
            let mut t = sink(&Some(dir.join("transformations.jsonl")))?;
            let n = exports::items(&db, study, &mut b, &mut t).await?;
            b.flush()?;
            t.flush()?;
            n
        }
        "top-natural" => {
            let Some(model) = &a.model else {
                bail!("--what top-natural needs --model NAME")
            };
            let mut out = sink(&a.out)?;
            let n = exports::top_natural(&db, study, model, a.percent, &mut out).await?;
            out.flush()?;
            n
        }
        other => {
            bail!("unknown export {other} (responses, dataset, votes, matrix, survey, survey-participants, items, top-natural, reviews, review-verdicts, npr, ce, participants or benchmark)")
        }
    };
    eprintln!("exported {n} rows");
    Ok(())
}
