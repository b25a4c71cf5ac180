//! A paid crowd study over real HTTP, on both stores: the work asked of each participant (N),
//! no completion code while items held by others may still come, the partial code after the
//! study's wait, the way back to the platform with the code, and the screener's screen-out.

use natstudy_core::service::Db;
use natstudy_tests::participants::{self, participant};
use natstudy_tests::{fresh_db, on_both_stores, Store, TestApp};
use natstudy_vocab::ids::{AnnotatorId, StudyId};

const COMPLETE: &str = "https://app.prolific.com/submissions/complete?cc={code}";

/// A study of three items, k = 1, N = 2, a partial code after 15 minutes of waiting, a
/// completion URL, and an invite into a dynamic queue.
async fn crowd_study(db: &Db) -> (StudyId, String) {
    let study = natstudy_tests::small::items(db, "Crowd").await;
    let mut s = natstudy_core::service::studies::settings(db, study)
        .await
        .expect("settings");
    s.ratings_per_item = 1;
    s.items_per_participant = Some(2);
    s.completion_code = "DONE42".into();
    s.completion_url = COMPLETE.into();
    s.partial_code = "PART7".into();
    s.partial_after_minutes = Some(15);
    s.screenout_code = "SCRN9".into();
    s.screenout_url = "https://example.org/screened?code={code}".into();
    natstudy_core::service::studies::update_settings(db, study, None, &s)
        .await
        .expect("settings");
    let (_, token) = natstudy_tests::open_queue(db, study, 20)
        .await
        .expect("invite");
    (study, token)
}

/// The annotator a participant's client is (from its state's code).
async fn annotator_of(db: &Db, study: StudyId, state: &serde_json::Value) -> AnnotatorId {
    let code = state["code"].as_str().expect("code");
    sqlx::query_scalar("SELECT id FROM annotators WHERE study_id = $1 AND code = $2")
        .bind(study)
        .bind(code)
        .fetch_one(&db.pool)
        .await
        .expect("annotator")
}

/// Rates the item the participant is given (`what` it is) and returns the state the vote's
/// answer carries.
async fn rate_one(
    base: &str,
    c: &reqwest::Client,
    study: StudyId,
    what: &str,
) -> serde_json::Value {
    let (item, tok) = participants::rate_step(base, c, study)
        .await
        .unwrap_or_else(|| panic!("{what}"));
    let answer = participants::vote(base, c, study, item, &tok, "").await;
    natstudy::survey_client::next_state(answer)
        .await
        .expect("vote")
        .expect("the next state")
}

async fn finish(base: &str, c: &reqwest::Client, study: StudyId) -> serde_json::Value {
    let r = c
        .post(format!("{base}/api/annotate/finish"))
        .form(&[("study", study.to_string())])
        .send()
        .await
        .expect("finish");
    assert!(
        r.status().is_success() || r.status().is_redirection(),
        "{}",
        r.status()
    );
    let state = participants::state(base, c, study).await.expect("state");
    state["step"]["Finished"].clone()
}

/// Four participants: two take an item each and leave; the third rates the last free item and
/// waits (no finish, no code: "1 of 2"); the fourth stops while waiting and gets no code; a
/// fifth, who waited past the study's 15 minutes, stops with the partial code. When the
/// leavers' leases lapse the third rates one more, reaches N and — though an item is free
/// again — gets no third: finishing gives the completion code and the platform's URL with it.
/// A participant the screener turns away gets the screen-out code and URL, and rates nothing.
async fn a_crowd_participant_is_paid_for_the_work_asked(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, token) = crowd_study(&db).await;
    let app = TestApp::start(db.clone()).await.expect("server");
    let base = app.base.clone();

    // two take an item each and leave
    let mut leavers = Vec::new();
    for _ in 0..2 {
        let c = participant(&base, study, &token).await;
        let s = participants::state(&base, &c, study).await.expect("state");
        assert!(participants::rate_step(&base, &c, study).await.is_some());
        leavers.push(annotator_of(&db, study, &s).await);
    }

    // the third rates the last free item, then waits: 1 of 2, no finish
    let third = participant(&base, study, &token).await;
    let next = rate_one(&base, &third, study, "the last free item").await;
    let review = &next["step"]["Review"];
    assert_eq!(next["done"], 1, "{next}");
    assert_eq!(next["total"], 2, "the work asked is N: {next}");
    let waiting = &review["waiting"];
    assert_eq!(waiting["required"], 2, "{next}");
    assert_eq!(waiting["partial_offered"], false, "{next}");
    let later = waiting["partial_in_secs"].as_u64().expect("partial later");
    assert!((890..=900).contains(&later), "{later}");
    assert!(
        waiting["free_in_secs"].as_u64().expect("free in") > 500,
        "the leavers' leases run 10 minutes: {next}"
    );
    let third_id = annotator_of(&db, study, &next).await;

    // the fourth stops while waiting: no code, no way back with one
    let fourth = participant(&base, study, &token).await;
    let s = participants::state(&base, &fourth, study)
        .await
        .expect("state");
    assert!(s["step"]["Review"]["waiting"].is_object(), "{s}");
    let end = finish(&base, &fourth, study).await;
    assert_eq!(end["outcome"], "Returned", "{end}");
    assert!(end["completion_code"].is_null(), "{end}");
    assert!(end["redirect"].is_null(), "{end}");

    // the fifth waited past the study's 15 minutes: the partial code, through the platform
    let fifth = participant(&base, study, &token).await;
    let s = participants::state(&base, &fifth, study)
        .await
        .expect("state");
    assert_eq!(s["step"]["Review"]["waiting"]["partial_offered"], false);
    let fifth_id = annotator_of(&db, study, &s).await;
    let since: Option<i64> =
        sqlx::query_scalar("SELECT waiting_since FROM annotators WHERE id = $1")
            .bind(fifth_id)
            .fetch_one(&db.pool)
            .await
            .expect("waiting since");
    let since = since.expect("the wait is noted when first seen");
    let mut tx = db.begin_write(study).await.expect("write");
    sqlx::query("UPDATE annotators SET waiting_since = $1 WHERE id = $2")
        .bind(since - 16 * 60_000)
        .bind(fifth_id)
        .execute(&mut *tx)
        .await
        .expect("an older wait");
    tx.commit().await.expect("commit");
    let s = participants::state(&base, &fifth, study)
        .await
        .expect("state");
    assert_eq!(
        s["step"]["Review"]["waiting"]["partial_offered"], true,
        "{s}"
    );
    let end = finish(&base, &fifth, study).await;
    assert_eq!(end["outcome"], "Partial", "{end}");
    assert_eq!(end["completion_code"], "PART7", "{end}");
    assert_eq!(
        end["redirect"],
        COMPLETE.replace("{code}", "PART7"),
        "{end}"
    );

    // the leavers' leases lapse: the third gets one of their items, rates it and reaches N
    let now = natstudy_core::db::now_ms();
    let mut tx = db.begin_write(study).await.expect("write");
    for a in &leavers {
        sqlx::query(
            "UPDATE assignments SET lease_expires_at = $1, created_at = $2 WHERE annotator_id = $3",
        )
        .bind(now - 1)
        .bind(now - 3_600_000)
        .bind(*a)
        .execute(&mut *tx)
        .await
        .expect("lapse");
    }
    tx.commit().await.expect("commit");
    let next = rate_one(&base, &third, study, "a freed item").await;
    // another item is free, but the work asked is done: no third item, no wait
    let review = &next["step"]["Review"];
    assert!(review.is_object(), "no more items after N: {next}");
    assert!(review["waiting"].is_null(), "{next}");
    assert_eq!(review["required"], 2);
    assert_eq!(next["done"], 2);
    let claims: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM assignments WHERE annotator_id = $1 AND status <> 'done'",
    )
    .bind(third_id)
    .fetch_one(&db.pool)
    .await
    .expect("claims");
    assert_eq!(claims, 0, "the third holds nothing beyond N");
    let end = finish(&base, &third, study).await;
    assert_eq!(end["outcome"], "Completed", "{end}");
    assert_eq!(end["completion_code"], "DONE42", "{end}");
    assert_eq!(
        end["redirect"],
        COMPLETE.replace("{code}", "DONE42"),
        "{end}"
    );
    // finishing again changes nothing
    let again = finish(&base, &third, study).await;
    assert_eq!(again, end);

    // the screener turns a participant away: the screen-out code and URL, no item
    let mut s = natstudy_core::service::studies::settings(&db, study)
        .await
        .expect("settings");
    s.screener_json = r#"[{"name":"years","label":"Years of Java","options":["<1","1-3",">3"],"screen_out":["<1"]},
                          {"name":"role","label":"Role","options":["student","developer"]}]"#
        .into();
    natstudy_core::service::studies::update_settings(&db, study, None, &s)
        .await
        .expect("screener");
    let out = participants::client();
    out.post(format!("{base}/api/join"))
        .form(&[("token", token.as_str())])
        .send()
        .await
        .expect("join")
        .error_for_status()
        .expect("joined");
    let r = out
        .post(format!("{base}/api/annotate/consent"))
        .form(&[
            ("study", study.to_string().as_str()),
            ("answers[years]", "<1"),
            ("answers[role]", "student"),
        ])
        .send()
        .await
        .expect("consent");
    assert!(
        r.status().is_success() || r.status().is_redirection(),
        "{}",
        r.status()
    );
    let s = participants::state(&base, &out, study)
        .await
        .expect("state");
    let end = &s["step"]["Finished"];
    assert_eq!(end["outcome"], "ScreenedOut", "{s}");
    assert_eq!(end["completion_code"], "SCRN9", "{s}");
    assert_eq!(
        end["redirect"], "https://example.org/screened?code=SCRN9",
        "{s}"
    );
    let out_id = annotator_of(&db, study, &s).await;
    let (outcome, claims): (Option<String>, i64) = sqlx::query_as(
        "SELECT outcome, (SELECT COUNT(*) FROM assignments WHERE annotator_id = $1) FROM annotators WHERE id = $1",
    )
    .bind(out_id)
    .fetch_one(&db.pool)
    .await
    .expect("recorded");
    assert_eq!(outcome.as_deref(), Some("screened_out"));
    assert_eq!(claims, 0, "a screened-out participant claims nothing");

    // every outcome is recorded
    let outcomes: Vec<(i64, Option<String>)> =
        sqlx::query_as("SELECT id, outcome FROM annotators WHERE study_id = $1 ORDER BY id")
            .bind(study)
            .fetch_all(&db.pool)
            .await
            .expect("outcomes");
    let of = |id: AnnotatorId| {
        outcomes
            .iter()
            .find(|(a, _)| *a == id.get())
            .and_then(|(_, o)| o.clone())
    };
    assert_eq!(of(third_id).as_deref(), Some("completed"));
    assert_eq!(of(fifth_id).as_deref(), Some("partial"));
    assert_eq!(of(leavers[0]), None, "still in progress");
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(a_crowd_participant_is_paid_for_the_work_asked =>
    a_crowd_participant_is_paid_for_the_work_asked_sqlite,
    a_crowd_participant_is_paid_for_the_work_asked_postgres);

/// The study page's form sets the crowd settings (its `crowd[…]` fields; an empty number is
/// none), refuses a URL that is not http(s), and `natstudy study set` sets the same, `study
/// show` printing them; `none` clears one.
async fn crowd_settings_are_set_by_the_page_and_the_cli(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, _) = crowd_study(&db).await;
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", "a long password", natstudy_tests::Role::Admin)
        .await
        .expect("admin");
    let c = app.signed_in("ada", "a long password").await.expect("ada");
    let save = |fields: Vec<(&'static str, &'static str)>| {
        let c = c.clone();
        let url = app.url("/api/studies/settings");
        let mut form = vec![
            ("study", study.to_string()),
            ("ratings_per_item", "3".to_string()),
            ("guideline", "Rate it.".to_string()),
            ("completion_code", "C0DE".to_string()),
        ];
        form.extend(fields.into_iter().map(|(k, v)| (k, v.to_string())));
        async move { c.post(url).form(&form).send().await.expect("save") }
    };
    let r = save(vec![
        ("crowd[items_per_participant]", "12"),
        ("crowd[partial_after_minutes]", ""),
        (
            "crowd[completion_url]",
            "https://app.prolific.com/submissions/complete?cc={code}",
        ),
        ("crowd[screenout_code]", " OUT1 "),
    ])
    .await;
    assert!(r.status().is_success(), "{}", r.status());
    let s = natstudy_core::service::studies::settings(&db, study)
        .await
        .expect("settings");
    assert_eq!(s.ratings_per_item, 3);
    assert_eq!(s.items_per_participant, Some(12));
    assert_eq!(s.partial_after_minutes, None);
    assert_eq!(s.partial_code, "", "a field the form leaves out is cleared");
    assert_eq!(
        s.completion_url,
        "https://app.prolific.com/submissions/complete?cc={code}"
    );
    assert_eq!(s.screenout_code, "OUT1");
    let r = save(vec![("crowd[completion_url]", "javascript:alert(1)")]).await;
    assert!(!r.status().is_success(), "a script URL is refused");
    assert!(r.text().await.expect("body").contains("the completion URL"));
    let r = save(vec![("crowd[items_per_participant]", "many")]).await;
    assert!(!r.status().is_success());
    assert_eq!(
        natstudy_core::service::studies::settings(&db, study)
            .await
            .expect("settings")
            .items_per_participant,
        Some(12),
        "a refused form changes nothing"
    );

    // the command line
    let url = db.url.clone();
    natstudy_tests::cli(
        &url,
        &[
            "study",
            "set",
            "--study",
            "Crowd",
            "--items-per-participant",
            "none",
            "--partial-code",
            "HALF",
            "--partial-after-minutes",
            "20",
            "--screenout-url",
            "https://example.org/out?c={code}",
        ],
    )
    .await
    .expect("study set");
    let s = natstudy_core::service::studies::settings(&db, study)
        .await
        .expect("settings");
    assert_eq!(s.items_per_participant, None);
    assert_eq!(s.partial_code, "HALF");
    assert_eq!(s.partial_after_minutes, Some(20));
    assert_eq!(s.screenout_url, "https://example.org/out?c={code}");
    assert_eq!(s.screenout_code, "OUT1", "what is not given stays");
    let refused = natstudy_tests::cli(
        &url,
        &[
            "study",
            "set",
            "--study",
            "Crowd",
            "--partial-after-minutes",
            "soon",
        ],
    )
    .await
    .expect_err("not a number");
    assert!(
        refused.to_string().contains("--partial-after-minutes"),
        "{refused}"
    );
    let refused = natstudy_tests::cli(
        &url,
        &[
            "study",
            "set",
            "--study",
            "Crowd",
            "--completion-url",
            "ftp://x/y",
        ],
    )
    .await
    .expect_err("not http(s)");
    assert!(
        format!("{refused:#}").contains("the completion URL"),
        "{refused:#}"
    );
    let out = std::process::Command::new(natstudy_tests::natstudy_bin().expect("binary"))
        .args(["--database-url", &url, "study", "show", "--study", "Crowd"])
        .output()
        .expect("study show");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown: natstudy_types::StudySettingsForm =
        serde_json::from_slice(&out.stdout).expect("study show prints the settings as JSON");
    assert_eq!(shown, s);
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(crowd_settings_are_set_by_the_page_and_the_cli =>
    crowd_settings_are_set_by_the_page_and_the_cli_sqlite,
    crowd_settings_are_set_by_the_page_and_the_cli_postgres);

/// Joins through the invite as a browser does, with the crowd ids the link carried
/// (`platform`, participant id, study, session), consents and reads the guideline.
async fn join_as(
    base: &str,
    study: StudyId,
    token: &str,
    ids: [&str; 4],
) -> Result<reqwest::Client, String> {
    let c = participants::client();
    let r = c
        .post(format!("{base}/api/join"))
        .form(&[
            ("token", token),
            ("platform", ids[0]),
            ("pid", ids[1]),
            ("ext_study", ids[2]),
            ("ext_session", ids[3]),
        ])
        .send()
        .await
        .expect("join");
    if !(r.status().is_success() || r.status().is_redirection()) {
        return Err(format!(
            "{}: {}",
            r.status(),
            r.text().await.unwrap_or_default()
        ));
    }
    for step in 1..natstudy::survey_client::JOIN_STEPS.len() {
        natstudy::survey_client::join_step(&c, base, study, token, step)
            .await
            .expect("join step");
    }
    Ok(c)
}

/// One platform id is one participant: Prolific's id joining again from another browser
/// continues the same participant (the invite's place used once); MTurk's ids are kept as
/// theirs; an unknown platform or an overlong id is refused. The monitor shows the ids, and
/// the participants table — `export --what participants` and the study page's download, the
/// same bytes — lists each participant's ids, times, work, outcome and code, gold and
/// screener answers.
async fn platform_ids_make_one_participant_and_the_table_lists_them(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, token) = crowd_study(&db).await;
    let app = TestApp::start(db.clone()).await.expect("server");
    let base = app.base.clone();
    let prolific = ["prolific", "5f00aa11", "STUDY-1", "SESSION-1"];
    let first = join_as(&base, study, &token, prolific)
        .await
        .expect("joined");
    let second = join_as(&base, study, &token, prolific)
        .await
        .expect("joined again");
    let s1 = participants::state(&base, &first, study)
        .await
        .expect("state");
    let s2 = participants::state(&base, &second, study)
        .await
        .expect("state");
    assert_eq!(s1["code"], s2["code"], "one Prolific id, one participant");
    let used: i64 = sqlx::query_scalar("SELECT used FROM invites WHERE study_id = $1")
        .bind(study)
        .fetch_one(&db.pool)
        .await
        .expect("used");
    assert_eq!(used, 1, "the second browser used no place of the invite");
    let mturk = join_as(
        &base,
        study,
        &token,
        ["mturk", "A1WORKER", "HIT-9", "ASSIGN-3"],
    )
    .await
    .expect("mturk");
    let waiting = join_as(&base, study, &token, ["", "plain-7", "", ""])
        .await
        .expect("generic");
    for (ids, why) in [
        (["facebook", "x1", "", ""], "platform"),
        (["prolific", &"x".repeat(129), "", ""], "pid"),
    ] {
        let refused = join_as(&base, study, &token, ids).await.err();
        assert!(refused.is_some_and(|e| e.contains(why)), "{why}");
    }
    // the first rates the 2 items asked (from either browser), the MTurk worker the last
    rate_one(&base, &first, study, "an item").await;
    rate_one(&base, &second, study, "an item").await;
    rate_one(&base, &mturk, study, "the last item").await;
    let end = finish(&base, &first, study).await;
    assert_eq!(end["outcome"], "Completed", "{end}");
    let end = finish(&base, &mturk, study).await;
    assert_eq!(end["outcome"], "Completed", "nothing more can come: {end}");
    drop(waiting);

    let monitor = natstudy_core::service::monitor::monitor(&db, study)
        .await
        .expect("monitor");
    let ids: Vec<Option<String>> = monitor
        .annotators
        .iter()
        .map(|a| a.external_id.clone())
        .collect();
    assert_eq!(
        ids,
        vec![
            Some("prolific: 5f00aa11".to_owned()),
            Some("mturk: A1WORKER".to_owned()),
            Some("generic: plain-7".to_owned()),
        ]
    );

    // the table, from the command line and from the page
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("participants.csv");
    natstudy_tests::cli(
        &db.url,
        &[
            "export",
            "--study",
            "Crowd",
            "--what",
            "participants",
            "--out",
            &file.display().to_string(),
        ],
    )
    .await
    .expect("export");
    let cli_bytes = std::fs::read(&file).expect("file");
    app.add_user("ada", "a long password", natstudy_tests::Role::Admin)
        .await
        .expect("admin");
    let admin = app.signed_in("ada", "a long password").await.expect("ada");
    let r = admin
        .get(app.url(&format!("/studies/{study}/export/participants.csv")))
        .send()
        .await
        .expect("download");
    assert!(r.status().is_success(), "{}", r.status());
    let page_bytes = r.bytes().await.expect("body");
    assert_eq!(page_bytes.as_ref(), cli_bytes.as_slice(), "the same table");
    let mut rd = csv::Reader::from_reader(cli_bytes.as_slice());
    let header: Vec<String> = rd
        .headers()
        .expect("header")
        .iter()
        .map(str::to_owned)
        .collect();
    let mut expected: Vec<String> = natstudy_core::service::participants::COLUMNS
        .iter()
        .map(|c| c.to_string())
        .collect();
    expected.extend(["screener_years".to_owned(), "screener_role".to_owned()]);
    assert_eq!(header, expected);
    let rows: Vec<std::collections::HashMap<String, String>> = rd
        .records()
        .map(|r| {
            let r = r.expect("row");
            header
                .iter()
                .cloned()
                .zip(r.iter().map(str::to_owned))
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 3);
    let col = |i: usize, c: &str| rows[i][c].as_str();
    assert_eq!(
        (
            col(0, "participant"),
            col(0, "platform"),
            col(0, "external_id")
        ),
        ("S1", "prolific", "5f00aa11")
    );
    assert_eq!(
        (col(0, "external_study"), col(0, "external_session")),
        ("STUDY-1", "SESSION-1")
    );
    assert_eq!(
        (
            col(0, "items_rated"),
            col(0, "items_required"),
            col(0, "outcome")
        ),
        ("2", "2", "completed")
    );
    assert_eq!(col(0, "completion_code"), "DONE42");
    assert_eq!(
        (
            col(1, "platform"),
            col(1, "external_id"),
            col(1, "external_study"),
            col(1, "external_session")
        ),
        ("mturk", "A1WORKER", "HIT-9", "ASSIGN-3")
    );
    assert_eq!(
        (
            col(1, "items_rated"),
            col(1, "outcome"),
            col(1, "completion_code")
        ),
        ("1", "completed", "DONE42")
    );
    assert_eq!(
        (
            col(2, "platform"),
            col(2, "external_id"),
            col(2, "items_rated")
        ),
        ("generic", "plain-7", "0")
    );
    assert_eq!(
        (
            col(2, "outcome"),
            col(2, "completion_code"),
            col(2, "finished_at")
        ),
        ("in_progress", "", "")
    );
    // away longer than the study's items are held: timed out, as Prolific says it
    let away = col(2, "participant").to_owned();
    let mut tx = db.begin_write(study).await.expect("write");
    sqlx::query(
        "UPDATE annotators SET created_at = created_at - 86400000, \
         last_active = COALESCE(last_active, created_at) - 86400000 WHERE code = $1",
    )
    .bind(&away)
    .execute(&mut *tx)
    .await
    .expect("age");
    tx.commit().await.expect("commit");
    natstudy_tests::cli(
        &db.url,
        &[
            "export",
            "--study",
            "Crowd",
            "--what",
            "participants",
            "--out",
            &file.display().to_string(),
        ],
    )
    .await
    .expect("export");
    let again = std::fs::read_to_string(&file).expect("file");
    let outcome = natstudy_core::service::participants::COLUMNS
        .iter()
        .position(|c| *c == "outcome")
        .expect("column");
    let outcomes: Vec<String> = csv::Reader::from_reader(again.as_bytes())
        .records()
        .map(|r| r.expect("row")[outcome].to_owned())
        .collect();
    assert_eq!(outcomes, vec!["completed", "completed", "timed_out"]);
    for i in 0..3 {
        let joined: i64 = col(i, "joined_at").parse().expect("joined_at in unix ms");
        assert!(joined > 1_600_000_000_000, "{joined}");
        assert_eq!(
            (col(i, "screener_years"), col(i, "screener_role")),
            ("1-3", "developer")
        );
        assert_eq!(
            (col(i, "gold_passed"), col(i, "gold_failed")),
            ("0", "0"),
            "no gold items"
        );
        assert_eq!(
            (
                col(i, "speeder"),
                col(i, "excluded"),
                col(i, "exclusion_reason")
            ),
            ("", "false", "")
        );
        assert_eq!(col(i, "median_time_secs"), "", "no vote measured a time");
    }
    let finished: i64 = col(0, "finished_at").parse().expect("finished_at");
    assert!(finished >= col(0, "joined_at").parse::<i64>().expect("joined"));
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(platform_ids_make_one_participant_and_the_table_lists_them =>
    platform_ids_make_one_participant_and_the_table_lists_them_sqlite,
    platform_ids_make_one_participant_and_the_table_lists_them_postgres);

/// Abandoned holds on the study page: an admin sets a batch's lease (claims from then on
/// hold that long; the monitor shows it) and releases, in one action, the items of every
/// holder idle for the minutes asked — the idle one's item goes back to the queue, the active
/// one keeps theirs. The CLI does the same; a lease of 0 minutes is refused.
async fn abandoned_holds_are_released_from_the_page(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, token) = crowd_study(&db).await;
    let app = TestApp::start(db.clone()).await.expect("server");
    let base = app.base.clone();
    app.add_user("ada", "a long password", natstudy_tests::Role::Admin)
        .await
        .expect("admin");
    let admin = app.signed_in("ada", "a long password").await.expect("ada");
    let batch = natstudy_core::store::assign::batch_id(&db, study, "online")
        .await
        .expect("batch");
    let post = |path: &'static str, form: Vec<(&'static str, String)>| {
        let c = admin.clone();
        let url = app.url(path);
        async move { c.post(url).form(&form).send().await.expect("post") }
    };
    let r = post(
        "/api/studies/batch-lease",
        vec![
            ("study", study.to_string()),
            ("batch", batch.to_string()),
            ("minutes", "3".into()),
        ],
    )
    .await;
    assert!(r.status().is_success(), "{}", r.status());
    let r = post(
        "/api/studies/batch-lease",
        vec![
            ("study", study.to_string()),
            ("batch", batch.to_string()),
            ("minutes", "0".into()),
        ],
    )
    .await;
    assert!(!r.status().is_success(), "a lease of no minutes is refused");
    let monitor = natstudy_core::service::monitor::monitor(&db, study)
        .await
        .expect("monitor");
    assert_eq!(monitor.batches[0].lease_minutes, 3);

    // two holders: one left 20 minutes ago, one is here
    let gone = participant(&base, study, &token).await;
    let here = participant(&base, study, &token).await;
    let before = natstudy_core::db::now_ms();
    assert!(participants::rate_step(&base, &gone, study).await.is_some());
    assert!(participants::rate_step(&base, &here, study).await.is_some());
    let s = participants::state(&base, &gone, study)
        .await
        .expect("state");
    let gone_id = annotator_of(&db, study, &s).await;
    let s = participants::state(&base, &here, study)
        .await
        .expect("state");
    let here_id = annotator_of(&db, study, &s).await;
    let lease: i64 =
        sqlx::query_scalar("SELECT MAX(lease_expires_at) FROM assignments WHERE annotator_id = $1")
            .bind(here_id)
            .fetch_one(&db.pool)
            .await
            .expect("lease");
    let after = natstudy_core::db::now_ms();
    assert!(
        (before + 180_000..=after + 180_000).contains(&lease),
        "a claim now holds 3 minutes: {} ms",
        lease - before
    );
    let mut tx = db.begin_write(study).await.expect("write");
    sqlx::query("UPDATE annotators SET last_active = $1 WHERE id = $2")
        .bind(natstudy_core::db::now_ms() - 20 * 60_000)
        .bind(gone_id)
        .execute(&mut *tx)
        .await
        .expect("left");
    tx.commit().await.expect("commit");
    let r = post(
        "/api/studies/release-idle",
        vec![("study", study.to_string()), ("minutes", "10".into())],
    )
    .await;
    assert!(r.status().is_success(), "{}", r.status());
    let released: serde_json::Value = r.json().await.expect("json");
    assert_eq!(released, serde_json::json!([1, 1]), "one holder, one item");
    let held = |a: AnnotatorId| {
        let db = db.clone();
        async move {
            sqlx::query_scalar::<_, i64>(
                "SELECT COUNT(*) FROM assignments WHERE annotator_id = $1 AND status = 'leased'",
            )
            .bind(a)
            .fetch_one(&db.pool)
            .await
            .expect("held")
        }
    };
    assert_eq!(held(gone_id).await, 0, "the idle holder's item is free");
    assert_eq!(held(here_id).await, 1, "the active holder keeps theirs");

    // the command line
    natstudy_tests::cli(
        &db.url,
        &[
            "batch",
            "lease",
            "--study",
            "Crowd",
            "--batch",
            "online",
            "--minutes",
            "25",
        ],
    )
    .await
    .expect("batch lease");
    let secs: i64 = sqlx::query_scalar("SELECT lease_secs FROM batches WHERE id = $1")
        .bind(batch)
        .fetch_one(&db.pool)
        .await
        .expect("lease");
    assert_eq!(secs, 25 * 60);
    natstudy_tests::cli(
        &db.url,
        &[
            "batch",
            "release-idle",
            "--study",
            "Crowd",
            "--minutes",
            "30",
        ],
    )
    .await
    .expect("release-idle");
    assert_eq!(held(here_id).await, 1, "nobody idle that long");
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(abandoned_holds_are_released_from_the_page =>
    abandoned_holds_are_released_from_the_page_sqlite,
    abandoned_holds_are_released_from_the_page_postgres);

/// Rates the participant's item with a measured time on item (seconds), as the page sends it.
async fn rate_timed(base: &str, c: &reqwest::Client, study: StudyId, secs: f64) {
    let (item, token) = participants::rate_step(base, c, study)
        .await
        .expect("an item");
    let r = c
        .post(format!("{base}/api/annotate/vote"))
        .form(&[
            ("study", study.to_string()),
            ("item", item.to_string()),
            ("cr", "2".into()),
            ("cc", "2".into()),
            ("comment", String::new()),
            ("token", token),
            ("time_secs", format!("{secs:.3}")),
        ])
        .send()
        .await
        .expect("vote");
    assert!(r.status().is_success(), "{}", r.status());
}

/// Speeders: with `study set --speeder-seconds 5`, a participant whose median time on item is
/// 1.5 s is flagged on the monitor and in the participants table; one at 30 s is not; one with
/// no measured time is not judged (an empty cell).
async fn speeders_are_flagged_on_the_monitor_and_in_the_table(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, token) = crowd_study(&db).await;
    let app = TestApp::start(db.clone()).await.expect("server");
    let base = app.base.clone();
    natstudy_tests::cli(
        &db.url,
        &[
            "study",
            "set",
            "--study",
            "Crowd",
            "--speeder-seconds",
            "5",
            "--ratings-per-item",
            "2",
        ],
    )
    .await
    .expect("study set");
    let fast = participant(&base, study, &token).await;
    rate_timed(&base, &fast, study, 1.0).await;
    rate_timed(&base, &fast, study, 2.0).await;
    let slow = participant(&base, study, &token).await;
    rate_timed(&base, &slow, study, 30.0).await;
    let _idle = participant(&base, study, &token).await;
    let monitor = natstudy_core::service::monitor::monitor(&db, study)
        .await
        .expect("monitor");
    let flags: Vec<(String, bool)> = monitor
        .annotators
        .iter()
        .map(|a| (a.code.clone(), a.speeder))
        .collect();
    assert_eq!(
        flags,
        vec![
            ("S1".to_owned(), true),
            ("S2".to_owned(), false),
            ("S3".to_owned(), false)
        ]
    );
    let mut out = Vec::new();
    natstudy_core::service::exports::write(
        &db,
        study,
        natstudy_core::service::exports::Export::Participants { pilot: false },
        &mut out,
    )
    .await
    .expect("table");
    let mut rd = csv::Reader::from_reader(out.as_slice());
    let header = rd.headers().expect("header").clone();
    let at = |name: &str| header.iter().position(|h| h == name).expect(name);
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.expect("row")).collect();
    let cells: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (&r[at("median_time_secs")], &r[at("speeder")]))
        .collect();
    assert_eq!(cells, vec![("1.5", "true"), ("30", "false"), ("", "")]);
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(speeders_are_flagged_on_the_monitor_and_in_the_table =>
    speeders_are_flagged_on_the_monitor_and_in_the_table_sqlite,
    speeders_are_flagged_on_the_monitor_and_in_the_table_postgres);

/// Attention items: with `study set --gold-failures 2`, a participant whose answer on a check
/// item differs from its expected one is told so once (on the next page only), and at the
/// second such answer their survey ends with the screen-out code; the outcome is stored.
async fn attention_failures_end_the_survey_with_the_screen_out_code(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, token) = crowd_study(&db).await;
    natstudy_tests::cli(
        &db.url,
        &[
            "study",
            "set",
            "--study",
            "Crowd",
            "--gold-failures",
            "2",
            "--items-per-participant",
            "none",
        ],
    )
    .await
    .expect("study set");
    // every item a check item expected natural; the votes here say unnatural (CC 3)
    let mut tx = db.begin_write(study).await.expect("write");
    sqlx::query("UPDATE items SET gold_unnatural = 0 WHERE study_id = $1")
        .bind(study)
        .execute(&mut *tx)
        .await
        .expect("gold");
    tx.commit().await.expect("commit");
    let app = TestApp::start(db.clone()).await.expect("server");
    let base = app.base.clone();
    let c = participant(&base, study, &token).await;
    let s = participants::state(&base, &c, study).await.expect("state");
    assert!(s["notice"].is_null(), "nothing to say yet: {s}");
    let next = rate_one(&base, &c, study, "the first item").await;
    let notice = next["notice"].as_str().expect("told once");
    assert!(notice.contains("check item"), "{notice}");
    assert!(
        next["step"]["Rate"].is_object(),
        "the survey goes on: {next}"
    );
    let again = participants::state(&base, &c, study).await.expect("state");
    assert!(again["notice"].is_null(), "told only once: {again}");
    let end = rate_one(&base, &c, study, "the second item").await;
    let finished = &end["step"]["Finished"];
    assert_eq!(finished["outcome"], "ScreenedOut", "{end}");
    assert_eq!(finished["completion_code"], "SCRN9", "{end}");
    let (outcome, held): (Option<String>, i64) = sqlx::query_as(
        "SELECT outcome, (SELECT COUNT(*) FROM assignments WHERE annotator_id = annotators.id \
         AND status = 'leased') FROM annotators WHERE study_id = $1",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await
    .expect("outcome");
    assert_eq!(outcome.as_deref(), Some("screened_out"));
    assert_eq!(held, 0, "the item they held went back");
    // and they left the analysis: the report's n says so, and names the rule
    assert_eq!(vote_counts(&db, study).await, (0, 2));
    let report = report_json(&db, &[]).await;
    assert_eq!(report["votes"], 0);
    let left = &report["left_out"]["participants"];
    assert_eq!(left[0]["votes"], 2, "{left}");
    assert!(
        left[0]["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("attention")),
        "{left}"
    );
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(attention_failures_end_the_survey_with_the_screen_out_code =>
    attention_failures_end_the_survey_with_the_screen_out_code_sqlite,
    attention_failures_end_the_survey_with_the_screen_out_code_postgres);

/// The study's report as `natstudy report --out` writes it (report.json), with the CLI's
/// `extra` options.
async fn report_json(db: &Db, extra: &[&str]) -> serde_json::Value {
    let dir = tempfile::tempdir().expect("dir");
    let out = dir.path().to_str().expect("path").to_owned();
    let mut args = vec![
        "report",
        "--study",
        "Crowd",
        "--bootstrap",
        "0",
        "--out",
        &out,
    ];
    args.extend_from_slice(extra);
    natstudy_tests::cli(&db.url, &args).await.expect("report");
    let text = std::fs::read_to_string(dir.path().join("report.json")).expect("report.json");
    serde_json::from_str(&text).expect("json")
}

/// Votes of the study that count, and all of them.
async fn vote_counts(db: &Db, study: StudyId) -> (i64, i64) {
    sqlx::query_as(
        "SELECT CAST(COALESCE(SUM(v.counted), 0) AS BIGINT), COUNT(*) FROM votes v JOIN items i ON i.id = v.item_id \
         WHERE i.study_id = $1",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await
    .expect("votes")
}

/// A researcher of the crowd study ("rea"), signed in.
async fn researcher(app: &TestApp, db: &Db) -> reqwest::Client {
    app.add_user("rea", "a long password", natstudy_tests::Role::Researcher)
        .await
        .expect("researcher");
    natstudy_tests::cli(
        &db.url,
        &["study", "member", "add", "--study", "Crowd", "rea"],
    )
    .await
    .expect("member");
    app.signed_in("rea", "a long password").await.expect("rea")
}

/// Staff exclude a participant with a reason, on the page: their votes leave k (the items
/// they rated go back to the queue and another participant rates one), the monitor, the
/// exports and every figure of the report, which names them and their reason; the
/// participants table says so; `report --include-excluded` puts the votes back; the CLI
/// includes them again. Each change is an audit row with who and why; a reason is required.
/// An attention failure's screen-out leaves the analysis the same way (see the test above).
async fn excluded_participants_leave_k_and_every_figure(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, token) = crowd_study(&db).await;
    let app = TestApp::start(db.clone()).await.expect("server");
    let base = app.base.clone();
    let staff = researcher(&app, &db).await;

    // k = 1: the first rates two items, the second the third; nothing is left
    let fast = participant(&base, study, &token).await;
    let careful = participant(&base, study, &token).await;
    // joined while there was room (a full study admits no one new)
    let late = participant(&base, study, &token).await;
    rate_one(&base, &fast, study, "an item").await;
    rate_one(&base, &fast, study, "another item").await;
    rate_one(&base, &careful, study, "the last item").await;
    assert!(
        participants::rate_step(&base, &late, study).await.is_none(),
        "every item has its k"
    );
    let s = participants::state(&base, &fast, study)
        .await
        .expect("state");
    let fast_id = annotator_of(&db, study, &s).await;
    let fast_code = s["code"].as_str().expect("code").to_owned();
    let before = report_json(&db, &[]).await;
    assert_eq!(before["votes"], 3);
    assert_eq!(before["left_out"]["participants"], serde_json::json!([]));

    let exclusion = |exclude: &str, reason: &str| {
        let form = vec![
            ("study", study.to_string()),
            ("annotator", fast_id.to_string()),
            ("exclude", exclude.to_owned()),
            ("reason", reason.to_owned()),
        ];
        let (c, url) = (staff.clone(), app.url("/api/studies/exclusion"));
        async move { c.post(url).form(&form).send().await.expect("post") }
    };
    let r = exclusion("true", "   ").await;
    assert!(!r.status().is_success(), "a reason is required");
    let r = exclusion("true", "median 1.2 s on item").await;
    assert!(r.status().is_success(), "{}", r.status());
    let said = r.text().await.expect("text");
    assert!(said.contains("2 votes"), "{said}");
    assert_eq!(vote_counts(&db, study).await, (1, 3), "kept, not counted");

    // their two items went back to the queue: the late participant gets one
    rate_one(&base, &late, study, "an item freed by the exclusion").await;
    assert_eq!(vote_counts(&db, study).await, (2, 4));
    let monitor = natstudy_core::service::monitor::monitor(&db, study)
        .await
        .expect("monitor");
    assert_eq!(monitor.items_with, vec![1, 2], "one item without k again");
    assert_eq!(
        monitor
            .batches
            .iter()
            .map(|b| b.complete)
            .collect::<Vec<_>>(),
        vec![2],
        "the batch's items with k counted ratings"
    );
    let row = monitor
        .annotators
        .iter()
        .find(|a| a.id == fast_id)
        .expect("row");
    assert_eq!(row.excluded.as_deref(), Some("median 1.2 s on item"));
    let audit: (String, Option<String>) = sqlx::query_as(
        "SELECT a.detail, u.username FROM audit_log a LEFT JOIN users u ON u.id = a.user_id \
         WHERE a.study_id = $1 AND a.action = 'participant.exclude'",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await
    .expect("audit");
    assert!(
        audit.0.contains(&fast_code) && audit.0.contains("median 1.2 s"),
        "{audit:?}"
    );
    assert_eq!(audit.1.as_deref(), Some("rea"), "who");

    // the report: n without them, named with their reason; on request with them
    let after = report_json(&db, &[]).await;
    assert_eq!(after["votes"], 2, "their votes are in no figure");
    assert_eq!(after["annotators"], 2);
    assert_eq!(after["incomplete_items"], serde_json::json!([]));
    let left = &after["left_out"];
    assert_eq!(left["included"], false);
    assert_eq!(left["participants"][0]["annotator"], fast_code.as_str());
    assert_eq!(left["participants"][0]["reason"], "median 1.2 s on item");
    assert_eq!(left["participants"][0]["votes"], 2);
    let results = natstudy_core::service::reports::ReportCache::default();
    let view = std::sync::Arc::new(results)
        .get(&db, study)
        .await
        .expect("results page");
    let headline = view.view.headline.join("\n");
    assert!(headline.contains("1 participant excluded"), "{headline}");
    assert!(
        view.view.tables.iter().any(|t| t.id == "excluded"
            && t.rows
                == vec![vec![
                    fast_code.clone(),
                    "2".into(),
                    "median 1.2 s on item".into()
                ]]),
        "the page's table of exclusions"
    );
    let with = report_json(&db, &["--include-excluded"]).await;
    assert_eq!(with["left_out"]["included"], true);
    // their votes are back: the item two participants rated has more than k and is set aside
    assert_eq!(with["incomplete_items"].as_array().map(Vec::len), Some(1));

    // the exports: the votes table has no vote of theirs; the participants table says why
    let dir = tempfile::tempdir().expect("dir");
    let votes_file = dir.path().join("votes.csv");
    let participants_file = dir.path().join("participants.csv");
    for (what, file) in [("votes", &votes_file), ("participants", &participants_file)] {
        natstudy_tests::cli(
            &db.url,
            &[
                "export",
                "--study",
                "Crowd",
                "--what",
                what,
                "--format",
                "csv",
                "--out",
                file.to_str().expect("path"),
            ],
        )
        .await
        .expect("export");
    }
    let votes = std::fs::read_to_string(&votes_file).expect("votes");
    assert_eq!(votes.lines().count(), 3, "a header and two votes: {votes}");
    assert!(!votes.contains(&fast_code), "{votes}");
    let table = std::fs::read_to_string(&participants_file).expect("participants");
    let mut rows = csv::Reader::from_reader(table.as_bytes());
    let header = rows.headers().expect("header").clone();
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let fast_row = rows
        .records()
        .map(|r| r.expect("row"))
        .find(|r| r.get(0) == Some(fast_code.as_str()))
        .expect("their row");
    assert_eq!(fast_row.get(col("excluded")), Some("true"));
    assert_eq!(
        fast_row.get(col("exclusion_reason")),
        Some("median 1.2 s on item")
    );

    // included again from the command line: their votes count again
    natstudy_tests::cli(
        &db.url,
        &[
            "participant",
            "include",
            "--study",
            "Crowd",
            &fast_code,
            "--reason",
            "times were a clock fault",
        ],
    )
    .await
    .expect("include");
    assert_eq!(vote_counts(&db, study).await, (4, 4));
    let back = report_json(&db, &[]).await;
    assert_eq!(back["left_out"]["participants"], serde_json::json!([]));
    assert_eq!(back["incomplete_items"].as_array().map(Vec::len), Some(1));
    let include: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM audit_log WHERE study_id = $1 AND action = 'participant.include' \
         AND detail LIKE '%clock fault%'",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await
    .expect("audit");
    assert_eq!(include, 1);
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(excluded_participants_leave_k_and_every_figure =>
    excluded_participants_leave_k_and_every_figure_sqlite,
    excluded_participants_leave_k_and_every_figure_postgres);

/// A new invite link into the crowd study's batch.
async fn new_invite(db: &Db, study: StudyId) -> String {
    let batch = natstudy_core::store::assign::batch_id(db, study, "online")
        .await
        .expect("batch");
    natstudy_core::store::invites::create_invite(db, study, batch, 5, None)
        .await
        .expect("invite")
}

/// Rows of a CSV export from the command line (`extra` options after `--what`), header
/// excluded.
async fn exported_rows(db: &Db, what: &str, extra: &[&str]) -> Vec<csv::StringRecord> {
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("out.csv");
    let mut args = vec![
        "export",
        "--study",
        "Crowd",
        "--what",
        what,
        "--format",
        "csv",
        "--out",
        file.to_str().expect("path"),
    ];
    args.extend_from_slice(extra);
    natstudy_tests::cli(&db.url, &args).await.expect("export");
    let text = std::fs::read_to_string(&file).expect("export");
    csv::Reader::from_reader(text.as_bytes())
        .records()
        .map(|r| r.expect("row"))
        .collect()
}

/// A pilot: a researcher's pilot link (to try the survey) and the links made while the study
/// is in its pilot phase admit pilot participants, whose ratings count toward no k and reach
/// no monitor count, no figure and no export but the pilot's own; an item a pilot participant
/// rated is still given to the study's participants. The phase ends with `study set --pilot
/// off` (links made then are the study's), and an admin clears the pilot: its participants
/// and ratings are deleted, the study's stay.
async fn pilot_votes_count_nowhere_and_are_cleared(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, token) = crowd_study(&db).await;
    let app = TestApp::start(db.clone()).await.expect("server");
    let base = app.base.clone();
    let rea = researcher(&app, &db).await;
    app.add_user("ada", "a long password", natstudy_tests::Role::Admin)
        .await
        .expect("admin");
    let ada = app.signed_in("ada", "a long password").await.expect("ada");
    let post = |c: &reqwest::Client, path: &str| {
        let (c, url) = (c.clone(), app.url(path));
        let form = vec![("study", study.to_string())];
        async move { c.post(url).form(&form).send().await.expect("post") }
    };

    // the researcher tries the survey through a pilot link
    let r = post(&rea, "/api/studies/pilot-link").await;
    assert!(r.status().is_success(), "{}", r.status());
    let path: String = r.json().await.expect("path");
    let pilot_token = path.strip_prefix("/join/").expect("a join path").to_owned();
    let tryer = participant(&base, study, &pilot_token).await;
    rate_one(&base, &tryer, study, "a pilot item").await;
    // the pilot phase: links made now are pilot links
    natstudy_tests::cli(
        &db.url,
        &["study", "set", "--study", "Crowd", "--pilot", "on"],
    )
    .await
    .expect("pilot on");
    let show = natstudy_core::service::studies::settings(&db, study)
        .await
        .expect("settings");
    assert!(show.pilot);
    let phase_token = new_invite(&db, study).await;
    let piloter = participant(&base, study, &phase_token).await;
    rate_one(&base, &piloter, study, "a pilot item").await;
    rate_one(&base, &piloter, study, "another pilot item").await;
    assert_eq!(vote_counts(&db, study).await, (0, 3), "none of them counts");

    // nowhere: the monitor, the study list, the report, the exports
    let monitor = natstudy_core::service::monitor::monitor(&db, study)
        .await
        .expect("monitor");
    assert_eq!(
        monitor.items_with,
        vec![3, 0],
        "no item has a rating that counts"
    );
    assert!(monitor.annotators.is_empty(), "{:?}", monitor.annotators);
    assert_eq!((monitor.pilot_participants, monitor.pilot_votes), (2, 3));
    let pilots: Vec<bool> = monitor.invites.iter().map(|i| i.pilot).collect();
    assert_eq!(pilots, vec![true, true, false], "newest first");
    // `invite list` says which links are pilot links, and how full each is
    let listed = std::process::Command::new(natstudy_tests::natstudy_bin().expect("binary"))
        .args([
            "--database-url",
            &db.url,
            "invite",
            "list",
            "--study",
            "Crowd",
        ])
        .output()
        .expect("invite list");
    assert!(listed.status.success());
    let lines: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    let marked: Vec<bool> = lines.iter().map(|l| l.contains("pilot link")).collect();
    assert_eq!(marked, vec![true, true, false], "{lines:?}");
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("/join/") && l.contains(" used")),
        "{lines:?}"
    );
    let listed = natstudy_core::store::studies::list(&db)
        .await
        .expect("list");
    assert_eq!(listed[0].votes, 0);
    let report = report_json(&db, &["--include-excluded"]).await;
    assert_eq!(report["votes"], 0);
    assert_eq!(report["left_out"]["participants"], serde_json::json!([]));
    assert!(exported_rows(&db, "votes", &[]).await.is_empty());
    assert!(exported_rows(&db, "participants", &[]).await.is_empty());
    assert_eq!(exported_rows(&db, "votes", &["--pilot"]).await.len(), 3);
    let pilot_rows = exported_rows(&db, "participants", &["--pilot"]).await;
    assert_eq!(pilot_rows.len(), 2);
    let excluded = natstudy_core::service::participants::COLUMNS
        .iter()
        .position(|c| *c == "excluded")
        .expect("column");
    for row in &pilot_rows {
        assert_eq!(
            &row[excluded], "false",
            "a pilot participant is not excluded"
        );
    }
    assert_eq!(
        listed[0].annotators, 0,
        "pilot participants are no study's annotators"
    );
    let page = rea
        .get(app.url(&format!("/studies/{study}/export/pilot-votes.csv")))
        .send()
        .await
        .expect("download");
    assert!(page.status().is_success(), "{}", page.status());
    assert_eq!(
        page.text().await.expect("csv").lines().count(),
        4,
        "header and 3"
    );

    // the study's participants get every item, those the pilot rated too
    natstudy_tests::cli(
        &db.url,
        &["study", "set", "--study", "Crowd", "--pilot", "off"],
    )
    .await
    .expect("pilot off");
    let real = participant(&base, study, &token).await;
    rate_one(&base, &real, study, "an item").await;
    rate_one(&base, &real, study, "an item").await;
    let other = participant(&base, study, &token).await;
    rate_one(&base, &other, study, "the last item").await;
    assert_eq!(vote_counts(&db, study).await, (3, 6));
    let after_token = new_invite(&db, study).await;
    let pilot: i64 = sqlx::query_scalar("SELECT pilot FROM invites WHERE token = $1")
        .bind(&after_token)
        .fetch_one(&db.pool)
        .await
        .expect("invite");
    assert_eq!(pilot, 0, "the phase is over");

    // clearing: researchers may not; an admin deletes the pilot, the study's votes stay
    let r = post(&rea, "/api/studies/clear-pilot").await;
    assert!(!r.status().is_success(), "admins clear the pilot");
    let r = post(&ada, "/api/studies/clear-pilot").await;
    assert!(r.status().is_success(), "{}", r.status());
    let cleared: (i64, i64) = r.json().await.expect("cleared");
    assert_eq!(cleared, (2, 3));
    assert_eq!(vote_counts(&db, study).await, (3, 3));
    let monitor = natstudy_core::service::monitor::monitor(&db, study)
        .await
        .expect("monitor");
    assert_eq!((monitor.pilot_participants, monitor.pilot_votes), (0, 0));
    assert_eq!(monitor.items_with, vec![0, 3]);
    assert_eq!(
        monitor
            .batches
            .iter()
            .map(|b| b.complete)
            .collect::<Vec<_>>(),
        vec![3]
    );
    let audit: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM audit_log WHERE study_id = $1 AND action = 'pilot.clear'",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await
    .expect("audit");
    assert_eq!(audit, 1);
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(pilot_votes_count_nowhere_and_are_cleared =>
    pilot_votes_count_nowhere_and_are_cleared_sqlite,
    pilot_votes_count_nowhere_and_are_cleared_postgres);

/// The server decides when a participant's work is done: a hand-made finish after 1 of the
/// N = 2 items asked gets no completion code while an item could still come — one they hold,
/// or one free for them now — whether it comes as the page's request or a plain form post.
/// (Before, only others' holds counted: one form post after one item gave "completed" and the
/// full code.)
async fn a_hand_made_finish_gets_no_code_for_work_not_done(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, token) = crowd_study(&db).await;
    let app = TestApp::start(db.clone()).await.expect("server");
    let base = app.base.clone();
    // one item rated; the vote's answer already holds the next item for them
    let holder = participant(&base, study, &token).await;
    let next = rate_one(&base, &holder, study, "a first item").await;
    assert_eq!(next["done"], 1, "{next}");
    assert!(
        next["step"]["Rate"].is_object(),
        "an item is held for them: {next}"
    );
    let end = finish(&base, &holder, study).await;
    assert_eq!(end["outcome"], "Returned", "{end}");
    assert!(end["completion_code"].is_null(), "{end}");
    assert!(end["redirect"].is_null(), "{end}");
    // one item rated, their hold given back: the last item is free for them now
    let free = participant(&base, study, &token).await;
    let next = rate_one(&base, &free, study, "a second item").await;
    assert_eq!(next["done"], 1, "{next}");
    let free_id = annotator_of(&db, study, &next).await;
    let mut tx = db.begin_write(study).await.expect("write");
    sqlx::query(
        "UPDATE assignments SET status = 'released' WHERE annotator_id = $1 AND status = 'leased'",
    )
    .bind(free_id)
    .execute(&mut *tx)
    .await
    .expect("release");
    tx.commit().await.expect("commit");
    // the finish as a browser without JavaScript posts it: a form, HTML accepted
    let r = free
        .post(format!("{base}/api/annotate/finish"))
        .header("accept", "text/html")
        .header("origin", &base)
        .form(&[("study", study.to_string())])
        .send()
        .await
        .expect("finish");
    assert!(
        r.status().is_success() || r.status().is_redirection(),
        "{}",
        r.status()
    );
    let s = participants::state(&base, &free, study)
        .await
        .expect("state");
    let end = &s["step"]["Finished"];
    assert_eq!(end["outcome"], "Returned", "{s}");
    assert!(end["completion_code"].is_null(), "{s}");
    let outcomes: Vec<Option<String>> = sqlx::query_scalar(
        "SELECT outcome FROM annotators WHERE study_id = $1 AND outcome IS NOT NULL ORDER BY id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await
    .expect("outcomes");
    assert_eq!(
        outcomes,
        vec![Some("returned".to_owned()), Some("returned".to_owned())],
        "no completion recorded"
    );
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(a_hand_made_finish_gets_no_code_for_work_not_done =>
    a_hand_made_finish_gets_no_code_for_work_not_done_sqlite,
    a_hand_made_finish_gets_no_code_for_work_not_done_postgres);

/// A platform id is a participant before it is a place: on a link whose places are all taken
/// (on Prolific the cap is the places bought, so the last joiners always meet one), the same
/// `PROLIFIC_PID` on a new device is told it continues — the invite page's status and the
/// join agree — and the join continues the same participant without a place; a stranger on
/// the same link is told it is used up, with the way back for one who takes part.
async fn a_known_platform_id_continues_on_a_full_link(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, _) = crowd_study(&db).await;
    let batch = natstudy_core::store::assign::batch_id(&db, study, "online")
        .await
        .expect("batch");
    let token = natstudy_core::store::invites::create_invite(&db, study, batch, 1, None)
        .await
        .expect("a link of one place");
    let app = TestApp::start(db.clone()).await.expect("server");
    let base = app.base.clone();
    let prolific = ["prolific", "60aa77bb", "STUDY-2", "SESSION-2"];
    let first = join_as(&base, study, &token, prolific)
        .await
        .expect("joined");
    let code = participants::state(&base, &first, study)
        .await
        .expect("state")["code"]
        .clone();
    // a new device, the same id: the page's status says it continues
    let status = |ids: [&'static str; 2]| {
        let base = base.clone();
        let token = token.clone();
        async move {
            participants::client()
                .post(format!("{base}/api/invite"))
                .form(&[
                    ("token", token.as_str()),
                    ("identity[platform]", ids[0]),
                    ("identity[pid]", ids[1]),
                ])
                .send()
                .await
                .expect("invite")
                .json::<serde_json::Value>()
                .await
                .expect("json")
        }
    };
    assert_eq!(
        status(["prolific", "60aa77bb"]).await,
        serde_json::json!({"Open": {"study": "Crowd", "continuing": true, "finished": false, "review": false}})
    );
    assert_eq!(
        status(["prolific", "someone-else"]).await,
        serde_json::json!("UsedUp")
    );
    // the join on that device continues the same participant
    let again = join_as(&base, study, &token, prolific)
        .await
        .expect("continued");
    let s = participants::state(&base, &again, study)
        .await
        .expect("state");
    assert_eq!(s["code"], code, "the same participant");
    let refused = join_as(&base, study, &token, ["prolific", "someone-else", "", ""]).await;
    assert!(
        refused.is_err_and(|e| e.contains("used up")),
        "a stranger gets no place"
    );
    let used: i64 = sqlx::query_scalar("SELECT used FROM invites WHERE study_id = $1 AND cap = 1")
        .bind(study)
        .fetch_one(&db.pool)
        .await
        .expect("used");
    assert_eq!(used, 1);
    // the page: the invite landing rendered for the returning id offers to continue
    let page = participants::client()
        .get(format!(
            "{base}/join/{token}?PROLIFIC_PID=60aa77bb&STUDY_ID=STUDY-2&SESSION_ID=S3"
        ))
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(
        page.contains("invite-continuing"),
        "the resume form is offered"
    );
    assert!(!page.contains("invite-invalid"), "not refused");
    let page = participants::client()
        .get(format!("{base}/join/{token}?PROLIFIC_PID=stranger-1"))
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(
        page.contains("used up") && page.contains("resume code"),
        "the way back"
    );
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(a_known_platform_id_continues_on_a_full_link =>
    a_known_platform_id_continues_on_a_full_link_sqlite,
    a_known_platform_id_continues_on_a_full_link_postgres);

/// A time on item that is no measurement does not reach the analysis: five participants vote
/// with times 0, 1e-320 (a subnormal number), 12.5 and two more on a study of k = 1: the
/// subnormal is stored as unmeasured, and the results — whose box plot's axis once never
/// returned on [0, 1e-320] — answer within 20 s, as does `paper.zip`.
async fn a_subnormal_time_on_item_is_unmeasured_and_the_results_answer(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = natstudy_tests::small::items(&db, "Tiny times").await;
    let mut s = natstudy_core::service::studies::settings(&db, study)
        .await
        .expect("settings");
    s.ratings_per_item = 5;
    natstudy_core::service::studies::update_settings(&db, study, None, &s)
        .await
        .expect("settings");
    let (_, token) = natstudy_tests::open_queue(&db, study, 20)
        .await
        .expect("invite");
    let app = TestApp::start(db.clone()).await.expect("server");
    let base = app.base.clone();
    for secs in ["0", "1e-320", "12.5", "1e-320", "0"] {
        let c = participant(&base, study, &token).await;
        for _ in 0..3 {
            let (item, tok) = participants::rate_step(&base, &c, study)
                .await
                .expect("an item");
            let r = c
                .post(format!("{base}/api/annotate/vote"))
                .form(&[
                    ("study", study.to_string()),
                    ("item", item.to_string()),
                    ("cr", "2".into()),
                    ("cc", "3".into()),
                    ("comment", String::new()),
                    ("token", tok),
                    ("time_secs", secs.to_owned()),
                ])
                .send()
                .await
                .expect("vote");
            assert!(r.status().is_success(), "{}", r.status());
        }
    }
    let times: Vec<Option<f64>> = sqlx::query_scalar("SELECT time_secs FROM votes ORDER BY id")
        .fetch_all(&db.pool)
        .await
        .expect("times");
    assert_eq!(times.len(), 15);
    assert!(
        times.iter().flatten().all(|t| *t == 0.0 || *t == 12.5),
        "no subnormal stored: {times:?}"
    );
    assert_eq!(times.iter().filter(|t| t.is_none()).count(), 6, "{times:?}");
    let staff = app.add_user("rita", "a-long-password-1", natstudy_types::Role::Admin);
    staff.await.expect("admin");
    let c = app
        .signed_in("rita", "a-long-password-1")
        .await
        .expect("signed in");
    let asked = std::time::Instant::now();
    let r = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        c.post(app.url("/api/studies/results"))
            .form(&[("study", study.to_string())])
            .send(),
    )
    .await
    .expect("the results answer within 20 s")
    .expect("results");
    assert!(r.status().is_success(), "{}", r.status());
    let view: serde_json::Value = r.json().await.expect("json");
    let figures = view["figures"].as_array().expect("figures");
    assert!(
        figures.iter().any(|f| f["id"] == "time_by_level"),
        "the time figure is drawn"
    );
    let r = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        c.get(app.url(&format!("/studies/{study}/paper.zip")))
            .send(),
    )
    .await
    .expect("paper.zip within 20 s")
    .expect("paper.zip");
    assert!(r.status().is_success(), "{}", r.status());
    eprintln!(
        "results of votes timed 0, 1e-320 and 12.5: answered in {:?}",
        asked.elapsed()
    );
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(a_subnormal_time_on_item_is_unmeasured_and_the_results_answer =>
    a_subnormal_time_on_item_is_unmeasured_and_the_results_answer_sqlite,
    a_subnormal_time_on_item_is_unmeasured_and_the_results_answer_postgres);

/// The sides stored before a vote stored the side its page showed are repaired where the
/// settings' audit proves them (migration 0033, run here on votes made as they were stored
/// then): a study that never randomised had the original on the left for every vote; a vote
/// given after randomising began, in a study that never stopped, keeps its drawn side; one
/// given after randomising began in a study that later stopped cannot be proven — the votes
/// export leaves its side empty.
async fn sides_stored_before_are_repaired_where_proven(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let app = TestApp::start(db.clone()).await.expect("server");
    let base = app.base.clone();
    let mut studies = Vec::new();
    for name in ["Never", "Always", "Stopped"] {
        let study = natstudy_tests::small::items(&db, name).await;
        let (_, token) = natstudy_tests::open_queue(&db, study, 5)
            .await
            .expect("invite");
        let c = participant(&base, study, &token).await;
        rate_one(&base, &c, study, "an item").await;
        studies.push(study);
    }
    // as the votes were stored before: the assignment's drawn side, here the right; and the
    // settings' history in the audit log, before and after the votes
    let voted: i64 = sqlx::query_scalar("SELECT MIN(submitted_at) FROM votes")
        .fetch_one(&db.pool)
        .await
        .expect("when");
    let mut tx = db.begin_write(studies[0]).await.expect("write");
    sqlx::query("UPDATE votes SET original_left = 0")
        .execute(&mut *tx)
        .await
        .expect("sides");
    sqlx::query("UPDATE vote_revisions SET original_left = 0")
        .execute(&mut *tx)
        .await
        .expect("sides");
    let audit = |study: natstudy_vocab::ids::StudyId, at: i64, on: bool| {
        sqlx::query("INSERT INTO audit_log (at, study_id, action, detail) VALUES ($1, $2, 'study.settings', $3)")
            .bind(at)
            .bind(study)
            .bind(format!("k=5, blind operator=false, blind bug=false, randomise sides={on}"))
    };
    audit(studies[0], voted - 5_000, false)
        .execute(&mut *tx)
        .await
        .expect("audit");
    audit(studies[1], voted - 5_000, true)
        .execute(&mut *tx)
        .await
        .expect("audit");
    audit(studies[2], voted - 5_000, true)
        .execute(&mut *tx)
        .await
        .expect("audit");
    audit(studies[2], voted + 5_000, false)
        .execute(&mut *tx)
        .await
        .expect("audit");
    // the migration's repair, as it runs on a database of that time
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let sql = std::fs::read_to_string(root.join(match store {
        Store::Sqlite => "migrations/sqlite/0033_sides_shown.sql",
        Store::Postgres => "migrations/postgres/0033_sides_shown.sql",
    }))
    .expect("migration");
    let statements: Vec<String> = sql
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect::<Vec<_>>()
        .join("\n")
        .split(';')
        .map(str::trim)
        .filter(|s| s.starts_with("UPDATE"))
        .map(str::to_owned)
        .collect();
    assert_eq!(statements.len(), 4, "{statements:?}");
    for s in &statements {
        sqlx::query(s).execute(&mut *tx).await.expect("repair");
    }
    tx.commit().await.expect("commit");
    let sides: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT v.original_left, v.side_known FROM votes v JOIN items i ON i.id = v.item_id ORDER BY i.study_id",
    )
    .fetch_all(&db.pool)
    .await
    .expect("sides");
    assert_eq!(
        sides,
        vec![(1, 1), (0, 1), (0, 0)],
        "never: left; always: drawn; stopped: unknown"
    );
    // the votes export: the side, or empty where it cannot be proven
    let side_of = |name: &'static str| {
        let url = db.url.clone();
        async move {
            let dir = tempfile::tempdir().expect("dir");
            let file = dir.path().join("votes.csv");
            let out = file.to_str().expect("path").to_owned();
            natstudy_tests::cli(
                &url,
                &["export", "--study", name, "--what", "votes", "--out", &out],
            )
            .await
            .expect("export");
            let text = std::fs::read_to_string(&file).expect("export");
            let mut r = csv::Reader::from_reader(text.as_bytes());
            let col = r
                .headers()
                .expect("header")
                .iter()
                .position(|h| h == "original_left")
                .expect("column");
            let row = r.records().next().expect("a vote").expect("row");
            row.get(col).expect("cell").to_owned()
        }
    };
    assert_eq!(side_of("Never").await, "true");
    assert_eq!(side_of("Always").await, "false");
    assert_eq!(
        side_of("Stopped").await,
        "",
        "an unproven side is left empty"
    );
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(sides_stored_before_are_repaired_where_proven =>
    sides_stored_before_are_repaired_where_proven_sqlite,
    sides_stored_before_are_repaired_where_proven_postgres);
