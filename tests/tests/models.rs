//! Models on a shared server (#38): each study's uploads count against its quota
//! (`--model-quota-mb`; an upload past it is refused and nothing is kept), and a model is
//! deleted by the staff of the study that uploaded it or by an admin — never by another
//! study's staff; a model placed in the folder by hand only by an admin.

use natstudy_tests::{fresh_db, Role, Store, TestApp};
use reqwest::StatusCode;

const PW: &str = "a-long-password";
const ARPA: &str =
    "\\data\\\nngram 1=3\n\n\\1-grams:\n-1.0\t<s>\t0\n-0.5\t</s>\t0\n-0.5\tx\t0\n\n\\end\\\n";

async fn quota_and_owners(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let app = TestApp::start_with(db.clone(), |c| c.model_quota_bytes = 4 << 10)
        .await
        .expect("server");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    let rita = app
        .add_user("rita", PW, Role::Researcher)
        .await
        .expect("rita");
    let sam = app
        .add_user("sam", PW, Role::Researcher)
        .await
        .expect("sam");
    let a = natstudy::store::studies::create_owned(&db, None, Some(rita), "A", "")
        .await
        .expect("A");
    let b = natstudy::store::studies::create_owned(&db, None, Some(sam), "B", "")
        .await
        .expect("B");
    let rita_c = app.signed_in("rita", PW).await.expect("rita");
    let sam_c = app.signed_in("sam", PW).await.expect("sam");
    let ada_c = app.signed_in("ada", PW).await.expect("ada");
    let upload = |c: &reqwest::Client, study, name: &str, bytes: Vec<u8>| {
        app.upload_model(c, study, name, bytes)
    };
    let scoring = |c: &reqwest::Client, study| {
        c.post(app.url("/api/studies/scoring"))
            .form(&[("study", format!("{study}"))])
            .send()
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

    let v: serde_json::Value = scoring(&rita_c, a)
        .await
        .expect("view")
        .json()
        .await
        .expect("json");
    assert_eq!(v["quota_used"], ARPA.len());
    assert_eq!(v["quota"], 4 << 10);
    assert_eq!(v["models"][0]["name"], "a.arpa");
    assert_eq!(v["models"][0]["this_study"], true);
    assert_eq!(v["models"][0]["deletable"], true);
    // another study's staff sees it, may score with it, may not delete it
    let v: serde_json::Value = scoring(&sam_c, b)
        .await
        .expect("view")
        .json()
        .await
        .expect("json");
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
    let v: serde_json::Value = scoring(&rita_c, a)
        .await
        .expect("view")
        .json()
        .await
        .expect("json");
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
