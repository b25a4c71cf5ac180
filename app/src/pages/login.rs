//! The sign-in form. Works without JavaScript (a plain form post) and with it.

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use crate::accounts_api::Login;
use crate::components::status::ErrorBox;

#[component]
pub fn LoginPage() -> impl IntoView {
    let login = ServerAction::<Login>::new();
    let query = use_query_map();
    let next = move || query.with(|q| q.get("next").unwrap_or_else(|| "/".to_owned()));
    let error = move || {
        login
            .value()
            .get()
            .and_then(|r| r.err())
            .map(|e| view! { <ErrorBox message=e.to_string() /> })
    };
    view! {
        <leptos_meta::Title text="Sign in" />
        <section class="card narrow">
            <h1>"Sign in"</h1>
            <ActionForm action=login attr:id="login-form">
                <input type="hidden" name="next" value=next />
                <label>
                    "Username"
                    <input type="text" name="username" id="username" autocomplete="username" required />
                </label>
                <label>
                    "Password"
                    <input
                        type="password"
                        name="password"
                        id="password"
                        autocomplete="current-password"
                        required
                    />
                </label>
                <button type="submit" id="login-submit">"Sign in"</button>
            </ActionForm>
            {error}
        </section>
    }
}
