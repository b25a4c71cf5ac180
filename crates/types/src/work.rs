//! A study's background work: generator previews, jobs, models and their scores.

use serde::{Deserialize, Serialize};

use crate::{DiffLine, JobId};

/// A transformation the engine proposes for a study, before it becomes an item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneratedPreview {
    /// Stable across regenerations: bug, operator and a digest of the transformed source.
    pub key: String,
    pub bug_id: String,
    pub operator: String,
    pub level: String,
    pub summary: String,
    pub touches_buggy: bool,
    pub diff: Vec<DiffLine>,
}

/// A background job of a study (e.g. scoring with a language model) and its progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRow {
    pub id: JobId,
    pub kind: String,
    pub label: String,
    /// `queued`, `running`, `done`, `failed` or `stopped`.
    pub state: String,
    pub done: i64,
    pub total: i64,
    pub message: String,
    pub started_at_ms: i64,
    pub updated_at_ms: i64,
    /// Someone asked the running job to stop; it has not yet.
    pub stopping: bool,
    /// Tokens scored so far (0 where the job does not count tokens).
    pub tokens: i64,
    /// Milliseconds the job has been counting (a model's load left out).
    pub counting_ms: i64,
    /// What a running job expects still to take, once it can tell.
    pub eta_ms: Option<i64>,
    /// Bytes of its model's tensors read, of all, while a scoring job's model loads (0 of 0
    /// before the load reads, and for jobs that load nothing).
    pub load_read: i64,
    pub load_of: i64,
}

/// A language model file the server holds in its models directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelFile {
    pub name: String,
    pub bytes: u64,
    /// A neural model (a Hugging Face folder or a GGUF file), not an n-gram one: it scores
    /// methods, it does not rank RenameVariable-2's names.
    pub neural: bool,
    /// Uploaded for this study (it counts against the study's quota).
    pub this_study: bool,
    /// The viewer may delete it: staff of the study that uploaded it, or an admin.
    pub deletable: bool,
    /// A neural model's weights in memory on the CPU, in bytes, as read from its headers
    /// (f32 for a folder, packed for a GGUF file); `None` for an n-gram model or unreadable
    /// headers.
    pub memory: Option<u64>,
}

/// What the study page's scoring panel shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoringView {
    pub models: Vec<ModelFile>,
    pub jobs: Vec<JobRow>,
    /// Bytes of models uploaded for this study, and the most it may hold.
    pub quota_used: u64,
    pub quota: u64,
    /// The memory the server has free for a model, in bytes, where the system says.
    pub memory_free: Option<u64>,
}

/// Why an operator did or did not apply to the study's bugs (the generator's "Why not?").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperatorWhy {
    pub operator: String,
    /// Applications kept.
    pub kept: usize,
    /// Refused sites by rule, most frequent first.
    pub refusals: Vec<RefusalCount>,
}

/// How often a rule refused a site, and one place it did (`Chart-1 line 4`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusalCount {
    pub rule: String,
    pub count: usize,
    pub example: String,
}

/// What the study page's generator runs: operators (`studied`, `all` or names), whether
/// applications away from the buggy lines count, and an optional model (a file of the models
/// directory) that ranks RenameVariable-2's names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenerateRequest {
    pub operators: String,
    pub all_sites: bool,
    #[serde(default)]
    pub model: Option<String>,
}
