//! Expression-level operators that rewrite one expression in place: `SwitchRelation`,
//! `SwitchEqualExp`, `SwitchStringEqual`, `Unary2Add`, `Add2Equal`, `ModifyConstant` and
//! `DividePrePostFix`.

use tree_sitter::Node;

use super::purity::{effect_nodes, has_effects, may_throw, operand};
use super::syntax::{self, descendants, field, in_block, operator, Edit};
use super::types::{binary_result, numeric_rank};
use super::{Candidate, Ctx};

/// Operators that bind no tighter than relational ones: such an operand needs parentheses
/// once it moves to the other side of `<` or `==`.
fn loose(node: Node<'_>, src: &str) -> bool {
    match node.kind() {
        "binary_expression" => matches!(
            operator(node, src),
            "<" | ">" | "<=" | ">=" | "==" | "!=" | "&" | "^" | "|" | "&&" | "||"
        ),
        "instanceof_expression"
        | "ternary_expression"
        | "assignment_expression"
        | "lambda_expression" => true,
        _ => false,
    }
}

fn side(node: Node<'_>, src: &str) -> String {
    if loose(node, src) {
        format!("({})", syntax::text(node, src))
    } else {
        syntax::text(node, src).to_owned()
    }
}

/// Swapping the operands reorders their evaluation: both must be free of effects, and at most
/// one may throw (otherwise which exception surfaces could change).
fn swappable(l: Node<'_>, r: Node<'_>, src: &str) -> bool {
    let throws = may_throw(l, src) && may_throw(r, src);
    !has_effects(l) && !has_effects(r) && !throws
}

fn mirror(ctx: &Ctx<'_>, ops: &[(&str, &str)], what: &str) -> Vec<Candidate> {
    ctx.nodes(&["binary_expression"])
        .into_iter()
        .filter_map(|n| {
            let op = operator(n, ctx.src);
            let (_, flipped) = ops.iter().find(|(o, _)| *o == op)?;
            let (l, r) = (field(n, "left")?, field(n, "right")?);
            if has_effects(l) || has_effects(r) {
                return ctx.refuse(
                    n,
                    "an operand has effects (a call, an assignment): swapping reorders them",
                );
            }
            if !swappable(l, r, ctx.src) {
                return ctx.refuse(
                    n,
                    "both operands may throw: swapping could change which exception surfaces",
                );
            }
            let new = format!("{} {flipped} {}", side(r, ctx.src), side(l, ctx.src));
            let summary = format!("{what} `{}` as `{new}`", ctx.text(n));
            Some(Candidate::new(vec![Edit::replace(n, new)], summary))
        })
        .collect()
}

/// `SwitchRelation`: `a < b` → `b > a` (and `<=`, `>`, `>=`).
pub fn switch_relation(ctx: &Ctx<'_>) -> Vec<Candidate> {
    mirror(
        ctx,
        &[("<", ">"), (">", "<"), ("<=", ">="), (">=", "<=")],
        "mirrors",
    )
}

/// `SwitchEqualExp`: `a == b` → `b == a` (and `!=`).
pub fn switch_equal(ctx: &Ctx<'_>) -> Vec<Candidate> {
    mirror(ctx, &[("==", "=="), ("!=", "!=")], "swaps the operands of")
}

/// `SwitchStringEqual`: `s.equals("lit")` → `"lit".equals(s)` (also `equalsIgnoreCase`). Only
/// with a literal argument, which is known non-null and may become the receiver; evaluating the
/// literal first changes no order of effects. (A `null` receiver made the original throw; the
/// result is now `false` — the published operator's one deliberate difference.)
pub fn switch_string_equal(ctx: &Ctx<'_>) -> Vec<Candidate> {
    ctx.nodes(&["method_invocation"])
        .into_iter()
        .filter_map(|n| {
            let name = ctx.text(field(n, "name")?);
            if !matches!(name, "equals" | "equalsIgnoreCase") {
                return None;
            }
            let object = field(n, "object")?;
            let args = syntax::named_children(field(n, "arguments")?);
            let [arg] = args.as_slice() else { return None };
            let literal = matches!(arg.kind(), "string_literal" | "text_block");
            let plain = !matches!(
                object.kind(),
                "this" | "super" | "string_literal" | "text_block"
            );
            if !literal {
                return ctx.refuse(n, "the argument is not a string literal (it could be null)");
            }
            if !plain {
                return ctx.refuse(n, "the receiver is `this`, `super` or a literal");
            }
            if syntax::has_comment(n) {
                return ctx.refuse(n, "a comment in the call");
            }
            let new = format!("{}.{name}({})", ctx.text(*arg), ctx.text(object));
            let summary = format!("swaps `{}` to `{new}`", ctx.text(n));
            Some(Candidate::new(vec![Edit::replace(n, new)], summary))
        })
        .collect()
}

/// Whether an update or assignment stands alone (its value unused): an expression statement or
/// a `for` update.
fn value_unused(n: Node<'_>) -> bool {
    n.parent().is_some_and(|p| {
        p.kind() == "expression_statement"
            || (p.kind() == "for_statement"
                && syntax::fields(p, "update").iter().any(|u| u.id() == n.id()))
    })
}

/// `Unary2Add`: `i++;` → `i = i + 1;` for `int`, `long`, `float`, `double` (and wrappers), else
/// `i += 1;` (which keeps the implicit narrowing of `byte`, `short`, `char`). Only where the
/// value is unused, on a plain variable.
pub fn unary_to_add(ctx: &Ctx<'_>) -> Vec<Candidate> {
    ctx.nodes(&["update_expression"])
        .into_iter()
        .filter_map(|n| {
            if !value_unused(n) {
                return ctx.refuse(n, "the update's value is used");
            }
            let var = syntax::named_children(n).into_iter().next()?;
            if var.kind() != "identifier" {
                return ctx.refuse(n, "the updated target is not a plain variable");
            }
            let name = ctx.text(var);
            let op = if ctx.text(n).contains("++") { '+' } else { '-' };
            let wide = ctx
                .types
                .of(name)
                .is_some_and(|t| numeric_rank(t).is_some() && !is_narrow(t));
            let new = if wide {
                format!("{name} = {name} {op} 1")
            } else {
                format!("{name} {op}= 1")
            };
            let summary = format!("rewrites `{}` as `{new}`", ctx.text(n));
            Some(Candidate::new(vec![Edit::replace(n, new)], summary))
        })
        .collect()
}

fn is_narrow(t: &str) -> bool {
    matches!(
        t,
        "byte" | "short" | "char" | "Byte" | "Short" | "Character"
    )
}

fn unboxed(t: &str) -> &str {
    match t {
        "Integer" => "int",
        "Long" => "long",
        "Float" => "float",
        "Double" => "double",
        "Boolean" => "boolean",
        other => other,
    }
}

/// `Add2Equal`: `a += 9` → `a = a + 9` (every compound operator). Only when the plain form
/// types the same: the variable's declared type and the right side's type are known and
/// `a op b` already has the variable's type (no implicit narrowing lost), or `a` is a `String`
/// under `+=`.
pub fn add_to_equal(ctx: &Ctx<'_>) -> Vec<Candidate> {
    ctx.nodes(&["assignment_expression"])
        .into_iter()
        .filter_map(|n| {
            let op = operator(n, ctx.src).strip_suffix('=')?;
            if op.is_empty() {
                return None;
            }
            let (left, right) = (field(n, "left")?, field(n, "right")?);
            let lvalue = left.kind() == "identifier"
                || (left.kind() == "field_access"
                    && field(left, "object").is_some_and(|o| o.kind() == "this"));
            if !lvalue {
                return ctx.refuse(n, "the target is not a plain variable or `this` field");
            }
            let Some(lt) = ctx.types.infer(left, ctx.src) else {
                return ctx.refuse(n, "the variable's type is not known");
            };
            let ok = if lt == "String" {
                op == "+"
            } else {
                let Some(rt) = ctx.types.infer(right, ctx.src) else {
                    return ctx.refuse(n, "the right side's type is not known");
                };
                let l = unboxed(&lt);
                !is_narrow(l) && binary_result(op, l, unboxed(&rt)).as_deref() == Some(l)
            };
            if !ok {
                return ctx.refuse(
                    n,
                    "the plain form would need a cast (the compound assignment narrows implicitly)",
                );
            }
            let lhs = ctx.text(left);
            let new = format!("{lhs} = {lhs} {op} {}", operand(right, ctx.src));
            let summary = format!("rewrites `{}` as `{new}`", ctx.text(n));
            Some(Candidate::new(vec![Edit::replace(n, new)], summary))
        })
        .collect()
}

/// `ModifyConstant`: a decimal integer literal `n` → `(n-1 + 1)` (`0` → `(1 - 1)`), still a
/// constant expression of the same type.
pub fn modify_constant(ctx: &Ctx<'_>) -> Vec<Candidate> {
    ctx.nodes(&["decimal_integer_literal"])
        .into_iter()
        .filter_map(|n| {
            let t = ctx.text(n);
            let (digits, suffix) = match t.strip_suffix(['l', 'L']) {
                Some(d) => (d, "L"),
                None => (t, ""),
            };
            if (digits.starts_with('0') && digits != "0")
                || !digits.bytes().all(|b| b.is_ascii_digit())
            {
                return ctx.refuse(
                    n,
                    "not a plain decimal literal (underscores or a leading zero)",
                );
            }
            let Ok(v) = digits.parse::<i64>() else {
                return ctx.refuse(n, "the literal is too large");
            };
            if suffix.is_empty() && v > i64::from(i32::MAX) {
                // 2147483648 is only valid after a unary minus
                return ctx.refuse(n, "2147483648 is valid only after a unary minus");
            }
            let new = if v == 0 {
                format!("(1{suffix} - 1{suffix})")
            } else {
                format!("({}{suffix} + 1{suffix})", v - 1)
            };
            let summary = format!("writes the constant `{t}` as `{new}`");
            Some(Candidate::new(vec![Edit::replace(n, new)], summary))
        })
        .collect()
}

/// Whether `inner` is evaluated every time `outer` is (not in a short-circuit right operand or a
/// conditional branch).
fn always_evaluated(inner: Node<'_>, outer: Node<'_>, src: &str) -> bool {
    let mut n = inner;
    while let Some(p) = n.parent() {
        if p.id() == outer.id() {
            return true;
        }
        let is = |f: &str| field(p, f).is_some_and(|c| c.id() == n.id());
        let conditional = match p.kind() {
            "binary_expression" => matches!(operator(p, src), "&&" | "||") && is("right"),
            "ternary_expression" => is("consequence") || is("alternative"),
            _ => false,
        };
        if conditional {
            return false;
        }
        n = p;
    }
    false
}

/// `DividePrePostFix`: `x = i++;` → `x = i;` then `i++;` (and `x = ++i;` → `++i;` then
/// `x = i;`). Only in a statement of a block where `i` appears once, is always evaluated, and
/// nothing else has effects or may throw.
pub fn divide_pre_post_fix(ctx: &Ctx<'_>) -> Vec<Candidate> {
    ctx.nodes(&["update_expression"])
        .into_iter()
        .filter_map(|u| {
            let var = syntax::named_children(u).into_iter().next()?;
            if value_unused(u) {
                return None;
            }
            if var.kind() != "identifier" {
                return ctx.refuse(u, "the updated target is not a plain variable");
            }
            let name = ctx.text(var);
            let stmt = std::iter::successors(u.parent(), |n| n.parent()).find(|n| {
                matches!(
                    n.kind(),
                    "expression_statement" | "local_variable_declaration"
                ) || n.kind().ends_with("_statement")
                    || n.kind() == "block"
            })?;
            let rule = if !matches!(
                stmt.kind(),
                "expression_statement" | "local_variable_declaration"
            ) {
                Some("inside a condition or header, not an assignment or declaration")
            } else if !in_block(stmt) {
                Some("not a statement of a block")
            } else if !always_evaluated(u, stmt, ctx.src) {
                Some("the update is not always evaluated (`&&`, `||` or `?:`)")
            } else if may_throw(stmt, ctx.src) {
                Some("the statement may throw")
            } else if syntax::has_comment(stmt) {
                Some("a comment in the statement")
            } else {
                None
            };
            if let Some(rule) = rule {
                return ctx.refuse(u, rule);
            }
            let mentions = descendants(stmt)
                .into_iter()
                .filter(|n| n.kind() == "identifier" && ctx.text(*n) == name)
                .count();
            // the only other effect allowed is the statement's own top-level assignment
            let top = syntax::named_children(stmt)
                .into_iter()
                .next()
                .filter(|t| {
                    stmt.kind() == "expression_statement"
                        && t.kind() == "assignment_expression"
                        && field(*t, "left").is_some_and(|l| l.kind() == "identifier")
                })
                .map(|t| t.id());
            let other_effects = effect_nodes(stmt)
                .into_iter()
                .any(|n| n.id() != u.id() && Some(n.id()) != top);
            if mentions != 1 {
                return ctx.refuse(u, "the variable appears more than once in the statement");
            }
            if other_effects {
                return ctx.refuse(u, "the statement has other effects");
            }
            let indent = ctx.indent(stmt);
            let op = if ctx.text(u).contains("++") {
                "++"
            } else {
                "--"
            };
            let prefix = ctx.text(u).starts_with(op);
            let edits = if prefix {
                vec![
                    Edit::insert(stmt.start_byte(), format!("{op}{name};\n{indent}")),
                    Edit::replace(u, name),
                ]
            } else {
                vec![
                    Edit::replace(u, name),
                    Edit::insert(stmt.end_byte(), format!("\n{indent}{name}{op};")),
                ]
            };
            let summary = format!("moves `{}` into a statement of its own", ctx.text(u));
            Some(Candidate::new(edits, summary))
        })
        .collect()
}
