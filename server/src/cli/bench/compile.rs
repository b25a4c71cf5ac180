//! `natstudy bench transform --compile`: every application of every operator on every method
//! of a real code base (every line counted as buggy, every site kept), each put back into its
//! file and compiled with javac by `natstudy verify`'s compile server — the file's original
//! first, so a file that does not compile alone is skipped, not blamed. Prints applications and
//! compile failures per operator, and how many applications remain when only one line (the
//! method's middle one) is buggy and `--all-sites` is off.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::Result;

use natstudy_engine::transform::{self, MethodSel, Operator, Request};
use natstudy_engine::verify::{Compiler, CompilerConfig};

/// How to run.
#[derive(Debug, Clone)]
pub struct Setup {
    pub operators: String,
    pub patch_module: Option<String>,
    pub java: PathBuf,
    pub max_lines: Option<usize>,
    pub workers: usize,
}

/// The `.java` files under `dir` (sorted by path; `module-info` and `package-info` left out),
/// taken until they hold `max_lines` lines.
pub fn read_corpus(dir: &Path, max_lines: Option<usize>) -> Result<Vec<(PathBuf, String)>> {
    let mut paths = Vec::new();
    crate::cli::lm::java_files(dir, &mut paths)?;
    paths.sort();
    let mut out = Vec::new();
    let mut lines = 0;
    for p in paths {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "module-info.java" || name == "package-info.java" {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        if max_lines.is_some_and(|m| lines >= m) {
            break;
        }
        lines += text.lines().count();
        out.push((p, text));
    }
    Ok(out)
}

#[derive(Debug, Default, Clone)]
struct PerOperator {
    all_sites: usize,
    one_line: usize,
    failures: usize,
    /// Refusals with one buggy line, by rule.
    refusals: BTreeMap<&'static str, usize>,
}

#[derive(Debug, Default)]
struct Tally {
    per_op: BTreeMap<Operator, PerOperator>,
    methods: usize,
    compiled: usize,
    skipped_files: Vec<String>,
    failures: Vec<String>,
}

/// One file: its transformations generated and compiled.
fn one_file(
    compiler: &mut Compiler,
    options: &[String],
    path: &Path,
    text: &str,
    ops: &[Operator],
    tally: &Mutex<Tally>,
    bar: &indicatif::ProgressBar,
) {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("X.java");
    match compiler.compile(name, text, options) {
        Ok(c) if c.ok => {}
        Ok(c) => {
            if let Ok(mut t) = tally.lock() {
                t.skipped_files
                    .push(format!("{}: {}", path.display(), c.message));
            }
            return;
        }
        Err(e) => {
            if let Ok(mut t) = tally.lock() {
                t.skipped_files.push(format!("{}: {e}", path.display()));
            }
            return;
        }
    }
    for m in transform::methods(text) {
        let n = m.last_line - m.first_line + 1;
        let all: Vec<usize> = (1..=n).collect();
        let request = |buggy: &[usize], all_sites: bool| {
            transform::transform(
                &Request {
                    source: text,
                    method_only: false,
                    method: MethodSel::Lines(m.first_line, m.last_line),
                    buggy_lines: buggy,
                    operators: ops,
                    all_sites,
                },
                None,
            )
            .unwrap_or_default()
        };
        let middle = [n.div_ceil(2)];
        let explained = transform::explain(
            &Request {
                source: text,
                method_only: false,
                method: MethodSel::Lines(m.first_line, m.last_line),
                buggy_lines: &middle,
                operators: ops,
                all_sites: false,
            },
            None,
        )
        .unwrap_or_default();
        let variants = request(&all, true);
        if let Ok(mut t) = tally.lock() {
            t.methods += 1;
            for e in &explained {
                let p = t.per_op.entry(e.operator).or_default();
                p.one_line += e.applied;
                for r in &e.refused {
                    *p.refusals.entry(r.rule).or_default() += 1;
                }
            }
            for v in &variants {
                t.per_op.entry(v.operator).or_default().all_sites += 1;
            }
        }
        bar.inc_length(variants.len() as u64);
        for v in variants {
            let Some(file) = &v.file_source else {
                bar.inc(1);
                continue;
            };
            let result = compiler.compile(name, file, options);
            bar.inc(1);
            let failure = match result {
                Ok(c) if c.ok => None,
                Ok(c) => Some(c.message),
                Err(e) => Some(e.to_string()),
            };
            if let Ok(mut t) = tally.lock() {
                t.compiled += 1;
                if let Some(message) = failure {
                    t.per_op.entry(v.operator).or_default().failures += 1;
                    t.failures.push(format!(
                        "{} {} {} ({}): {message}",
                        path.display(),
                        m.name,
                        v.operator,
                        v.summary
                    ));
                }
            }
        }
    }
}

pub fn run(corpus: &Path, setup: &Setup) -> Result<()> {
    let ops = natstudy_engine::generate::parse_operators(&setup.operators)?;
    let files = read_corpus(corpus, setup.max_lines)?;
    let lines: usize = files.iter().map(|(_, t)| t.lines().count()).sum();
    println!(
        "{} files, {lines} lines, {} operators, {} compilers",
        files.len(),
        ops.len(),
        setup.workers.max(1)
    );
    let options: Vec<String> = setup
        .patch_module
        .iter()
        .map(|m| format!("--patch-module={m}={{src}}"))
        .collect();
    let config = CompilerConfig {
        java: setup.java.clone(),
        ..Default::default()
    };
    let tally = Mutex::new(Tally::default());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let bar = crate::cli::lm::bar(0, "compiled");
    let started = Instant::now();
    let errors: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..setup.workers.clamp(1, 16))
            .map(|_| {
                s.spawn(|| -> Result<(), String> {
                    let mut compiler =
                        Compiler::start(config.clone()).map_err(|e| e.to_string())?;
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((path, text)) = files.get(i) else {
                            return Ok(());
                        };
                        one_file(&mut compiler, &options, path, text, &ops, &tally, &bar);
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a worker panicked".into()))
                    .err()
            })
            .collect()
    });
    bar.finish_and_clear();
    if let Some(e) = errors.first() {
        anyhow::bail!("{e}");
    }
    let secs = started.elapsed().as_secs_f64();
    let t = tally
        .into_inner()
        .map_err(|_| anyhow::anyhow!("poisoned"))?;
    println!(
        "{} methods; {} applications compiled in {secs:.1} s ({:.1}/s), {} files skipped (their original does not compile alone)",
        t.methods,
        t.compiled,
        t.compiled as f64 / secs.max(1e-9),
        t.skipped_files.len()
    );
    println!(
        "{:<24} {:>10} {:>10} {:>9}",
        "operator", "all sites", "one line", "failures"
    );
    let mut total = PerOperator::default();
    for op in &ops {
        let p = t.per_op.get(op).cloned().unwrap_or_default();
        println!(
            "{:<24} {:>10} {:>10} {:>9}",
            op.name(),
            p.all_sites,
            p.one_line,
            p.failures
        );
        total.all_sites += p.all_sites;
        total.one_line += p.one_line;
        total.failures += p.failures;
    }
    println!(
        "{:<24} {:>10} {:>10} {:>9}",
        "total", total.all_sites, total.one_line, total.failures
    );
    println!("top refusals per operator (one buggy line: the method's middle one)");
    for op in &ops {
        let Some(p) = t.per_op.get(op) else { continue };
        let mut rules: Vec<(&&str, &usize)> = p
            .refusals
            .iter()
            .filter(|(r, _)| **r != transform::NO_SITE)
            .collect();
        rules.sort_by(|a, b| b.1.cmp(a.1));
        let top: Vec<String> = rules
            .iter()
            .take(3)
            .map(|(r, n)| format!("{n} × {r}"))
            .collect();
        println!("  {:<22} {}", op.name(), top.join("; "));
    }
    for f in t.skipped_files.iter().take(10) {
        println!("skipped {f}");
    }
    for f in t.failures.iter().take(50) {
        println!("FAILED {f}");
    }
    if t.failures.len() > 50 {
        println!("… and {} more failures", t.failures.len() - 50);
    }
    Ok(())
}
