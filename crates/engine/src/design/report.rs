//! The analysis of a designed study: one report entry per question, each made by its kind
//! (`kinds/<kind>.rs`). A figure that is undefined on the data is `null`, with its reason
//! beside it under `<name>_reason`; never NaN, never a panic.

use serde_json::{Map, Value};

use super::context::Context;
use super::kinds::{self, Kind};
use super::record::Response;
use super::snippets::Snippet;
use super::Design;

/// What an analysis computes beyond its figures' defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// The Likert questions' mixed ordinal model (the slowest figure: a Laplace fit).
    pub mixed_model: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { mixed_model: true }
    }
}

/// Every question's entry, keyed by question id: `{"<id>": {"kind": …, …}}`.
pub fn analyse(design: &Design, snippets: &[Snippet], responses: &[Response]) -> Value {
    analyse_with(design, snippets, responses, Options::default())
}

/// [`analyse`] with its options.
pub fn analyse_with(
    design: &Design,
    snippets: &[Snippet],
    responses: &[Response],
    options: Options,
) -> Value {
    let mut out = Map::new();
    for q in &design.questions {
        let cx = Context::new(design, snippets, q, responses);
        let entry = match &q.kind {
            Kind::Likert(l) => kinds::likert::analyse(l, &cx, options.mixed_model),
            Kind::Choice(o) => kinds::options::analyse("choice", o, &cx),
            Kind::Multi(o) => kinds::options::analyse("multi", o, &cx),
            Kind::Text(t) => kinds::text::analyse(t, &cx),
            Kind::Number(n) => kinds::number::analyse(n, &cx),
            Kind::Pairwise(p) => kinds::pairwise::analyse(p, &cx),
            Kind::BestWorst(b) => kinds::best_worst::analyse(b, &cx),
            Kind::Answer(_) => kinds::answer::analyse(&cx),
        };
        out.insert(q.id.clone(), entry);
    }
    Value::Object(out)
}
