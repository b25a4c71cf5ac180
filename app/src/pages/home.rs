//! The start page: what the signed-in user can do next, and the studies they work on.

use leptos::prelude::*;

use crate::components::layout::CurrentUser;
use crate::components::status::ErrorBox;
use crate::pages::study::list::StudyTable;
use natstudy_types::{HomeStudies, MyStudy, Role};

/// Links to the studies the account (or this browser's participant) rates in, each with how
/// far it is there. `empty` is said when there are none (to an annotator account; staff and
/// visitors are told nothing).
#[component]
fn MyStudies(list: Vec<MyStudy>, empty: Option<&'static str>) -> impl IntoView {
    if list.is_empty() {
        return match empty {
            Some(text) => view! { <p id="my-studies-none">{text}</p> }.into_any(),
            None => ().into_any(),
        };
    }
    let (heading, hint) = match list.as_slice() {
        [one] if one.finished => ("Your study", "Thank you for taking part."),
        [_] => ("Your study", "Continue rating its items."),
        _ => ("Your studies", "Choose a study to rate its items."),
    };
    view! {
        <h2>{heading}</h2>
        <p class="muted">{hint}</p>
        <ul class="tasks" id="my-studies">
            {list
                .into_iter()
                .map(|s| view! {
                    <li>
                        <a href=format!("/annotate/{}", s.id)>{s.name}</a>
                        <div class="muted">{standing(s.rated, s.total, s.finished)}</div>
                    </li>
                })
                .collect_view()}
        </ul>
    }
    .into_any()
}

/// How far an annotator is in a study: "7 of 15 rated", "finished: 15 rated".
fn standing(rated: i64, total: i64, finished: bool) -> String {
    if finished {
        format!("finished: {rated} rated")
    } else if total == 0 {
        "no items for you yet".into()
    } else {
        format!("{rated} of {total} rated")
    }
}

/// The studies a staff account works on, with their counts and a way to their results.
#[component]
fn StaffStudies(rows: Vec<natstudy_types::StudySummary>) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="muted" id="home-no-studies">"No studies yet."</p> }.into_any();
    }
    view! {
        // an admin's are all the studies; a researcher's those they own or are a member of
        <h2>"Studies"</h2>
        <StudyTable rows id="home-studies" />
    }
    .into_any()
}

/// A visitor's way in: the study of the participant this browser joined as, first, when there
/// is one; then signing in, and the resume code (for one who lost the invite link, or who
/// started on another device).
#[component]
fn VisitorStart(rating: Vec<MyStudy>) -> impl IntoView {
    let taking_part = !rating.is_empty();
    view! {
        <MyStudies list=rating empty=None />
        {if taking_part {
            view! { <p>"Organising a study? " <a href="/login">"Sign in"</a> "."</p> }.into_any()
        } else {
            view! { <p><a href="/login">"Sign in"</a> " to continue."</p> }.into_any()
        }}
        <p>
            "Taking part with a resume code? "
            <a href="/resume" id="home-resume">"Continue where you left off"</a> "."
        </p>
    }
}

#[component]
pub fn HomePage() -> impl IntoView {
    let user = expect_context::<CurrentUser>();
    // made here, outside any Suspend: a resource made inside one does not hydrate reliably
    let studies = Resource::new(|| (), |_| crate::study_api::start_studies());
    view! {
        <leptos_meta::Title text="Home" />
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match user.await {
                    Ok(Some(u)) => {
                        let tasks = match u.role {
                            Role::Admin => view! {
                                <ul class="tasks">
                                    <li><a href="/studies">"Studies: create, import, monitor"</a></li>
                                    <li><a href="/admin/users">"Users and roles"</a></li>
                                </ul>
                            }
                                .into_any(),
                            Role::Researcher => view! {
                                <ul class="tasks">
                                    <li><a href="/studies">"Studies and their results"</a></li>
                                </ul>
                            }
                                .into_any(),
                            Role::Annotator => ().into_any(),
                        };
                        view! {
                            <h1 id="welcome">"Welcome, " {u.username.clone()}</h1>
                            {tasks}
                        }
                            .into_any()
                    }
                    Ok(None) => view! {
                        <h1>"natstudy"</h1>
                        <p>"Human studies of the naturalness of code transformations."</p>
                    }
                        .into_any(),
                    Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                }
            })}
        </Suspense>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match studies.await {
                    Ok(HomeStudies { staff: Some(rows), rating }) => view! {
                        <StaffStudies rows />
                        // staff may be given items to rate as well
                        <MyStudies list=rating empty=None />
                    }
                        .into_any(),
                    Ok(HomeStudies { staff: None, rating }) => match user.await {
                        Ok(Some(_)) => {
                            let empty = Some("No study has assigned you items yet.");
                            view! { <MyStudies list=rating empty /> }.into_any()
                        }
                        _ => view! { <VisitorStart rating /> }.into_any(),
                    },
                    Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[cfg(test)]
mod tests {
    use super::standing;

    #[test]
    fn an_annotators_standing_in_a_study() {
        assert_eq!(standing(0, 15, false), "0 of 15 rated");
        assert_eq!(standing(7, 15, false), "7 of 15 rated");
        assert_eq!(standing(0, 0, false), "no items for you yet");
        assert_eq!(standing(15, 15, true), "finished: 15 rated");
        assert_eq!(standing(0, 0, true), "finished: 0 rated");
    }
}
