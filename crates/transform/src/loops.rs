//! Loop operators: `For2While`, `While2For`, `Do2While` and `LoopIfContinue2Else`.

use std::collections::HashMap;

use tree_sitter::Node;

use super::syntax::{self, descendants, field, fields, in_block, named_children, Edit};
use super::{Candidate, Ctx};

const LOOPS: &[&str] = &[
    "for_statement",
    "enhanced_for_statement",
    "while_statement",
    "do_statement",
];

fn is_labeled(node: Node<'_>) -> bool {
    node.parent()
        .is_some_and(|p| p.kind() == "labeled_statement")
}

/// Whether a `break` or `continue` (by kind) inside `target` jumps out of or within it: labeled
/// ones count when `target` is labeled; unlabeled ones count when no nearer loop (or, for
/// `break`, `switch`) encloses them. Lambdas and class bodies are walls.
pub fn jumps_to(target: Node<'_>, kind: &str) -> bool {
    descendants(target)
        .into_iter()
        .filter(|n| n.kind() == kind)
        .any(|jump| {
            if named_children(jump)
                .iter()
                .any(|c| c.kind() == "identifier")
            {
                return is_labeled(target);
            }
            let mut n = jump;
            while let Some(p) = n.parent() {
                if p.id() == target.id() {
                    return true;
                }
                let nearer = LOOPS.contains(&p.kind())
                    || (kind == "break_statement" && p.kind() == "switch_block");
                if nearer || matches!(p.kind(), "lambda_expression" | "class_body") {
                    return false;
                }
                n = p;
            }
            false
        })
}

/// The text between a header's closing parenthesis and its body (`" "` or a newline and indent).
fn gap<'s>(header_end: usize, body: Node<'_>, src: &'s str) -> &'s str {
    &src[header_end..body.start_byte()]
}

fn close_paren(node: Node<'_>) -> Option<Node<'_>> {
    syntax::children(node)
        .into_iter()
        .rfind(|c| c.kind() == ")")
}

/// A loop body with `extra` statements appended, at the loop's `indent`.
fn body_with(ctx: &Ctx<'_>, body: Node<'_>, indent: &str, extra: &[String]) -> String {
    let unit = &ctx.style.unit;
    let inner = format!("{indent}{unit}");
    if body.kind() == "block" {
        let close = syntax::children(body).into_iter().last();
        if let Some(close) = close.filter(|c| c.kind() == "}") {
            let line_start = ctx.src[..close.start_byte()]
                .rfind('\n')
                .map_or(0, |i| i + 1);
            let own_line = ctx.src[line_start..close.start_byte()].trim().is_empty()
                && line_start > body.start_byte();
            if own_line {
                let mut out = ctx.src[body.start_byte()..line_start].to_owned();
                for e in extra {
                    out.push_str(&format!("{inner}{e}\n"));
                }
                out.push_str(&ctx.src[line_start..body.end_byte()]);
                return out;
            }
        }
        let mut lines = syntax::block_lines(body, ctx.src, &inner);
        lines.extend(extra.iter().cloned());
        return ctx.style.block(indent, &lines).trim_start().to_owned();
    }
    let mut lines = Vec::new();
    if body.kind() != ";" {
        lines.push(syntax::moved(body, ctx.src, &inner));
    }
    lines.extend(extra.iter().cloned());
    ctx.style.block(indent, &lines).trim_start().to_owned()
}

/// `For2While`: `for (init; cond; update) body` → `init; while (cond) { body update; }`.
/// Skips labeled loops, loops whose body `continue`s (the update would be skipped), and loops
/// whose declared variables would clash with a name used later in the enclosing block.
pub fn for_to_while(ctx: &Ctx<'_>) -> Vec<Candidate> {
    // per enclosing block, where each identifier last occurs in it: read once a block, not
    // once a loop (a long method's loops each walked the whole body again)
    let mut last_use: HashMap<usize, HashMap<&str, usize>> = HashMap::new();
    ctx.nodes(&["for_statement"])
        .into_iter()
        .filter_map(|f| {
            let body = field(f, "body")?;
            let updates = fields(f, "update");
            let inits = fields(f, "init");
            let header_comment = syntax::children(f)
                .into_iter()
                .any(|c| syntax::is_comment(c));
            if is_labeled(f) {
                return ctx.refuse(f, "a labeled loop");
            }
            if header_comment {
                return ctx.refuse(f, "a comment in the loop header");
            }
            if !updates.is_empty() && jumps_to(f, "continue_statement") {
                return ctx.refuse(f, "a `continue` in the body would skip the update");
            }
            if !inits.is_empty() && !in_block(f) {
                return ctx.refuse(
                    f,
                    "the loop is not in a block: its initialiser has nowhere to go",
                );
            }
            // variables declared in the header now live on after the loop
            let declared: Vec<&str> = inits
                .iter()
                .filter(|i| i.kind() == "local_variable_declaration")
                .flat_map(|d| fields(*d, "declarator"))
                .filter_map(|d| field(d, "name"))
                .map(|n| ctx.text(n))
                .collect();
            if let Some(block) = f.parent().filter(|p| p.kind() == "block") {
                let last = last_use.entry(block.id()).or_insert_with(|| {
                    let mut last = HashMap::new();
                    for n in descendants(block) {
                        if n.kind() == "identifier" {
                            let at = last.entry(ctx.text(n)).or_insert(0);
                            *at = n.start_byte().max(*at);
                        }
                    }
                    last
                });
                let clash = declared
                    .iter()
                    .any(|d| last.get(d).is_some_and(|&at| at >= f.end_byte()));
                if clash {
                    return ctx.refuse(
                        f,
                        "a variable declared in the header is used after the loop",
                    );
                }
            }
            let indent = ctx.indent(f);
            let mut lines: Vec<String> = Vec::new();
            match inits.as_slice() {
                [d] if d.kind() == "local_variable_declaration" => {
                    lines.push(ctx.text(*d).to_owned())
                }
                exprs => lines.extend(exprs.iter().map(|e| format!("{};", ctx.text(*e)))),
            }
            let cond = field(f, "condition").map_or("true", |c| ctx.text(c));
            let extra: Vec<String> = updates
                .iter()
                .map(|u| format!("{};", ctx.text(*u)))
                .collect();
            let paren = close_paren(f)?;
            let g = gap(paren.end_byte(), body, ctx.src);
            let g = if body.kind() == "block" { g } else { " " };
            lines.push(format!(
                "while ({cond}){g}{}",
                body_with(ctx, body, indent, &extra)
            ));
            let new = lines.join(&format!("\n{indent}"));
            Some(Candidate::new(
                vec![Edit::replace(f, new)],
                "rewrites a `for` loop as a `while` loop",
            ))
        })
        .collect()
}

/// `While2For`: `while (cond) { …; update; }` → `for (; cond; update) { … }` (the last
/// statement moves into the header when it is an update of a variable and nothing in the
/// body `continue`s); otherwise `for (; cond; )`.
pub fn while_to_for(ctx: &Ctx<'_>) -> Vec<Candidate> {
    ctx.nodes(&["while_statement"])
        .into_iter()
        .filter_map(|w| {
            let body = field(w, "body")?;
            let cond = syntax::unparen(field(w, "condition")?);
            let cond_text = if ctx.text(cond) == "true" {
                ""
            } else {
                ctx.text(cond)
            };
            let paren = field(w, "condition")?;
            if syntax::children(w).into_iter().any(syntax::is_comment) {
                return ctx.refuse(w, "a comment in the loop header");
            }
            let stmts = if body.kind() == "block" {
                named_children(body)
            } else {
                Vec::new()
            };
            let movable = match stmts.as_slice() {
                [.., prev, last] if !jumps_to(w, "continue_statement") => {
                    let e = named_children(*last).into_iter().next();
                    let is_update = last.kind() == "expression_statement"
                        && e.is_some_and(|e| {
                            e.kind() == "update_expression"
                                || (e.kind() == "assignment_expression"
                                    && field(e, "left").is_some_and(|l| l.kind() == "identifier"))
                        })
                        && !syntax::is_comment(*prev)
                        // the header is outside the body: the update may name only
                        // variables in scope there
                        && e.is_some_and(|e| !names_declared_within(e, body, ctx.src));
                    is_update.then_some((*prev, *last, e))
                }
                _ => None,
            };
            let g = gap(paren.end_byte(), body, ctx.src);
            let (header, body_text, summary) = match movable {
                Some((prev, last, Some(e))) => {
                    let text = format!(
                        "{}{}",
                        &ctx.src[body.start_byte()..prev.end_byte()],
                        &ctx.src[last.end_byte()..body.end_byte()]
                    );
                    (
                        header(cond_text, ctx.text(e)),
                        text,
                        "rewrites a `while` loop as a `for` loop with its update in the header",
                    )
                }
                _ => (
                    header(cond_text, ""),
                    ctx.text(body).to_owned(),
                    "rewrites a `while` loop as a `for` loop",
                ),
            };
            Some(Candidate::new(
                vec![Edit::replace(w, format!("{header}{g}{body_text}"))],
                summary,
            ))
        })
        .collect()
}

/// Whether `node` names a variable declared inside `scope` (a local, parameter or pattern
/// variable of a block, lambda, catch or loop there): moved out of `scope`, the name would be
/// unknown or — a field of that name — mean something else.
fn names_declared_within(node: Node<'_>, scope: Node<'_>, src: &str) -> bool {
    const DECLARES: [&str; 7] = [
        "variable_declarator",
        "formal_parameter",
        "catch_formal_parameter",
        "spread_parameter",
        "enhanced_for_statement",
        "resource",
        "instanceof_expression",
    ];
    let declared: Vec<&str> = syntax::descendants(scope)
        .into_iter()
        .flat_map(|d| {
            let mut names = Vec::new();
            if DECLARES.contains(&d.kind()) {
                names.extend(field(d, "name"));
            }
            if d.kind() == "lambda_expression" {
                names.extend(
                    field(d, "parameters")
                        .map(|p| {
                            if p.kind() == "identifier" {
                                vec![p]
                            } else {
                                syntax::descendants(p)
                                    .into_iter()
                                    .filter(|x| x.kind() == "identifier")
                                    .collect()
                            }
                        })
                        .into_iter()
                        .flatten(),
                );
            }
            if d.kind() == "type_pattern" || d.kind() == "record_pattern_component" {
                names.extend(
                    named_children(d)
                        .into_iter()
                        .filter(|x| x.kind() == "identifier"),
                );
            }
            names
        })
        .map(|n| syntax::text(n, src))
        .collect();
    syntax::descendants(node)
        .into_iter()
        .any(|n| n.kind() == "identifier" && declared.contains(&syntax::text(n, src)))
}

/// `for (; cond; update)` with empty parts written the usual way (`for (;;)`).
fn header(cond: &str, update: &str) -> String {
    let part = |p: &str| {
        if p.is_empty() {
            String::new()
        } else {
            format!(" {p}")
        }
    };
    format!("for (;{};{})", part(cond), part(update))
}

/// `Do2While`: `do { body } while (cond);` → `body` then `while (cond) { body }`. Skips bodies
/// that declare variables at their top level (they would be declared twice), that `break` or
/// `continue` the loop, and labeled loops.
pub fn do_to_while(ctx: &Ctx<'_>) -> Vec<Candidate> {
    ctx.nodes(&["do_statement"])
        .into_iter()
        .filter_map(|d| {
            let Some(body) = field(d, "body").filter(|b| b.kind() == "block") else {
                return ctx.refuse(d, "the body is not a block");
            };
            let cond = field(d, "condition")?;
            let stmts = named_children(body);
            let declares = stmts.iter().any(|s| {
                matches!(
                    s.kind(),
                    "local_variable_declaration" | "class_declaration" | "record_declaration"
                )
            });
            let rule = if declares {
                Some("the body declares a variable or class at its top level (it would be declared twice)")
            } else if stmts.is_empty() {
                Some("an empty body")
            } else if is_labeled(d) {
                Some("a labeled loop")
            } else if !in_block(d) {
                Some("the loop is not in a block")
            } else if jumps_to(d, "break_statement") || jumps_to(d, "continue_statement") {
                Some("the body `break`s or `continue`s the loop")
            } else {
                None
            };
            if let Some(rule) = rule {
                return ctx.refuse(d, rule);
            }
            let indent = ctx.indent(d);
            let mut lines = syntax::block_lines(body, ctx.src, indent);
            let do_kw = syntax::children(d).into_iter().next()?;
            let g = gap(do_kw.end_byte(), body, ctx.src);
            lines.push(format!("while {}{g}{}", ctx.text(cond), ctx.text(body)));
            Some(Candidate::new(
                vec![Edit::replace(d, lines.join(&format!("\n{indent}")))],
                "rewrites a `do`-`while` loop as its body followed by a `while` loop",
            ))
        })
        .collect()
}

/// `LoopIfContinue2Else`: in a loop body, `if (c) { A; continue; } B;` → `if (c) { A } else
/// { B }` (`if (!c) { B }` when `A` is empty).
pub fn if_continue_to_else(ctx: &Ctx<'_>) -> Vec<Candidate> {
    ctx.nodes(&["if_statement"])
        .into_iter()
        .filter_map(|i| {
            let block = i.parent().filter(|p| p.kind() == "block")?;
            let lp = block.parent().filter(|p| LOOPS.contains(&p.kind()))?;
            if field(lp, "body").is_none_or(|b| b.id() != block.id()) {
                return None;
            }
            let then = field(i, "consequence").filter(|c| c.kind() == "block")?;
            let then_stmts = named_children(then);
            let (last, body) = then_stmts.split_last()?;
            if last.kind() != "continue_statement" || ctx.text(*last) != "continue;" {
                return None;
            }
            if field(i, "alternative").is_some() {
                return ctx.refuse(i, "the `if` already has an `else`");
            }
            let stmts = named_children(block);
            let pos = stmts.iter().position(|s| s.id() == i.id())?;
            let rest = &stmts[pos + 1..];
            let Some(last_rest) = rest.last() else {
                return ctx.refuse(i, "nothing follows the `if` in the loop body");
            };
            if rest
                .iter()
                .any(|s| matches!(s.kind(), "class_declaration" | "record_declaration"))
            {
                return ctx.refuse(i, "the rest of the body declares a class");
            }
            let indent = ctx.indent(i);
            let inner = format!("{indent}{}", ctx.style.unit);
            let rest_lines: Vec<String> = rest
                .iter()
                .map(|s| syntax::moved(*s, ctx.src, &inner))
                .collect();
            let cond = field(i, "condition")?;
            let new = if body.is_empty() {
                format!(
                    "if ({}){}",
                    super::purity::negate(cond, ctx.src),
                    ctx.style.block(indent, &rest_lines)
                )
            } else {
                let then_lines: Vec<String> = body
                    .iter()
                    .map(|s| syntax::moved(*s, ctx.src, &inner))
                    .collect();
                format!(
                    "if {}{}{}{}",
                    ctx.text(cond),
                    ctx.style.block(indent, &then_lines),
                    ctx.style.else_kw(indent),
                    ctx.style.block(indent, &rest_lines)
                )
            };
            let edit = Edit {
                start: i.start_byte(),
                end: last_rest.end_byte(),
                text: new,
            };
            Some(Candidate::new(
                vec![edit],
                "replaces `continue` in an `if` by an `else` holding the rest of the loop body",
            ))
        })
        .collect()
}
