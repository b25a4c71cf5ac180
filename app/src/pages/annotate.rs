//! The participant's survey: consent and screener, the guideline, rating item by item with a
//! diff and the project context, revision, finishing. Works as plain forms without JavaScript;
//! with it, the keyboard drives everything and time on item is measured in the browser.

#[cfg(feature = "hydrate")]
use leptos::ev;
use leptos::html;
use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_params_map, use_query_map};

use crate::annotate_api::{
    get_annotate_state, FinishStudy, GiveConsent, JoinStudy, StartRating, SubmitVote,
};
use crate::components::status::{ErrorBox, Loading};
use crate::highlight::highlight;
use crate::model::{AnnotateState, AnnotateStep, DiffLine, ItemView, Seg};

/// `/join/:token`: the invite landing page.
#[component]
pub fn JoinPage() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let join = ServerAction::<JoinStudy>::new();
    let token = move || params.with(|p| p.get("token").unwrap_or_default());
    let pid = move || {
        query.with(|q| {
            q.get("pid")
                .or_else(|| q.get("PROLIFIC_PID"))
                .unwrap_or_default()
        })
    };
    view! {
        <section class="card narrow">
            <h1>"Welcome"</h1>
            <p>"You were invited to a study on how developers read transformed Java code."</p>
            <ActionForm action=join attr:id="join-form">
                <input type="hidden" name="token" prop:value=token />
                <input type="hidden" name="pid" prop:value=pid />
                <button type="submit" id="join">"Take part"</button>
            </ActionForm>
            {move || join.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
        </section>
    }
}

/// `/annotate/:study`
#[component]
pub fn AnnotatePage() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let study = move || {
        params.with(|p| {
            p.get("study")
                .and_then(|s| s.parse::<i64>().ok())
                .unwrap_or(0)
        })
    };
    let revise = move || query.with(|q| q.get("revise").and_then(|s| s.parse::<i64>().ok()));
    let vote = ServerAction::<SubmitVote>::new();
    let consent = ServerAction::<GiveConsent>::new();
    let start = ServerAction::<StartRating>::new();
    let finish = ServerAction::<FinishStudy>::new();
    let state = Resource::new(
        move || {
            (
                study(),
                revise(),
                vote.version().get(),
                consent.version().get(),
                start.version().get(),
                finish.version().get(),
            )
        },
        |(s, r, ..)| get_annotate_state(s, r),
    );
    // after a revision is saved, go back to the queue
    let navigate = use_navigate();
    Effect::watch(
        move || vote.version().get(),
        move |_, _, _| {
            let saved = matches!(vote.value().get_untracked(), Some(Ok(())));
            if saved && query.with_untracked(|q| q.get("revise").is_some()) {
                let s = params.with_untracked(|p| p.get("study").unwrap_or_default());
                navigate(&format!("/annotate/{s}"), Default::default());
            }
        },
        false,
    );
    let (show_guideline, set_show_guideline) = signal(false);
    // Transition keeps the current step on screen while the next one loads.
    view! {
        <Transition fallback=Loading>
            {move || Suspend::new(async move {
                match state.await {
                    Ok(s) => view! { <Survey s vote consent start finish show_guideline set_show_guideline /> }.into_any(),
                    Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn Survey(
    s: AnnotateState,
    vote: ServerAction<SubmitVote>,
    consent: ServerAction<GiveConsent>,
    start: ServerAction<StartRating>,
    finish: ServerAction<FinishStudy>,
    show_guideline: ReadSignal<bool>,
    set_show_guideline: WriteSignal<bool>,
) -> impl IntoView {
    let study = s.study;
    let pct = if s.total > 0 {
        s.done * 100 / s.total
    } else {
        0
    };
    let guideline = s.guideline_html.clone();
    let header = view! {
        <header class="survey-head">
            <div>
                <b id="study-title">{s.study_name.clone()}</b>
                <span class="muted">" · participant " {s.code.clone()}</span>
            </div>
            <div class="progress">
                <span id="progress">{s.done} " / " {s.total}</span>
                <progress max="100" value=pct></progress>
            </div>
            <button type="button" class="secondary" id="guideline-toggle" on:click=move |_| set_show_guideline.update(|v| *v = !*v)>
                "Guideline (g)"
            </button>
        </header>
        <section class="card guideline" id="guideline" class:hidden=move || !show_guideline.get()>
            <div inner_html=guideline.clone()></div>
        </section>
    };
    let body = match s.step {
        AnnotateStep::Consent { text, screener } => view! {
            <section class="card narrow">
                <h1>"Consent"</h1>
                <p id="consent-text">{text}</p>
                <ActionForm action=consent attr:id="consent-form">
                    <input type="hidden" name="study" value=study />
                    {screener
                        .into_iter()
                        .map(|q| {
                            let field = format!("answers[{}]", q.name);
                            let id = format!("screener-{}", q.name);
                            if q.options.is_empty() {
                                view! { <label>{q.label} <input type="text" name=field id=id /></label> }.into_any()
                            } else {
                                view! {
                                    <label>
                                        {q.label}
                                        <select name=field id=id required>
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
        .into_any(),
        AnnotateStep::Guideline => view! {
            <section class="card">
                <div id="guideline-first" inner_html=s.guideline_html></div>
                <ActionForm action=start attr:id="start-form">
                    <input type="hidden" name="study" value=study />
                    <button type="submit" id="start" autofocus>"Start rating"</button>
                </ActionForm>
            </section>
        }
        .into_any(),
        AnnotateStep::Rate(item) => view! { <Rate study item=*item vote set_show_guideline /> }.into_any(),
        AnnotateStep::Review { rated } => view! {
            <section class="card">
                <h1>"All items rated"</h1>
                <p>"You may revise any answer before you finish. After finishing, answers are final."</p>
                <table class="grid" id="rated">
                    <thead><tr><th>"Transformation"</th><th class="num">"Readability"</th><th class="num">"Conventions"</th><th></th></tr></thead>
                    <tbody>
                        {rated
                            .into_iter()
                            .map(|r| view! {
                                <tr>
                                    <td>{r.summary}</td><td class="num">{r.cr}</td><td class="num">{r.cc}</td>
                                    <td><a class="revise" href=format!("/annotate/{study}?revise={}", r.item)>"Revise"</a></td>
                                </tr>
                            })
                            .collect_view()}
                    </tbody>
                </table>
                <ActionForm action=finish attr:id="finish-form">
                    <input type="hidden" name="study" value=study />
                    <button type="submit" id="finish">"Finish"</button>
                </ActionForm>
            </section>
        }
        .into_any(),
        AnnotateStep::Finished { completion_code } => view! {
            <section class="card narrow" id="thanks">
                <h1>"Thank you!"</h1>
                <p>"Your answers are saved."</p>
                {completion_code.map(|c| view! { <p>"Completion code: " <code id="completion-code">{c}</code></p> })}
            </section>
        }
        .into_any(),
    };
    view! { {header} {body} }
}

fn code_pieces(segs: Vec<Seg>) -> impl IntoView {
    segs.into_iter()
        .map(|s| {
            let toks = highlight(&s.text)
                .into_iter()
                .map(|(class, t)| view! { <span class=class>{t}</span> })
                .collect_view();
            view! { <span class:chg=s.changed>{toks}</span> }
        })
        .collect_view()
}

/// One side of a side-by-side row: line number and code.
fn side(no: Option<u32>, segs: Vec<Seg>, class: &'static str, buggy: bool) -> impl IntoView {
    view! {
        <td class="ln">{no.map(|n| n.to_string()).unwrap_or_default()}</td>
        <td class=format!("code {class}") class:buggy=buggy>{code_pieces(segs)}</td>
    }
}

#[component]
pub(crate) fn DiffTable(
    rows: Vec<DiffLine>,
    original_left: bool,
    unified: ReadSignal<bool>,
) -> impl IntoView {
    let side_rows = rows.clone();
    let side_by_side = move || {
        side_rows
            .clone()
            .into_iter()
            .map(|r| {
                let (oc, nc) = match r.kind.as_str() {
                    "removed" => ("del", "empty"),
                    "added" => ("empty", "add"),
                    "changed" => ("del", "add"),
                    _ => ("", ""),
                };
                let left_orig = side(r.old_no, r.old.clone(), oc, r.buggy);
                let right_new = side(r.new_no, r.new.clone(), nc, false);
                if original_left {
                    view! { <tr>{left_orig}{right_new}</tr> }.into_any()
                } else {
                    let left_new = side(r.new_no, r.new, nc, false);
                    let right_orig = side(r.old_no, r.old, oc, r.buggy);
                    view! { <tr>{left_new}{right_orig}</tr> }.into_any()
                }
            })
            .collect_view()
    };
    let unified_rows = move || {
        rows.clone()
            .into_iter()
            .flat_map(|r| {
                let mut out = Vec::new();
                let buggy = r.buggy;
                match r.kind.as_str() {
                    "same" => out.push(view! { <tr><td class="ln">{r.old_no}</td><td class="ln">{r.new_no}</td><td class="mark"></td><td class="code" class:buggy=buggy>{code_pieces(r.old)}</td></tr> }.into_any()),
                    _ => {
                        if r.old_no.is_some() {
                            out.push(view! { <tr><td class="ln">{r.old_no}</td><td class="ln"></td><td class="mark">"-"</td><td class="code del" class:buggy=buggy>{code_pieces(r.old)}</td></tr> }.into_any());
                        }
                        if r.new_no.is_some() {
                            out.push(view! { <tr><td class="ln"></td><td class="ln">{r.new_no}</td><td class="mark">"+"</td><td class="code add">{code_pieces(r.new)}</td></tr> }.into_any());
                        }
                    }
                }
                out
            })
            .collect_view()
    };
    let (l, r) = if original_left {
        ("Original", "Transformed")
    } else {
        ("Transformed", "Original")
    };
    view! {
        <div class="diff-wrap">
            <Show
                when=move || unified.get()
                fallback=move || view! {
                    <table class="diff side" id="diff">
                        <thead><tr><th colspan="2" id="left-label">{l}</th><th colspan="2" id="right-label">{r}</th></tr></thead>
                        <tbody>{side_by_side()}</tbody>
                    </table>
                }
            >
                <table class="diff unified" id="diff">
                    <thead><tr><th colspan="4">"Original (−) and transformed (+)"</th></tr></thead>
                    <tbody>{unified_rows()}</tbody>
                </table>
            </Show>
        </div>
    }
}

#[component]
fn Rate(
    study: i64,
    item: ItemView,
    vote: ServerAction<SubmitVote>,
    set_show_guideline: WriteSignal<bool>,
) -> impl IntoView {
    let (cr, set_cr) = signal(item.previous.as_ref().map(|p| p.0));
    let (cc, set_cc) = signal(item.previous.as_ref().map(|p| p.1));
    let (context_open, set_context_open) = signal(false);
    let (context_opened, set_context_opened) = signal(false);
    let (unified, set_unified) = signal(false);
    let time_ref = NodeRef::<html::Input>::new();
    let (started_at, set_started_at) = signal(String::new());
    let form_ref = NodeRef::<html::Form>::new();
    let method_ref = NodeRef::<html::Tr>::new();
    let pending = vote.pending();

    // Browser only: time on item, the remembered view mode, the keyboard.
    #[cfg(not(feature = "hydrate"))]
    let _ = (
        set_show_guideline,
        set_started_at,
        set_context_opened,
        time_ref,
    );
    #[cfg(feature = "hydrate")]
    {
        use std::sync::{Arc, Mutex};
        let timer = Arc::new(Mutex::new(None::<crate::timing::ActiveTimer>));
        let now = || js_sys::Date::now();
        {
            let timer = timer.clone();
            Effect::new(move |_| {
                let t = now();
                if let Ok(mut g) = timer.lock() {
                    if g.is_none() {
                        *g = Some(crate::timing::ActiveTimer::start(t));
                        set_started_at.set(format!("{t}"));
                    }
                }
                let stored = window()
                    .local_storage()
                    .ok()
                    .flatten()
                    .and_then(|s| s.get_item("natstudy.diff").ok().flatten());
                set_unified.set(stored.as_deref() == Some("unified"));
            });
        }
        let with_timer = {
            let timer = timer.clone();
            move |f: &dyn Fn(&mut crate::timing::ActiveTimer, f64)| {
                if let Ok(mut g) = timer.lock() {
                    if let Some(t) = g.as_mut() {
                        f(t, now());
                    }
                }
            }
        };
        let w1 = with_timer.clone();
        let vis = window_event_listener_untyped("visibilitychange", move |_| {
            let hidden = document().visibility_state() == leptos::web_sys::VisibilityState::Hidden;
            w1(&|t, n| if hidden { t.hidden(n) } else { t.visible(n) });
        });
        let w2 = with_timer.clone();
        let act = window_event_listener(ev::mousemove, move |_| w2(&|t, n| t.activity(n)));
        let w3 = with_timer.clone();
        let stamp_key = {
            let w = with_timer.clone();
            move || {
                w(&|t, n| {
                    if let Some(input) = time_ref.get_untracked() {
                        input.set_value(&format!("{:.3}", t.peek(n)));
                    }
                })
            }
        };
        let keys = window_event_listener(ev::keydown, move |e| {
            w3(&|t, n| t.activity(n));
            let typing = e
                .target()
                .and_then(|t| {
                    leptos::wasm_bindgen::JsCast::dyn_into::<leptos::web_sys::Element>(t).ok()
                })
                .is_some_and(|el| {
                    matches!(el.tag_name().as_str(), "TEXTAREA" | "INPUT" | "SELECT")
                });
            if typing || e.ctrl_key() || e.meta_key() || e.alt_key() {
                return;
            }
            match e.key().as_str() {
                k @ ("1" | "2" | "3" | "4") => {
                    let v = k.parse::<u8>().ok();
                    if cr.get_untracked().is_none() {
                        set_cr.set(v);
                    } else {
                        set_cc.set(v);
                    }
                }
                "Backspace" => {
                    if cc.get_untracked().is_some() {
                        set_cc.set(None);
                    } else {
                        set_cr.set(None);
                    }
                }
                "Enter" if cr.get_untracked().is_some() && cc.get_untracked().is_some() => {
                    e.prevent_default();
                    stamp_key();
                    if let Some(form) = form_ref.get_untracked() {
                        let _ = form.request_submit();
                    }
                }
                "g" => set_show_guideline.update(|v| *v = !*v),
                "c" => {
                    set_context_open.update(|v| *v = !*v);
                    set_context_opened.set(true);
                }
                _ => {}
            }
        });
        // The hidden time field is kept current (ActionForm reads the form on submit, before
        // any bubbling listener could stamp it).
        let w4 = with_timer.clone();
        let stamp = move || {
            w4(&|t, n| {
                let secs = t.peek(n);
                if let Some(input) = time_ref.get_untracked() {
                    input.set_value(&format!("{secs:.3}"));
                }
            });
        };
        let ticker =
            set_interval_with_handle(stamp.clone(), std::time::Duration::from_millis(200)).ok();
        // keep the lease while the page is open
        let beat = set_interval_with_handle(
            move || {
                leptos::task::spawn_local(async move {
                    let _ = crate::annotate_api::heartbeat(study).await;
                })
            },
            std::time::Duration::from_secs(60),
        )
        .ok();
        let stamp_click = stamp.clone();
        let on_submit = window_event_listener(ev::click, move |_| stamp_click());
        on_cleanup(move || {
            vis.remove();
            act.remove();
            keys.remove();
            on_submit.remove();
            if let Some(t) = ticker {
                t.clear();
            }
            if let Some(b) = beat {
                b.clear();
            }
        });
        // scroll the method into view when the context opens
        Effect::new(move |_| {
            if context_open.get() {
                if let Some(row) = method_ref.get() {
                    row.scroll_into_view();
                }
            }
        });
    }
    let toggle_mode = move |_| {
        let u = !unified.get_untracked();
        set_unified.set(u);
        #[cfg(feature = "hydrate")]
        if let Some(s) = window().local_storage().ok().flatten() {
            let _ = s.set_item("natstudy.diff", if u { "unified" } else { "side" });
        }
    };
    let likert =
        |name: &'static str, value: ReadSignal<Option<u8>>, set: WriteSignal<Option<u8>>| {
            const LABELS: [&str; 4] = ["Disagree", "Weakly disagree", "Weakly agree", "Agree"];
            (1u8..=4)
                .map(|v| {
                    view! {
                        <label class="likert-option">
                            <input
                                type="radio"
                                name=name
                                value=v
                                id=format!("{name}-{v}")
                                prop:checked=move || value.get() == Some(v)
                                on:change=move |_| set.set(Some(v))
                            />
                            <span>{v} " " {LABELS[usize::from(v - 1)]}</span>
                        </label>
                    }
                })
                .collect_view()
        };
    let method_line = item.method_line;
    let method_lines = item.method_lines;
    let file_rows = item.file_source.clone().map(|src| {
        src.lines()
            .enumerate()
            .map(|(i, l)| {
                let n = i as u32 + 1;
                let inside = method_line.is_some_and(|m| n >= m && n < m + method_lines);
                let is_first = method_line == Some(n);
                let code = code_pieces(vec![Seg { text: l.to_owned(), changed: false }]);
                if is_first {
                    view! { <tr class="in-method" node_ref=method_ref><td class="ln">{n}</td><td class="code">{code}</td></tr> }.into_any()
                } else {
                    view! { <tr class:in-method=inside><td class="ln">{n}</td><td class="code">{code}</td></tr> }.into_any()
                }
            })
            .collect_view()
    });
    let previous_comment = item
        .previous
        .as_ref()
        .map(|p| p.2.clone())
        .unwrap_or_default();
    view! {
        <section class="card item">
            <p class="summary" id="summary">{item.summary.clone()}</p>
            <p class="facts muted">
                {item.operator.clone().map(|o| view! { <span class="tag" id="operator">{o}</span> })}
                <span>{item.method.clone()}</span>
            </p>
            <div class="row">
                <button type="button" class="secondary" id="mode-toggle" on:click=toggle_mode>
                    {move || if unified.get() { "Side by side" } else { "Unified" }}
                </button>
            </div>
            <DiffTable rows=item.diff.clone() original_left=item.original_left unified />
            <details
                class="context"
                id="context"
                prop:open=move || context_open.get()
                on:toggle=move |e| {
                    let open = event_target::<leptos::web_sys::HtmlDetailsElement>(&e).open();
                    set_context_open.set(open);
                    if open {
                        set_context_opened.set(true);
                    }
                }
            >
                <summary>"Context (c): file and project"</summary>
                <p class="facts">
                    "Project " <b>{item.project.clone()}</b> " · file " <code>{item.file_path.clone()}</code>
                    {item.bug_id.clone().map(|b| view! { " · bug " <b id="bug-id">{b}</b> })}
                </p>
                {file_rows.map(|rows| view! { <div class="file-view"><table class="file"><tbody>{rows}</tbody></table></div> })}
            </details>
        </section>
        <ActionForm action=vote node_ref=form_ref attr:id="vote-form" attr:class="card questions">
            <input type="hidden" name="study" value=study />
            <input type="hidden" name="item" value=item.item />
            <input type="hidden" name="token" value=item.token.clone() />
            <input type="hidden" name="time_secs" value="" node_ref=time_ref />
            <input type="hidden" name="started_at" prop:value=move || started_at.get() />
            <input type="hidden" name="context_opened" prop:value=move || context_opened.get().to_string() />
            <fieldset id="q-cr">
                <legend>"Does the transformation reduce code readability?"</legend>
                <div class="likert">{likert("cr", cr, set_cr)}</div>
            </fieldset>
            <fieldset id="q-cc">
                <legend>"Does the transformation break the coding conventions?"</legend>
                <div class="likert">{likert("cc", cc, set_cc)}</div>
            </fieldset>
            <label>"Comment (optional)" <textarea name="comment" rows="2">{previous_comment}</textarea></label>
            <p class="muted keys">"Keys: 1–4 answer the first question, then the second · Backspace undoes · Enter submits · g guideline · c context"</p>
            <button type="submit" id="submit" disabled=move || pending.get()>"Submit (Enter)"</button>
            {move || vote.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
        </ActionForm>
    }
}
