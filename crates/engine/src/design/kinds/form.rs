//! A participant's answer as the survey's form sends it, read per kind into the answer the
//! responses file would hold for it — and checked by the same rules as an imported one.
//!
//! The form's fields, by a question's id `q`: `q` (a point, an option, a text, a number, or a
//! pairwise pick as the label shown: `A`, `B` or `tie`); `q.N` for each option `N` (1-based)
//! ticked in a multiple choice; `q.best` and `q.worst` (labels) for a set.

use serde_json::Value;

use super::{best_worst, pairwise, Kind};
use crate::design::record::{Answer, Shown};
use crate::design::Question;

/// The label of the `i`th snippet shown (0-based): A, B, C, …
pub fn label(i: usize) -> String {
    char::from(b'A' + (i % 26) as u8).to_string()
}

/// The snippet a label names, of those shown.
fn by_label<'a>(shown: &'a [String], given: &str) -> Option<&'a String> {
    let given = given.trim();
    shown
        .iter()
        .enumerate()
        .find(|(i, _)| label(*i).eq_ignore_ascii_case(given))
        .map(|(_, s)| s)
}

/// What was shown as the kind's unit: the snippet, the pair (A first) or the set.
pub fn shown_as(kind: &Kind, shown: &[String]) -> Result<Shown, String> {
    match (kind, shown) {
        (Kind::Pairwise(_), [a, b]) => Ok(Shown::Pair([a.clone(), b.clone()])),
        (Kind::Pairwise(_), _) => Err("a pair shows two snippets".into()),
        (Kind::BestWorst(_), set) => Ok(Shown::Set(set.to_vec())),
        (_, [one]) => Ok(Shown::Item(one.clone())),
        _ => Err("this question is about one snippet".into()),
    }
}

/// The answer to `q` in a form (`field`: a field's value by name; an empty one is not
/// given), about the snippets `shown` in the order shown; `options`: a comprehension
/// question's options of the snippet. `Err`: what the participant is told.
pub fn form_answer(
    q: &Question,
    field: impl Fn(&str) -> Option<String>,
    shown: &[String],
    options: Option<&[String]>,
) -> Result<Answer, String> {
    read(q, field, shown, options).map_err(|e| {
        if e.starts_with('“') {
            e
        } else {
            format!("“{}”: {e}", q.prompt)
        }
    })
}

fn read(
    q: &Question,
    field: impl Fn(&str) -> Option<String>,
    shown: &[String],
    options: Option<&[String]>,
) -> Result<Answer, String> {
    let get = |name: &str| field(name).filter(|v| !v.trim().is_empty());
    let missing = || format!("“{}” is not answered", q.prompt);
    match &q.kind {
        Kind::Likert(_) | Kind::Number(_) => {
            let given = get(&q.id).ok_or_else(missing)?;
            let x: f64 = given
                .trim()
                .parse()
                .map_err(|_| format!("“{}”: {given} is not a number", q.prompt))?;
            // a whole number as the responses file writes it (a point is never `4.0`)
            let value = if x.fract() == 0.0 && x.abs() < 9.0e15 {
                Value::from(x as i64)
            } else {
                serde_json::Number::from_f64(x)
                    .map(Value::Number)
                    .ok_or_else(|| format!("“{}”: {given} is not a number", q.prompt))?
            };
            q.kind.answer(&value, None)
        }
        Kind::Choice(_) | Kind::Text(_) | Kind::Answer(_) => {
            let given = get(&q.id).ok_or_else(missing)?;
            q.kind.answer(&Value::String(given), options)
        }
        Kind::Multi(o) => {
            let ticked: Vec<Value> = o
                .options
                .iter()
                .enumerate()
                .filter(|(i, _)| get(&format!("{}.{}", q.id, i + 1)).is_some())
                .map(|(_, option)| Value::String(option.clone()))
                .collect();
            q.kind.answer(&Value::Array(ticked), None)
        }
        Kind::Pairwise(p) => {
            let given = get(&q.id).ok_or_else(missing)?;
            let [a, b] = shown else {
                return Err("a pair shows two snippets".into());
            };
            let pick = if given.trim().eq_ignore_ascii_case(pairwise::TIE) {
                pairwise::TIE.to_owned()
            } else {
                by_label(shown, &given)
                    .cloned()
                    .ok_or_else(|| format!("“{}”: {given} is neither A nor B", q.prompt))?
            };
            pairwise::answer(p, &[a.clone(), b.clone()], &Value::String(pick))
        }
        Kind::BestWorst(b) => {
            let pick = |end: &str| -> Result<Value, String> {
                let given = get(&format!("{}.{end}", q.id))
                    .ok_or_else(|| format!("“{}”: the {end} is not chosen", q.prompt))?;
                by_label(shown, &given)
                    .map(|s| Value::String(s.clone()))
                    .ok_or_else(|| format!("“{}”: {given} is not one of the set", q.prompt))
            };
            let (best, worst) = (pick("best")?, pick("worst")?);
            if best == worst {
                return Err(format!(
                    "“{}”: one snippet cannot be both the best and the worst",
                    q.prompt
                ));
            }
            best_worst::answer(b, shown, &best, &worst)
        }
    }
}

/// The form's fields (name, value) that give `answer` to `q` about the snippets `shown`, in
/// the order shown: what the page fills in when the answer is shown again to be revised —
/// [`form_answer`] reads them back as the same answer.
pub fn form_fields(q: &Question, answer: &Answer, shown: &[String]) -> Vec<(String, String)> {
    let label_of = |id: &str| {
        shown
            .iter()
            .position(|s| s == id)
            .map(label)
            .unwrap_or_default()
    };
    match (&q.kind, answer) {
        (Kind::Multi(o), Answer::Options(ticked)) => o
            .options
            .iter()
            .enumerate()
            .filter(|(_, option)| ticked.contains(option))
            .map(|(i, _)| (format!("{}.{}", q.id, i + 1), "on".to_owned()))
            .collect(),
        (Kind::Pairwise(_), Answer::Text(pick)) if pick == pairwise::TIE => {
            vec![(q.id.clone(), pairwise::TIE.to_owned())]
        }
        (Kind::Pairwise(_), Answer::Text(pick)) => vec![(q.id.clone(), label_of(pick))],
        (Kind::BestWorst(_), Answer::BestWorst { best, worst }) => vec![
            (format!("{}.best", q.id), label_of(best)),
            (format!("{}.worst", q.id), label_of(worst)),
        ],
        (_, Answer::Number(x)) => vec![(q.id.clone(), number_text(*x))],
        (_, Answer::Text(t)) => vec![(q.id.clone(), t.clone())],
        _ => Vec::new(),
    }
}

/// A number as a form gives it: a whole number without a fraction.
fn number_text(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        (x as i64).to_string()
    } else {
        x.to_string()
    }
}

/// An answer in words, for the list the participant revises from: a point or a number, the
/// option or text, the options ticked, a pair's pick and a set's best and worst by the labels
/// shown.
pub fn answer_words(q: &Question, answer: &Answer, shown: &[String]) -> String {
    let fields = form_fields(q, answer, shown);
    match (&q.kind, answer) {
        (Kind::Multi(_), Answer::Options(ticked)) if ticked.is_empty() => "none".to_owned(),
        (Kind::Multi(_), Answer::Options(ticked)) => ticked.join(", "),
        (Kind::BestWorst(_), _) => match fields.as_slice() {
            [(_, best), (_, worst)] => format!("best {best}, worst {worst}"),
            _ => String::new(),
        },
        _ => fields
            .into_iter()
            .map(|(_, v)| v)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::parse_design;

    fn design() -> crate::design::Design {
        parse_design(
            "d.toml",
            r#"title = "t"
[[question]]
id = "r"
kind = "likert"
prompt = "Readable?"
points = 5
[[question]]
id = "m"
kind = "multi"
prompt = "Which?"
options = ["x", "y", "z"]
"#,
        )
        .expect("design")
    }

    fn fields<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn a_form_reads_as_an_imported_answer_and_is_checked_alike() {
        let d = design();
        let shown = ["S1".to_owned()];
        let r = &d.questions[0];
        assert_eq!(
            form_answer(r, fields(&[("r", "4")]), &shown, None),
            Ok(Answer::Number(4.0))
        );
        assert!(form_answer(r, fields(&[("r", "6")]), &shown, None).is_err());
        assert!(form_answer(r, fields(&[("r", " ")]), &shown, None)
            .is_err_and(|e| e.contains("not answered")));
        let m = &d.questions[1];
        assert_eq!(
            form_answer(m, fields(&[("m.1", "on"), ("m.3", "on")]), &shown, None),
            Ok(Answer::Options(vec!["x".into(), "z".into()]))
        );
    }

    #[test]
    fn an_answer_given_back_as_fields_reads_as_itself() {
        let d = design();
        let shown = ["S1".to_owned()];
        for (q, a) in [
            (&d.questions[0], Answer::Number(4.0)),
            (
                &d.questions[1],
                Answer::Options(vec!["x".into(), "z".into()]),
            ),
            (&d.questions[1], Answer::Options(Vec::new())),
        ] {
            let given = form_fields(q, &a, &shown);
            let field = |name: &str| {
                given
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
            };
            assert_eq!(
                form_answer(q, field, &shown, None),
                Ok(a.clone()),
                "{given:?}"
            );
        }
        assert_eq!(
            form_fields(&d.questions[1], &Answer::Options(vec!["z".into()]), &shown),
            [("m.3".to_owned(), "on".to_owned())]
        );
        let p = parse_design(
            "p.toml",
            "title = \"t\"\n[[question]]\nid = \"p\"\nkind = \"pairwise\"\nprompt = \"Better?\"\nties = true\n",
        )
        .expect("design");
        let b = parse_design(
            "b.toml",
            "title = \"t\"\n[[question]]\nid = \"s\"\nkind = \"best-worst\"\nprompt = \"Ends?\"\nset_size = 3\n",
        )
        .expect("design");
        let pair = ["S2".to_owned(), "S1".to_owned()];
        assert_eq!(
            form_fields(&p.questions[0], &Answer::Text("S1".into()), &pair),
            [("p".to_owned(), "B".to_owned())]
        );
        assert_eq!(
            answer_words(&p.questions[0], &Answer::Text("tie".into()), &pair),
            "tie"
        );
        let set = ["S3".to_owned(), "S1".to_owned(), "S2".to_owned()];
        let bw = Answer::BestWorst {
            best: "S2".into(),
            worst: "S3".into(),
        };
        assert_eq!(
            form_fields(&b.questions[0], &bw, &set),
            [
                ("s.best".to_owned(), "C".to_owned()),
                ("s.worst".to_owned(), "A".to_owned())
            ]
        );
        assert_eq!(answer_words(&b.questions[0], &bw, &set), "best C, worst A");
    }

    #[test]
    fn labels_name_the_snippets_as_shown() {
        let d = parse_design(
            "p.toml",
            "title = \"t\"\n[[question]]\nid = \"p\"\nkind = \"pairwise\"\nprompt = \"Better?\"\nties = false\n",
        )
        .expect("design");
        let q = &d.questions[0];
        let shown = ["S2".to_owned(), "S1".to_owned()];
        assert_eq!(
            form_answer(q, fields(&[("p", "A")]), &shown, None),
            Ok(Answer::Text("S2".into()))
        );
        assert_eq!(
            form_answer(q, fields(&[("p", "b")]), &shown, None),
            Ok(Answer::Text("S1".into()))
        );
        assert!(form_answer(q, fields(&[("p", "tie")]), &shown, None).is_err());
        assert!(form_answer(q, fields(&[("p", "C")]), &shown, None).is_err());
        let b = parse_design(
            "b.toml",
            "title = \"t\"\n[[question]]\nid = \"bw\"\nkind = \"best-worst\"\nprompt = \"Easiest, hardest\"\nset_size = 3\n",
        )
        .expect("design");
        let set = ["S3".to_owned(), "S1".to_owned(), "S2".to_owned()];
        assert_eq!(
            form_answer(
                &b.questions[0],
                fields(&[("bw.best", "C"), ("bw.worst", "A")]),
                &set,
                None
            ),
            Ok(Answer::BestWorst {
                best: "S2".into(),
                worst: "S3".into()
            })
        );
        assert!(form_answer(
            &b.questions[0],
            fields(&[("bw.best", "A"), ("bw.worst", "A")]),
            &set,
            None
        )
        .is_err());
    }
}
