//! `natstudy verify`: compile every item of a study in its file with javac (and optionally run
//! a test command on it and on its original); the results are stored per item, exported, and
//! batches can take only verified items.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use super::Global;
use natstudy_engine::verify::{CompilerConfig, Options, TestCommand};

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The study, by its name (`natstudy study list` lists them)
    #[arg(long)]
    pub study: String,
    /// The project's classes and dependencies (javac -classpath)
    #[arg(long)]
    pub classpath: Option<String>,
    /// The project's sources, compiled on demand (javac -sourcepath)
    #[arg(long)]
    pub sourcepath: Option<String>,
    /// The `java` launcher of the JDK whose javac compiles (JDK 11 or later)
    #[arg(long, default_value = "java")]
    pub java: PathBuf,
    /// Do not compile (only run --tests)
    #[arg(long)]
    pub no_compile: bool,
    /// A test command run with `sh -c` on each bug's original and on each transformed file;
    /// it gets NATSTUDY_BUG, NATSTUDY_ITEM, NATSTUDY_FILE (the file's project path) and
    /// NATSTUDY_SOURCE (a file with the program to test); its exit status and standard output
    /// are compared with the original's
    #[arg(long)]
    pub tests: Option<String>,
    /// The longest one test run may take, seconds
    #[arg(long, default_value_t = 600)]
    pub test_timeout: u64,
    /// Compilers at once (each a JVM); default: the cores
    #[arg(long)]
    pub workers: Option<usize>,
    /// Only items never verified
    #[arg(long)]
    pub unchecked: bool,
}

pub async fn run(g: &Global, a: VerifyArgs) -> Result<()> {
    let db = g.db().await?;
    let study = natstudy_core::service::studies::id_by_name(&db, &a.study).await?;
    let options = Options {
        compiler: (!a.no_compile).then(|| CompilerConfig {
            java: a.java.clone(),
            classpath: a.classpath.clone(),
            sourcepath: a.sourcepath.clone(),
            ..Default::default()
        }),
        tests: a.tests.clone().map(|command| TestCommand {
            command,
            timeout: Duration::from_secs(a.test_timeout.max(1)),
        }),
        workers: a
            .workers
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
    };
    let bar = super::lm::bar(0, "checks");
    let b = bar.clone();
    let started = std::time::Instant::now();
    let (summary, checks) = natstudy_core::service::verification::run(
        &db,
        study,
        options,
        a.unchecked,
        |total| bar.set_length(total),
        Arc::new(move |done, _| {
            b.set_position(done);
            true
        }),
    )
    .await?;
    bar.finish_and_clear();
    let problems: Vec<_> = checks
        .iter()
        .filter(|(_, c)| c.compiles == Some(false) || c.tests_same == Some(false))
        .collect();
    for (key, c) in problems.iter().take(20) {
        println!("  {key}: {}", c.message);
    }
    if problems.len() > 20 {
        println!("  … and {} more (export --what items)", problems.len() - 20);
    }
    if let Some((key, c)) = checks.iter().find(|(_, c)| c.compiles.is_none()) {
        println!("  not compiled, e.g. {key}: {}", c.message);
    }
    println!(
        "{} in {:.1} s",
        summary.line(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
