//! The study pages: the list, one study's overview and working parts (monitor, settings,
//! uploads, batches, invites, generation, scoring, members) and its results.

use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use natstudy_types::StudyId;

pub mod generate;
pub mod list;
pub mod members;
mod monitor;
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

/// The study of the route (`/studies/:id…`): its id, or 0 (no study) when it does not parse.
fn route_study_id() -> impl Fn() -> StudyId + Copy + 'static {
    let params = use_params_map();
    move || {
        params.with(|p| {
            p.get("id")
                .and_then(|s| s.parse::<StudyId>().ok())
                .unwrap_or(StudyId(0))
        })
    }
}
