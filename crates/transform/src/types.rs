//! Just enough typing for the operators that need it: the declared type of each name in the
//! file (fields, parameters, locals) and the type of simple expressions (literals, names,
//! arithmetic, casts). Anything else is unknown, and operators that need a type then skip.

use std::collections::HashMap;

use tree_sitter::Node;

use super::syntax::{descendants, field, fields, text, unparen};

/// Declared types by name; a name declared with two different types is ambiguous (`None`).
#[derive(Debug, Default)]
pub struct TypeEnv {
    types: HashMap<String, Option<String>>,
}

fn squash(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join("")
}

impl TypeEnv {
    /// Fields of every class in the file, and the parameters and locals of the method.
    pub fn build(root: Node<'_>, method: Node<'_>, src: &str) -> TypeEnv {
        let mut env = TypeEnv::default();
        for n in descendants(root) {
            let inside = method.start_byte() <= n.start_byte() && n.end_byte() <= method.end_byte();
            match n.kind() {
                "field_declaration" | "constant_declaration" => env.declare_all(n, src),
                "local_variable_declaration" if inside => env.declare_all(n, src),
                "formal_parameter" | "enhanced_for_statement" | "resource" if inside => {
                    if let (Some(t), Some(name)) = (field(n, "type"), field(n, "name")) {
                        let dims = field(n, "dimensions").map_or("", |d| text(d, src));
                        env.declare(text(name, src), &format!("{}{dims}", squash(text(t, src))));
                    }
                }
                _ => {}
            }
        }
        env
    }

    fn declare_all(&mut self, decl: Node<'_>, src: &str) {
        let Some(t) = field(decl, "type") else { return };
        let base = squash(text(t, src));
        for d in fields(decl, "declarator") {
            if let Some(name) = field(d, "name") {
                let dims = field(d, "dimensions").map_or(String::new(), |d| squash(text(d, src)));
                self.declare(text(name, src), &format!("{base}{dims}"));
            }
        }
    }

    fn declare(&mut self, name: &str, ty: &str) {
        let entry = self
            .types
            .entry(name.to_owned())
            .or_insert_with(|| Some(ty.to_owned()));
        if entry.as_deref() != Some(ty) {
            *entry = None;
        }
    }

    /// The declared type of a name (`None` when unknown, ambiguous or `var`).
    pub fn of(&self, name: &str) -> Option<&str> {
        self.types
            .get(name)
            .and_then(|t| t.as_deref())
            .filter(|t| *t != "var")
    }

    /// The static type of an expression, when it is simple enough to know.
    pub fn infer(&self, node: Node<'_>, src: &str) -> Option<String> {
        let node = unparen(node);
        let t = text(node, src);
        match node.kind() {
            "decimal_integer_literal"
            | "hex_integer_literal"
            | "octal_integer_literal"
            | "binary_integer_literal" => Some(
                if t.ends_with(['l', 'L']) {
                    "long"
                } else {
                    "int"
                }
                .into(),
            ),
            "decimal_floating_point_literal" | "hex_floating_point_literal" => Some(
                if t.ends_with(['f', 'F']) {
                    "float"
                } else {
                    "double"
                }
                .into(),
            ),
            "character_literal" => Some("char".into()),
            "string_literal" | "text_block" => Some("String".into()),
            "true" | "false" | "instanceof_expression" => Some("boolean".into()),
            "identifier" => self.of(t).map(str::to_owned),
            "field_access" => {
                let this = field(node, "object").is_some_and(|o| o.kind() == "this");
                this.then(|| field(node, "field"))
                    .flatten()
                    .and_then(|f| self.of(text(f, src)))
                    .map(str::to_owned)
            }
            "array_access" => {
                let arr = self.infer(field(node, "array")?, src)?;
                arr.strip_suffix("[]").map(str::to_owned)
            }
            "cast_expression" => field(node, "type").map(|t| squash(text(t, src))),
            "unary_expression" => {
                let op = field(node, "operator").map(|o| text(o, src))?;
                let inner = self.infer(field(node, "operand")?, src)?;
                if op == "!" {
                    Some("boolean".into())
                } else {
                    numeric_rank(&inner).map(|r| promote(r, 0))
                }
            }
            "ternary_expression" => {
                let a = self.infer(field(node, "consequence")?, src)?;
                let b = self.infer(field(node, "alternative")?, src)?;
                (a == b).then_some(a)
            }
            "binary_expression" => {
                let op = field(node, "operator").map(|o| text(o, src))?;
                let l = self.infer(field(node, "left")?, src)?;
                let r = self.infer(field(node, "right")?, src)?;
                binary(op, &l, &r)
            }
            _ => None,
        }
    }
}

/// Numeric types ordered by binary numeric promotion (wrappers unbox).
pub fn numeric_rank(t: &str) -> Option<u8> {
    Some(match t {
        "byte" | "Byte" | "short" | "Short" | "char" | "Character" | "int" | "Integer" => 0,
        "long" | "Long" => 1,
        "float" | "Float" => 2,
        "double" | "Double" => 3,
        _ => return None,
    })
}

fn promote(a: u8, b: u8) -> String {
    ["int", "long", "float", "double"][a.max(b) as usize].to_owned()
}

fn binary(op: &str, l: &str, r: &str) -> Option<String> {
    match op {
        "&&" | "||" | "<" | ">" | "<=" | ">=" | "==" | "!=" => Some("boolean".into()),
        "+" if l == "String" || r == "String" => Some("String".into()),
        "<<" | ">>" | ">>>" => numeric_rank(l).map(|a| promote(a, 0)),
        "&" | "|" | "^" if l == "boolean" && r == "boolean" => Some("boolean".into()),
        _ => Some(promote(numeric_rank(l)?, numeric_rank(r)?)),
    }
}

/// The type of `lhs op rhs` for an operator of a compound assignment (`+` for `+=`).
pub fn binary_result(op: &str, lhs: &str, rhs: &str) -> Option<String> {
    binary(op, lhs, rhs)
}

/// Whether the primitive or `String` type can be written as a declaration's type.
pub fn is_simple(t: &str) -> bool {
    matches!(
        t,
        "byte" | "short" | "char" | "int" | "long" | "float" | "double" | "boolean" | "String"
    )
}
