//! `transform --explain`: one case per refusal rule — an operator, a method that meets the
//! rule, and what the explanation says (`applied N`, then `line L: rule` per refused site).

use expect_test::expect;

use crate::check::render_explained;
use crate::Operator::{self, *};

/// (operator, method, buggy lines or every line)
const CASES: &[(Operator, &str, Option<&[usize]>)] = &[
    (For2While, "void f(int n) {\n    l: for (int i = 0; i < n; i++) {\n        g(i);\n    }\n}", None),
    (For2While, "void f(int n) {\n    for (int i = 0; /* up */ i < n; i++) {\n        g(i);\n    }\n}", None),
    (For2While, "void f(int n) {\n    for (int i = 0; i < n; i++) {\n        if (i == 2) continue;\n        g(i);\n    }\n}", None),
    (For2While, "void f(int n) {\n    if (n > 0) for (int i = 0; i < n; i++) g(i);\n}", None),
    (For2While, "void f(int n) {\n    for (int i = 0; i < n; i++) {\n        g(i);\n    }\n    int i = 3;\n    g(i);\n}", None),
    (For2While, "void f(int n) {\n    for (int i = 0; i < n; i++) {\n        g(i);\n    }\n    g(n);\n}", Some(&[5])),
    (For2While, "int f(int n) {\n    return n + 1;\n}", None),
    (While2For, "void f(int n) {\n    while (n > 0) /* down */ {\n        n--;\n    }\n}", None),
    (Do2While, "void f(int n) {\n    do {\n        int k = n;\n        n -= k;\n    } while (n > 0);\n}", None),
    (Do2While, "void f(int n) {\n    do {\n    } while (n-- > 0);\n}", None),
    (Do2While, "void f(int n) {\n    l: do {\n        n--;\n    } while (n > 0);\n}", None),
    (Do2While, "void f(int n) {\n    if (n > 0) do {\n        n--;\n    } while (n > 0);\n}", None),
    (Do2While, "void f(int n) {\n    do {\n        if (n == 3) break;\n        n--;\n    } while (n > 0);\n}", None),
    (Do2While, "void f(int n) {\n    do n--; while (n > 0);\n}", None),
    (LoopIfContinue2Else, "void f(int[] xs) {\n    for (int x : xs) {\n        if (x < 0) {\n            continue;\n        } else {\n            g(x);\n        }\n        g(-x);\n    }\n}", None),
    (LoopIfContinue2Else, "void f(int[] xs) {\n    for (int x : xs) {\n        g(x);\n        if (x < 0) {\n            continue;\n        }\n    }\n}", None),
    (LoopIfContinue2Else, "void f(int[] xs) {\n    for (int x : xs) {\n        if (x < 0) {\n            continue;\n        }\n        class L {}\n        g(x);\n    }\n}", None),
    (SwapStatement, "void f(int a) {\n    int b = a;\n    int c = b;\n}", None),
    (SwapStatement, "void f(int a) {\n    g(a);\n    int c = a;\n}", None),
    (MergeVarDecl, "void f() {\n    var a = 1;\n    int b = 2;\n}", None),
    (MergeVarDecl, "void f() {\n    int a = 1;\n    long b = 2;\n}", None),
    (MergeVarDecl, "void f() {\n    int /* one */ a = 1;\n    int b = 2;\n}", None),
    (DivideVarDecl, "void f() {\n    for (int i = 0, j = 1; i < j; i++) {\n    }\n}", None),
    (DivideVarDecl, "void f() {\n    int a = 1, /* two */ b = 2;\n}", None),
    (InfixDividing, "void f(int a, int b) {\n    int x;\n    if (a > 0) x = a + b * 2;\n}", None),
    (InfixDividing, "int f(int a, int b) {\n    int x = a + /* two */ b * 2;\n    return x;\n}", None),
    (InfixDividing, "int f(int a, int b) {\n    int x = g(a) + b * 2;\n    return x;\n}", None),
    (InfixDividing, "int f(int[] a, int b) {\n    int x = a[0] + b * 2;\n    return x;\n}", None),
    (InfixDividing, "int f(Foo a, Foo b) {\n    int x = 1 + a.w * b.w;\n    return x;\n}", None),
    (SwitchRelation, "boolean f(int a) {\n    return next() < a++;\n}", None),
    (SwitchEqualExp, "boolean f(int[] a, int[] b) {\n    return a[0] == b[0];\n}", None),
    (SwitchStringEqual, "boolean f(String s, String t) {\n    return s.equals(t);\n}", None),
    (SwitchStringEqual, "boolean f() {\n    return \"a\".equals(\"b\");\n}", None),
    (SwitchStringEqual, "boolean f(String s) {\n    return s./* it */equals(\"b\");\n}", None),
    (Unary2Add, "int f(int i) {\n    int j = i++;\n    return j;\n}", None),
    (Unary2Add, "void f(int[] a) {\n    a[0]++;\n}", None),
    (Add2Equal, "void f(int[] a) {\n    a[0] += 1;\n}", None),
    (Add2Equal, "void f() {\n    x += 1;\n}", None),
    (Add2Equal, "void f(int a) {\n    a += g();\n}", None),
    (Add2Equal, "void f(short a) {\n    a += 1;\n}", None),
    (ModifyConstant, "long f() {\n    return 1_000 + 0x10;\n}", None),
    (ModifyConstant, "long f() {\n    return 99999999999999999999L;\n}", None),
    (ModifyConstant, "int f() {\n    return -2147483648;\n}", None),
    (DividePrePostFix, "void f(int i, int[] a) {\n    a[i]++;\n    int x = a[0]++;\n}", None),
    (DividePrePostFix, "void f(int i) {\n    while (i++ < 9) {\n    }\n}", None),
    (DividePrePostFix, "void f(int i) {\n    for (int x = i++; x < 9; x++) {\n    }\n}", None),
    (DividePrePostFix, "boolean f(int i, boolean b) {\n    boolean x = b && i++ > 0;\n    return x;\n}", None),
    (DividePrePostFix, "int f(int i, int[] a) {\n    int x = a[i++];\n    return x;\n}", None),
    (DividePrePostFix, "int f(int i) {\n    int x = /* next */ i++;\n    return x;\n}", None),
    (DividePrePostFix, "int f(int i) {\n    int x = i++ + i;\n    return x;\n}", None),
    (DividePrePostFix, "int f(int i, int j) {\n    int x = i++ + j++;\n    return x;\n}", None),
    (RenameVariable1, "int f(int a, int ab) {\n    return a + ab;\n}", None),
    (RenameVariable2, "int f(int n) {\n    int count = n, index = n, num = n, value = n, size = n, len = n, arg = n, tmp = n, v = n;\n    return n + count + index + num + value + size + len + arg + tmp + v;\n}", Some(&[1])),
    (IfElse2IfElseIf, "int f(int a) {\n    if (g(a)) {\n        a = 1;\n    } else {\n        a = 2;\n    }\n    return a;\n}", None),
    (IfElse2IfElseIf, "int f(int a) {\n    if (a > 0) {\n        return 1;\n    } else {\n        return 2;\n    }\n}", None),
    (IfElse2IfElseIf, "int f(int a) {\n    int y;\n    if (a > 0) {\n        y = 1;\n    } else {\n        y = 2;\n    }\n    return y;\n}", None),
    (ReverseIf, "void f(int a) {\n    if (a > 0) g(1);\n    else {\n        g(2);\n    }\n}", None),
    (ReverseIf, "void f(int a) {\n    if (a > 0) {\n        g(1);\n    } else g(2);\n}", None),
    (ReverseIf, "void f(int a) {\n    if (a > 0) /* pos */ {\n        g(1);\n    } else {\n        g(2);\n    }\n}", None),
    (If2CondExp, "int f(int a) {\n    if (a > 0) {\n        g(1);\n        return 1;\n    } else {\n        return 2;\n    }\n}", None),
    (If2CondExp, "int f(int a) {\n    if (a > 0) return 1; // one\n    else return 2;\n}", None),
    (If2CondExp, "void f(int a) {\n    int x, y;\n    if (a > 0) x += 1;\n    else y = 2;\n}", None),
    (If2CondExp, "void f(int a) {\n    int x, y;\n    if (a > 0) x = 1;\n    else y = 2;\n}", None),
    (If2CondExp, "void f(int a) {\n    Object x;\n    if (a > 0) x = g();\n    else x = \"s\";\n}", None),
    (If2CondExp, "Object f(int a) {\n    if (a > 0) return g();\n    else return \"s\";\n}", None),
    (If2CondExp, "int f(int a) {\n    int x = 0;\n    if (a > 0) x = 1;\n    else return 2;\n    return x;\n}", None),
    (CondExp2If, "int f(int a) {\n    int x = a > 0 ? 1 /* one */ : 2;\n    return x;\n}", None),
    (CondExp2If, "void f(int a) {\n    x += a > 0 ? 1 : 2;\n}", None),
    (CondExp2If, "void f(int[] x, int a) {\n    x[0] = a > 0 ? 1 : 2;\n}", None),
    (CondExp2If, "void f(int a) {\n    int x = a > 0 ? 1 : 2, y = 3;\n}", None),
    (CondExp2If, "void f(int a) {\n    var x = a > 0 ? 1 : 2;\n}", None),
    (CondExp2If, "void f(int a) {\n    for (int x = a > 0 ? 1 : 2; x < 9; x++) {\n    }\n}", None),
    (CondExp2If, "int f(int a) {\n    return 1 + (a > 0 ? 1 : 2);\n}", None),
    (CondExp2If, "Object f(int a) {\n    return a > 0 ? g() : \"s\";\n}", None),
    (DividingComposedIf, "void f(int a) {\n    if (a > 0 && a < 9) {\n        g(a);\n    } else {\n        g(0);\n    }\n}", None),
    (DividingComposedIf, "void f(int a) {\n    if (a > 0 && a < 9) /* in */ {\n        g(a);\n    }\n}", None),
    (Switch2If, "int f(int a) {\n    return switch (a) {\n        case 1 -> 2;\n        default -> 3;\n    };\n}", None),
    (Switch2If, "void f(int a) {\n    switch (next()) {\n        case 1:\n            g(1);\n            break;\n    }\n}", None),
    (Switch2If, "void f(int a) {\n    switch (a) /* which */ {\n        case 1:\n            g(1);\n            break;\n    }\n}", None),
    (Switch2If, "void f(int a) {\n    switch (a) {\n    }\n}", None),
    (Switch2If, "void f(int a) {\n    switch (a) {\n        case 1 -> g(1);\n        default -> g(2);\n    }\n}", None),
    (Switch2If, "void f(int a) {\n    switch (a) {\n        default:\n            g(0);\n            break;\n        case 1:\n            g(1);\n    }\n}", None),
    (Switch2If, "void f(Color c) {\n    switch (c) {\n        case RED:\n            g(1);\n            break;\n    }\n}", None),
    (Switch2If, "void f(int a) {\n    switch (a) {\n        case 1:\n            g(1);\n        case 2:\n            g(2);\n    }\n}", None),
    (Switch2If, "void f(int a) {\n    switch (a) {\n        case 1:\n            if (a > 0) break;\n            g(1);\n            break;\n    }\n}", None),
    (Switch2If, "void f(int a) {\n    switch (a) {\n        case 1:\n            int k = 1;\n            g(k);\n            break;\n        case 2:\n            k = 2;\n            g(k);\n    }\n}", None),
    (Switch2If, "void f(int a) {\n    switch (a) {\n        default:\n            g(0);\n    }\n}", None),
];

#[test]
fn every_refusal_rule_is_explained() {
    let out: String = CASES
        .iter()
        .map(|(op, before, buggy)| {
            let head = before.lines().nth(1).unwrap_or("").trim();
            format!(
                "## {op} `{head}`\n{}",
                render_explained(*op, before, *buggy)
            )
        })
        .collect();
    expect![[r###"
        ## For2While `l: for (int i = 0; i < n; i++) {`
        For2While: applied 0
          line 2: a labeled loop
        ## For2While `for (int i = 0; /* up */ i < n; i++) {`
        For2While: applied 0
          line 2: a comment in the loop header
        ## For2While `for (int i = 0; i < n; i++) {`
        For2While: applied 0
          line 2: a `continue` in the body would skip the update
        ## For2While `if (n > 0) for (int i = 0; i < n; i++) g(i);`
        For2While: applied 0
          line 2: the loop is not in a block: its initialiser has nowhere to go
        ## For2While `for (int i = 0; i < n; i++) {`
        For2While: applied 0
          line 2: a variable declared in the header is used after the loop
        ## For2While `for (int i = 0; i < n; i++) {`
        For2While: applied 0
          line 2: changes no buggy line (allowed with --all-sites)
        ## For2While `return n + 1;`
        For2While: applied 0
          line 1: no site: the method has nothing this operator rewrites
        ## While2For `while (n > 0) /* down */ {`
        While2For: applied 0
          line 2: a comment in the loop header
        ## Do2While `do {`
        Do2While: applied 0
          line 2: the body declares a variable or class at its top level (it would be declared twice)
        ## Do2While `do {`
        Do2While: applied 0
          line 2: an empty body
        ## Do2While `l: do {`
        Do2While: applied 0
          line 2: a labeled loop
        ## Do2While `if (n > 0) do {`
        Do2While: applied 0
          line 2: the loop is not in a block
        ## Do2While `do {`
        Do2While: applied 0
          line 2: the body `break`s or `continue`s the loop
        ## Do2While `do n--; while (n > 0);`
        Do2While: applied 0
          line 2: the body is not a block
        ## LoopIfContinue2Else `for (int x : xs) {`
        LoopIfContinue2Else: applied 0
          line 3: the `if` already has an `else`
        ## LoopIfContinue2Else `for (int x : xs) {`
        LoopIfContinue2Else: applied 0
          line 4: nothing follows the `if` in the loop body
        ## LoopIfContinue2Else `for (int x : xs) {`
        LoopIfContinue2Else: applied 0
          line 3: the rest of the body declares a class
        ## SwapStatement `int b = a;`
        SwapStatement: applied 0
          line 2: one statement writes a name the other mentions
        ## SwapStatement `g(a);`
        SwapStatement: applied 0
          line 2: not two simple statements (assignments or declarations that call, throw and comment nothing)
        ## MergeVarDecl `var a = 1;`
        MergeVarDecl: applied 0
          line 2: a `var` declaration
        ## MergeVarDecl `int a = 1;`
        MergeVarDecl: applied 0
          line 2: different types or modifiers
        ## MergeVarDecl `int /* one */ a = 1;`
        MergeVarDecl: applied 0
          line 2: a comment in a declaration
        ## DivideVarDecl `for (int i = 0, j = 1; i < j; i++) {`
        DivideVarDecl: applied 0
          line 2: not a statement of a block (a `for` header)
        ## DivideVarDecl `int a = 1, /* two */ b = 2;`
        DivideVarDecl: applied 0
          line 2: a comment in the declaration
        ## InfixDividing `int x;`
        InfixDividing: applied 0
          line 3: not a statement of a block
        ## InfixDividing `int x = a + /* two */ b * 2;`
        InfixDividing: applied 0
          line 2: a comment in the statement
        ## InfixDividing `int x = g(a) + b * 2;`
        InfixDividing: applied 0
          line 2: the value has effects (a call, an assignment)
        ## InfixDividing `int x = a[0] + b * 2;`
        InfixDividing: applied 0
          line 2: what is evaluated before the operand may throw or has effects
        ## InfixDividing `int x = 1 + a.w * b.w;`
        InfixDividing: applied 0
          line 2: the operand's type is not known to be primitive or `String`
        ## SwitchRelation `return next() < a++;`
        SwitchRelation: applied 0
          line 2: an operand has effects (a call, an assignment): swapping reorders them
        ## SwitchEqualExp `return a[0] == b[0];`
        SwitchEqualExp: applied 0
          line 2: both operands may throw: swapping could change which exception surfaces
        ## SwitchStringEqual `return s.equals(t);`
        SwitchStringEqual: applied 0
          line 2: the argument is not a string literal (it could be null)
        ## SwitchStringEqual `return "a".equals("b");`
        SwitchStringEqual: applied 0
          line 2: the receiver is `this`, `super` or a literal
        ## SwitchStringEqual `return s./* it */equals("b");`
        SwitchStringEqual: applied 0
          line 2: a comment in the call
        ## Unary2Add `int j = i++;`
        Unary2Add: applied 0
          line 2: the update's value is used
        ## Unary2Add `a[0]++;`
        Unary2Add: applied 0
          line 2: the updated target is not a plain variable
        ## Add2Equal `a[0] += 1;`
        Add2Equal: applied 0
          line 2: the target is not a plain variable or `this` field
        ## Add2Equal `x += 1;`
        Add2Equal: applied 0
          line 2: the variable's type is not known
        ## Add2Equal `a += g();`
        Add2Equal: applied 0
          line 2: the right side's type is not known
        ## Add2Equal `a += 1;`
        Add2Equal: applied 0
          line 2: the plain form would need a cast (the compound assignment narrows implicitly)
        ## ModifyConstant `return 1_000 + 0x10;`
        ModifyConstant: applied 0
          line 2: not a plain decimal literal (underscores or a leading zero)
        ## ModifyConstant `return 99999999999999999999L;`
        ModifyConstant: applied 0
          line 2: the literal is too large
        ## ModifyConstant `return -2147483648;`
        ModifyConstant: applied 0
          line 2: 2147483648 is valid only after a unary minus
        ## DividePrePostFix `a[i]++;`
        DividePrePostFix: applied 0
          line 3: the updated target is not a plain variable
        ## DividePrePostFix `while (i++ < 9) {`
        DividePrePostFix: applied 0
          line 2: inside a condition or header, not an assignment or declaration
        ## DividePrePostFix `for (int x = i++; x < 9; x++) {`
        DividePrePostFix: applied 0
          line 2: not a statement of a block
        ## DividePrePostFix `boolean x = b && i++ > 0;`
        DividePrePostFix: applied 0
          line 2: the update is not always evaluated (`&&`, `||` or `?:`)
        ## DividePrePostFix `int x = a[i++];`
        DividePrePostFix: applied 0
          line 2: the statement may throw
        ## DividePrePostFix `int x = /* next */ i++;`
        DividePrePostFix: applied 0
          line 2: a comment in the statement
        ## DividePrePostFix `int x = i++ + i;`
        DividePrePostFix: applied 0
          line 2: the variable appears more than once in the statement
        ## DividePrePostFix `int x = i++ + j++;`
        DividePrePostFix: applied 0
          line 2: the statement has other effects
          line 2: the statement has other effects
        ## RenameVariable-1 `return a + ab;`
        RenameVariable-1: applied 0
          line 1: the name is already one character
          line 1: the first character is already a name in the file
        ## RenameVariable-2 `int count = n, index = n, num = n, value = n, size = n, len = n, arg = n, tmp = n, v = n;`
        RenameVariable-2: applied 0
          line 1: every conventional name for it is already a name in the file
          line 2: every conventional name for it is already a name in the file
          line 2: every conventional name for it is already a name in the file
          line 2: every conventional name for it is already a name in the file
          line 2: every conventional name for it is already a name in the file
          line 2: every conventional name for it is already a name in the file
          line 2: every conventional name for it is already a name in the file
          line 2: every conventional name for it is already a name in the file
          line 2: every conventional name for it is already a name in the file
          line 2: every conventional name for it is already a name in the file
        ## IfElse2IfElseIf `if (g(a)) {`
        IfElse2IfElseIf: applied 0
          line 2: the condition has effects: it would be evaluated twice
        ## IfElse2IfElseIf `if (a > 0) {`
        IfElse2IfElseIf: applied 0
          line 2: neither branch completes normally: javac would find code after it reachable (a missing return)
        ## IfElse2IfElseIf `int y;`
        IfElse2IfElseIf: applied 0
          line 3: it assigns a variable javac must see definitely assigned (a local without a value, a blank final field)
        ## ReverseIf `if (a > 0) g(1);`
        ReverseIf: applied 0
          line 2: a branch is not a block
        ## ReverseIf `if (a > 0) {`
        ReverseIf: applied 0
          line 2: a branch is not a block (or the `else` is an `else if`)
        ## ReverseIf `if (a > 0) /* pos */ {`
        ReverseIf: applied 0
          line 2: comments between the `if`'s parts
        ## If2CondExp `if (a > 0) {`
        If2CondExp: applied 0
          line 2: a branch holds more than one statement
        ## If2CondExp `if (a > 0) return 1; // one`
        If2CondExp: applied 0
          line 2: a comment in the `if`
        ## If2CondExp `int x, y;`
        If2CondExp: applied 0
          line 3: the branches are not both plain assignments (`=`)
        ## If2CondExp `int x, y;`
        If2CondExp: applied 0
          line 3: the branches assign different targets
        ## If2CondExp `Object x;`
        If2CondExp: applied 0
          line 3: the branches' types are unknown or differ (`?:` could convert the value)
        ## If2CondExp `if (a > 0) return g();`
        If2CondExp: applied 0
          line 2: the returned values' types are unknown or differ (`?:` could convert the value)
        ## If2CondExp `int x = 0;`
        If2CondExp: applied 0
          line 3: the branches are not both assignments or both returns
        ## CondExp2If `int x = a > 0 ? 1 /* one */ : 2;`
        CondExp2If: applied 0
          line 2: a comment in the statement
        ## CondExp2If `x += a > 0 ? 1 : 2;`
        CondExp2If: applied 0
          line 2: `?:` inside an expression that is no plain assignment
        ## CondExp2If `x[0] = a > 0 ? 1 : 2;`
        CondExp2If: applied 0
          line 2: the target is not a plain variable or `this` field
        ## CondExp2If `int x = a > 0 ? 1 : 2, y = 3;`
        CondExp2If: applied 0
          line 2: a declaration of several variables
        ## CondExp2If `var x = a > 0 ? 1 : 2;`
        CondExp2If: applied 0
          line 2: a `var` declaration (the type would be lost)
        ## CondExp2If `for (int x = a > 0 ? 1 : 2; x < 9; x++) {`
        CondExp2If: applied 0
          line 2: not a statement of a block
        ## CondExp2If `return 1 + (a > 0 ? 1 : 2);`
        CondExp2If: applied 0
          line 2: the `?:` is only part of the value
        ## CondExp2If `return a > 0 ? g() : "s";`
        CondExp2If: applied 0
          line 2: the branches' types are unknown or differ (`?:` could convert the value)
        ## DividingComposedIf `if (a > 0 && a < 9) {`
        DividingComposedIf: applied 0
          line 2: the `if` has an `else` (it would need repeating)
        ## DividingComposedIf `if (a > 0 && a < 9) /* in */ {`
        DividingComposedIf: applied 0
          line 2: comments between the `if`'s parts
        ## Switch2If `return switch (a) {`
        Switch2If: applied 0
          line 2: a `switch` expression, not a statement of a block
        ## Switch2If `switch (next()) {`
        Switch2If: applied 0
          line 2: the selector has effects (it would be evaluated per case)
        ## Switch2If `switch (a) /* which */ {`
        Switch2If: applied 0
          line 2: comments between the `switch`'s parts
        ## Switch2If `switch (a) {`
        Switch2If: applied 0
          line 2: an empty `switch`
        ## Switch2If `switch (a) {`
        Switch2If: applied 0
          line 2: arrow cases (`case … ->`) or comments between cases
        ## Switch2If `switch (a) {`
        Switch2If: applied 0
          line 2: `default` is not the last case
        ## Switch2If `switch (c) {`
        Switch2If: applied 0
          line 2: a case label is no number, character or string literal (an enum constant or a pattern)
        ## Switch2If `switch (a) {`
        Switch2If: applied 0
          line 2: a case falls through into the next
        ## Switch2If `switch (a) {`
        Switch2If: applied 0
          line 2: a `break` of the switch inside a case's body
        ## Switch2If `switch (a) {`
        Switch2If: applied 0
          line 2: a variable declared in one case is used in another
        ## Switch2If `switch (a) {`
        Switch2If: applied 0
          line 2: a lone `default` is no `if`
    "###]].assert_eq(&out);
}

/// The rules the operators name, read from their sources: `ctx.refuse(node, "rule")`, and the
/// `Some("rule")` arms of a `let rule = if …` chain.
fn literal(s: &str) -> Option<&str> {
    let open = s.find('"')? + 1;
    let len = s[open..].find('"')?;
    Some(&s[open..open + len])
}

fn rules_in(src: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for (i, _) in src.match_indices("ctx.refuse") {
        let call = &src[i..];
        let end = call.find(')').unwrap_or(call.len());
        if call[..end].contains('"') {
            out.extend(literal(call));
        }
    }
    for (i, _) in src.match_indices("let rule = if") {
        let chain = &src[i..];
        let chain = &chain[..chain.find("};").unwrap_or(chain.len())];
        for (j, _) in chain.match_indices("Some(\"") {
            out.extend(literal(&chain[j..]));
        }
    }
    out
}

#[test]
fn the_cases_cover_every_rule_of_every_operator() {
    let out: String = CASES
        .iter()
        .map(|(op, before, buggy)| render_explained(*op, before, *buggy))
        .collect();
    // every source file of the crate: a new family file is covered without being listed
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("src")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("source");
            (p.display().to_string(), text)
        })
        .collect();
    sources.sort();
    let with_rules: Vec<&str> = sources
        .iter()
        .filter(|(_, s)| !rules_in(s).is_empty())
        .map(|(p, _)| p.rsplit('/').next().unwrap_or(p))
        .collect();
    for family in [
        "conditionals.rs",
        "declarations.rs",
        "expression.rs",
        "loops.rs",
        "naming.rs",
    ] {
        assert!(
            with_rules.contains(&family),
            "{family} names no rule: {with_rules:?}"
        );
    }
    let rules: Vec<&str> = sources.iter().flat_map(|(_, s)| rules_in(s)).collect();
    assert!(rules.len() >= 60, "{} rules found", rules.len());
    let missing: Vec<&&str> = rules.iter().filter(|r| !out.contains(**r)).collect();
    assert!(missing.is_empty(), "rules without a case: {missing:#?}");
}
