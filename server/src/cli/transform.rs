//! `natstudy transform`: generate transformations of bugs into `transformations.jsonl`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use natstudy_engine::generate::{self, Options};

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
    #[arg(long, conflicts_with = "names_model")]
    pub model: Option<PathBuf>,
    /// A masked language model folder (CodeBERT's architecture, roberta) that proposes
    /// RenameVariable-2's names: each occurrence of the variable masked, the most likely valid,
    /// unused identifier taken (the conventional names where it offers none)
    #[arg(long)]
    pub names_model: Option<PathBuf>,
    /// Where to write transformations.jsonl
    #[arg(long, required_unless_present = "explain")]
    pub out: Option<PathBuf>,
    /// Say, per bug and operator, how many applications were kept and which candidate sites
    /// were refused by which rule; then the most frequent refusals per operator
    #[arg(long)]
    pub explain: bool,
}

pub async fn run(args: TransformArgs) -> Result<()> {
    let operators = generate::parse_operators(&args.operators)?;
    let name = args.bugs.display().to_string();
    let text =
        std::fs::read_to_string(&args.bugs).with_context(|| format!("cannot read {name}"))?;
    let bugs = natstudy_engine::formats::items::parse_bugs(&text, &name)?;
    let model: Option<Box<dyn natstudy_engine::transform::NameScorer + Send>> =
        match (&args.model, &args.names_model) {
            (Some(path), _) => Some(Box::new(natstudy_engine::NgramNames(
                natstudy_core::service::models::load_model(path).await?,
            ))),
            (None, Some(dir)) => Some(Box::new(
                natstudy_core::service::neural::load_masked(dir).await?,
            )),
            (None, None) => None,
        };
    let opts = Options {
        operators,
        all_sites: args.all_sites,
    };
    if args.explain {
        let b = bugs.clone();
        let o = opts.clone();
        let explained = tokio::task::spawn_blocking(move || {
            let pb = super::lm::bar(b.len() as u64, "bugs");
            let out = generate::explain(&b, &o, &|| pb.inc(1));
            pb.finish_and_clear();
            out
        })
        .await?;
        print!("{}", explanation_text(&bugs, &explained));
        if args.out.is_none() {
            return Ok(());
        }
    }
    let Some(out_path) = args.out.clone() else {
        anyhow::bail!("--out FILE is needed");
    };
    let started = std::time::Instant::now();
    let n_bugs = bugs.len();
    let generated = tokio::task::spawn_blocking(move || {
        let pb = super::lm::bar(bugs.len() as u64, "bugs");
        let mut next = BTreeMap::new();
        let scorer = model
            .as_deref()
            .map(|m| m as &dyn natstudy_engine::transform::NameScorer);
        let out = generate::generate(&bugs, &name, &opts, scorer, &mut next, &|| pb.inc(1));
        pb.finish_and_clear();
        out
    })
    .await??;
    let mut w = std::io::BufWriter::new(
        std::fs::File::create(&out_path)
            .with_context(|| format!("cannot write {}", out_path.display()))?,
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
        out_path.display()
    );
    for (op, n) in per_op {
        println!("  {op:<22} {n}");
    }
    Ok(())
}

/// The explanation as people read it: per bug, per operator, what was kept and what was
/// refused where; then per operator the refusals by rule, most frequent first.
fn explanation_text(
    bugs: &[natstudy_engine::formats::items::BugRecord],
    explained: &[Result<Vec<natstudy_engine::transform::Explanation>, String>],
) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut by_op: BTreeMap<String, (usize, BTreeMap<&str, usize>)> = BTreeMap::new();
    for (bug, e) in bugs.iter().zip(explained) {
        let _ = writeln!(out, "{}", bug.bug_id);
        match e {
            Err(message) => {
                let _ = writeln!(out, "  error: {message}");
            }
            Ok(ops) => {
                for x in ops {
                    let _ = writeln!(out, "  {}: applied {}", x.operator, x.applied);
                    let entry = by_op.entry(x.operator.to_string()).or_default();
                    entry.0 += x.applied;
                    for r in &x.refused {
                        let _ = writeln!(out, "    line {}: {}", r.line, r.rule);
                        *entry.1.entry(r.rule).or_default() += 1;
                    }
                }
            }
        }
    }
    let _ = writeln!(
        out,
        "\nper operator: applications kept, then refusals by rule"
    );
    for (op, (applied, rules)) in by_op {
        let _ = writeln!(out, "{op}: {applied} kept");
        let mut rules: Vec<(&str, usize)> = rules.into_iter().collect();
        rules.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        for (rule, n) in rules {
            let _ = writeln!(out, "  {n:>6}  {rule}");
        }
    }
    out
}
