//! The rating page's keyboard rule: which question a digit answers, what it says when it
//! changes nothing or an answer, and where the focus goes for an open question.

#[cfg(feature = "hydrate")]
use leptos::prelude::*;

/// The two questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Question {
    Readability,
    Conventions,
}

impl Question {
    pub(super) fn field(self) -> &'static str {
        match self {
            Question::Readability => "cr",
            Question::Conventions => "cc",
        }
    }
}

/// The keyboard rule, as the page states it.
pub(super) const KEY_HINT: &str = "Keys: 1–4 answer the open question you are in (Tab moves between the questions), else the first open one · once both are answered, a digit changes only the question you are in, and says so · Backspace clears · Enter submits · n / p next / previous change · g guideline · c context";

/// What a digit does when both questions are answered and neither holds the focus.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
pub(super) const BOTH_ANSWERED: &str = "Both questions are answered, so that key changed nothing. To change an answer, click it, or Tab to its question and press the digit.";

/// What a digit key does.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DigitEffect {
    /// Answers this open question.
    Answer(Question),
    /// Changes this question's answer (said on the page).
    Change(Question),
    /// Nothing (said on the page).
    Ignore,
}

/// The keyboard rule: a digit answers the question that holds the focus if it is still open;
/// otherwise the first open question; with both answered, it changes the question that holds
/// the focus, visibly, and without focus it changes nothing. A digit never overwrites an answer
/// silently (a click on one question, then a digit meant for the other, answers the other).
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
pub(super) fn digit_effect(focus: Option<Question>, cr: Option<u8>, cc: Option<u8>) -> DigitEffect {
    let open = |q: Question| match q {
        Question::Readability => cr.is_none(),
        Question::Conventions => cc.is_none(),
    };
    match (focus, unanswered(cr, cc)) {
        (Some(q), _) if open(q) => DigitEffect::Answer(q),
        (_, Some(q)) => DigitEffect::Answer(q),
        (Some(q), None) => DigitEffect::Change(q),
        (None, None) => DigitEffect::Ignore,
    }
}

/// The note after a digit changed an answer.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
pub(super) fn changed_note(q: Question, before: Option<u8>, after: u8) -> String {
    let what = match q {
        Question::Readability => "readability",
        Question::Conventions => "coding conventions",
    };
    match before {
        Some(b) if b != after => {
            format!("Changed your {what} answer from {b} to {after} (Backspace clears it).")
        }
        _ => format!("Your {what} answer stays {after}."),
    }
}

/// The first question still without an answer.
pub(super) fn unanswered(cr: Option<u8>, cc: Option<u8>) -> Option<Question> {
    match (cr, cc) {
        (None, _) => Some(Question::Readability),
        (_, None) => Some(Question::Conventions),
        _ => None,
    }
}

/// Moves focus (and the view) to a question's first answer.
pub(super) fn point_to(q: Question) {
    #[cfg(feature = "hydrate")]
    {
        use leptos::wasm_bindgen::JsCast;
        if let Some(el) = document()
            .get_element_by_id(&format!("{}-1", q.field()))
            .and_then(|e| e.dyn_into::<leptos::web_sys::HtmlElement>().ok())
        {
            el.scroll_into_view();
            let _ = el.focus();
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = q;
}

#[cfg(test)]
mod tests {
    use super::{digit_effect, DigitEffect, Question};
    use DigitEffect::*;
    use Question::*;

    #[test]
    fn a_digit_answers_the_open_question_in_focus_else_the_first_open_one() {
        // nothing in focus: the first open question
        assert_eq!(digit_effect(None, None, None), Answer(Readability));
        // readability chosen by a click or by the arrow keys (focus still there): a digit
        // meant for the other question answers it, never overwriting the click
        assert_eq!(
            digit_effect(Some(Readability), Some(2), None),
            Answer(Conventions)
        );
        assert_eq!(digit_effect(None, Some(2), None), Answer(Conventions));
        // tabbed into conventions first: the digit answers conventions
        assert_eq!(
            digit_effect(Some(Conventions), None, None),
            Answer(Conventions)
        );
        // conventions answered first, readability open
        assert_eq!(digit_effect(None, None, Some(3)), Answer(Readability));
        assert_eq!(
            digit_effect(Some(Conventions), None, Some(3)),
            Answer(Readability)
        );
    }

    #[test]
    fn with_both_answered_a_digit_changes_only_the_question_in_focus() {
        assert_eq!(
            digit_effect(Some(Readability), Some(2), Some(4)),
            Change(Readability)
        );
        assert_eq!(
            digit_effect(Some(Conventions), Some(2), Some(4)),
            Change(Conventions)
        );
        assert_eq!(digit_effect(None, Some(2), Some(4)), Ignore);
    }
}
