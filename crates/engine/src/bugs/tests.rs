//! The buggy-line rule and the skips, on small files whose every case is visible.

use super::sources::{Changed, Text};
use super::*;

const FILE: &str = "package p;

class A {
    int f(int x) {
        int y = x + 1;
        return y;
    }

    int g(int x) {
        return x;
    }
}
";

fn pair() -> Pair {
    Pair {
        line: 2,
        bug_id: "P-1".into(),
        project: "P".into(),
        buggy: "b".into(),
        fixed: "f".into(),
    }
}

fn text(t: &str) -> Text {
    Text {
        text: t.into(),
        encoding: encoding::UTF_8,
    }
}

fn found(buggy: &str, fixed: &str, multi: bool) -> Found {
    let c = Changed {
        path: "src/p/A.java".into(),
        buggy: Some(text(buggy)),
        fixed: Some(text(fixed)),
    };
    extract(&pair(), &[c], multi)
}

/// (method, buggy lines) of a single-method result.
fn one(f: Found) -> (String, Vec<u32>) {
    match f {
        Found::Bugs(bs) if bs.len() == 1 => (bs[0].method.clone(), bs[0].buggy_lines.clone()),
        other => panic!("one bug expected, got {other:?}"),
    }
}

#[test]
fn a_replaced_line_is_buggy() {
    let fixed = FILE.replace("x + 1", "x + 2");
    assert_eq!(one(found(FILE, &fixed, false)), ("f".into(), vec![2]));
}

#[test]
fn a_deleted_line_is_buggy() {
    let fixed = FILE.replace(
        "        int y = x + 1;\n        return y;\n",
        "        return x + 1;\n",
    );
    assert_eq!(one(found(FILE, &fixed, false)), ("f".into(), vec![2, 3]));
    let fixed = FILE.replace("        int y = x + 1;\n", "");
    assert_eq!(one(found(FILE, &fixed, false)).1, vec![2]);
}

#[test]
fn a_pure_insertion_marks_the_line_after_it() {
    let fixed = FILE.replace(
        "        return y;\n",
        "        y = y * 2;\n        return y;\n",
    );
    assert_eq!(one(found(FILE, &fixed, false)), ("f".into(), vec![3]));
}

#[test]
fn an_insertion_at_the_end_of_a_method_marks_its_closing_brace() {
    // inserted before the closing brace: the line after is the brace, inside the method
    let fixed = FILE.replace(
        "        return x;\n    }\n",
        "        return x;\n        // unreachable\n    }\n",
    );
    assert_eq!(one(found(FILE, &fixed, false)), ("g".into(), vec![3]));
}

#[test]
fn an_insertion_after_a_method_marks_the_line_before_it() {
    // after the last method's closing brace, the line after (the class's) lies outside it
    // at the top of the file, neither the line after nor a line before lies in a method
    let file = "class A {\n    void f() {\n        a();\n    }\n}\n";
    let fixed = format!("import x.Y;\n{file}");
    assert_eq!(found(file, &fixed, false), Found::Skipped(OUTSIDE.into()));
    let fixed = "class A {\n    void f() {\n        a();\n    }\n    int x;\n}\n";
    // the line after the insertion point is the class's brace: outside; the line before is
    // f's closing brace
    assert_eq!(one(found(file, fixed, false)), ("f".into(), vec![3]));
}

#[test]
fn a_change_outside_any_method_skips_the_bug() {
    let fixed = FILE.replace("package p;", "package q;");
    assert_eq!(found(FILE, &fixed, false), Found::Skipped(OUTSIDE.into()));
    let fixed = FILE.replace(
        "class A {\n",
        "class A {\n    static int z;\n\n    int h;\n",
    );
    // a field between two others: neither neighbour is in a method
    let fixed2 = fixed.replace(
        "    static int z;\n\n",
        "    static int z;\n    static int w;\n\n",
    );
    assert_eq!(
        found(&fixed, &fixed2, false),
        Found::Skipped(OUTSIDE.into())
    );
    // the line after an insertion is the method's first: by the rule, the method's
    assert_eq!(one(found(FILE, &fixed, false)), ("f".into(), vec![1]));
}

#[test]
fn a_hunk_spanning_two_methods_touches_both() {
    let fixed = FILE.replace(
        "        return y;\n    }\n\n    int g(int x) {\n",
        "        return y + 0;\n    }\n\n    int g(long x) {\n",
    );
    assert_eq!(
        found(FILE, &fixed, false),
        Found::Skipped("2 methods".into())
    );
    match found(FILE, &fixed, true) {
        Found::Bugs(bs) => {
            let got: Vec<(&str, &str, &[u32])> = bs
                .iter()
                .map(|b| {
                    (
                        b.bug_id.as_str(),
                        b.method.as_str(),
                        b.buggy_lines.as_slice(),
                    )
                })
                .collect();
            assert_eq!(
                got,
                vec![("P-1#f", "f", &[3u32][..]), ("P-1#g", "g", &[1u32][..])]
            );
            assert_eq!(
                bs[1].fixed_source.as_deref(),
                Some("    int g(long x) {\n        return x;\n    }")
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn crlf_files_and_files_without_a_last_newline_give_the_same_lines() {
    let fixed = FILE.replace("x + 1", "x + 2");
    let crlf = |s: &str| s.replace('\n', "\r\n");
    let (m, lines) = one(found(&crlf(FILE), &crlf(&fixed), false));
    assert_eq!((m.as_str(), lines), ("f", vec![2]));
    match found(&crlf(FILE), &crlf(&fixed), false) {
        Found::Bugs(bs) => {
            assert!(bs[0].source.starts_with("    int f(int x) {\r\n"));
            assert!(
                bs[0].source.ends_with("    }"),
                "the last line's end left off"
            );
        }
        other => panic!("{other:?}"),
    }
    let bare = FILE.trim_end_matches('\n');
    let fixed_bare = fixed.trim_end_matches('\n');
    assert_eq!(one(found(bare, fixed_bare, false)), ("f".into(), vec![2]));
    // only the last newline differs: nothing inside a method changed
    assert_eq!(
        one(found(bare, &FILE.replace("x + 1", "x + 2"), false)).1,
        vec![2]
    );
}

#[test]
fn an_iso_8859_1_file_is_read_and_its_encoding_kept() {
    let latin = |s: &str| -> Vec<u8> { s.chars().map(|c| c as u32 as u8).collect() };
    let buggy = FILE.replace("return y;", "return y; // é");
    let fixed = buggy.replace("x + 1", "x + 2");
    let files = sources::Memory {
        base: String::new(),
        files: [
            ("b/A.java".to_owned(), latin(&buggy)),
            ("f/A.java".to_owned(), latin(&fixed)),
        ]
        .into(),
    };
    let got = import(&files, &[pair()], "pairs.csv", Options::default(), &|| {}).expect("imports");
    let b = &got.bugs[0];
    assert_eq!(b.encoding.as_deref(), Some(encoding::LATIN_1));
    assert!(b.source.contains("// é"));
    assert_eq!(b.buggy_lines, vec![2]);
    // named as UTF-8 it is refused, on the row and column of the side
    let strict = Options {
        encoding: encoding::Encoding::Utf8,
        ..Options::default()
    };
    let e = import(&files, &[pair()], "pairs.csv", strict, &|| {}).expect_err("not UTF-8");
    assert_eq!(
        e.problems[0].to_string(),
        "pairs.csv:2: field `buggy`: b/A.java: not valid UTF-8"
    );
}

#[test]
fn unreadable_pairs_are_errors_named_by_row() {
    let files = sources::Memory {
        base: String::new(),
        files: [
            ("b/src/A.java".to_owned(), FILE.as_bytes().to_vec()),
            ("f/src/A.java".to_owned(), FILE.as_bytes().to_vec()),
            ("bin/src/A.java".to_owned(), vec![0xca, 0xfe, 0, 0]),
            ("evil/A.java".to_owned(), FILE.as_bytes().to_vec()),
        ]
        .into(),
    };
    let row = |line, buggy: &str, fixed: &str| Pair {
        line,
        bug_id: format!("P-{line}"),
        buggy: buggy.into(),
        fixed: fixed.into(),
        ..pair()
    };
    let pairs = [
        row(2, "b", "f"),
        row(3, "b", "nowhere"),
        row(4, "bin", "f"),
        row(5, "../evil", "f"),
    ];
    let e = import(&files, &pairs, "pairs.csv", Options::default(), &|| {}).expect_err("bad");
    let got: Vec<String> = e.problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(
        got,
        vec![
            "pairs.csv:2: field `fixed`: b and f hold the same Java sources",
            "pairs.csv:3: field `fixed`: nowhere: no such file or folder",
            "pairs.csv:4: field `buggy`: bin/src/A.java is a binary file, not Java source",
            "pairs.csv:5: field `buggy`: ../evil leads outside the archive",
        ]
    );
}

#[test]
fn a_changed_file_over_the_bound_is_an_error_and_an_unchanged_one_is_not() {
    let big = vec![b' '; crate::formats::items::MAX_FILE_BYTES + 1];
    let mut other = big.clone();
    other[0] = b'\n';
    let files = |fixed_big: Vec<u8>| sources::Memory {
        base: String::new(),
        files: [
            ("b/A.java".to_owned(), FILE.as_bytes().to_vec()),
            (
                "f/A.java".to_owned(),
                FILE.replace("x + 1", "x + 2").into_bytes(),
            ),
            ("b/Big.java".to_owned(), big.clone()),
            ("f/Big.java".to_owned(), fixed_big),
        ]
        .into(),
    };
    let got = import(
        &files(big.clone()),
        &[pair()],
        "pairs.csv",
        Options::default(),
        &|| {},
    );
    assert_eq!(got.expect("an unchanged big file is fine").bugs.len(), 1);
    let e = import(
        &files(other),
        &[pair()],
        "pairs.csv",
        Options::default(),
        &|| {},
    )
    .expect_err("changed and big");
    assert_eq!(
        e.problems[0].to_string(),
        "pairs.csv:2: field `buggy`: b/Big.java is larger than 4096 KiB"
    );
}
