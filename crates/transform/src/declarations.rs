//! Operators on declarations and statement splitting: `MergeVarDecl`, `DivideVarDecl` and
//! `InfixDividing`.

use tree_sitter::Node;

use super::purity::{has_effects, inert};
use super::syntax::{self, field, fields, in_block, named_children, operator, Edit};
use super::types::is_simple;
use super::{Candidate, Ctx};

/// The modifiers and type of a declaration, as written (`final int`), `None` for `var`.
fn head(decl: Node<'_>, src: &str) -> Option<String> {
    let ty = field(decl, "type")?;
    let ty_text = syntax::text(ty, src);
    if ty_text == "var" {
        return None;
    }
    let mods = named_children(decl)
        .into_iter()
        .find(|c| c.kind() == "modifiers")
        .map(|m| format!("{} ", syntax::text(m, src)));
    Some(format!("{}{ty_text}", mods.unwrap_or_default()))
}

fn declarators<'s>(decl: Node<'_>, src: &'s str) -> Vec<&'s str> {
    fields(decl, "declarator")
        .into_iter()
        .map(|d| syntax::text(d, src))
        .collect()
}

/// `MergeVarDecl`: two adjacent declarations with the same modifiers and type become one
/// (`int a = 1; int b;` → `int a = 1, b;`).
pub fn merge(ctx: &Ctx<'_>) -> Vec<Candidate> {
    let mut out = Vec::new();
    for block in ctx.nodes(&["block"]) {
        let stmts = named_children(block);
        for pair in stmts.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if a.kind() != "local_variable_declaration" || b.kind() != "local_variable_declaration"
            {
                continue;
            }
            let (Some(ha), Some(hb)) = (head(a, ctx.src), head(b, ctx.src)) else {
                ctx.refuse::<()>(a, "a `var` declaration");
                continue;
            };
            if ha != hb {
                ctx.refuse::<()>(a, "different types or modifiers");
                continue;
            }
            if syntax::has_comment(a) || syntax::has_comment(b) {
                ctx.refuse::<()>(a, "a comment in a declaration");
                continue;
            }
            let mut decls = declarators(a, ctx.src);
            decls.extend(declarators(b, ctx.src));
            let new = format!("{ha} {};", decls.join(", "));
            let edit = Edit {
                start: a.start_byte(),
                end: b.end_byte(),
                text: new.clone(),
            };
            out.push(Candidate::new(
                vec![edit],
                format!("merges two declarations into `{new}`"),
            ));
        }
    }
    out
}

/// `DivideVarDecl`: a declaration of several variables becomes one declaration per variable.
pub fn divide(ctx: &Ctx<'_>) -> Vec<Candidate> {
    ctx.nodes(&["local_variable_declaration"])
        .into_iter()
        .filter_map(|d| {
            let decls = declarators(d, ctx.src);
            if decls.len() < 2 {
                return None;
            }
            if !in_block(d) {
                return ctx.refuse(d, "not a statement of a block (a `for` header)");
            }
            if syntax::has_comment(d) {
                return ctx.refuse(d, "a comment in the declaration");
            }
            let Some(h) = head(d, ctx.src) else {
                return ctx.refuse(d, "a `var` declaration");
            };
            let indent = ctx.indent(d);
            let new = decls
                .iter()
                .map(|x| format!("{h} {x};"))
                .collect::<Vec<_>>()
                .join(&format!("\n{indent}"));
            let summary = format!("splits `{}` into one declaration per variable", ctx.text(d));
            Some(Candidate::new(vec![Edit::replace(d, new)], summary))
        })
        .collect()
}

/// Operators whose operands may be computed first into a temporary.
const ARITHMETIC: &[&str] = &["+", "-", "*", "/", "%", "<<", ">>", ">>>", "&", "|", "^"];

/// The value a statement computes and the target it stores it in, when the statement is a
/// plain assignment to a variable, a single-variable declaration or a `return`.
fn statement_value<'t>(stmt: Node<'t>, src: &str) -> Option<Node<'t>> {
    match stmt.kind() {
        "expression_statement" => {
            let e = named_children(stmt).into_iter().next()?;
            let left = field(e, "left")?;
            let plain_target = left.kind() == "identifier"
                || (left.kind() == "field_access"
                    && field(left, "object").is_some_and(|o| o.kind() == "this"));
            (e.kind() == "assignment_expression" && plain_target).then(|| field(e, "right"))?
        }
        "local_variable_declaration" => match fields(stmt, "declarator").as_slice() {
            [d] => field(*d, "value"),
            _ => None,
        },
        "return_statement" => named_children(stmt).into_iter().next(),
        _ => None,
    }
    .filter(|v| v.kind() == "binary_expression" && ARITHMETIC.contains(&operator(*v, src)))
}

/// `InfixDividing`: `x = a + b * c;` → `int temp = b * c;` then `x = a + temp;`. The operand
/// moved out is an arithmetic sub-expression of known primitive or `String` type; the statement
/// has no other effects, and what the original evaluated before the operand cannot throw.
pub fn infix_dividing(ctx: &Ctx<'_>) -> Vec<Candidate> {
    let stmts = ctx.nodes(&[
        "expression_statement",
        "local_variable_declaration",
        "return_statement",
    ]);
    let mut out = Vec::new();
    for stmt in stmts {
        let Some(value) = statement_value(stmt, ctx.src) else {
            continue;
        };
        if !in_block(stmt) {
            ctx.refuse::<()>(stmt, "not a statement of a block");
            continue;
        }
        if syntax::has_comment(stmt) {
            ctx.refuse::<()>(stmt, "a comment in the statement");
            continue;
        }
        if has_effects(value) {
            ctx.refuse::<()>(stmt, "the value has effects (a call, an assignment)");
            continue;
        }
        let (Some(left), Some(right)) = (field(value, "left"), field(value, "right")) else {
            continue;
        };
        for (part, before) in [(left, None), (right, Some(left))] {
            let inner = syntax::unparen(part);
            if inner.kind() != "binary_expression"
                || !ARITHMETIC.contains(&operator(inner, ctx.src))
            {
                continue;
            }
            if before.is_some_and(|b| !inert(b, ctx.src)) {
                ctx.refuse::<()>(
                    inner,
                    "what is evaluated before the operand may throw or has effects",
                );
                continue;
            }
            let Some(ty) = ctx.types.infer(inner, ctx.src).filter(|t| is_simple(t)) else {
                ctx.refuse::<()>(
                    inner,
                    "the operand's type is not known to be primitive or `String`",
                );
                continue;
            };
            let temp = ctx.fresh("temp");
            let indent = ctx.indent(stmt);
            let decl = format!("{ty} {temp} = {};\n{indent}", ctx.text(inner));
            let summary = format!("computes `{}` first into `{temp}`", ctx.text(inner));
            out.push(Candidate::new(
                vec![
                    Edit::insert(stmt.start_byte(), decl),
                    Edit::replace(part, temp.clone()),
                ],
                summary,
            ));
        }
    }
    out
}
