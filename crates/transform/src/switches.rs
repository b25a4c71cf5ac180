//! `Switch2If`: a classic `switch` over literals as an `if`-`else if` chain.

use tree_sitter::Node;

use super::conditionals::header_comments;
use super::purity::{has_effects, operand};
use super::syntax::{self, descendants, field, in_block, named_children, Edit};
use super::{Candidate, Ctx};

/// A `case` constant usable in a comparison: a number, character or string literal.
fn label_constant<'t>(n: Node<'t>, src: &str) -> Option<(Node<'t>, bool)> {
    let inner = if n.kind() == "unary_expression" && syntax::operator(n, src) == "-" {
        field(n, "operand")?
    } else {
        n
    };
    match inner.kind() {
        "decimal_integer_literal"
        | "hex_integer_literal"
        | "octal_integer_literal"
        | "binary_integer_literal"
        | "character_literal" => Some((n, false)),
        "string_literal" => Some((n, true)),
        _ => None,
    }
}

/// `Switch2If`: a classic `switch` over literals becomes an `if`-`else if` chain. Cases that
/// share a body join with `||`; each body ends in `break` (dropped) or a jump (kept), the last
/// may fall off the end; `default` must come last (it becomes `else`). Skips fall-through,
/// other `break`s of the switch, declarations shared between cases, and selectors with effects.
pub fn switch_to_if(ctx: &Ctx<'_>) -> Vec<Candidate> {
    ctx.nodes(&["switch_expression"])
        .into_iter()
        .filter_map(|sw| {
            if !in_block(sw) {
                return ctx.refuse(sw, "a `switch` expression, not a statement of a block");
            }
            let sel = syntax::unparen(field(sw, "condition")?);
            let body = field(sw, "body")?;
            if has_effects(sel) {
                return ctx.refuse(sw, "the selector has effects (it would be evaluated per case)");
            }
            if header_comments(sw) {
                return ctx.refuse(sw, "comments between the `switch`'s parts");
            }
            let groups = named_children(body);
            if groups.is_empty() {
                return ctx.refuse(sw, "an empty `switch`");
            }
            if groups
                .iter()
                .any(|g| g.kind() != "switch_block_statement_group")
            {
                return ctx.refuse(sw, "arrow cases (`case … ->`) or comments between cases");
            }
            let indent = ctx.indent(sw);
            let inner = format!("{indent}{}", ctx.style.unit);
            let sel_text = operand(sel, ctx.src);
            let mut branches: Vec<(Option<String>, Vec<String>)> = Vec::new();
            let mut pending: Vec<String> = Vec::new();
            let mut saw_default = false;
            let mut declared: Vec<(usize, String)> = Vec::new();
            let n = groups.len();
            for (gi, g) in groups.iter().enumerate() {
                if saw_default {
                    return ctx.refuse(sw, "`default` is not the last case");
                }
                let kids = named_children(*g);
                let (labels, stmts): (Vec<Node<'_>>, Vec<Node<'_>>) =
                    kids.into_iter().partition(|k| k.kind() == "switch_label");
                for l in &labels {
                    let exprs = named_children(*l);
                    if exprs.is_empty() {
                        saw_default = true;
                    }
                    for e in exprs {
                        let Some((c, is_string)) = label_constant(e, ctx.src) else {
                            return ctx.refuse(
                                sw,
                                "a case label is no number, character or string literal (an enum constant or a pattern)",
                            );
                        };
                        pending.push(if is_string {
                            format!("{sel_text}.equals({})", ctx.text(c))
                        } else {
                            format!("{sel_text} == {}", ctx.text(c))
                        });
                    }
                }
                let code: Vec<Node<'_>> = stmts
                    .iter()
                    .copied()
                    .filter(|s| !syntax::is_comment(*s))
                    .collect();
                if code.is_empty() && !saw_default && gi + 1 < n {
                    continue; // labels sharing the next body
                }
                let mut keep = stmts.clone();
                match code.last() {
                    Some(last)
                        if last.kind() == "break_statement" && ctx.text(*last) == "break;" =>
                    {
                        keep.retain(|s| s.id() != last.id());
                    }
                    Some(last)
                        if matches!(
                            last.kind(),
                            "return_statement" | "throw_statement" | "continue_statement"
                        ) => {}
                    _ if gi + 1 == n => {}
                    _ => return ctx.refuse(sw, "a case falls through into the next"),
                }
                for s in &keep {
                    if descendants(*s).into_iter().any(|d| {
                        d.kind() == "break_statement"
                            && named_children(d).is_empty()
                            && breaks_switch(d, sw)
                    }) {
                        return ctx.refuse(sw, "a `break` of the switch inside a case's body");
                    }
                    if s.kind() == "local_variable_declaration" {
                        for d in syntax::fields(*s, "declarator") {
                            if let Some(name) = field(d, "name") {
                                declared.push((gi, ctx.text(name).to_owned()));
                            }
                        }
                    }
                }
                let lines: Vec<String> = keep
                    .iter()
                    .map(|s| syntax::moved(*s, ctx.src, &inner))
                    .collect();
                let cond = if saw_default {
                    None
                } else {
                    Some(pending.join(" || "))
                };
                pending.clear();
                branches.push((cond, lines));
            }
            // a variable declared in one case and used in another would lose its declaration
            for (gi, name) in &declared {
                let used_elsewhere = groups.iter().enumerate().any(|(gj, g)| {
                    gj != *gi
                        && descendants(*g)
                            .into_iter()
                            .any(|d| d.kind() == "identifier" && ctx.text(d) == name)
                });
                if used_elsewhere {
                    return ctx.refuse(sw, "a variable declared in one case is used in another");
                }
            }
            if branches.first().and_then(|b| b.0.as_ref()).is_none() {
                return ctx.refuse(sw, "a lone `default` is no `if`");
            }
            let mut out = String::new();
            for (k, (cond, lines)) in branches.iter().enumerate() {
                if k > 0 {
                    out.push_str(&ctx.style.else_kw(indent));
                    out.push(' ');
                }
                if let Some(c) = cond {
                    out.push_str(&format!("if ({c})"));
                } else {
                    out.pop(); // `else` takes the block directly
                }
                out.push_str(&ctx.style.block(indent, lines));
            }
            Some(Candidate::new(
                vec![Edit::replace(sw, out)],
                format!(
                    "rewrites `switch {}` as an `if`-`else if` chain",
                    ctx.text(field(sw, "condition")?)
                ),
            ))
        })
        .collect()
}

/// Whether an unlabeled `break` leaves this `switch` (no nearer loop or switch encloses it).
fn breaks_switch(brk: Node<'_>, sw: Node<'_>) -> bool {
    let mut n = brk;
    while let Some(p) = n.parent() {
        if p.id() == sw.id() {
            return true;
        }
        if matches!(
            p.kind(),
            "for_statement"
                | "enhanced_for_statement"
                | "while_statement"
                | "do_statement"
                | "switch_expression"
                | "lambda_expression"
                | "class_body"
        ) {
            return false;
        }
        n = p;
    }
    false
}
