//! Test helper: run one operator on a method and render every transformation it makes, so tests
//! read as `check(Operator, before, expect![[after]])`.

use expect_test::Expect;

use super::{explain, transform, MethodSel, Operator, Request};

/// Every application of `op` on `before` (a method alone; every line counts as buggy), each as
/// `// summary` followed by the transformed method; `(refused)` when there is none.
pub fn render(op: Operator, before: &str, buggy: Option<&[usize]>) -> String {
    with_request(op, before, buggy, |req| match transform(req, None) {
        Err(e) => format!("error: {e}\n"),
        Ok(ts) if ts.is_empty() => "(refused)\n".to_owned(),
        Ok(ts) => ts
            .iter()
            .map(|t| format!("// {}\n{}", t.summary, t.method_source))
            .collect::<Vec<_>>()
            .join(""),
    })
}

/// Runs `f` on the request for `op` on `before` alone (every line buggy unless `buggy` says).
fn with_request<R>(
    op: Operator,
    before: &str,
    buggy: Option<&[usize]>,
    f: impl FnOnce(&Request<'_>) -> R,
) -> R {
    let before = before.trim_start_matches('\n');
    let lines = before.lines().count();
    let all: Vec<usize> = (1..=lines).collect();
    f(&Request {
        source: before,
        method_only: true,
        method: MethodSel::Lines(1, lines),
        buggy_lines: buggy.unwrap_or(&all),
        operators: &[op],
        all_sites: false,
    })
}

pub fn check(op: Operator, before: &str, expect: Expect) {
    expect.assert_eq(&render(op, before, None));
}

/// Like `check`, with only these lines buggy.
pub fn check_buggy(op: Operator, before: &str, buggy: &[usize], expect: Expect) {
    expect.assert_eq(&render(op, before, Some(buggy)));
}

/// Why `op` did or did not apply to `before` (a method alone, every line buggy unless `buggy`
/// says otherwise): `applied N`, then `line L: rule` per refused site.
pub fn render_explained(op: Operator, before: &str, buggy: Option<&[usize]>) -> String {
    with_request(op, before, buggy, |req| match explain(req, None) {
        Err(e) => format!("error: {e}\n"),
        Ok(es) => es
            .iter()
            .map(|e| {
                let mut out = format!("{}: applied {}\n", e.operator, e.applied);
                for r in &e.refused {
                    out.push_str(&format!("  line {}: {}\n", r.line, r.rule));
                }
                out
            })
            .collect(),
    })
}
