//! The start page: what the signed-in user can do next.

use leptos::prelude::*;

use crate::components::layout::CurrentUser;
use crate::model::Role;

#[component]
pub fn HomePage() -> impl IntoView {
    let user = expect_context::<CurrentUser>();
    view! {
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
                            Role::Annotator => view! {
                                <p>"Your annotation batches appear here once a study assigns them."</p>
                            }
                                .into_any(),
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
