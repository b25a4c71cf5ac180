//! The methods and constructors of a Java file, by line (tree-sitter).

use tree_sitter::Node;

use crate::transform::syntax;

/// A method or constructor of a file: 1-based lines `first..=last`, from the declaration's
/// first line (annotations and modifiers included; a preceding comment is a node of its own and
/// is not) to the line of its closing brace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Method {
    pub name: String,
    pub first: usize,
    pub last: usize,
}

impl Method {
    pub fn contains(&self, line: usize) -> bool {
        (self.first..=self.last).contains(&line)
    }
}

fn is_method(n: Node<'_>) -> bool {
    matches!(
        n.kind(),
        "method_declaration" | "constructor_declaration" | "compact_constructor_declaration"
    )
}

/// The file's methods that are members of a type, not inside another method's body (a method
/// of an anonymous or local class belongs to the method that holds it), in file order.
pub fn methods(src: &str) -> Vec<Method> {
    let Some(tree) = syntax::parse(src) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        if is_method(n) {
            let name = syntax::field(n, "name")
                .map(|x| syntax::text(x, src).to_owned())
                .unwrap_or_default();
            out.push(Method {
                name,
                first: n.start_position().row + 1,
                last: n.end_position().row + 1,
            });
            continue;
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    out.sort_by_key(|m| m.first);
    out
}

/// The method that holds `line` (1-based), as an index into `methods`.
pub fn holding(methods: &[Method], line: usize) -> Option<usize> {
    methods.iter().position(|m| m.contains(line))
}

/// The text of lines `first..=last` (1-based) of `src`, verbatim: internal line ends kept, the
/// last line's end left off.
pub fn line_text(src: &str, first: usize, last: usize) -> String {
    let mut start = 0usize;
    let mut line = 1usize;
    let bytes = src.as_bytes();
    while line < first {
        match src[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return String::new(),
        }
        line += 1;
    }
    let mut end = start;
    while line <= last {
        match src[end..].find('\n') {
            Some(i) => end += i + 1,
            None => {
                end = src.len();
                break;
            }
        }
        line += 1;
    }
    let mut text_end = end;
    if text_end > start && bytes[text_end - 1] == b'\n' {
        text_end -= 1;
        if text_end > start && bytes[text_end - 1] == b'\r' {
            text_end -= 1;
        }
    }
    src[start..text_end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "package p;\n\nclass A {\n    /** Doc. */\n    @Override\n    public String toString() {\n        return new Object() {\n            public String toString() { return \"x\"; }\n        }.toString();\n    }\n\n    A() {}\n}\n";

    #[test]
    fn methods_start_at_their_annotations_and_hold_their_anonymous_classes() {
        let m = methods(FILE);
        let got: Vec<(&str, usize, usize)> = m
            .iter()
            .map(|m| (m.name.as_str(), m.first, m.last))
            .collect();
        assert_eq!(got, vec![("toString", 5, 10), ("A", 12, 12)]);
        assert_eq!(holding(&m, 8), Some(0));
        assert_eq!(holding(&m, 4), None);
        assert_eq!(holding(&m, 11), None);
    }

    #[test]
    fn line_text_keeps_the_lines_verbatim() {
        assert_eq!(line_text("a\nb\nc\n", 2, 3), "b\nc");
        assert_eq!(line_text("a\r\nb\r\nc\r\n", 1, 2), "a\r\nb");
        assert_eq!(line_text("a\nb", 2, 2), "b");
        assert_eq!(line_text("a\nb", 3, 3), "");
    }
}
