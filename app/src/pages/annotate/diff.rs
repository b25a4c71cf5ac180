//! The diff of an original and a transformed method, side by side or unified, with Java
//! highlighting and the buggy lines marked (the survey and the study page's generator use it).

use leptos::prelude::*;

use crate::highlight::highlight;
use natstudy_types::{DiffLine, Seg};

pub(super) fn code_pieces(segs: Vec<Seg>) -> impl IntoView {
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

#[component]
pub fn DiffTable(
    rows: Vec<DiffLine>,
    original_left: bool,
    unified: ReadSignal<bool>,
    /// What the two sides are (default: original and transformed).
    #[prop(optional)]
    labels: Option<(&'static str, &'static str)>,
    /// The table's id (default `diff`).
    #[prop(optional)]
    id: Option<&'static str>,
) -> impl IntoView {
    let (old_label, new_label) = labels.unwrap_or(("Original", "Transformed"));
    let id = id.unwrap_or("diff");
    // the survey's table keeps its plain label ids; others prefix theirs with the table's id
    let prefix = if id == "diff" {
        String::new()
    } else {
        format!("{id}-")
    };
    let (left_id, right_id) = (
        format!("{prefix}left-label"),
        format!("{prefix}right-label"),
    );
    let side_rows = rows.clone();
    let side_by_side = move || {
        side_rows
            .clone()
            .into_iter()
            .map(|r| {
                if r.kind == "skip" {
                    return skipped_row(&r);
                }
                let (oc, nc) = match r.kind.as_str() {
                    "removed" => ("del", "empty"),
                    "added" => ("empty", "add"),
                    "changed" => ("del", "add"),
                    _ => ("", ""),
                };
                let left_orig = side(r.old_no, r.old.clone(), oc, r.buggy);
                let right_new = side(r.new_no, r.new.clone(), nc, r.buggy_new);
                if original_left {
                    view! { <tr>{left_orig}{right_new}</tr> }.into_any()
                } else {
                    let left_new = side(r.new_no, r.new, nc, r.buggy_new);
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
                let (old_indent, new_indent) = (indent_style(&r.old), indent_style(&r.new));
                match r.kind.as_str() {
                    "skip" => out.push(skipped_row(&r)),
                    "same" => out.push(view! { <tr><td class="ln">{r.old_no}</td><td class="ln">{r.new_no}</td><td class="mark"></td><td class="code" class:buggy=buggy style=old_indent>{code_pieces(r.old)}</td></tr> }.into_any()),
                    _ => {
                        if r.old_no.is_some() {
                            out.push(view! { <tr><td class="ln">{r.old_no}</td><td class="ln"></td><td class="mark">"-"</td><td class="code del" class:buggy=buggy style=old_indent>{code_pieces(r.old)}</td></tr> }.into_any());
                        }
                        if r.new_no.is_some() {
                            out.push(view! { <tr><td class="ln"></td><td class="ln">{r.new_no}</td><td class="mark">"+"</td><td class="code add" class:buggy=r.buggy_new style=new_indent>{code_pieces(r.new)}</td></tr> }.into_any());
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
    view! {
        // a region of its own that scrolls: reachable and scrollable by keyboard
        <div class="diff-wrap" tabindex="0" role="region" aria-label="The original and the transformed method">
            <Show
                when=move || unified.get()
                fallback=move || view! {
                    <table class="diff side" id=id>
                        <thead><tr><th colspan="2" id=left_id.clone()>{l}</th><th colspan="2" id=right_id.clone()>{r}</th></tr></thead>
                        <tbody>{side_by_side()}</tbody>
                    </table>
                }
            >
                <table class="diff unified" id=id>
                    <thead><tr><th colspan="4">{unified_label.clone()}</th></tr></thead>
                    <tbody>{unified_rows()}</tbody>
                </table>
            </Show>
        </div>
    }
}
