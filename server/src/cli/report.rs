//! `natstudy report`: the study's results as readable tables or as `report.json`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::Global;
use natstudy_engine::analysis;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The study's name
    #[arg(long)]
    pub study: String,
    /// Print the report as JSON (the keys of expected.json, and more)
    #[arg(long)]
    pub json: bool,
    /// Write report.json, the tables (tables/ID.csv and tables/ID.tex, booktabs), the figures
    /// (figures/ID.svg, ID.pdf and ID.png at 300 dpi) and report.tex into this directory
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Leave out annotators whose gold-item accuracy is below this share (0..1)
    #[arg(long)]
    pub min_gold_accuracy: Option<f64>,
    /// Bootstrap replicates for the agreement intervals (0 to skip)
    #[arg(long, default_value_t = 1000)]
    pub bootstrap: usize,
    /// A target (bug or transformation) without a tool's repair status: skip (leave it out,
    /// and a bug's transformations with it) or wrong (read it as wrong, as the published
    /// package's scripts do). Either way the report lists such targets per tool
    #[arg(long, default_value = "skip", value_parser = ["skip", "wrong"])]
    pub missing_npr: String,
    /// Put the votes of excluded participants back into every figure (the report still names
    /// them; without this they count nowhere)
    #[arg(long)]
    pub include_excluded: bool,
}

pub async fn run(g: &Global, args: ReportArgs) -> Result<()> {
    let db = g.db().await?;
    let study = natstudy_core::service::studies::id_by_name(&db, &args.study).await?;
    if natstudy_core::service::designs::is_designed(&db, study).await? {
        return designed(&db, study, &args).await;
    }
    let options = analysis::Options {
        min_gold_accuracy: args.min_gold_accuracy,
        bootstrap: args.bootstrap,
        missing_npr: analysis::MissingNpr::parse(&args.missing_npr).unwrap_or_default(),
        ..Default::default()
    };
    let missing_read = options.missing_npr;
    let (report, figures) =
        natstudy_core::service::reports::analyse(&db, study, args.include_excluded, options)
            .await?;
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join("report.json");
        std::fs::write(&path, serde_json::to_vec_pretty(&report)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
        // the tables and figures as a paper takes them, and report.tex
        let tables = natstudy_core::present::tables::tables(&report);
        let figures = natstudy_core::present::wire::figures(figures?);
        let study = args.study.clone();
        let files = tokio::task::spawn_blocking(move || {
            natstudy_core::service::paper::files(&study, &tables, &figures)
        })
        .await??;
        write_files(dir, &files)?;
        eprintln!(
            "wrote {} files: tables/ (CSV, LaTeX), figures/ (SVG, PDF, PNG) and report.tex",
            files.len()
        );
    }
    // never silent: the targets a tool has no status for, and how they were read
    for (tool, t) in &report.robustness {
        if !t.missing.is_empty() {
            let first: Vec<&str> = t.missing.iter().take(5).map(String::as_str).collect();
            eprintln!(
                "{tool}: {} targets without a repair status, {} (--missing-npr): {}{}",
                t.missing.len(),
                match missing_read {
                    analysis::MissingNpr::Skip => "left out",
                    analysis::MissingNpr::Wrong => "read as wrong",
                },
                first.join(", "),
                if t.missing.len() > first.len() {
                    ", …"
                } else {
                    ""
                }
            );
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else if args.out.is_none() {
        print!(
            "{}",
            natstudy_core::present::text::render_text(&args.study, &report)
        );
    }
    Ok(())
}

/// The report of a study made from a design: report.json with one entry per question, and
/// the text of it on standard output.
async fn designed(
    db: &natstudy_core::service::Db,
    study: natstudy_vocab::ids::StudyId,
    args: &ReportArgs,
) -> Result<()> {
    let report =
        natstudy_core::service::designs::report_json(db, study, args.include_excluded).await?;
    let text = serde_json::to_string_pretty(&report)?;
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join("report.json");
        std::fs::write(&path, &text).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
        // each question's tables (CSV, LaTeX with their intervals) and report.tex
        let tables = natstudy_core::present::questions::tables(&report);
        let study = args.study.clone();
        let drawn = report.clone();
        let files = tokio::task::spawn_blocking(move || -> Result<_> {
            let figures = natstudy_core::present::wire::figures(
                natstudy_engine::plots::question_figures(&drawn)
                    .map_err(|e| anyhow::anyhow!("{e}"))?,
            );
            Ok(natstudy_core::service::paper::files(
                &study, &tables, &figures,
            )?)
        })
        .await??;
        write_files(dir, &files)?;
        eprintln!(
            "wrote {} files: tables/ (CSV, LaTeX), figures/ (SVG, PDF, PNG) and report.tex",
            files.len()
        );
    }
    if args.json || args.out.is_none() {
        println!("{text}");
    }
    Ok(())
}

/// Writes each (path under `dir`, bytes), making the folders on the way.
fn write_files(dir: &std::path::Path, files: &[(String, Vec<u8>)]) -> Result<()> {
    for (name, bytes) in files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
