//! Moving between a diff's changes: which rows make up each change, the ids the rows carry,
//! and the navigation (previous / next change, a list of them, keys `p` and `n` on the
//! survey) that brings a change into view on the page itself, not in a box.

use leptos::prelude::*;

use natstudy_types::DiffLine;

/// The ids of one diff table's parts: the survey's plain (`change-1`, `next-change`), any
/// other table's prefixed with its own id (`patch-diff-change-1`).
#[derive(Clone, Debug)]
pub(super) struct ChangeIds {
    prefix: String,
}

impl ChangeIds {
    pub(super) fn new(table: &str) -> Self {
        let prefix = if table == "diff" {
            String::new()
        } else {
            format!("{table}-")
        };
        Self { prefix }
    }

    /// A part's id: `name` with the table's prefix.
    pub(super) fn name(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// The id of the first row of change `k` (counted from 0; the id counts from 1).
    pub(super) fn row(&self, k: usize) -> String {
        format!("{}change-{}", self.prefix, k + 1)
    }
}

/// For each row, the change it belongs to (counted from 0) and whether it is that change's
/// first row: a change is a run of rows that are not the same on both sides.
pub(super) fn change_starts(rows: &[DiffLine]) -> Vec<Option<(usize, bool)>> {
    let mut next = 0;
    let mut inside = false;
    rows.iter()
        .map(|r| {
            let changed = !matches!(r.kind.as_str(), "same" | "skip");
            let out = match (changed, inside) {
                (false, _) => None,
                (true, false) => {
                    next += 1;
                    Some((next - 1, true))
                }
                (true, true) => Some((next - 1, false)),
            };
            inside = changed;
            out
        })
        .collect()
}

/// Each change as the list of changes names it: "line 12" (the transformed method's line; the
/// original's for a change that only removes lines), "lines 12–14" for a run.
pub(super) fn change_list(rows: &[DiffLine], starts: &[Option<(usize, bool)>]) -> Vec<String> {
    let mut spans: Vec<(u32, u32, bool)> = Vec::new();
    for (r, s) in rows.iter().zip(starts) {
        let Some((k, _)) = s else { continue };
        let (no, original) = match (r.new_no, r.old_no) {
            (Some(n), _) => (n, false),
            (None, Some(o)) => (o, true),
            (None, None) => continue,
        };
        match spans.get_mut(*k) {
            Some(span) if span.2 == original => span.1 = no,
            Some(_) => {}
            None => spans.push((no, no, original)),
        }
    }
    spans
        .into_iter()
        .map(|(a, b, original)| {
            let lines = if a == b {
                format!("line {a}")
            } else {
                format!("lines {a}–{b}")
            };
            if original {
                format!("{lines} of the original")
            } else {
                lines
            }
        })
        .collect()
}

/// Where a diff changes the method, in a few words: "line 12", "lines 12–14" (one change),
/// "3 changes, lines 12–40"; the transformed method's numbers.
pub fn where_changed(rows: &[DiffLine]) -> String {
    let starts = change_starts(rows);
    let list = change_list(rows, &starts);
    let numbers: Vec<u32> = rows
        .iter()
        .zip(&starts)
        .filter(|(_, s)| s.is_some())
        .filter_map(|(r, _)| r.new_no.or(r.old_no))
        .collect();
    match (list.len(), numbers.iter().min(), numbers.iter().max()) {
        (0, ..) => "no change".into(),
        (1, ..) => list[0].clone(),
        (n, Some(a), Some(b)) => format!("{n} changes, lines {a}–{b}"),
        (n, ..) => format!("{n} changes"),
    }
}

/// On a phone, where the unified view has one gutter (the transformed method's numbers), the
/// original's numbers on demand.
#[component]
pub(super) fn LineNumbersToggle(
    id: String,
    unified: ReadSignal<bool>,
    both_numbers: RwSignal<bool>,
) -> impl IntoView {
    view! {
        <Show when=move || unified.get()>
            <button
                type="button"
                class="secondary ln-toggle"
                id=id.clone()
                aria-pressed=move || both_numbers.get().to_string()
                on:click=move |_| both_numbers.update(|b| *b = !*b)
            >
                "Original's line numbers"
            </button>
        </Show>
    }
}

/// The bar under a diff: previous and next change, and the list of changes (any change in two
/// steps). It stays at the bottom of the screen while the diff is on it.
#[component]
pub(super) fn ChangeNav(
    changes: Vec<String>,
    ids: ChangeIds,
    at: RwSignal<Option<usize>>,
) -> impl IntoView {
    let n = changes.len();
    let rows: Vec<String> = (0..n).map(|k| ids.row(k)).collect();
    let go = {
        let rows = rows.clone();
        move |k: usize| {
            at.set(Some(k));
            if let Some(row) = rows.get(k) {
                show_change(row);
            }
        }
    };
    let step = {
        let (go, rows) = (go.clone(), rows.clone());
        move |forward: bool| {
            let now = where_now(&rows, at.get_untracked());
            let k = match (now, forward) {
                (None, true) => 0,
                (None, false) => return,
                (Some(i), true) => (i + 1).min(n - 1),
                (Some(i), false) => i.saturating_sub(1),
            };
            go(k);
        }
    };
    let (next, prev) = (step.clone(), step);
    let options = changes
        .iter()
        .enumerate()
        .map(|(k, what)| {
            view! { <option value=(k + 1).to_string()>{format!("{} of {n}: {what}", k + 1)}</option> }
        })
        .collect_view();
    let status = move || match at.get() {
        Some(k) if k + 1 == n => format!("Change {} of {n}, the last", k + 1),
        Some(k) => format!("Change {} of {n}", k + 1),
        None => String::new(),
    };
    let count = crate::text::count(n as i64, "change");
    let status_id = ids.name("change-status");
    view! {
        <nav class="change-nav" aria-label="Changes">
            <button type="button" class="secondary" id=ids.name("prev-change") on:click=move |_| prev(false)>
                "Previous"<span class="wide-only">" change"</span><span class="key-name">" (p)"</span>
            </button>
            <select
                id=ids.name("goto-change")
                aria-label="Go to a change"
                prop:value=move || at.get().map(|k| (k + 1).to_string()).unwrap_or_default()
                on:change=move |e| {
                    if let Ok(k) = event_target_value(&e).parse::<usize>() {
                        if (1..=n).contains(&k) {
                            go(k - 1);
                        }
                    }
                }
            >
                <option value="">{format!("{count}…")}</option>
                {options}
            </select>
            <button type="button" class="secondary" id=ids.name("next-change") on:click=move |_| next(true)>
                "Next"<span class="wide-only">" change"</span><span class="key-name">" (n)"</span>
            </button>
            <span class="offscreen" role="status" id=status_id>{status}</span>
        </nav>
    }
}

/// Brings the change whose first row has the id `row` to the middle of the screen, and the
/// focus to it (a keyboard user goes on reading from there).
pub fn show_change(row: &str) {
    #[cfg(feature = "hydrate")]
    {
        use leptos::wasm_bindgen::JsCast;
        let Some(el) = document().get_element_by_id(row) else {
            return;
        };
        if let Ok(el) = el.dyn_into::<leptos::web_sys::HtmlElement>() {
            let focus = leptos::web_sys::FocusOptions::new();
            focus.set_prevent_scroll(true);
            let _ = el.focus_with_options(&focus);
            let opts = leptos::web_sys::ScrollIntoViewOptions::new();
            opts.set_block(leptos::web_sys::ScrollLogicalPosition::Center);
            el.scroll_into_view_with_scroll_into_view_options(&opts);
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = row;
}

/// The change the reader is at: the last one moved to while it is still on screen; after the
/// page was scrolled by hand, the last change that starts above the screen's upper third
/// (none when every change is below it).
fn where_now(rows: &[String], last: Option<usize>) -> Option<usize> {
    #[cfg(feature = "hydrate")]
    {
        let height = window()
            .inner_height()
            .ok()
            .and_then(|h| h.as_f64())
            .unwrap_or(800.0);
        let top_of = |k: usize| {
            document()
                .get_element_by_id(&rows[k])
                .map(|el| el.get_bounding_client_rect())
        };
        if let Some(k) = last {
            if top_of(k).is_some_and(|r| r.bottom() > 0.0 && r.top() < height) {
                return last;
            }
        }
        (0..rows.len())
            .rev()
            .find(|k| top_of(*k).is_some_and(|r| r.top() <= height / 3.0))
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = rows;
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use natstudy_types::Seg;

    fn row(kind: &str, old_no: Option<u32>, new_no: Option<u32>) -> DiffLine {
        let seg = vec![Seg {
            text: "x".into(),
            changed: false,
        }];
        DiffLine {
            kind: kind.into(),
            old_no,
            new_no,
            old: seg.clone(),
            new: seg,
            buggy: false,
            buggy_new: false,
        }
    }

    /// Runs of changed rows are one change each, named by their transformed lines (the
    /// original's when only removed).
    #[test]
    fn changes_are_runs_named_by_their_lines() {
        let rows = vec![
            row("same", Some(1), Some(1)),
            row("changed", Some(2), Some(2)),
            row("added", None, Some(3)),
            row("same", Some(3), Some(4)),
            row("skip", None, None),
            row("removed", Some(9), None),
            row("same", Some(10), Some(10)),
            row("changed", Some(11), Some(11)),
        ];
        let starts = change_starts(&rows);
        assert_eq!(
            starts,
            vec![
                None,
                Some((0, true)),
                Some((0, false)),
                None,
                None,
                Some((1, true)),
                None,
                Some((2, true))
            ]
        );
        assert_eq!(
            change_list(&rows, &starts),
            ["lines 2–3", "line 9 of the original", "line 11"]
        );
        assert_eq!(where_changed(&rows), "3 changes, lines 2–11");
        assert_eq!(where_changed(&rows[..3]), "lines 2–3");
        assert_eq!(where_changed(&rows[..1]), "no change");
        let ids = ChangeIds::new("diff");
        assert_eq!(
            (ids.row(0), ids.name("next-change")),
            ("change-1".into(), "next-change".into())
        );
        let ids = ChangeIds::new("patch-diff");
        assert_eq!(ids.row(2), "patch-diff-change-3");
    }
}
