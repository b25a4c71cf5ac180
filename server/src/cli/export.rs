//! `natstudy export`: the labelled dataset, the long vote table, the item × annotator matrix,
//! `survey.json` in the replication layout, and the items in the interchange formats.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use super::Global;
use crate::store::export;

#[derive(Args, Debug)]
pub struct ExportArgs {
    #[arg(long)]
    pub study: String,
    /// dataset, votes, matrix, survey or items
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
    let study = crate::store::studies::id_by_name(&db, &a.study).await?;
    let n = match a.what.as_str() {
        "dataset" => {
            let csv = match a.format.as_str() {
                "jsonl" => false,
                "csv" => true,
                other => bail!("unknown format {other} (jsonl or csv)"),
            };
            export::dataset(&db, study, csv, &mut *sink(&a.out)?).await?
        }
        "votes" => {
            export::votes_table(&db, study, &mut *sink(&a.out)?, a.with_external_ids).await?
        }
        "matrix" => export::matrix(&db, study, &mut *sink(&a.out)?).await?,
        "survey" => export::survey(&db, study, &mut *sink(&a.out)?).await?,
        "items" => {
            let Some(dir) = &a.out else {
                bail!("--what items needs --out DIR")
            };
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            let mut b = sink(&Some(dir.join("bugs.jsonl")))?;
            let mut t = sink(&Some(dir.join("transformations.jsonl")))?;
            let n = export::items(&db, study, &mut *b, &mut *t).await?;
            b.flush()?;
            t.flush()?;
            n
        }
        other => bail!("unknown export {other} (dataset, votes, matrix, survey or items)"),
    };
    eprintln!("exported {n} rows");
    Ok(())
}
