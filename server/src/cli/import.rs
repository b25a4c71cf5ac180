//! `natstudy import …`

use std::path::PathBuf;

use anyhow::Result;
use clap::Subcommand;

use super::Global;
use crate::store::imports::Outcome;

#[derive(Subcommand, Debug)]
pub enum ImportCommand {
    /// Bugs and their transformations (bugs.jsonl, transformations.jsonl)
    Items {
        #[arg(long)]
        study: String,
        bugs: PathBuf,
        transformations: PathBuf,
    },
    /// Votes in the published replication layout (survey.json)
    Votes {
        #[arg(long)]
        study: String,
        survey: PathBuf,
    },
    /// Program-repair results (npr_results.csv: tool,target,status)
    Npr {
        #[arg(long)]
        study: String,
        file: PathBuf,
    },
    /// Cross-entropy scores (ce_scores.csv: model,target,cross_entropy)
    Ce {
        #[arg(long)]
        study: String,
        file: PathBuf,
    },
    /// Reviewers' verdicts on patches (reviews.csv: tool,target,reviewer,verdict[,note];
    /// verdict correct, wrong or unsure; tasks from `natstudy review create`)
    Reviews {
        #[arg(long)]
        study: String,
        file: PathBuf,
    },
}

pub async fn run(g: &Global, cmd: ImportCommand) -> Result<()> {
    let db = g.db().await?;
    let (study, outcome) = match &cmd {
        ImportCommand::Items {
            study,
            bugs,
            transformations,
        } => {
            let id = crate::store::studies::id_by_name(&db, study).await?;
            (
                study,
                crate::service::import_items(&db, id, bugs, transformations).await?,
            )
        }
        ImportCommand::Votes { study, survey } => {
            let id = crate::store::studies::id_by_name(&db, study).await?;
            (study, crate::service::import_votes(&db, id, survey).await?)
        }
        ImportCommand::Npr { study, file } => {
            let id = crate::store::studies::id_by_name(&db, study).await?;
            (
                study,
                crate::service::import_results(&db, id, crate::service::ResultsTable::Npr, file)
                    .await?,
            )
        }
        ImportCommand::Ce { study, file } => {
            let id = crate::store::studies::id_by_name(&db, study).await?;
            (
                study,
                crate::service::import_results(&db, id, crate::service::ResultsTable::Ce, file)
                    .await?,
            )
        }
        ImportCommand::Reviews { study, file } => {
            let id = crate::store::studies::id_by_name(&db, study).await?;
            (
                study,
                crate::service::reviews::import_reviews(&db, id, file).await?,
            )
        }
    };
    match outcome {
        Outcome::Imported { rows } => println!("imported {rows} rows into {study}"),
        Outcome::AlreadyImported => println!("already imported into {study}: nothing to do"),
    }
    Ok(())
}
