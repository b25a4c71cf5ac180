//! The Java transformation engine: source text in, semantic-preserving transformations out.
//!
//! A request names a file, a method in it and the method's buggy lines. Every operator proposes
//! candidate rewrites of the method (as text edits on the parsed tree); the engine applies each,
//! re-parses the result, drops those that do not parse cleanly or change nothing, keeps those
//! that change a buggy line (or all of them, on request), dedupes them per operator and
//! describes each: the transformed method and file, the changed line map and a summary.
//!
//! Operators are conservative: when an operator cannot prove a rewrite preserves semantics
//! (side effects, evaluation order, name capture, `continue`, fall-through…) it skips the site.
//! The rules are documented at each operator and tested with data-driven `check` tests.

mod conditionals;
mod declarations;
mod expression;
mod fixed;
mod lines;
mod loops;
mod names;
mod naming;
mod operator;
mod purity;
mod swap;
mod switches;
pub mod syntax;
mod types;

#[cfg(test)]
mod check;
#[cfg(test)]
mod tests;

use std::collections::HashSet;

use tree_sitter::{Node, Tree};

pub use fixed::{follow_fix, transformed_fixed, FixFollowed, FixFollower, MAX_MERGE_BYTES};
pub use lines::{line_data, LineData};
pub use naming::{NameScorer, MASK};
pub use operator::{Operator, UnknownOperator};

use lines::{hunks, line_diff};
use syntax::{Edit, Style};
use types::TypeEnv;

/// Where the method is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MethodSel {
    /// The method or constructor with this name (must be unique in the file).
    Name(String),
    /// The method spans exactly these 1-based file lines (inclusive).
    Lines(usize, usize),
}

/// A transformation request.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The whole Java file, or (with `method_only`) just the method.
    pub source: &'a str,
    /// `source` holds the method alone; it is parsed inside a synthetic class.
    pub method_only: bool,
    pub method: MethodSel,
    /// Buggy lines, 1-based within the method's text.
    pub buggy_lines: &'a [usize],
    pub operators: &'a [Operator],
    /// Keep applications that change no buggy line too (flagged `touches_buggy: false`).
    pub all_sites: bool,
}

/// A contiguous change: these original lines became those transformed lines (1-based within
/// the method; either side may be empty).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Hunk {
    pub original: Vec<usize>,
    pub transformed: Vec<usize>,
}

/// One application of one operator.
#[derive(Debug, Clone, PartialEq)]
pub struct Transformation {
    pub operator: Operator,
    /// The transformed method (same line extent convention as the original: whole lines).
    pub method_source: String,
    /// The transformed file; `None` when the request held the method only.
    pub file_source: Option<String>,
    pub hunks: Vec<Hunk>,
    /// The buggy lines that this application changes.
    pub buggy_changed: Vec<usize>,
    pub touches_buggy: bool,
    /// One line for people: "renames `val1` to `v`".
    pub summary: String,
}

/// Why a request cannot be served.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TransformError {
    #[error("the Java parser could not be loaded")]
    Parser,
    #[error("no method named `{0}` in the file")]
    NoSuchMethod(String),
    #[error("{count} methods are named `{name}`; select it by line range")]
    AmbiguousMethod { name: String, count: usize },
    #[error("no method spans lines {0}-{1}")]
    NoMethodAt(usize, usize),
    #[error("the method has syntax errors at line {0}")]
    Syntax(usize),
    #[error("buggy line {line} is outside the method ({lines} lines)")]
    BuggyLineOutside { line: usize, lines: usize },
    /// The caller said to stop ([`transform_until`]): its asker went away.
    #[error("stopped before its end: its asker went away")]
    Stopped,
}

/// A rewrite an operator proposes: edits on the file's text and a summary.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub edits: Vec<Edit>,
    pub summary: String,
}

impl Candidate {
    pub fn new(edits: Vec<Edit>, summary: impl Into<String>) -> Candidate {
        Candidate {
            edits,
            summary: summary.into(),
        }
    }
}

/// What operators see: the parsed file, the method, the file's layout and names.
pub(crate) struct Ctx<'t> {
    pub src: &'t str,
    pub method: Node<'t>,
    pub style: Style,
    /// Every identifier and type name in the file (new names must avoid all of them).
    pub names: HashSet<&'t str>,
    pub types: TypeEnv,
    pub scorer: Option<&'t dyn NameScorer>,
    /// Why candidate sites were refused (kept for `explain`).
    pub refusals: std::cell::RefCell<Vec<Refusal>>,
    /// The 0-based row of the method's first line (line numbers are the method's own).
    pub first_row: usize,
    /// The byte offset of every `\n` of the file, in order ([`Ctx::line_at`] searches them:
    /// counting them again for each site made a long method's run quadratic).
    pub newlines: Vec<usize>,
}

/// A candidate site an operator or the engine refused, and the rule that refused it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Refusal {
    /// The site's first line, 1-based within the method.
    pub line: usize,
    pub rule: &'static str,
}

/// Why an operator did or did not apply to a method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    pub operator: Operator,
    /// Applications kept.
    pub applied: usize,
    /// Every refused site, in the order found.
    pub refused: Vec<Refusal>,
}

/// The rule for an operator that found no site at all.
pub const NO_SITE: &str = "no site: the method has nothing this operator rewrites";

impl<'t> Ctx<'t> {
    /// Nodes of a kind inside the method, in document order.
    pub fn nodes(&self, kinds: &[&str]) -> Vec<Node<'t>> {
        syntax::descendants(self.method)
            .into_iter()
            .filter(|n| kinds.contains(&n.kind()))
            .collect()
    }

    pub fn text(&self, node: Node<'_>) -> &'t str {
        syntax::text(node, self.src)
    }

    /// Records that the site at `node` is refused by `rule`; `None`, for `return` in a
    /// `filter_map`.
    pub fn refuse<T>(&self, node: Node<'_>, rule: &'static str) -> Option<T> {
        let line = (node.start_position().row + 1).saturating_sub(self.first_row);
        self.refusals.borrow_mut().push(Refusal { line, rule });
        None
    }

    /// The line of a byte offset, 1-based within the method.
    fn line_at(&self, byte: usize) -> usize {
        let row = self
            .newlines
            .partition_point(|&n| n < byte.min(self.src.len()));
        (row + 1).saturating_sub(self.first_row)
    }

    pub fn indent(&self, node: Node<'_>) -> &'t str {
        syntax::indent_of(node, self.src)
    }

    /// `base`, or `base1`, `base2`… : the first that is no name in the file nor a keyword.
    pub fn fresh(&self, base: &str) -> String {
        std::iter::once(base.to_owned())
            .chain((1..).map(|i| format!("{base}{i}")))
            .find(|n| names::is_free(n, &self.names))
            .unwrap_or_else(|| base.to_owned())
    }
}

/// The synthetic class a lone method is parsed in.
const WRAP_OPEN: &str = "class __Natstudy {\n";
const WRAP_CLOSE: &str = "}\n";

fn method_nodes<'t>(tree: &'t Tree) -> Vec<Node<'t>> {
    syntax::descendants(tree.root_node())
        .into_iter()
        .filter(|n| matches!(n.kind(), "method_declaration" | "constructor_declaration"))
        .collect()
}

/// Find the method and the byte range of its lines (`start..end`, whole lines).
fn locate<'t>(
    tree: &'t Tree,
    src: &str,
    sel: &MethodSel,
    first_line: usize,
) -> Result<(Node<'t>, usize, usize), TransformError> {
    let line_start = |n: Node<'_>| src[..n.start_byte()].rfind('\n').map_or(0, |i| i + 1);
    let line_end = |b: usize| src[b..].find('\n').map_or(src.len(), |i| b + i + 1);
    match sel {
        MethodSel::Name(name) => {
            let found: Vec<Node<'t>> = method_nodes(tree)
                .into_iter()
                .filter(|m| syntax::field(*m, "name").is_some_and(|n| syntax::text(n, src) == name))
                .collect();
            match found.as_slice() {
                [] => Err(TransformError::NoSuchMethod(name.clone())),
                [m] => Ok((*m, line_start(*m), line_end(m.end_byte()))),
                many => Err(TransformError::AmbiguousMethod {
                    name: name.clone(),
                    count: many.len(),
                }),
            }
        }
        MethodSel::Lines(a, b) => {
            if *a == 0 || b < a {
                return Err(TransformError::NoMethodAt(*a, *b));
            }
            let (a, b) = (a + first_line - 1, b + first_line - 1);
            let m = method_nodes(tree)
                .into_iter()
                .filter(|m| {
                    let s = m.start_position().row + 1;
                    let e = m.end_position().row + 1;
                    s >= a && e <= b
                })
                .max_by_key(|m| m.end_byte() - m.start_byte())
                .ok_or(TransformError::NoMethodAt(a, b))?;
            let start = src
                .match_indices('\n')
                .nth(a.saturating_sub(2))
                .map_or(0, |(i, _)| if a <= 1 { 0 } else { i + 1 });
            let end = src
                .match_indices('\n')
                .nth(b - 1)
                .map_or(src.len(), |(i, _)| i + 1);
            Ok((m, start.min(line_start(m)), end.max(m.end_byte())))
        }
    }
}

/// The method's text within a file, given its byte range in the original and the length change.
fn method_text(new_src: &str, start: usize, old_end: usize, old_len: usize) -> Option<&str> {
    let new_end = (old_end + new_src.len()).checked_sub(old_len)?;
    new_src.get(start..new_end)
}

/// Run the requested operators on one method.
pub fn transform(
    req: &Request<'_>,
    scorer: Option<&dyn NameScorer>,
) -> Result<Vec<Transformation>, TransformError> {
    run(req, scorer, &|| false, Run::Apply).map(|(t, _)| t)
}

/// What a run of the operators on one method would make at most, found without rewriting
/// anything: the sites the operators propose (near a buggy line unless `all_sites`) and the
/// bytes of text that many applications would hold (each its method, and its file when the
/// request is a file). A preview asks this first and refuses in words what exceeds its budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Estimate {
    pub sites: usize,
    pub bytes: usize,
}

/// [`Estimate`] of a request.
pub fn estimate(req: &Request<'_>) -> Result<Estimate, TransformError> {
    let (_, explained) = run(req, None, &|| false, Run::Count)?;
    let sites: usize = explained.iter().map(|e| e.applied).sum();
    let text = req.source.len();
    let per_site = if req.method_only {
        text
    } else {
        // the method (at most the file) and the file
        2 * text
    };
    Ok(Estimate {
        sites,
        bytes: sites.saturating_mul(per_site),
    })
}

/// What a run does at each site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    /// Rewrite, parse and keep the application.
    Apply,
    /// Count the sites a run would try (`Explanation::applied`), rewriting nothing.
    Count,
}

/// [`transform`], asking `stop` before each site: once it says so, the run ends with
/// [`TransformError::Stopped`] (a preview whose client left stops within a site, not after
/// the method's thousands).
pub fn transform_until(
    req: &Request<'_>,
    scorer: Option<&dyn NameScorer>,
    stop: &dyn Fn() -> bool,
) -> Result<Vec<Transformation>, TransformError> {
    run(req, scorer, stop, Run::Apply).map(|(t, _)| t)
}

/// Per operator of the request: how many applications were kept and every site refused, with
/// the rule that refused it (`transform --explain`).
pub fn explain(
    req: &Request<'_>,
    scorer: Option<&dyn NameScorer>,
) -> Result<Vec<Explanation>, TransformError> {
    run(req, scorer, &|| false, Run::Apply).map(|(_, e)| e)
}

fn run(
    req: &Request<'_>,
    scorer: Option<&dyn NameScorer>,
    stop: &dyn Fn() -> bool,
    mode: Run,
) -> Result<(Vec<Transformation>, Vec<Explanation>), TransformError> {
    let wrapped;
    let (src, first_line) = if req.method_only {
        wrapped = format!(
            "{WRAP_OPEN}{}\n{WRAP_CLOSE}",
            req.source.trim_end_matches('\n')
        );
        (wrapped.as_str(), 2)
    } else {
        (req.source, 1)
    };
    let mut parser = syntax::parser().ok_or(TransformError::Parser)?;
    let tree = parser.parse(src, None).ok_or(TransformError::Parser)?;
    let (method, start, end) = locate(&tree, src, &req.method, first_line)?;
    if method.has_error() {
        let row = syntax::descendants(method)
            .into_iter()
            .find(|n| n.is_error() || n.is_missing())
            .map_or(method.start_position().row, |n| n.start_position().row);
        let first_row = syntax::line_of(src, start) - 1;
        return Err(TransformError::Syntax(row.saturating_sub(first_row) + 1));
    }
    let old_method = &src[start..end];
    let lines = old_method.lines().count();
    if let Some(&line) = req.buggy_lines.iter().find(|l| **l == 0 || **l > lines) {
        return Err(TransformError::BuggyLineOutside { line, lines });
    }
    let file_clean = syntax::is_clean(&tree);
    let ctx = Ctx {
        src,
        method,
        style: Style::detect(method, src),
        names: names::all_names(tree.root_node(), src),
        types: TypeEnv::build(tree.root_node(), method, src),
        scorer,
        refusals: Default::default(),
        first_row: syntax::line_of(src, start) - 1,
        newlines: src.match_indices('\n').map(|(i, _)| i).collect(),
    };
    let buggy: HashSet<usize> = req.buggy_lines.iter().copied().collect();
    let mut out = Vec::new();
    let mut explained = Vec::new();
    let mut counted = 0usize;
    for &op in req.operators {
        let mut seen = HashSet::new();
        let candidates = operator::candidates(op, &ctx);
        let found = candidates.len();
        let kept_before = out.len();
        let mut refused = std::mem::take(&mut *ctx.refusals.borrow_mut());
        for cand in candidates {
            if stop() {
                return Err(TransformError::Stopped);
            }
            let line = ctx.line_at(cand.edits.iter().map(|e| e.start).min().unwrap_or(start));
            let mut refuse = |rule: &'static str| refused.push(Refusal { line, rule });
            // a site whose edits lie more than a line away from every buggy line cannot
            // change one: refused before the file is rewritten, parsed and compared (each
            // of which reads the whole method — for every site, a long method's quadratic)
            if !req.all_sites && !buggy.is_empty() && !near_buggy(&ctx, &cand.edits, &buggy) {
                refuse(NOT_BUGGY);
                continue;
            }
            if mode == Run::Count {
                counted += 1;
                continue;
            }
            let Some(new_src) = syntax::apply(src, &cand.edits) else {
                refuse("overlapping edits");
                continue;
            };
            let Some(new_method) = method_text(&new_src, start, end, src.len()) else {
                refuse("the edit reaches outside the method");
                continue;
            };
            if new_method == old_method {
                refuse("the rewrite changes nothing");
                continue;
            }
            if !seen.insert(new_method.to_owned()) {
                refuse("the same text as another application of the operator");
                continue;
            }
            if !reparses(
                &mut parser,
                &tree,
                src,
                &new_src,
                &cand.edits,
                start,
                file_clean,
            ) {
                refuse("the result does not parse");
                continue;
            }
            let hunks = hunks(old_method, new_method);
            let mut buggy_changed: Vec<usize> = hunks
                .iter()
                .flat_map(|h| h.original.iter().copied())
                .filter(|l| buggy.contains(l))
                .collect();
            buggy_changed.sort_unstable();
            buggy_changed.dedup();
            let touches_buggy = !buggy_changed.is_empty();
            if !touches_buggy && !req.all_sites {
                refuse(NOT_BUGGY);
                continue;
            }
            out.push(Transformation {
                operator: op,
                method_source: new_method.to_owned(),
                file_source: (!req.method_only).then(|| new_src.clone()),
                hunks,
                buggy_changed,
                touches_buggy,
                summary: cand.summary,
            });
        }
        if found == 0 && refused.is_empty() {
            refused.push(Refusal {
                line: 1,
                rule: NO_SITE,
            });
        }
        explained.push(Explanation {
            operator: op,
            applied: out.len() - kept_before + std::mem::take(&mut counted),
            refused,
        });
    }
    Ok((out, explained))
}

/// The rule for a site that changes no buggy line, in the command line's words (a page names
/// its own control instead: `natstudy_core`'s explain).
pub const NOT_BUGGY: &str = "changes no buggy line (allowed with --all-sites)";

/// Whether a site's edits reach within a line of a buggy line (the lines each edit spans, one
/// more on either side: a rewrite's diff may align an edited line with its neighbour).
fn near_buggy(ctx: &Ctx<'_>, edits: &[Edit], buggy: &HashSet<usize>) -> bool {
    edits.iter().any(|e| {
        let (from, to) = (ctx.line_at(e.start), ctx.line_at(e.end.max(e.start)));
        (from.saturating_sub(1)..=to + 1).any(|l| buggy.contains(&l))
    })
}

/// A byte offset as tree-sitter's row and column.
fn point(src: &str, byte: usize) -> tree_sitter::Point {
    let before = &src[..byte];
    let row = before.bytes().filter(|b| *b == b'\n').count();
    let column = byte - before.rfind('\n').map_or(0, |i| i + 1);
    tree_sitter::Point { row, column }
}

/// Whether a transformed file parses: the method at `start` without error, and the whole file
/// without error when the original had none. The original tree is reused (tree-sitter's
/// incremental parsing), so only the edited region is parsed again.
fn reparses(
    parser: &mut tree_sitter::Parser,
    old_tree: &Tree,
    old_src: &str,
    new_src: &str,
    edits: &[Edit],
    start: usize,
    file_clean: bool,
) -> bool {
    let (Some(lo), Some(hi)) = (
        edits.iter().map(|e| e.start).min(),
        edits.iter().map(|e| e.end).max(),
    ) else {
        return false;
    };
    let Some(new_hi) = (hi + new_src.len()).checked_sub(old_src.len()) else {
        return false;
    };
    let mut edited = old_tree.clone();
    edited.edit(&tree_sitter::InputEdit {
        start_byte: lo,
        old_end_byte: hi,
        new_end_byte: new_hi,
        start_position: point(old_src, lo),
        old_end_position: point(old_src, hi),
        new_end_position: point(new_src, new_hi),
    });
    let Some(tree) = parser.parse(new_src, Some(&edited)) else {
        return false;
    };
    if file_clean {
        return syntax::is_clean(&tree);
    }
    method_nodes(&tree)
        .into_iter()
        .filter(|m| m.start_byte() >= start)
        .min_by_key(|m| m.start_byte())
        .is_some_and(|m| !m.has_error())
}

/// The whole-line text of a method selected in a file (for callers that need the original).
pub fn method_source(source: &str, sel: &MethodSel) -> Result<String, TransformError> {
    let tree = syntax::parse(source).ok_or(TransformError::Parser)?;
    let (_, start, end) = locate(&tree, source, sel, 1)?;
    Ok(source[start..end].to_owned())
}

/// Where a method's text lies in a file, as 1-based inclusive lines (`None` when it is not there
/// verbatim, as whole lines).
pub fn find_lines(file: &str, method: &str) -> Option<(usize, usize)> {
    let method = method.trim_end_matches('\n');
    let mut from = 0;
    while let Some(pos) = file[from..].find(method) {
        let at = from + pos;
        let starts_line = at == 0 || file.as_bytes()[at - 1] == b'\n';
        let end = at + method.len();
        let ends_line = end == file.len() || file.as_bytes()[end] == b'\n';
        if starts_line && ends_line {
            let a = syntax::line_of(file, at);
            return Some((a, a + method.lines().count() - 1));
        }
        from = at + 1;
    }
    None
}

/// A method or constructor of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodSpan {
    pub name: String,
    /// 1-based inclusive file lines.
    pub first_line: usize,
    pub last_line: usize,
}

/// Every method and constructor of a file (those of nested and local classes included).
pub fn methods(source: &str) -> Vec<MethodSpan> {
    let Some(tree) = syntax::parse(source) else {
        return Vec::new();
    };
    method_nodes(&tree)
        .into_iter()
        .map(|m| MethodSpan {
            name: syntax::field(m, "name")
                .map_or_else(String::new, |n| syntax::text(n, source).to_owned()),
            first_line: m.start_position().row + 1,
            last_line: m.end_position().row + 1,
        })
        .collect()
}
