//! Who a join or a resume code finds.

use natstudy_vocab::ids::{AnnotatorId, StudyId};

/// A participant as a join or a resume code finds them: who, in which study, and whether they
/// came for the patch review (a review-only invite) rather than the survey.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub annotator: AnnotatorId,
    pub study: StudyId,
    pub review: bool,
}

impl Entry {
    /// The page the participant continues on.
    pub fn page(&self) -> String {
        if self.review {
            format!("/studies/{}/review", self.study)
        } else {
            format!("/annotate/{}", self.study)
        }
    }
}
