//! Patch review: the decision on each plausible patch (automatic checks, reviewers, an admin's
//! adjudication), the statuses it gives the robustness analysis, and the reviewers' agreement
//! (Cohen's kappa between two reviewers, Fleiss' kappa when more review each patch).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::*;
use crate::review::{AutoReason, Verdict};
use crate::stats::CohenPairs;

/// One review task: a tool's plausible patch on a target.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewTask {
    pub tool: String,
    pub target: String,
    /// The task (index into the list) whose reviewers decide this one: another tool's
    /// token-identical patch of the same target, reviewed once.
    pub same_as: Option<usize>,
    /// The automatic check's decision, unless an admin sent it back to people.
    pub auto: Option<AutoReason>,
    /// (reviewer, verdict), at most one per reviewer.
    pub verdicts: Vec<(String, Verdict)>,
    /// How many reviewers the task asks for.
    pub k: usize,
    /// An admin's decision on a disagreement (true: correct).
    pub adjudicated: Option<bool>,
}

/// Who decided a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DecidedBy {
    Auto,
    Reviewers,
    Admin,
}

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Fewer verdicts than the task asks for.
    Pending,
    /// The reviewers did not all say correct or all say wrong: an admin decides.
    Disagreement,
    Decided {
        correct: bool,
        by: DecidedBy,
    },
}

impl ReviewTask {
    /// The task's own state (a duplicate's is its original's: see [`states`]).
    fn own_state(&self) -> TaskState {
        if let Some(correct) = self.adjudicated {
            return TaskState::Decided {
                correct,
                by: DecidedBy::Admin,
            };
        }
        if let Some(reason) = self.auto {
            return TaskState::Decided {
                correct: reason.correct(),
                by: DecidedBy::Auto,
            };
        }
        if self.verdicts.len() < self.k.max(1) {
            return TaskState::Pending;
        }
        let first = self.verdicts[0].1;
        if first != Verdict::Unsure && self.verdicts.iter().all(|(_, v)| *v == first) {
            TaskState::Decided {
                correct: first == Verdict::Correct,
                by: DecidedBy::Reviewers,
            }
        } else {
            TaskState::Disagreement
        }
    }

    /// The two verdicts Cohen's kappa compares: those of the two reviewers first by name.
    fn pair(&self) -> Option<(Verdict, Verdict)> {
        let mut v: Vec<&(String, Verdict)> = self.verdicts.iter().collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        Some((v.first()?.1, v.get(1)?.1))
    }
}

/// Resolves a duplicate to the task that decides it (following at most `tasks.len()` links, so a
/// cycle in hostile data ends).
fn canonical(tasks: &[ReviewTask], mut i: usize) -> usize {
    for _ in 0..tasks.len() {
        match tasks[i].same_as {
            Some(j) if j < tasks.len() && j != i => i = j,
            _ => break,
        }
    }
    i
}

/// Every task's state, duplicates taking their original's.
pub fn states(tasks: &[ReviewTask]) -> Vec<TaskState> {
    let own: Vec<TaskState> = tasks.iter().map(ReviewTask::own_state).collect();
    (0..tasks.len())
        .map(|i| match tasks[i].adjudicated {
            Some(_) => own[i],
            None => own[canonical(tasks, i)],
        })
        .collect()
}

/// The tasks an admin must decide: originals (not duplicates, which follow them) whose
/// reviewers disagree and that no one has decided yet.
pub fn open_disagreements(tasks: &[ReviewTask]) -> Vec<usize> {
    states(tasks)
        .into_iter()
        .enumerate()
        .filter(|&(i, s)| s == TaskState::Disagreement && canonical(tasks, i) == i)
        .map(|(i, _)| i)
        .collect()
}

/// The statuses the decisions give: (tool, target) → correct (2) or, when decided not correct,
/// left plausible (1). Undecided tasks keep the imported status.
pub fn decided_statuses(tasks: &[ReviewTask]) -> HashMap<(&str, &str), u8> {
    tasks
        .iter()
        .zip(states(tasks))
        .filter_map(|(t, s)| match s {
            TaskState::Decided { correct, .. } => Some((
                (t.tool.as_str(), t.target.as_str()),
                if correct { 2 } else { 1 },
            )),
            _ => None,
        })
        .collect()
}

/// Agreement and decisions of one tool's tasks.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ToolReview {
    pub tasks: usize,
    pub correct: usize,
    /// Tasks both compared reviewers judged.
    pub pairs: usize,
    pub cohen_kappa: Option<f64>,
    pub cohen_kappa_ci: Option<(f64, f64)>,
}

/// The patch review in numbers.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PatchReview {
    pub tasks: usize,
    pub auto_noop: usize,
    pub auto_sye: usize,
    pub auto_tce: usize,
    /// Tasks decided by another tool's identical patch.
    pub duplicates: usize,
    /// Tasks people reviewed to the end (as many verdicts as asked for).
    pub reviewed: usize,
    pub pending: usize,
    /// Reviewed tasks whose reviewers did not agree (adjudicated or still open).
    pub disagreements: usize,
    pub adjudicated: usize,
    /// Tasks decided correct, by any route.
    pub correct: usize,
    /// Patches both compared reviewers judged (Cohen's kappa's units).
    pub pairs: usize,
    /// Nominal over correct / wrong / unsure, between the two reviewers first by name.
    pub cohen_kappa: Option<f64>,
    pub cohen_kappa_ci: Option<(f64, f64)>,
    /// Fleiss' kappa over every verdict when more than two review a patch.
    pub fleiss_kappa: Option<f64>,
    pub by_tool: BTreeMap<String, ToolReview>,
}

fn label(v: Verdict) -> usize {
    match v {
        Verdict::Correct => 0,
        Verdict::Wrong => 1,
        Verdict::Unsure => 2,
    }
}

fn cohen(
    pairs: impl Iterator<Item = (Verdict, Verdict)>,
    options: &Options,
    salt: u64,
) -> (usize, Measure) {
    match CohenPairs::new(3, pairs.map(|(a, b)| (label(a), label(b)))) {
        Ok(c) => (c.len() as usize, with_ci(&c, options, salt)),
        Err(_) => (
            0,
            Measure {
                value: None,
                ci95: None,
            },
        ),
    }
}

/// The patch review's figures (`None` when the study has no review tasks).
pub fn patch_review(tasks: &[ReviewTask], options: &Options) -> Option<PatchReview> {
    if tasks.is_empty() {
        return None;
    }
    let states = states(tasks);
    let mut r = PatchReview {
        tasks: tasks.len(),
        ..PatchReview::default()
    };
    // reviewed by people: originals only (a duplicate's verdicts are its original's)
    let people = |i: usize| tasks[i].auto.is_none() && canonical(tasks, i) == i;
    for (i, (t, s)) in tasks.iter().zip(&states).enumerate() {
        match t.auto {
            Some(AutoReason::Noop) => r.auto_noop += 1,
            Some(AutoReason::Sye) => r.auto_sye += 1,
            Some(AutoReason::Tce) => r.auto_tce += 1,
            None => {}
        }
        r.duplicates += usize::from(canonical(tasks, i) != i);
        r.adjudicated += usize::from(t.adjudicated.is_some());
        if let TaskState::Decided { correct: true, .. } = s {
            r.correct += 1;
        }
        if people(i) {
            match t.own_state() {
                TaskState::Pending => r.pending += 1,
                TaskState::Disagreement => {
                    r.reviewed += 1;
                    r.disagreements += 1;
                }
                TaskState::Decided { by, .. } => {
                    r.reviewed += 1;
                    if by == DecidedBy::Admin {
                        // adjudicated: its reviewers disagreed (or were overruled)
                        let mut reviewers_only = t.clone();
                        reviewers_only.adjudicated = None;
                        r.disagreements +=
                            usize::from(reviewers_only.own_state() == TaskState::Disagreement);
                    }
                }
            }
        }
    }
    let pairs = || {
        (0..tasks.len())
            .filter(|&i| people(i))
            .filter_map(|i| tasks[i].pair())
    };
    let (n, m) = cohen(pairs(), options, 0xC0E1);
    r.pairs = n;
    r.cohen_kappa = m.value;
    r.cohen_kappa_ci = m.ci95;
    if tasks.iter().any(|t| t.verdicts.len() > 2) {
        let units: Vec<Vec<f64>> = (0..tasks.len())
            .filter(|&i| people(i))
            .map(|i| {
                tasks[i]
                    .verdicts
                    .iter()
                    .map(|(_, v)| label(*v) as f64)
                    .collect()
            })
            .collect();
        r.fleiss_kappa = fleiss_rows(&units, &[0.0, 1.0, 2.0]).and_then(|f| f.kappa().ok());
    }
    let mut tools: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, t) in tasks.iter().enumerate() {
        tools.entry(t.tool.as_str()).or_default().push(i);
    }
    for (salt, (tool, idx)) in tools.into_iter().enumerate() {
        let tool_pairs = idx
            .iter()
            .map(|&i| canonical(tasks, i))
            .filter(|&c| tasks[c].auto.is_none())
            .filter_map(|c| tasks[c].pair());
        let (n, m) = cohen(tool_pairs, options, 0xC0E1 ^ ((salt as u64 + 1) << 32));
        r.by_tool.insert(
            tool.to_owned(),
            ToolReview {
                tasks: idx.len(),
                correct: idx
                    .iter()
                    .filter(|&&i| matches!(states[i], TaskState::Decided { correct: true, .. }))
                    .count(),
                pairs: n,
                cohen_kappa: m.value,
                cohen_kappa_ci: m.ci95,
            },
        );
    }
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(tool: &str, target: &str, verdicts: &[(&str, Verdict)]) -> ReviewTask {
        ReviewTask {
            tool: tool.into(),
            target: target.into(),
            same_as: None,
            auto: None,
            verdicts: verdicts
                .iter()
                .map(|(r, v)| ((*r).to_owned(), *v))
                .collect(),
            k: 2,
            adjudicated: None,
        }
    }

    #[test]
    fn decisions_follow_the_papers_rule() {
        use Verdict::*;
        let mut tasks = vec![
            task("t1", "A", &[("ann", Correct), ("bob", Correct)]),
            task("t1", "B", &[("ann", Correct), ("bob", Wrong)]),
            task("t1", "C", &[("ann", Wrong), ("bob", Wrong)]),
            task("t1", "D", &[("ann", Correct)]),
            task("t2", "A", &[]),
            task("t2", "E", &[]),
            task("t2", "F", &[("ann", Unsure), ("bob", Unsure)]),
        ];
        tasks[4].same_as = Some(0); // t2's patch of A is t1's
        tasks[5].auto = Some(AutoReason::Sye);
        let s = states(&tasks);
        let decided = |correct| TaskState::Decided {
            correct,
            by: DecidedBy::Reviewers,
        };
        assert_eq!(s[0], decided(true));
        assert_eq!(s[1], TaskState::Disagreement);
        assert_eq!(s[2], decided(false));
        assert_eq!(s[3], TaskState::Pending);
        assert_eq!(s[4], decided(true), "a duplicate follows its original");
        assert_eq!(
            s[5],
            TaskState::Decided {
                correct: true,
                by: DecidedBy::Auto
            }
        );
        assert_eq!(
            s[6],
            TaskState::Disagreement,
            "all unsure is not a decision"
        );
        assert_eq!(open_disagreements(&tasks), vec![1, 6]);
        tasks[1].adjudicated = Some(false);
        let st = decided_statuses(&tasks);
        assert_eq!(st[&("t1", "A")], 2);
        assert_eq!(st[&("t1", "B")], 1);
        assert_eq!(st[&("t2", "A")], 2);
        assert!(!st.contains_key(&("t1", "D")));
        let r = patch_review(
            &tasks,
            &Options {
                bootstrap: 0,
                ..Options::default()
            },
        )
        .expect("tasks");
        assert_eq!(
            (r.tasks, r.auto_sye, r.duplicates, r.reviewed, r.pending),
            (7, 1, 1, 4, 1)
        );
        assert_eq!((r.disagreements, r.adjudicated, r.correct), (2, 1, 3));
        // pairs: A (c,c), B (c,w), C (w,w), F (u,u)
        assert_eq!(r.pairs, 4);
        // po = 3/4; rows = cols = (c 2, w 1, u 1) for ann… ann: c,c,w,u; bob: c,w,w,u
        // E(off-diagonal) = (16 − (2·1 + 1·2 + 1·1)) / 4 = 11/4; κ = 1 − 1 / (11/4) = 7/11
        let k = r.cohen_kappa.expect("kappa");
        assert!((k - 7.0 / 11.0).abs() < 1e-12, "{k}");
        assert_eq!(
            r.by_tool["t2"].pairs, 2,
            "t2: A through t1's reviewers, and F"
        );
    }
}
