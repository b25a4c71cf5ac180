//! The start page: what the signed-in user can do next.

use leptos::prelude::*;

use crate::components::layout::CurrentUser;
use crate::model::Role;

/// Links to the studies the account annotates in.
#[component]
fn MyStudies() -> impl IntoView {
    let mine = Resource::new(|| (), |_| crate::study_api::my_studies());
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match mine.await {
                    Ok(list) if list.is_empty() => view! { <p>"No study has assigned you items yet."</p> }.into_any(),
                    Ok(list) => view! {
                        <ul class="tasks" id="my-studies">
                            {list
                                .into_iter()
                                .map(|(id, name)| view! { <li><a href=format!("/annotate/{id}")>{name}</a></li> })
                                .collect_view()}
                        </ul>
                    }
                    .into_any(),
                    Err(e) => view! { <crate::components::status::ErrorBox message=e.to_string() /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
pub fn HomePage() -> impl IntoView {
    let user = expect_context::<CurrentUser>();
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
                            Role::Annotator => view! { <MyStudies /> }.into_any(),
                        };
                        view! {
                            <h1 id="welcome">"Welcome, " {u.username.clone()}</h1>
                            {tasks}
                        }
                            .into_any()
                    }
                    Ok(None) => view! {
                        <h1>"natstudy"</h1>
                        <p>
                            "Human studies of the naturalness of code transformations. "
                            <a href="/login">"Sign in"</a> " to continue."
                        </p>
                    }
                        .into_any(),
                    Err(e) => view! { <crate::components::status::ErrorBox message=e.to_string() /> }.into_any(),
                }
            })}
        </Suspense>
    }
}
