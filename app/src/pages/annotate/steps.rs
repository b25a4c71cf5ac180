//! The survey's steps around rating: consent with the screener, the guideline, the review of
//! rated items, the thanks.

use leptos::prelude::*;

use crate::annotate_api::{FinishStudy, GiveConsent, StartRating};
use natstudy_types::StudyId;
use natstudy_types::{Outcome, RatedRow, ScreenerQuestion, Waiting};

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
    waiting: Option<Waiting>,
    required: Option<u64>,
    hold_lapsed: bool,
    designed: bool,
    units: Vec<natstudy_types::AnsweredUnit>,
    finish: ServerAction<FinishStudy>,
) -> impl IntoView {
    let shown = rated.len() as u64;
    let reached = required.is_some_and(|n| total >= n);
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
    let finish_form = |id: &'static str, label: &'static str| {
        view! {
            <ActionForm action=finish attr:id="finish-form">
                <input type="hidden" name="study" value=study.get() />
                <button type="submit" id=id>{label}</button>
            </ActionForm>
        }
    };
    if let Some(w) = waiting {
        // items held by others may still come: no finish, but a partial one after the wait
        let of = match w.required {
            Some(n) => format!("{total} of {n} done."),
            None => format!("{} done so far.", crate::text::count(total as i64, "item")),
        };
        let free = if w.free_in_secs < 60 {
            "any moment now".to_string()
        } else {
            format!("within about {} minutes", w.free_in_secs.div_ceil(60))
        };
        return view! {
            <section class="card" id="waiting">
                <h1>"More items soon"</h1>
                <p id="waiting-progress"><b>{of}</b></p>
                <p>"The items left are being rated by other participants. Any they do not finish come free again " {free}
                   ". This page checks for them every 15 seconds: keep it open, or come back later with your resume code."</p>
                <p><a id="check-again" href=format!("/annotate/{study}")>"Check now"</a></p>
                {w.partial_in_secs.map(|s| view! {
                    <p class="muted" id="partial-later">{format!("If no item comes within {} minutes, you may stop with a partial completion code.", s.div_ceil(60))}</p>
                })}
                {w.partial_offered.then(|| view! {
                    <p id="partial-offer">"You have waited long enough: you may stop now with a partial completion code, or keep waiting for more items."</p>
                    {finish_form("finish-partial", "Stop with a partial code")}
                })}
            </section>
        }
        .into_any();
    }
    if designed {
        // a designed study's units, each revisable until the finish
        let said = if total == 0 {
            "Every unit of this study already has all the answers it needs, or is being answered by others: there is nothing for you to answer now. You may come back later with your resume code; finishing now gives no completion code.".to_string()
        } else {
            format!(
                "Your answers to {} are saved. Finish to get your completion code.",
                crate::text::count(total as i64, "unit")
            )
        };
        let said_id = if total == 0 {
            "nothing-to-rate"
        } else {
            "work-done"
        };
        let list = (!units.is_empty()).then(|| {
            view! {
                <p>"You may revise any answer before you finish. After finishing, answers are final."</p>
                <table class="grid" id="answered">
                    <thead><tr><th>"Unit"</th><th>"Your answers"</th><th><span class="visually-hidden">"Revise"</span></th></tr></thead>
                    <tbody>
                        {units
                            .into_iter()
                            .enumerate()
                            .map(|(i, u)| view! {
                                <tr>
                                    <td><code class="unit-shown">{u.shown}</code></td>
                                    <td class="unit-answers">{u.answers}</td>
                                    <td><a class="revise" id=format!("revise-{}", i + 1) href=format!("/annotate/{study}?unit={}", u.claim)>"Revise"</a></td>
                                </tr>
                            })
                            .collect_view()}
                    </tbody>
                </table>
            }
        });
        return view! {
            <section class="card">
                <h1>{if total == 0 { "Nothing to answer now" } else { "All answered" }}</h1>
                <p id=said_id>{said}</p>
                {list}
                {finish_form("finish", "Finish")}
            </section>
        }
        .into_any();
    }
    view! {
        <section class="card">
            <h1>{if total == 0 { "Nothing to rate now" } else { "All items rated" }}</h1>
            {reached.then(|| view! { <p id="work-done">{format!("You rated the {} this study asks for. Finish to get your completion code.", crate::text::count(total as i64, "item"))}</p> })}
            {if total == 0 && hold_lapsed {
                view! { <p id="hold-lapsed">"The items held for you went back to other participants: none was rated in the time the study holds an item. No new items are held for someone who let theirs lapse without rating, so there is nothing for you to rate now, and finishing gives no completion code."</p> }.into_any()
            } else if total == 0 {
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
                // soft hyphens: a phone's narrow columns break a heading at a syllable, never clip it
                <thead><tr><th>"Trans\u{ad}formation"</th><th class="num">"Read\u{ad}ability"</th><th class="num">"Con\u{ad}ventions"</th><th><span class="visually-hidden">"Revise"</span></th></tr></thead>
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
            {finish_form("finish", "Finish")}
        </section>
    }
    .into_any()
}

/// The end: the code of the participant's outcome (with a copy button) and the way back to
/// the crowd platform, where the study has one — the page goes there by itself after a moment;
/// for a participant without a code, why there is none.
#[component]
pub(super) fn Thanks(
    completion_code: Option<String>,
    rated: u64,
    min_rated: u64,
    has_code: bool,
    outcome: Outcome,
    redirect: Option<String>,
) -> impl IntoView {
    let screened_out = outcome == Outcome::ScreenedOut;
    let saved = if screened_out && rated > 0 {
        // turned away after rating: the study's check items, not the screener
        format!(
            "Your survey has ended: on this study's check items (items with an agreed answer) \
             your answers differed from the expected ones as often as the study allows. {}",
            crate::text::answers_saved(rated)
        )
    } else if screened_out {
        "Thank you for your interest. This study is looking for participants with another \
         background: there are no items for you to rate."
            .to_string()
    } else if rated == 0 {
        "You rated no items: there was nothing left to rate.".to_string()
    } else {
        crate::text::answers_saved(rated)
    };
    let withheld = (has_code && completion_code.is_none() && outcome == Outcome::Returned).then(|| {
        if rated == 0 {
            "This study was full when you came: every item already had all the ratings it needs. \
             Without rated items there is no completion code. Thank you for your interest."
                .to_string()
        } else if rated < min_rated {
            format!(
                "This study gives its completion code for at least {min_rated} rated items; you rated {rated}."
            )
        } else {
            "You stopped before the work this study asks for: there is no completion code.".to_string()
        }
    });
    // a study that sets no code: say so, and what that means for pay or credit
    let no_code_set = (!has_code && completion_code.is_none() && !screened_out).then_some(
        "This study gives no completion code: nothing more is needed from you, and you may close \
         this page. If you take part for pay or course credit, the researchers credit you from \
         their own records, where the participant code at the top of this page names you.",
    );
    let label = match outcome {
        Outcome::Partial => "Partial completion code: ",
        Outcome::ScreenedOut => "Code: ",
        _ => "Completion code: ",
    };
    // back to the platform after a moment (the code stays on screen meanwhile)
    #[cfg(feature = "hydrate")]
    if let Some(url) = redirect.clone() {
        let _ = set_timeout_with_handle(
            move || {
                let _ = window().location().set_href(&url);
            },
            std::time::Duration::from_secs(3),
        );
    }
    // what the copy button did, said where a screen reader hears it
    let (copied, set_copied) = signal(String::new());
    view! {
        <section class="card narrow" id="thanks" data-outcome=format!("{outcome:?}")>
            <h1>{if screened_out { "Thank you" } else if rated == 0 { "Nothing to rate" } else { "Thank you!" }}</h1>
            <p>{saved}</p>
            {completion_code.map(|c| {
                let copy_text = c.clone();
                view! {
                    <p>{label} <code id="completion-code">{c}</code> " "
                        <button type="button" class="secondary" id="copy-code" on:click=move |_| copy(&copy_text, set_copied)>"Copy"</button>
                        " " <span id="copy-status" role="status" aria-live="polite">{move || copied.get()}</span>
                    </p>
                }
            })}
            {withheld.map(|w| view! { <p class="notice" id="no-code">{w}</p> })}
            {no_code_set.map(|w| view! { <p class="notice" id="no-code-set">{w}</p> })}
            {redirect.map(|url| view! {
                <p id="return">"You are being sent back to the study platform. If nothing happens, "
                    <a id="return-link" href=url>"return to the study platform"</a> "."</p>
            })}
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
