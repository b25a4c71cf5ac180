//! Naming operators: `RenameVariable-1` (a variable renamed to its first character) and
//! `RenameVariable-2` (renamed to a substitute: conventional names for its type and role, ranked
//! by a language model when one is given).
//!
//! A rename changes every occurrence in the variable's scope and only there; the new name is no
//! name of the file (field, local, parameter, method, type) and no reserved word, so it can
//! neither capture nor be captured.

use super::names::{self, Role, Variable};
use super::syntax::Edit;
use super::{Candidate, Ctx};

/// Scores a candidate method text: lower is more natural (e.g. cross-entropy in bits/token).
/// A masked language model (CodeBERT) proposes names instead: [`NameScorer::propose`].
pub trait NameScorer: Sync {
    fn score(&self, method_source: &str) -> f64;

    /// Names for the variable whose every occurrence in `masked_method` is `mask`, most likely
    /// first (a masked language model's fill); empty for a model that only scores.
    fn propose(&self, masked_method: &str, mask: &str) -> Vec<String> {
        let _ = (masked_method, mask);
        Vec::new()
    }
}

/// What stands for the variable in the method a proposer fills (CodeBERT's mask token).
pub const MASK: &str = "<mask>";

fn rename(var: &Variable<'_>, to: &str) -> Candidate {
    let edits = var.uses.iter().map(|n| Edit::replace(*n, to)).collect();
    Candidate::new(edits, format!("renames `{}` to `{to}`", var.name))
}

/// `RenameVariable-1`: every local variable or parameter renamed to its first character.
pub fn first_char(ctx: &Ctx<'_>) -> Vec<Candidate> {
    names::variables(ctx.method, ctx.src)
        .into_iter()
        .filter_map(|v| {
            let first: String = v.name.chars().take(1).collect();
            let at = *v.uses.first()?;
            if first == v.name {
                return ctx.refuse(at, "the name is already one character");
            }
            if !names::is_free(&first, &ctx.names) {
                return ctx.refuse(at, "the first character is already a name in the file");
            }
            Some(rename(&v, &first))
        })
        .collect()
}

/// Conventional names for a variable, most conventional first.
fn suggestions(var: &Variable<'_>) -> Vec<String> {
    let ty = var.ty.as_deref().unwrap_or("");
    let base = ty.split('<').next().unwrap_or(ty);
    let mut out: Vec<String> = match var.role {
        Role::LoopCounter => vec!["i", "j", "k", "idx", "index"],
        Role::CaughtException => vec!["e", "ex", "exception", "err"],
        _ => Vec::new(),
    }
    .into_iter()
    .map(str::to_owned)
    .collect();
    let by_type: &[&str] = match base {
        "int" | "long" | "short" | "byte" | "Integer" | "Long" => {
            &["n", "count", "index", "num", "value", "size", "len"]
        }
        "double" | "float" | "Double" | "Float" => &["value", "x", "d", "amount", "result"],
        "boolean" | "Boolean" => &["flag", "found", "ok", "done", "valid"],
        "char" | "Character" => &["ch", "c"],
        "String" | "CharSequence" => &["str", "s", "name", "text", "value"],
        "StringBuilder" | "StringBuffer" => &["sb", "buf", "builder"],
        "Object" => &["obj", "o", "value"],
        "List" | "ArrayList" | "LinkedList" | "Collection" | "Iterable" => {
            &["list", "items", "values", "elements"]
        }
        "Set" | "HashSet" | "TreeSet" => &["set", "items", "seen"],
        "Map" | "HashMap" | "TreeMap" | "LinkedHashMap" => &["map", "table", "lookup"],
        "Iterator" => &["it", "iter", "iterator"],
        _ if base.ends_with("[]") => &["array", "arr", "values", "items"],
        _ => &[],
    };
    out.extend(by_type.iter().map(|s| (*s).to_owned()));
    // The type's name in lower camel case, and its last word (`StringReader` → `reader`).
    if base.chars().next().is_some_and(char::is_uppercase) && !base.contains('[') {
        let simple = base.rsplit('.').next().unwrap_or(base);
        let mut lower = simple.to_owned();
        if let Some(c) = lower.get(..1) {
            lower.replace_range(..1, &c.to_lowercase());
        }
        out.push(lower);
        if let Some(i) = simple.rfind(|c: char| c.is_uppercase()).filter(|i| *i > 0) {
            out.push(simple[i..].to_lowercase());
        }
    }
    match var.role {
        Role::Parameter | Role::LambdaParameter => out.push("arg".into()),
        Role::LoopElement => out.extend(["item".into(), "elem".into()]),
        _ => {}
    }
    out.extend(["value".into(), "tmp".into(), "v".into()]);
    let mut seen = std::collections::HashSet::new();
    out.retain(|n| n != var.name && seen.insert(n.clone()));
    out
}

/// `RenameVariable-2`: every local variable or parameter renamed to a substitute. Without a
/// model the first free conventional name is taken; with a scoring model, every free
/// conventional name is tried and the one that makes the method most probable (lowest score)
/// wins; with a masked model, its most likely valid, unused proposal for the masked variable.
pub fn substitute(ctx: &Ctx<'_>) -> Vec<Candidate> {
    names::variables(ctx.method, ctx.src)
        .into_iter()
        .filter_map(|v| {
            let free: Vec<String> = suggestions(&v)
                .into_iter()
                .filter(|n| names::is_free(n, &ctx.names))
                .collect();
            if free.is_empty() {
                return ctx.refuse(
                    *v.uses.first()?,
                    "every conventional name for it is already a name in the file",
                );
            }
            let method = super::syntax::text(ctx.method, ctx.src);
            let start = ctx.method.start_byte();
            // a masked model's names first: every occurrence masked, the first proposal that
            // is a valid, unused identifier taken
            let proposed = ctx.scorer.and_then(|scorer| {
                let edits: Vec<Edit> = v
                    .uses
                    .iter()
                    .map(|n| Edit {
                        start: n.start_byte() - start,
                        end: n.end_byte() - start,
                        text: MASK.to_owned(),
                    })
                    .collect();
                let masked = super::syntax::apply(method, &edits)?;
                scorer
                    .propose(&masked, MASK)
                    .into_iter()
                    .find(|n| n != v.name && names::is_free(n, &ctx.names))
            });
            if let Some(name) = proposed {
                return Some(rename(&v, &name));
            }
            let best = match ctx.scorer {
                None => free.into_iter().next()?,
                Some(scorer) => {
                    free.into_iter()
                        .map(|name| {
                            let edits: Vec<Edit> = v
                                .uses
                                .iter()
                                .map(|n| Edit {
                                    start: n.start_byte() - start,
                                    end: n.end_byte() - start,
                                    text: name.clone(),
                                })
                                .collect();
                            let renamed = super::syntax::apply(method, &edits);
                            let score = renamed.map_or(f64::INFINITY, |m| scorer.score(&m));
                            (name, score)
                        })
                        .min_by(|a, b| a.1.total_cmp(&b.1))?
                        .0
                }
            };
            Some(rename(&v, &best))
        })
        .collect()
}
