//! Test helper: run one operator on a method and render every transformation it makes, so tests
//! read as `check(Operator, before, expect![[after]])`.

use expect_test::Expect;

use super::{transform, MethodSel, Operator, Request};

/// Every application of `op` on `before` (a method alone; every line counts as buggy), each as
/// `// summary` followed by the transformed method; `(refused)` when there is none.
pub fn render(op: Operator, before: &str, buggy: Option<&[usize]>) -> String {
    let before = before.trim_start_matches('\n');
    let lines = before.lines().count();
    let all: Vec<usize> = (1..=lines).collect();
    let req = Request {
        source: before,
        method_only: true,
        method: MethodSel::Lines(1, lines),
        buggy_lines: buggy.unwrap_or(&all),
        operators: &[op],
        all_sites: false,
    };
    match transform(&req, None) {
        Err(e) => format!("error: {e}\n"),
        Ok(ts) if ts.is_empty() => "(refused)\n".to_owned(),
        Ok(ts) => ts
            .iter()
            .map(|t| format!("// {}\n{}", t.summary, t.method_source))
            .collect::<Vec<_>>()
            .join(""),
    }
}

pub fn check(op: Operator, before: &str, expect: Expect) {
    expect.assert_eq(&render(op, before, None));
}

/// Like `check`, with only these lines buggy.
pub fn check_buggy(op: Operator, before: &str, buggy: &[usize], expect: Expect) {
    expect.assert_eq(&render(op, before, Some(buggy)));
}
