use leptos::prelude::*;

#[component]
pub fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
        resp.set_status(axum::http::StatusCode::NOT_FOUND);
    }
    view! {
        <leptos_meta::Title text="Not found" />
        <h1>"Not found"</h1>
        <p>"There is no page here. " <a href="/">"Back to the start"</a></p>
    }
}
