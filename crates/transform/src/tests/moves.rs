//! Buggy lines follow every move (#40): for each statement-level operator that moves lines,
//! a buggy line that moves unchanged is found where it went, and no item of a bug with buggy
//! lines is left without any.

use super::super::{line_data, transform, MethodSel, Operator, Request};

/// (operator, method, the buggy line's text, whether that text survives the move unchanged).
const CASES: &[(Operator, &str, &str, bool)] = &[
    (
        Operator::SwapStatement,
        "void f() {\n    int a = 1;\n    Object exceptionHandler = null;\n    g(a, exceptionHandler);\n}\n",
        "Object exceptionHandler = null;",
        true,
    ),
    (
        Operator::ReverseIf,
        "int f(int x) {\n    if (x > 0) {\n        x = x * 2;\n    } else {\n        x = -x;\n    }\n    return x;\n}\n",
        "x = x * 2;",
        true,
    ),
    (
        Operator::LoopIfContinue2Else,
        "void f(int[] xs) {\n    for (int x : xs) {\n        if (x < 0) {\n            continue;\n        }\n        g(x);\n        h(x);\n    }\n}\n",
        "h(x);",
        true,
    ),
    (
        Operator::For2While,
        "int f(int n) {\n    int s = 0;\n    for (int i = 0; i < n; i++) {\n        s += i;\n    }\n    return s;\n}\n",
        "for (int i = 0; i < n; i++) {",
        false,
    ),
    (
        Operator::While2For,
        "int f(int n) {\n    int s = 0;\n    int i = 0;\n    while (i < n) {\n        s += i;\n        i++;\n    }\n    return s;\n}\n",
        "i++;",
        false,
    ),
    (
        Operator::MergeVarDecl,
        "int f() {\n    int a = 1;\n    int b = 2;\n    return a + b;\n}\n",
        "int b = 2;",
        false,
    ),
    (
        Operator::DivideVarDecl,
        "int f() {\n    int a = 1, b = 2;\n    return a + b;\n}\n",
        "int a = 1, b = 2;",
        false,
    ),
];

#[test]
fn a_buggy_line_is_found_where_each_operator_moved_it() {
    for &(op, src, buggy_text, survives) in CASES {
        let line = src
            .lines()
            .position(|l| l.trim() == buggy_text)
            .expect("the buggy line")
            + 1;
        let n = src.lines().count();
        let req = Request {
            source: src,
            method_only: true,
            method: MethodSel::Lines(1, n),
            buggy_lines: &[line],
            operators: &[op],
            all_sites: true,
        };
        let ts = transform(&req, None).unwrap_or_else(|e| panic!("{op}: {e}"));
        assert!(!ts.is_empty(), "{op} applies");
        let mut moved_unchanged = !survives;
        for t in ts {
            let d = line_data(src, &[line as u32], &t.method_source);
            let out: Vec<&str> = t.method_source.lines().collect();
            assert!(
                !d.buggy_lines.is_empty(),
                "{op}: no buggy line in\n{}",
                t.method_source
            );
            assert!(
                d.buggy_lines
                    .iter()
                    .all(|&l| l >= 1 && l as usize <= out.len()),
                "{op}: {:?} outside the method",
                d.buggy_lines
            );
            if survives {
                assert_eq!(d.buggy_lines.len(), 1, "{op}: exactly the moved line");
                let at = out[d.buggy_lines[0] as usize - 1].trim();
                assert_eq!(at, buggy_text, "{op}: the moved line\n{}", t.method_source);
                moved_unchanged |= !d.line_map.is_empty()
                    && t.method_source.lines().position(|l| l.trim() == buggy_text)
                        != Some(line - 1);
            }
        }
        assert!(
            moved_unchanged,
            "{op}: some application moves the buggy line"
        );
    }
}
