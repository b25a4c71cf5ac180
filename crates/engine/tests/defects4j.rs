//! `shared/reference/defects4j-lang`: 20 real Defects4J Lang bugs, read from their buggy and
//! fixed trees as `natstudy import bugs` reads them, against `expected.json` (computed
//! independently with tree-sitter-java and `git diff --no-index -U0`).

use std::path::PathBuf;

use natstudy_engine::bugs::{self, pairs, sources::Disk, Options};

fn reference() -> PathBuf {
    match std::env::var("NATSTUDY_SHARED") {
        Ok(d) => PathBuf::from(d).join("reference"),
        Err(_) => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/reference"
        )),
    }
    .join("defects4j-lang")
}

/// The reference's folder, its pairs and `expected.json`.
fn load() -> (PathBuf, Vec<pairs::Pair>, serde_json::Value) {
    let dir = reference();
    let csv = std::fs::read_to_string(dir.join("pairs.csv")).expect("pairs.csv");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).expect("json"))
            .expect("expected.json");
    let pairs = pairs::parse(&csv, "pairs.csv").expect("pairs");
    (dir, pairs, expected)
}

#[test]
fn the_reference_bugs_are_read_as_expected() {
    let (dir, pairs, expected) = load();
    let files = Disk { base: dir.clone() };
    let got = bugs::import(&files, &pairs, "pairs.csv", Options::default(), &|| {}).expect("reads");
    let mut checked = 0;
    for p in &pairs {
        let want = &expected[&p.bug_id];
        if let Some(reason) = want["skip"].as_str() {
            let skipped = got.skipped.iter().find(|(id, _)| id == &p.bug_id);
            assert_eq!(skipped.map(|s| s.1.as_str()), Some(reason), "{}", p.bug_id);
        } else {
            let b = got
                .bugs
                .iter()
                .find(|b| b.bug_id == p.bug_id)
                .unwrap_or_else(|| panic!("{} not imported: {:?}", p.bug_id, got.skipped));
            assert_eq!(b.file, want["file"].as_str().expect("file"), "{}", p.bug_id);
            assert_eq!(
                b.method,
                want["method"].as_str().expect("method"),
                "{}",
                p.bug_id
            );
            assert_eq!(
                b.source,
                want["source"].as_str().expect("source"),
                "{}",
                p.bug_id
            );
            let lines: Vec<u32> =
                serde_json::from_value(want["buggy_lines"].clone()).expect("lines");
            assert_eq!(b.buggy_lines, lines, "{}", p.bug_id);
            let file = b.file_source.as_deref().expect("file source");
            let first = want["first_line"].as_u64().expect("first") as usize;
            assert_eq!(
                file.lines().nth(first - 1),
                b.source.lines().next(),
                "{}: first line",
                p.bug_id
            );
            assert!(b.fixed_source.is_some(), "{}: the fixed method", p.bug_id);
        }
        checked += 1;
    }
    assert_eq!(checked, 20);
    assert_eq!((got.bugs.len(), got.skipped.len()), (12, 8));
    let latin: Vec<&str> = got
        .bugs
        .iter()
        .filter(|b| b.encoding.as_deref() == Some("ISO-8859-1"))
        .map(|b| b.bug_id.as_str())
        .collect();
    assert_eq!(latin, vec!["Lang-42"]);
}

/// With `--multi-method`, a bug whose fix touches several methods gives one record per method
/// (`Lang-7#createNumber`; a second overload `Lang-20#join@3368`), each with the buggy lines
/// of its method; a change outside any method still skips the bug.
#[test]
fn multi_method_bugs_give_one_record_per_method() {
    let (dir, pairs, expected) = load();
    let options = Options {
        multi_method: true,
        ..Options::default()
    };
    let got =
        bugs::import(&Disk { base: dir }, &pairs, "pairs.csv", options, &|| {}).expect("reads");
    for p in &pairs {
        let skip = expected[&p.bug_id]["skip"].as_str();
        let mine: Vec<_> = got
            .bugs
            .iter()
            .filter(|b| b.bug_id == p.bug_id || b.bug_id.starts_with(&format!("{}#", p.bug_id)))
            .collect();
        match skip {
            Some(reason) if reason.ends_with(" methods") => {
                let n: usize = reason
                    .split(' ')
                    .next()
                    .and_then(|x| x.parse().ok())
                    .expect("n");
                assert_eq!(mine.len(), n, "{}", p.bug_id);
                for b in &mine {
                    // an overload's second record says where it starts: `Lang-20#join@3368`
                    let base = format!("{}#{}", p.bug_id, b.method);
                    assert!(
                        b.bug_id == base || b.bug_id.starts_with(&format!("{base}@")),
                        "{}",
                        b.bug_id
                    );
                    assert!(!b.buggy_lines.is_empty());
                    let lines = b.source.lines().count() as u32;
                    assert!(b.buggy_lines.iter().all(|l| (1..=lines).contains(l)));
                }
            }
            Some(reason) => {
                assert!(mine.is_empty(), "{}", p.bug_id);
                assert!(got.skipped.contains(&(p.bug_id.clone(), reason.to_owned())));
            }
            None => assert_eq!(mine.len(), 1, "{}", p.bug_id),
        }
    }
}
