//! Patch review use cases: build the tasks from the study's plausible patches (automatic
//! checks first), import reviewers' verdicts, and rule on tasks.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::imports::{name, read};
use super::{ServiceError, ServiceResult};
use crate::store::reviews::{NewTask, ReviewInput, Ruling};
use crate::store::Db;
use crate::store::{self, imports::Outcome};
use natstudy_engine::formats;
use natstudy_engine::review::{self, tce, AutoReason};
use natstudy_vocab::ids::{ReviewTaskId, StudyId, UserId};

/// What `review create` does.
#[derive(Debug, Clone)]
pub struct CreateOptions {
    /// Only these tools' patches (all when empty).
    pub tools: Vec<String>,
    /// Reviewers per patch.
    pub k: u32,
    /// Run the TCE check with javac (and this classpath) where the fixed method is known.
    pub javac: Option<tce::Javac>,
}

impl Default for CreateOptions {
    fn default() -> CreateOptions {
        CreateOptions {
            tools: Vec::new(),
            k: 2,
            javac: None,
        }
    }
}

/// What `review create` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreateSummary {
    pub created: usize,
    pub existing: usize,
    pub noop: usize,
    pub sye: usize,
    pub tce: usize,
    pub duplicates: usize,
    /// Tasks whose TCE check could not run, with why (the first few).
    pub tce_failures: Vec<String>,
    pub tce_failed: usize,
}

impl CreateSummary {
    /// What was done, in words (the CLI and the page say the same).
    pub fn describe(&self) -> String {
        format!(
            "{} review tasks created ({} already there): {} no-op, {} SYE, {} TCE decided automatically; {} duplicates reviewed once",
            self.created, self.existing, self.noop, self.sye, self.tce, self.duplicates
        )
    }
}

/// The developer-fixed method of a task's target: the bug's `fixed_source`, else the result's
/// `developer_patch` (a method, or a diff against the target's buggy method or the bug's); on
/// a transformed target a fix of the original is carried over by a three-way merge.
fn fixed_method(input: &ReviewInput) -> Option<String> {
    let carry = |fix: &str| {
        if input.transformed {
            review::transformed_fixed(&input.bug_source, &input.buggy, fix)
        } else {
            Some(fix.to_owned())
        }
    };
    if let Some(f) = &input.bug_fixed {
        return carry(f);
    }
    let dev = input.developer_patch.as_deref()?;
    match review::patched_method(&input.buggy, dev) {
        // a whole method is the target's fix as given; a diff applies to its buggy method
        Ok((m, _)) => Some(m),
        Err(_) if input.transformed => {
            let (m, _) = review::patched_method(&input.bug_source, dev).ok()?;
            carry(&m)
        }
        Err(_) => None,
    }
}

/// Turns each plausible patch into a task: the patched method, the automatic decision, and the
/// task it duplicates. CPU and javac work: run it off the async threads.
fn plan(
    inputs: Vec<ReviewInput>,
    options: &CreateOptions,
) -> ServiceResult<(Vec<NewTask>, CreateSummary)> {
    let mut summary = CreateSummary::default();
    let mut problems = formats::Problems::default();
    let mut tasks = Vec::new();
    // (target, tokens of the patched method) → the first tool's task, for duplicates
    let mut first: HashMap<(String, Vec<String>), String> = HashMap::new();
    for input in inputs {
        if !options.tools.is_empty() && !options.tools.contains(&input.tool) {
            continue;
        }
        let patched = match review::patched_method(&input.buggy, &input.patch) {
            Ok((p, _)) => p,
            Err(e) => {
                problems.push(
                    "npr_results",
                    0,
                    "patch",
                    format!("{} on {}: {e}", input.tool, input.target),
                );
                continue;
            }
        };
        let fixed = fixed_method(&input);
        let mut auto = review::token_check(&input.buggy, &patched, fixed.as_deref());
        let mut auto_note = String::new();
        if auto.is_none() {
            if let (Some(javac), Some(fixed)) = (&options.javac, &fixed) {
                let context = input
                    .file_source
                    .as_deref()
                    .map(|file_source| tce::Context {
                        file_name: &input.file_path,
                        file_source,
                        method: &input.buggy,
                    });
                // the file holds the original method; a transformed target is compiled alone
                let context = context.filter(|_| !input.transformed);
                match tce::equivalent(javac, context, &patched, fixed) {
                    Ok(true) => auto = Some(AutoReason::Tce),
                    Ok(false) => auto_note = "TCE: class files differ".into(),
                    Err(e) => {
                        auto_note = format!("TCE not run: {e}");
                        summary.tce_failed += 1;
                        if summary.tce_failures.len() < 5 {
                            summary
                                .tce_failures
                                .push(format!("{} on {}: {e}", input.tool, input.target));
                        }
                    }
                }
            }
        }
        match auto {
            Some(AutoReason::Noop) => summary.noop += 1,
            Some(AutoReason::Sye) => summary.sye += 1,
            Some(AutoReason::Tce) => summary.tce += 1,
            None => {}
        }
        let same_as_tool = if auto.is_none() {
            let key = (input.target.clone(), review::java_tokens(&patched));
            match first.get(&key) {
                Some(tool) => {
                    summary.duplicates += 1;
                    Some(tool.clone())
                }
                None => {
                    first.insert(key, input.tool.clone());
                    None
                }
            }
        } else {
            None
        };
        tasks.push(NewTask {
            tool: input.tool,
            target: input.target,
            buggy: input.buggy,
            patched,
            fixed,
            k: options.k,
            auto,
            auto_note,
            same_as_tool,
        });
    }
    problems.finish(())?;
    Ok((tasks, summary))
}

/// Creates the study's review tasks (those not created before), all or nothing.
pub async fn create(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    options: CreateOptions,
) -> ServiceResult<CreateSummary> {
    if !(1..=10).contains(&options.k) {
        return Err(ServiceError::Invalid(format!(
            "k is {}: between 1 and 10 reviewers review each patch",
            options.k
        )));
    }
    let inputs = store::reviews::inputs(db, study).await?;
    let (tasks, mut summary) = tokio::task::spawn_blocking(move || plan(inputs, &options))
        .await
        .map_err(|e| ServiceError::Internal(e.into()))??;
    let (created, existing) = store::reviews::create(db, study, actor, &tasks).await?;
    summary.created = created;
    summary.existing = existing;
    Ok(summary)
}

/// Imports `reviews.csv` (`tool,target,reviewer,verdict[,note]`) against the study's tasks.
pub async fn import_reviews(db: &Db, study: StudyId, file: &Path) -> ServiceResult<Outcome> {
    import_reviews_text(db, study, None, &name(file), &read(file)?).await
}

pub async fn import_reviews_text(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    file: &str,
    text: &str,
) -> ServiceResult<Outcome> {
    let known: HashSet<(String, String)> = store::reviews::tasks(db, study)
        .await?
        .into_iter()
        .map(|t| (t.tool, t.target))
        .collect();
    let rows = formats::results::parse_reviews(text, file, &known)?;
    let digest = store::imports::digest(&[text]);
    Ok(store::reviews::import_verdicts(db, study, actor, &digest, &rows).await?)
}

/// An admin's ruling on one task.
pub async fn rule(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    tool: &str,
    target: &str,
    ruling: Ruling,
) -> ServiceResult<()> {
    Ok(store::reviews::rule(db, study, actor, tool, target, ruling).await?)
}

/// The longest note a reviewer may leave.
pub const MAX_NOTE_CHARS: usize = natstudy_engine::formats::results::MAX_NOTE_CHARS;

fn diff_lines(old: &str, new: &str) -> Vec<natstudy_types::DiffLine> {
    crate::present::wire::wire_rows(natstudy_engine::diff::diff_rows(old, new, &[]))
}

/// The reviewer's next patch, held for them (diffs of the buggy method against the patch and
/// against the developer's fix).
pub async fn next_for(
    db: &Db,
    study: StudyId,
    reviewer: &str,
) -> ServiceResult<Option<natstudy_types::ReviewItem>> {
    let Some(t) = store::reviews::next_task(db, study, reviewer).await? else {
        return Ok(None);
    };
    Ok(Some(natstudy_types::ReviewItem {
        task: t.id,
        target: t.target,
        patch_diff: diff_lines(&t.buggy, &t.patched),
        fix_diff: t.fixed.as_deref().map(|f| diff_lines(&t.buggy, f)),
        done: t.done,
        left: t.left,
    }))
}

/// Records a reviewer's verdict from the page.
pub async fn submit(
    db: &Db,
    study: StudyId,
    task: ReviewTaskId,
    reviewer: &str,
    verdict: &str,
    note: &str,
) -> ServiceResult<()> {
    let verdict = natstudy_engine::review::Verdict::parse(verdict).ok_or_else(|| {
        ServiceError::Invalid(format!("{verdict:?} is not correct, wrong or unsure"))
    })?;
    let note = note.trim();
    if note.chars().count() > MAX_NOTE_CHARS {
        return Err(ServiceError::Invalid(format!(
            "the note is longer than {MAX_NOTE_CHARS} characters"
        )));
    }
    Ok(store::reviews::submit_verdict(db, study, task, reviewer, verdict, note).await?)
}

/// A ruling by its name: `correct`, `wrong`, `clear` or `send-back`.
pub fn parse_ruling(s: &str) -> ServiceResult<Ruling> {
    Ok(match s {
        "correct" => Ruling::Decide(true),
        "wrong" => Ruling::Decide(false),
        "clear" => Ruling::Clear,
        "send-back" => Ruling::SendBack,
        other => {
            return Err(ServiceError::Invalid(format!(
                "unknown ruling {other:?} (correct, wrong, clear or send-back)"
            )))
        }
    })
}

/// One review task as the command line lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskListing {
    pub tool: String,
    pub target: String,
    pub state: natstudy_engine::analysis::TaskState,
    /// (reviewer, verdict) in the order given.
    pub verdicts: Vec<(String, String)>,
}

/// The study's review tasks as stored, each with its state, and the indexes of the open
/// disagreements: what the command's list and the admins' overview both read.
struct Tasks {
    rows: Vec<store::reviews::TaskRow>,
    states: Vec<natstudy_engine::analysis::TaskState>,
    open: Vec<usize>,
}

async fn tasks(db: &Db, study: StudyId) -> ServiceResult<Tasks> {
    use natstudy_engine::analysis::{open_disagreements, states};
    let rows = store::reviews::tasks(db, study).await?;
    let tasks = store::analysis::review_tasks(&rows);
    Ok(Tasks {
        states: states(&tasks),
        open: open_disagreements(&tasks),
        rows,
    })
}

/// The study's review tasks with their states; `open_only`: only the disagreements an admin
/// must decide (the overview's `open`).
pub async fn list(db: &Db, study: StudyId, open_only: bool) -> ServiceResult<Vec<TaskListing>> {
    let Tasks { rows, states, open } = tasks(db, study).await?;
    let open: std::collections::HashSet<usize> = open.into_iter().collect();
    Ok(rows
        .iter()
        .zip(states)
        .enumerate()
        .filter(|(i, _)| !open_only || open.contains(i))
        .map(|(_, (t, state))| TaskListing {
            tool: t.tool.clone(),
            target: t.target.clone(),
            state,
            verdicts: t
                .verdicts
                .iter()
                .map(|(r, v, _)| (r.clone(), v.as_str().to_owned()))
                .collect(),
        })
        .collect())
}

/// The study's patch review for its admins: open disagreements (with diffs and verdicts) and
/// the standing automatic decisions.
pub async fn overview(db: &Db, study: StudyId) -> ServiceResult<natstudy_types::ReviewOverview> {
    use natstudy_engine::analysis::TaskState;
    let Tasks {
        rows,
        states: st,
        open,
    } = tasks(db, study).await?;
    let open = open
        .into_iter()
        .map(|i| {
            let t = &rows[i];
            natstudy_types::AdjudicationRow {
                tool: t.tool.clone(),
                target: t.target.clone(),
                verdicts: t
                    .verdicts
                    .iter()
                    .map(|(r, v, n)| (r.clone(), v.as_str().to_owned(), n.clone()))
                    .collect(),
                patch_diff: diff_lines(&t.buggy, &t.patched),
                fix_diff: t.fixed.as_deref().map(|f| diff_lines(&t.buggy, f)),
            }
        })
        .collect();
    let automatic = rows
        .iter()
        .filter(|t| !t.sent_back)
        .filter_map(|t| {
            Some((
                t.tool.clone(),
                t.target.clone(),
                t.auto?.explain().to_owned(),
            ))
        })
        .collect();
    Ok(natstudy_types::ReviewOverview {
        tasks: rows.len(),
        pending: st.iter().filter(|s| **s == TaskState::Pending).count(),
        decided: st
            .iter()
            .filter(|s| matches!(s, TaskState::Decided { .. }))
            .count(),
        open,
        automatic,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUGGY: &str =
        "int f(int x) {\n    int y = x * 2;\n    int z = 1;\n    return y - z;\n}\n";
    const FIXED: &str =
        "int f(int x) {\n    int y = x * 2;\n    int z = 1;\n    return y + z;\n}\n";
    const TRANSFORMED: &str =
        "int f(int x) {\n    int y = 2 * x;\n    int z = 1;\n    return y - z;\n}\n";

    fn input(transformed: bool, bug_fixed: Option<&str>, dev: Option<&str>) -> ReviewInput {
        ReviewInput {
            tool: "t".into(),
            target: "x".into(),
            patch: "p".into(),
            buggy: if transformed { TRANSFORMED } else { BUGGY }.into(),
            bug_source: BUGGY.into(),
            bug_fixed: bug_fixed.map(str::to_owned),
            developer_patch: dev.map(str::to_owned),
            file_path: "F.java".into(),
            file_source: None,
            transformed,
        }
    }

    #[test]
    fn the_fix_comes_from_the_bug_or_the_developer_patch() {
        assert_eq!(
            fixed_method(&input(false, Some(FIXED), None)).as_deref(),
            Some(FIXED)
        );
        assert_eq!(fixed_method(&input(false, None, None)), None);
        // a diff of the original method, on the original and carried to the transformed one
        let diff = "@@ -4 +4 @@\n-    return y - z;\n+    return y + z;\n";
        assert_eq!(
            fixed_method(&input(false, None, Some(diff))).as_deref(),
            Some(FIXED)
        );
        let carried = FIXED.replace("x * 2", "2 * x");
        assert_eq!(
            fixed_method(&input(true, None, Some(diff))).as_deref(),
            Some(carried.as_str())
        );
        assert_eq!(
            fixed_method(&input(true, Some(FIXED), None)).as_deref(),
            Some(carried.as_str())
        );
        // a whole method is taken as given
        assert_eq!(
            fixed_method(&input(false, None, Some(FIXED))).as_deref(),
            Some(FIXED)
        );
    }
}
