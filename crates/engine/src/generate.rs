//! Generating a study's items from its bugs with the transformation engine — shared by
//! `natstudy transform` and the study page. Bugs are transformed in parallel; results come back
//! in bug order, operators in their canonical order, numbered `{level}_{n}` per level.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::formats::items::{BugRecord, TransformationRecord};
use crate::formats::Level;
use crate::transform::{self, Hunk, MethodSel, NameScorer, Operator, Request};

/// One generated transformation: the interchange record plus what the engine knows about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Generated {
    #[serde(flatten)]
    pub record: TransformationRecord,
    /// Changed lines: original lines of the bug's method → lines of the transformed method.
    pub line_map: Vec<Hunk>,
    /// Whether the application changes a buggy line.
    pub touches_buggy: bool,
    /// The transformed file, when the bug came with its file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_source: Option<String>,
}

/// A bug the engine could not work on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {field}: bug {bug_id}: {message}")]
pub struct BugProblem {
    pub file: String,
    pub line: usize,
    pub field: &'static str,
    pub bug_id: String,
    pub message: String,
}

/// All problems of a run (nothing is generated when there is any).
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct Problems(pub Vec<BugProblem>);

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    pub operators: Vec<Operator>,
    /// Keep applications that change no buggy line too.
    pub all_sites: bool,
}

/// Where the engine finds a bug's method: in its file when the file holds the method verbatim,
/// else in the method's text alone.
fn request_parts(bug: &BugRecord) -> (&str, bool, MethodSel) {
    if let Some(file) = bug.file_source.as_deref() {
        if let Some((a, b)) = transform::find_lines(file, &bug.source) {
            return (file, false, MethodSel::Lines(a, b));
        }
    }
    let lines = bug.source.lines().count().max(1);
    (&bug.source, true, MethodSel::Lines(1, lines))
}

type BugResult = Result<Vec<transform::Transformation>, String>;

/// Runs `f` on the engine's request for `bug`.
fn with_request<R>(bug: &BugRecord, opts: &Options, f: impl FnOnce(&Request<'_>) -> R) -> R {
    let (source, method_only, method) = request_parts(bug);
    let buggy: Vec<usize> = bug.buggy_lines.iter().map(|l| *l as usize).collect();
    f(&Request {
        source,
        method_only,
        method,
        buggy_lines: &buggy,
        operators: &opts.operators,
        all_sites: opts.all_sites,
    })
}

fn run_one(
    bug: &BugRecord,
    opts: &Options,
    scorer: Option<&dyn NameScorer>,
    stop: &(dyn Fn() -> bool + Sync),
) -> BugResult {
    with_request(bug, opts, |req| {
        transform::transform_until(req, scorer, stop).map_err(|e| e.to_string())
    })
}

/// Transform every bug. `next` holds, per level, the number the next id takes (so ids continue
/// a study's numbering); `progress` is called once per bug done.
pub fn generate(
    bugs: &[BugRecord],
    file: &str,
    opts: &Options,
    scorer: Option<&dyn NameScorer>,
    next: &mut BTreeMap<Level, usize>,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<Generated>, Problems> {
    generate_until(bugs, file, opts, scorer, next, progress, &|| false)
}

/// [`generate`], asking `stop` before each site of each bug: once it says so, every bug still
/// under way ends as a problem ("stopped"), which the caller that stopped it discards.
pub fn generate_until(
    bugs: &[BugRecord],
    file: &str,
    opts: &Options,
    scorer: Option<&dyn NameScorer>,
    next: &mut BTreeMap<Level, usize>,
    progress: &(dyn Fn() + Sync),
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Vec<Generated>, Problems> {
    use rayon::prelude::*;
    // one result per bug, in bug order; a panic in the engine is that bug's problem
    let results: Vec<BugResult> = bugs
        .par_iter()
        .map(|b| {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run_one(b, opts, scorer, stop)
            }))
            .unwrap_or_else(|_| Err("the engine panicked".to_owned()));
            progress();
            r
        })
        .collect();
    let mut problems = Vec::new();
    let mut out = Vec::new();
    for (i, (bug, result)) in bugs.iter().zip(results).enumerate() {
        match result {
            Err(message) => problems.push(BugProblem {
                file: file.to_owned(),
                line: i + 1,
                field: "source",
                bug_id: bug.bug_id.clone(),
                message,
            }),
            Ok(ts) => {
                for t in ts {
                    let level = t.operator.level();
                    let n = next.entry(level).or_insert(1);
                    let id = format!("{}_{n}", level.as_str());
                    *n += 1;
                    let mut source = t.method_source;
                    if !bug.source.ends_with('\n') && source.ends_with('\n') {
                        source.pop();
                    }
                    out.push(Generated {
                        record: TransformationRecord {
                            id,
                            bug_id: bug.bug_id.clone(),
                            operator: t.operator.name().to_owned(),
                            level,
                            source,
                            summary: t.summary,
                            gold_unnatural: None,
                        },
                        line_map: t.hunks,
                        touches_buggy: t.touches_buggy,
                        file_source: t.file_source,
                    });
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(Problems(problems))
    }
}

/// What generating `bugs` would make at most ([`transform::estimate`] summed over the bugs;
/// a bug the engine cannot read counts nothing here and is its problem in the run), asking
/// `stop` between bugs: `None` once it says so.
pub fn estimate(
    bugs: &[BugRecord],
    opts: &Options,
    stop: &(dyn Fn() -> bool + Sync),
) -> Option<transform::Estimate> {
    use rayon::prelude::*;
    let each: Vec<Option<transform::Estimate>> = bugs
        .par_iter()
        .map(|bug| {
            if stop() {
                return None;
            }
            let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                with_request(bug, opts, transform::estimate)
            }));
            Some(e.ok().and_then(Result::ok).unwrap_or_default())
        })
        .collect();
    each.into_iter()
        .try_fold(transform::Estimate::default(), |sum, e| {
            let e = e?;
            Some(transform::Estimate {
                sites: sum.sites.saturating_add(e.sites),
                bytes: sum.bytes.saturating_add(e.bytes),
            })
        })
}

/// Why each operator did or did not apply to each bug (`transform --explain`), in bug order;
/// a bug the engine cannot read gets its error.
pub fn explain(
    bugs: &[BugRecord],
    opts: &Options,
    progress: &(dyn Fn() + Sync),
) -> Vec<Result<Vec<transform::Explanation>, String>> {
    use rayon::prelude::*;
    bugs.par_iter()
        .map(|bug| {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                with_request(bug, opts, |req| {
                    transform::explain(req, None).map_err(|e| e.to_string())
                })
            }))
            .unwrap_or_else(|_| Err("the engine panicked".to_owned()));
            progress();
            r
        })
        .collect()
}

/// Parse an operator list: names separated by commas, `all` (24) or `studied` (the study's 18).
pub fn parse_operators(list: &str) -> Result<Vec<Operator>, transform::UnknownOperator> {
    let mut out = Vec::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part {
            "all" => out.extend(Operator::ALL),
            "studied" => out.extend(Operator::studied_set()),
            name => out.push(name.parse()?),
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bug(id: &str, source: &str, file: Option<&str>, buggy: Vec<u32>) -> BugRecord {
        BugRecord {
            bug_id: id.into(),
            project: "P".into(),
            file: "A.java".into(),
            method: "f".into(),
            source: source.into(),
            file_source: file.map(str::to_owned),
            fixed_source: None,
            buggy_lines: buggy,
            encoding: None,
        }
    }

    #[test]
    fn ids_continue_per_level_and_problems_name_the_line() {
        let m = "    int f(int count) {\n        return count + 1;\n    }\n";
        let file = format!("class A {{\n{m}}}\n");
        let bugs = vec![
            bug("B-1", m, Some(&file), vec![2]),
            bug("B-2", m, None, vec![2]),
        ];
        let opts = Options {
            operators: vec![Operator::RenameVariable1, Operator::SwitchEqualExp],
            all_sites: false,
        };
        let mut next = BTreeMap::from([(Level::Naming, 7)]);
        let out = generate(&bugs, "bugs.jsonl", &opts, None, &mut next, &|| {}).expect("ok");
        let ids: Vec<&str> = out.iter().map(|g| g.record.id.as_str()).collect();
        assert_eq!(ids, ["naming_7", "naming_8"]);
        assert!(out[0].file_source.is_some() && out[1].file_source.is_none());
        assert_eq!(out[0].record.source, out[1].record.source);
        assert_eq!(
            out[0].record.source,
            "    int f(int c) {\n        return c + 1;\n    }\n"
        );

        let bad = vec![bugs[0].clone(), bug("B-3", "int f( {", None, vec![1])];
        let err = generate(&bad, "bugs.jsonl", &opts, None, &mut next, &|| {}).expect_err("bad");
        assert_eq!(err.0.len(), 1);
        assert!(
            err.to_string()
                .starts_with("bugs.jsonl:2: source: bug B-3: "),
            "{err}"
        );
    }

    #[test]
    fn operator_lists() {
        assert_eq!(parse_operators("studied").expect("ok").len(), 18);
        assert_eq!(parse_operators("all").expect("ok").len(), 24);
        assert_eq!(
            parse_operators("For2While, renamevariable-1").expect("ok"),
            [Operator::RenameVariable1, Operator::For2While]
        );
        assert!(parse_operators("Nope").is_err());
    }
}
