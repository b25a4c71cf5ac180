//! The study page's members panel: who may see and act on the study. Admins add and remove
//! members; researchers see the list. (Admins reach every study without being members.)

use leptos::prelude::*;

use crate::components::status::ErrorBox;
use crate::study_api::{get_members, AddMember, RemoveMember};
use natstudy_types::StudyId;

#[component]
pub fn Members(study: StudyId) -> impl IntoView {
    let user = expect_context::<crate::components::layout::CurrentUser>();
    let add = ServerAction::<AddMember>::new();
    let remove = ServerAction::<RemoveMember>::new();
    let members = Resource::new(
        move || (add.version().get(), remove.version().get()),
        move |_| get_members(study),
    );
    view! {
        <section class="card" id="members">
            <h2>"Members"</h2>
            <p class="muted">"Researchers see and work on the studies they are members of; admins on every study."</p>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    let admin = matches!(user.await, Ok(Some(u)) if u.role == natstudy_types::Role::Admin);
                    match members.await {
                        Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                        Ok(list) => view! {
                            <table class="grid" id="member-list">
                                <thead><tr><th>"Account"</th><th>"Standing"</th><th><span class="visually-hidden">"Remove"</span></th></tr></thead>
                                <tbody>
                                    {list.into_iter().map(|(name, role)| view! {
                                        <tr>
                                            <td class="member-name">{name.clone()}</td>
                                            <td>{role}</td>
                                            <td>{admin.then(|| view! {
                                                <ActionForm action=remove attr:class="inline">
                                                    <input type="hidden" name="study" value=study.get() />
                                                    <input type="hidden" name="username" value=name.clone() />
                                                    <button type="submit" class="member-remove">"Remove"</button>
                                                </ActionForm>
                                            })}</td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                            {admin.then(|| view! {
                                <ActionForm action=add attr:id="member-form" attr:class="row">
                                    <input type="hidden" name="study" value=study.get() />
                                    <label>"Account "<input type="text" name="username" id="member-username" required /></label>
                                    <label>"Standing "
                                        <select name="role" id="member-role">
                                            <option value="member">"member"</option>
                                            <option value="owner">"owner"</option>
                                        </select>
                                    </label>
                                    <button type="submit" id="member-add">"Add member"</button>
                                </ActionForm>
                            })}
                        }.into_any(),
                    }
                })}
            </Transition>
            {move || add.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
            {move || remove.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
        </section>
    }
}
