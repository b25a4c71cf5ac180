//! The developer's fix on the transformed side. Where the fix and the transformation change
//! different lines, a three-way merge carries the fix over ([`transformed_fixed`]). Where
//! they meet, the operator is applied again to the fixed method at the same site: the
//! application with the same summary whose changed lines cover the transformed lines as they
//! sit in the fixed method (lines aligned by a line diff of the buggy and the fixed method) —
//! and only when exactly one application qualifies.

use std::collections::HashMap;

use similar::DiffOp;

use super::{hunks, line_diff, transform, MethodSel, Operator, Request, Transformation};

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
/// For several transformations of one bug, [`FixFollower`] does the shared work once.
pub fn follow_fix(
    buggy: &str,
    transformed: &str,
    fixed: &str,
    operator: Option<Operator>,
    summary: &str,
) -> Option<(String, FixFollowed)> {
    FixFollower::new(buggy, fixed).follow(transformed, operator, summary)
}

/// [`follow_fix`] for the transformations of one bug: the alignment of the buggy and the fixed
/// method's lines is made once, and an operator's applications to the fixed method (at all its
/// sites) are kept for the transformations that follow and need the same operator. Only the
/// last operator's are kept — each application holds a copy of the method (up to
/// [`MAX_MERGE_BYTES`]), and a big method has many sites — so give it a bug's transformations
/// grouped by operator: then each operator runs once, and memory stays what one run takes.
pub struct FixFollower<'a> {
    buggy: &'a str,
    fixed: &'a str,
    /// buggy line → fixed line, for the lines the fix left alone (made on first need)
    align: Option<HashMap<usize, usize>>,
    /// the last operator applied to the fixed method, and its applications (`None`: it failed)
    applied: Option<(Operator, Option<Vec<Transformation>>)>,
    runs: usize,
}

impl<'a> FixFollower<'a> {
    pub fn new(buggy: &'a str, fixed: &'a str) -> FixFollower<'a> {
        FixFollower {
            buggy,
            fixed,
            align: None,
            applied: None,
            runs: 0,
        }
    }

    /// How many times an operator was applied to the fixed method so far.
    pub fn operator_runs(&self) -> usize {
        self.runs
    }

    /// The transformed fixed method for `transformed` (made by `operator`, described by
    /// `summary`), or `None` when the fix cannot follow it.
    pub fn follow(
        &mut self,
        transformed: &str,
        operator: Option<Operator>,
        summary: &str,
    ) -> Option<(String, FixFollowed)> {
        let (buggy, fixed) = (self.buggy, self.fixed);
        if let Some(m) = transformed_fixed(buggy, transformed, fixed) {
            return Some((m, FixFollowed::Merged));
        }
        let op = operator?;
        if fixed.len() > MAX_MERGE_BYTES || buggy.len() > MAX_MERGE_BYTES {
            return None;
        }
        let align = self.align.get_or_insert_with(|| {
            let mut align = HashMap::new();
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
            align
        });
        let site: Vec<usize> = hunks(buggy, transformed)
            .iter()
            .flat_map(|h| h.original.iter())
            .filter_map(|l| align.get(l).copied())
            .collect();
        if self.applied.as_ref().map(|(o, _)| *o) != Some(op) {
            // the last operator's applications go before the next one's are made
            self.applied = None;
            self.runs += 1;
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
            self.applied = Some((op, transform(&request, None).ok()));
        }
        let candidates = self.applied.as_ref()?.1.as_deref()?;
        let mut same = candidates.iter().filter(|t| {
            t.summary == summary && {
                let changed: Vec<usize> = t.hunks.iter().flat_map(|h| h.original.clone()).collect();
                site.iter().all(|l| changed.contains(l))
            }
        });
        let first = same.next()?;
        if same.next().is_some() {
            return None;
        }
        let mut text = first.method_source.clone();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        Some((text, FixFollowed::Reapplied))
    }
}

/// The largest method (bytes) a fix is carried over to.
pub const MAX_MERGE_BYTES: usize = 256 * 1024;

/// The developer's fix carried over to a transformed target: a three-way merge of the buggy
/// method (the ancestor), the transformed one and the fixed one (`None` when the transformation
/// and the fix change the same lines, so they conflict).
pub fn transformed_fixed(buggy: &str, transformed: &str, fixed: &str) -> Option<String> {
    // a merge diffs the inputs pairwise (Myers: quadratic at worst); no method is this long,
    // so a hostile input gets no carried-over fix instead of minutes of work
    if [buggy, transformed, fixed]
        .iter()
        .any(|s| s.len() > MAX_MERGE_BYTES)
    {
        return None;
    }
    let nl = |s: &str| {
        if s.ends_with('\n') {
            s.to_owned()
        } else {
            format!("{s}\n")
        }
    };
    diffy::merge(&nl(buggy), &nl(transformed), &nl(fixed)).ok()
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
    fn one_bug_applies_each_operator_to_its_fix_once() {
        let t = &apply(Operator::For2While, BUGGY)[0];
        let once = follow_fix(BUGGY, &t.method_source, FIXED, Some(t.operator), &t.summary);
        assert!(once.is_some());
        let mut follower = FixFollower::new(BUGGY, FIXED);
        // the bug's items of one operator (here the same one twice, as two imports of it)
        for _ in 0..2 {
            let shared = follower.follow(&t.method_source, Some(t.operator), &t.summary);
            assert_eq!(shared, once);
        }
        // another of the operator's items (another summary: no site) runs it no more
        assert_eq!(
            follower.follow(&t.method_source, Some(t.operator), "other"),
            None
        );
        assert_eq!(follower.operator_runs(), 1, "one run for the bug's items");
        // only the last operator's applications are kept: back to an earlier one, it runs again
        let other = Operator::SwitchEqualExp;
        assert_eq!(follower.follow(&t.method_source, Some(other), "x"), None);
        assert_eq!(
            follower.follow(&t.method_source, Some(t.operator), &t.summary),
            once
        );
        assert_eq!(follower.operator_runs(), 3);
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

    #[test]
    fn the_fix_carries_over_when_the_transformation_misses_its_lines() {
        let buggy = "int f(int x) {\n    int y = x * 2;\n    int z = 1;\n    return y - z;\n}\n";
        let fixed = "int f(int x) {\n    int y = x * 2;\n    int z = 1;\n    return y + z;\n}\n";
        let transformed =
            "int f(int x) {\n    int y = 2 * x;\n    int z = 1;\n    return y - z;\n}\n";
        assert_eq!(
            transformed_fixed(buggy, transformed, fixed).as_deref(),
            Some("int f(int x) {\n    int y = 2 * x;\n    int z = 1;\n    return y + z;\n}\n")
        );
        // the transformation rewrote the line the fix changed: nothing carries over
        let huge = "x".repeat(MAX_MERGE_BYTES + 1);
        assert_eq!(
            transformed_fixed(&huge, buggy, fixed),
            None,
            "too long to merge"
        );
        let t2 = "int f(int x) {\n    int y = x * 2;\n    int z = 1;\n    return -z + y;\n}\n";
        assert_eq!(transformed_fixed(buggy, t2, fixed), None);
    }
}
