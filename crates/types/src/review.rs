//! Patch review: the reviewer's patch, the adjudication queue and the overview.

use serde::{Deserialize, Serialize};

use crate::{DiffLine, ReviewTaskId};

/// A plausible patch as its reviewer sees it: the target's buggy method against the tool's
/// patch and against the developer's fix (no tool name, no other verdicts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewItem {
    pub task: ReviewTaskId,
    pub target: String,
    pub patch_diff: Vec<DiffLine>,
    /// `None` when the developer's fix of this target is not known.
    pub fix_diff: Option<Vec<DiffLine>>,
    /// The reviewer's verdicts so far in this study, and the patches still open to them.
    pub done: i64,
    pub left: i64,
}

/// A disagreement an admin decides, with the reviewers' verdicts (reviewer, verdict, note).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdjudicationRow {
    pub tool: String,
    pub target: String,
    pub verdicts: Vec<(String, String, String)>,
    pub patch_diff: Vec<DiffLine>,
    pub fix_diff: Option<Vec<DiffLine>>,
}

/// The study's patch review for its admins: open disagreements and automatic decisions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewOverview {
    pub tasks: usize,
    pub pending: usize,
    pub decided: usize,
    pub open: Vec<AdjudicationRow>,
    /// (tool, target, reason explained) of the standing automatic decisions.
    pub automatic: Vec<(String, String, String)>,
}
