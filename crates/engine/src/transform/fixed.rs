//! The developer's fix on the transformed side. Where the fix and the transformation change
//! different lines, a three-way merge carries the fix over (`review::transformed_fixed`). Where
//! they meet, the operator is applied again to the fixed method at the same site: the
//! application with the same summary whose changed lines cover the transformed lines as they
//! sit in the fixed method (lines aligned by a line diff of the buggy and the fixed method) —
//! and only when exactly one application qualifies.

use similar::DiffOp;

use super::{hunks, line_diff, transform, MethodSel, Operator, Request};
use crate::review::{transformed_fixed, MAX_MERGE_BYTES};

/// How the fixed side was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FixFollowed {
    /// A three-way merge: the fix and the transformation change different lines.
    Merged,
    /// The operator applied again to the fixed method at the same site.
    Reapplied,
}

/// The transformed fixed method, or `None` when the fix cannot follow the transformation.
pub fn follow_fix(
    buggy: &str,
    transformed: &str,
    fixed: &str,
    operator: Option<Operator>,
    summary: &str,
) -> Option<(String, FixFollowed)> {
    if let Some(m) = transformed_fixed(buggy, transformed, fixed) {
        return Some((m, FixFollowed::Merged));
    }
    let op = operator?;
    if fixed.len() > MAX_MERGE_BYTES || buggy.len() > MAX_MERGE_BYTES {
        return None;
    }
    // buggy line → fixed line, for the lines the fix left alone
    let mut align = std::collections::HashMap::new();
    for d in line_diff(buggy, fixed).ops() {
        if let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = *d
        {
            for k in 0..len {
                align.insert(old_index + k + 1, new_index + k + 1);
            }
        }
    }
    let site: Vec<usize> = hunks(buggy, transformed)
        .iter()
        .flat_map(|h| h.original.iter())
        .filter_map(|l| align.get(l).copied())
        .collect();
    let n = fixed.lines().count();
    let all: Vec<usize> = (1..=n).collect();
    let request = Request {
        source: fixed,
        method_only: true,
        method: MethodSel::Lines(1, n),
        buggy_lines: &all,
        operators: &[op],
        all_sites: true,
    };
    let candidates = transform(&request, None).ok()?;
    let mut same = candidates.into_iter().filter(|t| {
        t.summary == summary && {
            let changed: Vec<usize> = t.hunks.iter().flat_map(|h| h.original.clone()).collect();
            site.iter().all(|l| changed.contains(l))
        }
    });
    let first = same.next()?;
    if same.next().is_some() {
        return None;
    }
    let mut text = first.method_source;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Some((text, FixFollowed::Reapplied))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUGGY: &str = "int last(int[] xs, int end) {\n    int r = 0;\n    for (int i = 0; i < end; i++) {\n        r = xs[i];\n    }\n    return r;\n}\n";
    // the fix changes the loop's bound: the very line a loop operator rewrites
    const FIXED: &str = "int last(int[] xs, int end) {\n    int r = 0;\n    for (int i = 0; i <= end; i++) {\n        r = xs[i];\n    }\n    return r;\n}\n";

    fn apply(op: Operator, source: &str) -> Vec<super::super::Transformation> {
        let n = source.lines().count();
        let all: Vec<usize> = (1..=n).collect();
        transform(
            &Request {
                source,
                method_only: true,
                method: MethodSel::Lines(1, n),
                buggy_lines: &all,
                operators: &[op],
                all_sites: true,
            },
            None,
        )
        .expect("transforms")
    }

    #[test]
    fn a_fix_on_the_transformed_line_follows_by_applying_the_operator_again() {
        let t = &apply(Operator::For2While, BUGGY)[0];
        assert_eq!(
            transformed_fixed(BUGGY, &t.method_source, FIXED),
            None,
            "the fix and the transformation change the same line: no merge"
        );
        let (fixed, how) = follow_fix(
            BUGGY,
            &t.method_source,
            FIXED,
            Some(Operator::For2While),
            &t.summary,
        )
        .expect("follows");
        assert_eq!(how, FixFollowed::Reapplied);
        // the transformed fixed method differs from the transformed buggy one as the fix does
        assert_eq!(fixed, t.method_source.replace("i < end", "i <= end"));
        // a fix on other lines merges
        let other = BUGGY.replace("return r;", "return r + 0;");
        let (merged, how) =
            follow_fix(BUGGY, &t.method_source, &other, None, &t.summary).expect("merges");
        assert_eq!(how, FixFollowed::Merged);
        assert_eq!(
            merged,
            t.method_source.replace("return r;", "return r + 0;")
        );
    }

    #[test]
    fn no_site_or_two_alike_and_the_fix_does_not_follow() {
        let t = &apply(Operator::For2While, BUGGY)[0];
        // the fix removes the loop: no application of the operator at that site
        let no_loop = "int last(int[] xs, int end) {\n    int r = 0;\n    r = end > 0 ? xs[end - 1] : 0;\n    return r;\n}\n";
        assert_eq!(
            follow_fix(
                BUGGY,
                &t.method_source,
                no_loop,
                Some(Operator::For2While),
                &t.summary
            ),
            None
        );
        // another summary (another site) is not the same transformation
        assert_eq!(
            follow_fix(
                BUGGY,
                &t.method_source,
                FIXED,
                Some(Operator::For2While),
                "other"
            ),
            None
        );
    }
}
