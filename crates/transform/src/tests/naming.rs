use expect_test::expect;

use super::super::check::check;
use super::super::Operator::{RenameVariable1, RenameVariable2};

#[test]
fn rename_to_first_character_changes_every_use_in_scope() {
    check(
        RenameVariable1,
        r#"
int sum(int[] values, int limit) {
    int total = 0;
    for (int index = 0; index < limit; index++) {
        total += values[index];
    }
    return total;
}
"#,
        expect![[r#"
            // renames `values` to `v`
            int sum(int[] v, int limit) {
                int total = 0;
                for (int index = 0; index < limit; index++) {
                    total += v[index];
                }
                return total;
            }
            // renames `limit` to `l`
            int sum(int[] values, int l) {
                int total = 0;
                for (int index = 0; index < l; index++) {
                    total += values[index];
                }
                return total;
            }
            // renames `total` to `t`
            int sum(int[] values, int limit) {
                int t = 0;
                for (int index = 0; index < limit; index++) {
                    t += values[index];
                }
                return t;
            }
            // renames `index` to `i`
            int sum(int[] values, int limit) {
                int total = 0;
                for (int i = 0; i < limit; i++) {
                    total += values[i];
                }
                return total;
            }
        "#]],
    );
}

#[test]
fn rename_refuses_names_taken_anywhere_and_keeps_fields_and_methods() {
    // `c` is a method and `t` a field access: neither `count` nor `total` may take them;
    // `this.count` and `other.count()` are not the local.
    check(
        RenameVariable1,
        r#"
int f(int count) {
    int total = c() + t;
    this.count = count;
    return other.count() + total;
}
"#,
        expect![[r#"
            (refused)
        "#]],
    );
}

#[test]
fn rename_respects_sibling_scopes() {
    // Two loops declare `idx`: each is renamed alone, within its own loop.
    check(
        RenameVariable1,
        r#"
void f() {
    for (int idx = 0; idx < 2; idx++) {
        g(idx);
    }
    for (int idx = 0; idx < 3; idx++) {
        h(idx);
    }
}
"#,
        expect![[r#"
            // renames `idx` to `i`
            void f() {
                for (int i = 0; i < 2; i++) {
                    g(i);
                }
                for (int idx = 0; idx < 3; idx++) {
                    h(idx);
                }
            }
            // renames `idx` to `i`
            void f() {
                for (int idx = 0; idx < 2; idx++) {
                    g(idx);
                }
                for (int i = 0; i < 3; i++) {
                    h(i);
                }
            }
        "#]],
    );
}

#[test]
fn rename_skips_single_letters_and_shadowed_names() {
    // `x` is already one letter; the parameter `value` is redeclared inside its scope (by the
    // anonymous class's method), so it is left alone; that inner parameter may be renamed.
    check(
        RenameVariable1,
        r#"
Runnable f(final int x, final int value) {
    return new Runnable() {
        public void run(int value) { System.out.println(x + value); }
    };
}
"#,
        expect![[r#"
            // renames `value` to `v`
            Runnable f(final int x, final int value) {
                return new Runnable() {
                    public void run(int v) { System.out.println(x + v); }
                };
            }
        "#]],
    );
}

#[test]
fn rename_to_a_conventional_substitute_by_type_and_role() {
    check(
        RenameVariable2,
        r#"
String join(List<String> parts, String separator) {
    StringBuilder buffer = new StringBuilder();
    for (String part : parts) {
        buffer.append(part).append(separator);
    }
    try {
        return buffer.toString();
    } catch (RuntimeException problem) {
        return "";
    }
}
"#,
        expect![[r#"
            // renames `parts` to `list`
            String join(List<String> list, String separator) {
                StringBuilder buffer = new StringBuilder();
                for (String part : list) {
                    buffer.append(part).append(separator);
                }
                try {
                    return buffer.toString();
                } catch (RuntimeException problem) {
                    return "";
                }
            }
            // renames `separator` to `str`
            String join(List<String> parts, String str) {
                StringBuilder buffer = new StringBuilder();
                for (String part : parts) {
                    buffer.append(part).append(str);
                }
                try {
                    return buffer.toString();
                } catch (RuntimeException problem) {
                    return "";
                }
            }
            // renames `buffer` to `sb`
            String join(List<String> parts, String separator) {
                StringBuilder sb = new StringBuilder();
                for (String part : parts) {
                    sb.append(part).append(separator);
                }
                try {
                    return sb.toString();
                } catch (RuntimeException problem) {
                    return "";
                }
            }
            // renames `part` to `str`
            String join(List<String> parts, String separator) {
                StringBuilder buffer = new StringBuilder();
                for (String str : parts) {
                    buffer.append(str).append(separator);
                }
                try {
                    return buffer.toString();
                } catch (RuntimeException problem) {
                    return "";
                }
            }
            // renames `problem` to `e`
            String join(List<String> parts, String separator) {
                StringBuilder buffer = new StringBuilder();
                for (String part : parts) {
                    buffer.append(part).append(separator);
                }
                try {
                    return buffer.toString();
                } catch (RuntimeException e) {
                    return "";
                }
            }
        "#]],
    );
}

#[test]
fn rename_with_a_model_takes_the_most_probable_name() {
    use super::super::{transform, MethodSel, NameScorer, Request};
    /// Prefers methods that contain `count`.
    struct Likes(&'static str);
    impl NameScorer for Likes {
        fn score(&self, m: &str) -> f64 {
            if m.contains(self.0) {
                1.0
            } else {
                2.0
            }
        }
    }
    let src = "int f(int total) {\n    return total + 1;\n}\n";
    let req = Request {
        source: src,
        method_only: true,
        method: MethodSel::Lines(1, 3),
        buggy_lines: &[2],
        operators: &[RenameVariable2],
        all_sites: false,
    };
    let out = transform(&req, Some(&Likes("count"))).expect("transform");
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].summary, "renames `total` to `count`");
    let out = transform(&req, Some(&Likes("size"))).expect("transform");
    assert_eq!(out[0].summary, "renames `total` to `size`");
}

#[test]
fn rename_with_a_masked_model_takes_its_first_valid_unused_proposal() {
    use super::super::{transform, MethodSel, NameScorer, Request};
    /// Proposes a fixed list, and records what it was asked to fill.
    struct Fills(Vec<&'static str>, std::sync::Mutex<Vec<String>>);
    impl NameScorer for Fills {
        fn score(&self, _: &str) -> f64 {
            0.0
        }
        fn propose(&self, masked: &str, mask: &str) -> Vec<String> {
            self.1.lock().expect("lock").push(masked.replace(mask, "_"));
            self.0.iter().map(|s| (*s).to_owned()).collect()
        }
    }
    let src = "int f(int total, int size) {\n    return total + size;\n}\n";
    let req = Request {
        source: src,
        method_only: true,
        method: MethodSel::Lines(1, 3),
        buggy_lines: &[2],
        operators: &[RenameVariable2],
        all_sites: false,
    };
    // not an identifier, a keyword, a name of the method, the name itself: then `amount`
    let model = Fills(
        vec!["+", "class", "size", "total", "amount"],
        Default::default(),
    );
    let out = transform(&req, Some(&model)).expect("transform");
    let summaries: Vec<&str> = out.iter().map(|t| t.summary.as_str()).collect();
    assert!(
        summaries.contains(&"renames `total` to `amount`"),
        "{summaries:?}"
    );
    let asked = model.1.lock().expect("lock").clone();
    assert!(
        asked.contains(&"int f(int _, int size) {\n    return _ + size;\n}".to_owned())
            || asked
                .iter()
                .any(|m| m.starts_with("int f(int _, int size)")),
        "every occurrence masked: {asked:?}"
    );
    // nothing usable: the conventional names, as without a model
    let model = Fills(vec!["size"], Default::default());
    let out = transform(&req, Some(&model)).expect("transform");
    assert!(out.iter().all(|t| !t.summary.ends_with("to `size`")));
}
