//! `/studies`: the list of studies, and creation (admins).

use leptos::prelude::*;

use crate::components::layout::CurrentUser;
use crate::components::status::{ErrorBox, Loading};
use crate::study_api::{list_studies, CreateStudy};
use natstudy_types::Role;

#[component]
pub fn StudiesPage() -> impl IntoView {
    let create = ServerAction::<CreateStudy>::new();
    let studies = Resource::new(move || create.version().get(), |_| list_studies());
    let user = expect_context::<CurrentUser>();
    view! {
        <leptos_meta::Title text="Studies" />
        <h1>"Studies"</h1>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                let admin = matches!(user.await, Ok(Some(u)) if u.role == Role::Admin);
                admin.then(|| view! {
                    <section class="card">
                        <h2>"New study"</h2>
                        <ActionForm action=create attr:id="create-study-form" attr:class="row">
                            <input type="text" name="name" placeholder="name" required />
                            <input type="text" name="description" placeholder="description" />
                            <button type="submit">"Create"</button>
                        </ActionForm>
                        {move || create.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
                    </section>
                })
            })}
        </Suspense>
        <Suspense fallback=Loading>
            {move || Suspend::new(async move {
                match studies.await {
                    Ok(rows) if rows.is_empty() => view! { <p class="muted">"No studies yet."</p> }.into_any(),
                    Ok(rows) => view! { <StudyTable rows id="studies" /> }
                        .into_any(),
                    Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// The studies with their headline counts, each linked to its page and its results (beside
/// its name, so that a phone shows both before the table scrolls); on a phone the table
/// scrolls, not the page.
#[component]
pub fn StudyTable(rows: Vec<natstudy_types::StudySummary>, id: &'static str) -> impl IntoView {
    view! {
        <div class="table-scroll" tabindex="0" role="region" aria-label="Studies">
            <table class="grid" id=id>
                <thead>
                    <tr>
                        <th>"Study"</th><th><span class="visually-hidden">"Results"</span></th>
                        <th class="num">"Bugs"</th><th class="num">"Items"</th>
                        <th class="num">"Votes"</th><th class="num">"Annotators"</th><th class="num">"k"</th>
                    </tr>
                </thead>
                <tbody>
                    {rows
                        .into_iter()
                        .map(|s| view! {
                            <tr>
                                <td><a href=format!("/studies/{}", s.id)>{s.name}</a></td>
                                <td><a href=format!("/studies/{}/results", s.id)>"Results"</a></td>
                                <td class="num">{s.bugs}</td>
                                <td class="num">{s.items}</td>
                                <td class="num">{s.votes}</td>
                                <td class="num">{s.annotators}</td>
                                <td class="num">{s.ratings_per_item}</td>
                            </tr>
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
}
