//! `natstudy bench report --design KIND`: a designed study's analysis on a synthetic study
//! (`natstudy_engine::design::synthetic`), and the mixed ordinal model on data R's `clmm` reads.

use std::io::Write;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use natstudy_engine::design::{report, synthetic, Answer, Shown};

/// The synthetic study's size.
pub struct Shape {
    pub responses: usize,
    pub snippets: usize,
    pub participants: usize,
    /// responses of the mixed model's timing (0: none)
    pub mixed: usize,
    pub out: Option<std::path::PathBuf>,
}

pub fn run(design: &str, shape: &Shape) -> Result<()> {
    let kinds: Vec<&str> = if design == "all" {
        synthetic::KINDS.to_vec()
    } else if synthetic::KINDS.contains(&design) {
        vec![design]
    } else {
        bail!(
            "unknown design {design}: {} or all",
            synthetic::KINDS.join(", ")
        );
    };
    if shape.snippets < 8 {
        bail!("--snippets: at least 8");
    }
    for kind in kinds {
        let (d, snippets, responses) =
            synthetic::study(kind, shape.snippets, shape.responses, shape.participants)
                .context("synthetic study")?;
        let options = report::Options { mixed_model: false };
        let mut times = Vec::new();
        let mut figures = 0;
        for _ in 0..3 {
            let t = Instant::now();
            let r = report::analyse_with(&d, &snippets, &responses, options);
            times.push(t.elapsed().as_secs_f64());
            figures = r.to_string().len();
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{kind}: {} responses, {} snippets, {} participants: analysis {:.3} s (median of 3; {} KiB of JSON; the mixed model aside)",
            responses.len(),
            snippets.len(),
            shape.participants,
            times[1],
            figures / 1024
        );
        if kind == "likert" && shape.mixed > 0 {
            mixed(shape)?;
        }
    }
    Ok(())
}

/// The mixed ordinal model on `shape.mixed` responses (5 a snippet), timed; their data as
/// `mixed.csv` (answer, transformed, participant, item) for `crates/stats/bench/clmm.R`.
fn mixed(shape: &Shape) -> Result<()> {
    let snippets = shape.mixed.div_ceil(5).max(8);
    let (d, list, responses) =
        synthetic::study("likert", snippets, shape.mixed, shape.participants)
            .context("synthetic study")?;
    let t = Instant::now();
    let r = report::analyse_with(&d, &list, &responses, report::Options::default());
    let secs = t.elapsed().as_secs_f64();
    let m = &r["q"]["mixed_ordinal_model"];
    println!(
        "mixed ordinal model: {} responses, {} snippets, {} participants: {secs:.2} s (log-likelihood {}, coefficient {}, sd {})",
        responses.len(),
        list.len(),
        shape.participants,
        m["log_likelihood"],
        m["coefficients"]["transformed"],
        m["sd"]
    );
    if let Some(why) = r["q"]["mixed_ordinal_model_reason"].as_str() {
        println!("  undefined: {why}");
    }
    if let Some(dir) = &shape.out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join("mixed.csv");
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(&path)
                .with_context(|| format!("cannot write {}", path.display()))?,
        );
        writeln!(f, "answer,transformed,participant,item")?;
        let condition: std::collections::HashMap<&str, bool> = list
            .iter()
            .map(|s| (s.id.as_str(), s.condition.as_deref() == Some("transformed")))
            .collect();
        for r in &responses {
            if let (Shown::Item(item), Answer::Number(a)) = (&r.shown, &r.answer) {
                let x = u8::from(condition.get(item.as_str()).copied().unwrap_or(false));
                writeln!(f, "{a},{x},{},{item}", r.participant)?;
            }
        }
        f.flush()?;
        println!("its data: {}", path.display());
    }
    Ok(())
}
