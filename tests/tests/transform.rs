//! The transformation engine on a corpus of Java files written for the tests (`tests/java`):
//! every operator on every method, every application kept; each result must re-parse without
//! error, compile with `javac` (the originals compile) and compute what the original computes
//! (`tests/harness/Harness.java` calls every public static method of both on the same inputs;
//! a planted off-by-one proves it notices). Plus a property test: random valid Java methods
//! never make the engine panic, and whatever it returns re-parses.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use natstudy_engine::transform::{self, syntax, MethodSel, Operator, Request};
use natstudy_tests::cli;

fn corpus() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("java");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("tests/java")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "java"))
        .map(|p| {
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            (name, std::fs::read_to_string(&p).expect("read"))
        })
        .collect();
    files.sort();
    files
}

/// One generated file: where it came from (and which corpus file), and its text.
struct Variant {
    origin: String,
    file: usize,
    source: String,
}

fn all_variants(files: &[(String, String)]) -> (Vec<Variant>, BTreeMap<Operator, usize>) {
    let mut out = Vec::new();
    let mut per_op: BTreeMap<Operator, usize> = BTreeMap::new();
    for (file, (name, src)) in files.iter().enumerate() {
        for m in transform::methods(src) {
            let lines = m.last_line - m.first_line + 1;
            let buggy: Vec<usize> = (1..=lines).collect();
            let req = Request {
                source: src,
                method_only: false,
                method: MethodSel::Lines(m.first_line, m.last_line),
                buggy_lines: &buggy,
                operators: &Operator::ALL,
                all_sites: true,
            };
            let ts = transform::transform(&req, None)
                .unwrap_or_else(|e| panic!("{name}: {}: {e}", m.name));
            for t in ts {
                *per_op.entry(t.operator).or_default() += 1;
                let file_text = t.file_source.expect("file given, file returned");
                let tree = syntax::parse(&file_text).expect("parser");
                assert!(
                    syntax::is_clean(&tree),
                    "{name} {} {}: re-parse has errors:\n{file_text}",
                    m.name,
                    t.operator
                );
                out.push(Variant {
                    origin: format!("{name} {} {} ({})", m.name, t.operator, t.summary),
                    file,
                    source: file_text,
                });
            }
        }
    }
    (out, per_op)
}

/// Compile every source in one `javac` run, each in its own package (`{prefix}{i}`); the
/// origins of the files that fail, with javac's messages, and each source's class name.
fn javac(sources: &[(String, String)], dir: &Path, prefix: &str) -> (Vec<String>, Vec<String>) {
    let mut classes = Vec::new();
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut origin_of: BTreeMap<PathBuf, String> = BTreeMap::new();
    for (i, (origin, src)) in sources.iter().enumerate() {
        let pkg = format!("{prefix}{i}");
        let class = src
            .split("public class ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .expect("a public class");
        let path = dir.join(&pkg).join(format!("{class}.java"));
        std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
        // the package line goes on the first line so javac's line numbers stay the file's
        std::fs::write(&path, format!("package {pkg}; {src}")).expect("write");
        origin_of.insert(path.clone(), origin.clone());
        classes.push(format!("{pkg}.{class}"));
        paths.push(path);
    }
    let list = dir.join("sources.txt");
    let listing: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    std::fs::write(&list, listing.join("\n")).expect("list");
    let out = Command::new("javac")
        .arg("-d")
        .arg(dir.join("classes"))
        .args([
            "-nowarn",
            "-Xlint:none",
            "-Xmaxerrs",
            "100000",
            "-encoding",
            "UTF-8",
        ])
        .arg(format!("@{}", list.display()))
        .output()
        .expect("javac (JDK 17) on PATH; scripts/setup installs it");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut failed: BTreeSet<String> = BTreeSet::new();
    for line in stderr.lines().filter(|l| l.contains(": error:")) {
        let path = PathBuf::from(line.split(':').next().unwrap_or(""));
        let origin = origin_of
            .get(&path)
            .cloned()
            .unwrap_or_else(|| path.display().to_string());
        failed.insert(format!("{origin}: {line}"));
    }
    assert!(
        out.status.success() || !failed.is_empty(),
        "javac failed: {stderr}"
    );
    (failed.into_iter().collect(), classes)
}

#[test]
fn every_operator_on_the_corpus_reparses_compiles_and_computes_the_same() {
    let files = corpus();
    assert!(files.len() >= 4, "the corpus is in tests/java");
    let dir = tempfile::tempdir().expect("tempdir");
    let originals: Vec<(String, String)> = files
        .iter()
        .map(|(n, s)| (format!("original {n}"), s.clone()))
        .collect();
    let (broken, original_classes) = javac(&originals, &dir.path().join("originals"), "o");
    assert!(
        broken.is_empty(),
        "the corpus itself must compile: {broken:#?}"
    );

    let (mut variants, per_op) = all_variants(&files);
    let missing: Vec<&str> = Operator::ALL
        .iter()
        .filter(|o| !per_op.contains_key(o))
        .map(|o| o.name())
        .collect();
    assert!(
        missing.is_empty(),
        "operators never applied on the corpus: {missing:?}"
    );
    // a control the harness must catch: an off-by-one planted in Loops.sumRange
    let loops = files
        .iter()
        .position(|(n, _)| n == "Loops.java")
        .expect("Loops.java");
    let planted = files[loops]
        .1
        .replacen("index < limit", "index <= limit", 1);
    assert_ne!(planted, files[loops].1);
    variants.push(Variant {
        origin: "CONTROL".into(),
        file: loops,
        source: planted,
    });
    let sources: Vec<(String, String)> = variants
        .iter()
        .map(|v| (v.origin.clone(), v.source.clone()))
        .collect();
    let (failed, variant_classes) = javac(&sources, &dir.path().join("variants"), "v");
    assert!(
        failed.is_empty(),
        "{} of {} transformed files (and the control) do not compile:\n{}",
        failed.len(),
        sources.len(),
        failed.join("\n")
    );
    eprintln!(
        "{} transformed files compiled; per operator: {per_op:?}",
        sources.len()
    );

    // Run each transformed class's public static methods against the original's on the same
    // inputs (tests/harness/Harness.java): results and exceptions must agree.
    let harness_src = Path::new(env!("CARGO_MANIFEST_DIR")).join("harness/Harness.java");
    let harness_dir = dir.path().join("harness");
    let st = Command::new("javac")
        .arg("-d")
        .arg(&harness_dir)
        .arg(&harness_src)
        .status()
        .expect("javac");
    assert!(st.success(), "the harness compiles");
    let pairs: Vec<String> = variants
        .iter()
        .zip(&variant_classes)
        .map(|(v, class)| format!("{} {class} {}", original_classes[v.file], v.origin))
        .collect();
    let pairs_file = dir.path().join("pairs.txt");
    std::fs::write(&pairs_file, pairs.join("\n")).expect("pairs");
    let cp = [
        dir.path().join("originals/classes"),
        dir.path().join("variants/classes"),
        harness_dir,
    ]
    .iter()
    .map(|p| p.display().to_string())
    .collect::<Vec<_>>()
    .join(":");
    let out = Command::new("java")
        .args(["-cp", &cp, "Harness"])
        .arg(&pairs_file)
        .output()
        .expect("java");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "harness failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (control, mismatches): (Vec<&str>, Vec<&str>) = stdout
        .lines()
        .filter(|l| l.starts_with("MISMATCH"))
        .partition(|l| l.starts_with("MISMATCH CONTROL"));
    assert!(!control.is_empty(), "the planted off-by-one is caught");
    assert!(
        mismatches.is_empty(),
        "{} behaviour differences:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    let checked: usize = stdout
        .lines()
        .find_map(|l| l.strip_prefix("checked "))
        .and_then(|n| n.trim().parse().ok())
        .expect("a count");
    assert!(checked > 1000, "only {checked} calls compared");
    eprintln!("{checked} calls of original and transformed methods agree");
}

mod random_java {
    //! Random syntactically valid Java methods: statements over a few variables, nested.
    use proptest::prelude::*;

    fn int_expr() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("a".to_owned()),
            Just("b".to_owned()),
            Just("arr.length".to_owned()),
            Just("arr[0]".to_owned()),
            (0..100i32).prop_map(|n| n.to_string()),
            Just("s.length()".to_owned()),
        ];
        leaf.prop_recursive(3, 12, 2, |inner| {
            prop_oneof![
                (
                    inner.clone(),
                    prop::sample::select(vec!["+", "-", "*", "/", "%", "<<"]),
                    inner.clone()
                )
                    .prop_map(|(l, op, r)| format!("{l} {op} {r}")),
                inner.clone().prop_map(|e| format!("({e})")),
                inner.prop_map(|e| format!("-{e}")),
            ]
        })
    }

    fn cond() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            (
                int_expr(),
                prop::sample::select(vec!["<", ">", "<=", ">=", "==", "!="]),
                int_expr()
            )
                .prop_map(|(l, op, r)| format!("{l} {op} {r}")),
            Just("p".to_owned()),
            Just("s.equals(\"x\")".to_owned()),
            Just("s == null".to_owned()),
        ];
        leaf.prop_recursive(2, 6, 2, |inner| {
            prop_oneof![
                (
                    inner.clone(),
                    prop::sample::select(vec!["&&", "||"]),
                    inner.clone()
                )
                    .prop_map(|(l, op, r)| format!("{l} {op} {r}")),
                inner.prop_map(|c| format!("!({c})")),
            ]
        })
    }

    fn simple_stmt() -> impl Strategy<Value = String> {
        prop_oneof![
            int_expr().prop_map(|e| format!("a = {e};")),
            (
                prop::sample::select(vec!["+=", "-=", "*=", "|="]),
                int_expr()
            )
                .prop_map(|(op, e)| format!("b {op} {e};")),
            Just("a++;".to_owned()),
            Just("--b;".to_owned()),
            (0..3usize, int_expr()).prop_map(|(i, e)| format!("int v{i} = {e};")),
            (0..3usize, 0..3usize).prop_map(|(i, j)| format!("int w{i}, u{j};")),
            (cond(), int_expr(), int_expr()).prop_map(|(c, x, y)| format!("a = {c} ? {x} : {y};")),
            int_expr().prop_map(|e| format!("g({e});")),
            Just("b = a++ * 2;".to_owned()),
            Just("continue;".to_owned()),
            Just("break;".to_owned()),
            int_expr().prop_map(|e| format!("return {e};")),
        ]
    }

    fn block(stmts: Vec<String>) -> String {
        format!("{{\n{}\n}}", stmts.join("\n"))
    }

    pub fn statement() -> impl Strategy<Value = String> {
        simple_stmt().prop_recursive(3, 24, 4, |inner| {
            let body = prop::collection::vec(inner, 0..4).prop_map(block);
            prop_oneof![
                (cond(), body.clone()).prop_map(|(c, b)| format!("if ({c}) {b}")),
                (cond(), body.clone(), body.clone())
                    .prop_map(|(c, x, y)| format!("if ({c}) {x} else {y}")),
                (cond(), body.clone(), cond(), body.clone())
                    .prop_map(|(c, x, d, y)| format!("if ({c}) {x} else if ({d}) {y}")),
                (cond(), body.clone()).prop_map(|(c, b)| format!("while ({c}) {b}")),
                (int_expr(), body.clone())
                    .prop_map(|(e, b)| format!("for (int i = 0; i < {e}; i++) {b}")),
                (body.clone(), cond()).prop_map(|(b, c)| format!("do {b} while ({c});")),
                (body.clone(), body.clone()).prop_map(|(x, y)| format!(
                    "switch (a) {{\ncase 1:\ncase 2: g(1);\nbreak;\ncase 3: {x}\ndefault: {y}\n}}"
                )),
                body.prop_map(|b| format!("for (String t : list) {b}")),
            ]
        })
    }

    pub fn method() -> impl Strategy<Value = String> {
        prop::collection::vec(statement(), 1..8).prop_map(|stmts| {
            // indent by nesting so the layout looks like real code
            let mut out = String::from("int f(int a, int b, int[] arr, String s, boolean p, java.util.List<String> list) {\n");
            let mut depth = 1usize;
            for line in stmts.join("\n").lines() {
                let line = line.trim();
                if line.starts_with('}') {
                    depth = depth.saturating_sub(1);
                }
                out.push_str(&"    ".repeat(depth));
                out.push_str(line);
                out.push('\n');
                if line.ends_with('{') {
                    depth += 1;
                }
            }
            out.push_str("}\n");
            out
        })
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 300, failure_persistence: None, ..Default::default() })]

    #[test]
    fn random_methods_never_panic_and_results_reparse(method in random_java::method()) {
        let lines = method.lines().count();
        let buggy: Vec<usize> = (1..=lines).collect();
        let req = Request {
            source: &method,
            method_only: true,
            method: MethodSel::Lines(1, lines),
            buggy_lines: &buggy,
            operators: &Operator::ALL,
            all_sites: true,
        };
        let out = transform::transform(&req, None);
        let ts = out.map_err(|e| proptest::test_runner::TestCaseError::fail(format!("{e}\n{method}")))?;
        for t in ts {
            let wrapped = format!("class W {{\n{}}}\n", t.method_source);
            let tree = syntax::parse(&wrapped).expect("parser");
            proptest::prop_assert!(syntax::is_clean(&tree), "{} broke the parse:\n{}\n--- from ---\n{}", t.operator, t.method_source, method);
        }
    }
}

/// `natstudy transform` turns the reference study's bugs into transformations.jsonl that
/// imports as the items of a new study; a bug the engine cannot read is named by line.
#[tokio::test]
async fn cli_transform_output_imports_as_a_study() {
    let (db, _guard) = natstudy_tests::fresh_db(natstudy_tests::Store::Sqlite)
        .await
        .expect("db");
    let dir = tempfile::tempdir().expect("dir");
    let bugs = natstudy_tests::reference_dir().join("study-small/bugs.jsonl");
    let out = dir.path().join("transformations.jsonl");
    let (b, o) = (bugs.display().to_string(), out.display().to_string());
    cli(
        &db.url,
        &["transform", "--bugs", &b, "--operators", "all", "--out", &o],
    )
    .await
    .expect("transform");
    let text = std::fs::read_to_string(&out).expect("out");
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert!(records.len() > 100, "{} transformations", records.len());
    for r in &records {
        assert!(
            r["touches_buggy"].as_bool().expect("flag"),
            "only buggy-line applications by default"
        );
        let id = r["id"].as_str().expect("id");
        assert!(id.starts_with(r["level"].as_str().expect("level")), "{id}");
    }
    cli(&db.url, &["study", "create", "generated"])
        .await
        .expect("study");
    cli(
        &db.url,
        &["import", "items", "--study", "generated", &b, &o],
    )
    .await
    .expect("import");
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM items")
        .fetch_one(&db.pool)
        .await
        .expect("count");
    assert_eq!(n as usize, records.len());

    let bad = dir.path().join("bad.jsonl");
    let first = std::fs::read_to_string(&bugs)
        .expect("bugs")
        .lines()
        .next()
        .expect("a bug")
        .to_owned();
    let broken = r#"{"bug_id": "X-1", "project": "X", "file": "X.java", "method": "f", "source": "int f( {\n", "buggy_lines": [1]}"#;
    std::fs::write(&bad, format!("{first}\n{broken}\n")).expect("write");
    let err = cli(
        &db.url,
        &[
            "transform",
            "--bugs",
            &bad.display().to_string(),
            "--out",
            &o,
        ],
    )
    .await
    .expect_err("a broken method");
    let msg = format!("{err:#}");
    assert!(msg.contains("bad.jsonl:2: source: bug X-1"), "{msg}");
}

/// Buggy lines follow every move (#40), as an invariant over the corpus: each statement line
/// of each method in turn is the bug's one buggy line; every item generated for it (every
/// operator, applications that touch the buggy line) has non-empty transformed buggy lines,
/// each a line of the transformed method; and where the buggy line's text is still in the
/// transformed method unchanged, a marked line holds it.
#[test]
fn every_item_of_a_bug_with_buggy_lines_has_buggy_lines_in_its_method() {
    let mut items = 0usize;
    for (name, src) in corpus() {
        for m in transform::methods(&src) {
            let method: Vec<&str> =
                src.lines().collect::<Vec<_>>()[m.first_line - 1..m.last_line].to_vec();
            let method_text = method.join("\n") + "\n";
            for (k, text) in method.iter().enumerate() {
                let t = text.trim();
                if t.is_empty() || t == "}" || t == "{" {
                    continue;
                }
                let buggy = [k + 1];
                let req = Request {
                    source: &method_text,
                    method_only: true,
                    method: MethodSel::Lines(1, method.len()),
                    buggy_lines: &buggy,
                    operators: &Operator::ALL,
                    all_sites: false,
                };
                let ts = transform::transform(&req, None)
                    .unwrap_or_else(|e| panic!("{name} {}: {e}", m.name));
                for tr in ts {
                    items += 1;
                    let d = transform::line_data(&method_text, &[k as u32 + 1], &tr.method_source);
                    let out: Vec<&str> = tr.method_source.lines().collect();
                    let at = format!("{name} {} line {} ({t}) {}", m.name, k + 1, tr.operator);
                    assert!(!d.buggy_lines.is_empty(), "{at}: no buggy line");
                    assert!(
                        d.buggy_lines
                            .iter()
                            .all(|&l| l >= 1 && l as usize <= out.len()),
                        "{at}: {:?} outside the method",
                        d.buggy_lines
                    );
                    if out.iter().filter(|l| l.trim() == t).count() == 1
                        && method.iter().filter(|l| l.trim() == t).count() == 1
                    {
                        assert!(
                            d.buggy_lines
                                .iter()
                                .any(|&l| out[l as usize - 1].trim() == t),
                            "{at}: the unchanged buggy line is not marked:\n{}",
                            tr.method_source
                        );
                    }
                }
            }
        }
    }
    assert!(items > 500, "the corpus gives many items ({items})");
}

/// Sites far from every buggy line are refused before the file is rewritten, parsed and diffed
/// (that work, for every site of a long method, made a preview quadratic): on the real Defects4J
/// methods, with their own buggy lines and with each single line as the buggy one, every
/// operator keeps exactly the applications that the whole run (`all_sites`) marks as touching
/// a buggy line, in the same order.
#[test]
fn the_early_refusal_keeps_every_application_that_touches_a_buggy_line() {
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            natstudy_tests::reference_dir().join("defects4j-lang/expected.json"),
        )
        .expect("expected.json"),
    )
    .expect("json");
    let bugs = expected.as_object().expect("bugs");
    let mut checked = 0;
    for (id, bug) in bugs {
        let (Some(source), Some(lines)) = (bug["source"].as_str(), bug["buggy_lines"].as_array())
        else {
            continue;
        };
        let n = source.lines().count();
        let own: Vec<usize> = lines
            .iter()
            .filter_map(|l| l.as_u64())
            .map(|l| l as usize)
            .collect();
        let mut choices = vec![own];
        choices.extend((1..=n).step_by(3).map(|l| vec![l]));
        let run = |buggy: &[usize], all_sites: bool| {
            let req = Request {
                source,
                method_only: true,
                method: MethodSel::Lines(1, n),
                buggy_lines: buggy,
                operators: &Operator::ALL,
                all_sites,
            };
            transform::transform(&req, None).expect("transform")
        };
        for buggy in &choices {
            let kept: Vec<(Operator, String)> = run(buggy, false)
                .into_iter()
                .map(|t| (t.operator, t.method_source))
                .collect();
            let touching: Vec<(Operator, String)> = run(buggy, true)
                .into_iter()
                .filter(|t| t.touches_buggy)
                .map(|t| (t.operator, t.method_source))
                .collect();
            assert_eq!(kept, touching, "{id}, buggy lines {buggy:?}");
            checked += 1;
        }
    }
    assert!(checked > 20, "{checked}");
}
