//! The participant's survey: invites, crowd identities, the screener, the steps and how the work ended.

use serde::{Deserialize, Serialize};

use crate::{ItemId, ItemView, StudyId};

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
    /// A designed study's unit: its snippets and the design's questions.
    Answer(Box<crate::UnitView>),
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
        /// Nothing rated and no item comes because the participant let the items held for
        /// them lapse without an answer (they went back to others): the page says that, not
        /// that the study is full.
        #[serde(default)]
        hold_lapsed: bool,
        /// A designed study's participant: what they answered is units (`units`, not `rated`).
        #[serde(default)]
        designed: bool,
        /// A designed study's units the participant answered (the attention checks aside),
        /// in the order answered, each with a link to revise it.
        #[serde(default)]
        units: Vec<crate::AnsweredUnit>,
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
