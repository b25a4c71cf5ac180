//! `natstudy report`: the study's results as readable tables or as `report.json`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::Global;
use crate::engine::analysis;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The study's name
    #[arg(long)]
    pub study: String,
    /// Print the report as JSON (the keys of expected.json, and more)
    #[arg(long)]
    pub json: bool,
    /// Write report.json, the charts (SVG), the tables (tables/ID.csv and tables/ID.tex,
    /// booktabs) and report.tex into this directory
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Leave out annotators whose gold-item accuracy is below this share (0..1)
    #[arg(long)]
    pub min_gold_accuracy: Option<f64>,
    /// Bootstrap replicates for the agreement intervals (0 to skip)
    #[arg(long, default_value_t = 1000)]
    pub bootstrap: usize,
}

pub async fn run(g: &Global, args: ReportArgs) -> Result<()> {
    let db = g.db().await?;
    let study = crate::store::studies::id_by_name(&db, &args.study).await?;
    let data = crate::store::analysis::study_data(&db, study).await?;
    let options = analysis::Options {
        min_gold_accuracy: args.min_gold_accuracy,
        bootstrap: args.bootstrap,
        ..Default::default()
    };
    let (report, charts) = tokio::task::spawn_blocking(move || {
        let report = analysis::report_with(&data, &options);
        let charts = crate::engine::plots::report_charts(&report, &data);
        (report, charts)
    })
    .await?;
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join("report.json");
        std::fs::write(&path, serde_json::to_vec_pretty(&report)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
        for (name, svg) in charts? {
            let path = dir.join(name);
            std::fs::write(&path, svg)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        // the tables as a paper takes them: CSV and LaTeX per table, and report.tex
        let tables = crate::present::tables(&report);
        let tdir = dir.join("tables");
        std::fs::create_dir_all(&tdir)
            .with_context(|| format!("cannot create {}", tdir.display()))?;
        for t in &tables {
            let tex = tdir.join(format!("{}.tex", t.id));
            std::fs::write(&tex, crate::present::table_latex(t))
                .with_context(|| format!("cannot write {}", tex.display()))?;
            let csv = tdir.join(format!("{}.csv", t.id));
            let file = std::fs::File::create(&csv)
                .with_context(|| format!("cannot write {}", csv.display()))?;
            let mut w = crate::service::exports::SafeCsv::new(std::io::BufWriter::new(file));
            w.write_record(&t.header)?;
            for r in &t.rows {
                w.write_record(r)?;
            }
            w.flush()?;
        }
        let tex = dir.join("report.tex");
        std::fs::write(&tex, crate::present::report_latex(&args.study, &tables))
            .with_context(|| format!("cannot write {}", tex.display()))?;
        eprintln!(
            "wrote {} tables (CSV and LaTeX) and {}",
            tables.len(),
            tex.display()
        );
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else if args.out.is_none() {
        print!("{}", crate::present::render_text(&args.study, &report));
    }
    Ok(())
}
