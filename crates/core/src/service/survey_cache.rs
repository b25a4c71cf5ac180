//! What the survey reads on every request and that never changes once written, kept per
//! server: the study an annotator belongs to, each item as it is shown, where an invite leads.

use std::sync::Arc;

use super::memo::Memo;
use crate::store::Db;
use crate::store::{self, StoreError};
use natstudy_vocab::ids::{AnnotatorId, ItemId, StudyId};

/// What the survey reads on every page and that never changes once written, kept per server
/// (per database): which study an annotator belongs to, each item as it is shown (items,
/// their bugs and projects are never rewritten or deleted in the shown fields; an annotator
/// never moves to another study), and where an invite link leads (its study, batch and
/// purpose; whether it is still open is the join's own check). A cache hit saves a database
/// round trip per request. Each value holds its own key, checked on every hit: the memo's
/// 64-bit fingerprints never decide who belongs to a study, which study's item is shown or
/// where a token leads.
pub struct SurveyCache {
    members: Memo<(AnnotatorId, StudyId)>,
    items: Memo<(StudyId, store::survey::ItemForDisplay)>,
    invites: Memo<store::invites::InviteRef>,
}

impl Default for SurveyCache {
    fn default() -> Self {
        SurveyCache {
            // ~100 bytes an entry: some 80,000 participants
            members: Memo::new(8 << 20),
            items: Memo::new(64 << 20),
            // ~200 bytes an entry; only tokens that exist are kept
            invites: Memo::new(2 << 20),
        }
    }
}

impl std::fmt::Debug for SurveyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SurveyCache")
            .field("members", &self.members.usage())
            .field("items", &self.items.usage())
            .field("invites", &self.invites.usage())
            .finish()
    }
}

impl SurveyCache {
    /// The annotator of `study` that the session's participant or account is (as
    /// `store::invites::annotator_in`), a known participant without a read.
    pub async fn annotator_in(
        &self,
        db: &Db,
        study: StudyId,
        participant: Option<AnnotatorId>,
        user: Option<natstudy_vocab::ids::UserId>,
    ) -> Result<Option<AnnotatorId>, StoreError> {
        let key = participant.map(|p| (p, study));
        let fingerprint = key.map(|k| self.members.key(k));
        if fingerprint
            .and_then(|f| self.members.get_if(f, |held| Some(*held) == key))
            .is_some()
        {
            return Ok(participant);
        }
        let found = store::invites::annotator_in(db, study, participant, user).await?;
        if let (Some(f), Some(k)) = (fingerprint, key.filter(|_| found == participant)) {
            self.members.get_or(f, 100, || k);
        }
        Ok(found)
    }

    /// Where an invite link leads (as `store::invites::invite_ref`), a known token
    /// without a read.
    pub async fn invite(
        &self,
        db: &Db,
        token: &str,
    ) -> Result<Option<Arc<store::invites::InviteRef>>, StoreError> {
        let key = self.invites.key(token);
        self.invites
            .get_or_load(
                key,
                |held| held.token == token,
                |found| 200 + found.token.len(),
                || store::invites::invite_ref(db, token),
            )
            .await
    }

    /// The item as the rating page shows it (read once, then from memory).
    pub(super) async fn item(
        &self,
        db: &Db,
        study: StudyId,
        item: ItemId,
    ) -> Result<Arc<(StudyId, store::survey::ItemForDisplay)>, StoreError> {
        let key = self.items.key((study, item));
        let held = self
            .items
            .get_or_load(
                key,
                |held| held.0 == study && held.1.id == item.0,
                |(_, it)| {
                    256 + [
                        &it.summary,
                        &it.operator,
                        &it.source,
                        &it.bug_key,
                        &it.bug_source,
                        &it.file_path,
                        &it.method,
                        &it.project,
                    ]
                    .iter()
                    .map(|s| s.len())
                    .sum::<usize>()
                        + it.file_source.as_ref().map_or(0, String::len)
                        + 4 * (it.buggy_lines.len()
                            + it.transformed_buggy_lines.as_ref().map_or(0, Vec::len))
                },
                || async {
                    store::survey::item_for_display(db, study, item)
                        .await
                        .map(|it| Some((study, it)))
                },
            )
            .await?;
        held.ok_or_else(|| StoreError::NotFound(format!("item {item}")))
    }
}
