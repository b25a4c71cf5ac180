//! Names: every name used in a file, Java's reserved words, and the local variables of a method
//! with their scope and every occurrence — what a rename must change and must avoid.

use std::collections::HashSet;

use tree_sitter::Node;

use super::syntax::{descendants, field, named_children, text};

/// Every identifier and type name in the file.
pub fn all_names<'s>(root: Node<'_>, src: &'s str) -> HashSet<&'s str> {
    descendants(root)
        .into_iter()
        .filter(|n| matches!(n.kind(), "identifier" | "type_identifier"))
        .map(|n| &src[n.byte_range()])
        .collect()
}

/// Whether `name` is a valid Java identifier that no reserved word and no name in the file uses.
pub fn is_free(name: &str, used: &HashSet<&str>) -> bool {
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    valid
        && !natstudy_vocab::JAVA_KEYWORDS.contains(&name)
        && !natstudy_vocab::JAVA_CONTEXTUAL.contains(&name)
        && !used.contains(name)
}

/// How a variable was declared (its role, for name suggestions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Parameter,
    Local,
    LoopCounter,
    LoopElement,
    CaughtException,
    LambdaParameter,
    Resource,
}

/// A local variable or parameter of the method.
#[derive(Debug, Clone)]
pub struct Variable<'t> {
    pub name: &'t str,
    pub role: Role,
    /// The declared type's text, when written (`None` for lambda parameters and `var`).
    pub ty: Option<String>,
    /// Every identifier that refers to the variable (the declaring one included).
    pub uses: Vec<Node<'t>>,
}

/// The node within which a declaration is visible, and the byte where visibility starts.
fn scope<'t>(decl: Node<'t>) -> Option<(Node<'t>, usize, Role)> {
    let parent = decl.parent()?;
    match parent.kind() {
        "variable_declarator" => {
            let holder = parent.parent()?;
            match holder.kind() {
                "local_variable_declaration" => {
                    let mut outer = holder.parent()?;
                    if outer.kind() == "switch_block_statement_group" {
                        outer = outer.parent()?; // visible in the later groups too
                    }
                    let role = if outer.kind() == "for_statement" {
                        Role::LoopCounter
                    } else {
                        Role::Local
                    };
                    Some((outer, decl.start_byte(), role))
                }
                "spread_parameter" => {
                    let owner = holder.parent()?.parent()?;
                    Some((owner, owner.start_byte(), Role::Parameter))
                }
                _ => None,
            }
        }
        "formal_parameter" => {
            let owner = parent.parent()?.parent()?;
            let role = if owner.kind() == "lambda_expression" {
                Role::LambdaParameter
            } else {
                Role::Parameter
            };
            Some((owner, owner.start_byte(), role))
        }
        "inferred_parameters" => {
            let owner = parent.parent()?;
            Some((owner, owner.start_byte(), Role::LambdaParameter))
        }
        "lambda_expression" => Some((parent, parent.start_byte(), Role::LambdaParameter)),
        "catch_formal_parameter" => {
            let clause = parent.parent()?;
            Some((clause, clause.start_byte(), Role::CaughtException))
        }
        "enhanced_for_statement" => Some((parent, parent.start_byte(), Role::LoopElement)),
        "resource" => {
            let owner = parent.parent()?.parent()?;
            Some((owner, owner.start_byte(), Role::Resource))
        }
        _ => None,
    }
}

/// Whether an identifier is the declaring name of something (variable, method, class, label).
fn is_declaring(id: Node<'_>) -> bool {
    let Some(p) = id.parent() else { return false };
    let named = field(p, "name").is_some_and(|n| n.id() == id.id());
    match p.kind() {
        "variable_declarator"
        | "formal_parameter"
        | "catch_formal_parameter"
        | "enhanced_for_statement"
        | "resource"
        | "method_declaration"
        | "class_declaration"
        | "interface_declaration"
        | "enum_declaration"
        | "record_declaration"
        | "instanceof_expression" => named,
        "inferred_parameters" => true,
        "lambda_expression" => field(p, "parameters").is_some_and(|n| n.id() == id.id()),
        _ => false,
    }
}

/// Whether an identifier names something other than a variable: a method, a field of another
/// object, a label, an annotation element.
fn is_not_variable(id: Node<'_>) -> bool {
    let Some(p) = id.parent() else { return true };
    let is_field = |f: &str| field(p, f).is_some_and(|n| n.id() == id.id());
    match p.kind() {
        "method_invocation" => is_field("name"),
        "field_access" => is_field("field"),
        "method_reference" => id.prev_sibling().is_some_and(|s| s.kind() == "::"),
        "labeled_statement" | "break_statement" | "continue_statement" => true,
        "element_value_pair" => is_field("key"),
        "scoped_identifier" | "scoped_type_identifier" => true,
        _ => false,
    }
}

/// The method's local variables and parameters that can be renamed safely: their scope holds
/// no other declaration of the same name, so every use found is theirs.
pub fn variables<'t>(method: Node<'t>, src: &'t str) -> Vec<Variable<'t>> {
    let all: Vec<Node<'t>> = descendants(method)
        .into_iter()
        .filter(|n| n.kind() == "identifier")
        .collect();
    // the identifiers by name, in document order: a declaration looks only at its own name's
    // (looking at every identifier for each declaration made a long method's run quadratic)
    let mut by_name: std::collections::HashMap<&str, Vec<Node<'t>>> = Default::default();
    for n in &all {
        by_name.entry(text(*n, src)).or_default().push(*n);
    }
    let mut out = Vec::new();
    for decl in all.iter().copied().filter(|n| is_declaring(*n)) {
        let Some((scope_node, from, role)) = scope(decl) else {
            continue;
        };
        let name = text(decl, src);
        let in_scope =
            |n: &Node<'_>| n.start_byte() >= from && n.end_byte() <= scope_node.end_byte();
        let same: Vec<Node<'t>> = by_name
            .get(name)
            .map(|named| named.iter().copied().filter(|n| in_scope(n)).collect())
            .unwrap_or_default();
        if same.iter().any(|n| n.id() != decl.id() && is_declaring(*n)) {
            continue;
        }
        let uses: Vec<Node<'t>> = same.into_iter().filter(|n| !is_not_variable(*n)).collect();
        let ty = declared_type(decl, src);
        out.push(Variable {
            name,
            role,
            ty,
            uses,
        });
    }
    out
}

fn declared_type(decl: Node<'_>, src: &str) -> Option<String> {
    let mut n = decl.parent()?;
    if n.kind() == "variable_declarator" {
        n = n.parent()?;
    }
    let t = field(n, "type").or_else(|| {
        named_children(n)
            .into_iter()
            .find(|c| c.kind().ends_with("type") || c.kind() == "type_identifier")
    })?;
    let t = text(t, src).split_whitespace().collect::<String>();
    (t != "var").then_some(t)
}
