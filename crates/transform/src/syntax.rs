//! Tree-sitter plumbing for the operators: node text and neighbours, the file's layout
//! (indentation unit, brace style), text edits and relocating code to another indentation.

use tree_sitter::{Node, Parser, Tree};

/// A Java parser; `None` only if the grammar and the tree-sitter runtime disagree on ABI.
pub fn parser() -> Option<Parser> {
    let mut p = Parser::new();
    p.set_language(&tree_sitter_java::LANGUAGE.into()).ok()?;
    Some(p)
}

/// Parse Java source; `None` when the parser is unavailable.
pub fn parse(src: &str) -> Option<Tree> {
    parser()?.parse(src, None)
}

/// Whether a tree has no error and no missing node anywhere.
pub fn is_clean(tree: &Tree) -> bool {
    !tree.root_node().has_error()
}

/// The source text of a node.
pub fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    &src[node.byte_range()]
}

/// The named child for a field, if any.
pub fn field<'t>(node: Node<'t>, name: &str) -> Option<Node<'t>> {
    node.child_by_field_name(name)
}

/// Every child (named or not) of a node.
pub fn children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut c = node.walk();
    node.children(&mut c).collect()
}

/// The named children of a node.
pub fn named_children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut c = node.walk();
    node.named_children(&mut c).collect()
}

/// The children of a node for a field (fields such as `init`, `update`, `declarator` repeat).
pub fn fields<'t>(node: Node<'t>, name: &str) -> Vec<Node<'t>> {
    let mut c = node.walk();
    node.children_by_field_name(name, &mut c).collect()
}

/// Every node of a subtree, in document order (the root first).
pub fn descendants(node: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        out.push(n);
        let mut c = n.walk();
        let kids: Vec<Node<'_>> = n.children(&mut c).collect();
        stack.extend(kids.into_iter().rev());
    }
    out
}

/// Whether a node is a comment.
pub fn is_comment(node: Node<'_>) -> bool {
    matches!(node.kind(), "line_comment" | "block_comment")
}

/// Whether any comment lies inside a node (comments would be lost by operators that rebuild
/// the node's text from its parts, so those operators skip such nodes).
pub fn has_comment(node: Node<'_>) -> bool {
    descendants(node).into_iter().any(is_comment)
}

/// Whether `inner` lies within `outer` (or is it).
pub fn contains(outer: Node<'_>, inner: Node<'_>) -> bool {
    outer.start_byte() <= inner.start_byte() && inner.end_byte() <= outer.end_byte()
}

/// Strip any number of enclosing parentheses.
pub fn unparen(mut node: Node<'_>) -> Node<'_> {
    while node.kind() == "parenthesized_expression" {
        match node.named_child(0) {
            Some(inner) => node = inner,
            None => break,
        }
    }
    node
}

/// The operator token of a binary, assignment or unary expression.
pub fn operator<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    field(node, "operator").map(|o| text(o, src)).unwrap_or("")
}

/// Whether a statement sits directly in a block (so statements can be added around it).
pub fn in_block(node: Node<'_>) -> bool {
    node.parent().is_some_and(|p| p.kind() == "block")
}

/// The whitespace at the start of the line a node starts on.
pub fn line_indent(src: &str, byte: usize) -> &str {
    let start = src[..byte].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let rest = &src[start..];
    let end = rest
        .find(|c: char| c != ' ' && c != '\t')
        .unwrap_or(rest.len());
    &rest[..end]
}

/// The indentation of the line a node starts on.
pub fn indent_of<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    line_indent(src, node.start_byte())
}

/// How the file lays out code: its indentation unit and where it puts opening braces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Style {
    /// One level of indentation (four spaces, two spaces, a tab…).
    pub unit: String,
    /// Opening braces on their own line (Allman) rather than at the end of the line (K&R).
    pub allman: bool,
}

impl Style {
    /// Detect the layout from the method: the body's statements' indentation relative to the
    /// declaration, and whether the body's `{` starts its own line.
    pub fn detect(method: Node<'_>, src: &str) -> Style {
        let base = indent_of(method, src);
        let body = field(method, "body");
        let unit = body
            .and_then(|b| named_children(b).into_iter().find(|s| !is_comment(*s)))
            .map(|s| indent_of(s, src))
            .and_then(|inner| inner.strip_prefix(base))
            .filter(|u| !u.is_empty() && u.chars().all(|c| c == ' ' || c == '\t'))
            .unwrap_or("    ")
            .to_owned();
        let allman = body.is_some_and(|b| {
            let before = &src[..b.start_byte()];
            before.trim_end_matches([' ', '\t']).ends_with('\n')
        });
        Style { unit, allman }
    }

    /// The text that opens a block after a header (`if (c)`, `else`) at `indent`.
    pub fn open(&self, indent: &str) -> String {
        if self.allman {
            format!("\n{indent}{{")
        } else {
            " {".to_owned()
        }
    }

    /// The `else` that follows a block closed at `indent` (same line, or its own line).
    pub fn else_kw(&self, indent: &str) -> String {
        if self.allman {
            format!("\n{indent}else")
        } else {
            " else".to_owned()
        }
    }

    /// A block holding `lines` (already relocated to `indent + unit`), closed at `indent`.
    pub fn block(&self, indent: &str, lines: &[String]) -> String {
        let mut out = self.open(indent);
        for l in lines {
            out.push('\n');
            out.push_str(indent);
            out.push_str(&self.unit);
            out.push_str(l);
        }
        out.push('\n');
        out.push_str(indent);
        out.push('}');
        out
    }
}

/// Move code that was laid out at `from` indentation to `to`: continuation lines that start
/// with `from` get `to` instead (the first line carries no indentation of its own).
pub fn relocate(code: &str, from: &str, to: &str) -> String {
    if from == to {
        return code.to_owned();
    }
    let mut out = String::with_capacity(code.len());
    for (i, line) in code.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            match line.strip_prefix(from) {
                Some(rest) => {
                    out.push_str(to);
                    out.push_str(rest);
                }
                None => out.push_str(line),
            }
        } else {
            out.push_str(line);
        }
    }
    out
}

/// A statement's text relocated from its own line indentation to `to`.
pub fn moved(node: Node<'_>, src: &str, to: &str) -> String {
    relocate(text(node, src), indent_of(node, src), to)
}

/// The statements (and comments) of a block, relocated to `to`.
pub fn block_lines(block: Node<'_>, src: &str, to: &str) -> Vec<String> {
    named_children(block)
        .into_iter()
        .map(|s| moved(s, src, to))
        .collect()
}

/// Replace `start..end` of the file by `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

impl Edit {
    /// Replace a node.
    pub fn replace(node: Node<'_>, text: impl Into<String>) -> Edit {
        Edit {
            start: node.start_byte(),
            end: node.end_byte(),
            text: text.into(),
        }
    }

    /// Insert before a byte offset.
    pub fn insert(at: usize, text: impl Into<String>) -> Edit {
        Edit {
            start: at,
            end: at,
            text: text.into(),
        }
    }
}

/// Apply non-overlapping edits; `None` when two edits overlap.
pub fn apply(src: &str, edits: &[Edit]) -> Option<String> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.start, e.end));
    let mut out = String::with_capacity(src.len() + 64);
    let mut at = 0;
    for e in sorted {
        if e.start < at || e.end < e.start || e.end > src.len() {
            return None;
        }
        out.push_str(src.get(at..e.start)?);
        out.push_str(&e.text);
        at = e.end;
    }
    out.push_str(src.get(at..)?);
    Some(out)
}

/// The 1-based line of a byte offset.
pub fn line_of(src: &str, byte: usize) -> usize {
    src[..byte].bytes().filter(|b| *b == b'\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relocate_moves_continuation_lines_only() {
        let code = "if (a) {\n        x();\n    }";
        assert_eq!(
            relocate(code, "    ", "        "),
            "if (a) {\n            x();\n        }"
        );
    }

    #[test]
    fn overlapping_edits_are_refused() {
        let e = [Edit::insert(1, "x"), Edit::replace_range(0, 2, "y")];
        assert_eq!(apply("abc", &e), None);
        assert_eq!(
            apply("abc", &[Edit::insert(1, "x")]).as_deref(),
            Some("axbc")
        );
    }

    impl Edit {
        fn replace_range(start: usize, end: usize, text: &str) -> Edit {
            Edit {
                start,
                end,
                text: text.into(),
            }
        }
    }
}
