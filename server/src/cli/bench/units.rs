//! `natstudy bench units`: a designed study's hand-out under participants at once — the claim
//! of the next unit (the least answered, then the participant's own order, in one write
//! transaction of the study) and the answer — until every unit has k answers.

use std::sync::Arc;

use anyhow::{bail, Result};

use super::fixture::{bench_db, percentile};
use crate::cli::Global;

const PAIRWISE: &str = "title = \"bench\"\n[[question]]\nid = \"better\"\nkind = \"pairwise\"\nprompt = \"Which reads better?\"\nties = true\n";
const LIKERT: &str = "title = \"bench\"\n[[question]]\nid = \"readable\"\nkind = \"likert\"\nprompt = \"How easy is it to read?\"\npoints = 5\n";

pub(super) async fn run(
    g: &Global,
    participants: usize,
    snippets: usize,
    k: i64,
    design: &str,
) -> Result<()> {
    let (text, field) = match design {
        "pairwise" => (PAIRWISE, ("better", "A")),
        "likert" => (LIKERT, ("readable", "3")),
        other => bail!("--design {other}: pairwise or likert"),
    };
    let (db, _tmp) = bench_db(g).await?;
    let study = natstudy_core::bench::designed_study(&db, text, snippets, k).await?;
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {pos} answers {per_sec}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    let tick = bar.clone();
    let fields = vec![(field.0.to_owned(), field.1.to_owned())];
    let run = natstudy_core::bench::unit_path(
        Arc::new(db),
        study,
        participants,
        fields,
        Arc::new(move || tick.inc(1)),
    )
    .await?;
    bar.finish_and_clear();
    let (mut claims, mut answers) = (run.claims, run.answers);
    claims.sort();
    answers.sort();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{design}: {} snippets → {} units × k={} by {participants} participants: {} answers in {:.2} s ({:.0}/s); \
         claim median {:.1} ms, p99 {:.1} ms; answer median {:.1} ms, p99 {:.1} ms; units short of k: {}, answers over units × k: {}",
        snippets,
        run.units,
        run.k,
        answers.len(),
        run.wall.as_secs_f64(),
        answers.len() as f64 / run.wall.as_secs_f64(),
        ms(percentile(&claims, 0.5)),
        ms(percentile(&claims, 0.99)),
        ms(percentile(&answers, 0.5)),
        ms(percentile(&answers, 0.99)),
        run.short,
        run.answered - run.units as i64 * run.k
    );
    Ok(())
}
