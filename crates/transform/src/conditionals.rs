//! Conditional operators: `ElseIf2If`, `IfElse2IfElseIf`, `ReverseIf`, `If2CondExp`,
//! `CondExp2If` and `DividingComposedIf` (`Switch2If` is in `switches.rs`).

use tree_sitter::Node;

use super::purity::{has_effects, negate};
use super::syntax::{self, children, descendants, field, in_block, named_children, Edit};
use super::types::numeric_rank;
use super::{Candidate, Ctx};

fn else_kw(node: Node<'_>) -> Option<Node<'_>> {
    children(node).into_iter().find(|c| c.kind() == "else")
}

/// `ElseIf2If`: `if (a) {…} else if (b) {…}` → `if (a) {…} else { if (b) {…} }`.
pub fn else_if_to_if(ctx: &Ctx<'_>) -> Vec<Candidate> {
    ctx.nodes(&["if_statement"])
        .into_iter()
        .filter_map(|i| {
            let alt = field(i, "alternative").filter(|a| a.kind() == "if_statement")?;
            let kw = else_kw(i)?;
            let indent = ctx.indent(kw);
            let inner = format!("{indent}{}", ctx.style.unit);
            let nested = syntax::moved(alt, ctx.src, &inner);
            let edit = Edit {
                start: kw.end_byte(),
                end: alt.end_byte(),
                text: ctx.style.block(indent, &[nested]),
            };
            Some(Candidate::new(
                vec![edit],
                "turns an `else if` into an `if` nested in the `else` block",
            ))
        })
        .collect()
}

/// `IfElse2IfElseIf`: `if (c) {…} else {…}` → `if (c) {…} else if (!c) {…}`, when evaluating
/// `c` again has no effect.
pub fn if_else_to_else_if(ctx: &Ctx<'_>) -> Vec<Candidate> {
    ctx.nodes(&["if_statement"])
        .into_iter()
        .filter_map(|i| {
            let alt = field(i, "alternative").filter(|a| a.kind() != "if_statement")?;
            let cond = field(i, "condition")?;
            let cons = field(i, "consequence")?;
            // javac's flow analysis cannot see that `c` and `!c` cover every case: skip an `if`
            // that never completes normally (code after it would become reachable) and one
            // that definitely assigns a variable declared without a value.
            if has_effects(cond) {
                return ctx.refuse(i, "the condition has effects: it would be evaluated twice");
            }
            if cannot_complete(cons, ctx.src) && cannot_complete(alt, ctx.src) {
                return ctx.refuse(
                    i,
                    "neither branch completes normally: javac would find code after it reachable (a missing return)",
                );
            }
            if assigns_unset(ctx, i) {
                return ctx.refuse(
                    i,
                    "it assigns a variable javac must see definitely assigned (a local without a value, a blank final field)",
                );
            }
            let kw = else_kw(i)?;
            let g = &ctx.src[kw.end_byte()..alt.start_byte()];
            let neg = negate(cond, ctx.src);
            let edit = Edit {
                start: kw.end_byte(),
                end: alt.start_byte(),
                text: format!(" if ({neg}){g}"),
            };
            Some(Candidate::new(
                vec![edit],
                format!("makes the `else` an `else if ({neg})`"),
            ))
        })
        .collect()
}

/// Whether a statement cannot complete normally in javac's sense (JLS 14.22), erring towards
/// "cannot": a jump; a block with such a statement; an `if`/`else` both of whose branches
/// cannot; a `try` whose block cannot (or whose `finally` cannot); an infinite loop
/// (`while (true)`, `for (;;)`, `do … while (true)`); a `switch` with a `default`; labeled and
/// `synchronized` statements as their body.
fn cannot_complete(node: Node<'_>, src: &str) -> bool {
    match node.kind() {
        "return_statement" | "throw_statement" | "break_statement" | "continue_statement"
        | "yield_statement" => true,
        "block" => named_children(node)
            .into_iter()
            .any(|s| !syntax::is_comment(s) && cannot_complete(s, src)),
        "if_statement" => match (field(node, "consequence"), field(node, "alternative")) {
            (Some(c), Some(a)) => cannot_complete(c, src) && cannot_complete(a, src),
            _ => false,
        },
        "try_statement" | "try_with_resources_statement" => {
            field(node, "body").is_some_and(|b| cannot_complete(b, src))
                || named_children(node)
                    .into_iter()
                    .filter(|c| c.kind() == "finally_clause")
                    .any(|f| {
                        named_children(f)
                            .into_iter()
                            .any(|b| cannot_complete(b, src))
                    })
        }
        "while_statement" | "do_statement" => field(node, "condition").is_some_and(|c| {
            src[c.byte_range()]
                .trim_matches(|ch: char| ch == '(' || ch == ')' || ch.is_whitespace())
                == "true"
        }),
        "for_statement" => field(node, "condition").is_none(),
        "switch_statement" | "switch_expression" => descendants(node).iter().any(|d| {
            d.kind() == "switch_label" && children(*d).iter().any(|c| c.kind() == "default")
        }),
        "labeled_statement" | "synchronized_statement" => {
            named_children(node)
                .into_iter()
                .any(|c| c.kind() == "block" && cannot_complete(c, src))
                || named_children(node)
                    .last()
                    .is_some_and(|c| cannot_complete(*c, src))
        }
        _ => false,
    }
}

/// Whether `node` assigns a variable javac tracks for definite assignment: a local of the
/// method declared without a value, or — in a constructor, where blank `final` fields must be
/// assigned exactly once — any field (`this.f = …`, or a name that is no local or parameter).
fn assigns_unset(ctx: &Ctx<'_>, node: Node<'_>) -> bool {
    assigns_unset_local(ctx, node)
        || (ctx.method.kind() == "constructor_declaration" && assigns_field(ctx, node))
}

/// Whether `node` assigns a field (not a local or parameter of the method).
fn assigns_field(ctx: &Ctx<'_>, node: Node<'_>) -> bool {
    let locals: Vec<&str> = ctx
        .nodes(&[
            "variable_declarator",
            "formal_parameter",
            "spread_parameter",
            "catch_formal_parameter",
        ])
        .into_iter()
        .filter_map(|d| field(d, "name"))
        .map(|n| ctx.text(n))
        .collect();
    descendants(node).into_iter().any(|n| {
        n.kind() == "assignment_expression"
            && field(n, "left").is_some_and(|l| match l.kind() {
                "identifier" => !locals.contains(&ctx.text(l)),
                "field_access" => field(l, "object").is_some_and(|o| o.kind() == "this"),
                _ => false,
            })
    })
}

/// Whether `node` assigns a local variable of the method that is declared without a value.
fn assigns_unset_local(ctx: &Ctx<'_>, node: Node<'_>) -> bool {
    let unset: Vec<&str> = ctx
        .nodes(&["variable_declarator"])
        .into_iter()
        .filter(|d| field(*d, "value").is_none())
        .filter_map(|d| field(d, "name"))
        .map(|n| ctx.text(n))
        .collect();
    descendants(node).into_iter().any(|n| {
        n.kind() == "assignment_expression"
            && field(n, "left")
                .is_some_and(|l| l.kind() == "identifier" && unset.contains(&ctx.text(l)))
    })
}

/// Whether an `if` has comments between its parts (operators that rebuild it would drop them).
pub(super) fn header_comments(i: Node<'_>) -> bool {
    children(i).into_iter().any(syntax::is_comment)
}

/// `ReverseIf`: `if (c) {A} else {B}` → `if (!c) {B} else {A}` (both branches blocks).
pub fn reverse_if(ctx: &Ctx<'_>) -> Vec<Candidate> {
    ctx.nodes(&["if_statement"])
        .into_iter()
        .filter_map(|i| {
            let alt = field(i, "alternative")?;
            let Some(cons) = field(i, "consequence").filter(|c| c.kind() == "block") else {
                return ctx.refuse(i, "a branch is not a block");
            };
            if alt.kind() != "block" {
                return ctx.refuse(i, "a branch is not a block (or the `else` is an `else if`)");
            }
            let cond = field(i, "condition")?;
            if header_comments(i) {
                return ctx.refuse(i, "comments between the `if`'s parts");
            }
            let neg = negate(cond, ctx.src);
            let edits = vec![
                Edit::replace(cond, format!("({neg})")),
                Edit::replace(cons, ctx.text(alt)),
                Edit::replace(alt, ctx.text(cons)),
            ];
            Some(Candidate::new(
                edits,
                format!("negates the condition to `{neg}` and swaps the branches"),
            ))
        })
        .collect()
}

/// The only statement of a branch (a block of one statement, or the statement itself).
fn single(branch: Node<'_>) -> Option<Node<'_>> {
    if branch.kind() == "block" {
        match named_children(branch).as_slice() {
            [s] => Some(*s),
            _ => None,
        }
    } else {
        Some(branch)
    }
}

/// An operand of `?:` written so that it parses back as the same expression.
fn ternary_part(node: Node<'_>, src: &str, is_condition: bool) -> String {
    let loose = matches!(node.kind(), "assignment_expression" | "lambda_expression")
        || (is_condition && node.kind() == "ternary_expression");
    if loose {
        format!("({})", syntax::text(node, src))
    } else {
        syntax::text(node, src).to_owned()
    }
}

fn is_plain_lvalue(left: Node<'_>) -> bool {
    left.kind() == "identifier"
        || (left.kind() == "field_access"
            && field(left, "object").is_some_and(|o| o.kind() == "this"))
}

/// Whether `c ? a : b` has the same value as branching for a target: the two branches have the
/// same known type, or both are primitive numbers stored in a primitive variable.
fn same_typed(ctx: &Ctx<'_>, a: Node<'_>, b: Node<'_>, target: Option<&str>) -> bool {
    match (ctx.types.infer(a, ctx.src), ctx.types.infer(b, ctx.src)) {
        (Some(x), Some(y)) if x == y => true,
        (Some(x), Some(y)) => {
            let primitive = |t: &str| t.chars().next().is_some_and(char::is_lowercase);
            target.is_some_and(|t| primitive(t) && numeric_rank(t).is_some())
                && primitive(&x)
                && primitive(&y)
                && numeric_rank(&x).is_some()
                && numeric_rank(&y).is_some()
        }
        _ => false,
    }
}

/// `If2CondExp`: `if (c) x = a; else x = b;` → `x = c ? a : b;` and `if (c) return a; else
/// return b;` → `return c ? a : b;`, when the branches' types make the two forms equal.
pub fn if_to_cond(ctx: &Ctx<'_>) -> Vec<Candidate> {
    ctx.nodes(&["if_statement"])
        .into_iter()
        .filter_map(|i| {
            let (cons, alt) = (field(i, "consequence")?, field(i, "alternative")?);
            let (Some(cons), Some(alt)) = (single(cons), single(alt)) else {
                return ctx.refuse(i, "a branch holds more than one statement");
            };
            if syntax::has_comment(i) {
                return ctx.refuse(i, "a comment in the `if`");
            }
            let cond = ternary_part(syntax::unparen(field(i, "condition")?), ctx.src, true);
            match (cons.kind(), alt.kind()) {
                ("expression_statement", "expression_statement") => {
                    let (ea, eb) = (
                        named_children(cons).into_iter().next()?,
                        named_children(alt).into_iter().next()?,
                    );
                    let assigns = |e: Node<'_>| {
                        e.kind() == "assignment_expression" && syntax::operator(e, ctx.src) == "="
                    };
                    if !assigns(ea) || !assigns(eb) {
                        return ctx.refuse(i, "the branches are not both plain assignments (`=`)");
                    }
                    let (la, lb) = (field(ea, "left")?, field(eb, "left")?);
                    let (ra, rb) = (field(ea, "right")?, field(eb, "right")?);
                    let target_ty = ctx.types.infer(la, ctx.src);
                    if !is_plain_lvalue(la) || ctx.text(la) != ctx.text(lb) {
                        return ctx.refuse(i, "the branches assign different targets");
                    }
                    if !same_typed(ctx, ra, rb, target_ty.as_deref()) {
                        return ctx.refuse(
                            i,
                            "the branches' types are unknown or differ (`?:` could convert the value)",
                        );
                    }
                    let new = format!(
                        "{} = {cond} ? {} : {};",
                        ctx.text(la),
                        ternary_part(ra, ctx.src, false),
                        ternary_part(rb, ctx.src, false)
                    );
                    Some(Candidate::new(
                        vec![Edit::replace(i, new)],
                        format!("folds the `if` into `{} = … ? … : …`", ctx.text(la)),
                    ))
                }
                ("return_statement", "return_statement") => {
                    let (ra, rb) = (
                        named_children(cons).into_iter().next()?,
                        named_children(alt).into_iter().next()?,
                    );
                    if !same_typed(ctx, ra, rb, None) {
                        return ctx.refuse(
                            i,
                            "the returned values' types are unknown or differ (`?:` could convert the value)",
                        );
                    }
                    let new = format!(
                        "return {cond} ? {} : {};",
                        ternary_part(ra, ctx.src, false),
                        ternary_part(rb, ctx.src, false)
                    );
                    Some(Candidate::new(
                        vec![Edit::replace(i, new)],
                        "folds the `if` into one `return … ? … : …`",
                    ))
                }
                _ => ctx.refuse(i, "the branches are not both assignments or both returns"),
            }
        })
        .collect()
}

/// The method's declared return type.
fn return_type<'s>(ctx: &Ctx<'s>) -> Option<&'s str> {
    field(ctx.method, "type").map(|t| ctx.text(t))
}

/// `CondExp2If`: `x = c ? a : b;` → `if (c) { x = a; } else { x = b; }`; likewise for `return`
/// and a single-variable declaration (declared first, assigned in both branches).
pub fn cond_to_if(ctx: &Ctx<'_>) -> Vec<Candidate> {
    let stmts = ctx.nodes(&[
        "expression_statement",
        "return_statement",
        "local_variable_declaration",
    ]);
    stmts
        .into_iter()
        .filter_map(|s| {
            let has_ternary = descendants(s)
                .into_iter()
                .any(|d| d.kind() == "ternary_expression");
            if !has_ternary {
                return None;
            }
            if syntax::has_comment(s) {
                return ctx.refuse(s, "a comment in the statement");
            }
            let indent = ctx.indent(s);
            let (prefix, target, tern, target_ty): (
                String,
                Option<String>,
                Node<'_>,
                Option<String>,
            ) = match s.kind() {
                "expression_statement" => {
                    let e = named_children(s).into_iter().next()?;
                    if e.kind() != "assignment_expression" || syntax::operator(e, ctx.src) != "=" {
                        return ctx
                            .refuse(s, "`?:` inside an expression that is no plain assignment");
                    }
                    let Some(left) = field(e, "left").filter(|l| is_plain_lvalue(*l)) else {
                        return ctx.refuse(s, "the target is not a plain variable or `this` field");
                    };
                    let ty = ctx.types.infer(left, ctx.src);
                    (
                        String::new(),
                        Some(ctx.text(left).to_owned()),
                        syntax::unparen(field(e, "right")?),
                        ty,
                    )
                }
                "return_statement" => {
                    let v = named_children(s).into_iter().next()?;
                    (
                        String::new(),
                        None,
                        syntax::unparen(v),
                        return_type(ctx).map(str::to_owned),
                    )
                }
                _ => {
                    let ty = field(s, "type")?;
                    let [d] = syntax::fields(s, "declarator")[..] else {
                        return ctx.refuse(s, "a declaration of several variables");
                    };
                    if ctx.text(ty) == "var" {
                        return ctx.refuse(s, "a `var` declaration (the type would be lost)");
                    }
                    if !in_block(s) {
                        return ctx.refuse(s, "not a statement of a block");
                    }
                    let value = field(d, "value")?;
                    let name = ctx.text(field(d, "name")?);
                    let head = &ctx.src[s.start_byte()..value.start_byte()];
                    let head = head.trim_end().trim_end_matches('=').trim_end();
                    let ty_text = ctx.text(ty).to_owned();
                    (
                        format!("{head};\n{indent}"),
                        Some(name.to_owned()),
                        syntax::unparen(value),
                        Some(ty_text),
                    )
                }
            };
            if tern.kind() != "ternary_expression" {
                return ctx.refuse(s, "the `?:` is only part of the value");
            }
            let (c, a, b) = (
                field(tern, "condition")?,
                field(tern, "consequence")?,
                field(tern, "alternative")?,
            );
            let primitive_target = target_ty.as_deref().is_some_and(|t| {
                numeric_rank(t).is_some() && t.chars().next().is_some_and(char::is_lowercase)
            });
            if !primitive_target
                && target_ty.as_deref() != Some("boolean")
                && !same_typed(ctx, a, b, None)
            {
                return ctx.refuse(
                    s,
                    "the branches' types are unknown or differ (`?:` could convert the value)",
                );
            }
            let inner = format!("{indent}{}", ctx.style.unit);
            let branch = |v: Node<'_>| {
                let v = syntax::relocate(ctx.text(v), indent, &inner);
                match &target {
                    Some(t) => format!("{t} = {v};"),
                    None => format!("return {v};"),
                }
            };
            let new = format!(
                "{prefix}if ({}){}{}{}",
                ctx.text(c),
                ctx.style.block(indent, &[branch(a)]),
                ctx.style.else_kw(indent),
                ctx.style.block(indent, &[branch(b)])
            );
            Some(Candidate::new(
                vec![Edit::replace(s, new)],
                "unfolds `… ? … : …` into an `if`-`else`",
            ))
        })
        .collect()
}

/// `DividingComposedIf`: `if (a && b) S` → `if (a) { if (b) S }` (no `else`).
pub fn divide_composed_if(ctx: &Ctx<'_>) -> Vec<Candidate> {
    ctx.nodes(&["if_statement"])
        .into_iter()
        .filter_map(|i| {
            let cond_node = field(i, "condition")?;
            let cond = syntax::unparen(cond_node);
            if cond.kind() != "binary_expression" || syntax::operator(cond, ctx.src) != "&&" {
                return None;
            }
            if field(i, "alternative").is_some() {
                return ctx.refuse(i, "the `if` has an `else` (it would need repeating)");
            }
            if header_comments(i) {
                return ctx.refuse(i, "comments between the `if`'s parts");
            }
            let (l, r) = (field(cond, "left")?, field(cond, "right")?);
            let cons = field(i, "consequence")?;
            let indent = ctx.indent(i);
            let inner = format!("{indent}{}", ctx.style.unit);
            let g = syntax::relocate(
                &ctx.src[cond_node.end_byte()..cons.start_byte()],
                indent,
                &inner,
            );
            let nested = format!(
                "if ({}){g}{}",
                ctx.text(r),
                syntax::moved(cons, ctx.src, &inner)
            );
            let new = format!("if ({}){}", ctx.text(l), ctx.style.block(indent, &[nested]));
            Some(Candidate::new(
                vec![Edit::replace(i, new)],
                format!("splits `if ({})` into two nested `if`s", ctx.text(cond)),
            ))
        })
        .collect()
}
