//! Wire types shared by the services, the server functions and the pages. Plain data, no
//! behaviour that needs a database: these cross the network as JSON.
//!
//! The services build these and the pages show them; neither side owns them, so the services
//! need not depend on the UI crate (an architecture test holds it).

pub mod cookie;
mod entry;
mod vote_form;
pub mod words;

use serde::{Deserialize, Serialize};

pub use entry::Entry;
pub use vote_form::VoteForm;

pub use natstudy_vocab::ids::{
    AnnotatorId, BatchId, InviteId, ItemId, JobId, ReviewTaskId, StudyId, UserId,
};
pub use natstudy_vocab::Role;

/// The signed-in account as the pages see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    pub id: UserId,
    pub username: String,
    pub role: Role,
}

/// One row of the admin's user list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserRow {
    pub id: UserId,
    pub username: String,
    pub role: Role,
    pub disabled: bool,
    pub created_at_ms: i64,
}

/// A study with its headline counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudySummary {
    pub id: StudyId,
    pub name: String,
    pub description: String,
    pub ratings_per_item: i64,
    pub bugs: i64,
    pub items: i64,
    pub votes: i64,
    pub annotators: i64,
}

/// The studies the start page lists for whoever asks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HomeStudies {
    /// A staff account's studies with their counts (an admin's: all of them); `None` for
    /// anyone else.
    pub staff: Option<Vec<StudySummary>>,
    /// The studies this browser rates in: the signed-in account's (any role may be given
    /// items), and the study of the participant the session joined or resumed as (all a
    /// visitor has).
    pub rating: Vec<MyStudy>,
}

/// A study the signed-in account (or the browser's participant) rates in, with how far it is
/// there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MyStudy {
    pub id: StudyId,
    pub name: String,
    /// Items rated, of `total` planned (as the rating page counts them).
    pub rated: i64,
    pub total: i64,
    /// The account has ended its part in the study.
    pub finished: bool,
}

/// Items by naturalness level, for the study overview.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelCount {
    pub level: String,
    pub items: i64,
}

/// A study page's data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyDetail {
    pub summary: StudySummary,
    pub levels: Vec<LevelCount>,
    pub items: Vec<ItemRow>,
    pub audit: Vec<AuditRow>,
}

/// One transformation of a study, as listed on the study page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemRow {
    pub key: String,
    pub bug: String,
    pub operator: String,
    pub level: String,
    pub summary: String,
    pub votes: i64,
}

/// One line of the audit log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRow {
    pub at_ms: i64,
    pub user: Option<String>,
    pub action: String,
    pub detail: String,
}

/// A piece of a diff line; `changed` pieces are highlighted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seg {
    pub text: String,
    pub changed: bool,
}

/// One row of a diff (see the server's `engine::diff`). `kind`: same, removed, added, changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffLine {
    pub kind: String,
    pub old_no: Option<u32>,
    pub new_no: Option<u32>,
    pub old: Vec<Seg>,
    pub new: Vec<Seg>,
    /// The original line is a buggy line.
    pub buggy: bool,
    /// The transformed line is one of the transformed method's buggy lines.
    #[serde(default)]
    pub buggy_new: bool,
}

/// The part of an item's method file shown under Context, asked for when it is opened: the
/// method and the lines around it, bounded (a huge file is never sent whole), from line
/// `first_line` of the file's `total_lines`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileContext {
    pub text: String,
    pub first_line: u32,
    pub total_lines: u32,
}

/// An item as a participant rates it. Blinded studies leave `operator` and `bug_id` out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemView {
    pub item: ItemId,
    pub summary: String,
    pub operator: Option<String>,
    pub bug_id: Option<String>,
    pub project: String,
    pub file_path: String,
    pub method: String,
    pub diff: Vec<DiffLine>,
    /// Whether the method's file is known: its part ([`FileContext`]) is sent only when the
    /// participant opens Context, never with the item.
    pub has_file: bool,
    /// 1-based line of the file where the method starts, if found.
    pub method_line: Option<u32>,
    pub method_lines: u32,
    pub original_left: bool,
    /// The participant's current answers when revising: (CR, CC, comment).
    pub previous: Option<(u8, u8, String)>,
    /// A fresh idempotency key for this rendering's submit.
    pub token: String,
}

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

/// A rated item, for the revision list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatedRow {
    pub item: ItemId,
    pub summary: String,
    pub cr: u8,
    pub cc: u8,
}

/// A screener question of a study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScreenerQuestion {
    pub name: String,
    pub label: String,
    /// Empty for free text.
    pub options: Vec<String>,
    /// Options that turn the participant away (the screen-out): they rate nothing and get
    /// the study's screen-out code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub screen_out: Vec<String>,
}

/// The ids a participant's link carries from a crowd platform: Prolific's `PROLIFIC_PID`,
/// `STUDY_ID`, `SESSION_ID`; MTurk's `workerId`, `hitId`, `assignmentId`; SONA's `id`; a
/// generic `pid` ([`CrowdIdentity::from_query`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrowdIdentity {
    /// `prolific`, `mturk`, `sona` or `generic`.
    pub platform: Option<String>,
    /// The platform's participant id.
    pub pid: Option<String>,
    /// The platform's study (Prolific's `STUDY_ID`, MTurk's `hitId`).
    pub study: Option<String>,
    /// The platform's session (Prolific's `SESSION_ID`, MTurk's `assignmentId`).
    pub session: Option<String>,
}

impl CrowdIdentity {
    /// The identity in an invite link's query (`get`: a parameter's value), the first
    /// platform whose participant id is there: Prolific, MTurk, SONA, then a generic `pid`.
    pub fn from_query(get: impl Fn(&str) -> Option<String>) -> CrowdIdentity {
        let of = |platform: &str, pid: &str, study: Option<&str>, session: Option<&str>| {
            get(pid)
                .filter(|p| !p.trim().is_empty())
                .map(|p| CrowdIdentity {
                    platform: Some(platform.to_owned()),
                    pid: Some(p),
                    study: study.and_then(&get),
                    session: session.and_then(&get),
                })
        };
        of(
            "prolific",
            "PROLIFIC_PID",
            Some("STUDY_ID"),
            Some("SESSION_ID"),
        )
        .or_else(|| of("mturk", "workerId", Some("hitId"), Some("assignmentId")))
        .or_else(|| of("sona", "id", None, None))
        .or_else(|| of("generic", "pid", None, None))
        .unwrap_or_default()
    }
}

/// How a participant's work ended, which says what they are paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    /// The work asked: the completion code.
    Completed,
    /// Stopped after waiting for items held by others as long as the study asks: the partial
    /// code.
    Partial,
    /// Stopped before the work asked: no code.
    Returned,
    /// Turned away by the screener: the screen-out code.
    ScreenedOut,
}

/// A participant with nothing to rate now while items held by others may still come to them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiting {
    /// The ratings the study asks of each participant (N), if it sets it.
    pub required: Option<u64>,
    /// Seconds until the first item held by others is free again if its holder does not
    /// answer (0: any moment).
    pub free_in_secs: u64,
    /// The partial code may be taken now.
    pub partial_offered: bool,
    /// Seconds until the partial code is offered (`None`: the study offers none, or now).
    pub partial_in_secs: Option<u64>,
}

/// What an invite link leads to, told before anyone takes part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum InviteStatus {
    /// The link works: the study it joins; `continuing` when the caller already takes part
    /// (they continue where they were); `review` for a review-only invite (patch review, no
    /// survey).
    Open {
        study: String,
        continuing: bool,
        /// The caller took part and finished: nothing to continue.
        finished: bool,
        review: bool,
    },
    /// Every item of the link's batch has all its ratings: a new participant would rate
    /// nothing (the join is refused).
    Full,
    /// Every place the link offered is taken.
    UsedUp,
    /// The study's organisers closed the link.
    Closed,
    /// No such link.
    Unknown,
}

/// Where a participant stands in a study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum AnnotateStep {
    Consent {
        text: String,
        screener: Vec<ScreenerQuestion>,
    },
    Guideline,
    Rate(Box<ItemView>),
    /// The queue has nothing more: the annotator's rated items, a page at a time.
    Review {
        /// The rated items on this page, in rating order.
        rated: Vec<RatedRow>,
        /// This page, counted from 1.
        page: u32,
        /// Pages in all (at least 1).
        pages: u32,
        /// The items rated on the pages before this one.
        before: u64,
        /// The items rated in all.
        total: u64,
        /// Items held by others may still come: the page waits for them and offers no
        /// finish (but a partial one, once the study's wait has passed).
        waiting: Option<Waiting>,
        /// The ratings the study asks of each participant (N), if it sets it.
        required: Option<u64>,
    },
    /// The participant finished. `completion_code` is the study's code when they rated at
    /// least `min_rated` items (`rated`), else `None`.
    Finished {
        completion_code: Option<String>,
        rated: u64,
        min_rated: u64,
        /// The study has a completion code at all.
        has_code: bool,
        /// How the participant's work ended (`completion_code` is that outcome's code).
        outcome: Outcome,
        /// Where the participant goes back to (the crowd platform), their code filled in.
        redirect: Option<String>,
    },
}

/// The annotation page's data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnnotateState {
    pub study: StudyId,
    pub study_name: String,
    pub code: String,
    /// Continues this participant on another device (`/resume`); invited participants only.
    pub resume_code: Option<String>,
    pub done: i64,
    pub total: i64,
    /// The guideline as HTML (rendered from the study's markdown on the server).
    pub guideline_html: String,
    pub step: AnnotateStep,
    /// Said once above the step (an attention item answered against its expected answer).
    #[serde(default)]
    pub notice: Option<String>,
}

/// A study's settings as the admin edits them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudySettingsForm {
    pub ratings_per_item: i64,
    pub guideline: String,
    pub blind_operator: bool,
    pub blind_bug_id: bool,
    pub randomise_sides: bool,
    pub completion_code: String,
    /// The completion code is shown only to participants who rated at least this many items
    /// (0: to everyone who finishes).
    pub min_rated_for_code: i64,
    /// Shown before the screener; empty for the default text.
    pub consent_text: String,
    /// The screener as JSON: `[{"name", "label", "options": [...]}]` (no options: free text);
    /// `[]` for the default questions (Java experience, role).
    pub screener_json: String,
    /// The ratings asked of each participant (N; `None`: all they can be given).
    #[serde(default)]
    pub items_per_participant: Option<i64>,
    /// Minutes a participant waits for items held by others before the partial code is
    /// offered (`None`: never).
    #[serde(default)]
    pub partial_after_minutes: Option<i64>,
    /// The code of a participant who stopped after that wait (empty: none).
    #[serde(default)]
    pub partial_code: String,
    /// Where a finished participant is sent, `{code}` standing for their code (empty: none).
    #[serde(default)]
    pub completion_url: String,
    /// The code of a participant the screener turns away (empty: none).
    #[serde(default)]
    pub screenout_code: String,
    /// Where a participant the screener turns away is sent, `{code}` for the screen-out code.
    #[serde(default)]
    pub screenout_url: String,
    /// A participant whose median time on item is under this many seconds is flagged a
    /// speeder (`None`: no one is).
    #[serde(default)]
    pub speeder_seconds: Option<i64>,
    /// After this many attention (gold) items judged against their expected answer, the
    /// participant's survey ends with the screen-out code (`None`: never).
    #[serde(default)]
    pub gold_failures: Option<i64>,
    /// The study is in its pilot phase: invite links made now are pilot links, whose
    /// participants' votes count nowhere but in the pilot export.
    #[serde(default)]
    pub pilot: bool,
}

/// One annotator's line on the monitor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnnotatorRow {
    pub id: AnnotatorId,
    pub code: String,
    pub account: Option<String>,
    pub done: i64,
    pub total: i64,
    pub last_active_ms: Option<i64>,
    pub median_time: Option<f64>,
    pub gold_seen: i64,
    pub gold_correct: i64,
    pub finished: bool,
    /// Made by a votes import (their votes were imported; they were never online).
    pub imported: bool,
    /// Items they hold a live lease on now; an admin's drop-out action lets go of them.
    pub leases: i64,
    /// The crowd platform's participant id they came with (`prolific: 5f…`), for staff.
    #[serde(default)]
    pub external_id: Option<String>,
    /// Their median time on item is under the study's speeder threshold.
    #[serde(default)]
    pub speeder: bool,
    /// Why they are excluded from the analysis (their votes count nowhere), when they are.
    #[serde(default)]
    pub excluded: Option<String>,
}

/// A batch as listed on the study page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchRow {
    pub id: BatchId,
    pub name: String,
    pub strategy: String,
    pub items: i64,
    pub annotators: i64,
    /// How long a claim of its dynamic queue is held without an answer, in minutes.
    #[serde(default)]
    pub lease_minutes: i64,
}

/// An invite link of a study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InviteRow {
    pub id: InviteId,
    /// `/join/TOKEN` (the page makes it a full address).
    pub path: String,
    /// The batch it joins; `None` for a review-only invite.
    pub batch: Option<String>,
    pub cap: i64,
    pub used: i64,
    pub closed: bool,
    /// Open, but every item of its batch has k ratings: it gives no one work.
    pub full: bool,
    /// A pilot link: its participants' ratings count nowhere.
    #[serde(default)]
    pub pilot: bool,
}

/// The live state of a study for admins and researchers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Monitor {
    pub k: i64,
    /// The study's invite links, newest first.
    pub invites: Vec<InviteRow>,
    /// `items_with[n]`: how many items have n completed ratings (n = 0..=k).
    pub items_with: Vec<i64>,
    pub annotators: Vec<AnnotatorRow>,
    pub batches: Vec<BatchRow>,
    /// Fleiss' kappa of the binary judgement over the items with k ratings so far.
    pub fleiss_kappa: Option<f64>,
    pub complete_items: i64,
    pub settings: StudySettingsForm,
    /// The pilot's participants and their ratings (in none of the figures above).
    #[serde(default)]
    pub pilot_participants: i64,
    #[serde(default)]
    pub pilot_votes: i64,
}

/// A study's results as the results page shows them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultsView {
    /// Headline figures (study size, Fleiss' kappa, full agreement).
    pub headline: Vec<String>,
    /// The report's tables (the same `natstudy report` prints).
    pub tables: Vec<TableView>,
    /// The figures, in the order a paper shows them.
    pub figures: Vec<FigureView>,
    pub votes: i64,
}

/// A figure of the results: its stable id (the file name of its downloads), title, caption (what
/// it shows, on which data) and SVG (which declares its print size).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FigureView {
    pub id: String,
    pub title: String,
    pub caption: String,
    pub svg: String,
    /// As wide as both columns of a page.
    pub wide: bool,
}

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

/// A table of the report: a title, column names and rows of cells (already formatted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableView {
    pub id: String,
    pub title: String,
    /// One line: what the table measures.
    pub note: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
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

#[cfg(test)]
mod tests {
    use super::CrowdIdentity;

    fn ids(query: &[(&str, &str)]) -> CrowdIdentity {
        CrowdIdentity::from_query(|k| {
            query
                .iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| v.to_string())
        })
    }

    /// Each platform's parameters, as its links carry them; the first platform whose
    /// participant id is there wins; an empty id is none.
    #[test]
    fn a_links_crowd_ids_are_read_by_platform() {
        let id = |p: &str, pid: &str, s: Option<&str>, x: Option<&str>| CrowdIdentity {
            platform: Some(p.into()),
            pid: Some(pid.into()),
            study: s.map(Into::into),
            session: x.map(Into::into),
        };
        assert_eq!(
            ids(&[
                ("PROLIFIC_PID", "5f1"),
                ("STUDY_ID", "st"),
                ("SESSION_ID", "se")
            ]),
            id("prolific", "5f1", Some("st"), Some("se"))
        );
        assert_eq!(
            ids(&[("workerId", "W"), ("hitId", "H"), ("assignmentId", "A")]),
            id("mturk", "W", Some("H"), Some("A"))
        );
        assert_eq!(ids(&[("id", "77")]), id("sona", "77", None, None));
        assert_eq!(ids(&[("pid", "p")]), id("generic", "p", None, None));
        assert_eq!(
            ids(&[("pid", "p"), ("PROLIFIC_PID", "5f1")]),
            id("prolific", "5f1", None, None)
        );
        assert_eq!(
            ids(&[("PROLIFIC_PID", " "), ("pid", "p")]),
            id("generic", "p", None, None)
        );
        assert_eq!(ids(&[("STUDY_ID", "st")]), CrowdIdentity::default());
    }
}
