//! `SwapStatement`: two adjacent statements exchange places when independence is proved.
//!
//! Both must be simple (an assignment or update of a variable, or a declaration) whose only
//! effect is that write, neither may throw, and neither may touch a name the other writes
//! (names are compared as text, so fields and locals with the same name count as dependent).

use std::collections::HashSet;

use tree_sitter::Node;

use super::purity::{effect_nodes, may_throw};
use super::syntax::{self, descendants, field, fields, named_children, Edit};
use super::{Candidate, Ctx};

/// The names a simple statement writes, or `None` when it is not simple.
fn writes<'s>(stmt: Node<'_>, src: &'s str) -> Option<HashSet<&'s str>> {
    if may_throw(stmt, src) || syntax::has_comment(stmt) {
        return None;
    }
    let effects = effect_nodes(stmt);
    match stmt.kind() {
        "local_variable_declaration" => {
            if !effects.is_empty() {
                return None;
            }
            Some(
                fields(stmt, "declarator")
                    .into_iter()
                    .filter_map(|d| field(d, "name"))
                    .map(|n| syntax::text(n, src))
                    .collect(),
            )
        }
        "expression_statement" => {
            let e = named_children(stmt).into_iter().next()?;
            let target = match e.kind() {
                "assignment_expression" => field(e, "left")?,
                "update_expression" => named_children(e).into_iter().next()?,
                _ => return None,
            };
            let plain = target.kind() == "identifier"
                || (target.kind() == "field_access"
                    && field(target, "object").is_some_and(|o| o.kind() == "this"));
            if !plain || effects.iter().any(|n| n.id() != e.id()) {
                return None;
            }
            let name = match target.kind() {
                "identifier" => target,
                _ => field(target, "field")?,
            };
            Some(HashSet::from([syntax::text(name, src)]))
        }
        _ => None,
    }
}

fn mentions<'s>(stmt: Node<'_>, src: &'s str) -> HashSet<&'s str> {
    descendants(stmt)
        .into_iter()
        .filter(|n| n.kind() == "identifier")
        .map(|n| syntax::text(n, src))
        .collect()
}

/// `SwapStatement`: adjacent independent statements swap places.
pub fn swap_statements(ctx: &Ctx<'_>) -> Vec<Candidate> {
    let mut out = Vec::new();
    for block in ctx.nodes(&["block"]) {
        for pair in named_children(block).windows(2) {
            let (a, b) = (pair[0], pair[1]);
            let (Some(wa), Some(wb)) = (writes(a, ctx.src), writes(b, ctx.src)) else {
                ctx.refuse::<()>(
                    a,
                    "not two simple statements (assignments or declarations that call, throw and comment nothing)",
                );
                continue;
            };
            let (ma, mb) = (mentions(a, ctx.src), mentions(b, ctx.src));
            if !wa.is_disjoint(&mb) || !wb.is_disjoint(&ma) {
                ctx.refuse::<()>(a, "one statement writes a name the other mentions");
                continue;
            }
            let edits = vec![Edit::replace(a, ctx.text(b)), Edit::replace(b, ctx.text(a))];
            let summary = format!("swaps `{}` and `{}`", ctx.text(a), ctx.text(b));
            out.push(Candidate::new(edits, summary));
        }
    }
    out
}
