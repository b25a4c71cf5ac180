//! The request rules: scoping to buggy lines, method selection, errors, whole-file output.

use super::super::check::check_buggy;
use super::super::{find_lines, transform, MethodSel, Operator, Request, TransformError};
use expect_test::expect;

const FILE: &str = "package p;\n\nclass A {\n    int field;\n\n    int twice(int value) {\n        int doubled = value * 2;\n        return doubled;\n    }\n\n    int twice(long value) {\n        return (int) value * 2;\n    }\n}\n";

#[test]
fn only_applications_that_change_a_buggy_line_are_kept() {
    let m = "int f(int a, int b) {\n    if (a < b) {\n        return a;\n    }\n    return b > 0 ? b : 0;\n}\n";
    check_buggy(
        Operator::SwitchRelation,
        m,
        &[5],
        expect![[r#"
        // mirrors `b > 0` as `0 < b`
        int f(int a, int b) {
            if (a < b) {
                return a;
            }
            return 0 < b ? b : 0;
        }
    "#]],
    );
    let req = Request {
        source: m,
        method_only: true,
        method: MethodSel::Lines(1, 6),
        buggy_lines: &[5],
        operators: &[Operator::SwitchRelation],
        all_sites: true,
    };
    let all = transform(&req, None).expect("transform");
    let flags: Vec<(bool, Vec<usize>)> = all
        .iter()
        .map(|t| (t.touches_buggy, t.buggy_changed.clone()))
        .collect();
    assert_eq!(flags, vec![(false, vec![]), (true, vec![5])]);
}

#[test]
fn a_method_in_a_file_gives_the_file_and_the_line_map() {
    let (a, b) = find_lines(FILE, "    int twice(int value) {\n        int doubled = value * 2;\n        return doubled;\n    }\n").expect("found");
    assert_eq!((a, b), (6, 9));
    let req = Request {
        source: FILE,
        method_only: false,
        method: MethodSel::Lines(a, b),
        buggy_lines: &[2],
        operators: &[Operator::RenameVariable1],
        all_sites: false,
    };
    let out = transform(&req, None).expect("transform");
    let t = &out[0];
    assert_eq!(
        t.method_source,
        "    int twice(int v) {\n        int doubled = v * 2;\n        return doubled;\n    }\n"
    );
    expect![[r#"
        [
            Hunk {
                original: [
                    1,
                    2,
                ],
                transformed: [
                    1,
                    2,
                ],
            },
        ]
    "#]]
    .assert_debug_eq(&t.hunks);
    let file = t.file_source.as_deref().expect("file");
    assert!(file.starts_with("package p;\n\nclass A {\n    int field;\n"));
    assert!(
        file.contains("int twice(long value) {\n        return (int) value * 2;"),
        "the other method is untouched"
    );
}

#[test]
fn bad_requests_are_named() {
    let req = |method: MethodSel, buggy: &'static [usize]| Request {
        source: FILE,
        method_only: false,
        method,
        buggy_lines: buggy,
        operators: &[Operator::RenameVariable1],
        all_sites: false,
    };
    let err = |r: Request<'_>| transform(&r, None).err();
    assert_eq!(
        err(req(MethodSel::Name("twice".into()), &[1])),
        Some(TransformError::AmbiguousMethod {
            name: "twice".into(),
            count: 2
        })
    );
    assert_eq!(
        err(req(MethodSel::Name("thrice".into()), &[1])),
        Some(TransformError::NoSuchMethod("thrice".into()))
    );
    assert_eq!(
        err(req(MethodSel::Lines(6, 9), &[5])),
        Some(TransformError::BuggyLineOutside { line: 5, lines: 4 })
    );
    assert_eq!(
        err(req(MethodSel::Lines(0, 0), &[1])),
        Some(TransformError::NoMethodAt(0, 0))
    );
    assert_eq!(
        err(req(MethodSel::Lines(9, 6), &[1])),
        Some(TransformError::NoMethodAt(9, 6))
    );
    let broken = "int f() {\n    return (1 + ;\n}\n";
    let r = Request {
        source: broken,
        method_only: true,
        method: MethodSel::Lines(1, 3),
        buggy_lines: &[2],
        operators: &[Operator::RenameVariable1],
        all_sites: false,
    };
    assert_eq!(transform(&r, None).err(), Some(TransformError::Syntax(2)));
}

#[test]
fn allman_braces_and_tabs_are_kept() {
    let m = "void f(int n)\n{\n\tfor (int i = 0; i < n; i++)\n\t{\n\t\tg(i);\n\t}\n}\n";
    super::super::check::check(
        Operator::For2While,
        m,
        expect![[r#"
        // rewrites a `for` loop as a `while` loop
        void f(int n)
        {
        	int i = 0;
        	while (i < n)
        	{
        		g(i);
        		i++;
        	}
        }
    "#]],
    );
}
