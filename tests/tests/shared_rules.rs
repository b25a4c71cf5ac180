//! The command line refuses what the page refuses: each rule the web's services hold is run
//! through both the page's server function and `natstudy`, with the same words, and neither
//! writes anything when it refuses.

use natstudy_tests::{cli, fresh_db, on_both_stores, Role, Store, TestApp};

const PW: &str = "a-long-password";

async fn invites_of(db: &natstudy_core::service::Db) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM invites")
        .fetch_one(&db.pool)
        .await
        .expect("count")
}

/// A rule refused through the page's server function and through `natstudy`, each with `words`.
async fn refused_by_both(
    c: &reqwest::Client,
    app: &TestApp,
    url: &str,
    (endpoint, form): (&str, &[(&str, String)]),
    args: &[&str],
    words: &str,
) {
    let r = c
        .post(app.url(endpoint))
        .form(form)
        .send()
        .await
        .expect("page");
    assert!(
        !r.status().is_success(),
        "{endpoint} {form:?}: {}",
        r.status()
    );
    let page = r.text().await.expect("text");
    assert!(page.contains(words), "{endpoint} {form:?}: {page}");
    let err = cli(url, args).await.expect_err("the command refuses");
    assert!(format!("{err:#}").contains(words), "{args:?}: {err:#}");
}

/// An invite's cap: a review invite admits 1 to 1,000 reviewers and a survey invite 1 to
/// 100,000 participants, on the page and on the command line alike.
async fn invite_caps_hold_on_the_page_and_the_command_line(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, _) = natstudy_tests::small::study(&db, "Rules").await;
    let batch: natstudy_vocab::ids::BatchId =
        sqlx::query_scalar("SELECT id FROM batches WHERE study_id = $1")
            .bind(study)
            .fetch_one(&db.pool)
            .await
            .expect("the batch");
    let batch_name: String = sqlx::query_scalar("SELECT name FROM batches WHERE id = $1")
        .bind(batch)
        .fetch_one(&db.pool)
        .await
        .expect("name");
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    let c = app.signed_in("ada", PW).await.expect("sign in");
    let before = invites_of(&db).await;
    let (s, b) = (study.to_string(), batch.to_string());
    for (endpoint, form, args, words) in [
        (
            "/api/review/invite",
            vec![("study", s.clone()), ("cap", "5000".to_owned())],
            vec!["--review", "--cap", "5000"],
            "an invite admits 1 to 1000 reviewers, not 5000",
        ),
        (
            "/api/studies/invite",
            vec![
                ("study", s.clone()),
                ("batch", b.clone()),
                ("cap", "0".to_owned()),
            ],
            vec!["--batch", batch_name.as_str(), "--cap", "0"],
            "an invite admits 1 to 100000 participants, not 0",
        ),
        (
            "/api/studies/invite",
            vec![
                ("study", s.clone()),
                ("batch", b.clone()),
                ("cap", "100001".to_owned()),
            ],
            vec!["--batch", batch_name.as_str(), "--cap", "100001"],
            "an invite admits 1 to 100000 participants, not 100001",
        ),
    ] {
        let mut all = vec!["invite", "create", "--study", "Rules"];
        all.extend(&args);
        refused_by_both(&c, &app, &db.url, (endpoint, &form), &all, words).await;
        assert_eq!(invites_of(&db).await, before, "{args:?}: nothing written");
    }
    // within the rules both make the link
    let r = c
        .post(app.url("/api/review/invite"))
        .form(&[("study", s.as_str()), ("cap", "1000")])
        .send()
        .await
        .expect("page");
    assert!(r.status().is_success(), "{}", r.status());
    cli(
        &db.url,
        &[
            "invite", "create", "--study", "Rules", "--review", "--cap", "1000",
        ],
    )
    .await
    .expect("a review invite of 1000");
    assert_eq!(invites_of(&db).await, before + 2);
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(invite_caps_hold_on_the_page_and_the_command_line => invite_caps_hold_on_the_page_and_the_command_line_sqlite, invite_caps_hold_on_the_page_and_the_command_line_postgres);

/// The batch's and the members' rules: a lease of 1 to 1,440 minutes, release-idle of a
/// minute to a week, a known strategy and a name for a new batch, a member's standing owner or
/// member; the page and the command line refuse each with the same words and change nothing.
async fn batch_and_member_rules_hold_on_the_page_and_the_command_line(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, _) = natstudy_tests::small::study(&db, "Rules").await;
    let (batch, batch_name, lease): (i64, String, i64) =
        sqlx::query_as("SELECT id, name, lease_secs FROM batches WHERE study_id = $1")
            .bind(study)
            .fetch_one(&db.pool)
            .await
            .expect("the batch");
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    app.add_user("bob", PW, Role::Researcher)
        .await
        .expect("researcher");
    let c = app.signed_in("ada", PW).await.expect("sign in");
    let state = || async {
        let batches: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM batches")
            .fetch_one(&db.pool)
            .await
            .expect("batches");
        let lease: i64 = sqlx::query_scalar("SELECT lease_secs FROM batches WHERE id = $1")
            .bind(batch)
            .fetch_one(&db.pool)
            .await
            .expect("lease");
        let members: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM study_members")
            .fetch_one(&db.pool)
            .await
            .expect("members");
        (batches, lease, members)
    };
    let before = state().await;
    assert_eq!(before.1, lease);
    let (s, b) = (study.to_string(), batch.to_string());
    // (endpoint, form, command, words)
    type Case = (
        &'static str,
        Vec<(&'static str, String)>,
        Vec<String>,
        &'static str,
    );
    let words = |line: &str| -> Vec<String> { line.split(' ').map(str::to_owned).collect() };
    let lease = |m: &str| -> Case {
        let form = vec![
            ("study", s.clone()),
            ("batch", b.clone()),
            ("minutes", m.into()),
        ];
        let args = words(&format!(
            "batch lease --study Rules --batch {batch_name} --minutes {m}"
        ));
        (
            "/api/studies/batch-lease",
            form,
            args,
            "a lease is 1–1440 minutes",
        )
    };
    let create = |name: &str, strategy: &str, why: &'static str| -> Case {
        let form = vec![
            ("study", s.clone()),
            ("name", name.into()),
            ("strategy", strategy.into()),
        ];
        let mut args = words("batch create --study Rules --name");
        args.extend([name.to_owned(), "--strategy".into(), strategy.into()]);
        ("/api/studies/batch", form, args, why)
    };
    let cases: Vec<Case> = vec![
        lease("0"),
        lease("1441"),
        (
            "/api/studies/release-idle",
            vec![("study", s.clone()), ("minutes", "0".into())],
            words("batch release-idle --study Rules --minutes 0"),
            "idle for 1 minute to a week",
        ),
        create(
            "B2",
            "lottery",
            "unknown strategy lottery (fixed or dynamic)",
        ),
        create("  ", "dynamic", "a batch needs a name"),
        (
            "/api/studies/members/add",
            vec![
                ("study", s.clone()),
                ("username", "bob".into()),
                ("role", "boss".into()),
            ],
            words("study member add --study Rules bob --role boss"),
            "a member is an owner or a member",
        ),
    ];
    for (endpoint, form, args, why) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused_by_both(&c, &app, &db.url, (endpoint, &form), &args, why).await;
        assert_eq!(state().await, before, "{args:?}: nothing changed");
    }
    // within the rules both act
    let r = c
        .post(app.url("/api/studies/batch-lease"))
        .form(&[
            ("study", s.as_str()),
            ("batch", b.as_str()),
            ("minutes", "1440"),
        ])
        .send()
        .await
        .expect("page");
    assert!(r.status().is_success(), "{}", r.status());
    assert_eq!(state().await.1, 1440 * 60);
    cli(
        &db.url,
        &[
            "batch",
            "lease",
            "--study",
            "Rules",
            "--batch",
            &batch_name,
            "--minutes",
            "1",
        ],
    )
    .await
    .expect("a lease of a minute");
    assert_eq!(state().await.1, 60);
    cli(
        &db.url,
        &[
            "study", "member", "add", "--study", "Rules", "bob", "--role", "owner",
        ],
    )
    .await
    .expect("an owner");
    assert_eq!(state().await.2, before.2 + 1);
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(batch_and_member_rules_hold_on_the_page_and_the_command_line => batch_and_member_rules_hold_on_the_page_and_the_command_line_sqlite, batch_and_member_rules_hold_on_the_page_and_the_command_line_postgres);

/// Drop-outs: moving a participant's unrated items to a code the study does not have is
/// refused by the page and by `natstudy batch move` in the same words, and nothing moves;
/// within the rules `batch release` and `batch move` do what the page's release and move do,
/// item for item.
async fn drop_outs_are_handled_alike_on_the_page_and_the_command_line(store: Store) {
    use natstudy_core::store::assign;
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, _) = natstudy_tests::small::study(&db, "Rules").await;
    // five participants in one fixed group (k = 5): each is planned every item
    let pool = assign::ensure_pool(&db, study, 5).await.expect("pool");
    let spec = assign::BatchSpec {
        name: "fixed".into(),
        strategy: assign::Strategy::FixedGroups,
        filter: Default::default(),
        annotators: pool.clone(),
        seed: 1,
        lease_secs: 600,
        avoid_same_bug: false,
    };
    assign::create_batch(&db, study, None, &spec)
        .await
        .expect("batch");
    // two more, outside the batch, to take moved items: S6 and S7
    let all = assign::ensure_pool(&db, study, 7).await.expect("pool of 7");
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", PW, Role::Admin).await.expect("admin");
    let c = app.signed_in("ada", PW).await.expect("sign in");
    // each participant's assignments by status: what the two paths are compared by
    let held = || async {
        let rows: Vec<(String, String, i64)> = sqlx::query_as(
            "SELECT an.code, a.status, COUNT(*) FROM assignments a \
             JOIN annotators an ON an.id = a.annotator_id \
             GROUP BY an.code, a.status ORDER BY an.code, a.status",
        )
        .fetch_all(&db.pool)
        .await
        .expect("assignments");
        rows
    };
    let of = |rows: &[(String, String, i64)], code: &str| -> Vec<(String, i64)> {
        rows.iter()
            .filter(|(c, _, _)| c == code)
            .map(|(_, s, n)| (s.clone(), *n))
            .collect()
    };
    let before = held().await;
    assert_eq!(of(&before, "S1"), vec![("assigned".to_owned(), 3)]);
    assert!(of(&before, "S6").is_empty());
    let s = study.to_string();
    refused_by_both(
        &c,
        &app,
        &db.url,
        (
            "/api/studies/move",
            &[
                ("study", s.clone()),
                ("annotator", pool[0].to_string()),
                ("to", "NOPE".into()),
            ],
        ),
        &["batch", "move", "--study", "Rules", "S1", "NOPE"],
        "annotator NOPE",
    )
    .await;
    assert_eq!(held().await, before, "nothing moved");

    // within the rules: the page releases S1 and the command S2; the page moves S3's items to
    // S6 and the command S4's to S7 — each pair ends the same
    let page = |endpoint: &'static str, form: Vec<(&'static str, String)>| {
        let c = c.clone();
        let url = app.url(endpoint);
        async move {
            let r = c.post(url).form(&form).send().await.expect("page");
            assert!(r.status().is_success(), "{endpoint}: {}", r.status());
            r.text().await.expect("text")
        }
    };
    let freed = page(
        "/api/studies/release",
        vec![("study", s.clone()), ("annotator", pool[0].to_string())],
    )
    .await;
    assert_eq!(freed.trim(), "3", "the page's count");
    cli(&db.url, &["batch", "release", "--study", "Rules", "S2"])
        .await
        .expect("release");
    let moved = page(
        "/api/studies/move",
        vec![
            ("study", s.clone()),
            ("annotator", pool[2].to_string()),
            ("to", "S6".into()),
        ],
    )
    .await;
    assert_eq!(moved.trim(), "3", "the page's count");
    cli(&db.url, &["batch", "move", "--study", "Rules", "S4", "S7"])
        .await
        .expect("move");
    let after = held().await;
    assert_eq!(of(&after, "S1"), vec![("released".to_owned(), 3)]);
    assert_eq!(
        of(&after, "S1"),
        of(&after, "S2"),
        "release: page and command"
    );
    assert_eq!(of(&after, "S3"), vec![("released".to_owned(), 3)]);
    assert_eq!(of(&after, "S3"), of(&after, "S4"), "move: page and command");
    assert_eq!(of(&after, "S6"), vec![("assigned".to_owned(), 3)]);
    assert_eq!(
        of(&after, "S6"),
        of(&after, "S7"),
        "moved: page and command"
    );
    assert_eq!(all.len(), 7);
    drop(app);
    guard.drop_now(db).await;
}

on_both_stores!(drop_outs_are_handled_alike_on_the_page_and_the_command_line => drop_outs_are_handled_alike_on_the_page_and_the_command_line_sqlite, drop_outs_are_handled_alike_on_the_page_and_the_command_line_postgres);
