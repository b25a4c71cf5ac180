//! Verification of transformed bugs: each transformed method is put back into its file and
//! compiled with the JDK's javac (its original first: when the original does not compile —
//! a missing classpath, say — the item is reported as not checked rather than as broken), and
//! optionally a user's test command runs on the original and on each transformed program and
//! their outcomes are compared.

mod command;
mod compiler;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub use command::{TestCommand, TestOutcome, TestRun};
pub use compiler::{Compiled, Compiler, CompilerConfig, CompilerError};

use crate::transform::find_lines;

/// A bug whose method the items transform.
#[derive(Debug, Clone, Copy)]
pub struct Bug<'a> {
    pub key: &'a str,
    /// The file's path in its project (`src/main/java/org/x/Foo.java`).
    pub file_path: &'a str,
    /// The buggy method's text as it appears in `file_source`.
    pub method: &'a str,
    pub file_source: Option<&'a str>,
    /// The project file's encoding when not UTF-8: the file a test command gets is written in
    /// it (javac reads the UTF-8 copy it compiles with `-encoding UTF-8`).
    pub encoding: Option<&'a str>,
}

/// A transformation of `bugs[bug]`.
#[derive(Debug, Clone, Copy)]
pub struct Item<'a> {
    pub key: &'a str,
    pub bug: usize,
    pub source: &'a str,
}

/// What to check.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Compile with javac; `None` skips compiling.
    pub compiler: Option<CompilerConfig>,
    /// Run this test command on the original and on each item that compiles.
    pub tests: Option<TestCommand>,
    /// Compilers running at once (each a JVM).
    pub workers: usize,
}

/// One item's verification.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Check {
    /// `None`: not compiled (no compiler, or the original does not compile either).
    pub compiles: Option<bool>,
    /// `None`: not tested (no command, it does not compile, or the original's run failed).
    pub tests_same: Option<bool>,
    /// javac's errors, why something was not checked, or how the test outcomes differ.
    pub message: String,
}

impl Check {
    fn note(&mut self, text: impl AsRef<str>) {
        if !self.message.is_empty() {
            self.message.push_str("; ");
        }
        self.message.push_str(text.as_ref());
    }

    /// Verified: it compiles, and its tests (when run) behave as the original's.
    pub fn verified(&self) -> bool {
        self.compiles == Some(true) && self.tests_same != Some(false)
    }
}

/// `file_source` with `replacement` in place of `method`'s lines; `None` when the method is not
/// found in the file as whole lines.
pub fn place(file_source: &str, method: &str, replacement: &str) -> Option<String> {
    let (first, last) = find_lines(file_source, method)?;
    let mut out = String::with_capacity(file_source.len() + replacement.len());
    for (i, line) in file_source.lines().enumerate() {
        let n = i + 1;
        if n == first {
            out.push_str(replacement.trim_end_matches('\n'));
            out.push('\n');
        } else if n < first || n > last {
            out.push_str(line);
            out.push('\n');
        }
    }
    Some(out)
}

/// The file name of a project path (`Foo.java`), or `fallback`.
fn file_name<'a>(path: &'a str, fallback: &'a str) -> &'a str {
    std::path::Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| n.ends_with(".java"))
        .unwrap_or(fallback)
}

/// The compilation unit of `bug` with `method` as its method: its file with the method
/// replaced, or — without the file — the method alone in a stub class. Also says which.
pub fn unit(bug: &Bug<'_>, method: &str) -> (String, String, bool) {
    if let Some(file) = bug.file_source {
        if let Some(text) = place(file, bug.method, method) {
            return (file_name(bug.file_path, "Unit.java").to_owned(), text, true);
        }
    }
    (
        "NatstudyStub.java".to_owned(),
        format!("class NatstudyStub {{\n{method}\n}}\n"),
        false,
    )
}

fn where_compiled(in_file: bool) -> &'static str {
    if in_file {
        ""
    } else {
        " (the method alone in a stub class: the bug has no file)"
    }
}

/// Compiles the items of the bugs `mine` with one compiler.
fn compile_part(
    bugs: &[Bug<'_>],
    items: &[Item<'_>],
    by_bug: &[Vec<usize>],
    mine: &[usize],
    config: &CompilerConfig,
    (done, halt): (&(dyn Fn(u64) + Sync), &AtomicBool),
) -> Vec<(usize, Check)> {
    let mut out = Vec::new();
    let mut compiler = match Compiler::start(config.clone()) {
        Ok(c) => Some(c),
        Err(e) => {
            for &b in mine {
                for &i in &by_bug[b] {
                    let mut c = Check::default();
                    c.note(format!("not compiled: {e}"));
                    out.push((i, c));
                    done(1);
                }
            }
            None
        }
    };
    let Some(compiler) = compiler.as_mut() else {
        return out;
    };
    for &b in mine {
        if halt.load(Ordering::Relaxed) {
            break;
        }
        let bug = &bugs[b];
        let (name, text, in_file) = unit(bug, bug.method);
        let original = compiler.compile(&name, &text, &[]);
        for &i in &by_bug[b] {
            let mut c = Check::default();
            match &original {
                Err(e) => c.note(format!("not compiled: the original: {e}")),
                Ok(o) if !o.ok => c.note(format!(
                    "not compiled: the original does not compile either{} (a classpath or sourcepath missing?): {}",
                    where_compiled(in_file),
                    o.message
                )),
                Ok(_) => {
                    let (name, text, _) = unit(bug, items[i].source);
                    match compiler.compile(&name, &text, &[]) {
                        Ok(r) => {
                            c.compiles = Some(r.ok);
                            if !r.ok {
                                c.note(format!(
                                    "does not compile{}: {}",
                                    where_compiled(in_file),
                                    r.message
                                ));
                            }
                        }
                        Err(e) => c.note(format!("not compiled: {e}")),
                    }
                }
            }
            out.push((i, c));
            done(1);
        }
    }
    out
}

/// Runs the test command on each bug's original and on its items that may compile.
fn run_tests(
    bugs: &[Bug<'_>],
    items: &[Item<'_>],
    by_bug: &[Vec<usize>],
    tests: &TestCommand,
    checks: &mut [Check],
    (done, halt): (&(dyn Fn(u64) + Sync), &AtomicBool),
) {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            for c in checks.iter_mut() {
                c.note(format!("not tested: temporary directory: {e}"));
            }
            done(checks.len() as u64);
            return;
        }
    };
    let run = |bug: &Bug<'_>, item: Option<&str>, method: &str| -> Result<TestOutcome, String> {
        let (name, text, _) = unit(bug, method);
        let path = dir.path().join(name);
        let bytes = crate::bugs::encoding::encode(&text, bug.encoding)
            .unwrap_or_else(|_| text.clone().into_bytes());
        std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
        tests
            .run(TestRun {
                bug: bug.key,
                item,
                file_path: bug.file_path,
                source_file: &path,
            })
            .map_err(|e| format!("the command could not be started: {e}"))
    };
    for (b, members) in by_bug.iter().enumerate() {
        if halt.load(Ordering::Relaxed) {
            break;
        }
        if members.is_empty() {
            continue;
        }
        let bug = &bugs[b];
        let original = run(bug, None, bug.method);
        for &i in members {
            let c = &mut checks[i];
            match &original {
                Err(e) => c.note(format!("not tested: {e}")),
                Ok(o) if o.timed_out => c.note("not tested: the original's test run timed out"),
                Ok(_) if c.compiles == Some(false) => c.note("not tested: it does not compile"),
                Ok(o) => match run(bug, Some(items[i].key), items[i].source) {
                    Err(e) => c.note(format!("not tested: {e}")),
                    Ok(t) => {
                        let same = t == *o;
                        c.tests_same = Some(same);
                        if !same {
                            c.note(format!(
                                "tests differ: original {}, transformed {}",
                                o.describe(),
                                t.describe()
                            ));
                        }
                    }
                },
            }
            done(1);
        }
    }
}

/// Verifies every item; `progress(done, total)` is called as items finish (from any thread)
/// and says whether to go on: once it says no, each worker stops before its next bug, and the
/// items not reached keep an empty check.
pub fn verify(
    bugs: &[Bug<'_>],
    items: &[Item<'_>],
    options: &Options,
    progress: &(dyn Fn(u64, u64) -> bool + Sync),
) -> Vec<Check> {
    let mut by_bug: Vec<Vec<usize>> = vec![Vec::new(); bugs.len()];
    for (i, it) in items.iter().enumerate() {
        if let Some(v) = by_bug.get_mut(it.bug) {
            v.push(i);
        }
    }
    let phases = u64::from(options.compiler.is_some()) + u64::from(options.tests.is_some());
    let total = items.len() as u64 * phases.max(1);
    let counter = AtomicU64::new(0);
    let halt = AtomicBool::new(false);
    let done = |n: u64| {
        let d = counter.fetch_add(n, Ordering::Relaxed) + n;
        if !progress(d, total) {
            halt.store(true, Ordering::Relaxed);
        }
    };
    let mut checks = vec![Check::default(); items.len()];
    for (i, it) in items.iter().enumerate() {
        if it.bug >= bugs.len() {
            checks[i].note("not checked: its bug is unknown");
        }
    }
    match &options.compiler {
        Some(config) => {
            let workers = options.workers.clamp(1, 16);
            let mut parts: Vec<Vec<usize>> = vec![Vec::new(); workers];
            // the bugs with the most items first, each to the least loaded worker
            let mut order: Vec<usize> = (0..bugs.len()).collect();
            order.sort_by_key(|&b| std::cmp::Reverse(by_bug[b].len()));
            let mut load = vec![0usize; workers];
            for b in order {
                let w = (0..workers).min_by_key(|&w| load[w]).unwrap_or(0);
                load[w] += by_bug[b].len() + 1;
                parts[w].push(b);
            }
            let results: Vec<Vec<(usize, Check)>> = std::thread::scope(|s| {
                let handles: Vec<_> = parts
                    .iter()
                    .filter(|p| !p.is_empty())
                    .map(|mine| {
                        let (by_bug, done, halt) = (&by_bug, &done, &halt);
                        s.spawn(move || {
                            compile_part(bugs, items, by_bug, mine, config, (done, halt))
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_default())
                    .collect()
            });
            for (i, c) in results.into_iter().flatten() {
                checks[i] = c;
            }
        }
        None => {
            for c in checks.iter_mut() {
                c.note("not compiled");
            }
        }
    }
    if let Some(tests) = &options.tests {
        if !halt.load(Ordering::Relaxed) {
            run_tests(bugs, items, &by_bug, tests, &mut checks, (&done, &halt));
        }
    }
    checks
}

#[cfg(test)]
mod tests;
