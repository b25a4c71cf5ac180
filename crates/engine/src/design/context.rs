//! What a question's analysis reads (the study's snippets and participants, the question's
//! counted responses), and how a report entry says a figure is undefined.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::record::{Answer, Response, Shown, Snippet};
use super::{Design, Question};

/// What one question's analysis reads: the study's snippets and participants, and this
/// question's counted responses in the order they were given.
pub struct Context<'a> {
    pub design: &'a Design,
    question: &'a str,
    pub snippets: &'a [Snippet],
    /// the counted participants, in first-answer order
    pub participants: Vec<String>,
    pub responses: Vec<&'a Response>,
    snippet_index: HashMap<&'a str, usize>,
    participant_index: HashMap<String, usize>,
}

impl<'a> Context<'a> {
    pub fn new(
        design: &'a Design,
        snippets: &'a [Snippet],
        question: &'a Question,
        responses: &'a [Response],
    ) -> Context<'a> {
        let snippet_index = snippets
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.as_str(), i))
            .collect();
        let mut participants = Vec::new();
        let mut participant_index = HashMap::new();
        let mut mine = Vec::new();
        for r in responses.iter().filter(|r| r.question == question.id) {
            if !participant_index.contains_key(&r.participant) {
                participant_index.insert(r.participant.clone(), participants.len());
                participants.push(r.participant.clone());
            }
            mine.push(r);
        }
        Context {
            design,
            question: &question.id,
            snippets,
            participants,
            responses: mine,
            snippet_index,
            participant_index,
        }
    }

    pub fn question_id(&self) -> &'a str {
        self.question
    }

    pub fn snippet(&self, id: &str) -> Option<usize> {
        self.snippet_index.get(id).copied()
    }

    pub fn participant(&self, id: &str) -> usize {
        self.participant_index.get(id).copied().unwrap_or(0)
    }

    /// (participant, snippet, answer) of each one-snippet response.
    pub fn single_answers(&self) -> impl Iterator<Item = (usize, usize, &'a Answer)> + '_ {
        self.responses.iter().filter_map(|r| match &r.shown {
            Shown::Item(id) => Some((
                self.participant(&r.participant),
                self.snippet(id)?,
                &r.answer,
            )),
            _ => None,
        })
    }

    /// The design's non-baseline conditions that the given snippets have, and each answer's
    /// 0/1 row over them (the baseline is the design's first condition).
    pub fn condition_columns(
        &self,
        snippets: impl Iterator<Item = usize>,
    ) -> (Vec<String>, Vec<Vec<f64>>) {
        let of: Vec<Option<&str>> = snippets
            .map(|s| self.snippets[s].condition.as_deref())
            .collect();
        let columns: Vec<String> = self
            .design
            .conditions
            .iter()
            .skip(1)
            .filter(|c| of.contains(&Some(c.as_str())))
            .cloned()
            .collect();
        let rows = of
            .iter()
            .map(|o| {
                columns
                    .iter()
                    .map(|c| f64::from(u8::from(*o == Some(c.as_str()))))
                    .collect()
            })
            .collect();
        (columns, rows)
    }

    /// Values grouped by their snippet's condition, in the design's order of conditions
    /// (snippets without one under "(none)").
    pub fn by_condition<T>(
        &self,
        values: impl Iterator<Item = (usize, T)>,
    ) -> Vec<(String, Vec<T>)> {
        let mut groups: Vec<(String, Vec<T>)> = self
            .design
            .conditions
            .iter()
            .map(|c| (c.clone(), Vec::new()))
            .collect();
        for (s, v) in values {
            let name = self.snippets[s].condition.as_deref().unwrap_or("(none)");
            match groups.iter_mut().find(|(c, _)| c == name) {
                Some((_, g)) => g.push(v),
                None => groups.push((name.to_owned(), vec![v])),
            }
        }
        groups.retain(|(_, g)| !g.is_empty());
        groups
    }
}

/// Puts `key` into `out`: the figure, or `null` with the reason under `<key>_reason`.
pub fn put(out: &mut Map<String, Value>, key: &str, figure: Result<Value, String>) {
    match figure {
        Ok(v) => {
            out.insert(key.to_owned(), v);
        }
        Err(reason) => {
            out.insert(key.to_owned(), Value::Null);
            out.insert(format!("{key}_reason"), json!(reason));
        }
    }
}

/// A number as JSON, or the reason it is not one.
pub fn finite(x: Result<f64, impl ToString>) -> Result<Value, String> {
    match x {
        Ok(v) if v.is_finite() => Ok(json!(v)),
        Ok(_) => Err("undefined on these answers".into()),
        Err(e) => Err(e.to_string()),
    }
}
