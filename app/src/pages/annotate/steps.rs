//! The survey's steps around rating: consent with the screener, the guideline, the review of
//! rated items, the thanks.

use leptos::prelude::*;

use crate::annotate_api::{FinishStudy, GiveConsent, StartRating};
use crate::model::StudyId;
use crate::model::{RatedRow, ScreenerQuestion};

#[component]
pub(super) fn Consent(
    study: StudyId,
    text: String,
    screener: Vec<ScreenerQuestion>,
    consent: ServerAction<GiveConsent>,
) -> impl IntoView {
    view! {
        <section class="card narrow">
            <h1>"Consent"</h1>
            <p id="consent-text">{text}</p>
            <ActionForm action=consent attr:id="consent-form">
                <input type="hidden" name="study" value=study.get() />
                {screener
                    .into_iter()
                    .map(|q| {
                        let field = format!("answers[{}]", q.name);
                        let id = format!("screener-{}", q.name);
                        if q.options.is_empty() {
                            view! { <label>{q.label} <input type="text" name=field id=id required maxlength="200" /></label> }.into_any()
                        } else {
                            view! {
                                <label>
                                    {q.label}
                                    // nothing preselected: a participant who clicks through
                                    // is asked, not recorded with a default
                                    <select name=field id=id required>
                                        <option value="" disabled selected>"Choose…"</option>
                                        {q.options.into_iter().map(|o| view! { <option value=o.clone()>{o.clone()}</option> }).collect_view()}
                                    </select>
                                </label>
                            }
                            .into_any()
                        }
                    })
                    .collect_view()}
                <button type="submit" id="consent-submit">"I agree and continue"</button>
            </ActionForm>
        </section>
    }
}

#[component]
pub(super) fn GuidelineStep(
    study: StudyId,
    guideline_html: String,
    start: ServerAction<StartRating>,
) -> impl IntoView {
    view! {
        <section class="card">
            <div id="guideline-first" inner_html=guideline_html></div>
            <ActionForm action=start attr:id="start-form">
                <input type="hidden" name="study" value=study.get() />
                <button type="submit" id="start" autofocus>"Start rating"</button>
            </ActionForm>
        </section>
    }
}

/// The rated items, a page at a time (`page` of `pages`, from 1; `before` items on the pages
/// before, `total` in all), each with a link to revise it that brings the participant back to
/// this page.
#[component]
pub(super) fn Review(
    study: StudyId,
    rated: Vec<RatedRow>,
    page: u32,
    pages: u32,
    before: u64,
    total: u64,
    finish: ServerAction<FinishStudy>,
) -> impl IntoView {
    let shown = rated.len() as u64;
    let to_page = move |p: u32| format!("/annotate/{study}?page={p}");
    // above and below the list
    let nav = move || {
        (pages > 1).then(|| {
            view! {
                <nav class="pager" aria-label="Pages of rated items">
                    {(page > 1).then(|| view! { <a rel="prev" href=to_page(page - 1)>"← Earlier"</a> })}
                    <span class="page-of">"Page " {page} " of " {pages}</span>
                    {(page < pages).then(|| view! { <a rel="next" href=to_page(page + 1)>"Later →"</a> })}
                </nav>
            }
        })
    };
    view! {
        <section class="card">
            <h1>{if total == 0 { "Nothing to rate now" } else { "All items rated" }}</h1>
            {if total == 0 {
                view! { <p id="nothing-to-rate">"Every item of this study already has all the ratings it needs, or is being rated by others: there is nothing for you to rate now. You may come back later with your resume code; finishing now gives no completion code."</p> }.into_any()
            } else {
                view! { <p>"You may revise any answer before you finish. After finishing, answers are final."</p> }.into_any()
            }}
            <p class="muted" id="rated-range">
                {if shown == 0 {
                    "No items rated.".to_string()
                } else {
                    format!("Items {}–{} of {total}, in the order you rated them.", before + 1, before + shown)
                }}
            </p>
            {nav()}
            <table class="grid" id="rated">
                <thead><tr><th>"Transformation"</th><th class="num">"Readability"</th><th class="num">"Conventions"</th><th><span class="visually-hidden">"Revise"</span></th></tr></thead>
                <tbody>
                    {rated
                        .into_iter()
                        .map(|r| view! {
                            <tr>
                                <td><crate::text::Summary text=r.summary /></td><td class="num">{r.cr}</td><td class="num">{r.cc}</td>
                                <td><a class="revise" href=format!("/annotate/{study}?revise={}&page={page}", r.item)>"Revise"</a></td>
                            </tr>
                        })
                        .collect_view()}
                </tbody>
            </table>
            {nav()}
            <ActionForm action=finish attr:id="finish-form">
                <input type="hidden" name="study" value=study.get() />
                <button type="submit" id="finish">"Finish"</button>
            </ActionForm>
        </section>
    }
}

/// The end: the completion code (with a copy button) for work done; for a participant who
/// rated nothing, or fewer items than the study asks, why there is none.
#[component]
pub(super) fn Thanks(
    completion_code: Option<String>,
    rated: u64,
    min_rated: u64,
    has_code: bool,
) -> impl IntoView {
    let saved = if rated == 0 {
        "You rated no items: there was nothing left to rate.".to_string()
    } else {
        format!(
            "Your {} are saved.",
            crate::text::count(rated as i64, "answer")
        )
    };
    let withheld = (has_code && completion_code.is_none()).then(|| {
        if rated == 0 {
            "This study was full when you came: every item already had all the ratings it needs. \
             Without rated items there is no completion code. Thank you for your interest."
                .to_string()
        } else {
            format!(
                "This study gives its completion code for at least {min_rated} rated items; you rated {rated}."
            )
        }
    });
    // what the copy button did, said where a screen reader hears it
    let (copied, set_copied) = signal(String::new());
    view! {
        <section class="card narrow" id="thanks">
            <h1>{if rated == 0 { "Nothing to rate" } else { "Thank you!" }}</h1>
            <p>{saved}</p>
            {completion_code.map(|c| {
                let copy_text = c.clone();
                view! {
                    <p>"Completion code: " <code id="completion-code">{c}</code> " "
                        <button type="button" class="secondary" id="copy-code" on:click=move |_| copy(&copy_text, set_copied)>"Copy"</button>
                        " " <span id="copy-status" role="status" aria-live="polite">{move || copied.get()}</span>
                    </p>
                }
            })}
            {withheld.map(|w| view! { <p class="notice" id="no-code">{w}</p> })}
        </section>
    }
}

/// Puts `text` on the clipboard and says so; where the browser refuses (no permission, an
/// insecure page), selects the code on the page and says how to copy it.
fn copy(text: &str, said: WriteSignal<String>) {
    #[cfg(feature = "hydrate")]
    {
        let promise = window().navigator().clipboard().write_text(text);
        leptos::task::spawn_local(async move {
            match wasm_bindgen_futures::JsFuture::from(promise).await {
                Ok(_) => said.set("Copied.".into()),
                Err(_) => {
                    select_code();
                    said.set("Selected: press Ctrl+C (⌘C) to copy it.".into());
                }
            }
        });
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (text, said);
}

/// Selects the completion code's text on the page.
#[cfg(feature = "hydrate")]
fn select_code() {
    let doc = document();
    let (Some(code), Some(sel)) = (
        doc.get_element_by_id("completion-code"),
        window().get_selection().ok().flatten(),
    ) else {
        return;
    };
    let _ = sel.select_all_children(&code);
}
