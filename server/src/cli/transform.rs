//! `natstudy transform`: generate transformations of bugs into `transformations.jsonl`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use crate::generate::{self, Options};

#[derive(Args, Debug)]
pub struct TransformArgs {
    /// bugs.jsonl (bug_id, project, file, method, source, file_source?, buggy_lines)
    #[arg(long)]
    pub bugs: PathBuf,
    /// Operators, comma-separated: names (`For2While,RenameVariable-1`), `studied` (the
    /// published study's 18) or `all` (24)
    #[arg(long, default_value = "studied")]
    pub operators: String,
    /// Also keep applications that change no buggy line (flagged `touches_buggy: false`)
    #[arg(long)]
    pub all_sites: bool,
    /// An n-gram model (ARPA or binary) that ranks RenameVariable-2's substitute names
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Where to write transformations.jsonl
    #[arg(long)]
    pub out: PathBuf,
}

pub async fn run(args: TransformArgs) -> Result<()> {
    let operators = generate::parse_operators(&args.operators)?;
    let name = args.bugs.display().to_string();
    let text =
        std::fs::read_to_string(&args.bugs).with_context(|| format!("cannot read {name}"))?;
    let bugs = crate::formats::items::parse_bugs(&text, &name)?;
    let model = match &args.model {
        Some(path) => Some(crate::service::load_model(path).await?),
        None => None,
    };
    let opts = Options {
        operators,
        all_sites: args.all_sites,
    };
    let started = std::time::Instant::now();
    let n_bugs = bugs.len();
    let generated = tokio::task::spawn_blocking(move || {
        let pb = super::lm::bar(bugs.len() as u64, "bugs");
        let mut next = BTreeMap::new();
        let scorer = model
            .as_ref()
            .map(|m| m as &dyn crate::engine::transform::NameScorer);
        let out = generate::generate(&bugs, &name, &opts, scorer, &mut next, &|| pb.inc(1));
        pb.finish_and_clear();
        out
    })
    .await??;
    let mut w = std::io::BufWriter::new(
        std::fs::File::create(&args.out)
            .with_context(|| format!("cannot write {}", args.out.display()))?,
    );
    let mut per_op: BTreeMap<&str, usize> = BTreeMap::new();
    for g in &generated {
        *per_op.entry(g.record.operator.as_str()).or_default() += 1;
        serde_json::to_writer(&mut w, g)?;
        w.write_all(b"\n")?;
    }
    w.flush()?;
    println!(
        "{} transformations of {n_bugs} bugs in {:.2} s → {}",
        generated.len(),
        started.elapsed().as_secs_f64(),
        args.out.display()
    );
    for (op, n) in per_op {
        println!("  {op:<22} {n}");
    }
    Ok(())
}
