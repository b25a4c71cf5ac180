//! The frame of every page: header with navigation, the signed-in user and sign-out.

use leptos::prelude::*;

use crate::accounts_api::{whoami, Logout};
use natstudy_types::Role;

/// The current user, loaded once per page and shared with every page through context.
pub type CurrentUser = Resource<Result<Option<natstudy_types::User>, ServerFnError>>;

#[component]
pub fn Layout(children: Children) -> impl IntoView {
    // Re-read on every navigation: signing in or out navigates, and a session may expire.
    let location = leptos_router::hooks::use_location();
    let user: CurrentUser = Resource::new(move || location.pathname.get(), |_| whoami());
    provide_context(user);
    let logout = ServerAction::<Logout>::new();

    // Set only in the browser, once hydration has run: tests look for it.
    let (hydrated, set_hydrated) = signal(false);
    Effect::new(move |_| set_hydrated.set(true));
    let (menu_open, set_menu_open) = signal(false);

    view! {
        <header class="topbar">
            <a class="brand" href="/">"natstudy"</a>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    match user.await {
                        Ok(Some(u)) => {
                            let staff = u.role.is_staff();
                            let admin = u.role == Role::Admin;
                            view! {
                                <nav class="nav">
                                    <button
                                        id="menu-toggle"
                                        class="linklike"
                                        type="button"
                                        aria-expanded=move || menu_open.get().to_string()
                                        on:click=move |_| set_menu_open.update(|o| *o = !*o)
                                    >
                                        {move || if menu_open.get() { "Close menu" } else { "Menu" }}
                                    </button>
                                    <div class="menu" class:open=move || menu_open.get()>
                                        <a href="/">"Home"</a>
                                        {staff.then(|| view! { <a href="/studies">"Studies"</a> })}
                                        {admin.then(|| view! { <a href="/admin/users">"Users"</a> })}
                                    </div>
                                    <span class="who" id="who">
                                        {u.username.clone()} " (" {u.role.as_str()} ")"
                                    </span>
                                    <ActionForm action=logout attr:class="inline">
                                        <button type="submit" id="logout">"Sign out"</button>
                                    </ActionForm>
                                </nav>
                            }
                                .into_any()
                        }
                        _ => view! { <nav class="nav"><a href="/login">"Sign in"</a></nav> }.into_any(),
                    }
                })}
            </Suspense>
        </header>
        <main class="page">{children()}</main>
        <footer class="footer">
            <span id="hydrated" class="offscreen" aria-hidden="true" data-hydrated=move || hydrated.get().to_string()>
                {move || if hydrated.get() { "interactive" } else { "static" }}
            </span>
        </footer>
    }
}
