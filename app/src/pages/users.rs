//! Accounts and roles (admins only).

use leptos::prelude::*;

use crate::api::{list_users, AddUser};
use crate::components::status::{ErrorBox, Loading};
use crate::model::Role;

#[component]
pub fn UsersPage() -> impl IntoView {
    let add = ServerAction::<AddUser>::new();
    let users = Resource::new(move || add.version().get(), |_| list_users());
    let result = move || match add.value().get() {
        Some(Ok(_)) => {
            Some(view! { <p class="ok" id="user-added">"Account added."</p> }.into_any())
        }
        Some(Err(e)) => Some(view! { <ErrorBox message=e.to_string() /> }.into_any()),
        None => None,
    };
    view! {
        <h1>"Users"</h1>
        <section class="card">
            <h2>"Add an account"</h2>
            <ActionForm action=add attr:id="add-user-form" attr:class="row">
                <input type="text" name="username" placeholder="username" required />
                <input type="password" name="password" placeholder="password (8+ characters)" required minlength="8" />
                <label>"Role "
                    <select name="role" id="new-role">
                        // least privilege first and chosen: an admin picks more on purpose
                        {[Role::Annotator, Role::Researcher, Role::Admin]
                            .into_iter()
                            .map(|r| view! { <option value=r.as_str() selected=r == Role::Annotator>{r.as_str()}</option> })
                            .collect_view()}
                    </select>
                </label>
                <button type="submit">"Add"</button>
            </ActionForm>
            {result}
        </section>
        <Suspense fallback=Loading>
            {move || Suspend::new(async move {
                match users.await {
                    Ok(rows) => view! {
                        <table class="grid" id="users">
                            <thead><tr><th>"User"</th><th>"Role"</th><th>"State"</th></tr></thead>
                            <tbody>
                                {rows
                                    .into_iter()
                                    .map(|u| view! {
                                        <tr>
                                            <td>{u.username}</td>
                                            <td>{u.role.as_str()}</td>
                                            <td>{if u.disabled { "disabled" } else { "active" }}</td>
                                        </tr>
                                    })
                                    .collect_view()}
                            </tbody>
                        </table>
                    }
                        .into_any(),
                    Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                }
            })}
        </Suspense>
    }
}
