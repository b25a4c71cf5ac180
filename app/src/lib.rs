//! natstudy's user interface: Leptos components, pages, wire types and server functions.
//!
//! Compiles for `ssr` (inside the `natstudy` server) and `hydrate` (wasm32, in the browser).
//! It never touches a database: server functions reach the domain through
//! `natstudy_types::backend::Backend`, which the server provides as context.

pub mod accounts_api;
pub mod annotate_api;
#[cfg(feature = "ssr")]
pub mod auth;
#[cfg_attr(feature = "participant", allow(dead_code))]
mod components;
pub mod highlight;
#[cfg_attr(feature = "participant", allow(dead_code))]
mod pages;
pub mod review_api;
pub mod study_api;
pub mod text;
pub mod timing;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Title};
use leptos_router::components::{Route, Router, Routes};
use leptos_router::path;
use leptos_router::SsrMode;

use crate::components::layout::Layout;
use crate::pages::annotate::{AnnotatePage, JoinPage, ResumePage};
use crate::pages::home::HomePage;
#[cfg(not(feature = "participant"))]
use crate::pages::study::{list::StudiesPage, overview::StudyPage, results::ResultsPage};
#[cfg(not(feature = "participant"))]
use crate::pages::{login::LoginPage, not_found::NotFound, review, users};

/// The fingerprint of the sources this crate was built from (see `build.rs`), the same in the
/// server and in the site's wasm when they were built from one checkout. The shell writes it in
/// each page (`<meta name="natstudy-build">`); the server looks for it in the site's wasm before
/// serving, and the wasm compares it with the page's before hydrating.
pub const BUILD_ID: &str = concat!("natstudy-build:", env!("NATSTUDY_APP_BUILD"));

/// The stylesheet's address (its content-hashed name), which the server provides as context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StylesheetHref(pub String);

/// The participants' bundle's output name (`natstudy_participant.{hash}`), when the site has
/// one; the server provides it as context and the shell links it on [`participant_path`]s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParticipantBundle(pub String);

/// The HTML document around the app (rendered on the server only).
pub fn shell(options: LeptosOptions) -> impl IntoView {
    let css = use_context::<StylesheetHref>()
        .map(|s| s.0)
        .unwrap_or_else(|| "/pkg/natstudy.css".to_owned());
    #[cfg(feature = "ssr")]
    let options = {
        let mut options = options;
        if let (Some(ParticipantBundle(name)), Some(parts)) = (
            use_context::<ParticipantBundle>(),
            use_context::<axum::http::request::Parts>(),
        ) {
            if participant_path(parts.uri.path()) {
                options.output_name = name.into();
            }
        }
        options
    };
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <meta name="natstudy-build" content=BUILD_ID />
                <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
                <link rel="stylesheet" id="natstudy" href=css />
                <HydrationScripts options />
                <MetaTags />
            </head>
            <body>
                <App />
            </body>
        </html>
    }
}

/// The application: routes inside the common layout.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    #[cfg(all(feature = "participant", feature = "hydrate"))]
    let _ = first_path();
    view! {
        // every page names itself: "Results · natstudy"
        <Title formatter=|page: String| if page.is_empty() { "natstudy".to_owned() } else { format!("{page} · natstudy") } />
        <Router>
            <Layout>
                <AppRoutes />
            </Layout>
        </Router>
    }
}

/// Every page.
#[cfg(not(feature = "participant"))]
#[component]
fn AppRoutes() -> impl IntoView {
    view! {
        <Routes fallback=NotFound>
            <Route path=path!("/") view=HomePage />
            <Route path=path!("/login") view=LoginPage />
            <Route path=path!("/admin/users") view=users::UsersPage />
            <Route path=path!("/studies") view=StudiesPage />
            <Route path=path!("/studies/:id") view=StudyPage />
            <Route path=path!("/studies/:id/results") view=ResultsPage />
            <Route path=path!("/studies/:id/review") view=review::ReviewPage />
            <Route path=path!("/studies/:id/review/decide") view=review::ReviewDecidePage />
            // the participant's pages are rendered whole before they are sent (`Async`): out of
            // order, a page's answers arrive in templates that only JavaScript puts in place —
            // without it the page said "Loading…" for ever; and the status is known before
            // the headers go
            <Route path=path!("/join/:token") view=JoinPage ssr=SsrMode::Async />
            <Route path=path!("/resume") view=ResumePage ssr=SsrMode::Async />
            <Route path=path!("/annotate/:study") view=AnnotatePage ssr=SsrMode::Async />
        </Routes>
    }
}

/// The participants' bundle (feature `participant`): the survey's pages only, a fraction of
/// the wasm. The server sends it for [`participant_path`]s; a link to any other page loads
/// that page from the server (with the full bundle).
#[cfg(feature = "participant")]
#[component]
fn AppRoutes() -> impl IntoView {
    view! {
        <Routes fallback=LoadInFull>
            <Route path=path!("/") view=HomePage />
            // rendered whole before they are sent, as in the full bundle's routes
            <Route path=path!("/join/:token") view=JoinPage ssr=SsrMode::Async />
            <Route path=path!("/resume") view=ResumePage ssr=SsrMode::Async />
            <Route path=path!("/annotate/:study") view=AnnotatePage ssr=SsrMode::Async />
        </Routes>
    }
}

/// A page the participants' bundle does not hold: load it from the server. Only after a
/// client-side navigation — on the page the document was loaded for, a reload would load the
/// same bundle again (and again), so it offers a link instead.
#[cfg(feature = "participant")]
#[component]
fn LoadInFull() -> impl IntoView {
    #[cfg(feature = "hydrate")]
    Effect::new(|_| {
        if let Some(w) = web_sys::window() {
            let here = w.location().pathname().unwrap_or_default();
            if Some(here.as_str()) != first_path() {
                let _ = w.location().reload();
            }
        }
    });
    view! { <p class="muted">"Loading… "<a href="/" rel="external">"Home"</a></p> }
}

/// The path the document was loaded for (captured when the app first renders in the browser).
#[cfg(all(feature = "participant", feature = "hydrate"))]
fn first_path() -> Option<&'static str> {
    static FIRST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    web_sys::window().map(|w| {
        FIRST
            .get_or_init(|| w.location().pathname().unwrap_or_default())
            .as_str()
    })
}

/// Whether the page in the browser was rendered by a server built from the same sources as
/// this wasm ([`BUILD_ID`]). When not, hydrating it would fail part-way (the views differ), so
/// the caller leaves the page as served and this says so on the page and in the console.
#[cfg(feature = "hydrate")]
pub fn page_from_this_build() -> bool {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return true;
    };
    let page = document
        .query_selector(r#"meta[name="natstudy-build"]"#)
        .ok()
        .flatten()
        .and_then(|m| m.get_attribute("content"));
    match page {
        Some(page) if page != BUILD_ID => {
            leptos::logging::error!(
                "natstudy: this page comes from a server built from other sources ({page}) than its scripts ({BUILD_ID}); the page is left as served, without its scripts"
            );
            if let Some(body) = document.body() {
                let _ = body.insert_adjacent_html(
                    "afterbegin",
                    r#"<p class="error" role="alert" id="stale-build">This page's scripts come from another version of natstudy than the page, so its buttons and live parts are off. Reload the page; if this stays, tell the study's organisers (the site needs rebuilding with its server: scripts/build-site).</p>"#,
                );
            }
            false
        }
        _ => true,
    }
}

/// The pages the participants' bundle serves (the server picks the bundle by path): exactly
/// the routes of its `AppRoutes`, so the bundle never lands on a page it cannot render.
pub fn participant_path(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    match parts.as_slice() {
        ["", ""] | ["", "resume"] => true,
        ["", "join" | "annotate", one] => !one.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::participant_path;

    #[test]
    fn the_participants_bundle_goes_only_where_its_routes_match() {
        for p in ["/", "/resume", "/join/abc", "/annotate/7"] {
            assert!(participant_path(p), "{p}");
        }
        for p in [
            "/join/",
            "/join",
            "/annotate/7/x",
            "/resume/",
            "/studies",
            "/login",
            "//",
            "",
        ] {
            assert!(!participant_path(p), "{p}");
        }
    }
}
