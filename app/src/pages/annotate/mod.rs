//! The participant's survey: consent and screener, the guideline, rating item by item with a
//! diff and the project context, revision, finishing. Works as plain forms without JavaScript;
//! with it, the keyboard drives everything and time on item is measured in the browser.

mod answer;
mod changes;
mod diff;
mod keys;
mod rate;
mod rate_browser;
mod steps;

use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_params_map, use_query_map};

pub use changes::{show_change, where_changed};
pub use diff::DiffTable;

use crate::annotate_api::{
    get_annotate_state, invite_status, FinishStudy, GiveConsent, JoinStudy, ResumeParticipant,
    StartRating, SubmitAnswers, SubmitVote,
};
use crate::components::refresh::Refresh;
use crate::components::status::{ErrorBox, Loading};
use natstudy_types::{AnnotateState, AnnotateStep, InviteStatus, ItemId, StudyId};
use rate::Rate;
use steps::{Consent, GuidelineStep, Review, Thanks};

/// `/resume`: continue as the same participant on another device, with the resume code the
/// survey shows.
#[component]
pub fn ResumePage() -> impl IntoView {
    let resume = ServerAction::<ResumeParticipant>::new();
    view! {
        <leptos_meta::Title text="Continue with a resume code" />
        <section class="card narrow">
            <h1>"Continue where you left off"</h1>
            <p>"Enter the resume code the survey showed you (two groups of five letters and digits) to continue as the same participant on this device."</p>
            <ActionForm action=resume attr:id="resume-form">
                <label for="resume-input">"Resume code"</label>
                <input type="text" name="code" id="resume-input" required autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="20" placeholder="K3M9Q-X2P7A" />
                <button type="submit" id="resume-submit">"Continue"</button>
            </ActionForm>
            {move || resume.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
        </section>
    }
}

/// `/join/:token`: the invite landing page.
#[component]
pub fn JoinPage() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let join = ServerAction::<JoinStudy>::new();
    let token = move || params.with(|p| p.get("token").unwrap_or_default());
    // the crowd platform's ids the link carries (Prolific, MTurk, SONA, a generic pid)
    let identity = move || query.with(|q| natstudy_types::CrowdIdentity::from_query(|k| q.get(k)));
    let pid = move || identity().pid.unwrap_or_default();
    let platform = move || identity().platform.unwrap_or_default();
    let ext_study = move || identity().study.unwrap_or_default();
    let ext_session = move || identity().session.unwrap_or_default();
    // say at once whether the link works, before anyone clicks "Take part"
    let status = Resource::new(
        move || (token(), identity()),
        |(token, identity)| invite_status(token, Some(identity)),
    );
    view! {
        <leptos_meta::Title text="Invitation" />
        <section class="card narrow">
            <h1>"Welcome"</h1>
            <Suspense fallback=Loading>
                {move || Suspend::new(async move {
                    match status.await {
                        Ok(InviteStatus::Open { study, continuing, finished, review }) => view! {
                            {if review {
                                view! { <p>"You were invited to review repair tools' patches for the study " <b id="invite-study">{study}</b> ": for each patch, say whether it is equivalent to the developer's fix."</p> }.into_any()
                            } else {
                                view! { <p>"You were invited to the study " <b id="invite-study">{study}</b> ", on how developers read transformed Java code."</p> }.into_any()
                            }}
                            {match (continuing, finished) {
                                (true, true) => Some(view! { <p id="invite-continuing">"You have finished this study: the button shows your answers and completion code again."</p> }.into_any()),
                                (true, false) => Some(view! { <p id="invite-continuing">"You already take part: you continue where you left off."</p> }.into_any()),
                                _ => None,
                            }}
                            <ActionForm action=join attr:id="join-form">
                                // attributes, not properties: the server renders them, and the
                                // form works before the page is interactive (a slow link)
                                <input type="hidden" name="token" value=token />
                                <input type="hidden" name="pid" value=pid />
                                <input type="hidden" name="platform" value=platform />
                                <input type="hidden" name="ext_study" value=ext_study />
                                <input type="hidden" name="ext_session" value=ext_session />
                                <button type="submit" id="join">{if continuing { "Continue" } else { "Take part" }}</button>
                            </ActionForm>
                            <p class="muted">"Started on another device? " <a href="/resume" id="resume-link">"Continue with your resume code"</a>"."</p>
                        }.into_any(),
                        Ok(InviteStatus::Closed) => view! {
                            <p class="error" id="invite-invalid">"This invite link was closed by the study's organisers. If you already take part, continue with your resume code."</p>
                            <p><a href="/resume">"Continue with a resume code"</a></p>
                        }.into_any(),
                        Ok(InviteStatus::Full) => view! {
                            <p class="error" id="invite-invalid">"This study is full: every item already has all the ratings it needs, so there is nothing left to rate. Thank you for your interest."</p>
                        }.into_any(),
                        Ok(InviteStatus::UsedUp) => view! {
                            <p class="error" id="invite-invalid">"This invite link has been used up: every place it offered is taken. If you already take part, open the link your platform gives you (it carries your participant id) or continue with your resume code; otherwise ask the study's organisers for a new link."</p>
                            <p><a href="/resume" id="resume-link">"Continue with a resume code"</a></p>
                        }.into_any(),
                        Ok(InviteStatus::Unknown) => view! {
                            <p class="error" id="invite-invalid">"This invite link is not valid. Check that you copied the whole link, or ask the study's organisers for a new one."</p>
                        }.into_any(),
                        Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                    }
                })}
            </Suspense>
            {move || join.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
        </section>
    }
}

/// Whether a refused request says the session no longer names the participant.
pub(super) fn session_lost(e: &ServerFnError) -> bool {
    e.to_string()
        .contains(crate::annotate_api::NOT_A_PARTICIPANT)
}

/// The survey after the session ended (idle too long, or cookies cleared), as a vote or a
/// page meets it: the unsent answer stays in this browser (its draft and time), the resume code
/// continues the participant here, and the page then reloads onto the same item with the
/// answer back.
#[component]
fn SessionLost() -> impl IntoView {
    let resume = ServerAction::<ResumeParticipant>::new();
    // back on the survey: a reload brings the item, its kept answer and time
    Effect::watch(
        move || resume.version().get(),
        move |_, _, _| {
            if matches!(resume.value().get_untracked(), Some(Ok(()))) {
                #[cfg(feature = "hydrate")]
                let _ = window().location().reload();
            }
        },
        false,
    );
    view! {
        <section class="card narrow" id="session-lost" role="alert">
            <h2>"Your session has ended"</h2>
            <p>"Your answer was not sent: it is kept in this browser. Enter your resume code (shown at the top of the survey, like "
               <code>"K3M9Q-X2P7A"</code> ") to continue: you come back to this item with your answer, and send it then."</p>
            <ActionForm action=resume attr:id="session-resume-form">
                <label for="session-resume-input">"Resume code"</label>
                <input type="text" name="code" id="session-resume-input" required autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="20" placeholder="K3M9Q-X2P7A" />
                <button type="submit" id="session-resume-submit">"Continue"</button>
            </ActionForm>
            {move || resume.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
            <p class="muted">"No resume code? Open the invite link you were given again, in this browser."</p>
        </section>
    }
}

/// The `page` query parameter, read without tracking it.
fn page_untracked(query: &Memo<leptos_router::params::ParamsMap>) -> Option<u32> {
    query.with_untracked(|q| q.get("page").and_then(|s| s.parse::<u32>().ok()))
}

/// `/annotate/:study`
#[component]
pub fn AnnotatePage() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let study = move || {
        params.with(|p| {
            p.get("study")
                .and_then(|s| s.parse::<StudyId>().ok())
                .unwrap_or(StudyId(0))
        })
    };
    let revise = move || query.with(|q| q.get("revise").and_then(|s| s.parse::<ItemId>().ok()));
    // a designed study's unit to revise: the participant's claim on it
    let revise_unit = move || query.with(|q| q.get("unit").and_then(|s| s.parse::<i64>().ok()));
    // the page of the rated items' list (from 1), kept while one of them is revised
    let page = move || query.with(|q| q.get("page").and_then(|s| s.parse::<u32>().ok()));
    let vote = ServerAction::<SubmitVote>::new();
    let answer = ServerAction::<SubmitAnswers>::new();
    let consent = ServerAction::<GiveConsent>::new();
    let start = ServerAction::<StartRating>::new();
    let finish = ServerAction::<FinishStudy>::new();
    // a participant waiting for items held by others: the state is read again 15 s after each
    // answer (`polls` counts the ticks that came while waiting)
    let refresh = Refresh::after(std::time::Duration::from_secs(15));
    let (waiting, set_waiting) = signal(false);
    let (polls, set_polls) = signal(0u32);
    Effect::watch(
        move || refresh.tick(),
        move |_, _, _| {
            if waiting.get_untracked() {
                set_polls.update(|p| *p = p.wrapping_add(1));
            }
        },
        false,
    );
    // the vote version whose answer was last shown: a vote's answer carries the next state,
    // so the page asks for it only when that answer did not (or after the other steps)
    let shown_vote = StoredValue::new(0usize);
    let shown_answer = StoredValue::new(0usize);
    let state = Resource::new(
        move || {
            (
                study(),
                (revise(), revise_unit()),
                page(),
                vote.version().get(),
                answer.version().get(),
                consent.version().get(),
                start.version().get(),
                finish.version().get(),
                polls.get(),
            )
        },
        move |(s, (r, u), p, v, a, ..)| {
            let carried = (r.is_none() && v != shown_vote.get_value())
                .then(|| vote.value().get_untracked())
                .flatten()
                .and_then(|answer| answer.ok().flatten());
            shown_vote.set_value(v);
            // a unit's answer carries the next state as a vote's does
            let carried = carried.or_else(|| {
                (a != shown_answer.get_value())
                    .then(|| answer.value().get_untracked())
                    .flatten()
                    .and_then(|given| given.ok().flatten())
            });
            shown_answer.set_value(a);
            async move {
                let state = refresh
                    .read(async move {
                        match carried {
                            Some(next) => Ok(next),
                            None => get_annotate_state(s, r, p, u).await,
                        }
                    })
                    .await;
                set_waiting.set(matches!(
                    &state,
                    Ok(AnnotateState {
                        step: AnnotateStep::Review {
                            waiting: Some(_),
                            ..
                        },
                        ..
                    })
                ));
                state
            }
        },
    );
    // after a revision is saved, go back to the queue
    let navigate = use_navigate();
    Effect::watch(
        move || vote.version().get(),
        move |_, _, _| {
            let saved = matches!(vote.value().get_untracked(), Some(Ok(_)));
            if saved && query.with_untracked(|q| q.get("revise").is_some()) {
                let s = params.with_untracked(|p| p.get("study").unwrap_or_default());
                // back to the page of the list the revised item was on
                match page_untracked(&query) {
                    Some(p) => navigate(&format!("/annotate/{s}?page={p}"), Default::default()),
                    None => navigate(&format!("/annotate/{s}"), Default::default()),
                }
            }
        },
        false,
    );
    let (show_guideline, set_show_guideline) = signal(false);
    // Transition keeps the current step on screen while the next one loads.
    view! {
        <leptos_meta::Title text="Survey" />
        <Transition fallback=Loading>
            {move || Suspend::new(async move {
                match state.await {
                    Ok(s) => view! { <Survey s vote answer consent start finish show_guideline set_show_guideline /> }.into_any(),
                    Err(e) if session_lost(&e) => view! { <SessionLost /> }.into_any(),
                    Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn Survey(
    s: AnnotateState,
    vote: ServerAction<SubmitVote>,
    answer: ServerAction<SubmitAnswers>,
    consent: ServerAction<GiveConsent>,
    start: ServerAction<StartRating>,
    finish: ServerAction<FinishStudy>,
    show_guideline: ReadSignal<bool>,
    set_show_guideline: WriteSignal<bool>,
) -> impl IntoView {
    let study = s.study;
    let pct = if s.total > 0 {
        s.done * 100 / s.total
    } else {
        0
    };
    let guideline = s.guideline_html.clone();
    let header = view! {
        <header class="survey-head">
            <div>
                <b id="study-title">{s.study_name.clone()}</b>
                <span class="muted">" · participant " {s.code.clone()}</span>
                {s.resume_code.clone().map(|c| view! {
                    <div class="resume muted" title="To continue on another device, open /resume there and enter this code">
                        "Resume code " <code id="resume-code">{c}</code> " · continue on another device at " <a href="/resume">"/resume"</a>
                    </div>
                })}
            </div>
            <div class="progress">
                <span id="progress">{s.done} " / " {s.total}</span>
                <progress max="100" value=pct></progress>
            </div>
            <button type="button" class="secondary" id="guideline-toggle" on:click=move |_| set_show_guideline.update(|v| *v = !*v)>
                "Guideline"<span class="key-name">" (g)"</span>
            </button>
        </header>
        <section class="card guideline" id="guideline" class:hidden=move || !show_guideline.get()>
            <div inner_html=guideline.clone()></div>
        </section>
    };
    let notice = s
        .notice
        .clone()
        .map(|n| view! { <p class="notice" id="attention-notice" role="alert">{n}</p> });
    let body = match s.step {
        AnnotateStep::Consent { text, screener } => {
            view! { <Consent study text screener consent /> }.into_any()
        }
        AnnotateStep::Guideline => {
            view! { <GuidelineStep study guideline_html=s.guideline_html start /> }.into_any()
        }
        AnnotateStep::Rate(item) => {
            view! { <Rate study item=*item vote set_show_guideline /> }.into_any()
        }
        AnnotateStep::Answer(unit) => {
            // a new unit is a new form (keyed by its claim): what was typed, ticked or chosen
            // for the last unit is never carried into the next; the same unit again (an answer
            // refused) keeps what was given
            let key = (unit.claim, unit.revising);
            let unit = *unit;
            view! {
                <For each=move || [key] key=|c| *c let:_key>
                    <answer::AnswerUnit study unit=unit.clone() answer />
                </For>
            }
            .into_any()
        }
        AnnotateStep::Review {
            rated,
            page,
            pages,
            before,
            total,
            waiting,
            required,
            hold_lapsed,
            designed,
            units,
        } => view! { <Review study rated page pages before total waiting required hold_lapsed designed units finish /> }
            .into_any(),
        AnnotateStep::Finished {
            completion_code,
            rated,
            min_rated,
            has_code,
            outcome,
            redirect,
        } => view! { <Thanks completion_code rated min_rated has_code outcome redirect /> }
            .into_any(),
    };
    view! { {header} {notice} {body} }
}
