//! `natstudy report`: the study's results as readable tables or as `report.json`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::Global;
use crate::engine::analysis::{self, Report};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The study's name
    #[arg(long)]
    pub study: String,
    /// Print the report as JSON (the keys of expected.json, and more)
    #[arg(long)]
    pub json: bool,
    /// Write report.json into this directory
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
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else if args.out.is_none() {
        print!("{}", render_text(&args.study, &report));
    }
    Ok(())
}

fn opt(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.4}")).unwrap_or_else(|| "—".into())
}

/// The report as plain-text tables.
pub fn render_text(study: &str, r: &Report) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Study {study}: {} items, {} votes, {} annotators",
        r.items, r.votes, r.annotators
    );
    let _ = writeln!(
        s,
        "Fleiss' kappa (binary judgement): {}",
        opt(r.fleiss_kappa)
    );
    let c = &r.counts;
    let _ = writeln!(
        s,
        "\nNaturalness          natural  likely-nat  likely-unnat  unnatural"
    );
    let _ = writeln!(
        s,
        "{:<20} {:>7}  {:>10}  {:>12}  {:>9}",
        "all", c.natural, c.likely_natural, c.likely_unnatural, c.unnatural
    );
    for (level, lc) in &r.counts_by_level {
        let _ = writeln!(
            s,
            "{:<20} {:>7}  {:>10}  {:>12}  {:>9}",
            level, lc.natural, lc.likely_natural, lc.likely_unnatural, lc.unnatural
        );
    }
    let _ = writeln!(
        s,
        "full agreement: {} natural, {} unnatural",
        c.full_natural, c.full_unnatural
    );
    if !r.counts_by_operator.is_empty() {
        let _ = writeln!(
            s,
            "\nBy operator          natural  likely-nat  likely-unnat  unnatural"
        );
        for (op, lc) in &r.counts_by_operator {
            let _ = writeln!(
                s,
                "{:<20} {:>7}  {:>10}  {:>12}  {:>9}",
                op, lc.natural, lc.likely_natural, lc.likely_unnatural, lc.unnatural
            );
        }
    }
    if let Some(t) = &r.time {
        let _ = writeln!(
            s,
            "\nTime on item (s): cutoff p99 {:.2}, {} kept, mean {:.2}, std {:.2}",
            t.p99_cutoff, t.n, t.mean, t.std
        );
        for (level, ms) in &t.by_level {
            let _ = writeln!(
                s,
                "  {level:<12} mean {:>7.2}  std {:>7.2}  n {}",
                ms.mean, ms.std, ms.n
            );
        }
        for (name, m) in &t.tests {
            let _ = writeln!(
                s,
                "  {name:<36} U {:>9.1}  p {:.3e}  r {:.4}",
                m.u, m.p_value, m.effect_size
            );
        }
    }
    if !r.robustness.is_empty() {
        let _ = writeln!(s, "\nRobustness      changes  false-alarm  nat.bugs  plaus orig→trans (drop)   correct orig→trans (drop)");
        for (tool, t) in &r.robustness {
            let n = &t.natural;
            let _ = writeln!(
                s,
                "{tool:<15} {:>7}  {:>11}  {:>8}  {:>3} → {:>6.2} ({:>7})   {:>3} → {:>6.2} ({:>7})",
                t.changes_all,
                opt(t.false_alarm_rate),
                n.bugs,
                n.original_plausible,
                n.transformed_plausible,
                opt(n.plausible_drop),
                n.original_correct,
                n.transformed_correct,
                opt(n.correct_drop)
            );
        }
    }
    if !r.rnc.is_empty() {
        let _ = writeln!(
            s,
            "\nRNC             items  AUC(RNC)  AUC(NC)  AUC(CE)  spearman  p(nat<unnat)"
        );
        for (model, m) in &r.rnc {
            let _ = writeln!(
                s,
                "{model:<15} {:>5}  {:>8}  {:>7}  {:>7}  {:>8}  {}",
                m.items,
                opt(m.auc_rnc),
                opt(m.auc_nc),
                opt(m.auc_ce),
                opt(m.spearman_original_vs_transformed),
                m.mww_natural_vs_unnatural
                    .as_ref()
                    .map(|x| format!("{:.3e}", x.p_value))
                    .unwrap_or_else(|| "—".into())
            );
        }
    }
    s
}
