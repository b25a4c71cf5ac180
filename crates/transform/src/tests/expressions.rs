use expect_test::expect;

use super::super::check::check;
use super::super::Operator::*;

#[test]
fn switch_relation_mirrors_comparisons() {
    check(
        SwitchRelation,
        r#"
boolean f(int a, int b) {
    return a < b && a + 1 >= b * 2;
}
"#,
        expect![[r#"
            // mirrors `a < b` as `b > a`
            boolean f(int a, int b) {
                return b > a && a + 1 >= b * 2;
            }
            // mirrors `a + 1 >= b * 2` as `b * 2 <= a + 1`
            boolean f(int a, int b) {
                return a < b && b * 2 <= a + 1;
            }
        "#]],
    );
}

#[test]
fn switch_relation_refuses_effects_and_double_throwers() {
    // a call on either side, or array accesses on both, would reorder effects or exceptions
    check(
        SwitchRelation,
        r#"
boolean f(int[] a, int[] b, int i) {
    return next() < i || a[0] > b[0] || i++ < 3;
}
"#,
        expect![[r#"
            (refused)
        "#]],
    );
}

#[test]
fn switch_equal_swaps_operands_and_keeps_grouping() {
    check(
        SwitchEqualExp,
        r#"
boolean f(Object o, int a, boolean b) {
    return o == null || (a == 1) == b;
}
"#,
        expect![[r#"
            // swaps the operands of `o == null` as `null == o`
            boolean f(Object o, int a, boolean b) {
                return null == o || (a == 1) == b;
            }
            // swaps the operands of `(a == 1) == b` as `b == (a == 1)`
            boolean f(Object o, int a, boolean b) {
                return o == null || b == (a == 1);
            }
            // swaps the operands of `a == 1` as `1 == a`
            boolean f(Object o, int a, boolean b) {
                return o == null || (1 == a) == b;
            }
        "#]],
    );
}

#[test]
fn switch_string_equal_needs_a_literal_argument() {
    check(
        SwitchStringEqual,
        r#"
boolean f(String s, String t) {
    return s.equals("yes") || s.equalsIgnoreCase(t) || name().equals("x") || t.trim().equalsIgnoreCase("no");
}
"#,
        expect![[r#"
            // swaps `s.equals("yes")` to `"yes".equals(s)`
            boolean f(String s, String t) {
                return "yes".equals(s) || s.equalsIgnoreCase(t) || name().equals("x") || t.trim().equalsIgnoreCase("no");
            }
            // swaps `name().equals("x")` to `"x".equals(name())`
            boolean f(String s, String t) {
                return s.equals("yes") || s.equalsIgnoreCase(t) || "x".equals(name()) || t.trim().equalsIgnoreCase("no");
            }
            // swaps `t.trim().equalsIgnoreCase("no")` to `"no".equalsIgnoreCase(t.trim())`
            boolean f(String s, String t) {
                return s.equals("yes") || s.equalsIgnoreCase(t) || name().equals("x") || "no".equalsIgnoreCase(t.trim());
            }
        "#]],
    );
}

#[test]
fn unary_to_add_by_type() {
    check(
        Unary2Add,
        r#"
void f(int n, byte b) {
    for (int i = 0; i < n; i++) {
        b--;
    }
    int x = n++;
}
"#,
        expect![[r#"
            // rewrites `i++` as `i = i + 1`
            void f(int n, byte b) {
                for (int i = 0; i < n; i = i + 1) {
                    b--;
                }
                int x = n++;
            }
            // rewrites `b--` as `b -= 1`
            void f(int n, byte b) {
                for (int i = 0; i < n; i++) {
                    b -= 1;
                }
                int x = n++;
            }
        "#]],
    );
}

#[test]
fn add_to_equal_when_types_allow() {
    check(
        Add2Equal,
        r#"
void f(int a, long l, short s, String t, double d) {
    a += 9;
    a *= a - 1;
    a += l;
    s += 1;
    t += a;
    d -= a / 2;
    a += g();
}
"#,
        expect![[r#"
            // rewrites `a += 9` as `a = a + 9`
            void f(int a, long l, short s, String t, double d) {
                a = a + 9;
                a *= a - 1;
                a += l;
                s += 1;
                t += a;
                d -= a / 2;
                a += g();
            }
            // rewrites `a *= a - 1` as `a = a * (a - 1)`
            void f(int a, long l, short s, String t, double d) {
                a += 9;
                a = a * (a - 1);
                a += l;
                s += 1;
                t += a;
                d -= a / 2;
                a += g();
            }
            // rewrites `t += a` as `t = t + a`
            void f(int a, long l, short s, String t, double d) {
                a += 9;
                a *= a - 1;
                a += l;
                s += 1;
                t = t + a;
                d -= a / 2;
                a += g();
            }
            // rewrites `d -= a / 2` as `d = d - (a / 2)`
            void f(int a, long l, short s, String t, double d) {
                a += 9;
                a *= a - 1;
                a += l;
                s += 1;
                t += a;
                d = d - (a / 2);
                a += g();
            }
        "#]],
    );
}

#[test]
fn modify_constant_keeps_type_and_constness() {
    check(
        ModifyConstant,
        r#"
long f(int x) {
    switch (x) {
        case 0: return 10L;
        default: return -2147483648 + 0x10 + 010;
    }
}
"#,
        expect![[r#"
            // writes the constant `0` as `(1 - 1)`
            long f(int x) {
                switch (x) {
                    case (1 - 1): return 10L;
                    default: return -2147483648 + 0x10 + 010;
                }
            }
            // writes the constant `10L` as `(9L + 1L)`
            long f(int x) {
                switch (x) {
                    case 0: return (9L + 1L);
                    default: return -2147483648 + 0x10 + 010;
                }
            }
        "#]],
    );
}

#[test]
fn divide_pre_post_fix_moves_the_update_out() {
    check(
        DividePrePostFix,
        r#"
void f(int i, int j) {
    int x = i++ * 2;
    x = ++j;
    x = i++ + i;
    boolean b = x > 0 && j++ > 1;
}
"#,
        expect![[r#"
            // moves `i++` into a statement of its own
            void f(int i, int j) {
                int x = i * 2;
                i++;
                x = ++j;
                x = i++ + i;
                boolean b = x > 0 && j++ > 1;
            }
            // moves `++j` into a statement of its own
            void f(int i, int j) {
                int x = i++ * 2;
                ++j;
                x = j;
                x = i++ + i;
                boolean b = x > 0 && j++ > 1;
            }
        "#]],
    );
}

#[test]
fn merge_var_decl_joins_adjacent_declarations_of_one_type() {
    check(
        MergeVarDecl,
        r#"
void f() {
    int a = 1;
    int b = a;
    final int c = 2;
    long d;
}
"#,
        expect![[r#"
            // merges two declarations into `int a = 1, b = a;`
            void f() {
                int a = 1, b = a;
                final int c = 2;
                long d;
            }
        "#]],
    );
}

#[test]
fn divide_var_decl_splits_declarations() {
    check(
        DivideVarDecl,
        r#"
void f() {
    final int a = 1, b[] = {a};
    for (int i = 0, j = 1; i < j; i++) {
    }
}
"#,
        expect![[r#"
            // splits `final int a = 1, b[] = {a};` into one declaration per variable
            void f() {
                final int a = 1;
                final int b[] = {a};
                for (int i = 0, j = 1; i < j; i++) {
                }
            }
        "#]],
    );
}

#[test]
fn infix_dividing_computes_an_operand_first() {
    check(
        InfixDividing,
        r#"
int f(int a, int b, int c, double d) {
    int temp = 0;
    int x = a + b * c;
    x = (a - b) * (c + temp);
    d = d / (a + 1) + a % 3;
    return a + g(b * c);
}
"#,
        expect![[r#"
            // computes `b * c` first into `temp1`
            int f(int a, int b, int c, double d) {
                int temp = 0;
                int temp1 = b * c;
                int x = a + temp1;
                x = (a - b) * (c + temp);
                d = d / (a + 1) + a % 3;
                return a + g(b * c);
            }
            // computes `a - b` first into `temp1`
            int f(int a, int b, int c, double d) {
                int temp = 0;
                int x = a + b * c;
                int temp1 = a - b;
                x = temp1 * (c + temp);
                d = d / (a + 1) + a % 3;
                return a + g(b * c);
            }
            // computes `c + temp` first into `temp1`
            int f(int a, int b, int c, double d) {
                int temp = 0;
                int x = a + b * c;
                int temp1 = c + temp;
                x = (a - b) * temp1;
                d = d / (a + 1) + a % 3;
                return a + g(b * c);
            }
            // computes `d / (a + 1)` first into `temp1`
            int f(int a, int b, int c, double d) {
                int temp = 0;
                int x = a + b * c;
                x = (a - b) * (c + temp);
                double temp1 = d / (a + 1);
                d = temp1 + a % 3;
                return a + g(b * c);
            }
        "#]],
    );
}

#[test]
fn infix_dividing_refuses_when_order_or_type_is_unknown() {
    // `arr[0]` evaluated first may throw; `o.size() * 2` has a call; `p * q` has unknown types
    check(
        InfixDividing,
        r#"
int f(int[] arr, int b, java.util.List<String> o) {
    int x = arr[0] + b * 2;
    x = 1 + o.size() * 2;
    return x + p * q;
}
"#,
        expect![[r#"
            (refused)
        "#]],
    );
}
