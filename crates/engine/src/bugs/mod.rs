//! Bugs from a bug dataset: buggy/fixed checkouts (what `defects4j checkout -v Nb` and `-v Nf`
//! make; Bears, Bugs.jar and GitBug-Java give the same) turned into bug records — the buggy
//! method, its file, its buggy lines and the fixed method — with what does not fit said, not
//! guessed. Plain data in and out; reading checkouts goes through [`sources::Files`], so a
//! folder on disk and an uploaded archive are read alike.

pub mod archive;
pub mod changes;
pub mod encoding;
pub mod methods;
pub mod pairs;
pub mod sources;

use std::collections::{BTreeMap, BTreeSet, HashSet};

use rayon::prelude::*;

use crate::formats::items::{BugRecord, MAX_METHOD_BYTES};
use crate::formats::{FormatError, Problems};
use changes::Mark;
use encoding::Encoding;
use methods::Method;
use pairs::Pair;
use sources::{Changed, Files};

/// How bugs are taken from their pairs.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// One record per touched method (`Lang-7#translate`) instead of skipping the bug.
    pub multi_method: bool,
    pub encoding: Encoding,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            multi_method: false,
            encoding: Encoding::Detect,
        }
    }
}

/// What one pair gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    Bugs(Vec<BugRecord>),
    /// Why the bug was not taken: `a change outside any method`, `2 methods`, ….
    Skipped(String),
}

/// Every pair's outcome, in the CSV's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    pub bugs: Vec<BugRecord>,
    /// `(bug_id, reason)`.
    pub skipped: Vec<(String, String)>,
}

/// The reason a bug whose fix touches lines outside any method is skipped.
pub const OUTSIDE: &str = "a change outside any method";

/// A method of a changed file that the fix touches, with the touched lines (file lines).
struct Touched<'a> {
    file: &'a Changed,
    methods: &'a [Method],
    method: usize,
    lines: BTreeSet<usize>,
}

/// A changed file's methods, its unchanged lines' places in the fixed file, and its hunks.
type Parsed = (Vec<Method>, Vec<Option<usize>>, Vec<changes::Hunk>);

/// The bug records of one pair's changed files.
pub fn extract(pair: &Pair, changed: &[Changed], multi_method: bool) -> Found {
    let mut outside = false;
    let parsed: Vec<Parsed> = changed
        .iter()
        .map(|c| match (&c.buggy, &c.fixed) {
            (Some(b), Some(f)) => {
                let (bl, fl) = (changes::lines(&b.text), changes::lines(&f.text));
                let (hunks, equal) = changes::diff(&bl, &fl);
                (methods::methods(&b.text), equal, hunks)
            }
            _ => (Vec::new(), Vec::new(), Vec::new()),
        })
        .collect();
    let mut touched: Vec<Touched<'_>> = Vec::new();
    for (c, (ms, _, hunks)) in changed.iter().zip(&parsed) {
        let Some(b) = &c.buggy else {
            outside = true; // a file the fix adds
            continue;
        };
        if c.fixed.is_none() {
            outside = true; // a file the fix removes
            continue;
        }
        let count = changes::lines(&b.text).len();
        for mark in changes::marks(hunks) {
            let lines = match mark {
                Mark::Lines(ls) => ls,
                Mark::InsertAfter(after) => {
                    match changes::insertion_line(after, count, |l| {
                        methods::holding(ms, l).is_some()
                    }) {
                        Some(l) => vec![l],
                        None => {
                            outside = true;
                            continue;
                        }
                    }
                }
            };
            for l in lines {
                let Some(m) = methods::holding(ms, l) else {
                    outside = true;
                    continue;
                };
                match touched
                    .iter_mut()
                    .find(|t| std::ptr::eq(t.file, c) && t.method == m)
                {
                    Some(t) => {
                        t.lines.insert(l);
                    }
                    None => touched.push(Touched {
                        file: c,
                        methods: ms,
                        method: m,
                        lines: BTreeSet::from([l]),
                    }),
                }
            }
        }
    }
    if outside {
        return Found::Skipped(OUTSIDE.into());
    }
    if touched.len() > 1 && !multi_method {
        return Found::Skipped(format!("{} methods", touched.len()));
    }
    if touched.is_empty() {
        // only blank-line or line-ending changes inside no method cannot happen: a hunk marks
        // at least one line; kept for a pair whose files differ in bytes alone
        return Found::Skipped("no line changed (the files differ only in line endings)".into());
    }
    let several = touched.len() > 1;
    let mut names: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    for t in &touched {
        let m = &t.methods[t.method];
        let Some(b) = &t.file.buggy else { continue };
        let source = methods::line_text(&b.text, m.first, m.last);
        if source.len() > MAX_METHOD_BYTES {
            return Found::Skipped(format!(
                "method {} is larger than {} KiB",
                m.name,
                MAX_METHOD_BYTES / 1024
            ));
        }
        let idx = changed
            .iter()
            .position(|c| std::ptr::eq(c, t.file))
            .unwrap_or(0);
        let fixed_source = t
            .file
            .fixed
            .as_ref()
            .and_then(|f| fixed_method(m, &parsed[idx].1, &f.text))
            .filter(|s| s.len() <= MAX_METHOD_BYTES);
        let bug_id = if several {
            let base = format!("{}#{}", pair.bug_id, m.name);
            if names.insert(base.clone()) {
                base
            } else {
                format!("{base}@{}", m.first)
            }
        } else {
            pair.bug_id.clone()
        };
        out.push(BugRecord {
            bug_id,
            project: pair.project.clone(),
            file: t.file.path.clone(),
            method: m.name.clone(),
            source,
            file_source: Some(b.text.clone()),
            fixed_source,
            buggy_lines: t.lines.iter().map(|l| (l + 1 - m.first) as u32).collect(),
            encoding: (b.encoding != encoding::UTF_8).then(|| b.encoding.to_owned()),
        });
    }
    Found::Bugs(out)
}

/// The fixed file's version of a buggy method: the method of the same name that holds the
/// fixed side of one of the method's unchanged lines, else the nearest of that name.
fn fixed_method(m: &Method, equal: &[Option<usize>], fixed: &str) -> Option<String> {
    let fms: Vec<Method> = methods::methods(fixed)
        .into_iter()
        .filter(|f| f.name == m.name)
        .collect();
    let mapped: Vec<usize> = (m.first..=m.last)
        .filter_map(|l| equal.get(l - 1).copied().flatten().map(|j| j + 1))
        .collect();
    let chosen = fms
        .iter()
        .find(|f| mapped.iter().any(|&j| f.contains(j)))
        .or_else(|| {
            let at = mapped.first().copied().unwrap_or(m.first);
            fms.iter().min_by_key(|f| f.first.abs_diff(at))
        })?;
    Some(methods::line_text(fixed, chosen.first, chosen.last))
}

/// Reads every pair (in parallel) and extracts its bugs. Any pair that cannot be read fails
/// the whole import, with every such problem named by the CSV's line and column; skipped
/// bugs are not problems. `progress` is called once per pair.
pub fn import(
    files: &dyn Files,
    pairs: &[Pair],
    csv_name: &str,
    options: Options,
    progress: &(dyn Fn() + Sync),
) -> Result<Imported, FormatError> {
    let results: Vec<Result<Found, (usize, &'static str, String)>> = pairs
        .par_iter()
        .map(|p| {
            let r = sources::changed(files, &p.buggy, &p.fixed, options.encoding)
                .map(|c| extract(p, &c, options.multi_method))
                .map_err(|(side, e)| (p.line, side.column(), e.0));
            progress();
            r
        })
        .collect();
    let mut problems = Problems::default();
    let mut bugs = Vec::new();
    let mut skipped = Vec::new();
    let mut ids: BTreeMap<String, usize> = BTreeMap::new();
    for (p, r) in pairs.iter().zip(results) {
        match r {
            Ok(Found::Bugs(bs)) => {
                for b in bs {
                    if let Some(first) = ids.insert(b.bug_id.clone(), p.line) {
                        problems.push(
                            csv_name,
                            p.line,
                            "bug_id",
                            format!("{} is also made by line {first}", b.bug_id),
                        );
                    }
                    bugs.push(b);
                }
            }
            Ok(Found::Skipped(reason)) => skipped.push((p.bug_id.clone(), reason)),
            Err((line, column, reason)) => problems.push(csv_name, line, column, reason),
        }
    }
    problems.finish(Imported { bugs, skipped })
}

#[cfg(test)]
mod tests;
