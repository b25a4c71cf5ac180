use std::path::PathBuf;
use std::time::Duration;

use super::*;

fn have_java() -> bool {
    std::process::Command::new("javac")
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success())
}

const FILE: &str = "package p;\n\npublic class Counter {\n    private int limit = 3;\n\n    int over(int x) {\n        return x - limit;\n    }\n}\n";
const METHOD: &str = "    int over(int x) {\n        return x - limit;\n    }";
const MISSING: &str = "package p;\n\nimport q.Missing;\n\npublic class Uses {\n    int f(Missing m) {\n        return 1;\n    }\n}\n";

fn bugs() -> Vec<Bug<'static>> {
    vec![
        Bug {
            key: "Counter-1",
            file_path: "src/p/Counter.java",
            method: METHOD,
            file_source: Some(FILE),
            encoding: None,
        },
        Bug {
            key: "Uses-1",
            file_path: "src/p/Uses.java",
            method: "    int f(Missing m) {\n        return 1;\n    }",
            file_source: Some(MISSING),
            encoding: None,
        },
    ]
}

#[test]
fn the_method_goes_back_into_its_file() {
    let placed = place(
        FILE,
        METHOD,
        "    int over(int y) {\n        return y;\n    }\n",
    )
    .expect("found");
    assert!(placed.contains("int over(int y) {\n        return y;\n    }\n}\n"));
    assert!(placed.starts_with("package p;\n\npublic class Counter {\n    private int limit = 3;"));
    assert_eq!(place(FILE, "    int under() {}", "x"), None);
}

#[test]
fn items_compile_in_their_files_and_an_uncompilable_original_is_not_held_against_them() {
    if !have_java() {
        eprintln!("skipped: no JDK");
        return;
    }
    let bugs = bugs();
    let items = [
        Item {
            key: "good",
            bug: 0,
            source: "    int over(int x) {\n        return x - this.limit;\n    }",
        },
        Item {
            key: "broken",
            bug: 0,
            source: "    int over(int x) {\n        return x - limt;\n    }",
        },
        Item {
            key: "orphan",
            bug: 1,
            source: "    int f(Missing m) {\n        return 2;\n    }",
        },
        Item {
            key: "lost",
            bug: 7,
            source: "",
        },
    ];
    let options = Options {
        compiler: Some(CompilerConfig::default()),
        tests: Some(TestCommand {
            // passes while the subtraction (or the `return 1`) is there
            command: "grep -q -e 'x - ' -e 'return 1' \"$NATSTUDY_SOURCE\" && echo \"pass $NATSTUDY_FILE\" || echo fail".into(),
            timeout: Duration::from_secs(30),
        }),
        workers: 2,
    };
    let seen = std::sync::Mutex::new(Vec::new());
    let checks = verify(&bugs, &items, &options, &|d, t| {
        seen.lock().expect("lock").push((d, t));
        true
    });
    assert_eq!(checks[0].compiles, Some(true), "{:?}", checks[0]);
    assert_eq!(checks[0].tests_same, Some(true), "{:?}", checks[0]);
    assert!(checks[0].verified());
    assert_eq!(checks[1].compiles, Some(false));
    assert!(
        checks[1].message.contains("line 7: cannot find symbol"),
        "{}",
        checks[1].message
    );
    assert_eq!(
        checks[1].tests_same, None,
        "not tested when it does not compile"
    );
    assert!(!checks[1].verified());
    assert_eq!(checks[2].compiles, None, "{:?}", checks[2]);
    assert!(
        checks[2]
            .message
            .contains("the original does not compile either"),
        "{}",
        checks[2].message
    );
    assert_eq!(checks[2].tests_same, Some(false), "the grep fails on it");
    assert!(
        checks[2].message.contains("tests differ"),
        "{}",
        checks[2].message
    );
    assert!(
        checks[3].message.contains("unknown"),
        "{}",
        checks[3].message
    );
    let seen = seen.into_inner().expect("lock");
    assert_eq!(
        seen.iter().map(|s| s.0).max(),
        Some(6),
        "3 compiled + 3 tested"
    );
    assert!(seen.iter().all(|s| s.1 == 8));
}

#[test]
fn a_missing_jdk_and_a_slow_test_are_reported_not_fatal() {
    let bugs = bugs();
    let items = [Item {
        key: "a",
        bug: 0,
        source: METHOD,
    }];
    let options = Options {
        compiler: Some(CompilerConfig {
            java: PathBuf::from("/nonexistent/java"),
            ..Default::default()
        }),
        tests: Some(TestCommand {
            command: "sleep 5; echo late".into(),
            timeout: Duration::from_millis(300),
        }),
        workers: 1,
    };
    let started = std::time::Instant::now();
    let checks = verify(&bugs, &items, &options, &|_, _| true);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the group was killed"
    );
    assert_eq!(checks[0].compiles, None);
    assert!(
        checks[0]
            .message
            .contains("could not be started (/nonexistent/java)"),
        "{}",
        checks[0].message
    );
    assert!(checks[0]
        .message
        .contains("the original's test run timed out"));
}

#[test]
fn options_with_line_breaks_are_refused() {
    let e = Compiler::start(CompilerConfig {
        classpath: Some("a\tb".into()),
        ..Default::default()
    })
    .expect_err("refused");
    assert!(matches!(e, CompilerError::BadOption(_)), "{e}");
}

/// A bug read as ISO-8859-1 gets its test file in ISO-8859-1 (é is the one byte e9), so a
/// project built in that encoding reads it as its own; javac compiles its UTF-8 copy.
#[test]
fn a_test_command_gets_the_file_in_the_bug_encoding() {
    if !have_java() {
        eprintln!("skipped: no JDK");
        return;
    }
    let file = "package p;\n\n// caf\u{e9}\npublic class Counter {\n    private int limit = 3;\n\n    int over(int x) {\n        return x - limit;\n    }\n}\n";
    let bugs = [Bug {
        key: "Counter-1",
        file_path: "src/p/Counter.java",
        method: METHOD,
        file_source: Some(file),
        encoding: Some("ISO-8859-1"),
    }];
    let items = [Item {
        key: "renamed",
        bug: 0,
        source: "    int over(int y) {\n        return y - limit;\n    }",
    }];
    let options = Options {
        compiler: Some(CompilerConfig::default()),
        tests: Some(TestCommand {
            // the original passes; the item passes only when é is the single byte e9
            command:
                "[ -z \"$NATSTUDY_ITEM\" ] || od -An -tx1 \"$NATSTUDY_SOURCE\" | grep -q ' e9'"
                    .into(),
            timeout: Duration::from_secs(30),
        }),
        workers: 1,
    };
    let checks = verify(&bugs, &items, &options, &|_, _| true);
    assert_eq!(checks[0].compiles, Some(true), "{:?}", checks[0]);
    assert_eq!(checks[0].tests_same, Some(true), "{:?}", checks[0]);
}

/// Once the progress callback says no, no worker starts another bug: the items not reached
/// keep an empty check.
#[test]
fn verifying_stops_before_the_next_bug_when_told_to() {
    let bugs = bugs();
    let items = [
        Item {
            key: "first",
            bug: 0,
            source: METHOD,
        },
        Item {
            key: "second",
            bug: 1,
            source: "    int f(Missing m) {\n        return 2;\n    }",
        },
    ];
    let options = Options {
        compiler: None,
        tests: Some(TestCommand {
            command: "echo pass".into(),
            timeout: Duration::from_secs(30),
        }),
        workers: 1,
    };
    let calls = AtomicU64::new(0);
    let checks = verify(&bugs, &items, &options, &|_, _| {
        calls.fetch_add(1, Ordering::Relaxed);
        false
    });
    assert_eq!(calls.into_inner(), 1, "one item done, then no more");
    assert_eq!(checks[0].tests_same, Some(true), "{:?}", checks[0]);
    assert_eq!(checks[1].tests_same, None, "{:?}", checks[1]);
    // told to go on, the same run reaches both
    let checks = verify(&bugs, &items, &options, &|_, _| true);
    assert!(
        checks.iter().all(|c| c.tests_same == Some(true)),
        "{checks:?}"
    );
}
