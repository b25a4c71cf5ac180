//! The authorisation matrix: every study-scoped route and a study-scoped server function of each
//! area × every kind of client (admin, owner, member, another study's researcher, annotator,
//! participant, anonymous) × every spelling of the study's id (plain, percent-encoded, `+1`,
//! `01`, overlong, negative). Authorisation is decided on the decoded, typed id: a spelling the
//! router decodes to the study is that study, and nobody outside it reads or writes anything
//! of it, whatever the path looked like. The writes beside the reads: a model upload, stopping a
//! job and running one again. On SQLite and PostgreSQL.

use natstudy_core::service::jobs::JobKind;
use natstudy_core::store::members::MemberRole;
use natstudy_core::store::JobState;
use natstudy_tests::{fresh_db, on_both_stores, participants, Role, Store, TestApp};
use natstudy_vocab::ids::StudyId;
use reqwest::StatusCode;

const PW: &str = "a-long-password";

#[derive(Debug, Clone, Copy, PartialEq)]
enum Who {
    Admin,
    Owner,
    Member,
    OtherResearcher,
    Annotator,
    Participant,
    Anonymous,
}

impl Who {
    /// Whether this client may act on the study as staff.
    fn is_staff(self) -> bool {
        matches!(self, Who::Admin | Who::Owner | Who::Member)
    }
}

/// The study id as a path segment, in each spelling; `true` when the router decodes it to the
/// study itself.
fn spellings(study: StudyId) -> Vec<(String, bool)> {
    let plain = study.to_string();
    vec![
        (plain.clone(), true),
        (percent_encoded(&plain), true),
        (format!("%2B{plain}"), true),
        (format!("0{plain}"), true),
        (format!("{}{plain}", "9".repeat(30)), false),
        (format!("-{plain}"), false),
    ]
}

/// `s` with every byte percent-encoded.
fn percent_encoded(s: &str) -> String {
    s.bytes().map(|b| format!("%{b:02X}")).collect()
}

/// Something of the study only its staff may see: a comment in its votes.
const SECRET: &str = "only-the-staff-may-read-this";

async fn matrix(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("database");
    let app = TestApp::start(db).await.expect("server");
    for (name, role) in [
        ("ada", Role::Admin),
        ("olga", Role::Researcher),
        ("rita", Role::Researcher),
        ("rob", Role::Researcher),
        ("ann", Role::Annotator),
    ] {
        app.add_user(name, PW, role).await.expect("user");
    }
    let study = natstudy_tests::reference_study(&app.db, "S", false)
        .await
        .expect("study");
    app.add_member_as(study, "olga", MemberRole::Owner)
        .await
        .expect("owner");
    app.add_member(study, "rita").await.expect("member");
    // rob owns a study of his own: he is a researcher, just not of this one
    let robs = natstudy_core::store::studies::create(&app.db, None, "Rob's", "")
        .await
        .expect("rob's study");
    app.add_member_as(robs, "rob", MemberRole::Owner)
        .await
        .expect("rob owns");
    // a participant who voted with a comment only staff may read; then the reference votes,
    // so the results have charts
    let (_, token) = natstudy_tests::open_queue(&app.db, study, 5)
        .await
        .expect("invite");
    let participant = participants::participant(&app.base, study, &token).await;
    let (item, submit) = participants::rate_step(&app.base, &participant, study)
        .await
        .expect("an item");
    let r = participants::vote(&app.base, &participant, study, item, &submit, SECRET).await;
    assert!(r.status().is_success(), "vote: {}", r.status());
    natstudy_core::service::imports::import_votes(
        &app.db,
        study,
        &natstudy_tests::reference_dir().join("study-small/survey.json"),
    )
    .await
    .expect("votes");

    let clients = [
        (Who::Admin, app.signed_in("ada", PW).await.expect("ada")),
        (Who::Owner, app.signed_in("olga", PW).await.expect("olga")),
        (Who::Member, app.signed_in("rita", PW).await.expect("rita")),
        (
            Who::OtherResearcher,
            app.signed_in("rob", PW).await.expect("rob"),
        ),
        (Who::Annotator, app.signed_in("ann", PW).await.expect("ann")),
        (Who::Participant, participant),
        (Who::Anonymous, app.client()),
    ];

    // the study's background jobs: a tiny model to run them again with
    std::fs::write(
        app.models_dir.join("jobs.arpa"),
        "\\data\\\nngram 1=2\n\n\\1-grams:\n-1\t<s>\n-1\t</s>\n\n\\end\\\n",
    )
    .expect("model");
    let job_params = r#"{"model":"jobs.arpa","log10":false}"#;
    let new_job = || {
        natstudy_core::store::jobs::create(
            &app.db,
            study,
            None,
            JobKind::Score,
            "score",
            job_params,
        )
    };
    let job_state = |job| {
        let db = app.db.clone();
        async move {
            natstudy_core::store::jobs::get(&db, study, job)
                .await
                .expect("jobs")
                .expect("job")
                .1
        }
    };
    // (the jobs list shows the latest 20)
    let jobs_count = || {
        let db = app.db.clone();
        async move {
            sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM jobs WHERE study_id = $1")
                .bind(study)
                .fetch_one(&db.pool)
                .await
                .expect("jobs")
        }
    };

    let mut failures = Vec::new();
    for (id, is_study) in spellings(study) {
        for (who, c) in &clients {
            // staff on the study itself must be served; everyone else refused; staff on
            // another id (none exists) get no download and write nothing
            let allowed = who.is_staff() && is_study;
            let refused = !who.is_staff() || !is_study;
            // downloads: every export and both chart formats
            for what in [
                "votes.csv",
                "dataset.jsonl",
                "dataset.csv",
                "matrix.csv",
                "survey.json",
                // natstudy's participant codes beside their survey numbers
                "survey-participants.csv",
                // the crowd platform's ids: for the study's staff only
                "participants.csv",
            ] {
                let path = format!("/studies/{id}/export/{what}");
                let r = c.get(app.url(&path)).send().await.expect("export");
                let status = r.status();
                let body = r.text().await.unwrap_or_default();
                if allowed && status != StatusCode::OK {
                    failures.push(format!("{who:?} {path}: {status}, expected 200"));
                }
                if refused && status.is_success() {
                    failures.push(format!("{who:?} {path}: {status}, expected a refusal"));
                }
                if refused && body.contains(SECRET) {
                    failures.push(format!("{who:?} {path}: the study's votes leaked"));
                }
                if allowed && what == "votes.csv" && !body.contains(SECRET) {
                    failures.push(format!("{who:?} {path}: the votes are not there"));
                }
            }
            // figures (every format), tables (both) and the paper's zip
            for file in [
                "charts/naturalness_by_level.svg",
                "charts/time_by_level.png",
                "charts/naturalness_by_level.pdf",
                "tables/naturalness.csv",
                "tables/naturalness.tex",
                "paper.zip",
            ] {
                let path = format!("/studies/{id}/{file}");
                let r = c.get(app.url(&path)).send().await.expect("chart");
                let status = r.status();
                if allowed != (status == StatusCode::OK) {
                    failures.push(format!("{who:?} {path}: {status} (allowed: {allowed})"));
                }
            }
            // a model upload writes nothing for anyone outside the study
            let name = format!("m-{}.arpa", failures.len() + rand::random::<u32>() as usize);
            let form = reqwest::multipart::Form::new().part(
                "model",
                reqwest::multipart::Part::bytes(
                    b"\\data\\\nngram 1=2\n\n\\1-grams:\n-1\t<s>\n-1\t</s>\n\n\\end\\\n".to_vec(),
                )
                .file_name(name.clone()),
            );
            let path = format!("/studies/{id}/models");
            let r = c
                .post(app.url(&path))
                .multipart(form)
                .send()
                .await
                .expect("upload");
            let status = r.status();
            // stored: back to the study page; refused: an error, or off to sign in
            let to_sign_in = r
                .headers()
                .get("location")
                .and_then(|l| l.to_str().ok())
                .is_some_and(|l| l.starts_with("/login"));
            let stored = status.is_success() || (status.is_redirection() && !to_sign_in);
            let written = app.models_dir.join(&name).exists();
            if allowed && !stored {
                failures.push(format!("{who:?} POST {path}: {status}, expected stored"));
            }
            if refused && stored {
                failures.push(format!("{who:?} POST {path}: {status}, expected a refusal"));
            }
            if allowed != written {
                failures.push(format!(
                    "{who:?} POST {path}: model written: {written} (allowed: {allowed})"
                ));
            }
            // the study's pages: never 200 outside the study (anonymous: sent to sign in)
            for page in ["", "/results"] {
                let path = format!("/studies/{id}{page}");
                let r = c.get(app.url(&path)).send().await.expect("page");
                let status = r.status();
                let body = r.text().await.unwrap_or_default();
                if !who.is_staff() && body.contains(SECRET) {
                    failures.push(format!("{who:?} {path}: the study's data leaked"));
                }
                if who.is_staff()
                    && page.is_empty()
                    && id == study.to_string()
                    && status != StatusCode::OK
                {
                    failures.push(format!("{who:?} {path}: {status}, expected 200"));
                }
                if !who.is_staff() && status == StatusCode::OK {
                    failures.push(format!("{who:?} {path}: 200, expected a refusal"));
                }
            }
            // server functions take the id as a form field: decoded by the form reader and
            // checked on the typed id like any other
            for (f, field) in [
                ("/api/studies/monitor", "study"),
                ("/api/studies/results", "study"),
                ("/api/studies/detail", "id"),
            ] {
                let body = format!("{field}={id}");
                let r = c
                    .post(app.url(f))
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body(body.clone())
                    .send()
                    .await
                    .expect("server function");
                let status = r.status();
                if (allowed && !status.is_success()) || (!who.is_staff() && status.is_success()) {
                    failures.push(format!(
                        "{who:?} POST {f} {body}: {status} (allowed: {allowed})"
                    ));
                }
            }
            // the study's jobs: stopping a queued one and running a stopped one again write
            // something only for the study's staff; the job's own id is decoded and typed too
            let queued = new_job().await.expect("job");
            // (the form as written, like the other server functions': the spelling is the
            // field's encoded value)
            let form = |job: String| format!("study={id}&job={job}");
            let r = c
                .post(app.url("/api/studies/jobs/stop"))
                .header("content-type", "application/x-www-form-urlencoded")
                .body(form(format!("0{queued}")))
                .send()
                .await
                .expect("stop");
            let status = r.status();
            let state = job_state(queued).await;
            if allowed && !(status.is_success() && state == JobState::Stopped) {
                failures.push(format!(
                    "{who:?} stop job {queued} of {id}: {status}, {state:?}; expected stopped"
                ));
            }
            if refused && (status.is_success() || state != JobState::Queued) {
                failures.push(format!(
                    "{who:?} stop job {queued} of {id}: {status}, {state:?}; expected a refusal"
                ));
            }
            if state == JobState::Queued {
                natstudy_core::service::jobs::stop(&app.db, study, queued)
                    .await
                    .expect("stopped by the test");
            }
            let before = jobs_count().await;
            let r = c
                .post(app.url("/api/studies/jobs/retry"))
                .header("content-type", "application/x-www-form-urlencoded")
                // the job's id percent-encoded, every digit
                .body(form(percent_encoded(&queued.to_string())))
                .send()
                .await
                .expect("retry");
            let status = r.status();
            let added = jobs_count().await - before;
            if allowed && !(status.is_success() && added == 1) {
                failures.push(format!(
                    "{who:?} retry job {queued} of {id}: {status}, {added} jobs added; expected 1"
                ));
            }
            if refused && (status.is_success() || added != 0) {
                failures.push(format!(
                    "{who:?} retry job {queued} of {id}: {status}, {added} jobs added; expected a refusal"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    guard.drop_now(app.db.clone()).await;
}

/// The one server function whose input is JSON (`studies/import`, admins): the study id in the
/// JSON body, in every spelling that parses, decoded and checked like any other; a refused
/// import writes nothing.
async fn json_import(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("database");
    let app = TestApp::start(db).await.expect("server");
    for (name, role) in [
        ("ada", Role::Admin),
        ("olga", Role::Researcher),
        ("ann", Role::Annotator),
    ] {
        app.add_user(name, PW, role).await.expect("user");
    }
    let study = natstudy_tests::reference_study(&app.db, "S", false)
        .await
        .expect("study");
    app.add_member_as(study, "olga", MemberRole::Owner)
        .await
        .expect("owner");
    let target: String = sqlx::query_scalar("SELECT bug_key FROM bugs WHERE study_id = $1 LIMIT 1")
        .bind(study)
        .fetch_one(&app.db.pool)
        .await
        .expect("a bug");
    let clients = [
        (Who::Admin, app.signed_in("ada", PW).await.expect("ada")),
        (Who::Owner, app.signed_in("olga", PW).await.expect("olga")),
        (Who::Annotator, app.signed_in("ann", PW).await.expect("ann")),
        (Who::Anonymous, app.client()),
    ];
    let mut failures = Vec::new();
    let plain = study.to_string();
    for id in [
        plain.clone(),
        format!("{plain}.0"),
        format!("{plain}e0"),
        format!("\"{plain}\""),
        format!("{}{plain}", "9".repeat(30)),
        format!("-{plain}"),
    ] {
        for (n, (who, c)) in clients.iter().enumerate() {
            let model = format!("authz{n}{}", id.len());
            let csv = format!("model,target,cross_entropy\n{model},{target},1.5\n");
            let body = format!(
                r#"{{"study":{id},"kind":"ce","files":[["ce.csv",{}]]}}"#,
                serde_json::Value::String(csv)
            );
            let r = c
                .post(app.url("/api/studies/import"))
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .expect("import");
            let status = r.status();
            let written: i64 =
                sqlx::query_scalar("SELECT COUNT(*) FROM ce_scores WHERE model = $1")
                    .bind(&model)
                    .fetch_one(&app.db.pool)
                    .await
                    .expect("count");
            // only an admin, and only with an id that is the study's
            let may = matches!(who, Who::Admin) && status.is_success();
            if written > 0 && !matches!(who, Who::Admin) {
                failures.push(format!("{who:?} {id}: {status}, wrote {written} rows"));
            }
            if status.is_success() && !matches!(who, Who::Admin) {
                failures.push(format!("{who:?} {id}: {status}, expected a refusal"));
            }
            if may != (written > 0) {
                failures.push(format!("{who:?} {id}: {status}, wrote {written} rows"));
            }
            if matches!(who, Who::Admin) && id == plain && !status.is_success() {
                failures.push(format!("{who:?} {id}: {status}, expected an import"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    guard.drop_now(app.db.clone()).await;
}

on_both_stores!(json_import => the_json_import_authorises_the_decoded_id_sqlite, the_json_import_authorises_the_decoded_id_postgres);

on_both_stores!(matrix => every_route_authorises_the_decoded_id_sqlite, every_route_authorises_the_decoded_id_postgres);
