//! Real HTTP against a running server, on SQLite and on PostgreSQL: sign-in, sessions shared
//! by several instances, the role matrix, CSRF refusal.

use natstudy_tests::{fresh_db, on_both_stores, Role, Store, TestApp};
use reqwest::StatusCode;

const PW: &str = "a-long-password";
const ONE_BUG: &str = r#"{"bug_id": "B-1", "project": "P", "file": "A.java", "method": "m", "source": "int m(int count) {\n  return count;\n}\n", "buggy_lines": [2]}"#;
const ONE_ITEM: &str = r#"{"id": "naming_1", "bug_id": "B-1", "operator": "RenameVariable-1", "level": "naming", "source": "int m(int c) {\n  return c;\n}\n", "summary": "renames `count` to `c`"}"#;

async fn app_with_users(store: Store) -> (TestApp, natstudy_tests::DbGuard) {
    let (db, guard) = fresh_db(store).await.expect("database");
    let app = TestApp::start(db).await.expect("server");
    for (name, role) in [
        ("ada", Role::Admin),
        ("rita", Role::Researcher),
        ("ann", Role::Annotator),
    ] {
        app.add_user(name, PW, role).await.expect("user");
    }
    (app, guard)
}

/// A server will not serve a site built from other sources than itself (a stale binary beside
/// a new site, or the reverse): the pages would fail to hydrate part-way. Each page names the
/// build it was rendered by, for the wasm to compare.
#[tokio::test]
async fn a_site_from_another_build_is_refused_at_start() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let site = tempfile::tempdir().expect("dir");
    let pkg = site.path().join("pkg");
    std::fs::create_dir_all(&pkg).expect("pkg");
    // another build's id: this build's with its last digit changed
    let mut other = app::BUILD_ID.to_owned();
    let last = if other.ends_with('0') { "1" } else { "0" };
    other.replace_range(other.len() - 1.., last);
    std::fs::write(pkg.join("natstudy.js"), "export default 1").expect("js");
    std::fs::write(
        pkg.join("natstudy_bg.wasm"),
        format!("\0asm\u{1}\0\0\0{other}\0"),
    )
    .expect("wasm");
    let mut config = natstudy::web::WebConfig::new("127.0.0.1:0".parse().expect("addr"));
    config.site_root = site.path().to_owned();
    config.models_dir = site.path().join("models");
    let err = natstudy::web::serve(db.clone(), config, |_| panic!("served a stale site"))
        .await
        .expect_err("a stale site is refused");
    let message = format!("{err:#}");
    assert!(
        message.contains("natstudy_bg.wasm")
            && message.contains(&other)
            && message.contains(app::BUILD_ID)
            && message.contains("scripts/build-site"),
        "{message}"
    );
    // the site built beside this server is served (else the harness's server would not start),
    // and a page names the build
    let app = TestApp::start(db.clone()).await.expect("server");
    let home = page_text(&app, "/").await;
    assert!(
        home.contains(&format!(
            "<meta name=\"natstudy-build\" content=\"{}\"",
            app::BUILD_ID
        )),
        "{home}"
    );
    drop(app);
    guard.drop_now(db).await;
}

/// Joins a study through the invite `token` as `c` (the session becomes the participant's).
async fn join_by_invite(app: &TestApp, c: &reqwest::Client, token: &str) {
    c.post(app.url("/api/join"))
        .form(&[("token", token)])
        .send()
        .await
        .expect("join");
}

/// A page's HTML as a visitor gets it.
async fn page_text(app: &TestApp, path: &str) -> String {
    let r = app.client().get(app.url(path)).send().await.expect("page");
    r.text().await.expect("html")
}

async fn whoami(app: &TestApp, c: &reqwest::Client) -> serde_json::Value {
    let r = c.post(app.url("/api/whoami")).send().await.expect("whoami");
    assert_eq!(r.status(), StatusCode::OK);
    r.json().await.expect("json")
}

fn session_cookie(r: &reqwest::Response) -> Option<String> {
    r.headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("natstudy.sid="))
        .map(str::to_owned)
}

async fn sign_in_and_out(store: Store) {
    let (app, guard) = app_with_users(store).await;
    let c = app.client();
    // pages render on the server
    let page = c.get(app.url("/login")).send().await.expect("login page");
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page
        .text()
        .await
        .expect("body")
        .contains("id=\"login-form\""));

    // a wrong password is refused and starts no session
    let r = c
        .post(app.url("/api/login"))
        .form(&[("username", "ada"), ("password", "wrong-password")])
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert!(session_cookie(&r).is_none());
    assert_eq!(whoami(&app, &c).await, serde_json::Value::Null);

    // the right one sets an HttpOnly, SameSite=Lax session cookie
    let r = c
        .post(app.url("/api/login"))
        .form(&[("username", "ada"), ("password", PW)])
        .send()
        .await
        .expect("post");
    assert!(
        r.status().is_success() || r.status().is_redirection(),
        "{}",
        r.status()
    );
    let cookie = session_cookie(&r).expect("session cookie");
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Lax"), "{cookie}");
    assert_eq!(whoami(&app, &c).await["username"], "ada");

    // signing in again rotates the session id
    let r = c
        .post(app.url("/api/login"))
        .form(&[("username", "rita"), ("password", PW)])
        .send()
        .await
        .expect("post");
    let rotated = session_cookie(&r).expect("new cookie");
    assert_ne!(cookie.split(';').next(), rotated.split(';').next());
    assert_eq!(whoami(&app, &c).await["role"], "researcher");

    // signing out deletes the session: the old cookie is worth nothing
    let old = rotated.split(';').next().unwrap_or_default().to_owned();
    let r = c.post(app.url("/api/logout")).send().await.expect("logout");
    assert!(r.status().is_success() || r.status().is_redirection());
    assert_eq!(whoami(&app, &c).await, serde_json::Value::Null);
    let replay = app
        .client()
        .post(app.url("/api/whoami"))
        .header("cookie", old)
        .send()
        .await
        .expect("replay");
    assert_eq!(
        replay.json::<serde_json::Value>().await.expect("json"),
        serde_json::Value::Null
    );
    let db = app.db.clone();
    drop(app);
    guard.drop_now(db).await;
}

#[tokio::test]
async fn sign_in_and_out_sqlite() {
    sign_in_and_out(Store::Sqlite).await;
}

#[tokio::test]
async fn sign_in_and_out_postgres() {
    sign_in_and_out(Store::Postgres).await;
}

async fn sessions_are_shared_between_instances(store: Store) {
    let (app, guard) = app_with_users(store).await;
    let other = TestApp::start(app.db.clone())
        .await
        .expect("second instance");
    let c = app.client();
    let r = c
        .post(app.url("/api/login"))
        .form(&[("username", "ann"), ("password", PW)])
        .send()
        .await
        .expect("login");
    let cookie = session_cookie(&r).expect("cookie");
    let pair = cookie.split(';').next().unwrap_or_default().to_owned();
    let r = other
        .client()
        .post(other.url("/api/whoami"))
        .header("cookie", pair)
        .send()
        .await
        .expect("whoami");
    assert_eq!(
        r.json::<serde_json::Value>().await.expect("json")["username"],
        "ann"
    );
    let db = app.db.clone();
    drop(other);
    drop(app);
    guard.drop_now(db).await;
}

#[tokio::test]
async fn sessions_are_shared_between_instances_sqlite() {
    sessions_are_shared_between_instances(Store::Sqlite).await;
}

#[tokio::test]
async fn sessions_are_shared_between_instances_postgres() {
    sessions_are_shared_between_instances(Store::Postgres).await;
}

/// Every protected page and server function, for every role (and nobody), and for a
/// researcher of another study (refused on everything of this one).
async fn role_matrix(store: Store) {
    let (app, guard) = app_with_users(store).await;
    let study = natstudy_core::store::studies::create(&app.db, None, "S", "")
        .await
        .expect("study");
    // rita works on S; rob is a researcher of another study only
    app.add_member(study, "rita").await.expect("member");
    app.add_user("rob", PW, Role::Researcher)
        .await
        .expect("rob");
    let robs = natstudy_core::store::studies::create(&app.db, None, "Rob's", "")
        .await
        .expect("study");
    natstudy_core::store::members::add(
        &app.db,
        robs,
        "rob",
        natstudy_core::store::members::MemberRole::Owner,
        None,
    )
    .await
    .expect("member");
    let rob = app.signed_in("rob", PW).await.expect("rob");
    natstudy_core::service::imports::import_items_text(
        &app.db,
        study,
        None,
        ("b", ONE_BUG),
        ("t", ONE_ITEM),
    )
    .await
    .expect("items");
    let pool = natstudy_core::store::assign::ensure_pool(&app.db, study, 2)
        .await
        .expect("pool");
    let spec = natstudy_core::store::assign::BatchSpec {
        name: "b0".into(),
        strategy: natstudy_core::store::assign::Strategy::DynamicQueue,
        filter: Default::default(),
        annotators: pool.clone(),
        seed: 1,
        lease_secs: 60,
        avoid_same_bug: false,
    };
    let batch = natstudy_core::store::assign::create_batch(&app.db, study, None, &spec)
        .await
        .expect("batch")
        .id;
    let clients = [
        (None, app.client()),
        (
            Some(Role::Admin),
            app.signed_in("ada", PW).await.expect("ada"),
        ),
        (
            Some(Role::Researcher),
            app.signed_in("rita", PW).await.expect("rita"),
        ),
        (
            Some(Role::Annotator),
            app.signed_in("ann", PW).await.expect("ann"),
        ),
    ];
    // (method, path, form, roles allowed)
    let study_s = study.to_string();
    type Form = Vec<(&'static str, String)>;
    let cases: Vec<(&str, String, Form, &[Role])> = vec![
        ("GET", "/admin/users".into(), vec![], &[Role::Admin]),
        (
            "GET",
            "/studies".into(),
            vec![],
            &[Role::Admin, Role::Researcher],
        ),
        (
            "GET",
            format!("/studies/{study}"),
            vec![],
            &[Role::Admin, Role::Researcher],
        ),
        ("POST", "/api/users/list".into(), vec![], &[Role::Admin]),
        (
            "POST",
            "/api/users/add".into(),
            vec![
                ("username", "new-user".into()),
                ("password", "another-password".into()),
                ("role", "annotator".into()),
            ],
            &[Role::Admin],
        ),
        (
            "POST",
            "/api/studies/list".into(),
            vec![],
            &[Role::Admin, Role::Researcher],
        ),
        (
            "POST",
            "/api/studies/create".into(),
            vec![("name", "made-here".into()), ("description", String::new())],
            &[Role::Admin],
        ),
        (
            "POST",
            "/api/studies/detail".into(),
            vec![("id", study_s.clone())],
            &[Role::Admin, Role::Researcher],
        ),
        (
            "POST",
            "/api/studies/monitor".into(),
            vec![("study", study_s.clone())],
            &[Role::Admin, Role::Researcher],
        ),
        (
            "POST",
            "/api/studies/settings".into(),
            vec![
                ("study", study_s.clone()),
                ("ratings_per_item", "5".into()),
                ("guideline", "Read carefully.".into()),
            ],
            &[Role::Admin],
        ),
        (
            "POST",
            "/api/studies/batch".into(),
            vec![
                ("study", study_s.clone()),
                ("name", "made-by-admin".into()),
                ("strategy", "dynamic_queue".into()),
            ],
            &[Role::Admin],
        ),
        (
            "POST",
            "/api/studies/invite".into(),
            vec![
                ("study", study_s.clone()),
                ("batch", batch.to_string()),
                ("cap", "3".into()),
            ],
            &[Role::Admin],
        ),
        (
            "POST",
            "/api/studies/move".into(),
            vec![
                ("study", study_s.clone()),
                ("annotator", pool[0].to_string()),
                ("to", "S2".into()),
            ],
            &[Role::Admin],
        ),
        (
            "POST",
            "/api/studies/release".into(),
            vec![
                ("study", study_s.clone()),
                ("annotator", pool[1].to_string()),
            ],
            &[Role::Admin],
        ),
        (
            "POST",
            "/api/studies/batch-lease".into(),
            vec![
                ("study", study_s.clone()),
                ("batch", batch.to_string()),
                ("minutes", "15".into()),
            ],
            &[Role::Admin],
        ),
        (
            "POST",
            "/api/studies/release-idle".into(),
            vec![("study", study_s.clone()), ("minutes", "30".into())],
            &[Role::Admin],
        ),
        (
            "POST",
            "/api/studies/pilot-link".into(),
            vec![("study", study_s.clone())],
            &[Role::Admin, Role::Researcher],
        ),
        (
            "POST",
            "/api/studies/clear-pilot".into(),
            vec![("study", study_s.clone())],
            &[Role::Admin],
        ),
        (
            "POST",
            "/api/studies/exclusion".into(),
            vec![
                ("study", study_s.clone()),
                ("annotator", pool[1].to_string()),
                ("exclude", "true".into()),
                ("reason", "answers at random".into()),
            ],
            &[Role::Admin, Role::Researcher],
        ),
        (
            "GET",
            format!("/studies/{study}/export/participants.csv"),
            vec![],
            &[Role::Admin, Role::Researcher],
        ),
        (
            "GET",
            format!("/studies/{study}/export/votes.csv"),
            vec![],
            &[Role::Admin, Role::Researcher],
        ),
        (
            "GET",
            format!("/studies/{study}/export/dataset.jsonl"),
            vec![],
            &[Role::Admin, Role::Researcher],
        ),
        (
            "POST",
            "/api/studies/results".into(),
            vec![("study", study_s.clone())],
            &[Role::Admin, Role::Researcher],
        ),
        (
            "GET",
            format!("/studies/{study}/results"),
            vec![],
            &[Role::Admin, Role::Researcher],
        ),
        (
            "POST",
            "/api/studies/propose".into(),
            vec![
                ("study", study_s.clone()),
                ("operators", "SwitchRelation".into()),
            ],
            &[Role::Admin, Role::Researcher],
        ),
        (
            "POST",
            "/api/review/next".into(),
            vec![("study", study_s.clone())],
            // members of the study of any role (ann is not one), and admins
            &[Role::Admin, Role::Researcher],
        ),
        (
            "POST",
            "/api/review/overview".into(),
            vec![("study", study_s.clone())],
            &[Role::Admin],
        ),
        (
            "POST",
            "/api/review/create".into(),
            vec![("study", study_s.clone()), ("k", "2".into())],
            &[Role::Admin],
        ),
        (
            "GET",
            format!("/studies/{study}/review/decide"),
            vec![],
            &[Role::Admin],
        ),
        (
            "POST",
            "/api/studies/mine".into(),
            vec![],
            &[Role::Admin, Role::Researcher, Role::Annotator],
        ),
    ];
    for (method, path, form, allowed) in &cases {
        // the researcher of another study: refused on everything of S
        let of_study = path.contains(&format!("/studies/{study}"))
            || form
                .iter()
                .any(|(k, v)| matches!(*k, "study" | "id") && *v == study_s);
        if of_study {
            let req = if *method == "GET" {
                rob.get(app.url(path))
            } else {
                rob.post(app.url(path)).form(form)
            };
            let status = req.send().await.expect("request").status();
            assert_eq!(status, StatusCode::FORBIDDEN, "rob {method} {path}");
        }
        for (role, c) in &clients {
            let req = if *method == "GET" {
                c.get(app.url(path))
            } else {
                c.post(app.url(path)).form(form)
            };
            let status = req.send().await.expect("request").status();
            let who = role.map(|r| r.as_str()).unwrap_or("anonymous");
            match role {
                Some(r) if allowed.contains(r) => {
                    // the admin's add/create succeed once; a repeat would conflict, so accept 2xx/3xx only here
                    assert!(
                        status.is_success() || status.is_redirection(),
                        "{who} {method} {path}: {status}"
                    );
                }
                Some(_) => assert_eq!(status, StatusCode::FORBIDDEN, "{who} {method} {path}"),
                None if *method == "GET" => {
                    assert_eq!(status, StatusCode::SEE_OTHER, "{who} {method} {path}");
                }
                None => assert_eq!(status, StatusCode::UNAUTHORIZED, "{who} {method} {path}"),
            }
        }
    }
    // rob's list of studies holds his study only, S's exports and charts are refused
    let listed: serde_json::Value = rob
        .post(app.url("/api/studies/list"))
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    let names: Vec<&str> = listed
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(names, ["Rob's"]);
    for path in [
        format!("/studies/{study}/export/survey.json"),
        format!("/studies/{study}/charts/naturalness.svg"),
    ] {
        let r = rob.get(app.url(&path)).send().await.expect("get");
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "rob GET {path}");
        // the refusal page has the site's header and says who is signed in and why
        let page = r.text().await.expect("page");
        assert!(
            page.contains("class=\"topbar\"") && page.contains("rob (researcher)"),
            "{page}"
        );
        assert!(page.contains("not a member"), "{page}");
    }
    let body = serde_json::json!({"study": study, "request": {"operators": "studied", "all_sites": false}, "keys": ["x"]});
    let status = rob
        .post(app.url("/api/studies/add-transformations"))
        .json(&body)
        .send()
        .await
        .expect("add")
        .status();
    assert_eq!(status, StatusCode::FORBIDDEN, "rob add-transformations");
    let status = rob
        .post(app.url("/api/studies/score"))
        .form(&[("study", study_s.as_str()), ("model", "m.arpa")])
        .send()
        .await
        .expect("score")
        .status();
    assert_eq!(status, StatusCode::FORBIDDEN, "rob score");
    // the JSON-encoded upload, for every role
    for (role, c) in &clients {
        let body = serde_json::json!({"study": study, "kind": "items", "files": [["b.jsonl", ONE_BUG], ["t.jsonl", ONE_ITEM]]});
        let status = c
            .post(app.url("/api/studies/import"))
            .json(&body)
            .send()
            .await
            .expect("import")
            .status();
        match role {
            Some(Role::Admin) => assert!(status.is_success(), "admin import: {status}"),
            Some(_) => assert_eq!(status, StatusCode::FORBIDDEN, "{role:?} import"),
            None => assert_eq!(status, StatusCode::UNAUTHORIZED, "anonymous import"),
        }
    }
    // a wrong file is refused with what this upload expects
    let admin = &clients
        .iter()
        .find(|(r, _)| *r == Some(Role::Admin))
        .expect("admin")
        .1;
    let body = serde_json::json!({"study": study, "kind": "npr", "files": [["survey.json", "{\"items\": []}"]]});
    let r = admin
        .post(app.url("/api/studies/import"))
        .json(&body)
        .send()
        .await
        .expect("import");
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = r.text().await.expect("text");
    assert!(
        text.contains("repair results expect npr_results.csv"),
        "{text}"
    );
    // a sample larger than what matches is taken whole, and the answer says so
    let r = admin
        .post(app.url("/api/studies/batch"))
        .form(&[
            ("study", study_s.as_str()),
            ("name", "too-big-a-sample"),
            ("strategy", "dynamic_queue"),
            ("sample", "10000"),
        ])
        .send()
        .await
        .expect("batch");
    assert_eq!(r.status(), StatusCode::OK);
    let text = r.text().await.expect("text");
    assert!(text.contains("fewer than the sample of 10000"), "{text}");
    // adding generated transformations (JSON), for every role: staff get past the role check
    // (and are told to select something), others are refused
    for (role, c) in &clients {
        let body = serde_json::json!({"study": study, "request": {"operators": "studied", "all_sites": false}, "keys": []});
        let r = c
            .post(app.url("/api/studies/add-transformations"))
            .json(&body)
            .send()
            .await
            .expect("add");
        let status = r.status();
        match role {
            Some(Role::Admin | Role::Researcher) => {
                let text = r.text().await.unwrap_or_default();
                assert!(
                    text.contains("select at least one"),
                    "{role:?}: {status} {text}"
                );
            }
            Some(_) => assert_eq!(
                status,
                StatusCode::FORBIDDEN,
                "{role:?} add-transformations"
            ),
            None => assert_eq!(
                status,
                StatusCode::UNAUTHORIZED,
                "anonymous add-transformations"
            ),
        }
    }
    // staff without an annotator record may not use the survey endpoints
    for (role, c) in &clients {
        let status = c
            .post(app.url("/api/annotate/state"))
            .form(&[("study", study_s.as_str())])
            .send()
            .await
            .expect("state")
            .status();
        assert_eq!(status, StatusCode::FORBIDDEN, "{role:?} annotate/state");
    }
    // an annotator account finds the studies it annotates in
    let ann_id = natstudy_core::store::users::credentials(&app.db, "ann")
        .await
        .expect("db")
        .expect("ann")
        .user
        .id;
    let ann_annotator = natstudy_core::store::invites::enrol_user(&app.db, study, ann_id)
        .await
        .expect("enrol");
    let mine: serde_json::Value = clients[3]
        .1
        .post(app.url("/api/studies/mine"))
        .send()
        .await
        .expect("mine")
        .json()
        .await
        .expect("json");
    assert_eq!(
        mine,
        serde_json::json!([{"id": study, "name": "S", "rated": 0, "total": 0, "finished": false}])
    );
    // the start page's list: each account sees its own studies, a visitor none
    let start = |c: &reqwest::Client| {
        let req = c.post(app.url("/api/studies/start"));
        async move {
            let r = req.send().await.expect("start");
            assert_eq!(r.status(), StatusCode::OK);
            r.json::<natstudy_types::HomeStudies>().await.expect("json")
        }
    };
    let names = |s: natstudy_types::HomeStudies| match s.staff {
        Some(rows) => rows.into_iter().map(|r| r.name).collect(),
        None => panic!("a staff account's list, got {s:?}"),
    };
    let nothing = natstudy_types::HomeStudies {
        staff: None,
        rating: vec![],
    };
    assert_eq!(start(&clients[0].1).await, nothing);
    let s_as = |rated, total, finished| natstudy_types::MyStudy {
        id: study,
        name: "S".into(),
        rated,
        total,
        finished,
    };
    let s_for_ann = |rated, total, finished| natstudy_types::HomeStudies {
        staff: None,
        rating: vec![s_as(rated, total, finished)],
    };
    assert_eq!(start(&clients[3].1).await, s_for_ann(0, 0, false));
    // given the study's item in a batch of its own, then finished: as the rating page counts
    let spec = natstudy_core::store::assign::BatchSpec {
        name: "ann's".into(),
        annotators: vec![ann_annotator],
        ..spec.clone()
    };
    natstudy_core::store::assign::create_batch(&app.db, study, None, &spec)
        .await
        .expect("batch");
    assert_eq!(start(&clients[3].1).await, s_for_ann(0, 1, false));
    natstudy_core::service::participation::finish(&app.db, study, ann_annotator)
        .await
        .expect("finish");
    assert_eq!(start(&clients[3].1).await, s_for_ann(0, 1, true));
    let ada: Vec<String> = names(start(&clients[1].1).await);
    assert!(ada.contains(&"S".to_string()) && ada.contains(&"Rob's".to_string()));
    assert_eq!(names(start(&rob).await), vec!["Rob's".to_string()]);
    assert!(names(start(&clients[2].1).await).contains(&"S".to_string()));
    assert_eq!(start(&rob).await.rating, vec![], "rob rates nothing");
    // a researcher given items to rate (`batch create --users rita`) sees both lists
    let rita_id = natstudy_core::store::users::credentials(&app.db, "rita")
        .await
        .expect("db")
        .expect("rita")
        .user
        .id;
    natstudy_core::store::invites::enrol_user(&app.db, study, rita_id)
        .await
        .expect("enrol rita");
    let rita = start(&clients[2].1).await;
    assert_eq!(rita.rating, vec![s_as(0, 0, false)]);
    assert!(names(rita).contains(&"S".to_string()));
    let audit = natstudy_core::store::audit::for_study(&app.db, study, 50)
        .await
        .expect("audit");
    for action in [
        "study.settings",
        "batch.create",
        "invite.create",
        "annotator.move",
        "annotator.release",
        "import.items",
    ] {
        assert_eq!(
            audit.iter().filter(|a| a.action == action).count(),
            // batches: the set-up's, the matrix's, the oversized sample's and the annotator's;
            // invites: the matrix's and the two pilot links (an admin's, a researcher's)
            match action {
                "batch.create" => 4,
                "invite.create" => 3,
                _ => 1,
            },
            "{action} logged once"
        );
    }
    // what the refused calls would have done did not happen
    let users = natstudy_core::store::users::list(&app.db)
        .await
        .expect("users");
    assert_eq!(
        users
            .iter()
            .filter(|u| u.account.username == "new-user")
            .count(),
        1
    );
    let studies = natstudy_core::store::studies::list(&app.db)
        .await
        .expect("studies");
    assert_eq!(studies.iter().filter(|s| s.name == "made-here").count(), 1);
    // a participant who joined by invite (no account) finds their study on the start page,
    // as it counts their progress; a review-only participant finds none
    let joined = app.client();
    let token = natstudy_core::store::invites::create_invite(&app.db, study, batch, 5, None)
        .await
        .expect("invite");
    join_by_invite(&app, &joined, &token).await;
    let theirs = start(&joined).await;
    assert_eq!(theirs.staff, None);
    assert_eq!(theirs.rating.len(), 1, "{theirs:?}");
    assert_eq!(
        (theirs.rating[0].id, theirs.rating[0].finished),
        (study, false)
    );
    let reviewer = app.client();
    let token = natstudy_core::store::invites::create_review_invite(&app.db, study, 1, None)
        .await
        .expect("review invite");
    join_by_invite(&app, &reviewer, &token).await;
    assert_eq!(start(&reviewer).await, nothing);
    // a signed-in account that joins by an invite finds that study too, and a study it
    // already rates in as the account stays listed once
    let token = natstudy_core::store::invites::create_invite(&app.db, study, batch, 5, None)
        .await
        .expect("invite");
    for c in [&rob, &clients[2].1] {
        join_by_invite(&app, c, &token).await;
    }
    let robs_rating: Vec<_> = start(&rob).await.rating.iter().map(|r| r.id).collect();
    assert_eq!(robs_rating, vec![study]);
    assert_eq!(start(&rob).await.staff.map(|s| s.len()), Some(1));
    let ritas_rating: Vec<_> = start(&clients[2].1).await.rating;
    assert_eq!(ritas_rating, vec![s_as(0, 0, false)]);
    let db = app.db.clone();
    drop(app);
    guard.drop_now(db).await;
}

#[tokio::test]
async fn role_matrix_sqlite() {
    role_matrix(Store::Sqlite).await;
}

#[tokio::test]
async fn role_matrix_postgres() {
    role_matrix(Store::Postgres).await;
}

#[tokio::test]
async fn cross_site_posts_are_refused() {
    let (app, guard) = app_with_users(Store::Sqlite).await;
    let c = app.signed_in("ada", PW).await.expect("ada");
    let form = [
        ("username", "csrf-victim"),
        ("password", "another-password"),
        ("role", "admin"),
    ];
    let r = c
        .post(app.url("/api/users/add"))
        .header("origin", "http://evil.example")
        .form(&form)
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = c
        .post(app.url("/api/users/add"))
        .header("sec-fetch-site", "cross-site")
        .form(&form)
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    // the same host name under another scheme is another site (an https page of another
    // server on this host): its scheme is compared, not only its host
    let https_origin = app.base.replacen("http://", "https://", 1);
    let r = c
        .post(app.url("/api/users/add"))
        .header("origin", https_origin.as_str())
        .form(&form)
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), StatusCode::FORBIDDEN, "{https_origin}");
    assert!(
        natstudy_core::store::users::credentials(&app.db, "csrf-victim")
            .await
            .expect("db")
            .is_none()
    );
    // the same request from this origin works
    let r = c
        .post(app.url("/api/users/add"))
        .header("origin", app.base.clone())
        .form(&form)
        .send()
        .await
        .expect("post");
    assert!(r.status().is_success(), "{}", r.status());
    let db = app.db.clone();
    drop(app);
    guard.drop_now(db).await;
}

/// Participants only ever see and rate what was handed to them.
async fn participants_are_confined_to_their_items(store: Store) {
    let (app, guard) = app_with_users(store).await;
    let study = natstudy_core::store::studies::create(&app.db, None, "P", "")
        .await
        .expect("study");
    let two = format!("{ONE_BUG}\n{}", ONE_BUG.replace("B-1", "B-2"));
    let items = format!(
        "{ONE_ITEM}\n{}",
        ONE_ITEM
            .replace("naming_1", "naming_2")
            .replace("B-1", "B-2")
    );
    natstudy_core::service::imports::import_items_text(
        &app.db,
        study,
        None,
        ("b", &two),
        ("t", &items),
    )
    .await
    .expect("items");
    sqlx::query("UPDATE studies SET ratings_per_item = 1 WHERE id = $1")
        .bind(study)
        .execute(&mut *app.db.write().await.expect("write"))
        .await
        .expect("k=1");
    let spec = natstudy_core::store::assign::BatchSpec {
        name: "q".into(),
        strategy: natstudy_core::store::assign::Strategy::DynamicQueue,
        filter: Default::default(),
        annotators: vec![],
        seed: 1,
        lease_secs: 600,
        avoid_same_bug: false,
    };
    let batch = natstudy_core::store::assign::create_batch(&app.db, study, None, &spec)
        .await
        .expect("batch")
        .id;
    let token = natstudy_core::store::invites::create_invite(&app.db, study, batch, 2, None)
        .await
        .expect("invite");
    let s = study.to_string();
    let mut handed = Vec::new();
    let mut clients = Vec::new();
    for _ in 0..2 {
        let c = app.client();
        c.post(app.url("/api/join"))
            .form(&[("token", token.as_str())])
            .send()
            .await
            .expect("join");
        c.post(app.url("/api/annotate/consent"))
            .form(&[
                ("study", s.as_str()),
                ("answers[years]", "1-3"),
                ("answers[role]", "student"),
            ])
            .send()
            .await
            .expect("consent");
        c.post(app.url("/api/annotate/start"))
            .form(&[("study", s.as_str())])
            .send()
            .await
            .expect("start");
        let st: serde_json::Value = c
            .post(app.url("/api/annotate/state"))
            .form(&[("study", s.as_str())])
            .send()
            .await
            .expect("state")
            .json()
            .await
            .expect("json");
        handed.push((
            st["step"]["Rate"]["item"].as_i64().expect("item"),
            st["step"]["Rate"]["token"]
                .as_str()
                .expect("token")
                .to_owned(),
        ));
        clients.push(c);
    }
    assert_ne!(handed[0].0, handed[1].0, "k = 1: each got a different item");
    // the invite is used up
    let third = app
        .client()
        .post(app.url("/api/join"))
        .form(&[("token", token.as_str())])
        .send()
        .await
        .expect("join");
    assert_eq!(third.status(), StatusCode::FORBIDDEN);
    // A cannot rate B's item, nor revise it
    let theirs = handed[1].0.to_string();
    let r = clients[0]
        .post(app.url("/api/annotate/vote"))
        .form(&[
            ("study", s.as_str()),
            ("item", theirs.as_str()),
            ("cr", "1"),
            ("cc", "1"),
            ("token", "0123456789abcdef0123456789abcdef"),
        ])
        .send()
        .await
        .expect("vote");
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = clients[0]
        .post(app.url("/api/annotate/state"))
        .form(&[("study", s.as_str()), ("revise", theirs.as_str())])
        .send()
        .await
        .expect("state");
    let st: serde_json::Value = r.json().await.expect("json");
    assert_eq!(
        st["step"]["Rate"]["item"].as_i64(),
        Some(handed[0].0),
        "revise of a foreign item shows only one's own"
    );
    // another study is out of reach
    let other = natstudy_core::store::studies::create(&app.db, None, "Other", "")
        .await
        .expect("other");
    let r = clients[0]
        .post(app.url("/api/annotate/state"))
        .form(&[("study", other.to_string())])
        .send()
        .await
        .expect("state");
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM votes")
        .fetch_one(&app.db.pool)
        .await
        .expect("votes");
    assert_eq!(n, 0);
    let db = app.db.clone();
    drop(clients);
    drop(app);
    guard.drop_now(db).await;
}

#[tokio::test]
async fn participants_are_confined_to_their_items_sqlite() {
    participants_are_confined_to_their_items(Store::Sqlite).await;
}

#[tokio::test]
async fn participants_are_confined_to_their_items_postgres() {
    participants_are_confined_to_their_items(Store::Postgres).await;
}

/// The results' figures download as SVG, PDF and PNG (300 dpi of the print size, drawn with the
/// bundled font), the tables as CSV and LaTeX, and everything as one zip, for staff; the results
/// page lists them with the report's tables as HTML tables.
#[tokio::test]
async fn charts_download_as_svg_and_png() {
    let (app, guard) = app_with_users(Store::Sqlite).await;
    let r = natstudy_tests::reference_dir().join("study-small");
    let study = natstudy_core::store::studies::create(&app.db, None, "R", "")
        .await
        .expect("study");
    // rita works on this study
    app.add_member(study, "rita").await.expect("member");
    natstudy_core::service::imports::import_items(
        &app.db,
        study,
        &r.join("bugs.jsonl"),
        &r.join("transformations.jsonl"),
    )
    .await
    .expect("items");
    natstudy_core::service::imports::import_votes(&app.db, study, &r.join("survey.json"))
        .await
        .expect("votes");
    let rita = app.signed_in("rita", PW).await.expect("rita");
    let png = rita
        .get(app.url(&format!("/studies/{study}/charts/naturalness_by_level.png")))
        .send()
        .await
        .expect("png");
    assert_eq!(png.status(), StatusCode::OK);
    assert_eq!(png.headers()["content-type"], "image/png");
    let bytes = png.bytes().await.expect("bytes");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // IHDR: one column (3.5 in) at 300 dpi
    let w = u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
    assert_eq!(w, 1050);
    let pdf = rita
        .get(app.url(&format!("/studies/{study}/charts/naturalness_by_level.pdf")))
        .send()
        .await
        .expect("pdf");
    assert_eq!(pdf.headers()["content-type"], "application/pdf");
    assert!(pdf.bytes().await.expect("bytes").starts_with(b"%PDF"));
    for (file, mime, start) in [
        (
            "naturalness.csv",
            "text/csv; charset=utf-8",
            "level,natural",
        ),
        (
            "naturalness.tex",
            "application/x-tex; charset=utf-8",
            "% natstudy",
        ),
    ] {
        let t = rita
            .get(app.url(&format!("/studies/{study}/tables/{file}")))
            .send()
            .await
            .expect("table");
        assert_eq!(t.status(), StatusCode::OK, "{file}");
        assert_eq!(t.headers()["content-type"], mime, "{file}");
        assert!(t.text().await.expect("text").starts_with(start), "{file}");
    }
    let zip = rita
        .get(app.url(&format!("/studies/{study}/paper.zip")))
        .send()
        .await
        .expect("zip");
    assert_eq!(zip.headers()["content-type"], "application/zip");
    let bytes = zip.bytes().await.expect("bytes");
    let archive = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).expect("a zip");
    let names: Vec<&str> = archive.file_names().collect();
    for want in [
        "report.tex",
        "tables/naturalness.csv",
        "tables/naturalness.tex",
        "figures/naturalness_by_level.svg",
        "figures/naturalness_by_level.pdf",
        "figures/naturalness_by_level.png",
        "figures/time_by_level.pdf",
    ] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    let svg = rita
        .get(app.url(&format!("/studies/{study}/charts/time_by_level.svg")))
        .send()
        .await
        .expect("svg");
    assert_eq!(svg.headers()["content-type"], "image/svg+xml");
    assert!(svg.text().await.expect("text").starts_with("<svg"));
    let missing = rita
        .get(app.url(&format!("/studies/{study}/charts/nothing.png")))
        .send()
        .await
        .expect("404");
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let ann = app.signed_in("ann", PW).await.expect("ann");
    let refused = ann
        .get(app.url(&format!("/studies/{study}/charts/naturalness_by_level.png")))
        .send()
        .await
        .expect("annotator");
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    // the results page: HTML tables and the PNG links
    let page = rita
        .get(app.url(&format!("/studies/{study}/results")))
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(
        page.contains("id=\"table-naturalness\""),
        "naturalness table"
    );
    // (a header cell's text, whatever hydration markers the renderer adds around it)
    assert!(page.contains(">likely unnatural<"), "a column of the table");
    assert!(page.contains(&format!("/studies/{study}/charts/naturalness_by_level.png")));
    assert!(page.contains(&format!("/studies/{study}/charts/naturalness_by_level.pdf")));
    assert!(page.contains(&format!("/studies/{study}/tables/naturalness.tex")));
    assert!(page.contains(&format!("/studies/{study}/paper.zip")));
    guard.drop_now(app.db.clone()).await;
}

/// The invite landing page learns at once whether its link works (no need to click first).
#[tokio::test]
async fn invite_links_say_whether_they_work() {
    let (app, guard) = app_with_users(Store::Sqlite).await;
    // a study of one item with a survey invite for one participant
    let invited = |name: &'static str| {
        let db = app.db.clone();
        async move {
            let study = natstudy_core::store::studies::create(&db, None, name, "")
                .await
                .expect("study");
            natstudy_core::service::imports::import_items_text(
                &db,
                study,
                None,
                ("b", ONE_BUG),
                ("t", ONE_ITEM),
            )
            .await
            .expect("items");
            let (_, token) = natstudy_tests::open_queue(&db, study, 1)
                .await
                .expect("queue");
            (study, token)
        }
    };
    let (study, token) = invited("Invited").await;
    // a join through `token` by client `c`
    let join_as = |c: &reqwest::Client, token: &str| {
        c.post(app.url("/api/join"))
            .form(&[("token", token.to_owned())])
            .send()
    };
    let count = |s: natstudy_vocab::ids::StudyId| {
        let db = app.db.clone();
        async move {
            natstudy_core::service::monitor::monitor(&db, s)
                .await
                .expect("monitor")
                .annotators
                .len()
        }
    };
    let status = |t: String| {
        let (c, url) = (app.client(), app.url("/api/invite"));
        async move {
            let v: serde_json::Value = c
                .post(url)
                .form(&[("token", t)])
                .send()
                .await
                .expect("invite")
                .json()
                .await
                .expect("json");
            v
        }
    };
    assert_eq!(
        status(token.clone()).await,
        serde_json::json!({"Open": {"study": "Invited", "continuing": false, "finished": false, "review": false}})
    );
    assert_eq!(status("nope".into()).await, serde_json::json!("Unknown"));
    let participant = app.client();
    let join = || join_as(&participant, &token);
    // a join leads to the page of what the invite is for (the survey here)
    let to = |r: &reqwest::Response| {
        r.headers()
            .get(reqwest::header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .map(str::to_owned)
    };
    let survey = Some(format!("/annotate/{study}"));
    assert_eq!(to(&join().await.expect("join")), survey);
    assert_eq!(status(token.clone()).await, serde_json::json!("UsedUp"));
    // the participant comes back through the same (now used-up) link: same participant
    let me: serde_json::Value = participant
        .post(app.url("/api/invite"))
        .form(&[("token", token.as_str())])
        .send()
        .await
        .expect("invite")
        .json()
        .await
        .expect("json");
    assert_eq!(
        me,
        serde_json::json!({"Open": {"study": "Invited", "continuing": true, "finished": false, "review": false}})
    );
    let again = join().await.expect("join again");
    assert_eq!(
        to(&again),
        survey,
        "the same participant goes on with the survey"
    );
    assert_eq!(
        count(study).await,
        1,
        "coming back makes no new participant"
    );
    // a survey participant is no reviewer of the study's patches
    let review_next = |c: &reqwest::Client| {
        c.post(app.url("/api/review/next"))
            .form(&[("study", study.to_string())])
            .send()
    };
    assert_eq!(
        review_next(&participant).await.expect("next").status(),
        StatusCode::UNAUTHORIZED
    );
    // a review-only invite says so, and its participant reviews (and only in this study)
    let review_token = natstudy_core::store::invites::create_review_invite(&app.db, study, 1, None)
        .await
        .expect("review invite");
    assert_eq!(
        status(review_token.clone()).await,
        serde_json::json!({"Open": {"study": "Invited", "continuing": false, "finished": false, "review": true}})
    );
    let reviewer = app.client();
    let review_join = || join_as(&reviewer, &review_token);
    let review_page = Some(format!("/studies/{study}/review"));
    assert_eq!(to(&review_join().await.expect("join")), review_page);
    // coming back through it: the same reviewer, to the review again
    assert_eq!(to(&review_join().await.expect("join again")), review_page);
    assert_eq!(
        review_next(&reviewer).await.expect("next").status(),
        StatusCode::OK
    );
    let other = natstudy_core::store::studies::create(&app.db, None, "Other", "")
        .await
        .expect("other");
    let elsewhere = reviewer
        .post(app.url("/api/review/next"))
        .form(&[("study", other.to_string())])
        .send()
        .await
        .expect("next");
    assert_eq!(elsewhere.status(), StatusCode::UNAUTHORIZED);
    // a participant of this study who opens an invite of another study joins that one anew
    let (elsewhere_study, elsewhere_token) = invited("Elsewhere").await;
    let in_study = count(study).await;
    let joined_elsewhere = join_as(&participant, &elsewhere_token)
        .await
        .expect("join elsewhere");
    assert_eq!(
        to(&joined_elsewhere),
        Some(format!("/annotate/{elsewhere_study}"))
    );
    assert_eq!(
        (count(study).await, count(elsewhere_study).await),
        (in_study, 1),
        "one new participant, in the other study"
    );
    let db = app.db.clone();
    drop(app);
    guard.drop_now(db).await;
}

/// A join admits no one through a link closed or used up after the server first saw it (the
/// server keeps where a link leads, not whether it is open), and it gives a stored session a
/// new id (the old cookie is worth nothing) while a fresh visitor's session is simply created:
/// one session row each, none left behind.
async fn joins_check_the_link_and_renew_the_session(store: Store) {
    let (app, guard) = app_with_users(store).await;
    let study = natstudy_core::store::studies::create(&app.db, None, "Links", "")
        .await
        .expect("study");
    natstudy_core::service::imports::import_items_text(
        &app.db,
        study,
        None,
        ("b", ONE_BUG),
        ("t", ONE_ITEM),
    )
    .await
    .expect("items");
    let (batch, token) = natstudy_tests::open_queue(&app.db, study, 3)
        .await
        .expect("queue");
    let join = |c: &reqwest::Client, token: &str| {
        c.post(app.url("/api/join"))
            .form(&[("token", token.to_owned())])
            .send()
    };
    let sessions = || {
        let db = app.db.clone();
        async move {
            let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sessions")
                .fetch_one(&db.pool)
                .await
                .expect("count");
            n
        }
    };
    assert_eq!(sessions().await, 0);
    // a fresh visitor: a new session, one row
    let visitor = app.client();
    let r = join(&visitor, &token).await.expect("join");
    assert!(r.status().is_success(), "{}", r.status());
    assert!(session_cookie(&r).is_some(), "a session cookie");
    assert_eq!(sessions().await, 1);
    // a signed-in account joins: its session gets a new id, the old cookie ends
    let member = app.client();
    let r = member
        .post(app.url("/api/login"))
        .form(&[("username", "ann"), ("password", PW)])
        .send()
        .await
        .expect("login");
    let before = session_cookie(&r).expect("cookie");
    let before = before.split(';').next().unwrap_or_default().to_owned();
    assert_eq!(sessions().await, 2);
    let r = join(&member, &token).await.expect("join");
    assert!(r.status().is_success(), "{}", r.status());
    let after = session_cookie(&r).expect("a new cookie");
    assert_ne!(Some(before.as_str()), after.split(';').next());
    assert_eq!(
        whoami(&app, &member).await["username"],
        "ann",
        "still signed in"
    );
    let replay = app
        .client()
        .post(app.url("/api/whoami"))
        .header("cookie", before)
        .send()
        .await
        .expect("replay");
    assert_eq!(
        replay.json::<serde_json::Value>().await.expect("json"),
        serde_json::Value::Null,
        "the old id is gone"
    );
    assert_eq!(
        sessions().await,
        2,
        "the old row was deleted, not left behind"
    );
    // the organisers close the link the server has already seen: no one new joins
    let id: i64 = sqlx::query_scalar("SELECT id FROM invites WHERE token = $1")
        .bind(&token)
        .fetch_one(&app.db.pool)
        .await
        .expect("invite id");
    natstudy_core::store::monitor::close_invite(
        &app.db,
        study,
        natstudy_vocab::ids::InviteId(id),
        None,
    )
    .await
    .expect("close");
    let late = join(&app.client(), &token).await.expect("join");
    assert_eq!(late.status(), StatusCode::FORBIDDEN);
    assert!(late.text().await.expect("body").contains("closed"));
    // ...but who joined before goes on
    let again = join(&visitor, &token).await.expect("join again");
    assert!(again.status().is_success(), "{}", again.status());
    // a link used up after it was seen admits no one more
    let one = natstudy_core::store::invites::create_invite(&app.db, study, batch, 1, None)
        .await
        .expect("invite");
    let r = join(&app.client(), &one).await.expect("join");
    assert!(r.status().is_success(), "{}", r.status());
    let over = join(&app.client(), &one).await.expect("join");
    assert_eq!(over.status(), StatusCode::FORBIDDEN);
    assert!(over.text().await.expect("body").contains("used up"));
    let used: Vec<i64> =
        sqlx::query_scalar("SELECT used FROM invites WHERE study_id = $1 ORDER BY id")
            .bind(study)
            .fetch_all(&app.db.pool)
            .await
            .expect("uses");
    assert_eq!(used, vec![2, 1], "refused joins use nothing");
    let db = app.db.clone();
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(joins_check_the_link_and_renew_the_session => joins_check_the_link_and_renew_the_session_sqlite, joins_check_the_link_and_renew_the_session_postgres);

/// A study of the reference items with an open queue, and a participant who joined it by
/// invite and was handed an item: the study, the participant's client, the item and its submit
/// token.
async fn participant_at_an_item(
    app: &TestApp,
    name: &str,
) -> (
    natstudy_vocab::ids::StudyId,
    reqwest::Client,
    natstudy_vocab::ids::ItemId,
    String,
) {
    use natstudy_tests::participants;
    let study = natstudy_tests::reference_study(&app.db, name, false)
        .await
        .expect("study");
    let (_, token) = natstudy_tests::open_queue(&app.db, study, 5)
        .await
        .expect("queue");
    let base = app.url("");
    let c = participants::participant(&base, study, &token).await;
    let (item, submit) = participants::rate_step(&base, &c, study)
        .await
        .expect("an item");
    (study, c, item, submit)
}

/// A participant continues on another device with the resume code the survey shows: the same
/// participant, code and count; a wrong code is refused, and guessing is throttled.
#[tokio::test]
async fn a_resume_code_continues_the_participant_elsewhere() {
    use natstudy_tests::participants;
    let (app, guard) = app_with_users(Store::Sqlite).await;
    let (study, phone, item, submit) = participant_at_an_item(&app, "Resumed").await;
    let base = app.url("");
    let r = participants::vote(&base, &phone, study, item, &submit, "").await;
    assert!(r.status().is_success(), "{}", r.status());
    let before = participants::state(&base, &phone, study)
        .await
        .expect("state");
    let code = before["resume_code"]
        .as_str()
        .expect("a resume code")
        .to_owned();
    assert_eq!(code.len(), 11, "{code}");
    // the diff marks the buggy lines on both sides: an unchanged buggy line on both, and the
    // transformed side marks what the transformation wrote in place of one
    let rows = before["step"]["Rate"]["diff"]
        .as_array()
        .expect("diff rows");
    assert!(rows.iter().any(|r| r["buggy_new"] == true), "{rows:?}");
    for r in rows
        .iter()
        .filter(|r| r["kind"] == "same" && r["buggy"] == true)
    {
        assert_eq!(r["buggy_new"], true, "{r}");
    }
    // the laptop types it in lower case with a space for the dash
    let laptop = participants::client();
    let r = laptop
        .post(app.url("/api/resume"))
        .form(&[("code", code.to_lowercase().replace('-', " "))])
        .send()
        .await
        .expect("resume");
    assert!(
        r.status().is_success() || r.status().is_redirection(),
        "{}",
        r.status()
    );
    let after = participants::state(&base, &laptop, study)
        .await
        .expect("state");
    assert_eq!(after["code"], before["code"], "the same participant");
    assert_eq!(after["done"], 1);
    assert_eq!(after["resume_code"], before["resume_code"]);
    // a wrong code is refused; a flood of guesses is throttled
    let guess = |c: &'static str| {
        let (client, url) = (participants::client(), app.url("/api/resume"));
        async move {
            client
                .post(url)
                .form(&[("code", c)])
                .send()
                .await
                .expect("resume")
                .status()
        }
    };
    assert_eq!(guess("AAAAA-AAAAA").await, StatusCode::NOT_FOUND);
    let mut throttled = false;
    for _ in 0..40 {
        if guess("AAAAA-AAAAB").await == StatusCode::TOO_MANY_REQUESTS {
            throttled = true;
            break;
        }
    }
    assert!(throttled, "guessing resume codes is throttled");
    guard.drop_now(app.db.clone()).await;
}

/// The built site under content-hashed names, cached for a year and precompressed; pages are
/// never stored; unhashed names must be revalidated.
#[tokio::test]
async fn assets_are_hashed_cached_and_compressed_and_pages_are_not_stored() {
    let (app, guard) = app_with_users(Store::Sqlite).await;
    let c = app.client();
    let page = c.get(app.url("/login")).send().await.expect("page");
    assert_eq!(
        page.headers()[reqwest::header::CACHE_CONTROL],
        "no-store",
        "pages are not cached"
    );
    let html = page.text().await.expect("html");
    let href = |marker: &str, ext: &str| {
        let at = html
            .find(marker)
            .unwrap_or_else(|| panic!("{marker} in the page"));
        let rest = &html[at + marker.len()..];
        let end = rest.find(ext).expect("extension") + ext.len();
        rest[..end].to_owned()
    };
    let css = href(
        "rel=\"stylesheet\" id=\"natstudy\" href=\"/pkg/natstudy.",
        ".css",
    );
    let js = href("rel=\"modulepreload\" href=\"/pkg/natstudy.", ".js");
    let wasm = href("rel=\"preload\" href=\"/pkg/natstudy.", "_bg.wasm");
    for name in [&css, &js, &wasm] {
        let hash = name.split(['.', '_']).next().expect("hash");
        assert_eq!(hash.len(), 16, "a content hash in {name}");
        let url = app.url(&format!("/pkg/natstudy.{name}"));
        for (accept, want) in [("br, gzip", "br"), ("gzip", "gzip")] {
            let r = c
                .get(&url)
                .header(reqwest::header::ACCEPT_ENCODING, accept)
                .send()
                .await
                .expect("asset");
            assert_eq!(r.status(), StatusCode::OK, "{url}");
            assert_eq!(
                r.headers()[reqwest::header::CACHE_CONTROL],
                "public, max-age=31536000, immutable",
                "{url}"
            );
            let encoding = r
                .headers()
                .get(reqwest::header::CONTENT_ENCODING)
                .map(|v| v.to_str().unwrap_or("").to_owned());
            // brotli only where the build machine had the tool; gzip always
            if want == "gzip" || app.site_root().join("pkg/natstudy_bg.wasm.br").is_file() {
                assert_eq!(encoding.as_deref(), Some(want), "{url} for {accept}");
            }
        }
    }
    let plain = c
        .get(app.url("/pkg/natstudy.js"))
        .send()
        .await
        .expect("plain");
    assert_eq!(plain.headers()[reqwest::header::CACHE_CONTROL], "no-cache");
    let missing = c
        .get(app.url("/pkg/..%2Fsecret"))
        .send()
        .await
        .expect("missing");
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    guard.drop_now(app.db.clone()).await;
}

/// Admins change roles, set passwords and disable accounts in the page's server functions:
/// each ends the account's sessions; the last admin stays one; nobody disables themselves;
/// others are refused.
#[tokio::test]
async fn admins_manage_accounts_and_keep_one_admin() {
    let (app, guard) = app_with_users(Store::Sqlite).await;
    let ada = app.signed_in("ada", PW).await.expect("ada");
    let rita = app.signed_in("rita", PW).await.expect("rita");
    let post = |c: &reqwest::Client, path: &str, form: Vec<(&'static str, String)>| {
        let req = c.post(app.url(path)).form(&form);
        async move { req.send().await.expect("request").status() }
    };
    // others may not
    let s = post(
        &rita,
        "/api/users/role",
        vec![("username", "rita".into()), ("role", "admin".into())],
    )
    .await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    // a role change ends the account's sessions
    let s = post(
        &ada,
        "/api/users/role",
        vec![("username", "rita".into()), ("role", "annotator".into())],
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert!(whoami(&app, &rita).await.is_null(), "rita's session ended");
    let rita = app.signed_in("rita", PW).await.expect("rita again");
    assert_eq!(whoami(&app, &rita).await["role"], "annotator");
    // a new password: the old one no longer signs in
    let s = post(
        &ada,
        "/api/users/password",
        vec![
            ("username", "ann".into()),
            ("password", "a-new-long-password".into()),
        ],
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert!(app.signed_in("ann", PW).await.is_err());
    app.signed_in("ann", "a-new-long-password")
        .await
        .expect("new password");
    let s = post(
        &ada,
        "/api/users/password",
        vec![("username", "ann".into()), ("password", "short".into())],
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "too short");
    // disable and enable
    let s = post(
        &ada,
        "/api/users/disable",
        vec![("username", "ann".into()), ("disabled", "true".into())],
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert!(app.signed_in("ann", "a-new-long-password").await.is_err());
    let s = post(
        &ada,
        "/api/users/disable",
        vec![("username", "ann".into()), ("disabled", "false".into())],
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    app.signed_in("ann", "a-new-long-password")
        .await
        .expect("enabled");
    // the last admin stays one and enabled; nobody disables themselves
    let s = post(
        &ada,
        "/api/users/role",
        vec![("username", "ada".into()), ("role", "researcher".into())],
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
    let s = post(
        &ada,
        "/api/users/disable",
        vec![("username", "ada".into()), ("disabled", "true".into())],
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(whoami(&app, &ada).await["role"], "admin");
    let s = post(
        &ada,
        "/api/users/role",
        vec![("username", "nobody".into()), ("role", "admin".into())],
    )
    .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    guard.drop_now(app.db.clone()).await;
}

/// A vote's answer carries the next state, read after the vote's commit: the next item with a
/// fresh submit token and the progress counted with the vote. That item is the annotator's
/// open claim (asking for the state again gets the same one, nothing more is claimed), and a
/// repeated vote (same token) is answered the same way.
async fn a_vote_answers_with_the_next_item(store: Store) {
    use natstudy_tests::participants::{participant, state, vote};
    use natstudy_vocab::ids::ItemId;
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = natstudy_tests::reference_study(&db, "Next", false)
        .await
        .expect("study");
    let (_, invite) = natstudy_tests::open_queue(&db, study, 10)
        .await
        .expect("queue");
    let app = TestApp::start(db.clone()).await.expect("app");
    let c = participant(&app.base, study, &invite).await;
    let first = state(&app.base, &c, study).await.expect("state");
    let rate = |st: &serde_json::Value| {
        (
            st["step"]["Rate"]["item"]
                .as_i64()
                .expect("an item to rate"),
            st["step"]["Rate"]["token"]
                .as_str()
                .expect("token")
                .to_owned(),
        )
    };
    let (a, token_a) = rate(&first);
    assert_eq!(first["done"], 0);
    let answer = |r: reqwest::Response| async move {
        assert_eq!(r.status(), StatusCode::OK);
        r.json::<serde_json::Value>().await.expect("json")
    };
    let next = answer(vote(&app.base, &c, study, ItemId(a), &token_a, "").await).await;
    let (b, token_b) = rate(&next);
    assert_ne!(b, a, "the next item, not the one just rated");
    assert_ne!(token_b, token_a, "a fresh submit token");
    assert_eq!(next["done"], 1, "progress counts the vote");
    assert_eq!(next["total"], first["total"]);
    let again = state(&app.base, &c, study).await.expect("state");
    assert_eq!(rate(&again).0, b, "the answer's item is the open claim");
    let open: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM assignments a JOIN annotators n ON n.id = a.annotator_id \
         WHERE n.study_id = $1 AND a.status = 'leased'",
    )
    .bind(study.0)
    .fetch_one(&db.pool)
    .await
    .expect("count");
    assert_eq!(open, 1, "one claim open: the answer's");
    let repeated = answer(vote(&app.base, &c, study, ItemId(a), &token_a, "").await).await;
    assert_eq!(
        rate(&repeated).0,
        b,
        "a repeated vote gets the same next item"
    );
    assert_eq!(repeated["done"], 1, "and counts once");
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(a_vote_answers_with_the_next_item => a_vote_answers_with_the_next_item_sqlite, a_vote_answers_with_the_next_item_postgres);

/// The survey's `page` (the list of rated items) from a hostile client: a value that is no
/// page number is refused as a bad request, not an internal error; any page number is
/// answered with a page that exists; and the server keeps answering.
#[tokio::test]
async fn a_review_page_number_from_outside_is_bounded() {
    use natstudy_tests::participants;
    let (app, guard) = app_with_users(Store::Sqlite).await;
    let study = natstudy_core::store::studies::create(&app.db, None, "Pages", "")
        .await
        .expect("study");
    natstudy_core::service::imports::import_items_text(
        &app.db,
        study,
        None,
        ("b", ONE_BUG),
        ("t", ONE_ITEM),
    )
    .await
    .expect("items");
    let (_, token) = natstudy_tests::open_queue(&app.db, study, 5)
        .await
        .expect("queue");
    let c = participants::participant(&app.base, study, &token).await;
    let (item, vote_token) = participants::rate_step(&app.base, &c, study)
        .await
        .expect("an item");
    let r = participants::vote(&app.base, &c, study, item, &vote_token, "").await;
    assert_eq!(r.status(), StatusCode::OK);
    let s = study.to_string();
    let state = |page: &str| {
        let form = vec![("study", s.clone()), ("page", page.to_owned())];
        let req = c.post(app.url("/api/annotate/state")).form(&form);
        async move { req.send().await.expect("state") }
    };
    for page in ["0", "1", "2", "4294967295"] {
        let r = state(page).await;
        assert_eq!(r.status(), StatusCode::OK, "page {page}");
        let st: serde_json::Value = r.json().await.expect("json");
        let review = &st["step"]["Review"];
        assert_eq!(
            (
                review["page"].as_u64(),
                review["pages"].as_u64(),
                review["total"].as_u64()
            ),
            (Some(1), Some(1), Some(1)),
            "page {page}: {st}"
        );
    }
    let huge = "9".repeat(10_000);
    for page in ["abc", "-1", "4294967296", "1.5", huge.as_str()] {
        let r = state(page).await;
        assert!(
            r.status().is_client_error(),
            "page {:.20}: {}",
            page,
            r.status()
        );
    }
    assert_eq!(state("1").await.status(), StatusCode::OK, "still answering");
    let db = app.db.clone();
    drop(app);
    guard.drop_now(db).await;
}

/// A participant whose session ended gets a page that explains the resume code and the invite
/// link (and offers sign-in to annotators with an account), not the staff's sign-in page; the
/// start page offers the resume code too.
#[tokio::test]
async fn a_participant_without_a_session_is_told_how_to_continue() {
    let (app, guard) = app_with_users(Store::Sqlite).await;
    let r = app
        .client()
        .get(app.url("/annotate/1"))
        .send()
        .await
        .expect("page");
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let page = r.text().await.expect("html");
    assert!(page.contains("id=\"session-ended\""), "{page}");
    assert!(page.contains("href=\"/resume\""), "{page}");
    assert!(page.contains("invite link"), "{page}");
    assert!(page.contains("/login?next=/annotate/1"), "{page}");
    // so does the start page, where one who lost the link may come
    let home = page_text(&app, "/").await;
    assert!(
        home.contains("<a href=\"/resume\" id=\"home-resume\">"),
        "{home}"
    );
    // staff pages still send anonymous visitors to sign in
    let r = app
        .client()
        .get(app.url("/studies"))
        .send()
        .await
        .expect("page");
    assert!(r.status().is_redirection());
    guard.drop_now(app.db.clone()).await;
}

/// A vote posted as a plain form with fields that cannot be read: a question's answer that is
/// not a number on the scale is unanswered (422, nothing stored); a time or start that is not a
/// number is kept as unknown, the vote itself stands.
#[tokio::test]
async fn malformed_vote_fields_are_refused_or_unknown_never_a_crash() {
    let (app, guard) = app_with_users(Store::Sqlite).await;
    let (study, c, item, submit) = participant_at_an_item(&app, "Malformed").await;
    let (s, i) = (study.to_string(), item.to_string());
    let post = |extra: Vec<(&'static str, String)>| {
        let mut form = vec![
            ("study", s.clone()),
            ("item", i.clone()),
            ("token", submit.clone()),
        ];
        form.extend(extra);
        c.post(app.url("/api/annotate/vote")).form(&form).send()
    };
    for bad in ["abc", "300", "-1", "", "2.5"] {
        let r = post(vec![("cr", bad.into()), ("cc", "2".into())])
            .await
            .expect("answered");
        assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY, "cr={bad:?}");
    }
    let stored = || {
        sqlx::query_as::<_, (i64, Option<f64>, Option<i64>)>(
            "SELECT COUNT(*), MAX(time_secs), MAX(started_at) FROM votes",
        )
        .fetch_one(&app.db.pool)
    };
    assert_eq!(stored().await.expect("votes").0, 0, "nothing stored");
    let r = post(vec![
        ("cr", "3".into()),
        ("cc", "2".into()),
        ("time_secs", "1e999".into()),
        ("started_at", "yesterday".into()),
        ("context_opened", "maybe".into()),
    ])
    .await
    .expect("answered");
    assert!(r.status().is_success(), "{}", r.status());
    assert_eq!(stored().await.expect("votes"), (1, None, None));
    let db = app.db.clone();
    drop(app);
    guard.drop_now(db).await;
}

/// Participants' votes of every kind over HTTP, in the order a slow link makes likely: the
/// first sent before its page was interactive (no time), then an absurd time, then measured
/// ones, a resent submit and a revision, on each store. On PostgreSQL the first vote without a
/// time used to leave the writer's prepared vote statement expecting a 4-byte real, and every
/// measured vote after it was answered 500; each is stored as sent.
async fn every_kind_of_vote_is_stored_over_http(store: Store) {
    use natstudy_tests::participants;
    let (app, guard) = app_with_users(store).await;
    let study = natstudy_tests::reference_study(&app.db, "Vote kinds", false)
        .await
        .expect("study");
    let (_, invite) = natstudy_tests::open_queue(&app.db, study, 10)
        .await
        .expect("queue");
    let base = app.url("");
    let s = study.to_string();
    // each participant's votes carry its number as their comment
    let post = |c: &reqwest::Client,
                who: usize,
                item: i64,
                token: &str,
                cr: u8,
                timing: &[(&str, String)]| {
        let mut form = vec![
            ("study", s.clone()),
            ("comment", format!("p{who}")),
            ("item", item.to_string()),
            ("cr", cr.to_string()),
            ("cc", "2".to_owned()),
            ("token", token.to_owned()),
        ];
        form.extend(timing.iter().map(|(k, v)| (*k, v.clone())));
        c.post(app.url("/api/annotate/vote")).form(&form).send()
    };
    let now = natstudy_core::db::now_ms();
    let measured = |secs: f64| {
        vec![
            ("time_secs", secs.to_string()),
            ("started_at", (now - (secs * 1000.0) as i64).to_string()),
        ]
    };
    // (the form's timing fields, the stored time_secs)
    type Kind = (Vec<(&'static str, String)>, Option<f64>);
    let kinds: Vec<Kind> = vec![
        (vec![], None),
        (vec![("time_secs", "1e999".into())], None),
        (measured(3.5), Some(3.5)),
        (measured(12.25), Some(12.25)),
        (vec![("time_secs", "6.5".into())], Some(6.5)),
        (vec![], None),
        (measured(1.75), Some(1.75)),
    ];
    let mut expected = std::collections::BTreeMap::new();
    let mut participants_seen = Vec::new();
    for (n, (timing, stored)) in kinds.iter().enumerate() {
        let c = participants::participant(&base, study, &invite).await;
        let (item, token) = participants::rate_step(&base, &c, study)
            .await
            .expect("an item");
        let r = post(&c, n, item.0, &token, 1 + (n % 4) as u8, timing)
            .await
            .expect("answered");
        assert_eq!(r.status(), StatusCode::OK, "vote {n} ({timing:?})");
        // the same submit again is one vote
        let again = post(&c, n, item.0, &token, 1 + (n % 4) as u8, timing)
            .await
            .expect("answered");
        assert_eq!(again.status(), StatusCode::OK, "resent vote {n}");
        expected.insert(format!("p{n}"), (1 + (n % 4) as i64, *stored, 1));
        participants_seen.push((c, item));
    }
    // revisions, timed each way, by the first participants
    for (n, (c, item)) in participants_seen.iter().take(3).enumerate() {
        let r = c
            .post(app.url("/api/annotate/state"))
            .form(&[
                ("study", s.as_str()),
                ("revise", item.0.to_string().as_str()),
            ])
            .send()
            .await
            .expect("state");
        let st: serde_json::Value = r.json().await.expect("json");
        let token = st["step"]["Rate"]["token"]
            .as_str()
            .expect("a token")
            .to_owned();
        let (timing, stored) = &kinds[(n + 2) % kinds.len()];
        let r = post(c, n, item.0, &token, 4, timing)
            .await
            .expect("answered");
        assert_eq!(r.status(), StatusCode::OK, "revision {n} ({timing:?})");
        expected.insert(format!("p{n}"), (4, *stored, 2));
    }
    let rows: Vec<(String, i64, Option<f64>, i64)> =
        sqlx::query_as("SELECT comment, cr, time_secs, revision FROM votes")
            .fetch_all(&app.db.pool)
            .await
            .expect("votes");
    let stored: std::collections::BTreeMap<_, _> = rows
        .into_iter()
        .map(|(i, cr, t, r)| (i, (cr, t, r)))
        .collect();
    assert_eq!(stored, expected);
    let db = app.db.clone();
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(every_kind_of_vote_is_stored_over_http => every_kind_of_vote_is_stored_over_http_sqlite, every_kind_of_vote_is_stored_over_http_postgres);

/// Starting a server never stalls the pages another server of the process is rendering: the
/// route list is generated once (its generation suppresses every resource's loading process
/// wide, and a resource first polled meanwhile never loaded — the sign-in page then hung until
/// the client gave up). Servers start over and over while another serves its sign-in page;
/// every page ends within its time.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn starting_a_server_never_stalls_another_servers_pages() {
    let (app, guard) = app_with_users(Store::Sqlite).await;
    let db = app.db.clone();
    let starts = tokio::spawn(async move {
        for _ in 0..40 {
            let other = TestApp::start(db.clone()).await.expect("another server");
            drop(other);
        }
    });
    let c = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(15))
        .build()
        .expect("client");
    let mut pages = 0;
    while !starts.is_finished() || pages < 20 {
        let r = c
            .get(app.url("/login"))
            .send()
            .await
            .expect("the page's head");
        let body = r.text().await.expect("the page ends");
        assert!(body.contains("</html>"), "a whole page");
        pages += 1;
    }
    starts.await.expect("starts");
    guard.drop_now(app.db.clone()).await;
}

/// Without JavaScript, a Submit whose session has ended (the form posts as a plain form) stores
/// nothing and leads back to the survey's address, which explains what happened: the page
/// "Continue the study", with the way back by resume code (whose page is a plain form too)
/// and by the invite link — never a bare error line.
async fn a_lost_session_submit_without_javascript_leads_to_the_resume_page(store: Store) {
    use natstudy_tests::participants::{self, participant};
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, token) = natstudy_tests::small::study(&db, "No script").await;
    let app = TestApp::start(db.clone()).await.expect("server");
    let c = participant(&app.base, study, &token).await;
    let (item, tok) = participants::rate_step(&app.base, &c, study)
        .await
        .expect("an item");
    // the same form from a browser whose cookie is gone
    let gone = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let page = app.url(&format!("/annotate/{study}"));
    let r = gone
        .post(app.url("/api/annotate/vote"))
        .header("accept", "text/html")
        .header("referer", &page)
        .header("origin", &app.base)
        .form(&[
            ("study", study.to_string()),
            ("item", item.to_string()),
            ("cr", "2".into()),
            ("cc", "3".into()),
            ("comment", String::new()),
            ("token", tok),
        ])
        .send()
        .await
        .expect("post");
    assert!(!r.status().is_success(), "{}", r.status());
    let to = r
        .headers()
        .get("location")
        .and_then(|l| l.to_str().ok())
        .expect("sent back to the page")
        .to_owned();
    assert!(to.starts_with(&page), "{to}");
    let back = gone
        .get(&to)
        .header("accept", "text/html")
        .send()
        .await
        .expect("the page");
    let html = back.text().await.expect("html");
    assert!(html.contains("<h1>Continue the study</h1>"), "{html}");
    assert!(html.contains(r#"href="/resume""#), "{html}");
    assert!(html.contains("invite link"), "{html}");
    let votes: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM votes")
        .fetch_one(&db.pool)
        .await
        .expect("votes");
    assert_eq!(votes, 0, "nothing stored without the session");
    let resume = gone
        .get(app.url("/resume"))
        .header("accept", "text/html")
        .send()
        .await
        .expect("resume page");
    let html = resume.text().await.expect("html");
    assert!(
        html.contains("<form"),
        "the resume page works without script: {html}"
    );
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(a_lost_session_submit_without_javascript_leads_to_the_resume_page =>
    a_lost_session_submit_without_javascript_leads_to_the_resume_page_sqlite,
    a_lost_session_submit_without_javascript_leads_to_the_resume_page_postgres);

/// A page that does not exist is one 404 page with a title of its own (it had none).
#[tokio::test]
async fn an_unknown_page_is_a_404_with_a_title() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let app = TestApp::start(db.clone()).await.expect("server");
    let r = app
        .client()
        .get(app.url("/no/such/page"))
        .header("accept", "text/html")
        .send()
        .await
        .expect("page");
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let page = r.text().await.expect("html");
    assert!(
        page.contains("<title>Not found · natstudy</title>"),
        "{page:.3000}"
    );
    assert_eq!(
        page.matches("<h1>Not found").count(),
        1,
        "one heading: {page:.3000}"
    );
    drop(app);
    guard.drop_now(db).await;
}

/// A study that is not there is one 404 page with a title, for an admin (who may open every
/// study) too: not the study page with its message twice and every action form under it; its
/// id percent-encoded alike.
async fn a_missing_study_is_one_404_page(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", "a-long-password", Role::Admin)
        .await
        .expect("admin");
    let c = app
        .signed_in("ada", "a-long-password")
        .await
        .expect("sign in");
    for path in [
        "/studies/99",
        "/studies/99/results",
        "/studies/%399",
        "/studies/x",
    ] {
        let r = c.get(app.url(path)).send().await.expect("page");
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{path}");
        let page = r.text().await.expect("html");
        assert!(
            page.contains("<title>Not found · natstudy</title>"),
            "{path}: {page:.3000}"
        );
        assert_eq!(page.matches("<h1>Not found").count(), 1, "{path}");
        assert!(!page.contains("<form"), "{path}: no action forms");
        if path != "/studies/x" {
            assert_eq!(page.matches("no study 99").count(), 1, "{path}: {page}");
        }
    }
    // a study that is there opens
    let (study, _) = natstudy_tests::small::study(&db, "Here").await;
    let r = c
        .get(app.url(&format!("/studies/{study}")))
        .send()
        .await
        .expect("page");
    assert_eq!(r.status(), StatusCode::OK);
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(a_missing_study_is_one_404_page => a_missing_study_is_one_404_page_sqlite, a_missing_study_is_one_404_page_postgres);

/// A body over the limit is refused in words (its size, the limit, what to do), and to a
/// server function in the encoding its caller reads (it showed "missing delimiter").
#[tokio::test]
async fn a_body_over_the_limit_is_refused_in_words() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let app = TestApp::start(db.clone()).await.expect("server");
    let r = app
        .client()
        .post(app.url("/api/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(vec![b'a'; 3 << 20])
        .send()
        .await
        .expect("answered");
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let text = r.text().await.expect("text");
    assert!(
        text.starts_with("ServerError|This is 3.1 MB and the limit here is ")
            && text.contains("natstudy import"),
        "{text}"
    );
    drop(app);
    guard.drop_now(db).await;
}

/// `/annotate/{id}` is decided by the guard, the same way every time: a signed-in account
/// that is no annotator of the study (an annotator account, a researcher, an admin) gets the
/// refusal page (403) on every load, where the page's first answer once raced its headers
/// (200 or 403 at random); the study's own participant gets the page on every load, and a
/// participant of another study the way back in (401), never the page.
async fn the_survey_page_decides_the_same_way_every_time(store: Store) {
    use natstudy_tests::participants::participant;
    let (app, guard) = app_with_users(store).await;
    let (study, token) = natstudy_tests::small::study(&app.db, "Decided").await;
    let (other, other_token) = natstudy_tests::small::study(&app.db, "Other").await;
    let page = app.url(&format!("/annotate/{study}"));
    for who in ["ann", "rita", "ada"] {
        let c = app.signed_in(who, PW).await.expect("signed in");
        for _ in 0..12 {
            let r = c.get(&page).send().await.expect("page");
            assert_eq!(r.status(), StatusCode::FORBIDDEN, "{who}");
        }
    }
    let mine = participant(&app.base, study, &token).await;
    let elsewhere = participant(&app.base, other, &other_token).await;
    for _ in 0..12 {
        let r = mine.get(&page).send().await.expect("page");
        assert_eq!(r.status(), StatusCode::OK);
        let r = elsewhere.get(&page).send().await.expect("page");
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        let body = r.text().await.expect("html");
        assert!(body.contains("session-ended"), "the way back in");
    }
    let db = app.db.clone();
    drop(app);
    guard.drop_now(db).await;
}

#[tokio::test]
async fn the_survey_page_decides_the_same_way_every_time_sqlite() {
    the_survey_page_decides_the_same_way_every_time(Store::Sqlite).await;
}

#[tokio::test]
async fn the_survey_page_decides_the_same_way_every_time_postgres() {
    the_survey_page_decides_the_same_way_every_time(Store::Postgres).await;
}
