//! What an expression may do when evaluated — side effects, exceptions — and how to write its
//! negation or use it as an operand without changing how it parses.

use tree_sitter::Node;

use super::syntax::{self, descendants, field, text, unparen};

/// Node kinds whose evaluation changes state, allocates identity or binds names.
const EFFECTFUL: &[&str] = &[
    "assignment_expression",
    "update_expression",
    "method_invocation",
    "object_creation_expression",
    "array_creation_expression",
    "explicit_constructor_invocation",
    "lambda_expression",
    "method_reference",
    "switch_expression",
    "class_body",
];

/// The nodes within `node` (itself included) whose evaluation has an effect.
pub fn effect_nodes(node: Node<'_>) -> Vec<Node<'_>> {
    descendants(node)
        .into_iter()
        .filter(|n| {
            EFFECTFUL.contains(&n.kind())
                || (n.kind() == "instanceof_expression"
                    && (field(*n, "name").is_some() || field(*n, "pattern").is_some()))
        })
        .collect()
}

/// Whether evaluating the expression can change any state (or bind a pattern variable).
/// Expressions without effects may be duplicated or have their evaluation moved.
pub fn has_effects(node: Node<'_>) -> bool {
    !effect_nodes(node).is_empty()
}

/// Whether a divisor is a non-zero integer literal (then `/` and `%` cannot throw).
fn safe_divisor(node: Node<'_>, src: &str) -> bool {
    let n = unparen(node);
    n.kind().ends_with("_literal")
        && n.kind() != "null_literal"
        && text(n, src)
            .trim_end_matches(['l', 'L', 'f', 'F', 'd', 'D'])
            .chars()
            .any(|c| c.is_ascii_digit() && c != '0')
}

/// Whether evaluating the expression can throw (null dereference, array bounds, division by
/// zero, a failing cast, a call). Unboxing of a `null` wrapper is not tracked: it needs types.
pub fn may_throw(node: Node<'_>, src: &str) -> bool {
    descendants(node).into_iter().any(|n| match n.kind() {
        "array_access"
        | "method_invocation"
        | "object_creation_expression"
        | "array_creation_expression" => true,
        "field_access" => field(n, "object").is_none_or(|o| !matches!(o.kind(), "this" | "super")),
        "cast_expression" => field(n, "type").is_none_or(|t| {
            !matches!(
                t.kind(),
                "integral_type" | "floating_point_type" | "boolean_type"
            )
        }),
        "binary_expression" => {
            matches!(syntax::operator(n, src), "/" | "%")
                && field(n, "right").is_none_or(|r| !safe_divisor(r, src))
        }
        _ => false,
    })
}

/// Whether an expression is safe to evaluate anywhere, any number of times.
pub fn inert(node: Node<'_>, src: &str) -> bool {
    !has_effects(node) && !may_throw(node, src)
}

/// Whether an expression binds tighter than any operator (it may stand as an operand as is).
pub fn is_primary(node: Node<'_>) -> bool {
    matches!(
        node.kind(),
        "identifier"
            | "this"
            | "field_access"
            | "array_access"
            | "method_invocation"
            | "parenthesized_expression"
            | "object_creation_expression"
            | "class_literal"
            | "string_literal"
            | "character_literal"
            | "decimal_integer_literal"
            | "hex_integer_literal"
            | "octal_integer_literal"
            | "binary_integer_literal"
            | "decimal_floating_point_literal"
            | "hex_floating_point_literal"
            | "true"
            | "false"
            | "null_literal"
            | "text_block"
    )
}

/// The expression's text, parenthesised unless it is a primary.
pub fn operand(node: Node<'_>, src: &str) -> String {
    if is_primary(node) {
        text(node, src).to_owned()
    } else {
        format!("({})", text(node, src))
    }
}

/// The text of `!(cond)`, simplified where that is exact: `!x` → `x`, `a == b` → `a != b`,
/// `a != b` → `a == b` (both exact for every type, NaN included). Relational operators are not
/// flipped: `!(a < b)` differs from `a >= b` when either is NaN.
pub fn negate(cond: Node<'_>, src: &str) -> String {
    let c = unparen(cond);
    match c.kind() {
        "unary_expression" if syntax::operator(c, src) == "!" => match field(c, "operand") {
            Some(inner) => text(unparen(inner), src).to_owned(),
            None => format!("!({})", text(c, src)),
        },
        "binary_expression" if matches!(syntax::operator(c, src), "==" | "!=") => {
            let (Some(l), Some(r)) = (field(c, "left"), field(c, "right")) else {
                return format!("!({})", text(c, src));
            };
            let op = if syntax::operator(c, src) == "==" {
                "!="
            } else {
                "=="
            };
            format!("{} {op} {}", text(l, src), text(r, src))
        }
        _ if is_primary(c) => format!("!{}", text(c, src)),
        _ => format!("!({})", text(c, src)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(code: &str, f: impl Fn(Node<'_>, &str) -> String) -> String {
        let src = format!("class A {{ Object x = {code}; }}");
        let tree = syntax::parse(&src).expect("parser");
        let node = descendants(tree.root_node())
            .into_iter()
            .find(|n| n.kind() == "variable_declarator")
            .and_then(|d| field(d, "value"))
            .expect("value");
        f(node, &src)
    }

    #[test]
    fn negation_is_exact() {
        assert_eq!(expr("!done", negate), "done");
        assert_eq!(expr("a == b", negate), "a != b");
        assert_eq!(expr("(a != null)", negate), "a == null");
        assert_eq!(expr("a < b", negate), "!(a < b)");
        assert_eq!(expr("s.isEmpty()", negate), "!s.isEmpty()");
        assert_eq!(expr("a && b", negate), "!(a && b)");
    }

    #[test]
    fn effects_and_exceptions() {
        let fx = |c: &str| expr(c, |n, _| has_effects(n).to_string());
        let th = |c: &str| expr(c, |n, s| may_throw(n, s).to_string());
        assert_eq!(fx("a + b * 2"), "false");
        assert_eq!(fx("i++"), "true");
        assert_eq!(fx("f(a)"), "true");
        assert_eq!(fx("o instanceof String s"), "true");
        assert_eq!(th("a / 2"), "false");
        assert_eq!(th("a / b"), "true");
        assert_eq!(th("this.a + (int) d"), "false");
        assert_eq!(th("o.a"), "true");
        assert_eq!(th("(String) o"), "true");
    }
}
