//! Answering one unit of a designed study: its snippets (one, a pair or a set, labelled A,
//! B, … and stacked, readable on a phone), then the design's questions, each asked as its kind
//! asks it. A plain form that works without JavaScript; with it, the keyboard answers
//! (digits for points and options, `a`/`b` and `t` for a pair, letters for a set's best then
//! worst, Enter to submit), what is given is kept in the browser until it is sent (a reload
//! brings it back), and the time on the unit is measured from its first showing, across
//! reloads.

use leptos::html;
use leptos::prelude::*;

use super::diff::{code_pieces, indent_style, DiffTable, PlainCode};
use crate::annotate_api::SubmitAnswers;
use crate::components::status::ErrorBox;
use natstudy_types::{Ask, QuestionView, SnippetView, StudyId, UnitView};

/// What the keys do, said under the questions (hidden on a touch screen with `.key-name`).
const KEY_HINT: &str = "Keys: digits choose a point or an option (0 is 10; 1 then 0 or 1 quickly, 10 or 11), a / b (t: tie) choose in a pair, letters choose a set's best and then its worst, Enter submits.";

#[component]
pub(super) fn AnswerUnit(
    study: StudyId,
    unit: UnitView,
    answer: ServerAction<SubmitAnswers>,
) -> impl IntoView {
    let pending = answer.pending();
    let form_ref = NodeRef::<html::Form>::new();
    let time_ref = NodeRef::<html::Input>::new();
    let heading_ref = NodeRef::<html::H1>::new();
    #[cfg(feature = "hydrate")]
    browser::hooks(study, unit.claim, form_ref, time_ref, heading_ref);
    // a set's best and worst are chosen by the snippets' own labels
    let labels: Vec<String> = unit.snippets.iter().map(|s| s.label.clone()).collect();
    let snippets = unit
        .snippets
        .into_iter()
        .map(|s| view! { <Snippet s /> })
        .collect_view();
    let given = unit.given.clone();
    let questions = unit
        .questions
        .into_iter()
        .map(|q| view! { <Question q labels=labels.clone() given=given.clone() /> })
        .collect_view();
    let heading = if unit.revising {
        format!("Revise your answers: {}", unit.heading.to_lowercase())
    } else {
        unit.heading.clone()
    };
    view! {
        <section class="card item">
            <h1 id="item-heading" class="item-heading" tabindex="-1" aria-live="polite" node_ref=heading_ref>
                {heading}
            </h1>
            <div class="snippets">{snippets}</div>
        </section>
        <ActionForm action=answer node_ref=form_ref attr:id="answer-form" attr:class="card questions">
            <input type="hidden" name="study" value=study.get() />
            <input type="hidden" name="claim" value=unit.claim />
            <input type="hidden" name="token" value=unit.token.clone() />
            <input type="hidden" name="time_secs" value="" node_ref=time_ref />
            {unit.revising.then(|| view! { <input type="hidden" name="revise" value="1" /> })}
            {questions}
            <p class="muted keys" id="key-hint">{KEY_HINT}</p>
            <button type="submit" id="submit" disabled=move || pending.get()>
                "Submit"<span class="key-name">" (Enter)"</span>
            </button>
            {move || answer.value().get().and_then(|r| r.err()).filter(|e| !super::session_lost(e)).map(|e| view! { <ErrorBox message=e.to_string() /> })}
        </ActionForm>
    }
}

/// One snippet: its label, its diff or its lines, and its context.
#[component]
fn Snippet(s: SnippetView) -> impl IntoView {
    // its own context: a snippet in another language is shown plain, its neighbours as they are
    let plain = PlainCode(!s.highlighted);
    view! { <leptos::context::Provider value=plain><SnippetBody s /></leptos::context::Provider> }
}

#[component]
fn SnippetBody(s: SnippetView) -> impl IntoView {
    let id = format!("snippet-{}", s.label);
    let heading = format!("Snippet {}", s.label);
    let language =
        (!s.highlighted).then(|| view! { <span class="tag">{s.language.clone()}</span> });
    let body = if s.is_diff {
        let (unified, _) = signal(false);
        view! { <DiffTable rows=s.rows id=format!("{id}-diff") original_left=true unified /> }
            .into_any()
    } else {
        let rows = s
            .rows
            .into_iter()
            .map(|r| {
                let indent = indent_style(&r.new);
                view! { <tr><td class="ln">{r.new_no}</td><td class="code" style=indent>{code_pieces(r.new)}</td></tr> }
            })
            .collect_view();
        view! {
            <div class="file-view" tabindex="0" role="region" aria-label=heading.clone()>
                <table class="file"><tbody>{rows}</tbody></table>
            </div>
        }
        .into_any()
    };
    view! {
        <section class="snippet" id=id aria-label=heading.clone()>
            <h2 class="snippet-label">{heading.clone()} " " {language}</h2>
            {body}
            {s.context.map(|c| view! { <p class="muted snippet-context">{c}</p> })}
        </section>
    }
}

/// One question, asked as its kind asks it. Every field is `answers[…]` (see `Ask`); `given`:
/// the answers given before (field name, value), filled in when the unit is revised.
#[component]
fn Question(q: QuestionView, labels: Vec<String>, given: Vec<(String, String)>) -> impl IntoView {
    // a field's value given before, by its name without `answers[…]`
    let given_of = |suffix: &str| {
        let name = if suffix.is_empty() {
            q.id.clone()
        } else {
            format!("{}.{suffix}", q.id)
        };
        given
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
    };
    let field = |suffix: &str| {
        if suffix.is_empty() {
            format!("answers[{}]", q.id)
        } else {
            format!("answers[{}.{suffix}]", q.id)
        }
    };
    let dom = |suffix: &str| format!("q-{}-{suffix}", q.id);
    let chosen = given_of("");
    let radio = |name: String, value: String, id: String, text: String| {
        let checked = chosen.as_deref() == Some(value.as_str());
        view! {
            <label class="likert-option">
                <input type="radio" name=name value=value id=id checked=checked />
                <span>{text}</span>
            </label>
        }
    };
    let body = match q.ask {
        Ask::Scale { labels } => {
            let options = labels
                .into_iter()
                .enumerate()
                .map(|(i, label)| {
                    let p = i + 1;
                    let text = match label {
                        Some(l) => format!("{p} {l}"),
                        None => p.to_string(),
                    };
                    radio(field(""), p.to_string(), dom(&p.to_string()), text)
                })
                .collect_view();
            view! { <div class="likert" data-keys="digits">{options}</div> }.into_any()
        }
        Ask::Choice { options } => {
            let options = options
                .into_iter()
                .enumerate()
                .map(|(i, o)| {
                    radio(field(""), o.clone(), dom(&(i + 1).to_string()), format!("{} {o}", i + 1))
                })
                .collect_view();
            view! { <div class="likert" data-keys="digits">{options}</div> }.into_any()
        }
        Ask::Multi { options } => {
            let options = options
                .into_iter()
                .enumerate()
                .map(|(i, o)| {
                    let n = (i + 1).to_string();
                    let ticked = given_of(&n).is_some();
                    view! {
                        <label class="likert-option">
                            <input type="checkbox" name=field(&n) value="on" id=dom(&n) checked=ticked />
                            <span>{format!("{n} {o}")}</span>
                        </label>
                    }
                })
                .collect_view();
            view! { <div class="likert" data-keys="toggle">{options}</div> }.into_any()
        }
        Ask::Text { max_chars } => view! {
            <textarea name=field("") id=dom("text") rows="3" maxlength=max_chars aria-label=q.prompt.clone()>{chosen.clone().unwrap_or_default()}</textarea>
        }
        .into_any(),
        Ask::Number { min, max } => view! {
            <input type="number" name=field("") id=dom("number") step="any" min=min max=max inputmode="decimal" aria-label=q.prompt.clone() value=chosen.clone() />
        }
        .into_any(),
        Ask::Pair { ties } => {
            let mut options = vec![
                radio(field(""), "A".into(), dom("A"), "A".into()),
                radio(field(""), "B".into(), dom("B"), "B".into()),
            ];
            if ties {
                options.push(radio(field(""), "tie".into(), dom("tie"), "Tie: neither".into()));
            }
            view! { <div class="likert" data-keys="pair">{options}</div> }.into_any()
        }
        Ask::BestWorst => {
            // the set's labels are the snippets' (A, B, …), as the page shows them
            let group = |end: &'static str| (field(end), dom(end), labels.clone());
            let (best_name, best_id, labels) = group("best");
            let (worst_name, worst_id, _) = group("worst");
            let (best_group, worst_group) = (best_id.clone(), worst_id.clone());
            let (best, worst) = (given_of("best"), given_of("worst"));
            view! {
                <fieldset class="best-worst" data-keys="letters" id=best_group>
                    <legend>"Best"</legend>
                    <SetChoice name=best_name id=best_id labels=labels.clone() chosen=best />
                </fieldset>
                <fieldset class="best-worst" data-keys="letters" id=worst_group>
                    <legend>"Worst"</legend>
                    <SetChoice name=worst_name id=worst_id labels chosen=worst />
                </fieldset>
            }
            .into_any()
        }
    };
    view! {
        <fieldset class="question" id=format!("q-{}", q.id)>
            <legend>{q.prompt.clone()}</legend>
            {body}
        </fieldset>
    }
}

/// A choice of one of the set's snippets by its label (`chosen`: the one given before).
#[component]
fn SetChoice(
    name: String,
    id: String,
    labels: Vec<String>,
    chosen: Option<String>,
) -> impl IntoView {
    labels
        .into_iter()
        .map(|l| {
            let checked = chosen.as_deref() == Some(l.as_str());
            view! {
                <label class="likert-option">
                    <input type="radio" name=name.clone() value=l.clone() id=format!("{id}-{l}") checked=checked />
                    <span>{l.clone()}</span>
                </label>
            }
        })
        .collect_view()
}

#[cfg(feature = "hydrate")]
mod browser {
    //! The keyboard and the time on the unit.

    use leptos::html;
    use leptos::prelude::*;
    use leptos::wasm_bindgen::JsCast;
    use leptos::web_sys::{HtmlElement, HtmlInputElement, KeyboardEvent};

    fn now_ms() -> f64 {
        js_sys::Date::now()
    }

    /// How soon after a "1" a second digit makes a two-digit point (10, 11).
    const TWO_DIGITS_MS: f64 = 1000.0;

    /// Installs the page's keys, its timer, the heading's focus and the hold's heartbeat for
    /// the unit `claim`.
    pub fn hooks(
        study: natstudy_types::StudyId,
        claim: i64,
        form_ref: NodeRef<html::Form>,
        time_ref: NodeRef<html::Input>,
        heading_ref: NodeRef<html::H1>,
    ) {
        // the unit's first showing, kept across reloads of its page
        let key = format!("natstudy.unit.{claim}.start");
        let storage = window().local_storage().ok().flatten();
        let start = storage
            .as_ref()
            .and_then(|s| s.get_item(&key).ok().flatten())
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or_else(|| {
                let now = now_ms();
                if let Some(s) = &storage {
                    let _ = s.set_item(&key, &now.to_string());
                }
                now
            });
        Effect::new(move |_| {
            if let Some(h) = heading_ref.get() {
                let _ = h.focus();
                request_animation_frame(move || {
                    let body_or_none = document()
                        .active_element()
                        .is_none_or(|a| a.tag_name().eq_ignore_ascii_case("body"));
                    if body_or_none {
                        let _ = h.focus();
                    }
                });
            }
        });
        // what is given is kept until it is sent: a reload brings it back
        let draft_key = format!("natstudy.unit.{claim}.draft");
        let draft_for_save = draft_key.clone();
        Effect::new(move |_| {
            if let Some(form) = form_ref.get() {
                if let Some(saved) = window()
                    .local_storage()
                    .ok()
                    .flatten()
                    .and_then(|s| s.get_item(&draft_key).ok().flatten())
                {
                    restore(&saved);
                }
                let kept = form.clone();
                let key = draft_for_save.clone();
                let save = leptos::wasm_bindgen::closure::Closure::<dyn Fn()>::new(move || {
                    if let Some(s) = window().local_storage().ok().flatten() {
                        let _ = s.set_item(&key, &draft_of(&kept));
                    }
                });
                for event in ["change", "input"] {
                    let _ =
                        form.add_event_listener_with_callback(event, save.as_ref().unchecked_ref());
                }
                save.forget();
            }
        });
        // the time is written into the form as it is sent (and the draft let go)
        let sent_draft = format!("natstudy.unit.{claim}.draft");
        Effect::new(move |_| {
            if let Some(form) = form_ref.get() {
                let time_ref = time_ref;
                let key = key.clone();
                let sent_draft = sent_draft.clone();
                let on_submit =
                    leptos::wasm_bindgen::closure::Closure::<dyn Fn()>::new(move || {
                        if let Some(input) = time_ref.get_untracked() {
                            let secs = ((now_ms() - start) / 1000.0).max(0.0);
                            input.set_value(&format!("{secs:.3}"));
                        }
                        if let Some(s) = window().local_storage().ok().flatten() {
                            let _ = s.remove_item(&key);
                            let _ = s.remove_item(&sent_draft);
                        }
                    });
                let _ = form.add_event_listener_with_callback_and_bool(
                    "submit",
                    on_submit.as_ref().unchecked_ref(),
                    true,
                );
                on_submit.forget();
            }
        });
        let last_one: std::rc::Rc<std::cell::RefCell<Option<(leptos::web_sys::Element, f64)>>> =
            Default::default();
        let handle = window_event_listener(leptos::ev::keydown, move |e: KeyboardEvent| {
            if e.ctrl_key() || e.meta_key() || e.alt_key() {
                return;
            }
            // typing into a text or number field is typing
            let typing = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlElement>().ok())
                .is_some_and(|t| {
                    let tag = t.tag_name().to_ascii_lowercase();
                    tag == "textarea"
                        || (tag == "input"
                            && t.get_attribute("type")
                                .is_some_and(|ty| ty == "text" || ty == "number"))
                });
            if typing {
                return;
            }
            let Some(form) = form_ref.get_untracked() else {
                return;
            };
            let k = e.key();
            if k == "Enter" {
                e.prevent_default();
                let _ = form.request_submit();
                return;
            }
            // a second digit within a second of a "1" that chose a point of a scale (or an
            // option of a list) of ten or more makes it 10 ("1" "0") or 11 ("1" "1"), in the
            // same group
            let now = now_ms();
            if let Some((group, at)) = last_one.borrow_mut().take() {
                let i = match k.as_str() {
                    "0" => Some(9),
                    "1" => Some(10),
                    _ => None,
                };
                if let Some(input) = i
                    .filter(|_| now - at < TWO_DIGITS_MS)
                    .and_then(|i| inputs(&group).get(i).cloned())
                {
                    input.click();
                    let _ = input.focus();
                    e.prevent_default();
                    return;
                }
            }
            if let Some(group) = pick(&form, &k) {
                e.prevent_default();
                if k == "1"
                    && group.get_attribute("data-keys").as_deref() == Some("digits")
                    && inputs(&group).len() >= 10
                {
                    *last_one.borrow_mut() = Some((group, now));
                }
            }
        });
        // the unit stays held while the page is open (up to the hold's longest)
        let beat = super::super::rate_browser::heartbeat_every_minute(study);
        on_cleanup(move || {
            handle.remove();
            if let Some(b) = beat {
                b.clear();
            }
        });
    }

    /// A field's value (an input's or a text area's), read as the property it is.
    fn value_of(node: &leptos::wasm_bindgen::JsValue) -> String {
        js_sys::Reflect::get(node, &"value".into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default()
    }

    fn escape(s: &str) -> String {
        s.replace('\\', "\\\\")
            .replace('\n', "\\n")
            .replace('\t', "\\t")
    }

    fn unescape(s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(other) => out.push(other),
                    None => {}
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    /// The answers given in the form as lines: a chosen option's or ticked box's id, or a
    /// field's id, a tab and its value (escaped).
    fn draft_of(form: &leptos::web_sys::HtmlFormElement) -> String {
        let Ok(list) = form.query_selector_all("[name^='answers[']") else {
            return String::new();
        };
        let mut out = String::new();
        for i in 0..list.length() {
            let Some(node) = list.item(i) else {
                continue;
            };
            let Ok(el) = node.clone().dyn_into::<leptos::web_sys::Element>() else {
                continue;
            };
            let kind = el.get_attribute("type").unwrap_or_default();
            if kind == "radio" || kind == "checkbox" {
                if node
                    .dyn_into::<HtmlInputElement>()
                    .is_ok_and(|input| input.checked())
                {
                    out.push_str(&escape(&el.id()));
                    out.push('\n');
                }
            } else {
                let value = value_of(&node);
                if !value.is_empty() {
                    out.push_str(&format!("{}\t{}\n", escape(&el.id()), escape(&value)));
                }
            }
        }
        out
    }

    /// Gives the form back what a draft holds.
    fn restore(draft: &str) {
        for line in draft.lines() {
            let (id, value) = match line.split_once('\t') {
                Some((id, value)) => (unescape(id), Some(unescape(value))),
                None => (unescape(line), None),
            };
            let Some(el) = document().get_element_by_id(&id) else {
                continue;
            };
            match value {
                Some(v) => {
                    let _ = js_sys::Reflect::set(&el, &"value".into(), &v.into());
                }
                None => {
                    if let Ok(input) = el.dyn_into::<HtmlInputElement>() {
                        input.set_checked(true);
                    }
                }
            }
        }
    }

    /// The inputs of a group of choices, in order.
    fn inputs(group: &leptos::web_sys::Element) -> Vec<HtmlInputElement> {
        let Ok(list) = group.query_selector_all("input") else {
            return Vec::new();
        };
        (0..list.length())
            .filter_map(|i| list.item(i))
            .filter_map(|n| n.dyn_into::<HtmlInputElement>().ok())
            .collect()
    }

    /// Answers the first open group that the key speaks to; the group answered.
    fn pick(
        form: &leptos::web_sys::HtmlFormElement,
        key: &str,
    ) -> Option<leptos::web_sys::Element> {
        let groups = form.query_selector_all("[data-keys]").ok()?;
        let groups: Vec<leptos::web_sys::Element> = (0..groups.length())
            .filter_map(|i| groups.item(i))
            .filter_map(|n| n.dyn_into().ok())
            .collect();
        let index = |kind: &str| -> Option<usize> {
            let c = key.chars().next().filter(|_| key.chars().count() == 1)?;
            match kind {
                "digits" | "toggle" => match c {
                    '1'..='9' => Some(c as usize - '1' as usize),
                    '0' => Some(9),
                    _ => None,
                },
                "pair" => match c.to_ascii_lowercase() {
                    'a' => Some(0),
                    'b' => Some(1),
                    't' => Some(2),
                    _ => None,
                },
                "letters" => {
                    let c = c.to_ascii_lowercase();
                    ('a'..='h').contains(&c).then(|| c as usize - 'a' as usize)
                }
                _ => None,
            }
        };
        // the first group of the key's kind without an answer; else the one holding the focus
        let focused = document().active_element();
        let open = groups.iter().find(|g| {
            let kind = g.get_attribute("data-keys").unwrap_or_default();
            index(&kind).is_some()
                && kind != "toggle"
                && !inputs(g).iter().any(HtmlInputElement::checked)
        });
        let target = open.or_else(|| {
            groups.iter().find(|g| {
                let kind = g.get_attribute("data-keys").unwrap_or_default();
                index(&kind).is_some()
                    && focused
                        .as_ref()
                        .is_some_and(|f| g.contains(Some(f.unchecked_ref())))
            })
        });
        let target = target.or_else(|| {
            groups.iter().find(|g| {
                let kind = g.get_attribute("data-keys").unwrap_or_default();
                kind == "toggle" && index(&kind).is_some()
            })
        });
        let g = target?;
        let kind = g.get_attribute("data-keys").unwrap_or_default();
        let input = inputs(g).get(index(&kind)?)?.clone();
        input.click();
        let _ = input.focus();
        Some(g.clone())
    }
}
