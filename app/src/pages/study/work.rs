//! The study page's working parts: the live monitor (`monitor.rs`: batches, invites, pilots
//! and drop-outs), settings and uploads. Researchers see the monitor; admins also act.

use leptos::prelude::*;

use super::monitor::MonitorView;
use crate::components::refresh::Refresh;
use crate::components::status::{ErrorBox, Loading};
use crate::study_api::{
    get_monitor, ClearPilot, CloseInvite, CreateBatch, CreateInvite, ImportUpload, MoveAnnotator,
    PilotLink, ReleaseAnnotator, ReleaseIdle, SaveSettings, SetAttentionItem, SetBatchLease,
    SetExclusion,
};
use natstudy_types::StudyId;
use natstudy_types::StudySettingsForm;

#[component]
pub fn StudyWork(study: StudyId) -> impl IntoView {
    let user = expect_context::<crate::components::layout::CurrentUser>();
    let is_admin = move || async move {
        matches!(user.await, Ok(Some(u)) if u.role == natstudy_types::Role::Admin)
    };
    let settings = ServerAction::<SaveSettings>::new();
    let upload = ServerAction::<ImportUpload>::new();
    let batch = ServerAction::<CreateBatch>::new();
    let invite = ServerAction::<CreateInvite>::new();
    let close = ServerAction::<CloseInvite>::new();
    let release = ServerAction::<ReleaseAnnotator>::new();
    let moved = ServerAction::<MoveAnnotator>::new();
    let lease = ServerAction::<SetBatchLease>::new();
    let idle = ServerAction::<ReleaseIdle>::new();
    let exclusion = ServerAction::<SetExclusion>::new();
    let pilot = (
        ServerAction::<PilotLink>::new(),
        ServerAction::<ClearPilot>::new(),
    );
    // live: read again three seconds after each answer
    let refresh = Refresh::after(std::time::Duration::from_secs(3));
    let monitor = Resource::new(
        move || {
            (
                refresh.tick(),
                settings.version().get(),
                upload.version().get(),
                batch.version().get(),
                release.version().get(),
                moved.version().get(),
                lease.version().get(),
                idle.version().get(),
                (
                    exclusion.version().get(),
                    pilot.0.version().get(),
                    pilot.1.version().get(),
                ),
                invite.version().get(),
                close.version().get(),
            )
        },
        move |_| refresh.read(get_monitor(study)),
    );
    view! {
        <Transition fallback=Loading>
            {move || Suspend::new(async move {
                let admin = is_admin().await;
                match monitor.await {
                    Ok(m) => view! { <MonitorView study m admin release moved lease idle exclusion pilot invite close /> }.into_any(),
                    Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                }
            })}
        </Transition>
        <super::generate::Generate study />
        <super::scoring::Scoring study />
        <super::members::Members study />
        <Suspense fallback=|| ()>
        {move || Suspend::new(async move { is_admin().await.then(|| view! {
            <Upload study upload />
            <section class="card">
                <h2>"Build a batch"</h2>
                <ActionForm action=batch attr:id="batch-form" attr:class="row">
                    <input type="hidden" name="study" value=study.get() />
                    <label>"Name" <input type="text" name="name" placeholder="e.g. wave-1" required /></label>
                    <label>"Assignment"
                        <select name="strategy">
                            <option value="dynamic_queue">"dynamic queue (leases)"</option>
                            <option value="fixed_groups">"fixed groups of k"</option>
                        </select>
                    </label>
                    <label>"Level"
                        <select name="level">
                            <option value="">"all levels"</option>
                            <option value="naming">"naming"</option>
                            <option value="expression">"expression"</option>
                            <option value="statement">"statement"</option>
                        </select>
                    </label>
                    <label>"Sample size" <input type="number" name="sample" placeholder="all items" min="1" /></label>
                    <label>"Participants to create" <input type="number" name="pool" placeholder="0 (join by invite)" min="0" /></label>
                    <label>"Random seed" <input type="number" name="seed" value="1" /></label>
                    <label class="check"><input type="checkbox" name="verified" id="batch-verified" />" only verified items (natstudy verify: compiles, tests as the original)"</label>
                    <button type="submit" id="batch-submit">"Build"</button>
                </ActionForm>
                {move || batch.value().get().map(|r| match r {
                    Ok(msg) => view! { <p class="ok" id="batch-result">{msg}</p> }.into_any(),
                    Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                })}
            </section>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    monitor.await.ok().map(|m| view! { <SettingsForm study s=m.settings settings /> })
                })}
            </Transition>
            <AttentionItems study />
        })})}
        </Suspense>
    }
}

#[component]
fn SettingsForm(
    study: StudyId,
    s: StudySettingsForm,
    settings: ServerAction<SaveSettings>,
) -> impl IntoView {
    view! {
        <section class="card">
            <h2>"Settings"</h2>
            <ActionForm action=settings attr:id="settings-form">
                <input type="hidden" name="study" value=study.get() />
                <label>"Ratings per item (k)" <input type="number" name="ratings_per_item" min="1" max="50" value=s.ratings_per_item /></label>
                <label class="check"><input type="checkbox" name="blind_operator" checked=s.blind_operator /> " Hide the operator name from participants"</label>
                <label class="check"><input type="checkbox" name="blind_bug_id" checked=s.blind_bug_id /> " Hide the bug id from participants"</label>
                <label class="check"><input type="checkbox" name="randomise_sides" checked=s.randomise_sides /> " Randomise which side shows the original (recorded per vote)"</label>
                <label>"Completion code shown at the end" <input type="text" name="completion_code" value=s.completion_code /></label>
                <label>"Rated items needed for the completion code (0: none needed; a participant of a full study rates none)" <input type="number" name="min_rated_for_code" min="0" max="100000" value=s.min_rated_for_code /></label>
                <fieldset id="crowd-settings">
                    <legend>"Paid crowd study (Prolific, MTurk, SONA)"</legend>
                    <label>"Items per participant (N; empty: all they can be given). The completion code comes after N ratings, or when no item can come to them any more"
                        <input type="number" name="crowd[items_per_participant]" min="1" max="100000" value=s.items_per_participant.map(|n| n.to_string()).unwrap_or_default() /></label>
                    <label>"Completion URL: where a finished participant is sent; {code} stands for their code (e.g. https://app.prolific.com/submissions/complete?cc={code})"
                        <input type="url" name="crowd[completion_url]" maxlength="2000" value=s.completion_url /></label>
                    <label>"Partial code: for a participant who stops after waiting for items others hold (empty: none)"
                        <input type="text" name="crowd[partial_code]" value=s.partial_code /></label>
                    <label>"Minutes of waiting before the partial code is offered (empty: never)"
                        <input type="number" name="crowd[partial_after_minutes]" min="0" max="10080" value=s.partial_after_minutes.map(|n| n.to_string()).unwrap_or_default() /></label>
                    <label>"Screen-out code: for a participant the screener turns away (a question's \"screen_out\" options)"
                        <input type="text" name="crowd[screenout_code]" value=s.screenout_code /></label>
                    <label>"Speeders: flag a participant whose median time on item is under this many seconds (empty: none)"
                        <input type="number" name="crowd[speeder_seconds]" min="1" max="3600" value=s.speeder_seconds.map(|n| n.to_string()).unwrap_or_default() /></label>
                    <label>"Attention items: end the survey with the screen-out code after this many gold items answered against their expected answer (the first is pointed out once; empty: never)"
                        <input type="number" name="crowd[gold_failures]" min="1" max="100" value=s.gold_failures.map(|n| n.to_string()).unwrap_or_default() /></label>
                    <label>"Screen-out URL ({code}: the screen-out code)"
                        <input type="url" name="crowd[screenout_url]" maxlength="2000" value=s.screenout_url /></label>
                    <label class="check"><input type="checkbox" name="crowd[pilot]" id="settings-pilot" checked=s.pilot />
                        " Pilot phase: invite links made now are pilot links; their participants' ratings count toward no k, no figure and no export but the pilot export"</label>
                </fieldset>
                <label>"Guideline (markdown)" <textarea name="guideline" rows="10">{s.guideline}</textarea></label>
                <label>"Consent text (empty: the default)" <textarea name="consent_text" rows="3">{s.consent_text}</textarea></label>
                <label>
                    "Screener questions as JSON, e.g. [{\"name\": \"years\", \"label\": \"Years of Java\", \"options\": [\"<1\", \"1-3\", \">3\"], \"screen_out\": [\"<1\"]}] ([] for the default; \"screen_out\": answers that turn a participant away)"
                    <textarea name="screener_json" rows="4">{s.screener_json}</textarea>
                </label>
                <button type="submit">"Save settings"</button>
            </ActionForm>
            {move || settings.value().get().map(|r| match r {
                Ok(()) => view! { <p class="ok">"Saved."</p> }.into_any(),
                Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
            })}
        </section>
    }
}

/// Attention (gold) items: an item with the judgement every attentive participant gives it;
/// answered against it, the participant is told once, and the study's limit ends their
/// survey (Settings). Works as a plain form without JavaScript.
#[component]
fn AttentionItems(study: StudyId) -> impl IntoView {
    let set = ServerAction::<SetAttentionItem>::new();
    view! {
        <section class="card">
            <h2>"Attention items"</h2>
            <p class="muted">"An item every attentive participant judges the same way (e.g. a transformation that plainly breaks the conventions). Its expected judgement: natural (both answers 1 or 2) or unnatural (either 3 or 4)."</p>
            <ActionForm action=set attr:id="attention-form" attr:class="row">
                <input type="hidden" name="study" value=study.get() />
                <label>"Item id" <input type="text" name="item" id="attention-item" required maxlength="1000" placeholder="e.g. Lang-1_RenameVariable_0" /></label>
                <label>"Expected"
                    <select name="expect" id="attention-expect">
                        <option value="unnatural">"unnatural"</option>
                        <option value="natural">"natural"</option>
                        <option value="none">"none (no longer an attention item)"</option>
                    </select>
                </label>
                <button type="submit" id="attention-submit">"Set"</button>
            </ActionForm>
            {move || set.value().get().map(|r| match r {
                Ok(msg) => view! { <p class="ok" id="attention-result">{msg}</p> }.into_any(),
                Err(e) => view! { <div id="attention-error"><ErrorBox message=e.to_string() /></div> }.into_any(),
            })}
        </section>
    }
}

/// Uploads: the browser reads the chosen files and sends their text; the server validates
/// everything before writing anything.
#[component]
fn Upload(study: StudyId, upload: ServerAction<ImportUpload>) -> impl IntoView {
    // an import changes the study's counts: the page's summary reloads
    if let Some(changed) = use_context::<super::StudyChanged>() {
        Effect::watch(
            move || upload.version().get(),
            move |_, _, _| {
                if matches!(upload.value().get_untracked(), Some(Ok(_))) {
                    changed.bump();
                }
            },
            false,
        );
    }
    let (kind, set_kind) = signal("items".to_string());
    let files_ref = NodeRef::<leptos::html::Input>::new();
    let (reading, set_reading) = signal(false);
    let on_import = move |_| {
        #[cfg(feature = "hydrate")]
        {
            let Some(input) = files_ref.get_untracked() else {
                return;
            };
            let Some(list) = input.files() else { return };
            let files: Vec<leptos::web_sys::File> =
                (0..list.length()).filter_map(|i| list.get(i)).collect();
            let kind = kind.get_untracked();
            set_reading.set(true);
            leptos::task::spawn_local(async move {
                let mut read = Vec::new();
                for f in files {
                    let text = if kind == "bugs" {
                        // a zip: its bytes as base64 (the upload is JSON text)
                        let bytes = wasm_bindgen_futures::JsFuture::from(f.array_buffer())
                            .await
                            .map(|b| js_sys::Uint8Array::new(&b).to_vec())
                            .unwrap_or_default();
                        let binary: String = bytes.iter().map(|&b| char::from(b)).collect();
                        window().btoa(&binary).unwrap_or_default()
                    } else {
                        wasm_bindgen_futures::JsFuture::from(f.text())
                            .await
                            .ok()
                            .and_then(|v| v.as_string())
                            .unwrap_or_default()
                    };
                    read.push((f.name(), text));
                }
                // bugs first, then transformations
                read.sort_by_key(|(name, _)| !name.contains("bug"));
                set_reading.set(false);
                upload.dispatch(ImportUpload {
                    study,
                    kind,
                    files: read,
                });
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (files_ref, set_reading, study, kind);
    };
    view! {
        <section class="card">
            <h2>"Import"</h2>
            <div class="row">
                <select id="upload-kind" aria-label="What to import" on:change=move |e| set_kind.set(event_target_value(&e))>
                    <option value="items">"items: bugs.jsonl + transformations.jsonl"</option>
                    <option value="votes">"votes: survey.json"</option>
                    <option value="npr">"repair results: npr_results.csv"</option>
                    <option value="ce">"cross-entropy: ce_scores.csv"</option>
                    <option value="bugs">"bugs from a dataset: a zip of buggy/fixed checkouts with pairs.csv"</option>
                </select>
                <input type="file" id="upload-files" multiple node_ref=files_ref aria-label="Files to import" />
                <button type="button" id="upload-submit" on:click=on_import disabled=move || reading.get() || upload.pending().get()>
                    "Import"
                </button>
            </div>
            {move || upload.value().get().map(|r| match r {
                Ok(msg) => view! { <p class="ok" id="upload-result">{msg}</p> }.into_any(),
                Err(e) => view! { <pre class="error" id="upload-error">{e.to_string().replace("error running server function: ", "")}</pre> }.into_any(),
            })}
            <p class="muted">"Every import is checked before anything is written; a file imported twice changes nothing."</p>
        </section>
    }
}
