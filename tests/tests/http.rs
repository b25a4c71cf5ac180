//! Real HTTP against a running server, on SQLite and on PostgreSQL: sign-in, sessions shared
//! by several instances, the role matrix, CSRF refusal.

use natstudy_tests::{fresh_db, Role, Store, TestApp};
use reqwest::StatusCode;

const PW: &str = "a-long-password";

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

/// Every protected page and server function, for every role (and nobody).
async fn role_matrix(store: Store) {
    let (app, guard) = app_with_users(store).await;
    let study = natstudy::store::studies::create(&app.db, None, "S", "")
        .await
        .expect("study");
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
    ];
    for (method, path, form, allowed) in &cases {
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
    // what the refused calls would have done did not happen
    let users = natstudy::store::users::list(&app.db).await.expect("users");
    assert_eq!(users.iter().filter(|u| u.username == "new-user").count(), 1);
    let studies = natstudy::store::studies::list(&app.db)
        .await
        .expect("studies");
    assert_eq!(studies.iter().filter(|s| s.name == "made-here").count(), 1);
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
    assert!(natstudy::store::users::credentials(&app.db, "csrf-victim")
        .await
        .expect("db")
        .is_none());
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
