//! Imports: the interchange files validated in full, then written in one transaction (a file
//! imported twice is a no-op), from the command line (paths) or the web (uploaded texts).

use std::path::Path;

use super::{ServiceError, ServiceResult};
use crate::store;
/// What an import did: the rows it wrote, or nothing (the same file again).
pub use crate::store::imports::Outcome;
use crate::store::Db;
use natstudy_engine::formats;
use natstudy_vocab::ids::{StudyId, UserId};

pub(super) fn read(path: &Path) -> ServiceResult<String> {
    std::fs::read_to_string(path)
        .map_err(|e| ServiceError::Invalid(format!("cannot read {}: {e}", path.display())))
}

pub(super) fn name(path: &Path) -> String {
    path.display().to_string()
}

/// Validates and imports `bugs.jsonl` + `transformations.jsonl` texts into a study.
pub async fn import_items_text(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    bugs: (&str, &str),
    transformations: (&str, &str),
) -> ServiceResult<Outcome> {
    let parsed_bugs = formats::items::parse_bugs(bugs.1, bugs.0)?;
    let parsed =
        formats::items::parse_transformations(transformations.1, transformations.0, &parsed_bugs)?;
    let digest = store::imports::digest(&[bugs.1, transformations.1]);
    let derived = derive_items(parsed_bugs.clone(), parsed.clone()).await?;
    Ok(store::imports::items(db, study, actor, &digest, &parsed_bugs, &parsed, &derived).await?)
}

/// Each transformation's line data against its bug and the bug's fix carried over to it (a
/// three-way merge, or where the fix and the transformation touch the same lines the operator
/// applied again to the fixed method at the same site — once per bug and operator, see
/// `FixFollower`; none when neither works). CPU work, off the async threads.
pub async fn derive_items(
    bugs: Vec<formats::items::BugRecord>,
    transformations: Vec<formats::items::TransformationRecord>,
) -> ServiceResult<Vec<store::imports::ItemDerived>> {
    tokio::task::spawn_blocking(move || {
        let by_id: std::collections::HashMap<&str, &formats::items::BugRecord> =
            bugs.iter().map(|b| (b.bug_id.as_str(), b)).collect();
        // one bug at a time and, within it, one operator at a time (the file's order may mix
        // them): the fix's shared work is done once, and one operator's applications are held
        let mut order: Vec<usize> = (0..transformations.len()).collect();
        order.sort_by(|&a, &b| {
            let key = |i: usize| (&transformations[i].bug_id, &transformations[i].operator);
            key(a).cmp(&key(b))
        });
        let mut fixed_sides: Vec<Option<String>> = vec![None; transformations.len()];
        let mut follower: Option<(&str, natstudy_engine::transform::FixFollower)> = None;
        for i in order {
            let t = &transformations[i];
            let Some(b) = by_id.get(t.bug_id.as_str()) else {
                continue;
            };
            let Some(fixed) = b.fixed_source.as_deref() else {
                continue;
            };
            if follower.as_ref().map(|(id, _)| *id) != Some(b.bug_id.as_str()) {
                let f = natstudy_engine::transform::FixFollower::new(&b.source, fixed);
                follower = Some((b.bug_id.as_str(), f));
            }
            if let Some((_, f)) = follower.as_mut() {
                fixed_sides[i] = f
                    .follow(&t.source, t.operator.parse().ok(), &t.summary)
                    .map(|(text, _)| text);
            }
        }
        transformations
            .iter()
            .zip(fixed_sides)
            .map(|(t, fixed_source)| {
                let (source, lines) = by_id
                    .get(t.bug_id.as_str())
                    .map(|b| (b.source.as_str(), b.buggy_lines.as_slice()))
                    .unwrap_or(("", &[]));
                store::imports::ItemDerived {
                    lines: natstudy_engine::transform::line_data(source, lines, &t.source),
                    fixed_source,
                }
            })
            .collect()
    })
    .await
    .map_err(|e| ServiceError::Internal(e.into()))
}

pub async fn import_items(
    db: &Db,
    study: StudyId,
    bugs: &Path,
    transformations: &Path,
) -> ServiceResult<Outcome> {
    let (b, t) = (read(bugs)?, read(transformations)?);
    import_items_text(
        db,
        study,
        None,
        (&name(bugs), &b),
        (&name(transformations), &t),
    )
    .await
}

/// The study's known targets (bug ids and transformation ids), for cross-checks.
pub async fn targets(db: &Db, study: StudyId) -> ServiceResult<std::collections::HashSet<String>> {
    Ok(store::analysis::target_keys(db, study).await?)
}

pub async fn import_votes(db: &Db, study: StudyId, survey: &Path) -> ServiceResult<Outcome> {
    import_votes_text(db, study, None, &name(survey), &read(survey)?).await
}

pub async fn import_votes_text(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    file: &str,
    text: &str,
) -> ServiceResult<Outcome> {
    let votes = formats::survey::parse_survey(text, file)?;
    let known = targets(db, study).await?;
    let mut problems = formats::Problems::default();
    for v in &votes {
        if !known.contains(&v.item) {
            problems.push(
                file,
                0,
                &v.item,
                "unknown item (not a transformation id of the study)",
            );
        }
    }
    problems.finish(())?;
    let digest = store::imports::digest(&[text]);
    Ok(store::imports::votes(db, study, actor, &digest, &votes).await?)
}

/// The results tables a study imports: repair tools' results and cross-entropy scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultsTable {
    /// `npr_results.csv`
    Npr,
    /// `ce_scores.csv`
    Ce,
}

pub async fn import_results(
    db: &Db,
    study: StudyId,
    table: ResultsTable,
    file: &Path,
) -> ServiceResult<Outcome> {
    import_results_text(db, study, None, table, &name(file), &read(file)?).await
}

/// Validates a results table against the study's targets and imports it.
pub async fn import_results_text(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    table: ResultsTable,
    file: &str,
    text: &str,
) -> ServiceResult<Outcome> {
    let known = targets(db, study).await?;
    let digest = store::imports::digest(&[text]);
    Ok(match table {
        ResultsTable::Npr => {
            let rows = formats::results::parse_npr(text, file, &known)?;
            store::imports::results(db, study, actor, &digest, &rows).await?
        }
        ResultsTable::Ce => {
            let rows = formats::results::parse_ce(text, file, &known)?;
            store::imports::results(db, study, actor, &digest, &rows).await?
        }
    })
}

/// What an upload imports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportKind {
    /// `bugs.jsonl` and `transformations.jsonl`
    Items,
    /// `survey.json`
    Votes,
    Npr,
    Ce,
}

impl ImportKind {
    pub const ALL: [ImportKind; 4] = [
        ImportKind::Items,
        ImportKind::Votes,
        ImportKind::Npr,
        ImportKind::Ce,
    ];

    /// The name the upload form and the `imports` table use.
    pub fn as_str(self) -> &'static str {
        match self {
            ImportKind::Items => "items",
            ImportKind::Votes => "votes",
            ImportKind::Npr => "npr",
            ImportKind::Ce => "ce",
        }
    }

    pub fn parse(s: &str) -> Option<ImportKind> {
        ImportKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// What an upload of this kind must be, for people who chose the wrong file.
    pub fn expects(self) -> &'static str {
        match self {
            ImportKind::Items => {
                "items expect bugs.jsonl and transformations.jsonl (JSON lines, one record a line)"
            }
            ImportKind::Votes => "votes expect a survey.json (the survey's items with their votes)",
            ImportKind::Npr => {
                "repair results expect npr_results.csv (tool,target,status[,patch,developer_patch])"
            }
            ImportKind::Ce => "cross-entropies expect ce_scores.csv (model,target,cross_entropy)",
        }
    }
}

/// Imports uploaded files, (name, text) each: two for items (bugs, then transformations),
/// one for the others.
pub async fn import_upload(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    kind: ImportKind,
    files: &[(String, String)],
) -> ServiceResult<Outcome> {
    let one = || match files {
        [(name, text)] => Ok((name.as_str(), text.as_str())),
        _ => Err(ServiceError::Invalid(format!(
            "{} takes exactly one file",
            kind.as_str()
        ))),
    };
    let outcome = match kind {
        ImportKind::Items => match files {
            [b, t] => import_items_text(db, study, actor, (&b.0, &b.1), (&t.0, &t.1)).await,
            _ => Err(ServiceError::Invalid(
                "items take two files: bugs.jsonl and transformations.jsonl".into(),
            )),
        },
        ImportKind::Votes => {
            let (name, text) = one()?;
            import_votes_text(db, study, actor, name, text).await
        }
        ImportKind::Npr | ImportKind::Ce => {
            let (name, text) = one()?;
            let table = if kind == ImportKind::Npr {
                ResultsTable::Npr
            } else {
                ResultsTable::Ce
            };
            import_results_text(db, study, actor, table, name, text).await
        }
    };
    // a refused file says what this upload expects (a wrong file is the usual cause)
    outcome.map_err(|e| match e {
        ServiceError::Invalid(m) => ServiceError::Invalid(format!("{m}\n({})", kind.expects())),
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use natstudy_engine::transform::{self, follow_fix, line_data, MethodSel, Operator, Request};

    /// Items of two bugs, mixed in the file's order: each item gets its own line data and fixed
    /// side, as if derived alone (the bug's shared work is done once, one bug at a time).
    #[tokio::test]
    async fn items_of_mixed_bugs_are_derived_each_as_alone() {
        // bug A: the fix is on the line the loop operator rewrites (applied again);
        // bug B: the fix is on another line than the change (merged)
        let a = "int last(int[] xs, int end) {\n    int r = 0;\n    for (int i = 0; i < end; i++) {\n        r = xs[i];\n    }\n    return r;\n}\n";
        let a_fixed = a.replace("i < end", "i <= end");
        let b = "int f(int x) {\n    int y = x * 2;\n    int z = 1;\n    return y - z;\n}\n";
        let b_fixed = b.replace("y - z", "y + z");
        let n = a.lines().count();
        let all: Vec<usize> = (1..=n).collect();
        let request = Request {
            source: a,
            method_only: true,
            method: MethodSel::Lines(1, n),
            buggy_lines: &all,
            operators: &[Operator::For2While],
            all_sites: true,
        };
        let loop_t = transform::transform(&request, None).expect("transforms")[0].clone();
        let bug = |id: &str, src: &str, fixed: &str, line: usize| {
            serde_json::json!({"bug_id": id, "project": "P", "file": "F.java", "method": "m",
                "source": src, "fixed_source": fixed, "buggy_lines": [line]})
            .to_string()
        };
        let bugs_text = [bug("A", a, &a_fixed, 3), bug("B", b, &b_fixed, 4)].join("\n");
        let item = |id: &str, bug: &str, op: &str, level: &str, src: &str, summary: &str| {
            serde_json::json!({"id": id, "bug_id": bug, "operator": op, "level": level,
                "source": src, "summary": summary})
            .to_string()
        };
        let b_src = "int f(int x) {\n    int y = 2 * x;\n    int z = 1;\n    return y - z;\n}\n";
        let items_text = [
            item(
                "statement_1",
                "A",
                "For2While",
                "statement",
                &loop_t.method_source,
                &loop_t.summary,
            ),
            item(
                "expression_1",
                "B",
                "SwitchEqualExp",
                "expression",
                b_src,
                "s",
            ),
            item(
                "statement_2",
                "A",
                "For2While",
                "statement",
                &loop_t.method_source,
                "another site",
            ),
        ]
        .join("\n");
        let bugs = formats::items::parse_bugs(&bugs_text, "bugs.jsonl").expect("bugs");
        let ts = formats::items::parse_transformations(&items_text, "t.jsonl", &bugs)
            .expect("transformations");
        let derived = derive_items(bugs.clone(), ts.clone())
            .await
            .expect("derived");
        assert_eq!(derived.len(), 3);
        for (t, d) in ts.iter().zip(&derived) {
            let bug = bugs.iter().find(|b| b.bug_id == t.bug_id).expect("bug");
            let fixed = bug.fixed_source.as_deref().expect("fixed");
            let alone = follow_fix(
                &bug.source,
                &t.source,
                fixed,
                t.operator.parse().ok(),
                &t.summary,
            )
            .map(|(text, _)| text);
            assert_eq!(d.fixed_source, alone, "{}", t.id);
            assert_eq!(
                d.lines,
                line_data(&bug.source, &bug.buggy_lines, &t.source),
                "{}",
                t.id
            );
        }
        // what each path gave
        assert_eq!(
            derived[0].fixed_source.as_deref(),
            Some(loop_t.method_source.replace("i < end", "i <= end").as_str())
        );
        assert_eq!(
            derived[1].fixed_source.as_deref(),
            Some(b_src.replace("y - z", "y + z").as_str())
        );
        assert_eq!(
            derived[2].fixed_source, None,
            "no application with that summary"
        );
    }
}
