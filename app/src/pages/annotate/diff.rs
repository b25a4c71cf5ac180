//! The diff of an original and a transformed method, side by side or unified, with Java
//! highlighting and the buggy lines marked (the survey and the study page's generator use it).

use leptos::prelude::*;

use super::changes::{change_list, change_starts, ChangeIds, ChangeNav, LineNumbersToggle};
use crate::highlight::tokens;
use natstudy_types::{DiffLine, Seg};

/// One piece of a line's code: each Java token its own span (a line breaks between tokens,
/// never inside one: `style/main.css` keeps a token whole), a comment a span per word, and a
/// break allowed after an opening bracket or a comma and before a dot, where Java's own style
/// breaks a long line.
fn token_view(class: &'static str, tok: String) -> AnyView {
    match class {
        "ws" => tok.into_any(),
        "com" => {
            let mut words = Vec::new();
            let mut word = String::new();
            let mut space = false;
            for c in tok.chars() {
                if c.is_whitespace() != space && !word.is_empty() {
                    words.push((space, std::mem::take(&mut word)));
                }
                space = c.is_whitespace();
                word.push(c);
            }
            if !word.is_empty() {
                words.push((space, word));
            }
            words
                .into_iter()
                .map(|(space, w)| {
                    if space {
                        w.into_any()
                    } else {
                        view! { <span class="com">{w}</span> }.into_any()
                    }
                })
                .collect_view()
                .into_any()
        }
        _ => {
            let before = matches!(tok.as_str(), "." | "::" | "->");
            let after = matches!(tok.as_str(), "(" | "[" | ",");
            let class = (!class.is_empty()).then_some(class);
            view! { {before.then(|| view! { <wbr /> })}<span class=class>{tok}</span>{after.then(|| view! { <wbr /> })} }
                .into_any()
        }
    }
}

/// Provided around code that is not Java: its lines are shown plain (no highlighting).
#[derive(Debug, Clone, Copy)]
pub struct PlainCode(pub bool);

/// A line's code: its changed segments marked, each token whole (see `token_view`), inside a
/// line box of its own (`.cl`: where a token longer than the line scrolls, not split).
pub(super) fn code_pieces(segs: Vec<Seg>) -> impl IntoView {
    // a snippet in a language other than Java is shown as it is, without Java's colours
    let plain = use_context::<PlainCode>().is_some_and(|p| p.0);
    let pieces = segs
        .into_iter()
        .map(|s| {
            let toks = if plain {
                vec![("", s.text.clone())]
            } else {
                tokens(&s.text)
            };
            let toks = toks
                .into_iter()
                .map(|(class, t)| token_view(class, t))
                .collect_view();
            view! { <span class:chg=s.changed>{toks}</span> }
        })
        .collect_view();
    view! { <div class="cl">{pieces}</div> }
}

/// A code line's indentation in columns (a tab is 4, as the page draws it), as the style that
/// makes its wrapped continuation lines hang at it: on a narrow screen a long line wraps, and
/// every part of it stays right of its own indentation (`style/main.css`, `--indent`).
pub(super) fn indent_style(segs: &[Seg]) -> String {
    let mut cols = 0usize;
    'segs: for s in segs {
        for c in s.text.chars() {
            match c {
                ' ' => cols += 1,
                '\t' => cols += 4 - cols % 4,
                _ => break 'segs,
            }
        }
    }
    format!("--indent:{cols}ch")
}

/// The whitespace every code line of the diff starts with, blank lines aside: the method's own
/// indentation in its class, which the page says once instead of drawing on every line (on a
/// phone it took four of some thirty columns).
pub(super) fn common_indent(rows: &[DiffLine]) -> String {
    let mut common: Option<String> = None;
    for r in rows.iter().filter(|r| r.kind != "skip") {
        for segs in [&r.old, &r.new] {
            let text: String = segs.iter().map(|s| s.text.as_str()).collect();
            if text.trim().is_empty() {
                continue;
            }
            let lead = text.chars().take_while(|c| *c == ' ' || *c == '\t');
            common = Some(match common {
                None => lead.collect(),
                Some(c) => c
                    .chars()
                    .zip(lead)
                    .take_while(|(a, b)| a == b)
                    .map(|(a, _)| a)
                    .collect(),
            });
        }
    }
    common.unwrap_or_default()
}

/// The rows with the first `n` characters of indentation cut from every code line (a blank
/// line loses what whitespace it has, up to `n`).
pub(super) fn dedent(rows: Vec<DiffLine>, n: usize) -> Vec<DiffLine> {
    if n == 0 {
        return rows;
    }
    let cut = |segs: Vec<Seg>| {
        let mut left = n;
        let mut out = Vec::with_capacity(segs.len());
        for mut s in segs {
            if left > 0 {
                let ws = s
                    .text
                    .bytes()
                    .take(left)
                    .take_while(|b| *b == b' ' || *b == b'\t')
                    .count();
                s.text.drain(..ws);
                left = if s.text.is_empty() { left - ws } else { 0 };
                if s.text.is_empty() {
                    continue;
                }
            }
            out.push(s);
        }
        out
    };
    rows.into_iter()
        .map(|mut r| {
            if r.kind != "skip" {
                r.old = cut(r.old);
                r.new = cut(r.new);
            }
            r
        })
        .collect()
}

/// What the page says of the indentation it took off: "indented 4 spaces" (a tab counts 4).
pub(super) fn indent_words(indent: &str) -> Option<String> {
    let cols: usize = indent.chars().map(|c| if c == '\t' { 4 } else { 1 }).sum();
    (cols > 0).then(|| {
        format!(
            "The method is indented {} in its file; its lines are shown from that column.",
            crate::text::count(cols as i64, "space")
        )
    })
}

/// Gives every line box of the table `table` that scrolls (a token wider than its line) a
/// place in the tab order, and takes it from those that no longer do.
#[cfg(feature = "hydrate")]
fn focusable_scrolling_lines(table: &str) {
    let Ok(lines) = document().query_selector_all(&format!("#{table} .cl")) else {
        return;
    };
    for i in 0..lines.length() {
        let Some(el) = lines.get(i).and_then(|n| {
            leptos::wasm_bindgen::JsCast::dyn_into::<leptos::web_sys::Element>(n).ok()
        }) else {
            continue;
        };
        if el.scroll_width() > el.client_width() {
            let _ = el.set_attribute("tabindex", "0");
        } else {
            let _ = el.remove_attribute("tabindex");
        }
    }
}

/// A row standing for lines a long diff does not show ("… 120 unchanged lines …").
fn skipped_row(r: &DiffLine) -> AnyView {
    let text: String = r.old.iter().map(|s| s.text.as_str()).collect();
    view! { <tr class="skip"><td colspan="4" class="skip">{text}</td></tr> }.into_any()
}

/// One side of a side-by-side row: line number and code.
fn side(no: Option<u32>, segs: Vec<Seg>, class: &'static str, buggy: bool) -> impl IntoView {
    let indent = indent_style(&segs);
    view! {
        <td class="ln">{no.map(|n| n.to_string()).unwrap_or_default()}</td>
        <td class=format!("code {class}") class:buggy=buggy style=indent>{code_pieces(segs)}</td>
    }
}

/// A row's part in a change, as the row carries it: the change's id on its first row, and
/// whether the change is the one the navigation is at (every row of it is marked).
type Mark = (Option<String>, Option<Signal<bool>>);

fn mark_of(
    starts: &[Option<(usize, bool)>],
    i: usize,
    ids: &ChangeIds,
    at: RwSignal<Option<usize>>,
) -> Mark {
    match starts.get(i).copied().flatten() {
        Some((k, first)) => (
            first.then(|| ids.row(k)),
            Some(Signal::derive(move || at.get() == Some(k))),
        ),
        None => (None, None),
    }
}

#[component]
pub fn DiffTable(
    rows: Vec<DiffLine>,
    original_left: bool,
    unified: ReadSignal<bool>,
    /// What the two sides are (default: original and transformed).
    #[prop(optional)]
    labels: Option<(&'static str, &'static str)>,
    /// The table's id (default `diff`).
    #[prop(optional, into)]
    id: Option<String>,
    /// Previous / next change buttons and a list of the changes (the survey's and the
    /// review's diffs).
    #[prop(optional)]
    navigate: bool,
) -> impl IntoView {
    // the method's own indentation, said once
    let indent = common_indent(&rows);
    let indent_note = indent_words(&indent);
    let rows = dedent(rows, indent.chars().count());
    let (old_label, new_label) = labels.unwrap_or(("Original", "Transformed"));
    let id = id.unwrap_or_else(|| "diff".into());
    let ids = ChangeIds::new(&id);
    let side_id = id.clone();
    let (left_id, right_id) = (ids.name("left-label"), ids.name("right-label"));
    let starts = change_starts(&rows);
    let changes = change_list(&rows, &starts);
    let at = RwSignal::new(None::<usize>);
    // on a phone the unified view has one gutter (the transformed side's numbers); this
    // shows the original's as well
    let both_numbers = RwSignal::new(false);
    let side_rows = rows.clone();
    let (side_starts, side_ids) = (starts.clone(), ids.clone());
    let side_by_side = move || {
        side_rows
            .clone()
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                if r.kind == "skip" {
                    return skipped_row(&r);
                }
                let (row_id, current) = mark_of(&side_starts, i, &side_ids, at);
                let is_current = move || current.is_some_and(|c| c.get());
                let (oc, nc) = match r.kind.as_str() {
                    "removed" => ("del", "empty"),
                    "added" => ("empty", "add"),
                    "changed" => ("del", "add"),
                    _ => ("", ""),
                };
                let left_orig = side(r.old_no, r.old.clone(), oc, r.buggy);
                let right_new = side(r.new_no, r.new.clone(), nc, r.buggy_new);
                if original_left {
                    view! { <tr id=row_id.clone() tabindex=row_id.as_ref().map(|_| "-1") class:current=is_current>{left_orig}{right_new}</tr> }.into_any()
                } else {
                    let left_new = side(r.new_no, r.new, nc, r.buggy_new);
                    let right_orig = side(r.old_no, r.old, oc, r.buggy);
                    view! { <tr id=row_id.clone() tabindex=row_id.as_ref().map(|_| "-1") class:current=is_current>{left_new}{right_orig}</tr> }.into_any()
                }
            })
            .collect_view()
    };
    let (uni_starts, uni_ids) = (starts.clone(), ids.clone());
    let unified_rows = move || {
        rows.clone()
            .into_iter()
            .enumerate()
            .flat_map(|(i, r)| {
                let mut out = Vec::new();
                let buggy = r.buggy;
                let (old_indent, new_indent) = (indent_style(&r.old), indent_style(&r.new));
                let (mut row_id, current) = mark_of(&uni_starts, i, &uni_ids, at);
                let is_current = move || current.is_some_and(|c| c.get());
                let tabindex = row_id.as_ref().map(|_| "-1");
                match r.kind.as_str() {
                    "skip" => out.push(skipped_row(&r)),
                    "same" => out.push(view! { <tr><td class="ln ln-old">{r.old_no}</td><td class="ln ln-new">{r.new_no}</td><td class="mark"></td><td class="code" class:buggy=buggy style=old_indent>{code_pieces(r.old)}</td></tr> }.into_any()),
                    _ => {
                        if let Some(old_no) = r.old_no {
                            // one gutter on a phone: a removed line shows its original number
                            // there, marked as the original's
                            let alt = view! { <span class="ln-alt" title="line of the original">{old_no}</span> };
                            out.push(view! { <tr id=row_id.take() tabindex=tabindex class:current=is_current><td class="ln ln-old">{old_no}</td><td class="ln ln-new">{alt}</td><td class="mark">"-"</td><td class="code del" class:buggy=buggy style=old_indent>{code_pieces(r.old)}</td></tr> }.into_any());
                        }
                        if r.new_no.is_some() {
                            let tabindex = row_id.is_some().then_some("-1");
                            out.push(view! { <tr id=row_id tabindex=tabindex class:current=is_current><td class="ln ln-old"></td><td class="ln ln-new">{r.new_no}</td><td class="mark">"+"</td><td class="code add" class:buggy=r.buggy_new style=new_indent>{code_pieces(r.new)}</td></tr> }.into_any());
                        }
                    }
                }
                out
            })
            .collect_view()
    };
    let (l, r) = if original_left {
        (old_label, new_label)
    } else {
        (new_label, old_label)
    };
    let unified_label = format!("{old_label} (−) and {} (+)", new_label.to_lowercase());
    // a line whose token is wider than the screen scrolls: such a line takes the focus, so
    // that a keyboard scrolls it too (looked at once drawn, in either view, and on resizing)
    #[cfg(feature = "hydrate")]
    {
        let table = id.clone();
        Effect::new(move |_| {
            unified.track();
            let table = table.clone();
            request_animation_frame(move || focusable_scrolling_lines(&table));
        });
        let table = id.clone();
        let resize = window_event_listener(leptos::ev::resize, move |_| {
            focusable_scrolling_lines(&table)
        });
        on_cleanup(move || resize.remove());
    }
    let nav = (navigate && !changes.is_empty())
        .then(|| view! { <ChangeNav changes ids=ids.clone() at /> });
    let toggle_id = ids.name("line-numbers");
    view! {
        {indent_note.map(|w| view! { <p class="muted indent-note">{w}</p> })}
        <LineNumbersToggle id=toggle_id unified both_numbers />
        // a region of its own: reachable by keyboard, and it scrolls sideways when a token is
        // longer than its line
        <div
            class="diff-wrap"
            class:both-numbers=move || both_numbers.get()
            tabindex="0"
            role="region"
            aria-label="The original and the transformed method"
        >
            <Show
                when=move || unified.get()
                fallback=move || view! {
                    <table class="diff side" id=side_id.clone()>
                        <thead><tr><th colspan="2" id=left_id.clone()>{l}</th><th colspan="2" id=right_id.clone()>{r}</th></tr></thead>
                        <tbody>{side_by_side()}</tbody>
                    </table>
                }
            >
                <table class="diff unified" id=id.clone()>
                    <thead><tr><th colspan="4">{unified_label.clone()}</th></tr></thead>
                    <tbody>{unified_rows()}</tbody>
                </table>
            </Show>
        </div>
        {nav}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(kind: &str, old: &[(&str, bool)], new: &[(&str, bool)]) -> DiffLine {
        let segs = |v: &[(&str, bool)]| {
            v.iter()
                .map(|(t, c)| Seg {
                    text: (*t).to_owned(),
                    changed: *c,
                })
                .collect()
        };
        DiffLine {
            kind: kind.into(),
            old_no: Some(1),
            new_no: Some(1),
            old: segs(old),
            new: segs(new),
            buggy: false,
            buggy_new: false,
        }
    }

    fn texts(rows: &[DiffLine]) -> Vec<(String, String)> {
        let join = |s: &[Seg]| s.iter().map(|s| s.text.as_str()).collect::<String>();
        rows.iter().map(|r| (join(&r.old), join(&r.new))).collect()
    }

    /// The indentation every non-blank line shares comes off, across the segments a change
    /// splits a line into; a blank line and a skipped stretch stay; deeper lines keep the rest.
    #[test]
    fn the_methods_own_indentation_is_said_once() {
        let rows = vec![
            line(
                "same",
                &[("    int f(int a) {", false)],
                &[("    int f(int a) {", false)],
            ),
            line(
                "changed",
                &[("  ", false), ("      return a < b;", true)],
                &[("  ", false), ("      return b > a;", true)],
            ),
            line("same", &[("  ", false)], &[("", false)]),
            DiffLine {
                kind: "skip".into(),
                old_no: None,
                new_no: None,
                old: vec![Seg {
                    text: "… 3 unchanged lines …".into(),
                    changed: false,
                }],
                new: vec![],
                buggy: false,
                buggy_new: false,
            },
            line("same", &[("    }", false)], &[("    }", false)]),
        ];
        let indent = common_indent(&rows);
        assert_eq!(indent, "    ");
        let out = dedent(rows, indent.chars().count());
        assert_eq!(
            texts(&out),
            vec![
                ("int f(int a) {".into(), "int f(int a) {".into()),
                ("    return a < b;".into(), "    return b > a;".into()),
                (String::new(), String::new()),
                ("… 3 unchanged lines …".into(), String::new()),
                ("}".into(), "}".into()),
            ]
        );
        // the change keeps its marking: the first segment (all indentation) is gone
        assert_eq!(out[1].old.len(), 1);
        assert!(out[1].old[0].changed);
        assert_eq!(
            indent_words(&indent).as_deref(),
            Some("The method is indented 4 spaces in its file; its lines are shown from that column.")
        );
        // tabs count four; no shared indentation, nothing said
        assert_eq!(
            indent_words("\t").as_deref(),
            Some("The method is indented 4 spaces in its file; its lines are shown from that column.")
        );
        let flush = vec![line(
            "same",
            &[("class A {", false)],
            &[("class A {", false)],
        )];
        assert_eq!(common_indent(&flush), "");
        assert_eq!(indent_words(""), None);
        assert_eq!(texts(&dedent(flush.clone(), 0)), texts(&flush));
    }
}
