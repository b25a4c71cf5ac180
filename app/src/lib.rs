//! natstudy's user interface: Leptos components, pages, wire types and server functions.
//!
//! Compiles for `ssr` (inside the `natstudy` server) and `hydrate` (wasm32, in the browser).
//! It never touches a database: server functions reach the domain through [`backend::Backend`],
//! which the server provides as context.

pub mod annotate_api;
pub mod api;
#[cfg(feature = "ssr")]
pub mod auth;
#[cfg(feature = "ssr")]
pub mod backend;
mod components;
pub mod highlight;
pub mod model;
mod pages;
pub mod review_api;
pub mod study_api;
pub mod text;
pub mod timing;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Title};
use leptos_router::components::{Route, Router, Routes};
use leptos_router::path;

use crate::components::layout::Layout;
use crate::pages::annotate::{AnnotatePage, JoinPage, ResumePage};
use crate::pages::{home::HomePage, login::LoginPage, not_found::NotFound, review, studies, users};

/// The stylesheet's address (its content-hashed name), which the server provides as context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StylesheetHref(pub String);

/// The HTML document around the app (rendered on the server only).
pub fn shell(options: LeptosOptions) -> impl IntoView {
    let css = use_context::<StylesheetHref>()
        .map(|s| s.0)
        .unwrap_or_else(|| "/pkg/natstudy.css".to_owned());
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
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
    view! {
        <Title text="natstudy" />
        <Router>
            <Layout>
                <Routes fallback=NotFound>
                    <Route path=path!("/") view=HomePage />
                    <Route path=path!("/login") view=LoginPage />
                    <Route path=path!("/admin/users") view=users::UsersPage />
                    <Route path=path!("/studies") view=studies::StudiesPage />
                    <Route path=path!("/studies/:id") view=studies::StudyPage />
                    <Route path=path!("/studies/:id/results") view=studies::ResultsPage />
                    <Route path=path!("/studies/:id/review") view=review::ReviewPage />
                    <Route path=path!("/studies/:id/review/decide") view=review::ReviewDecidePage />
                    <Route path=path!("/join/:token") view=JoinPage />
                    <Route path=path!("/resume") view=ResumePage />
                    <Route path=path!("/annotate/:study") view=AnnotatePage />
                </Routes>
            </Layout>
        </Router>
    }
}
