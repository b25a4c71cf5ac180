//! The browser entry point: hydrates the server-rendered page with the `app` crate's components.

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    if !app::page_from_this_build() {
        return;
    }
    leptos::mount::hydrate_body(app::App);
}
