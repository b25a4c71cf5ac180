use expect_test::expect;

use super::super::check::check;
use super::super::Operator::*;

#[test]
fn for_to_while_moves_init_and_update() {
    check(
        For2While,
        r#"
int f(int[] a) {
    int s = 0;
    for (int i = 0, j = a.length - 1; i < j; i++, j--) {
        s += a[i] * a[j];
    }
    for (;;) s++;
}
"#,
        expect![[r#"
            // rewrites a `for` loop as a `while` loop
            int f(int[] a) {
                int s = 0;
                int i = 0, j = a.length - 1;
                while (i < j) {
                    s += a[i] * a[j];
                    i++;
                    j--;
                }
                for (;;) s++;
            }
            // rewrites a `for` loop as a `while` loop
            int f(int[] a) {
                int s = 0;
                for (int i = 0, j = a.length - 1; i < j; i++, j--) {
                    s += a[i] * a[j];
                }
                while (true) {
                    s++;
                }
            }
        "#]],
    );
}

#[test]
fn for_to_while_refuses_continue_labels_and_later_clashes() {
    // `continue` would skip the update; `outer:` would label the init; a later `i` would clash
    check(
        For2While,
        r#"
void f(int n) {
    for (int k = 0; k < n; k++) {
        if (k == 2) continue;
        g(k);
    }
    outer:
    for (int j = 0; j < n; j++) {
        g(j);
    }
    for (int i = 0; i < n; i++) {
        g(i);
    }
    int i = 3;
}
"#,
        expect![[r#"
            (refused)
        "#]],
    );
}

#[test]
fn for_to_while_keeps_continue_of_inner_loops() {
    check(
        For2While,
        r#"
void f(int n) {
    for (int k = 0; k < n; k++) {
        while (g(k)) {
            continue;
        }
    }
}
"#,
        expect![[r#"
            // rewrites a `for` loop as a `while` loop
            void f(int n) {
                int k = 0;
                while (k < n) {
                    while (g(k)) {
                        continue;
                    }
                    k++;
                }
            }
        "#]],
    );
}

#[test]
fn while_to_for_moves_a_trailing_update() {
    check(
        While2For,
        r#"
void f(int n) {
    int i = 0;
    while (i < n) {
        g(i);
        i++;
    }
    while (true) {
        if (h()) continue;
        n--;
    }
}
"#,
        expect![[r#"
            // rewrites a `while` loop as a `for` loop with its update in the header
            void f(int n) {
                int i = 0;
                for (; i < n; i++) {
                    g(i);
                }
                while (true) {
                    if (h()) continue;
                    n--;
                }
            }
            // rewrites a `while` loop as a `for` loop
            void f(int n) {
                int i = 0;
                while (i < n) {
                    g(i);
                    i++;
                }
                for (;;) {
                    if (h()) continue;
                    n--;
                }
            }
        "#]],
    );
}

#[test]
fn do_to_while_copies_the_body_once() {
    check(
        Do2While,
        r#"
void f(int n) {
    do {
        n = step(n);
    } while (n > 0);
    do {
        int m = n;
        n = m - 1;
    } while (n > 0);
    do {
        if (n == 3) break;
        n--;
    } while (n > 0);
}
"#,
        expect![[r#"
            // rewrites a `do`-`while` loop as its body followed by a `while` loop
            void f(int n) {
                n = step(n);
                while (n > 0) {
                    n = step(n);
                }
                do {
                    int m = n;
                    n = m - 1;
                } while (n > 0);
                do {
                    if (n == 3) break;
                    n--;
                } while (n > 0);
            }
        "#]],
    );
}

#[test]
fn if_continue_becomes_else() {
    check(
        LoopIfContinue2Else,
        r#"
void f(int[] a) {
    for (int x : a) {
        if (x < 0) {
            continue;
        }
        g(x);
        h(x);
    }
    for (int x : a) {
        if (x == 0) {
            log(x);
            continue;
        }
        g(x);
    }
}
"#,
        expect![[r#"
            // replaces `continue` in an `if` by an `else` holding the rest of the loop body
            void f(int[] a) {
                for (int x : a) {
                    if (!(x < 0)) {
                        g(x);
                        h(x);
                    }
                }
                for (int x : a) {
                    if (x == 0) {
                        log(x);
                        continue;
                    }
                    g(x);
                }
            }
            // replaces `continue` in an `if` by an `else` holding the rest of the loop body
            void f(int[] a) {
                for (int x : a) {
                    if (x < 0) {
                        continue;
                    }
                    g(x);
                    h(x);
                }
                for (int x : a) {
                    if (x == 0) {
                        log(x);
                    } else {
                        g(x);
                    }
                }
            }
        "#]],
    );
}

#[test]
fn else_if_becomes_nested_if() {
    check(
        ElseIf2If,
        r#"
int f(int a) {
    if (a < 0) {
        return -1;
    } else if (a == 0) {
        return 0;
    } else {
        return 1;
    }
}
"#,
        expect![[r#"
            // turns an `else if` into an `if` nested in the `else` block
            int f(int a) {
                if (a < 0) {
                    return -1;
                } else {
                    if (a == 0) {
                        return 0;
                    } else {
                        return 1;
                    }
                }
            }
        "#]],
    );
}

#[test]
fn while_to_for_keeps_an_update_that_names_a_body_variable_in_the_body() {
    // `step` is declared in the body: in the header it would be unknown (javac: cannot find
    // symbol), so the loop becomes `for (; cond;)` with its body unchanged
    check(
        While2For,
        r#"
void f(int n) {
    int i = 0;
    while (i < n) {
        int step = g(i);
        i += step;
    }
}
"#,
        expect![[r#"
            // rewrites a `while` loop as a `for` loop
            void f(int n) {
                int i = 0;
                for (; i < n;) {
                    int step = g(i);
                    i += step;
                }
            }
        "#]],
    );
}

#[test]
fn if_else_to_else_if_refuses_to_split_a_final_fields_assignment() {
    // in a constructor both branches assign `comparator`: with `else if` javac no longer
    // sees it definitely assigned (a blank final field), so the operator refuses
    check(
        IfElse2IfElseIf,
        r#"
Sorter(Comparator<T> comp) {
    if (comp == null) {
        this.comparator = natural();
    } else {
        comparator = comp;
    }
}
"#,
        expect![[r#"
            (refused)
        "#]],
    );
}

#[test]
fn if_else_becomes_else_if_with_the_negation() {
    check(
        IfElse2IfElseIf,
        r#"
int f(int a) {
    int x = 0;
    if (a != 0) {
        x = 1;
    } else {
        x = 2;
    }
    if (next() > 0) {
        x = 3;
    } else {
        x = 4;
    }
    return x;
}
"#,
        expect![[r#"
            // makes the `else` an `else if (a == 0)`
            int f(int a) {
                int x = 0;
                if (a != 0) {
                    x = 1;
                } else if (a == 0) {
                    x = 2;
                }
                if (next() > 0) {
                    x = 3;
                } else {
                    x = 4;
                }
                return x;
            }
        "#]],
    );
}

#[test]
fn if_else_to_else_if_refuses_what_javac_could_not_follow() {
    // both branches return (the method would miss a return); `y` is assigned in both branches
    // but declared without a value (it would not be definitely assigned)
    check(
        IfElse2IfElseIf,
        r#"
int f(int a) {
    int y;
    if (a > 1) {
        y = 1;
    } else {
        y = 2;
    }
    if (a != 0) {
        return y;
    } else {
        return 0;
    }
}
"#,
        expect![[r#"
            (refused)
        "#]],
    );
}

#[test]
fn if_else_to_else_if_refuses_branches_that_cannot_complete_however_deep() {
    // found on the JDK's BigDecimal: each branch ends in an if/else, a loop or a switch that
    // never completes normally, so after `else if` javac would miss a return
    check(
        IfElse2IfElseIf,
        r#"
int f(int a, int b) {
    if (a > 0) {
        if (b > 0) {
            return 1;
        } else {
            return 2;
        }
    } else {
        while (true) {
            b++;
        }
    }
}
"#,
        expect![[r#"
            (refused)
        "#]],
    );
    check(
        IfElse2IfElseIf,
        r#"
int g(int a) {
    if (a > 0) {
        for (;;) {
            a--;
        }
    } else {
        switch (a) {
            case 0:
                return 0;
            default:
                throw new IllegalStateException();
        }
    }
}
"#,
        expect![[r#"
            (refused)
        "#]],
    );
    // one branch that completes normally is enough: the method still returns after the if
    check(
        IfElse2IfElseIf,
        r#"
int h(int a) {
    if (a > 0) {
        if (a > 9) {
            return 9;
        }
    } else {
        return 0;
    }
    return a;
}
"#,
        expect![[r#"
            // makes the `else` an `else if (!(a > 0))`
            int h(int a) {
                if (a > 0) {
                    if (a > 9) {
                        return 9;
                    }
                } else if (!(a > 0)) {
                    return 0;
                }
                return a;
            }
        "#]],
    );
}

#[test]
fn reverse_if_negates_and_swaps() {
    check(
        ReverseIf,
        r#"
int f(int a, boolean b) {
    if (a < 0 || b) {
        a = 1;
    } else {
        a = 2;
    }
    if (!b) {
        return a;
    } else {
        return -a;
    }
}
"#,
        expect![[r#"
            // negates the condition to `!(a < 0 || b)` and swaps the branches
            int f(int a, boolean b) {
                if (!(a < 0 || b)) {
                    a = 2;
                } else {
                    a = 1;
                }
                if (!b) {
                    return a;
                } else {
                    return -a;
                }
            }
            // negates the condition to `b` and swaps the branches
            int f(int a, boolean b) {
                if (a < 0 || b) {
                    a = 1;
                } else {
                    a = 2;
                }
                if (b) {
                    return -a;
                } else {
                    return a;
                }
            }
        "#]],
    );
}

#[test]
fn reverse_if_refuses_without_else_or_with_else_if() {
    check(
        ReverseIf,
        r#"
int f(int a) {
    if (a < 0) {
        a = 1;
    }
    if (a == 1) {
        return 1;
    } else if (a == 2) {
        return 2;
    }
    return 0;
}
"#,
        expect![[r#"
            (refused)
        "#]],
    );
}

#[test]
fn if_to_conditional_expression() {
    check(
        If2CondExp,
        r#"
int f(int a, boolean b) {
    int x;
    if (b) {
        x = a;
    } else {
        x = 2;
    }
    if (a > 0)
        return 1;
    else
        return 0;
}
"#,
        expect![[r#"
            // folds the `if` into `x = … ? … : …`
            int f(int a, boolean b) {
                int x;
                x = b ? a : 2;
                if (a > 0)
                    return 1;
                else
                    return 0;
            }
            // folds the `if` into one `return … ? … : …`
            int f(int a, boolean b) {
                int x;
                if (b) {
                    x = a;
                } else {
                    x = 2;
                }
                return a > 0 ? 1 : 0;
            }
        "#]],
    );
}

#[test]
fn if_to_conditional_refuses_mixed_types_and_different_targets() {
    // Object o = 1 or 2L keeps Integer/Long; `b ? 1 : 2L` would always be a Long
    check(
        If2CondExp,
        r#"
Object f(boolean b, int x, int y) {
    Object o;
    if (b) {
        o = 1;
    } else {
        o = 2L;
    }
    if (b) {
        x = 1;
    } else {
        y = 1;
    }
    return o;
}
"#,
        expect![[r#"
            (refused)
        "#]],
    );
}

#[test]
fn conditional_expression_to_if() {
    check(
        CondExp2If,
        r#"
int f(int a, boolean b) {
    int x = b ? a : -a;
    x = a > 0 ? 1 : 2;
    return b ? x : a;
}
"#,
        expect![[r#"
            // unfolds `… ? … : …` into an `if`-`else`
            int f(int a, boolean b) {
                int x;
                if (b) {
                    x = a;
                } else {
                    x = -a;
                }
                x = a > 0 ? 1 : 2;
                return b ? x : a;
            }
            // unfolds `… ? … : …` into an `if`-`else`
            int f(int a, boolean b) {
                int x = b ? a : -a;
                if (a > 0) {
                    x = 1;
                } else {
                    x = 2;
                }
                return b ? x : a;
            }
            // unfolds `… ? … : …` into an `if`-`else`
            int f(int a, boolean b) {
                int x = b ? a : -a;
                x = a > 0 ? 1 : 2;
                if (b) {
                    return x;
                } else {
                    return a;
                }
            }
        "#]],
    );
}

#[test]
fn dividing_composed_if_nests_conditions() {
    check(
        DividingComposedIf,
        r#"
void f(String s, int n) {
    if (s != null && s.length() > n && n > 0) {
        g(s);
    }
    if (s == null && n > 0) {
        g(s);
    } else {
        h();
    }
}
"#,
        expect![[r#"
            // splits `if (s != null && s.length() > n && n > 0)` into two nested `if`s
            void f(String s, int n) {
                if (s != null && s.length() > n) {
                    if (n > 0) {
                        g(s);
                    }
                }
                if (s == null && n > 0) {
                    g(s);
                } else {
                    h();
                }
            }
        "#]],
    );
}

#[test]
fn switch_to_if_chain() {
    check(
        Switch2If,
        r#"
String f(int k, String s) {
    switch (k) {
        case 1:
        case 2:
            g(k);
            break;
        case -3:
            return "three";
        default:
            h();
    }
    switch (s) {
        case "a":
            return "A";
        default:
            return "?";
    }
}
"#,
        expect![[r#"
            // rewrites `switch (k)` as an `if`-`else if` chain
            String f(int k, String s) {
                if (k == 1 || k == 2) {
                    g(k);
                } else if (k == -3) {
                    return "three";
                } else {
                    h();
                }
                switch (s) {
                    case "a":
                        return "A";
                    default:
                        return "?";
                }
            }
            // rewrites `switch (s)` as an `if`-`else if` chain
            String f(int k, String s) {
                switch (k) {
                    case 1:
                    case 2:
                        g(k);
                        break;
                    case -3:
                        return "three";
                    default:
                        h();
                }
                if (s.equals("a")) {
                    return "A";
                } else {
                    return "?";
                }
            }
        "#]],
    );
}

#[test]
fn switch_to_if_refuses_fall_through_inner_breaks_and_enums() {
    check(
        Switch2If,
        r#"
void f(int k, Color c) {
    switch (k) {
        case 1:
            g(k);
        case 2:
            h();
            break;
    }
    switch (k) {
        case 1:
            if (k > 0) break;
            g(k);
            break;
        default:
            break;
    }
    switch (c) {
        case RED:
            g(1);
            break;
    }
    switch (k) {
        default:
            h();
            break;
        case 1:
            g(k);
    }
    switch (next()) {
        case 1:
            g(1);
    }
}
"#,
        expect![[r#"
            (refused)
        "#]],
    );
}

#[test]
fn swap_statement_needs_independence() {
    check(
        SwapStatement,
        r#"
void f(int a, int b) {
    int x = a + 1;
    int y = b * 2;
    int z = x + y;
    a = 3;
    g(a);
    b = a / b;
    this.a = 1;
}
"#,
        expect![[r#"
            // swaps `int x = a + 1;` and `int y = b * 2;`
            void f(int a, int b) {
                int y = b * 2;
                int x = a + 1;
                int z = x + y;
                a = 3;
                g(a);
                b = a / b;
                this.a = 1;
            }
            // swaps `int z = x + y;` and `a = 3;`
            void f(int a, int b) {
                int x = a + 1;
                int y = b * 2;
                a = 3;
                int z = x + y;
                g(a);
                b = a / b;
                this.a = 1;
            }
        "#]],
    );
}
