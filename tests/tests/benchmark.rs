//! From labels to a benchmark (#16), on SQLite and PostgreSQL: the engine's transformations of
//! the reference study and of the Java corpus (`tests/java`, each method a bug with a
//! developer fix), imported, verified with javac (every item compiles; a planted broken one is
//! caught with its line), exported as a benchmark whose every buggy line number is checked
//! against the transformed file's text, and whose fixed files differ from the buggy ones
//! exactly as the fix differs from the bug.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use natstudy_engine::transform;
use natstudy_tests::{cli, fresh_db, read_jsonl, Store};

/// The fix every corpus bug gets: a guard as the method's first statement.
const GUARD: &str = "        if (false) { throw new IllegalStateException(\"fixed\"); }";

fn write_jsonl(f: &Path, rows: &[serde_json::Value]) {
    let text: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
    std::fs::write(f, text.join("\n") + "\n").expect("write");
}

/// Every method of the corpus as a bug whose lines are all buggy, fixed by [`GUARD`].
fn corpus_bugs() -> Vec<serde_json::Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("java");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/java")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "java"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for path in names {
        let file = std::fs::read_to_string(&path).expect("read");
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let lines: Vec<&str> = file.lines().collect();
        for (n, m) in transform::methods(&file).into_iter().enumerate() {
            let method: Vec<&str> = lines[m.first_line - 1..m.last_line].to_vec();
            // only methods whose header ends their first line take the guard after it
            if !method[0].trim_end().ends_with('{') || method.len() < 3 {
                continue;
            }
            let mut fixed = method.clone();
            fixed.insert(1, GUARD);
            out.push(serde_json::json!({
                "bug_id": format!("{}-{}-{n}", name.trim_end_matches(".java"), m.name),
                "project": "corpus",
                "file": format!("src/{name}"),
                "method": m.name,
                "source": method.join("\n") + "\n",
                "file_source": file,
                "fixed_source": fixed.join("\n") + "\n",
                "buggy_lines": (1..=method.len()).collect::<Vec<_>>(),
            }));
        }
    }
    out
}

/// `natstudy export --what benchmark` of study `bench` into `out`, with `extra` flags.
async fn export_benchmark(url: &str, out: &Path, extra: &[&str]) -> anyhow::Result<()> {
    let out = out.display().to_string();
    let mut args = vec![
        "export",
        "--study",
        "bench",
        "--what",
        "benchmark",
        "--out",
        &out,
    ];
    args.extend_from_slice(extra);
    cli(url, &args).await
}

async fn benchmark_flow(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let url = db.url.clone();
    let dir = tempfile::tempdir().expect("dir");
    let p = |x: &Path| x.display().to_string();
    let mut bugs = read_jsonl(
        &natstudy_tests::reference_dir()
            .join("study-small")
            .join("bugs.jsonl"),
    );
    let corpus = corpus_bugs();
    assert!(corpus.len() >= 20, "{} corpus methods", corpus.len());
    bugs.extend(corpus.iter().cloned());
    let bugs_file = dir.path().join("bugs.jsonl");
    write_jsonl(&bugs_file, &bugs);
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
    cli(&url, &["study", "create", "bench"])
        .await
        .expect("study");
    cli(
        &url,
        &[
            "import",
            "items",
            "--study",
            "bench",
            &p(&bugs_file),
            &p(&generated),
        ],
    )
    .await
    .expect("import");
    // a planted item that does not compile: a name nobody declared, on the method's line 2
    let victim = &corpus[0];
    let mut lines: Vec<String> = victim["source"]
        .as_str()
        .expect("src")
        .lines()
        .map(str::to_owned)
        .collect();
    lines.insert(1, "        undeclaredName();".to_owned());
    let planted = dir.path().join("planted.jsonl");
    write_jsonl(
        &planted,
        &[serde_json::json!({
            "id": "naming_9000",
            "bug_id": victim["bug_id"],
            "operator": "RenameVariable-1",
            "level": "naming",
            "source": lines.join("\n") + "\n",
        })],
    );
    cli(
        &url,
        &[
            "import",
            "items",
            "--study",
            "bench",
            &p(&bugs_file),
            &p(&planted),
        ],
    )
    .await
    .expect("planted");

    // verify: every generated item compiles in its file; the planted one is caught
    cli(&url, &["verify", "--study", "bench"])
        .await
        .expect("verify");
    let study = natstudy_core::store::studies::id_by_name(&db, "bench")
        .await
        .expect("id");
    let checks = natstudy_core::store::checks::by_item(&db, study)
        .await
        .expect("checks");
    let generated_rows = read_jsonl(&generated);
    assert!(generated_rows.len() > 300, "{} items", generated_rows.len());
    assert_eq!(checks.len(), generated_rows.len() + 1, "every item checked");
    let broken: Vec<_> = checks
        .iter()
        .filter(|(k, c)| *k != "naming_9000" && c.compiles != Some(true))
        .collect();
    assert!(broken.is_empty(), "items that do not compile: {broken:?}");
    let file_text = victim["file_source"].as_str().expect("file");
    let first = transform::find_lines(file_text, victim["source"].as_str().expect("src"))
        .expect("method in file")
        .0;
    let c = &checks["naming_9000"];
    assert_eq!(c.compiles, Some(false));
    assert!(
        c.message
            .contains(&format!("line {}: cannot find symbol", first + 1)),
        "{}",
        c.message
    );

    // the benchmark: every folder's files, buggy lines and fixed side
    let out = dir.path().join("benchmark");
    export_benchmark(&url, &out, &[]).await.expect("benchmark");
    let items: HashMap<String, serde_json::Value> = generated_rows
        .iter()
        .map(|v| (v["id"].as_str().unwrap_or("").to_owned(), v.clone()))
        .collect();
    let bug_by_id: HashMap<&str, &serde_json::Value> = bugs
        .iter()
        .map(|b| (b["bug_id"].as_str().unwrap_or(""), b))
        .collect();
    let index = read_jsonl(&out.join("index.jsonl"));
    assert_eq!(index.len(), checks.len());
    let (mut with_fix, mut fix_known) = (0, 0);
    for entry in &index {
        let id = entry["id"].as_str().expect("id");
        let folder = out.join(entry["dir"].as_str().expect("dir"));
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(folder.join("meta.json")).expect("meta"))
                .expect("json");
        let buggy = std::fs::read_to_string(out.join(entry["buggy_file"].as_str().expect("f")))
            .expect("buggy file");
        let file_lines: Vec<&str> = buggy.lines().collect();
        let Some(item) = items.get(id) else {
            assert_eq!(id, "naming_9000");
            assert_eq!(meta["verification"]["compiles"], false);
            continue;
        };
        assert_eq!(meta["verification"]["compiles"], true, "{id}");
        assert_eq!(meta["whole_file"], true, "{id}");
        let source: Vec<&str> = item["source"].as_str().expect("src").lines().collect();
        let start = meta["method_first_line"].as_u64().expect("first") as usize;
        assert_eq!(
            &file_lines[start - 1..start - 1 + source.len()],
            &source[..],
            "{id}: the transformed method sits at its first line"
        );
        let in_file = meta["buggy_lines"].as_array().expect("lines");
        assert!(!in_file.is_empty(), "{id}");
        assert_eq!(entry["buggy_lines"], meta["buggy_lines"]);
        for l in in_file.iter().filter_map(|v| v.as_u64()) {
            let l = l as usize;
            assert!(l >= start && l < start + source.len(), "{id}: line {l}");
            assert_eq!(file_lines[l - 1], source[l - start], "{id}: line {l}");
        }
        // the fixed side: where the fix followed, it differs from the buggy file by the guard
        let bug = bug_by_id[item["bug_id"].as_str().expect("bug")];
        if bug.get("fixed_source").is_some() {
            fix_known += 1;
            if meta["fixed"] == true {
                with_fix += 1;
                let fixed = std::fs::read_to_string(
                    out.join(entry["fixed_file"].as_str().expect("fixed file")),
                )
                .expect("fixed");
                let without: Vec<&str> = fixed.lines().filter(|l| *l != GUARD).collect();
                assert_eq!(
                    without, file_lines,
                    "{id}: the fix is the guard, nothing else"
                );
                assert_eq!(fixed.lines().count(), file_lines.len() + 1, "{id}");
            }
        }
    }
    eprintln!("the fix followed {with_fix} of {fix_known} transformations of fixed bugs");
    assert!(fix_known > 100, "{fix_known}");
    assert!(
        with_fix * 2 > fix_known,
        "the fix follows most transformations: {with_fix} of {fix_known}"
    );

    // only verified items: the planted one stays out of the export and of a batch
    let verified = dir.path().join("verified");
    export_benchmark(&url, &verified, &["--verified"])
        .await
        .expect("verified benchmark");
    let ids: HashSet<String> = read_jsonl(&verified.join("index.jsonl"))
        .iter()
        .map(|e| e["id"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(ids.len(), generated_rows.len());
    assert!(!ids.contains("naming_9000"));
    let mut request = natstudy_core::service::batches::BatchRequest::new("v", "dynamic");
    request.filter.verified_only = true;
    let info = natstudy_core::service::batches::create(&db, study, None, request)
        .await
        .expect("batch");
    assert_eq!(info.items, generated_rows.len());
    // nobody rated anything yet: every item is unrated, none natural; a used folder is refused
    let natural = dir.path().join("natural");
    export_benchmark(&url, &natural, &["--category", "natural"])
        .await
        .expect("natural");
    assert_eq!(read_jsonl(&natural.join("index.jsonl")).len(), 0);
    let again = export_benchmark(&url, &out, &[])
        .await
        .expect_err("not empty");
    assert!(
        again.to_string().contains("not an empty directory"),
        "{again}"
    );
    guard.drop_now(db).await;
}

#[tokio::test]
async fn verified_benchmark_sqlite() {
    benchmark_flow(Store::Sqlite).await;
}

#[tokio::test]
async fn verified_benchmark_postgres() {
    benchmark_flow(Store::Postgres).await;
}
