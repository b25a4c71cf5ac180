//! Small shared pieces: loading and error displays.

use leptos::prelude::*;

/// An error message as the pages show it.
#[component]
pub fn ErrorBox(message: String) -> impl IntoView {
    let text = message
        .strip_prefix("error running server function: ")
        .unwrap_or(&message)
        .to_owned();
    #[cfg(feature = "hydrate")]
    leptos::logging::warn!("natstudy: {text}");
    view! { <p class="error" role="alert">{text}</p> }
}

/// What a page shows while its data loads.
#[component]
pub fn Loading() -> impl IntoView {
    view! { <p class="muted">"Loading…"</p> }
}
