//! Java lexical tokens from tree-sitter-java: identifiers, keywords, literals, operators and
//! separators in source order; comments and whitespace dropped. A string, character or text
//! block literal is one token (whitespace inside it becomes `␣` so tokens stay space-free).

use tree_sitter::{Node, Parser};

/// Tokenizer options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenizeOptions {
    /// Replace string literals longer than this many characters by `<STR>` (off when `None`).
    pub max_string_len: Option<usize>,
}

fn parser() -> Option<Parser> {
    let mut p = Parser::new();
    p.set_language(&tree_sitter_java::LANGUAGE.into()).ok()?;
    Some(p)
}

fn is_literal(kind: &str) -> bool {
    matches!(kind, "string_literal" | "character_literal" | "text_block")
}

fn push_tokens(node: Node<'_>, src: &str, opts: TokenizeOptions, out: &mut Vec<String>) {
    let kind = node.kind();
    if kind == "line_comment" || kind == "block_comment" {
        return;
    }
    if node.child_count() == 0 || is_literal(kind) {
        let text = node.utf8_text(src.as_bytes()).unwrap_or("");
        if text.is_empty() {
            return;
        }
        if kind == "string_literal" || kind == "text_block" {
            if let Some(max) = opts.max_string_len {
                if text.chars().count() > max {
                    out.push("<STR>".into());
                    return;
                }
            }
        }
        out.push(
            text.chars()
                .map(|c| if c.is_whitespace() { '␣' } else { c })
                .collect(),
        );
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        push_tokens(child, src, opts, out);
    }
}

/// The tokens of a piece of Java (a whole file or a method).
pub fn tokens(src: &str, opts: TokenizeOptions) -> Vec<String> {
    let Some(mut p) = parser() else {
        return Vec::new();
    };
    // A lone method is parsed inside a class so tree-sitter sees a declaration.
    let wrapped;
    let (text, tree) = match p.parse(src, None) {
        Some(t) if !t.root_node().has_error() => (src, t),
        _ => {
            wrapped = format!("class __W {{\n{src}\n}}");
            match p.parse(&wrapped, None) {
                Some(t) => (wrapped.as_str(), t),
                None => return Vec::new(),
            }
        }
    };
    let mut out = Vec::new();
    push_tokens(tree.root_node(), text, opts, &mut out);
    if text.len() != src.len() {
        // drop the wrapper's tokens: `class __W {` … `}`
        if out.len() >= 4 && out[0] == "class" && out[1] == "__W" {
            out.drain(..3);
            out.pop();
        }
    }
    out
}

/// Every method and constructor of a Java file as its own token sequence (a sentence).
pub fn methods(src: &str, opts: TokenizeOptions) -> Vec<Vec<String>> {
    let Some(mut p) = parser() else {
        return Vec::new();
    };
    let Some(tree) = p.parse(src, None) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if matches!(
            node.kind(),
            "method_declaration" | "constructor_declaration"
        ) {
            let mut toks = Vec::new();
            push_tokens(node, src, opts, &mut toks);
            if !toks.is_empty() {
                out.push(toks);
            }
            continue; // methods of local/anonymous classes stay inside their method
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn tokens_of_a_method() {
        let src = "    public int f(String s) { // note\n        return s.length() + \"a b\".length() * 0x1F; /* x */ }\n";
        let t = tokens(src, TokenizeOptions::default()).join(" ");
        expect![[
            r#"public int f ( String s ) { return s . length ( ) + "a␣b" . length ( ) * 0x1F ; }"#
        ]]
        .assert_eq(&t);
        let short = tokens(
            src,
            TokenizeOptions {
                max_string_len: Some(2),
            },
        )
        .join(" ");
        assert!(short.contains("<STR>"), "{short}");
    }

    #[test]
    fn methods_of_a_file_are_sentences() {
        let file = "class A {\n  int x;\n  A() { x = 1; }\n  int get() { return x; }\n  class B { void m() {} }\n}\n";
        let ms: Vec<String> = methods(file, TokenizeOptions::default())
            .into_iter()
            .map(|m| m.join(" "))
            .collect();
        assert_eq!(
            ms,
            vec![
                "A ( ) { x = 1 ; }",
                "int get ( ) { return x ; }",
                "void m ( ) { }"
            ]
        );
    }
}
