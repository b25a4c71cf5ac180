//! Studies as their staff see them: lists, the overview, settings, participants, batches, invites, the monitor and the results.

use serde::{Deserialize, Serialize};

use crate::{AnnotatorId, BatchId, InviteId, StudyId};

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
    /// Its items with all k ratings.
    #[serde(default)]
    pub complete: i64,
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
    /// A designed study's units and their answers (`None`: a naturalness study).
    #[serde(default)]
    pub units: Option<UnitsProgress>,
}

/// A designed study's units: how many, how many have all k answers, the answers in all
/// (of counted participants).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitsProgress {
    pub units: i64,
    pub complete: i64,
    pub answered: i64,
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
    /// Every vote of the study.
    pub votes: i64,
    /// The votes the figures count: those on items with all k ratings, from participants
    /// not excluded (the headline's "votes").
    pub analysed_votes: i64,
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
