//! The study page's working parts: the live monitor, settings, uploads, batches, invites and
//! drop-out handling. Researchers see the monitor; admins also act.

use leptos::prelude::*;

use crate::components::refresh::Refresh;
use crate::components::status::{ErrorBox, Loading};
use crate::study_api::{
    get_monitor, ClearPilot, CloseInvite, CreateBatch, CreateInvite, ImportUpload, MoveAnnotator,
    PilotLink, ReleaseAnnotator, ReleaseIdle, SaveSettings, SetBatchLease, SetExclusion,
};
use natstudy_types::StudyId;
use natstudy_types::{Monitor, StudySettingsForm};

/// The time now, in ms since the epoch (the browser's clock in the browser).
fn now_ms() -> i64 {
    #[cfg(feature = "hydrate")]
    let now = js_sys::Date::now() as i64;
    #[cfg(not(feature = "hydrate"))]
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    now
}

fn ago(ms: Option<i64>) -> String {
    match ms {
        None => "never".into(),
        Some(t) => {
            let now = now_ms().max(t);
            let s = (now - t).max(0) / 1000;
            if s < 90 {
                format!("{s} s ago")
            } else if s < 5400 {
                format!("{} min ago", s / 60)
            } else {
                format!("{} h ago", s / 3600)
            }
        }
    }
}

/// Monitor + admin tools for one study. Rendered outside any `Suspend` (its resources must be
/// created once, at component level, for hydration); the viewer's role is awaited where needed.
/// A batch strategy as people say it.
fn strategy_words(s: &str) -> &'static str {
    match s {
        "dynamic_queue" => "dynamic queue",
        "fixed_groups" => "fixed groups of k",
        _ => "other",
    }
}

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
        })})}
        </Suspense>
    }
}

#[component]
fn MonitorView(
    study: StudyId,
    m: Monitor,
    admin: bool,
    release: ServerAction<ReleaseAnnotator>,
    moved: ServerAction<MoveAnnotator>,
    lease: ServerAction<SetBatchLease>,
    idle: ServerAction<ReleaseIdle>,
    exclusion: ServerAction<SetExclusion>,
    pilot: (ServerAction<PilotLink>, ServerAction<ClearPilot>),
    invite: ServerAction<CreateInvite>,
    close: ServerAction<CloseInvite>,
) -> impl IntoView {
    let invites = m.invites.clone();
    // holders who have done nothing for the minutes asked (ten by default), counted here
    let (idle_minutes, set_idle_minutes) = signal(10i64);
    let holders: Vec<Option<i64>> = m
        .annotators
        .iter()
        .filter(|a| a.leases > 0 && !a.finished)
        .map(|a| a.last_active_ms)
        .collect();
    let idle_holders = move || {
        let cutoff = now_ms() - idle_minutes.get().max(0) * 60_000;
        holders
            .iter()
            .filter(|t| t.is_none_or(|t| t < cutoff))
            .count()
    };
    let (no_annotators, no_batches) = (m.annotators.is_empty(), m.batches.is_empty());
    let columns = |n: usize| if admin { n + 1 } else { n };
    let max = m.items_with.iter().copied().max().unwrap_or(1).max(1);
    let total_votes: i64 = m
        .items_with
        .iter()
        .enumerate()
        .map(|(n, c)| n as i64 * c)
        .sum();
    let (kappa, kappa_why) = crate::text::live_kappa(m.fleiss_kappa, m.complete_items);
    // a crowd study: the work asked of each participant, and how many participants the items
    // need (every item's k ratings, N a participant)
    let per_participant = m.settings.items_per_participant;
    let items: i64 = m.items_with.iter().sum();
    let needed = per_participant
        .filter(|&n| n > 0)
        .map(|n| (items.saturating_mul(m.k) + n - 1) / n);
    view! {
        // scrolls sideways on a phone: a region the keyboard reaches
        <section class="card" id="monitor" tabindex="0" role="region" aria-label="Live monitor">
            <h2>"Monitor"</h2>
            <p>
                <b id="monitor-votes">{total_votes}</b> " ratings · "
                <b>{m.complete_items}</b> " items complete (k = " {m.k} ") · Fleiss' κ so far: "
                <b id="live-kappa">{kappa}</b>
                {kappa_why.map(|w| view! { <span class="muted" id="kappa-why">" (" {w} ")"</span> })}
            </p>
            {per_participant.zip(needed).map(|(n, needed)| view! {
                <p id="participants-needed">
                    {format!("{} per participant: the {} need {} ({items} × k {} ÷ {n}, rounded up).",
                        crate::text::count(n, "item"), crate::text::count(items, "item"),
                        crate::text::count(needed, "participant"), m.k)}
                </p>
            })}
            <div class="hist" id="ratings-hist">
                {m.items_with
                    .iter()
                    .enumerate()
                    .map(|(n, c)| {
                        let w = format!("width: {}%", c * 100 / max);
                        view! {
                            <div class="hist-row">
                                <span class="hist-label">{n} " " {crate::text::noun(n as i64, "rating")}</span>
                                <span class="hist-bar" style=w></span>
                                <span class="hist-count" id=format!("items-with-{n}")>{*c}</span>
                            </div>
                        }
                    })
                    .collect_view()}
            </div>
            <h3>"Annotators"</h3>
            <table class="grid" id="annotators">
                <thead>
                    <tr>
                        <th>"Code"</th><th>"Account or platform id"</th><th class="num">"Rated"</th><th>"Last active"</th>
                        <th class="num">"Median time (s)"</th><th class="num">"Gold"</th><th>"State"</th>
                        <th>"Analysis"</th>
                        {admin.then(|| view! { <th>"Drop-out"</th> })}
                    </tr>
                </thead>
                <tbody>
                    {no_annotators.then(|| view! {
                        <tr><td colspan=columns(8) class="muted" id="no-annotators">"No annotators yet: participants join through an invite link, annotators come with a batch or with imported votes."</td></tr>
                    })}
                    {m.annotators
                        .into_iter()
                        .map(|a| {
                            let id = a.id;
                            let code = a.code.clone();
                            let excluded = a.excluded.clone();
                            view! {
                                <tr>
                                    <td>{a.code.clone()}</td>
                                    <td>{a.account.clone().or_else(|| a.external_id.clone()).unwrap_or_default()}</td>
                                    <td class="num">{a.done} " / " {per_participant.unwrap_or(a.total)}</td>
                                    <td>{if a.imported { "imported".to_owned() } else { ago(a.last_active_ms) }}</td>
                                    <td class="num">{a.median_time.map(|t| format!("{t:.1}")).unwrap_or_default()}</td>
                                    <td class="num">{if a.gold_seen > 0 { format!("{}/{}", a.gold_correct, a.gold_seen) } else { String::new() }}</td>
                                    <td>
                                        {if a.imported { "imported" } else if a.finished { "finished" } else { "active" }}
                                        {(a.leases > 0).then(|| format!(" · holds {}", a.leases))}
                                        {a.speeder.then(|| view! { <span class="notice speeder">" · speeder"</span> })}
                                    </td>
                                    <td class="exclusion">
                                        {excluded.clone().map(|why| view! { <span class="notice excluded">"excluded: " {why}</span> })}
                                        <ActionForm action=exclusion attr:class="inline exclusion-form">
                                            <input type="hidden" name="study" value=study.get() />
                                            <input type="hidden" name="annotator" value=id.get() />
                                            <input type="hidden" name="exclude" value=if excluded.is_some() { "false" } else { "true" } />
                                            <input type="text" name="reason" required maxlength="500" size="12"
                                                placeholder="reason"
                                                aria-label=format!("Reason to {} {code}", if excluded.is_some() { "include" } else { "exclude" }) />
                                            <button type="submit" class="secondary">{if excluded.is_some() { "Include" } else { "Exclude" }}</button>
                                        </ActionForm>
                                    </td>
                                    {(admin && (a.finished || a.imported)).then(|| view! { <td class="muted">"nothing left to hand on"</td> })}
                                    {(admin && !a.finished && !a.imported).then(|| view! {
                                        <td class="row">
                                            <ActionForm action=release attr:class="inline">
                                                <input type="hidden" name="study" value=study.get() />
                                                <input type="hidden" name="annotator" value=id.get() />
                                                <button type="submit" class="secondary">"Release"</button>
                                            </ActionForm>
                                            <ActionForm action=moved attr:class="inline">
                                                <input type="hidden" name="study" value=study.get() />
                                                <input type="hidden" name="annotator" value=id.get() />
                                                <label>"to" <input type="text" name="to" placeholder="S2" size="5" required /></label>
                                                <button type="submit" class="secondary">"Move"</button>
                                            </ActionForm>
                                        </td>
                                    })}
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
            {move || release.value().get().map(|r| match r {
                Ok(n) => view! { <p class="ok">{n} " items released"</p> }.into_any(),
                Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
            })}
            {move || exclusion.value().get().map(|r| match r {
                Ok(msg) => view! { <p class="ok" id="exclusion-result">{msg}</p> }.into_any(),
                Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
            })}
            {move || moved.value().get().map(|r| match r {
                Ok(n) => view! { <p class="ok">{n} " items moved"</p> }.into_any(),
                Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
            })}
            <p id="idle-holders">
                <b id="idle-count">{idle_holders}</b>
                " participants hold items and have done nothing for " {move || idle_minutes.get()} " minutes."
            </p>
            {admin.then(|| view! {
                <ActionForm action=idle attr:id="release-idle-form" attr:class="row">
                    <input type="hidden" name="study" value=study.get() />
                    <label>"Idle for at least (minutes)"
                        <input type="number" name="minutes" min="1" max="10080" value="10" id="idle-minutes"
                            on:input=move |e| {
                                if let Ok(v) = event_target_value(&e).parse::<i64>() {
                                    set_idle_minutes.set(v);
                                }
                            } />
                    </label>
                    <button type="submit" class="secondary" id="release-idle">"Release their items"</button>
                </ActionForm>
            })}
            {move || idle.value().get().map(|r| match r {
                Ok((holders, items)) => view! { <p class="ok" id="release-idle-result">{format!("Released {} held by {}.", crate::text::count(items as i64, "item"), crate::text::count(holders as i64, "participant"))}</p> }.into_any(),
                Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
            })}
            <h3>"Batches"</h3>
            <table class="grid" id="batches">
                <thead><tr><th>"Batch"</th><th>"Strategy"</th><th class="num">"Items"</th><th class="num">"Annotators"</th>{admin.then(|| view! { <th>"Invite"</th> })}<th>"Lease (minutes)"</th></tr></thead>
                <tbody>
                    {no_batches.then(|| view! {
                        <tr><td colspan=columns(5) class="muted" id="no-batches">"No batches yet: build one under Build a batch."</td></tr>
                    })}
                    {m.batches
                        .into_iter()
                        .map(|b| view! {
                            <tr>
                                <td>{b.name}</td><td>{strategy_words(&b.strategy)}</td><td class="num">{b.items}</td><td class="num">{b.annotators}</td>
                                {admin.then(|| view! {
                                    <td>
                                        <ActionForm action=invite attr:class="inline">
                                            <input type="hidden" name="study" value=study.get() />
                                            <input type="hidden" name="batch" value=b.id.get() />
                                            <label>"Places" <input type="number" name="cap" value="10" min="1" size="4" /></label>
                                            <button type="submit" class="secondary">"New invite link"</button>
                                        </ActionForm>
                                    </td>
                                })}
                                <td>
                                    {if admin {
                                        view! {
                                            <ActionForm action=lease attr:class="inline lease-form">
                                                <input type="hidden" name="study" value=study.get() />
                                                <input type="hidden" name="batch" value=b.id.get() />
                                                // named by aria-label: a visually hidden label
                                                // is positioned against the page, not this
                                                // scrolling table, and pushed a phone's page
                                                // sideways
                                                <input type="number" name="minutes" min="1" max="1440" size="4" value=b.lease_minutes aria-label="Lease in minutes" />
                                                <button type="submit" class="secondary">"Set"</button>
                                            </ActionForm>
                                        }.into_any()
                                    } else {
                                        view! { <span>{b.lease_minutes}</span> }.into_any()
                                    }}
                                </td>
                            </tr>
                        })
                        .collect_view()}
                </tbody>
            </table>
            {move || invite.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
            {move || lease.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
            <InviteList study invites admin close batches=!no_batches />
            <PilotPanel study admin participants=m.pilot_participants ratings=m.pilot_votes actions=pilot />
        </section>
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

/// Selects a field's whole text when it gets focus (ready to copy).
fn select_all(e: leptos::ev::FocusEvent) {
    event_target::<leptos::web_sys::HtmlInputElement>(&e).select();
}

/// Puts `text` on the clipboard (in the browser; the field beside it can be copied by hand).
fn copy_text(text: &str) {
    #[cfg(feature = "hydrate")]
    {
        let _ = window().navigator().clipboard().write_text(text);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = text;
}

/// The pilot: how many took part and rated (counted nowhere else), a pilot link to try the
/// survey as a participant, the pilot's downloads, and (admins) clearing it.
#[component]
fn PilotPanel(
    study: StudyId,
    admin: bool,
    participants: i64,
    ratings: i64,
    actions: (ServerAction<PilotLink>, ServerAction<ClearPilot>),
) -> impl IntoView {
    let (link, clear) = actions;
    view! {
        <h3>"Pilot"</h3>
        <p id="pilot-summary">
            {format!(
                "{} with {}: in no count or figure above, no result and no export but the pilot's own.",
                crate::text::count(participants, "pilot participant"),
                crate::text::count(ratings, "rating")
            )}
            " "
            <a href=format!("/studies/{}/export/pilot-votes.csv", study.get()) download id="pilot-votes">"Pilot ratings (CSV)"</a>
            " · "
            <a href=format!("/studies/{}/export/pilot-participants.csv", study.get()) download>"Pilot participants (CSV)"</a>
        </p>
        <ActionForm action=link attr:class="inline">
            <input type="hidden" name="study" value=study.get() />
            <button type="submit" class="secondary" id="pilot-link">"Try the survey (pilot link)"</button>
        </ActionForm>
        {move || link.value().get().map(|r| match r {
            Ok(path) => view! {
                <p class="ok">"Open it in a private window (joining signs the browser in as the pilot participant): "
                    <a id="pilot-url" href=path.clone() target="_blank" rel="noopener">{path.clone()}</a></p>
            }.into_any(),
            Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
        })}
        {admin.then(|| view! {
            <ActionForm action=clear attr:class="inline">
                <input type="hidden" name="study" value=study.get() />
                <button type="submit" class="secondary" id="clear-pilot">"Clear the pilot (delete its participants and ratings)"</button>
            </ActionForm>
        })}
        {move || clear.value().get().map(|r| match r {
            Ok((p, v)) => view! { <p class="ok" id="clear-pilot-result">{format!("Deleted {} and {}.", crate::text::count(p, "pilot participant"), crate::text::count(v, "rating"))}</p> }.into_any(),
            Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
        })}
    }
}

/// The study's invite links: the full address to copy, what it joins, uses of its cap, and
/// (admins) a way to close it.
#[component]
fn InviteList(
    study: StudyId,
    invites: Vec<natstudy_types::InviteRow>,
    admin: bool,
    close: ServerAction<CloseInvite>,
    /// Whether the study has a batch an invite link could join.
    batches: bool,
) -> impl IntoView {
    // the page's own address, known in the browser (the server renders the path)
    let origin = RwSignal::new(String::new());
    Effect::new(move |_| {
        if let Ok(o) = window().location().origin() {
            origin.set(o);
        }
    });
    if invites.is_empty() {
        let how = if batches {
            "No invite links yet: make one for a batch above."
        } else {
            "No invite links yet: build a batch first, then make its link here."
        };
        return view! { <p class="muted" id="no-invites">{how}</p> }.into_any();
    }
    view! {
        <h3>"Invite links"</h3>
        <table class="grid" id="invites">
            <thead><tr><th>"Link"</th><th>"Joins"</th><th class="num">"Used"</th><th>"State"</th></tr></thead>
            <tbody>
                {invites.into_iter().map(|i| {
                    let path = i.path.clone();
                    let url = move || format!("{}{}", origin.get(), path);
                    let copy_url = url.clone();
                    let state = if i.closed { "closed" } else if i.used >= i.cap { "used up" } else { "open" };
                    // open, but nothing left to give: a participant would rate nothing
                    let full = (!i.closed && i.used < i.cap && i.full).then(|| view! {
                        <p class="error invite-full">"Gives no one work: every item of its batch has k ratings. New participants are turned away (raise k or make a batch of other items)."</p>
                    });
                    view! {
                        <tr class="invite">
                            <td>
                                <input type="text" readonly class="invite-url" prop:value=url.clone() aria-label="Invite link" on:focus=select_all />
                                <button type="button" class="secondary copy" on:click=move |_| copy_text(&copy_url())>"Copy"</button>
                            </td>
                            <td>{i.batch.clone().unwrap_or_else(|| "patch review".to_owned())}{i.pilot.then_some(" (pilot)")}</td>
                            <td class="num">{format!("{} / {}", i.used, i.cap)}</td>
                            <td>
                                {state}
                                {full}
                                {(admin && !i.closed).then(|| view! {
                                    <ActionForm action=close attr:class="inline">
                                        <input type="hidden" name="study" value=study.get() />
                                        <input type="hidden" name="invite" value=i.id.get() />
                                        <button type="submit" class="secondary close-invite">"Close"</button>
                                    </ActionForm>
                                })}
                            </td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}
