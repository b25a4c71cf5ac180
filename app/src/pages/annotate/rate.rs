//! Rating one item: the diff, the context, the two questions; in the browser the keyboard,
//! the time on item and the lease heartbeat.

use leptos::html;
use leptos::prelude::*;

use super::diff::{code_pieces, indent_style, DiffTable};
use super::rate_browser::{
    answered_before_hydration, browser_hooks, draft_hooks, point_to, unanswered, Question,
    RateSignals, KEY_HINT,
};
use crate::annotate_api::SubmitVote;
use crate::components::status::ErrorBox;
use natstudy_types::StudyId;
use natstudy_types::{ItemView, Seg};

#[component]
pub(super) fn Rate(
    study: StudyId,
    item: ItemView,
    vote: ServerAction<SubmitVote>,
    set_show_guideline: WriteSignal<bool>,
) -> impl IntoView {
    // answers given before the page became interactive (a slow connection) are kept: the
    // server-rendered form of this very item (its submit token) says what was clicked
    let clicked = |name: &str| answered_before_hydration(&item.token, name);
    let (cr, set_cr) = signal(
        item.previous
            .as_ref()
            .map(|p| p.0)
            .or_else(|| clicked("cr")),
    );
    let (cc, set_cc) = signal(
        item.previous
            .as_ref()
            .map(|p| p.1)
            .or_else(|| clicked("cc")),
    );
    // what a digit key did when it did not simply answer an open question (see `digit_effect`);
    // a submit with one question missing points to it
    let key_note = RwSignal::new(None::<String>);
    let missing = RwSignal::new(None::<Question>);
    let (context_open, set_context_open) = signal(false);
    let (context_opened, set_context_opened) = signal(false);
    let (unified, set_unified) = signal(false);
    let time_ref = NodeRef::<html::Input>::new();
    let comment_ref = NodeRef::<html::Textarea>::new();
    let (started_at, set_started_at) = signal(String::new());
    let form_ref = NodeRef::<html::Form>::new();
    let method_ref = NodeRef::<html::Tr>::new();
    let pending = vote.pending();
    // an item the server rendered has been on screen since the page began to load, before
    // the page became interactive (on a slow link, seconds): its time starts then
    #[cfg(feature = "hydrate")]
    let shown_at_load = Owner::current_shared_context().is_some_and(|c| c.during_hydration());
    #[cfg(not(feature = "hydrate"))]
    let shown_at_load = false;

    browser_hooks(RateSignals {
        shown_at_load,
        study,
        item: item.item,
        new_item: item.previous.is_none(),
        cr,
        set_cr,
        cc,
        set_cc,
        context_open,
        set_context_open,
        set_context_opened,
        set_unified,
        set_started_at,
        set_show_guideline,
        key_note,
        missing,
        time_ref,
        form_ref,
        method_ref,
    });
    draft_hooks(
        study,
        item.item,
        item.previous.is_none(),
        cr,
        set_cr,
        cc,
        set_cc,
        comment_ref,
    );
    let toggle_mode = move |_| {
        let u = !unified.get_untracked();
        set_unified.set(u);
        #[cfg(feature = "hydrate")]
        if let Some(s) = window().local_storage().ok().flatten() {
            let _ = s.set_item("natstudy.diff", if u { "unified" } else { "side" });
        }
    };
    // the method's file is asked for when Context is first opened, never sent with the item
    let file = RwSignal::new(FileLoad::NotAsked);
    #[cfg(feature = "hydrate")]
    if item.has_file {
        let item_id = item.item;
        Effect::new(move |_| {
            // asked once; again on the next opening after a failure
            let again = matches!(
                file.get_untracked(),
                FileLoad::NotAsked | FileLoad::Failed(_)
            );
            if context_open.get() && again {
                file.set(FileLoad::Loading);
                leptos::task::spawn_local(async move {
                    file.set(
                        match crate::annotate_api::item_context(study, item_id).await {
                            Ok(found) => FileLoad::Loaded(found),
                            Err(e) => FileLoad::Failed(e.to_string()),
                        },
                    );
                });
            }
        });
    }
    let (method_line, method_lines) = (item.method_line, item.method_lines);
    let file_panel = item.has_file.then_some(move || match file.get() {
            FileLoad::NotAsked => view! {
                <p class="muted" id="file-later">"The method's file is shown here once Context is open (with JavaScript on)."</p>
            }
            .into_any(),
            FileLoad::Loading => view! { <p class="muted" id="file-loading" role="status">"Loading the file…"</p> }.into_any(),
            FileLoad::Failed(why) => view! { <ErrorBox message=format!("The file could not be loaded ({why}): close and open Context to try again.") /> }.into_any(),
            FileLoad::Loaded(None) => ().into_any(),
            FileLoad::Loaded(Some(ctx)) => {
                // a part of a long file: which lines
                let shown = ctx.text.lines().count() as u32;
                let part = (shown > 0 && shown < ctx.total_lines).then(|| {
                    format!(
                        "Lines {}–{} of the file's {}: the method and the lines around it.",
                        ctx.first_line,
                        ctx.first_line + shown - 1,
                        ctx.total_lines
                    )
                });
                let rows = file_view(&ctx.text, ctx.first_line, method_line, method_lines, method_ref);
                view! {
                    {part.map(|p| view! { <p class="muted" id="file-part">{p}</p> })}
                    <div class="file-view" tabindex="0" role="region" aria-label="The method's file"><table class="file"><tbody>{rows}</tbody></table></div>
                }
                .into_any()
            }
    });
    let previous_comment = item
        .previous
        .as_ref()
        .map(|p| p.2.clone())
        .unwrap_or_default();
    // a revision says so, and leads back to the page of the list it came from
    let revising = item.previous.is_some().then(|| {
        let page = leptos_router::hooks::use_query_map()
            .with_untracked(|q| q.get("page").and_then(|p| p.parse::<u32>().ok()));
        let back = match page {
            Some(p) => format!("/annotate/{study}?page={p}"),
            None => format!("/annotate/{study}"),
        };
        view! {
            <p class="notice" id="revising">
                "You are revising your answer: your earlier answers are filled in. "
                <a href=back id="back-to-list">"Back to your rated items"</a>
            </p>
        }
    });
    view! {
        {revising}
        <section class="card item">
            // where each item starts: focused when it is shown (screen readers announce it,
            // the page is at its top), whether the last one was sent by mouse or keyboard
            <h1 id="item-heading" class="item-heading" tabindex="-1" aria-live="polite">
                "Rate this transformation"
            </h1>
            <p class="summary" id="summary"><crate::text::Summary text=item.summary.clone() /></p>
            <p class="facts muted">
                {item.operator.clone().map(|o| view! { <span class="tag" id="operator">{o}</span> })}
                <span>{item.method.clone()}</span>
            </p>
            <div class="row">
                <button type="button" class="secondary" id="mode-toggle" on:click=toggle_mode>
                    {move || if unified.get() { "Side by side" } else { "Unified" }}
                </button>
            </div>
            <DiffTable rows=item.diff.clone() original_left=item.original_left unified navigate=true />
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
                <summary>"Context"<span class="key-name">" (c)"</span>": file and project"</summary>
                <p class="facts">
                    "Project " <b>{item.project.clone()}</b> " · file " <code>{item.file_path.clone()}</code>
                    {item.bug_id.clone().map(|b| view! { " · bug " <b id="bug-id">{b}</b> })}
                </p>
                {file_panel}
            </details>
        </section>
        <ActionForm action=vote node_ref=form_ref attr:id="vote-form" attr:class="card questions">
            <input type="hidden" name="study" value=study.get() />
            <input type="hidden" name="item" value=item.item.get() />
            <input type="hidden" name="token" value=item.token.clone() />
            <input type="hidden" name="time_secs" value="" node_ref=time_ref />
            <input type="hidden" name="started_at" prop:value=move || started_at.get() />
            <input type="hidden" name="context_opened" prop:value=move || context_opened.get().to_string() />
            <fieldset id="q-cr" class:missing=move || missing.get() == Some(Question::Readability) && cr.get().is_none()>
                <legend>"Does the transformation reduce code readability?"</legend>
                <div class="likert"><Likert name="cr" value=cr set=set_cr /></div>
                <MissingNote q=Question::Readability missing answered=move || cr.get().is_some() other=move || cc.get().is_some() />
            </fieldset>
            <fieldset id="q-cc" class:missing=move || missing.get() == Some(Question::Conventions) && cc.get().is_none()>
                <legend>"Does the transformation break the coding conventions?"</legend>
                <div class="likert"><Likert name="cc" value=cc set=set_cc /></div>
                <MissingNote q=Question::Conventions missing answered=move || cc.get().is_some() other=move || cr.get().is_some() />
            </fieldset>
            <label>"Comment (optional)" <textarea name="comment" rows="2" node_ref=comment_ref>{previous_comment}</textarea></label>
            <p class="key-note" id="key-note" role="status" aria-live="polite">{move || key_note.get()}</p>
            <p class="muted keys" id="key-hint">{KEY_HINT}</p>
            <button
                type="submit"
                id="submit"
                disabled=move || pending.get()
                on:click=move |ev| {
                    // keep what was given: a submit with a question open points to it instead
                    if let Some(q) = unanswered(cr.get_untracked(), cc.get_untracked()) {
                        ev.prevent_default();
                        missing.set(Some(q));
                        point_to(q);
                    }
                }
            >
                // a touch screen has no keys to name (`.key-name` is hidden there)
                "Submit"<span class="key-name">" (Enter)"</span>
            </button>
            // (a session that ended shows the page's own way back: the state read fails too)
            {move || vote.value().get().and_then(|r| r.err()).filter(|e| !super::session_lost(e)).map(|e| view! { <ErrorBox message=e.to_string() /> })}
        </ActionForm>
    }
}

/// One question's four answers.
#[component]
fn Likert(
    name: &'static str,
    value: ReadSignal<Option<u8>>,
    set: WriteSignal<Option<u8>>,
) -> impl IntoView {
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
}

/// The method's file, numbered, with the method's lines marked (its first row is `method_ref`,
/// scrolled to when the context opens).
/// The rows of the file's part `src`, whose first line is line `first` of the file.
fn file_view(
    src: &str,
    first: u32,
    method_line: Option<u32>,
    method_lines: u32,
    method_ref: NodeRef<html::Tr>,
) -> impl IntoView {
    src.lines()
        .enumerate()
        .map(|(i, l)| {
            let n = first + i as u32;
            let inside = method_line.is_some_and(|m| n >= m && n < m + method_lines);
            let is_first = method_line == Some(n);
            let segs = vec![Seg { text: l.to_owned(), changed: false }];
            // a wrapped line hangs at its own indentation, as in the diff
            let indent = indent_style(&segs);
            let code = code_pieces(segs);
            if is_first {
                view! { <tr class="in-method" node_ref=method_ref><td class="ln">{n}</td><td class="code" style=indent>{code}</td></tr> }.into_any()
            } else {
                view! { <tr class:in-method=inside><td class="ln">{n}</td><td class="code" style=indent>{code}</td></tr> }.into_any()
            }
        })
        .collect_view()
}

/// The method's file under Context: asked for once, when Context is first opened.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
enum FileLoad {
    NotAsked,
    Loading,
    Loaded(Option<natstudy_types::FileContext>),
    Failed(String),
}

/// "Please answer this question", under the question that is still open after a submit.
#[component]
fn MissingNote(
    q: Question,
    missing: RwSignal<Option<Question>>,
    answered: impl Fn() -> bool + Send + Sync + 'static,
    other: impl Fn() -> bool + Send + Sync + 'static,
) -> impl IntoView {
    let other = std::sync::Arc::new(other);
    let text = move || {
        if other() {
            "Please answer this question too: your other answer is kept."
        } else {
            "Please answer both questions."
        }
    };
    view! {
        <Show when=move || missing.get() == Some(q) && !answered()>
            <p class="error missing-note" id=format!("missing-{}", q.field())>
                {text.clone()}
            </p>
        </Show>
    }
}
