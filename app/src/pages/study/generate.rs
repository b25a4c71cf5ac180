//! The study page's generator: the engine's transformations of the study's bugs, previewed as
//! diffs, selected, and added as items (admins and researchers).

use std::collections::BTreeSet;

use leptos::prelude::*;

use crate::components::status::ErrorBox;
use crate::pages::annotate::{show_change, where_changed, DiffTable};
use crate::study_api::{
    add_transformations, explain_generation, get_scoring, ProposeTransformations,
};
use natstudy_types::GeneratedPreview;
use natstudy_types::StudyId;
use natstudy_vocab::Operator;

#[component]
pub fn Generate(study: StudyId) -> impl IntoView {
    let preview = ServerAction::<ProposeTransformations>::new();
    let (operators, set_operators) = signal("studied".to_string());
    let (all_sites, set_all_sites) = signal(false);
    let (model, set_model) = signal(String::new());
    let models = Resource::new(|| (), move |_| get_scoring(study));
    let (selected, set_selected) = signal(BTreeSet::<String>::new());
    let add = Action::new(move |keys: &Vec<String>| {
        let keys = keys.clone();
        let request = natstudy_types::GenerateRequest {
            operators: operators.get_untracked(),
            all_sites: all_sites.get_untracked(),
            model: Some(model.get_untracked()).filter(|m| !m.is_empty()),
        };
        async move { add_transformations(study, request, keys).await }
    });
    // "Why not?": per operator, what was kept and which rule refused which sites
    let why = Action::new(move |_: &()| {
        let request = natstudy_types::GenerateRequest {
            operators: operators.get_untracked(),
            all_sites: all_sites.get_untracked(),
            model: None,
        };
        async move { explain_generation(study, request).await }
    });
    // what was added leaves the list (until the next preview, which proposes it no more)
    let (added, set_added) = signal(BTreeSet::<String>::new());
    let changed = use_context::<super::StudyChanged>();
    Effect::watch(
        move || add.version().get(),
        move |_, _, _| {
            if matches!(add.value().get_untracked(), Some(Ok(_))) {
                set_added.update(|a| a.extend(selected.get_untracked()));
                if let Some(c) = changed {
                    c.bump();
                }
            }
            set_selected.set(BTreeSet::new());
        },
        false,
    );
    Effect::watch(
        move || preview.version().get(),
        move |_, _, _| {
            set_selected.set(BTreeSet::new());
            set_added.set(BTreeSet::new());
        },
        false,
    );
    let list = move || preview.value().get();
    // side by side where there is room for it; unified on a narrow screen
    let (unified, set_unified) = signal(false);
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        let narrow = window()
            .inner_width()
            .ok()
            .and_then(|w| w.as_f64())
            .is_some_and(|w| w < 900.0);
        set_unified.set(narrow);
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = set_unified;
    view! {
        <section class="card" id="generate">
            <h2>"Generate transformations"</h2>
            <p class="muted">"The built-in engine rewrites each bug's method; only applications that change a buggy line are proposed unless you ask for all. Transformations already in the study are not proposed again."</p>
            <ActionForm action=preview attr:id="generate-form" attr:class="row">
                <input type="hidden" name="study" value=study.get() />
                <select name="operators" id="generate-operators" aria-label="Operators to apply"
                    on:change=move |ev| set_operators.set(event_target_value(&ev))>
                    <option value="studied">"the study's 18 operators"</option>
                    <option value="all">"all 24 operators"</option>
                    {Operator::ALL.iter().map(|o| view! { <option value=o.name()>{o.name()}</option> }).collect_view()}
                </select>
                <label>
                    <input type="checkbox" name="all_sites" id="generate-all-sites"
                        on:change=move |ev| set_all_sites.set(event_target_checked(&ev)) />
                    " also away from the buggy lines"
                </label>
                <Transition fallback=|| ()>
                    {move || Suspend::new(async move {
                        let names = models.await.map(|v| v.models).unwrap_or_default();
                        view! {
                            <select name="model" id="generate-model" aria-label="Names for RenameVariable-2"
                                on:change=move |ev| set_model.set(event_target_value(&ev))>
                                <option value="">"RenameVariable-2: conventional names"</option>
                                {names.into_iter().filter(|m| !m.neural).map(|m| {
                                    let label = format!("RenameVariable-2: names ranked by {}", m.name);
                                    view! { <option value=m.name>{label}</option> }
                                }).collect_view()}
                            </select>
                        }
                    })}
                </Transition>
                <button type="submit" id="generate-preview">"Preview"</button>
                <button type="button" id="generate-why" on:click=move |_| { why.dispatch(()); }>"Why not?"</button>
            </ActionForm>
            {move || why.pending().get().then(|| view! { <p class="muted">"explaining…"</p> })}
            {move || why.value().get().map(|r| match r {
                Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                Ok(rows) => view! { <WhyTable rows /> }.into_any(),
            })}
            {move || preview.pending().get().then(|| view! { <p class="muted">"generating…"</p> })}
            {move || list().map(|r| match r {
                Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                Ok(items) => {
                    let items: Vec<GeneratedPreview> = added.with(|a| {
                        items.into_iter().filter(|p| !a.contains(&p.key)).collect()
                    });
                    let all_keys: Vec<String> = items.iter().map(|p| p.key.clone()).collect();
                    let n = items.len();
                    view! {
                        <div class="row">
                            <span id="generate-count">{format!("{n} proposed")}</span>
                            <button type="button" id="generate-select-all"
                                on:click=move |_| set_selected.set(all_keys.iter().cloned().collect())>
                                "Select all"
                            </button>
                            <button type="button" on:click=move |_| set_selected.set(BTreeSet::new())>"None"</button>
                            <button type="button" id="generate-add"
                                disabled=move || selected.with(|s| s.is_empty()) || add.pending().get()
                                on:click=move |_| { add.dispatch(selected.get_untracked().into_iter().collect()); }>
                                {move || format!("Add {} selected as items", selected.with(|s| s.len()))}
                            </button>
                        </div>
                        <ul class="proposals" id="proposals">
                            {items.into_iter().enumerate().map(|(index, p)| view! { <Proposal p index selected set_selected unified /> }).collect_view()}
                        </ul>
                    }.into_any()
                }
            })}
            {move || add.value().get().map(|r| match r {
                Ok(msg) => view! { <p class="ok" id="generate-result">{msg}</p> }.into_any(),
                Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
            })}
        </section>
    }
}

/// One proposal: its checkbox and what it is (bug, operator, summary, the lines it changes) as
/// the checkbox's label, and under it the diff, opened at its first change.
#[component]
fn Proposal(
    p: GeneratedPreview,
    index: usize,
    selected: ReadSignal<BTreeSet<String>>,
    set_selected: WriteSignal<BTreeSet<String>>,
    unified: ReadSignal<bool>,
) -> impl IntoView {
    let key = p.key.clone();
    let key_checked = p.key.clone();
    let title = format!("{} · {} ({}) — ", p.bug_id, p.operator, p.level);
    // two renamings of one name read alike: the lines they change tell them apart
    let lines = format!(" · {}", where_changed(&p.diff));
    let off_bug = (!p.touches_buggy).then_some(" · away from the buggy lines");
    let pick = format!("pick-{index}");
    let table = format!("proposal-{index}");
    let first = format!("{table}-change-1");
    let (open, set_open) = signal(false);
    let diff = p.diff;
    view! {
        <li class="proposal">
            <div class="proposal-head">
                <input type="checkbox" class="proposal-pick" id=pick.clone()
                    prop:checked=move || selected.with(|s| s.contains(&key_checked))
                    on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        let k = key.clone();
                        set_selected.update(|s| { if on { s.insert(k); } else { s.remove(&k); } });
                    } />
                <label for=pick>{title} <crate::text::Summary text=p.summary /> {lines} {off_bug}</label>
            </div>
            // the diff is drawn when opened (a preview of hundreds of proposals stays light),
            // then brought to its first change
            <details on:toggle=move |e| {
                let is_open = event_target::<leptos::web_sys::HtmlDetailsElement>(&e).open();
                set_open.set(is_open);
                if is_open {
                    let first = first.clone();
                    request_animation_frame(move || show_change(&first));
                }
            }>
                <summary>"Diff"</summary>
                <Show when=move || open.get()>
                    <DiffTable rows=diff.clone() original_left=true unified id=table.clone() navigate=true />
                </Show>
            </details>
        </li>
    }
}

/// Per operator: applications kept over the study's bugs and the rules that refused sites.
#[component]
fn WhyTable(rows: Vec<natstudy_types::OperatorWhy>) -> impl IntoView {
    view! {
        <table class="grid why" id="why">
                <thead><tr><th>"Operator"</th><th>"Kept"</th><th>"Refused sites: how often, why, e.g. where"</th></tr></thead>
                <tbody>
                    {rows.into_iter().map(|r| view! {
                        <tr>
                            <td>{r.operator}</td>
                            <td>{r.kept}</td>
                            <td>
                                <ul class="refusals">
                                    {r.refusals.into_iter().map(|x| view! {
                                        <li>{format!("{} × {} (e.g. {})", x.count, x.rule, x.example)}</li>
                                    }).collect_view()}
                                </ul>
                            </td>
                        </tr>
                    }).collect_view()}
                </tbody>
        </table>
    }
}
