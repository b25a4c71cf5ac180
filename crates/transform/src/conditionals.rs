//! Conditional operators: `ElseIf2If`, `IfElse2IfElseIf`, `ReverseIf`, `If2CondExp`,
//! `CondExp2If`, `DividingComposedIf` and `Switch2If`.

use tree_sitter::Node;

use super::purity::{has_effects, negate, operand};
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
fn header_comments(i: Node<'_>) -> bool {
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
