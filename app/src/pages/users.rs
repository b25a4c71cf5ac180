//! Accounts and roles (admins only).

use leptos::prelude::*;

use crate::accounts_api::{list_users, AddUser, ResetUserPassword, SetUserDisabled, SetUserRole};
use crate::components::status::{ErrorBox, Loading};
use natstudy_types::Role;

#[component]
pub fn UsersPage() -> impl IntoView {
    let add = ServerAction::<AddUser>::new();
    let role = ServerAction::<SetUserRole>::new();
    let password = ServerAction::<ResetUserPassword>::new();
    let disable = ServerAction::<SetUserDisabled>::new();
    let users = Resource::new(
        move || {
            (
                add.version().get(),
                role.version().get(),
                password.version().get(),
                disable.version().get(),
            )
        },
        |_| list_users(),
    );
    let outcome = move || {
        let done = |what: &'static str, r: Option<Result<(), ServerFnError>>| match r {
            Some(Ok(())) => Some(view! { <p class="ok" id="user-changed">{what}</p> }.into_any()),
            Some(Err(e)) => Some(view! { <ErrorBox message=e.to_string() /> }.into_any()),
            None => None,
        };
        // the latest action's outcome
        done(
            "Role changed; the account signs in again.",
            role.value().get(),
        )
        .or_else(|| {
            done(
                "Password set; the account signs in again.",
                password.value().get(),
            )
        })
        .or_else(|| done("Account updated.", disable.value().get()))
    };
    let result = move || match add.value().get() {
        Some(Ok(_)) => {
            Some(view! { <p class="ok" id="user-added">"Account added."</p> }.into_any())
        }
        Some(Err(e)) => Some(view! { <ErrorBox message=e.to_string() /> }.into_any()),
        None => None,
    };
    view! {
        <leptos_meta::Title text="Users" />
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
        {outcome}
        <Suspense fallback=Loading>
            {move || Suspend::new(async move {
                match users.await {
                    Ok(rows) => view! {
                        // on a phone each account is a block of its own: its name, then each
                        // form on a line (every control on screen, the page never sideways)
                        <table class="grid stack" id="users">
                            <thead><tr><th>"User"</th><th>"Role"</th><th>"State"</th><th>"New password"</th></tr></thead>
                            <tbody>
                                {rows
                                    .into_iter()
                                    .map(|u| {
                                        let (n_role, n_disable, n_password) =
                                            (u.username.clone(), u.username.clone(), u.username.clone());
                                        view! {
                                        <tr class="user" data-user=u.username.clone()>
                                            <td>{u.username.clone()}</td>
                                            <td>
                                                <ActionForm action=role attr:class="inline role-form">
                                                    <input type="hidden" name="username" value=n_role />
                                                    <label>"Role "
                                                        <select name="role" class="role-select">
                                                            {Role::ALL.into_iter().map(|r| view! { <option value=r.as_str() selected=r == u.role>{r.as_str()}</option> }).collect_view()}
                                                        </select>
                                                    </label>
                                                    <button type="submit" class="secondary">"Change"</button>
                                                </ActionForm>
                                            </td>
                                            <td>
                                                {if u.disabled { "disabled " } else { "active " }}
                                                <ActionForm action=disable attr:class="inline">
                                                    <input type="hidden" name="username" value=n_disable />
                                                    <input type="hidden" name="disabled" value=(!u.disabled).to_string() />
                                                    <button type="submit" class="secondary toggle-disabled">{if u.disabled { "Enable" } else { "Disable" }}</button>
                                                </ActionForm>
                                            </td>
                                            <td>
                                                <ActionForm action=password attr:class="inline">
                                                    <input type="hidden" name="username" value=n_password />
                                                    <label>"Password " <input type="password" name="password" minlength="8" required autocomplete="new-password" /></label>
                                                    <button type="submit" class="secondary">"Set"</button>
                                                </ActionForm>
                                            </td>
                                        </tr>
                                    }})
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
