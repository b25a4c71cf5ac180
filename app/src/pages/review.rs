//! Patch review: `/studies/:id/review`, where a reviewer judges plausible patches one by one
//! (keys `c` correct, `w` not equivalent, `u` unsure; a plain form without JavaScript), and
//! `/studies/:id/review/decide`, where admins decide disagreements and may send automatic
//! decisions back to people.

use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use crate::components::status::{ErrorBox, Loading};
use crate::pages::annotate::DiffTable;
use crate::review_api::{
    get_review, get_review_overview, CreateReviewInvite, CreateReviews, RuleReview, SubmitReview,
};
use natstudy_types::{ReviewItem, StudyId};

fn study_id() -> impl Fn() -> StudyId + Copy {
    let params = use_params_map();
    move || {
        params.with(|p| {
            p.get("id")
                .and_then(|s| s.parse::<StudyId>().ok())
                .unwrap_or(StudyId(0))
        })
    }
}

/// One patch: the buggy method against the tool's patch and against the developer's fix.
#[component]
fn ReviewForm(
    study: StudyId,
    item: ReviewItem,
    submit: ServerAction<SubmitReview>,
) -> impl IntoView {
    let (unified, _) = signal(true);
    let form_ref = NodeRef::<leptos::html::Form>::new();
    #[cfg(feature = "hydrate")]
    {
        // keys act everywhere but in the note
        let keys = window_event_listener(leptos::ev::keydown, move |e| {
            let typing = e
                .target()
                .and_then(|t| {
                    leptos::wasm_bindgen::JsCast::dyn_into::<leptos::web_sys::Element>(t).ok()
                })
                .is_some_and(|el| matches!(el.tag_name().as_str(), "TEXTAREA" | "SELECT"));
            if typing || e.ctrl_key() || e.meta_key() || e.alt_key() {
                return;
            }
            let value = match e.key().as_str() {
                "c" => "correct",
                "w" => "wrong",
                "u" => "unsure",
                _ => return,
            };
            e.prevent_default();
            if let Some(el) = document().get_element_by_id(&format!("verdict-{value}")) {
                if let Ok(input) =
                    leptos::wasm_bindgen::JsCast::dyn_into::<leptos::web_sys::HtmlInputElement>(el)
                {
                    input.set_checked(true);
                }
            }
            if let Some(form) = form_ref.get_untracked() {
                let _ = form.request_submit();
            }
        });
        on_cleanup(move || keys.remove());
    }
    let fix = item.fix_diff.clone();
    view! {
        <section class="card">
            <p class="muted" id="review-progress">
                {format!("{} reviewed, {} to go", item.done, item.left)}
            </p>
            <h2 id="review-target">"Target " <code>{item.target.clone()}</code></h2>
            <p id="review-outcome">"The tool's patch passes the target's tests (a plausible patch). Is it semantically equivalent to the developer's fix?"</p>
            <h3>"The tool's patch"</h3>
            <DiffTable rows=item.patch_diff.clone() original_left=true unified labels=("Buggy", "Patched") id="patch-diff" />
            <h3>"The developer's fix"</h3>
            {match fix {
                Some(rows) => view! {
                    <DiffTable rows original_left=true unified labels=("Buggy", "Fixed") id="fix-diff" />
                }.into_any(),
                None => view! { <p class="muted" id="no-fix">"The developer's fixed method of this target is not known: judge the patch against the bug."</p> }.into_any(),
            }}
        </section>
        <ActionForm action=submit node_ref=form_ref attr:id="review-form" attr:class="card questions">
            <input type="hidden" name="study" value=study.to_string() />
            <input type="hidden" name="task" value=item.task.to_string() />
            <fieldset>
                <legend>"Is the patch semantically equivalent to the developer's fix?"</legend>
                <label><input type="radio" name="verdict" value="correct" id="verdict-correct" required /> " Correct — equivalent " <kbd>"c"</kbd></label>
                <label><input type="radio" name="verdict" value="wrong" id="verdict-wrong" /> " Not equivalent " <kbd>"w"</kbd></label>
                <label><input type="radio" name="verdict" value="unsure" id="verdict-unsure" /> " Unsure " <kbd>"u"</kbd></label>
            </fieldset>
            <label for="review-note">"Note (optional)"</label>
            <textarea name="note" id="review-note" rows="2" maxlength="5000"></textarea>
            <p class="hint">"Keys: " <kbd>"c"</kbd> " correct, " <kbd>"w"</kbd> " not equivalent, " <kbd>"u"</kbd> " unsure (outside the note)."</p>
            <button type="submit" id="review-submit">"Submit"</button>
        </ActionForm>
    }
}

/// `/studies/:id/review`: the reviewer's next patch.
#[component]
pub fn ReviewPage() -> impl IntoView {
    let id = study_id();
    let submit = ServerAction::<SubmitReview>::new();
    let next = Resource::new(
        move || (id(), submit.version().get()),
        |(s, _)| get_review(s),
    );
    Effect::new(move |_| {
        if submit.version().get() > 0 {
            window().scroll_to_with_x_and_y(0.0, 0.0);
        }
    });
    view! {
        <leptos_meta::Title text="Patch review" />
        <h1>"Patch review"</h1>
        {move || submit.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
        <Transition fallback=Loading>
            {move || Suspend::new(async move {
                match next.await {
                    Ok(Some(item)) => view! { <ReviewForm study=id() item submit /> }.into_any(),
                    Ok(None) => view! {
                        <section class="card"><p id="review-done">"Nothing left to review in this study. Thank you!"</p></section>
                    }.into_any(),
                    Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                }
            })}
        </Transition>
    }
}

/// `/studies/:id/review/decide`: disagreements for admins to decide, automatic decisions to
/// send back.
#[component]
pub fn ReviewDecidePage() -> impl IntoView {
    let id = study_id();
    let rule = ServerAction::<RuleReview>::new();
    let create = ServerAction::<CreateReviews>::new();
    let invite = ServerAction::<CreateReviewInvite>::new();
    let overview = Resource::new(
        move || (id(), rule.version().get(), create.version().get()),
        |(s, _, _)| get_review_overview(s),
    );
    let (unified, _) = signal(true);
    let ruling_form =
        move |tool: String, target: String, ruling: &'static str, label: &'static str| {
            view! {
                <ActionForm action=rule attr:class="inline">
                    <input type="hidden" name="study" value=id().to_string() />
                    <input type="hidden" name="tool" value=tool />
                    <input type="hidden" name="target" value=target />
                    <input type="hidden" name="ruling" value=ruling />
                    <button type="submit" class=format!("rule-{ruling}")>{label}</button>
                </ActionForm>
            }
        };
    view! {
        <leptos_meta::Title text="Patch review: decisions" />
        <h1>"Patch review: decisions"</h1>
        <p><a href=move || format!("/studies/{}", id())>"Back to the study"</a></p>
        {move || rule.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
        <ActionForm action=create attr:id="review-create" attr:class="card">
            <h2>"Build the review queue"</h2>
            <p class="table-note">"Every plausible result with a patch becomes a task: no-op and SYE patches are decided at once, another tool's identical patch is reviewed once, the rest wait for reviewers (members of the study open " <code>"/studies/ID/review"</code> "). Running it again adds only new patches."</p>
            <input type="hidden" name="study" value=move || id().to_string() />
            <label for="review-k">"Reviewers per patch"</label>
            <input type="number" name="k" id="review-k" min="1" max="10" value="2" required />
            <button type="submit" id="review-create-submit">"Build"</button>
            {move || create.value().get().map(|r| match r {
                Ok(msg) => view! { <p id="review-create-result">{msg}</p> }.into_any(),
                Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
            })}
        </ActionForm>
        <ActionForm action=invite attr:id="review-invite" attr:class="card">
            <h2>"Invite reviewers"</h2>
            <p class="table-note">"A review-only link: whoever opens it reviews this study's patches without an account (and takes no survey). Accounts that are members of the study review at " <code>"/studies/ID/review"</code> "."</p>
            <input type="hidden" name="study" value=move || id().to_string() />
            <label for="review-invite-cap">"How many reviewers the link admits"</label>
            <input type="number" name="cap" id="review-invite-cap" min="1" max="1000" value="2" required />
            <button type="submit" id="review-invite-submit">"Make a link"</button>
            {move || invite.value().get().map(|r| match r {
                Ok(path) => {
                    let url = format!("{}{path}", window().location().origin().unwrap_or_default());
                    view! { <p>"Link: " <a id="review-invite-link" href=url.clone()>{url.clone()}</a></p> }.into_any()
                }
                Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
            })}
        </ActionForm>
        <Transition fallback=Loading>
            {move || Suspend::new(async move {
                match overview.await {
                    Ok(o) => view! {
                        <section class="card">
                            <p id="review-counts">{format!("{} patches: {} decided, {} waiting for reviewers, {} disagreements to decide.", o.tasks, o.decided, o.pending, o.open.len())}</p>
                        </section>
                        <section class="card" id="disagreements">
                            <h2>"Disagreements"</h2>
                            <p class="table-note">"The reviewers did not all say correct or all say not equivalent: decide. Their verdicts stay recorded."</p>
                            {if o.open.is_empty() { Some(view! { <p id="no-disagreements">"None."</p> }) } else { None }}
                            {o.open.into_iter().map(|row| {
                                let verdicts = row.verdicts.iter().map(|(r, v, n)| {
                                    let n = if n.is_empty() { String::new() } else { format!(" — {n}") };
                                    view! { <li>{format!("{r}: {v}{n}")}</li> }
                                }).collect_view();
                                view! {
                                    <article class="disagreement">
                                        <h3>{format!("{} · {}", row.tool, row.target)}</h3>
                                        <ul>{verdicts}</ul>
                                        <details>
                                            <summary>"Patch and fix"</summary>
                                            <DiffTable rows=row.patch_diff original_left=true unified labels=("Buggy", "Patched") id="patch-diff" />
                                            {row.fix_diff.map(|rows| view! { <DiffTable rows original_left=true unified labels=("Buggy", "Fixed") id="fix-diff" /> })}
                                        </details>
                                        <div class="row">
                                            {ruling_form(row.tool.clone(), row.target.clone(), "correct", "Correct")}
                                            {ruling_form(row.tool, row.target, "wrong", "Not equivalent")}
                                        </div>
                                    </article>
                                }
                            }).collect_view()}
                        </section>
                        <section class="card" id="automatic">
                            <h2>"Decided automatically"</h2>
                            <p class="table-note">"No-op, SYE and TCE decisions; send one back and reviewers judge it."</p>
                            <table class="grid">
                                <thead><tr><th>"Tool"</th><th>"Target"</th><th>"Why"</th><th><span class="visually-hidden">"Decision"</span></th></tr></thead>
                                <tbody>
                                    {o.automatic.into_iter().map(|(tool, target, why)| view! {
                                        <tr><td>{tool.clone()}</td><td>{target.clone()}</td><td>{why}</td><td>{ruling_form(tool, target, "send-back", "Send back")}</td></tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        </section>
                    }.into_any(),
                    Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                }
            })}
        </Transition>
    }
}
