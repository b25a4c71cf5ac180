//! The study pages: the list, one study's overview and working parts (monitor, settings,
//! uploads, batches, invites, generation, scoring, members) and its results.

use leptos::prelude::*;

pub mod generate;
pub mod list;
pub mod members;
pub mod overview;
pub mod results;
pub mod scoring;
pub mod work;

/// Moves on when the study's items change on this page (an import, generated items added), so
/// the study's summary (the header tiles) reloads.
#[derive(Debug, Clone, Copy)]
pub struct StudyChanged(RwSignal<u32>);

impl StudyChanged {
    pub fn bump(self) {
        self.0.update(|n| *n += 1);
    }
}
