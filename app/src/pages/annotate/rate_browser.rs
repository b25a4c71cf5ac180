//! The rating view in the browser: time on item, the remembered view mode, drafts kept
//! across a reload, the keyboard (which question a digit answers) and the lease heartbeat.

#[cfg(feature = "hydrate")]
use leptos::ev;
use leptos::html;
use leptos::prelude::*;

use natstudy_types::StudyId;

#[cfg(feature = "hydrate")]
use super::keys::{changed_note, digit_effect, DigitEffect, BOTH_ANSWERED};
pub(super) use super::keys::{point_to, unanswered, Question, KEY_HINT};

/// The signals the browser-only parts of the rating view drive (read in the browser build only).
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
pub(super) struct RateSignals {
    /// Rendered by the server (hydrated), not by the page after a vote.
    pub(super) shown_at_load: bool,
    pub(super) study: StudyId,
    pub(super) item: natstudy_types::ItemId,
    /// A new item (not a revision): its time so far is kept across a reload.
    pub(super) new_item: bool,
    pub(super) cr: ReadSignal<Option<u8>>,
    pub(super) set_cr: WriteSignal<Option<u8>>,
    pub(super) cc: ReadSignal<Option<u8>>,
    pub(super) set_cc: WriteSignal<Option<u8>>,
    pub(super) context_open: ReadSignal<bool>,
    pub(super) set_context_open: WriteSignal<bool>,
    pub(super) set_context_opened: WriteSignal<bool>,
    pub(super) set_unified: WriteSignal<bool>,
    pub(super) set_started_at: WriteSignal<String>,
    pub(super) set_show_guideline: WriteSignal<bool>,
    pub(super) key_note: RwSignal<Option<String>>,
    pub(super) missing: RwSignal<Option<Question>>,
    pub(super) time_ref: NodeRef<html::Input>,
    pub(super) form_ref: NodeRef<html::Form>,
    pub(super) method_ref: NodeRef<html::Tr>,
}

/// Browser only: time on item, the remembered view mode, the keyboard, the lease heartbeat.
pub(super) fn browser_hooks(x: RateSignals) {
    #[cfg(not(feature = "hydrate"))]
    let _ = x;
    #[cfg(feature = "hydrate")]
    {
        let RateSignals {
            shown_at_load,
            study,
            item,
            new_item,
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
        } = x;
        use std::sync::{Arc, Mutex};
        let timer = Arc::new(Mutex::new(None::<crate::timing::ActiveTimer>));
        let now = || js_sys::Date::now();
        // a new item's time so far, kept in sessionStorage as it runs: a reload goes on from it
        let time_prefix = format!("natstudy.time.{study}.");
        let time_key = format!("{time_prefix}{item}");
        let first_shown = Arc::new(Mutex::new(0.0f64));
        let storage = || window().session_storage().ok().flatten();
        {
            let timer = timer.clone();
            let time_key = time_key.clone();
            let first_shown = first_shown.clone();
            Effect::new(move |_| {
                let t = now();
                // shown since the page began to load (rendered by the server), or now
                let shown = if shown_at_load {
                    window()
                        .performance()
                        .map(|p| p.time_origin())
                        .filter(|o| *o > 0.0 && *o <= t)
                        .unwrap_or(t)
                } else {
                    t
                };
                // other items' kept times go; this one's comes back
                let mut kept = None;
                if let Some(s) = storage() {
                    let len = s.length().unwrap_or(0);
                    let stale: Vec<String> = (0..len)
                        .filter_map(|i| s.key(i).ok().flatten())
                        .filter(|k| k.starts_with(&time_prefix) && *k != time_key)
                        .collect();
                    for k in stale {
                        let _ = s.remove_item(&k);
                    }
                    if new_item {
                        kept = s
                            .get_item(&time_key)
                            .ok()
                            .flatten()
                            .and_then(|t| crate::timing::parse_kept(&t))
                            .filter(|(started, _)| *started <= t);
                    }
                }
                if let Ok(mut g) = timer.lock() {
                    if g.is_none() {
                        let (started, timer) = match kept {
                            Some((started, secs)) => {
                                (started, crate::timing::ActiveTimer::resume(shown, secs))
                            }
                            None => (shown, crate::timing::ActiveTimer::start(shown)),
                        };
                        *g = Some(timer);
                        if let Ok(mut f) = first_shown.lock() {
                            *f = started;
                        }
                        set_started_at.set(format!("{started:.0}"));
                    }
                }
                let stored = window()
                    .local_storage()
                    .ok()
                    .flatten()
                    .and_then(|s| s.get_item("natstudy.diff").ok().flatten());
                // the participant's choice; else unified on narrow screens (a phone has no room
                // for two columns of code)
                let narrow = window()
                    .inner_width()
                    .ok()
                    .and_then(|w| w.as_f64())
                    .is_some_and(|w| w < 700.0);
                set_unified.set(match stored.as_deref() {
                    Some("unified") => true,
                    Some("side") => false,
                    _ => narrow,
                });
                // every item starts at the top: its summary, diff and progress first, with
                // the focus on its heading (a keyboard submit left it at the bottom). The first
                // item after "Start rating" is drawn before it is in the page (its button, which
                // held the focus, is gone): the heading is focused again once it is there.
                let to_heading = || {
                    window().scroll_to_with_x_and_y(0.0, 0.0);
                    if let Some(h) = document().get_element_by_id("item-heading").and_then(|e| {
                        leptos::wasm_bindgen::JsCast::dyn_into::<leptos::web_sys::HtmlElement>(e)
                            .ok()
                    }) {
                        let _ = h.focus();
                    }
                    window().scroll_to_with_x_and_y(0.0, 0.0);
                };
                to_heading();
                request_animation_frame(move || {
                    // not when the participant has already moved on (a click, a key)
                    let body_or_nothing = document().active_element().is_none_or(|a| {
                        a.tag_name().eq_ignore_ascii_case("body") || a.id() == "item-heading"
                    });
                    if body_or_nothing {
                        to_heading();
                    }
                });
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
            let target = e.target().and_then(|t| {
                leptos::wasm_bindgen::JsCast::dyn_into::<leptos::web_sys::Element>(t).ok()
            });
            // keys act everywhere but where people type (a radio button with focus still
            // takes the digits)
            let typing = target
                .as_ref()
                .is_some_and(|el| match el.tag_name().as_str() {
                    "TEXTAREA" | "SELECT" => true,
                    "INPUT" => !matches!(
                        el.get_attribute("type").as_deref(),
                        Some("radio" | "checkbox" | "hidden")
                    ),
                    _ => false,
                });
            // Enter on a focused button or link does what that button does, not submit
            let on_control = target
                .as_ref()
                .is_some_and(|el| matches!(el.tag_name().as_str(), "BUTTON" | "A" | "SUMMARY"));
            if typing || e.ctrl_key() || e.meta_key() || e.alt_key() {
                return;
            }
            // the question whose answers hold the focus, if any
            let focus = target.as_ref().and_then(|el| {
                if el.closest("#q-cr").ok().flatten().is_some() {
                    Some(Question::Readability)
                } else if el.closest("#q-cc").ok().flatten().is_some() {
                    Some(Question::Conventions)
                } else {
                    None
                }
            });
            let (now_cr, now_cc) = (cr.get_untracked(), cc.get_untracked());
            match e.key().as_str() {
                k @ ("1" | "2" | "3" | "4") => {
                    let Ok(v) = k.parse::<u8>() else { return };
                    // a digit on a radio button would also move the browser's own choice:
                    // the rule below decides, nothing else
                    e.prevent_default();
                    let set = |q: Question| match q {
                        Question::Readability => set_cr.set(Some(v)),
                        Question::Conventions => set_cc.set(Some(v)),
                    };
                    match digit_effect(focus, now_cr, now_cc) {
                        DigitEffect::Answer(q) => {
                            set(q);
                            key_note.set(None);
                        }
                        DigitEffect::Change(q) => {
                            let before = match q {
                                Question::Readability => now_cr,
                                Question::Conventions => now_cc,
                            };
                            set(q);
                            key_note.set(Some(changed_note(q, before, v)));
                        }
                        DigitEffect::Ignore => key_note.set(Some(BOTH_ANSWERED.into())),
                    }
                    missing.set(None);
                }
                "Backspace" => {
                    // the answer of the question in focus; else the last one given
                    match focus {
                        Some(Question::Readability) => set_cr.set(None),
                        Some(Question::Conventions) => set_cc.set(None),
                        None if now_cc.is_some() => set_cc.set(None),
                        None => set_cr.set(None),
                    }
                    key_note.set(None);
                }
                "Enter" if on_control => {}
                "Enter" => {
                    e.prevent_default();
                    if let Some(q) = unanswered(cr.get_untracked(), cc.get_untracked()) {
                        missing.set(Some(q));
                        point_to(q);
                    } else {
                        stamp_key();
                        if let Some(form) = form_ref.get_untracked() {
                            let _ = form.request_submit();
                        }
                    }
                }
                "g" => {
                    set_show_guideline.update(|v| *v = !*v);
                    // bring it into view, wherever the page is scrolled
                    if let Some(el) = document().get_element_by_id("guideline") {
                        el.scroll_into_view();
                    }
                }
                "c" => {
                    set_context_open.update(|v| *v = !*v);
                    set_context_opened.set(true);
                }
                // previous / next change: what the diff's own buttons do
                k @ ("n" | "p") => {
                    let id = if k == "n" {
                        "next-change"
                    } else {
                        "prev-change"
                    };
                    if let Some(button) = document().get_element_by_id(id).and_then(|e| {
                        leptos::wasm_bindgen::JsCast::dyn_into::<leptos::web_sys::HtmlElement>(e)
                            .ok()
                    }) {
                        e.prevent_default();
                        button.click();
                    }
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
                if new_item {
                    let started = first_shown.lock().map(|f| *f).unwrap_or(0.0);
                    if let Some(s) = storage() {
                        let _ = s.set_item(&time_key, &crate::timing::kept_text(started, secs));
                    }
                }
            });
        };
        let ticker =
            set_interval_with_handle(stamp.clone(), std::time::Duration::from_millis(200)).ok();
        // keep the lease while the page is open
        let beat = heartbeat_every_minute(study);
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
}

/// Browser only: the unsent answer of a new item (both questions and the comment) is kept in
/// `sessionStorage` under the study and item as it is given, and given back after a reload of
/// the same item; drafts of other items of the study (sent, or handed on) are dropped when an
/// item is shown. A revision starts from the stored vote instead.
#[allow(clippy::too_many_arguments)]
pub(super) fn draft_hooks(
    study: StudyId,
    item: natstudy_types::ItemId,
    new_item: bool,
    cr: ReadSignal<Option<u8>>,
    set_cr: WriteSignal<Option<u8>>,
    cc: ReadSignal<Option<u8>>,
    set_cc: WriteSignal<Option<u8>>,
    comment_ref: NodeRef<html::Textarea>,
) {
    #[cfg(not(feature = "hydrate"))]
    let _ = (study, item, new_item, cr, set_cr, cc, set_cc, comment_ref);
    #[cfg(feature = "hydrate")]
    {
        let prefix = format!("natstudy.draft.{study}.");
        let key = format!("{prefix}{item}");
        let storage = || window().session_storage().ok().flatten();
        let save = {
            let key = key.clone();
            move |comment: Option<String>| {
                let Some(s) = storage() else { return };
                let comment = comment.unwrap_or_else(|| {
                    comment_ref
                        .get_untracked()
                        .map(|t| t.value())
                        .unwrap_or_default()
                });
                let _ = s.set_item(
                    &key,
                    &draft_text(cr.get_untracked(), cc.get_untracked(), &comment),
                );
            }
        };
        // on showing the item: other items' drafts go, this one's comes back
        {
            let key = key.clone();
            Effect::new(move |_| {
                let Some(s) = storage() else { return };
                let len = s.length().unwrap_or(0);
                let stale: Vec<String> = (0..len)
                    .filter_map(|i| s.key(i).ok().flatten())
                    .filter(|k| k.starts_with(&prefix) && *k != key)
                    .collect();
                for k in stale {
                    let _ = s.remove_item(&k);
                }
                if !new_item {
                    return;
                }
                let Some((dcr, dcc, comment)) = s
                    .get_item(&key)
                    .ok()
                    .flatten()
                    .and_then(|d| parse_draft(&d))
                else {
                    return;
                };
                if cr.get_untracked().is_none() && dcr.is_some() {
                    set_cr.set(dcr);
                }
                if cc.get_untracked().is_none() && dcc.is_some() {
                    set_cc.set(dcc);
                }
                if let Some(t) = comment_ref.get_untracked() {
                    if t.value().is_empty() {
                        t.set_value(&comment);
                    }
                }
            });
        }
        if new_item {
            // every answer as it is given
            let save_answers = save.clone();
            Effect::new(move |first: Option<()>| {
                let (a, b) = (cr.get(), cc.get());
                if first.is_some() || a.is_some() || b.is_some() {
                    save_answers(None);
                }
            });
            let on_input = window_event_listener(ev::input, move |e| {
                let is_comment = e
                    .target()
                    .and_then(|t| {
                        leptos::wasm_bindgen::JsCast::dyn_into::<
                                leptos::web_sys::HtmlTextAreaElement,
                            >(t)
                            .ok()
                    })
                    .is_some_and(|t| t.name() == "comment");
                if is_comment {
                    save(None);
                }
            });
            on_cleanup(move || on_input.remove());
        }
    }
}

/// A draft as stored: a digit per question (`0`: not answered), then the comment.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
fn draft_text(cr: Option<u8>, cc: Option<u8>, comment: &str) -> String {
    let d = |v: Option<u8>| char::from(b'0' + v.filter(|v| (1..=4).contains(v)).unwrap_or(0));
    format!("{}{}{comment}", d(cr), d(cc))
}

/// A stored draft read back (`None`: not one of ours).
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
fn parse_draft(text: &str) -> Option<(Option<u8>, Option<u8>, String)> {
    let mut chars = text.chars();
    let answer = |c: char| match c.to_digit(10) {
        Some(0) => Some(None),
        Some(v @ 1..=4) => Some(Some(v as u8)),
        _ => None,
    };
    let cr = answer(chars.next()?)?;
    let cc = answer(chars.next()?)?;
    Some((cr, cc, chars.collect()))
}

/// The answer to question `name` checked in the server-rendered form of the item whose submit
/// token is `token`, if that form is on the page (it is while the page hydrates; a form drawn
/// in the browser for another item has another token).
pub(super) fn answered_before_hydration(token: &str, name: &str) -> Option<u8> {
    #[cfg(feature = "hydrate")]
    {
        let doc = document();
        let form_token = doc
            .query_selector("#vote-form input[name=token]")
            .ok()
            .flatten()
            .and_then(|el| el.get_attribute("value"))?;
        if form_token != token {
            return None;
        }
        let checked = doc
            .query_selector(&format!("#vote-form input[name={name}]:checked"))
            .ok()
            .flatten()?;
        let input: leptos::web_sys::HtmlInputElement =
            leptos::wasm_bindgen::JsCast::dyn_into(checked).ok()?;
        input.value().parse().ok().filter(|v| (1..=4).contains(v))
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (token, name);
        None
    }
}

/// The survey page's heartbeat: the participant's holds renewed every minute while the page is
/// open (the rating page's and a designed study's unit's).
#[cfg(feature = "hydrate")]
pub(super) fn heartbeat_every_minute(study: StudyId) -> Option<leptos::prelude::IntervalHandle> {
    set_interval_with_handle(
        move || {
            leptos::task::spawn_local(async move {
                let _ = crate::annotate_api::heartbeat(study).await;
            })
        },
        std::time::Duration::from_secs(60),
    )
    .ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn drafts_read_back_what_was_stored() {
        use super::{draft_text, parse_draft};
        let t = draft_text(Some(2), None, "reads oddly; 3 ifs");
        assert_eq!(t, "20reads oddly; 3 ifs");
        assert_eq!(
            parse_draft(&t),
            Some((Some(2), None, "reads oddly; 3 ifs".into()))
        );
        assert_eq!(
            parse_draft(&draft_text(None, Some(4), "")),
            Some((None, Some(4), String::new()))
        );
        assert_eq!(parse_draft("9x"), None);
        assert_eq!(parse_draft(""), None);
    }
}
