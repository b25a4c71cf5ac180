//! From a bug dataset to a study (#40), on SQLite and PostgreSQL: `natstudy import bugs` on the
//! 20 real Defects4J Lang pairs of `shared/reference/defects4j-lang` reproduces `expected.json`
//! (method, source, buggy lines; the 8 skips with their reasons), a second run is a no-op and
//! `--multi-method` takes the multi-method bugs one record per method. Then, on the same bugs:
//! `transform` → `import items` → `verify` (javac, against commons-lang from the distribution)
//! → `export --what benchmark`: every item of a bug whose original compiles compiles, every
//! exported item has buggy lines on the transformed method's lines, and Lang-42's files are
//! written back in ISO-8859-1.

use std::collections::HashMap;
use std::path::Path;

use natstudy_tests::{cli, fresh_db, read_jsonl, reference_dir, Store};

/// The jars the reference files compile against (Debian's libcommons-lang3-java and
/// libcommons-lang-java; `scripts/setup` installs them).
const CLASSPATH: &str = "/usr/share/java/commons-lang3.jar:/usr/share/java/commons-lang.jar";

async fn dataset_to_benchmark(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let url = db.url.clone();
    let dir = tempfile::tempdir().expect("dir");
    let p = |x: &Path| x.display().to_string();
    let reference = reference_dir().join("defects4j-lang");
    let pairs = p(&reference.join("pairs.csv"));
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(reference.join("expected.json")).expect("expected"),
    )
    .expect("json");
    cli(&url, &["study", "create", "d4j"]).await.expect("study");
    let bugs_file = dir.path().join("bugs.jsonl");
    cli(
        &url,
        &[
            "import",
            "bugs",
            "--study",
            "d4j",
            &pairs,
            "--out",
            &p(&bugs_file),
        ],
    )
    .await
    .expect("import bugs");
    let study = natstudy_core::store::studies::id_by_name(&db, "d4j")
        .await
        .expect("id");
    let stored = natstudy_core::store::generation::bugs(&db, study)
        .await
        .expect("bugs");
    let written = read_jsonl(&bugs_file);
    assert_eq!((stored.len(), written.len()), (12, 12));
    let obj = expected.as_object().expect("object");
    for (id, want) in obj {
        let got = stored.iter().find(|b| &b.bug_id == id);
        match want["skip"].as_str() {
            Some(_) => assert!(got.is_none(), "{id} is skipped"),
            None => {
                let b = got.unwrap_or_else(|| panic!("{id} imported"));
                assert_eq!(b.method, want["method"].as_str().expect("m"), "{id}");
                assert_eq!(b.source, want["source"].as_str().expect("s"), "{id}");
                let lines: Vec<u32> =
                    serde_json::from_value(want["buggy_lines"].clone()).expect("lines");
                assert_eq!(b.buggy_lines, lines, "{id}");
                assert!(b.fixed_source.is_some(), "{id}");
                let row = written
                    .iter()
                    .find(|r| r["bug_id"] == id.as_str())
                    .expect("row");
                assert_eq!(row["source"], want["source"], "{id}: bugs.jsonl");
            }
        }
    }
    let lang42 = stored
        .iter()
        .find(|b| b.bug_id == "Lang-42")
        .expect("Lang-42");
    assert_eq!(lang42.encoding.as_deref(), Some("ISO-8859-1"));
    // the skips are in the import's report (the audit log), each with its reason
    let audit = natstudy_core::store::audit::for_study(&db, study, 50)
        .await
        .expect("audit");
    let report = audit
        .iter()
        .find(|a| a.action == "import.bugs")
        .expect("import.bugs in the audit log");
    for (id, want) in obj {
        if let Some(reason) = want["skip"].as_str() {
            assert!(
                report.detail.contains(&format!("{id}: {reason}")),
                "{}",
                report.detail
            );
        }
    }
    // again: nothing changes
    cli(&url, &["import", "bugs", "--study", "d4j", &pairs])
        .await
        .expect("again");
    assert_eq!(
        natstudy_core::store::generation::bugs(&db, study)
            .await
            .expect("bugs")
            .len(),
        12
    );

    // --multi-method: one record per touched method of the "N methods" bugs
    cli(&url, &["study", "create", "multi"])
        .await
        .expect("study");
    cli(
        &url,
        &[
            "import",
            "bugs",
            "--study",
            "multi",
            "--multi-method",
            &pairs,
        ],
    )
    .await
    .expect("multi");
    let multi_id = natstudy_core::store::studies::id_by_name(&db, "multi")
        .await
        .expect("id");
    let multi = natstudy_core::store::generation::bugs(&db, multi_id)
        .await
        .expect("bugs");
    for (id, want) in obj {
        let mine: Vec<_> = multi
            .iter()
            .filter(|b| b.bug_id.starts_with(&format!("{id}#")))
            .collect();
        match want["skip"].as_str() {
            Some(r) if r.ends_with(" methods") => {
                let n: usize = r.split(' ').next().and_then(|x| x.parse().ok()).expect("n");
                assert_eq!(mine.len(), n, "{id}");
            }
            _ => assert!(mine.is_empty(), "{id}"),
        }
    }

    // transform → import items → verify → benchmark
    let generated = dir.path().join("generated.jsonl");
    cli(
        &url,
        &[
            "transform",
            "--bugs",
            &p(&bugs_file),
            "--out",
            &p(&generated),
        ],
    )
    .await
    .expect("transform");
    cli(
        &url,
        &[
            "import",
            "items",
            "--study",
            "d4j",
            &p(&bugs_file),
            &p(&generated),
        ],
    )
    .await
    .expect("items");
    cli(
        &url,
        &["verify", "--study", "d4j", "--classpath", CLASSPATH],
    )
    .await
    .expect("verify");
    let items = read_jsonl(&generated);
    assert!(items.len() > 50, "{} items", items.len());
    let bug_of: HashMap<String, String> = items
        .iter()
        .map(|i| {
            (
                i["id"].as_str().unwrap_or("").to_owned(),
                i["bug_id"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let checks = natstudy_core::store::checks::by_item(&db, study)
        .await
        .expect("checks");
    assert_eq!(checks.len(), items.len());
    let mut compiled_bugs = std::collections::BTreeSet::new();
    for (key, c) in &checks {
        let bug = &bug_of[key.as_str()];
        match c.compiles {
            Some(true) => {
                compiled_bugs.insert(bug.clone());
            }
            Some(false) => panic!("{key} of {bug} does not compile: {}", c.message),
            // the original does not compile against the distribution's jar either
            None => assert!(c.message.contains("original"), "{key}: {}", c.message),
        }
    }
    let with_items: std::collections::BTreeSet<&String> = bug_of.values().collect();
    let not_compiled: Vec<&&String> = with_items
        .iter()
        .filter(|b| !compiled_bugs.contains(**b))
        .collect();
    eprintln!(
        "items of {} bugs; not compiled (the original fails against the jar): {not_compiled:?}",
        with_items.len()
    );
    assert!(
        compiled_bugs.len() + 2 >= with_items.len() && compiled_bugs.len() >= 8,
        "bugs whose items compile: {compiled_bugs:?}"
    );

    let out = dir.path().join("benchmark");
    cli(
        &url,
        &[
            "export",
            "--study",
            "d4j",
            "--what",
            "benchmark",
            "--out",
            &p(&out),
        ],
    )
    .await
    .expect("benchmark");
    let index = read_jsonl(&out.join("index.jsonl"));
    assert_eq!(index.len(), items.len());
    let by_id: HashMap<&str, &serde_json::Value> = items
        .iter()
        .map(|i| (i["id"].as_str().unwrap_or(""), i))
        .collect();
    let mut latin = 0;
    for entry in &index {
        let id = entry["id"].as_str().expect("id");
        let meta: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(
                out.join(entry["dir"].as_str().expect("dir"))
                    .join("meta.json"),
            )
            .expect("meta"),
        )
        .expect("json");
        let bytes =
            std::fs::read(out.join(entry["buggy_file"].as_str().expect("f"))).expect("file");
        let text: String = if meta["encoding"] == "ISO-8859-1" {
            latin += 1;
            assert!(
                std::str::from_utf8(&bytes).is_err(),
                "{id}: written in ISO-8859-1"
            );
            bytes.iter().map(|&b| char::from(b)).collect()
        } else {
            String::from_utf8(bytes).expect("utf-8")
        };
        let file_lines: Vec<&str> = text.lines().collect();
        let source: Vec<&str> = by_id[id]["source"].as_str().expect("src").lines().collect();
        let start = meta["method_first_line"].as_u64().expect("first") as usize;
        assert_eq!(
            &file_lines[start - 1..start - 1 + source.len()],
            &source[..],
            "{id}"
        );
        let in_file: Vec<usize> = meta["buggy_lines"]
            .as_array()
            .expect("lines")
            .iter()
            .filter_map(|v| v.as_u64().map(|l| l as usize))
            .collect();
        assert!(!in_file.is_empty(), "{id}: buggy lines");
        let in_method: Vec<usize> = meta["buggy_lines_in_method"]
            .as_array()
            .expect("lines")
            .iter()
            .filter_map(|v| v.as_u64().map(|l| l as usize))
            .collect();
        assert_eq!(
            in_file,
            in_method.iter().map(|l| l + start - 1).collect::<Vec<_>>(),
            "{id}"
        );
        for l in in_file {
            assert!(l >= start && l < start + source.len(), "{id}: line {l}");
            assert_eq!(file_lines[l - 1], source[l - start], "{id}: line {l}");
        }
    }
    assert!(latin > 0, "Lang-42's items keep ISO-8859-1");
    guard.drop_now(db).await;
}

#[tokio::test]
async fn a_dataset_becomes_a_benchmark_on_sqlite() {
    dataset_to_benchmark(Store::Sqlite).await;
}

#[tokio::test]
async fn a_dataset_becomes_a_benchmark_on_postgres() {
    dataset_to_benchmark(Store::Postgres).await;
}
