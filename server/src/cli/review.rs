//! `natstudy review …`: patch review from the command line.

use std::path::PathBuf;

use anyhow::Result;
use clap::Subcommand;

use super::Global;
use natstudy_core::service::reviews::{self, CreateOptions};
use natstudy_engine::analysis::TaskState;
use natstudy_engine::review::tce::Javac;

#[derive(Subcommand, Debug)]
pub enum ReviewCommand {
    /// Build the review tasks from the study's plausible patches (npr_results.csv's `patch`),
    /// deciding no-op, SYE and (with --classpath or --tce) TCE patches automatically
    Create {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// Only these tools (comma-separated)
        #[arg(long, value_delimiter = ',')]
        tools: Vec<String>,
        /// Reviewers per patch
        #[arg(long, default_value_t = 2)]
        k: u32,
        /// Classpath for the TCE check (javac -g:none); turns TCE on
        #[arg(long)]
        classpath: Option<String>,
        /// Run the TCE check without a classpath (self-contained methods)
        #[arg(long)]
        tce: bool,
        /// The javac to run
        #[arg(long, default_value = "javac")]
        javac: PathBuf,
    },
    /// List the tasks (with --open: only disagreements an admin must decide)
    List {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// Only the disagreements an admin must decide
        #[arg(long)]
        open: bool,
    },
    /// Rule on a task: correct, wrong, clear (withdraw a ruling) or send-back (an automatic
    /// decision goes to reviewers)
    Decide {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// The repair tool whose patch it is, as npr_results.csv names it
        #[arg(long)]
        tool: String,
        /// The bug or transformation the patch repairs, e.g. Lang-7 or naming_3
        #[arg(long)]
        target: String,
        /// correct, wrong, clear or send-back
        ruling: String,
    },
}

pub async fn run(g: &Global, cmd: ReviewCommand) -> Result<()> {
    let db = g.db().await?;
    match cmd {
        ReviewCommand::Create {
            study,
            tools,
            k,
            classpath,
            tce,
            javac,
        } => {
            let id = natstudy_core::service::studies::id_by_name(&db, &study).await?;
            let javac = (tce || classpath.is_some()).then_some(Javac {
                program: javac,
                classpath,
            });
            let s = reviews::create(&db, id, None, CreateOptions { tools, k, javac }).await?;
            println!("{}", s.describe());
            if s.tce_failed > 0 {
                eprintln!("TCE could not run on {} patches, e.g.:", s.tce_failed);
                for f in &s.tce_failures {
                    eprintln!("  {f}");
                }
            }
        }
        ReviewCommand::List { study, open } => {
            let id = natstudy_core::service::studies::id_by_name(&db, &study).await?;
            for t in reviews::list(&db, id, open).await? {
                let state = match t.state {
                    TaskState::Pending => "pending".to_owned(),
                    TaskState::Disagreement => "disagreement".to_owned(),
                    TaskState::Decided { correct, by } => format!(
                        "{} ({by:?})",
                        if correct { "correct" } else { "not correct" }
                    ),
                };
                let verdicts: Vec<String> =
                    t.verdicts.iter().map(|(r, v)| format!("{r}:{v}")).collect();
                println!("{}\t{}\t{state}\t{}", t.tool, t.target, verdicts.join(" "));
            }
        }
        ReviewCommand::Decide {
            study,
            tool,
            target,
            ruling,
        } => {
            let id = natstudy_core::service::studies::id_by_name(&db, &study).await?;
            let ruling = reviews::parse_ruling(&ruling)?;
            reviews::rule(&db, id, None, &tool, &target, ruling).await?;
            println!("{tool} / {target}: recorded");
        }
    }
    Ok(())
}
