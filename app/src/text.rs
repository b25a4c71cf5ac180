//! Small text helpers for what people read: counted nouns, and summaries whose `backticked`
//! parts are code. Pure, tested natively.

use leptos::prelude::*;

pub use natstudy_types::words::{count, noun};

/// A summary split at its backticks: (is code, text). An unpaired backtick stays text.
pub fn code_spans(s: &str) -> Vec<(bool, String)> {
    let parts: Vec<&str> = s.split('`').collect();
    // an even number of parts means an unpaired backtick: its last part is plain text
    let paired = parts.len() % 2 == 1;
    let mut out: Vec<(bool, String)> = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let code = i % 2 == 1 && (paired || !last);
        let text = if !code && i % 2 == 1 {
            format!("`{p}")
        } else {
            (*p).to_owned()
        };
        if text.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((false, prev)) if !code => prev.push_str(&text),
            _ => out.push((code, text)),
        }
    }
    out
}

/// The monitor's live Fleiss' kappa and, when there is none, why: (value, reason).
pub fn live_kappa(kappa: Option<f64>, complete_items: i64) -> (String, Option<&'static str>) {
    match kappa {
        Some(k) => (format!("{k:.3}"), None),
        None if complete_items < 2 => (
            "—".into(),
            Some("it needs at least two items with k ratings"),
        ),
        None => (
            "—".into(),
            Some("undefined: every rating so far gives the same judgement"),
        ),
    }
}

/// A transformation's summary with its `names` set as code.
#[component]
pub fn Summary(text: String) -> impl IntoView {
    code_spans(&text)
        .into_iter()
        .map(|(code, t)| {
            if code {
                view! { <code>{t}</code> }.into_any()
            } else {
                t.into_any()
            }
        })
        .collect_view()
}

/// What the finish page says of the answers kept: "Your answer is saved." for one.
pub fn answers_saved(rated: u64) -> String {
    match rated {
        1 => "Your answer is saved.".to_owned(),
        n => format!("Your {n} answers are saved."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_answer_is_saved_and_more_are() {
        assert_eq!(answers_saved(1), "Your answer is saved.");
        assert_eq!(answers_saved(2), "Your 2 answers are saved.");
        assert_eq!(answers_saved(15), "Your 15 answers are saved.");
    }

    #[test]
    fn a_missing_kappa_says_why() {
        assert_eq!(live_kappa(Some(0.41234), 9), ("0.412".into(), None));
        assert_eq!(
            live_kappa(None, 1).1,
            Some("it needs at least two items with k ratings")
        );
        assert_eq!(
            live_kappa(None, 5).1,
            Some("undefined: every rating so far gives the same judgement")
        );
    }

    #[test]
    fn backticks_become_code() {
        assert_eq!(
            code_spans("renames `end` to `limit`"),
            vec![
                (false, "renames ".into()),
                (true, "end".into()),
                (false, " to ".into()),
                (true, "limit".into()),
            ]
        );
        assert_eq!(code_spans("no code"), vec![(false, "no code".into())]);
        assert_eq!(
            code_spans("a ` lone tick"),
            vec![(false, "a ` lone tick".into())]
        );
        assert_eq!(code_spans(""), vec![]);
    }

    #[test]
    fn counted_nouns() {
        assert_eq!(count(1, "annotator"), "1 annotator");
        assert_eq!(count(0, "annotator"), "0 annotators");
        assert_eq!(count(5, "vote"), "5 votes");
        assert_eq!(noun(1, "bug"), "bug");
    }
}
