//! Models on a shared server (#38): each study's uploads count against its quota
//! (`--model-quota-mb`; an upload past it is refused and nothing is kept), and a model is
//! deleted by the staff of the study that uploaded it or by an admin — never by another
//! study's staff; a model placed in the folder by hand only by an admin.

use natstudy_tests::{fresh_db, Role, Store, TestApp};
use natstudy_vocab::ids::StudyId;
use reqwest::StatusCode;

const PW: &str = "a-long-password";
const ARPA: &str =
    "\\data\\\nngram 1=3\n\n\\1-grams:\n-1.0\t<s>\t0\n-0.5\t</s>\t0\n-0.5\tx\t0\n\n\\end\\\n";

/// Researchers rita and sam, each the owner of a study (A, B), and their signed-in clients.
async fn two_studies(
    app: &TestApp,
    db: &natstudy_core::service::Db,
) -> (StudyId, StudyId, reqwest::Client, reqwest::Client) {
    let rita = app
        .add_user("rita", PW, Role::Researcher)
        .await
        .expect("rita");
    let sam = app
        .add_user("sam", PW, Role::Researcher)
        .await
        .expect("sam");
    let a = natstudy_core::store::studies::create_owned(db, None, Some(rita), "A", "")
        .await
        .expect("A");
    let b = natstudy_core::store::studies::create_owned(db, None, Some(sam), "B", "")
        .await
        .expect("B");
    let rita_c = app.signed_in("rita", PW).await.expect("rita");
    let sam_c = app.signed_in("sam", PW).await.expect("sam");
    (a, b, rita_c, sam_c)
}

async fn quota_and_owners(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let app = TestApp::start_with(db.clone(), |c| c.model_quota_bytes = 4 << 10)
        .await
        .expect("server");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    let (a, b, rita_c, sam_c) = two_studies(&app, &db).await;
    let ada_c = app.signed_in("ada", PW).await.expect("ada");
    let upload = |c: &reqwest::Client, study, name: &str, bytes: Vec<u8>| {
        app.upload_model(c, study, name, bytes)
    };
    let delete = |c: &reqwest::Client, study, name: &str| {
        c.post(app.url("/api/studies/model-delete"))
            .form(&[("study", format!("{study}")), ("name", name.to_owned())])
            .send()
    };

    let r = upload(&rita_c, a, "a.arpa", ARPA.as_bytes().to_vec())
        .await
        .expect("upload");
    assert!(r.status().is_redirection(), "{}", r.status());
    // past the quota: refused, nothing kept
    let mut big = ARPA.as_bytes().to_vec();
    big.extend(vec![b'\n'; 4 << 10]);
    let r = upload(&rita_c, a, "big.arpa", big).await.expect("upload");
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(r.text().await.expect("text").contains("quota"));
    assert!(!app.models_dir.join("big.arpa").exists());

    let v = app.scoring_view(&rita_c, a).await.expect("view");
    assert_eq!(v["quota_used"], ARPA.len());
    assert_eq!(v["quota"], 4 << 10);
    assert_eq!(v["models"][0]["name"], "a.arpa");
    assert_eq!(v["models"][0]["this_study"], true);
    assert_eq!(v["models"][0]["deletable"], true);
    // another study's staff sees it, may score with it, may not delete it
    let v = app.scoring_view(&sam_c, b).await.expect("view");
    assert_eq!(v["models"][0]["deletable"], false);
    assert_eq!(v["quota_used"], 0);
    let r = delete(&sam_c, b, "a.arpa").await.expect("delete");
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = delete(&sam_c, a, "a.arpa").await.expect("delete");
    assert_eq!(r.status(), StatusCode::FORBIDDEN, "not a member of A");
    assert!(app.models_dir.join("a.arpa").is_file());
    // the owner's staff deletes it: the file, its row and the quota it used go
    let r = delete(&rita_c, a, "a.arpa").await.expect("delete");
    assert!(r.status().is_success(), "{}", r.status());
    assert!(!app.models_dir.join("a.arpa").exists());
    let v = app.scoring_view(&rita_c, a).await.expect("view");
    assert_eq!(v["quota_used"], 0);
    assert_eq!(v["models"].as_array().map(Vec::len), Some(0));
    // a model put in the folder by hand: only an admin deletes it
    std::fs::write(app.models_dir.join("shared.arpa"), ARPA).expect("write");
    let r = delete(&rita_c, a, "shared.arpa").await.expect("delete");
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = delete(&ada_c, a, "shared.arpa").await.expect("delete");
    assert!(r.status().is_success(), "{}", r.status());
    assert!(!app.models_dir.join("shared.arpa").exists());
    let r = delete(&ada_c, a, "../etc/passwd").await.expect("delete");
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    guard.drop_now(db).await;
}

natstudy_tests::on_both_stores!(quota_and_owners => models_keep_to_their_study_quota_and_owners_sqlite, models_keep_to_their_study_quota_and_owners_postgres);

/// The reference llama's folder as a browser's folder picker sends it (`root/file`), with the
/// files a downloaded folder also holds that a model does not need.
fn llama_folder(root: &str) -> Vec<(String, Vec<u8>)> {
    let dir = natstudy_tests::reference_dir().join("nlm/models/llama");
    let mut files: Vec<(String, Vec<u8>)> = [
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    .iter()
    .map(|f| {
        (
            format!("{root}/{f}"),
            std::fs::read(dir.join(f)).expect("reference file"),
        )
    })
    .collect();
    files.push((format!("{root}/README.md"), b"# a model card".to_vec()));
    files.push((format!("{root}/.git/config"), b"[core]".to_vec()));
    files.push((
        format!("{root}/onnx/model.safetensors"),
        b"elsewhere".to_vec(),
    ));
    files
}

/// Nothing of an upload is left in the models directory but the models themselves (no hidden
/// part files or folders).
fn no_leftovers(dir: &std::path::Path) {
    let hidden: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    assert!(hidden.is_empty(), "left behind: {hidden:?}");
}

/// A Hugging Face model folder uploads through the study page (#41): its model files are kept
/// (a README, `.git` or a subfolder are not), it is checked as a model before it gets its name
/// (a missing tokenizer, a cut weight file, an unknown family: refused, nothing kept), it
/// counts against the study's quota, never replaces a model, and only the study's staff
/// upload it and delete it.
async fn folders(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let app = TestApp::start_with(db.clone(), |c| c.model_quota_bytes = 2 << 20)
        .await
        .expect("server");
    let (a, _, rita_c, sam_c) = two_studies(&app, &db).await;
    let upload = |c: &reqwest::Client, name: &str, files| app.upload_folder(c, a, name, files);
    let refused = |files: Vec<(String, Vec<u8>)>, status: StatusCode, says: &'static str| {
        let r = upload(&rita_c, "", files);
        async move {
            let r = r.await.expect("upload");
            assert_eq!(r.status(), status, "{says}");
            let text = r.text().await.expect("text");
            assert!(text.contains(says), "{says}: {text}");
        }
    };
    let without = |gone: &str| -> Vec<(String, Vec<u8>)> {
        llama_folder("tiny")
            .into_iter()
            .filter(|(p, _)| !p.ends_with(gone))
            .collect()
    };
    let with = |file: &str, bytes: &[u8]| -> Vec<(String, Vec<u8>)> {
        let mut files = without(file);
        files.push((format!("tiny/{file}"), bytes.to_vec()));
        files
    };

    // not a model natstudy runs: refused with the reason, nothing kept
    refused(
        without("/tokenizer.json"),
        StatusCode::UNPROCESSABLE_ENTITY,
        "tokenizer.json",
    )
    .await;
    let weights =
        std::fs::read(natstudy_tests::reference_dir().join("nlm/models/llama/model.safetensors"))
            .expect("weights");
    refused(
        with("model.safetensors", &weights[..weights.len() / 2]),
        StatusCode::UNPROCESSABLE_ENTITY,
        "tiny/model.safetensors",
    )
    .await;
    refused(
        with("config.json", br#"{"model_type": "bert"}"#),
        StatusCode::UNPROCESSABLE_ENTITY,
        "config.json",
    )
    .await;
    refused(
        vec![("README.md".into(), b"# only a card".to_vec())],
        StatusCode::UNPROCESSABLE_ENTITY,
        "name the model folder",
    )
    .await;
    refused(
        llama_folder("x.gguf"),
        StatusCode::UNPROCESSABLE_ENTITY,
        "model folder name",
    )
    .await;
    assert!(!app.models_dir.join("tiny").exists());
    no_leftovers(&app.models_dir);
    // another study's staff may not upload into this study
    let r = app
        .upload_folder(&sam_c, a, "", llama_folder("tiny"))
        .await
        .expect("upload");
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(!app.models_dir.join("tiny").exists());

    // the folder: its model files, named after the picked folder
    let r = upload(&rita_c, "", llama_folder("tiny"))
        .await
        .expect("upload");
    assert!(r.status().is_redirection(), "{}", r.status());
    let tiny = app.models_dir.join("tiny");
    let mut kept: Vec<String> = std::fs::read_dir(&tiny)
        .expect("the folder")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    kept.sort();
    assert_eq!(
        kept,
        [
            "config.json",
            "model.safetensors",
            "tokenizer.json",
            "tokenizer_config.json"
        ]
    );
    let stored: u64 = llama_folder("tiny")
        .iter()
        .take(4)
        .map(|(_, b)| b.len() as u64)
        .sum();
    let v = app.scoring_view(&rita_c, a).await.expect("view");
    assert_eq!(v["models"][0]["name"], "tiny");
    assert_eq!(v["models"][0]["neural"], true);
    assert_eq!(v["models"][0]["this_study"], true);
    assert_eq!(v["quota_used"], stored);
    // the same name again: refused, the model stays
    refused(llama_folder("tiny"), StatusCode::CONFLICT, "exists already").await;
    // a second copy under another name: past the quota, nothing kept
    let r = upload(&rita_c, "tiny-2", llama_folder("tiny"))
        .await
        .expect("upload");
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(!app.models_dir.join("tiny-2").exists());
    no_leftovers(&app.models_dir);
    // the study's staff delete it: the folder and the quota it used go
    let r = rita_c
        .post(app.url("/api/studies/model-delete"))
        .form(&[("study", format!("{a}")), ("name", "tiny".to_owned())])
        .send()
        .await
        .expect("delete");
    assert!(r.status().is_success(), "{}", r.status());
    assert!(!tiny.exists());
    guard.drop_now(db).await;
}

natstudy_tests::on_both_stores!(folders => model_folders_upload_whole_or_not_at_all_sqlite, model_folders_upload_whole_or_not_at_all_postgres);

/// Six uploads of 7 MiB at once against a 20 MiB quota: each reserves its room in the
/// database as its bytes arrive, so at most two are kept (they were all kept when the quota
/// was read once before each upload), the others are refused with 413 and leave nothing; no
/// reservation outlives its upload.
async fn parallel_uploads_keep_to_the_quota(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let quota: u64 = 20 << 20;
    let app = TestApp::start_with(db.clone(), |c| c.model_quota_bytes = quota)
        .await
        .expect("server");
    let (a, _, rita_c, _) = two_studies(&app, &db).await;
    let mut big = ARPA.as_bytes().to_vec();
    big.resize(7 << 20, b'\n');
    let uploads = (0..6).map(|i| app.upload_model(&rita_c, a, &format!("m{i}.arpa"), big.clone()));
    let answers = futures_util::future::join_all(uploads).await;
    let mut kept = 0u64;
    for (i, r) in answers.into_iter().enumerate() {
        let status = r.expect("answered").status();
        let file = app.models_dir.join(format!("m{i}.arpa"));
        if status.is_redirection() {
            kept += 1;
            assert!(file.is_file(), "m{i}");
        } else {
            assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "m{i}");
            assert!(!file.exists(), "m{i}");
        }
    }
    assert_eq!(kept, 2, "of 6 kept");
    let v = app.scoring_view(&rita_c, a).await.expect("view");
    assert_eq!(v["quota_used"], kept * (7 << 20));
    assert!(v["quota_used"].as_u64().is_some_and(|u| u <= quota));
    let reservations: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM models WHERE name LIKE '.upload-%'")
            .fetch_one(&db.pool)
            .await
            .expect("reservations");
    assert_eq!(reservations, 0);
    guard.drop_now(db).await;
}

natstudy_tests::on_both_stores!(parallel_uploads_keep_to_the_quota => parallel_uploads_keep_to_the_quota_sqlite, parallel_uploads_keep_to_the_quota_postgres);
