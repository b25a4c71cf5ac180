//! The study page imports a dataset (#40) in headless Chromium: a zip of two Defects4J pairs
//! with their `pairs.csv` gives one bug imported and one skipped with its reason; a zip bomb
//! (declared sizes past the bound) and a zip with a `../` entry are refused, and nothing is
//! written.

use std::io::Write;
use std::path::Path;

use natstudy_tests::browser::Browser;
use natstudy_tests::{cli, fresh_db, reference_dir, Role, Store, TestApp};

/// A zip of `entries` (name, bytes), deflated.
fn zip_of(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in entries {
        w.start_file(name.as_str(), opts).expect("entry");
        w.write_all(data).expect("write");
    }
    w.finish().expect("zip").into_inner()
}

/// Every file under `dir`, as (`prefix/relative path`, bytes).
fn tree(dir: &Path, prefix: &str) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .expect("inside")
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((format!("{prefix}/{rel}"), std::fs::read(&p).expect("read")));
            }
        }
    }
    out
}

async fn upload(b: &Browser, zip: &Path) {
    b.client
        .execute(
            "const s = document.querySelector('#upload-kind'); s.value = 'bugs'; \
             s.dispatchEvent(new Event('change', {bubbles: true})); \
             document.querySelector('#upload-files').value = '';",
            vec![],
        )
        .await
        .expect("kind");
    b.choose_file("#upload-files", zip).await.expect("choose");
    b.click("#upload-submit").await.expect("import");
}

/// A server taking uploads of 1 MiB at most, its admin `ada` and a study `name` (created by
/// the command line).
async fn admin_and_study(
    db: &natstudy_core::service::Db,
    name: &str,
) -> (TestApp, natstudy_vocab::ids::StudyId) {
    let app = TestApp::start_with(db.clone(), |c| c.max_upload_bytes = 1 << 20)
        .await
        .expect("server");
    app.add_user("ada", "a-long-password", Role::Admin)
        .await
        .expect("admin");
    cli(&db.url, &["study", "create", name])
        .await
        .expect("study");
    let study = natstudy_core::store::studies::id_by_name(db, name)
        .await
        .expect("id");
    (app, study)
}

async fn bug_count(db: &natstudy_core::service::Db) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM bugs")
        .fetch_one(&db.pool)
        .await
        .expect("count")
}

#[tokio::test]
async fn a_zip_of_checkouts_imports_and_bad_zips_are_refused() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    // 1 MiB uploads: a zip's sources may hold 4 MiB uncompressed
    let (app, study) = admin_and_study(&db, "d4j").await;
    let dir = tempfile::tempdir().expect("dir");
    let reference = reference_dir().join("defects4j-lang");
    let mut entries = vec![(
        "dataset/pairs.csv".to_owned(),
        b"bug_id,project,buggy,fixed\nLang-1,Lang,Lang-1/buggy,Lang-1/fixed\nLang-4,Lang,Lang-4/buggy,Lang-4/fixed\n".to_vec(),
    )];
    for bug in ["Lang-1", "Lang-4"] {
        entries.extend(tree(&reference.join(bug), &format!("dataset/{bug}")));
    }
    let good = dir.path().join("two-pairs.zip");
    std::fs::write(&good, zip_of(&entries)).expect("zip");
    let bomb = dir.path().join("bomb.zip");
    let mut bomb_entries = entries.clone();
    bomb_entries.push((
        "dataset/Lang-1/buggy/Zeros.java".into(),
        vec![b' '; 5 << 20],
    ));
    let bomb_zip = zip_of(&bomb_entries);
    assert!(
        bomb_zip.len() < 512 << 10,
        "{} bytes compressed",
        bomb_zip.len()
    );
    std::fs::write(&bomb, bomb_zip).expect("zip");
    let evil = dir.path().join("evil.zip");
    let mut evil_entries = entries.clone();
    evil_entries.push(("../evil/A.java".into(), b"class A {}".to_vec()));
    std::fs::write(&evil, zip_of(&evil_entries)).expect("zip");

    let b = Browser::start().await.expect("browser");
    b.open_as(
        &app.url(""),
        &format!("/studies/{study}"),
        ("ada", "a-long-password", "ada (admin)"),
    )
    .await
    .expect("study page");

    upload(&b, &bomb).await;
    b.wait_contains("#upload-error", "the zip is refused").await;
    b.wait_contains("#upload-error", "uncompressed").await;
    assert_eq!(bug_count(&db).await, 0, "a bomb writes nothing");
    upload(&b, &evil).await;
    b.wait_contains("#upload-error", "leads outside the archive")
        .await;
    assert_eq!(bug_count(&db).await, 0, "a traversal writes nothing");

    upload(&b, &good).await;
    b.wait_contains("#upload-result", "imported 1 bug: Lang-1")
        .await;
    b.wait_contains("#upload-result", "Lang-4: a change outside any method")
        .await;
    assert_eq!(bug_count(&db).await, 1);
    b.close().await;
    guard.drop_now(db).await;
}

/// Every form that uploads refuses a file over the server's limit in words: its size and the
/// limit in MB and what to do, in the page's own error style (it showed "error deserializing
/// server function results: Invalid format: missing delimiter").
#[tokio::test]
async fn each_upload_form_refuses_a_file_over_the_limit_in_words() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let (app, study) = admin_and_study(&db, "big").await;
    let dir = tempfile::tempdir().expect("dir");
    let big = dir.path().join("transformations.jsonl");
    std::fs::write(&big, vec![b'x'; 3 << 19]).expect("file");
    let model = dir.path().join("big.arpa");
    std::fs::write(&model, vec![b'x'; 3 << 19]).expect("file");
    let b = Browser::start().await.expect("browser");
    b.open_as(
        &app.url(""),
        &format!("/studies/{study}"),
        ("ada", "a-long-password", "ada (admin)"),
    )
    .await
    .expect("study page");
    // the import: items
    b.choose_file("#upload-files", &big).await.expect("choose");
    b.click("#upload-submit").await.expect("import");
    b.wait_contains("#upload-error", "MB and the limit here is")
        .await;
    let words = b.text_of("#upload-error").await;
    // a model file
    b.choose_file("#model-file", &model).await.expect("choose");
    b.click("#model-upload").await.expect("upload");
    b.wait_contains("#model-upload-error", "MB and the limit here is")
        .await;
    let model_words = b.text_of("#model-upload-error").await;
    for (form, text) in [("import", &words), ("model", &model_words)] {
        assert!(
            text.contains("1.6 MB") && text.contains("1.0 MB"),
            "{form}: {text}"
        );
        assert!(
            !text.contains("deserializ") && !text.contains("server function"),
            "{form}: {text}"
        );
    }
    assert_eq!(bug_count(&db).await, 0);
    b.close().await;
    guard.drop_now(db).await;
}
