//! The study page's live monitor: progress per batch and annotator, leases, drop-outs, the
//! live agreement, invites and the pilot, read again while the page is open.

use leptos::prelude::*;

use crate::components::status::ErrorBox;
use crate::study_api::{
    ClearPilot, CloseInvite, CreateInvite, MoveAnnotator, PilotLink, ReleaseAnnotator, ReleaseIdle,
    SetBatchLease, SetExclusion,
};
use natstudy_types::Monitor;
use natstudy_types::StudyId;

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
pub(super) fn MonitorView(
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
    // a crowd study: the work asked of each participant, and per batch how many places to
    // buy (its items' k ratings, N a participant, less the places its links have given)
    let per_participant = m.settings.items_per_participant.filter(|&n| n > 0);
    let items: i64 = m.items_with.iter().sum();
    let places: Vec<String> = per_participant
        .map(|n| {
            m.batches
                .iter()
                .map(|b| {
                    let taken: i64 = m
                        .invites
                        .iter()
                        .filter(|i| !i.pilot && i.batch.as_deref() == Some(b.name.as_str()))
                        .map(|i| i.used)
                        .sum();
                    let p = places_to_buy(b.items, m.k, n, taken);
                    format!(
                        "Batch {}: {} × k {} ÷ {n}, rounded up, is {}; {} taken: {} to buy.",
                        b.name,
                        crate::text::count(b.items, "item"),
                        m.k,
                        crate::text::count(p.needed, "participant"),
                        crate::text::count(taken, "place"),
                        crate::text::count(p.to_buy, "place"),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
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
            {per_participant.map(|n| view! {
                <div id="participants-needed">
                    <p>{format!("{} per participant. Places to buy on the crowd platform, per batch:", crate::text::count(n, "item"))}</p>
                    <ul>{places.iter().map(|line| view! { <li class="places">{line.clone()}</li> }).collect_view()}</ul>
                </div>
            })}
            // the study's items, whatever batch holds them (a batch's own progress is its row
            // under Batches)
            <p class="muted" id="hist-of">{format!("The study's {} by their ratings so far:", crate::text::count(items, "item"))}</p>
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
                <thead><tr><th>"Batch"</th><th>"Strategy"</th><th class="num">"Items"</th><th class="num">"Complete"</th><th class="num">"Annotators"</th>{admin.then(|| view! { <th>"Invite"</th> })}<th>"Lease (minutes)"</th></tr></thead>
                <tbody>
                    {no_batches.then(|| view! {
                        <tr><td colspan=columns(6) class="muted" id="no-batches">"No batches yet: build one under Build a batch."</td></tr>
                    })}
                    {m.batches
                        .into_iter()
                        .map(|b| view! {
                            <tr>
                                <td>{b.name}</td><td>{strategy_words(&b.strategy)}</td><td class="num">{b.items}</td><td class="num batch-complete">{b.complete}</td><td class="num">{b.annotators}</td>
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
            {m.units.clone().map(|u| view! {
                <h3>"Units"</h3>
                <p id="units-progress">{format!(
                    "{} of {} with all their answers (k = {}); {} in all. Its participants join by a link into the study (no batch).",
                    u.complete,
                    crate::text::count(u.units, "unit"),
                    m.k,
                    crate::text::count(u.answered, "answer"),
                )}</p>
                {admin.then(|| view! {
                    <ActionForm action=invite attr:class="inline" attr:id="design-invite-form">
                        <input type="hidden" name="study" value=study.get() />
                        <label>"Places" <input type="number" name="cap" value="10" min="1" size="4" /></label>
                        <button type="submit" class="secondary" id="design-invite">"New invite link"</button>
                    </ActionForm>
                })}
            })}
            <InviteList study invites admin close batches=!no_batches || m.units.is_some() />
            <PilotPanel study admin participants=m.pilot_participants ratings=m.pilot_votes actions=pilot />
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
                    let prolific_url = url.clone();
                    let survey = i.batch.is_some();
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
                                // the study URL Prolific asks for: the link with its ids' placeholders
                                {survey.then(|| view! {
                                    <button type="button" class="secondary copy copy-prolific" on:click=move |_| copy_text(&with_prolific_ids(&prolific_url()))>"Copy for Prolific"</button>
                                })}
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

/// An invite link as Prolific's study URL: with the placeholders Prolific fills in for each
/// participant (`PROLIFIC_PID`, `STUDY_ID`, `SESSION_ID`), which the invite page reads.
pub fn with_prolific_ids(url: &str) -> String {
    format!("{url}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}&SESSION_ID={{{{%SESSION_ID%}}}}")
}

/// The places a batch needs on a crowd platform: every item's k ratings at N a participant,
/// rounded up, and of them those its links have not given yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Places {
    pub needed: i64,
    pub to_buy: i64,
}

/// [`Places`] of a batch of `items` at `k` ratings an item, `n` items a participant, with
/// `taken` places its links gave.
pub fn places_to_buy(items: i64, k: i64, n: i64, taken: i64) -> Places {
    let n = n.max(1);
    let needed = items.saturating_mul(k.max(0)).saturating_add(n - 1) / n;
    Places {
        needed,
        to_buy: (needed - taken).max(0),
    }
}

#[cfg(test)]
mod places_tests {
    /// The batch's items, not the study's: 12 items × k 3 ÷ 4 = 9 participants (the study's
    /// 297 items gave 223).
    #[test]
    fn places_are_counted_from_the_batch() {
        let p = super::places_to_buy(12, 3, 4, 0);
        assert_eq!((p.needed, p.to_buy), (9, 9));
        assert_eq!(super::places_to_buy(12, 3, 4, 2).to_buy, 7);
        assert_eq!(super::places_to_buy(13, 3, 4, 0).needed, 10, "rounded up");
        assert_eq!(
            super::places_to_buy(12, 3, 4, 20).to_buy,
            0,
            "never below zero"
        );
    }

    #[test]
    fn the_prolific_url_carries_the_ids_placeholders() {
        assert_eq!(
            super::with_prolific_ids("https://h/join/T"),
            "https://h/join/T?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
        );
    }
}
