//! An admin in headless Chromium creates a study, uploads the reference study's items, builds
//! a batch and makes an invite link; a participant (over HTTP) joins and votes; the vote appears
//! in the admin's live monitor.

use std::path::PathBuf;

use fantoccini::Locator;
use natstudy_core::service::jobs::JobKind;
use natstudy_core::store::JobState;
use natstudy_tests::browser::Browser;
use natstudy_tests::{fresh_db, Role, Store, TestApp};
use natstudy_vocab::ids::StudyId;

const RITA: (&str, &str, &str) = ("rita", "a-long-password", "rita (researcher)");

fn reference() -> PathBuf {
    natstudy_tests::reference_dir().join("study-small")
}

/// The first invite link's full address, as its field holds it once the page is interactive.
/// A fresh SQLite store, the server on it, Rita (a researcher) and a study of hers named
/// `title`, with nothing in it.
async fn ritas_study(
    title: &str,
) -> (
    natstudy_core::service::Db,
    natstudy_tests::DbGuard,
    TestApp,
    StudyId,
) {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let app = TestApp::start(db.clone()).await.expect("server");
    let rita = app
        .add_user("rita", "a-long-password", Role::Researcher)
        .await
        .expect("researcher");
    // a researcher works on the studies she owns
    let study = natstudy_core::store::studies::create_owned(&db, None, Some(rita), title, "")
        .await
        .expect("study");
    (db, guard, app, study)
}

async fn invite_url(b: &Browser) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let v = b
            .client
            .execute(
                "const i = document.querySelector('#invites .invite-url'); return i ? i.value : ''",
                vec![],
            )
            .await
            .expect("js");
        let v = v.as_str().unwrap_or("").to_owned();
        if v.starts_with("http") {
            return v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no invite address: {v:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn admin_sets_up_a_study_and_sees_a_participant_vote() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", "a-long-password", Role::Admin)
        .await
        .expect("admin");
    let b = Browser::start().await.expect("browser");

    b.client
        .goto(&app.url("/login?next=/studies"))
        .await
        .expect("goto");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.sign_in("ada", "a-long-password", "ada (admin)")
        .await
        .expect("signed in");

    // create the study
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    let form = b
        .client
        .find(Locator::Css("#create-study-form"))
        .await
        .expect("form");
    form.find(Locator::Css("input[name=name]"))
        .await
        .expect("name")
        .send_keys("Reference")
        .await
        .expect("type");
    form.find(Locator::Css("button"))
        .await
        .expect("button")
        .click()
        .await
        .expect("click");
    b.wait_for_text("#study-name", "Reference")
        .await
        .expect("study page");
    let study: StudyId = b
        .client
        .current_url()
        .await
        .expect("url")
        .path()
        .rsplit('/')
        .next()
        .and_then(|s| s.parse().ok())
        .expect("study id");

    // upload bugs.jsonl + transformations.jsonl
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    let r = reference()
        .canonicalize()
        .expect("shared/reference/study-small");
    let paths = format!(
        "{}\n{}",
        r.join("bugs.jsonl").display(),
        r.join("transformations.jsonl").display()
    );
    b.client
        .find(Locator::Css("#upload-files"))
        .await
        .expect("file input")
        .send_keys(&paths)
        .await
        .expect("choose files");
    b.client
        .find(Locator::Css("#upload-submit"))
        .await
        .expect("import")
        .click()
        .await
        .expect("click");
    b.wait_contains("#upload-result", "imported").await;
    let items: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM items")
        .fetch_one(&db.pool)
        .await
        .expect("count");
    assert_eq!(items, 297);

    // nothing to rate yet: the monitor says what comes first
    b.wait_contains("#no-annotators", "No annotators yet").await;
    b.wait_contains("#no-batches", "No batches yet").await;
    b.wait_contains("#no-invites", "build a batch first").await;

    // a dynamic batch over every item, and an invite link into it
    let bf = b
        .client
        .find(Locator::Css("#batch-form"))
        .await
        .expect("batch form");
    bf.find(Locator::Css("input[name=name]"))
        .await
        .expect("name")
        .send_keys("wave-1")
        .await
        .expect("type");
    b.client
        .find(Locator::Css("#batch-submit"))
        .await
        .expect("build")
        .click()
        .await
        .expect("click");
    b.wait_contains("#batch-result", "297 items").await;
    b.wait_contains("#batches", "wave-1").await;
    b.wait_contains("#no-invites", "make one for a batch above")
        .await;
    assert!(
        b.client.find(Locator::Css("#no-batches")).await.is_err(),
        "a batch, and still 'no batches'"
    );
    b.client
        .find(Locator::Css("#batches button"))
        .await
        .expect("invite")
        .click()
        .await
        .expect("click");
    // the invite is listed with its full address (to copy), what it joins and its uses
    b.wait_contains("#invites", "wave-1").await;
    b.wait_contains("#invites", "0 / 10").await;
    let link = invite_url(&b).await;
    let prefix = app.url("/join/");
    assert!(
        link.starts_with(&prefix),
        "a full, copyable address: {link}"
    );
    let token = link[prefix.len()..].to_owned();
    b.wait_contains("#monitor-votes", "0").await;
    // no kappa yet, and the page says why
    b.wait_contains("#live-kappa", "—").await;
    b.wait_contains("#kappa-why", "at least two items with k ratings")
        .await;

    // a participant joins and votes over plain HTTP
    let p = app.client();
    let ok = |r: reqwest::Response| {
        assert!(
            r.status().is_success() || r.status().is_redirection(),
            "{}",
            r.status()
        );
        r
    };
    ok(p.post(app.url("/api/join"))
        .form(&[("token", token.as_str())])
        .send()
        .await
        .expect("join"));
    let s = study.to_string();
    ok(p.post(app.url("/api/annotate/consent"))
        .form(&[
            ("study", s.as_str()),
            ("answers[years]", "3-5"),
            ("answers[role]", "developer"),
        ])
        .send()
        .await
        .expect("consent"));
    ok(p.post(app.url("/api/annotate/start"))
        .form(&[("study", s.as_str())])
        .send()
        .await
        .expect("start"));
    let state: serde_json::Value = ok(p
        .post(app.url("/api/annotate/state"))
        .form(&[("study", s.as_str())])
        .send()
        .await
        .expect("state"))
    .json()
    .await
    .expect("json");
    let item = state["step"]["Rate"]["item"]
        .as_i64()
        .expect("an item to rate")
        .to_string();
    let tok = state["step"]["Rate"]["token"]
        .as_str()
        .expect("token")
        .to_owned();
    ok(p.post(app.url("/api/annotate/vote"))
        .form(&[
            ("study", s.as_str()),
            ("item", &item),
            ("cr", "3"),
            ("cc", "2"),
            ("time_secs", "7.5"),
            ("token", &tok),
        ])
        .send()
        .await
        .expect("vote"));

    // the admin's monitor shows it without a reload
    b.wait_contains("#monitor-votes", "1").await;
    b.wait_contains("#annotators", "S1").await;
    b.wait_contains("#items-with-1", "1").await;
    b.wait_contains("#invites", "1 / 10").await;
    // the admin closes the link: no one new joins through it
    b.click("#invites .close-invite").await.expect("close");
    b.wait_contains("#invites", "closed").await;
    let late = app
        .client()
        .post(app.url("/api/join"))
        .form(&[("token", token.as_str())])
        .send()
        .await
        .expect("join");
    assert_eq!(late.status(), reqwest::StatusCode::FORBIDDEN);

    // the results page analyses the votes so far, with charts
    b.client
        .goto(&app.url(&format!("/studies/{study}/results")))
        .await
        .expect("results");
    b.wait_contains("#results-votes", "1").await;
    // …of which the figures count none: the page says so beside the study's count
    b.wait_for_text("#results-analysed", "0")
        .await
        .expect("the analysed votes");
    // one vote of k = 5: no item is complete, so no category and no chart of categories;
    // the page says so first and lists the item as incomplete
    b.wait_contains("#results-headline", "have all k = 5 ratings")
        .await;
    assert!(
        b.client
            .find(Locator::Css("#naturalness_by_level-svg svg"))
            .await
            .is_err(),
        "no chart of categories from an incomplete item"
    );
    b.wait_contains("#results-tables", "Incomplete items").await;
    b.wait_contains("#results-headline", "Fleiss").await;
    b.wait_contains("#results-tables", "Naturalness by level")
        .await;
    // numbers right-aligned in tabular figures, the row's name on the left
    let aligned = b
        .client
        .execute(
            "const t = document.querySelector('#table-naturalness'); \
             const c = t.querySelectorAll('tbody tr:first-child td'); \
             return [getComputedStyle(c[0]).textAlign, getComputedStyle(c[1]).textAlign, \
                     getComputedStyle(c[1]).fontVariantNumeric];",
            vec![],
        )
        .await
        .expect("styles");
    assert_eq!(
        aligned,
        serde_json::json!(["left", "right", "tabular-nums"]),
        "number cells"
    );
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// A researcher previews the engine's transformations of the study's bugs as diffs, selects
/// them all and adds them as items; previewing again proposes nothing new.
#[tokio::test]
async fn researcher_generates_transformations_and_adds_them_as_items() {
    let (db, guard, app, study) = ritas_study("Generated").await;
    let bugs = std::fs::read_to_string(reference().join("bugs.jsonl")).expect("bugs");
    // the bugs, with one hand-made item
    let first_bug = bugs.lines().next().expect("a bug");
    let b0: serde_json::Value = serde_json::from_str(first_bug).expect("json");
    let item = serde_json::json!({
        "id": "naming_1", "bug_id": b0["bug_id"], "operator": "RenameVariable-1",
        "level": "naming", "source": b0["source"].as_str().expect("src").replace("limit", "lim"),
        "summary": "hand-made"
    });
    natstudy_core::service::imports::import_items_text(
        &db,
        study,
        None,
        ("bugs.jsonl", &bugs),
        ("t.jsonl", &item.to_string()),
    )
    .await
    .expect("import");

    let b = Browser::start().await.expect("browser");
    b.open_as(&app.base, &format!("/studies/{study}"), RITA)
        .await
        .expect("study page");
    b.client
        .find(Locator::Css(
            "#generate-operators option[value='ReverseIf']",
        ))
        .await
        .expect("option")
        .click()
        .await
        .expect("pick ReverseIf");
    b.click("#generate-preview").await.expect("preview");
    b.wait_contains("#generate-count", "proposed").await;
    let count = b.text_of("#generate-count").await;
    let n: usize = count
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .expect("a count");
    assert_eq!(
        n,
        bugs.lines().count(),
        "one For2While per bug: every bug has a for loop on its buggy line"
    );
    // the diff of a proposal shows the loop rewritten
    let first = b
        .client
        .find(Locator::Css("#proposals details"))
        .await
        .expect("a proposal");
    first
        .find(Locator::Css("summary"))
        .await
        .expect("summary")
        .click()
        .await
        .expect("open");
    b.wait_contains("#proposals details[open] table", "if (!(")
        .await;
    // opened at its first change, which is on screen; the proposal names its lines, and its
    // checkbox has that as its label (outside the summary)
    let opened = b
        .client
        .execute(
            "const row = document.getElementById('proposal-0-change-1'); const r = row.getBoundingClientRect(); \
             const pick = document.getElementById('pick-0'); \
             return [r.top >= 0 && r.bottom <= window.innerHeight, document.activeElement === row, \
                     pick.labels.length === 1 && /line/.test(pick.labels[0].textContent), !!pick.closest('summary')]",
            vec![],
        )
        .await
        .expect("js");
    assert_eq!(opened, serde_json::json!([true, true, true, false]));
    b.click("#generate-select-all").await.expect("select all");
    b.wait_contains("#generate-add", &format!("Add {n} selected"))
        .await;
    b.click("#generate-add").await.expect("add");
    b.wait_contains("#generate-result", &format!("added {n} items"))
        .await;
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT item_key, operator FROM items WHERE study_id = $1 ORDER BY id")
            .bind(study)
            .fetch_all(&db.pool)
            .await
            .expect("items");
    assert_eq!(rows.len(), n + 1);
    assert_eq!(rows[1], ("statement_1".to_owned(), "ReverseIf".to_owned()));
    assert!(rows[1..].iter().all(|(_, op)| op == "ReverseIf"));
    // nothing new to propose now
    b.click("#generate-preview").await.expect("preview");
    b.wait_contains("#generate-count", "0 proposed").await;
    // why not: every operator's kept applications and the rules that refused sites
    b.client
        .find(Locator::Css("#generate-operators option[value='all']"))
        .await
        .expect("option")
        .click()
        .await
        .expect("pick all");
    b.click("#generate-why").await.expect("why");
    b.wait_contains("#why", "Switch2If").await;
    b.wait_contains(
        "#why",
        "no site: the method has nothing this operator rewrites",
    )
    .await;
    // in the page's words: its own checkbox, not the command line's flag
    b.wait_contains(
        "#why",
        "changes no buggy line (allowed with \u{201c}also away from the buggy lines\u{201d})",
    )
    .await;
    assert!(!b.text_of("#why").await.contains("--all-sites"));
    b.close().await;
    guard.drop_now(db).await;
}

/// An upload over a slow uplink shows how far it is while it runs: a bar and "uploading… 37%
/// (1.5 MiB of 4.0 MiB)", rising, in the file's unit; at its end the row goes and the model
/// is listed.
#[tokio::test]
async fn a_slow_upload_shows_its_progress() {
    let (db, guard, app, study) = ritas_study("Slow upload").await;
    let model = natstudy_tests::reference_dir().join("lm/model.arpa");
    let bytes = std::fs::metadata(&model).expect("model").len();
    let mut b = Browser::start().await.expect("browser");
    b.open_as(&app.base, &format!("/studies/{study}"), RITA)
        .await
        .expect("study page");
    b.wait_contains("#scoring", "No model on the server yet")
        .await;
    // about eight seconds for the reference model's 4 MB
    b.throttle_upload(4_000).await.expect("throttle");
    b.choose_file("#model-file", &model).await.expect("choose");
    b.click("#model-upload").await.expect("upload");
    let whole = format!("of {:.1} MiB)", bytes as f64 / f64::from(1 << 20));
    let mut seen = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        // the row's words and its bar in one read: the row goes when the upload ends
        let read = b
            .client
            .execute(
                "const p = document.querySelector('#model-sending'); \
                 const bar = p && p.querySelector('progress'); \
                 return p ? [p.textContent, bar ? bar.getAttribute('value') : '', \
                   bar ? bar.getAttribute('max') : ''] : null",
                vec![],
            )
            .await
            .expect("js");
        let cell = |i: usize| read[i].as_str().unwrap_or_default().to_owned();
        let row = cell(0).trim().to_owned();
        if let Some(pct) = row
            .strip_prefix("uploading… ")
            .and_then(|r| r.split_once('%'))
        {
            assert!(row.ends_with(&whole), "{row:?} ends with {whole:?}");
            let pct: u32 = pct.0.parse().expect("a percentage");
            let at = [cell(1), cell(2)].map(|v| v.parse::<u64>().unwrap_or(0));
            // the bar reads the same progress as the words: the request's body, the file
            // and the form's few other fields
            assert!(
                at[0] <= at[1] && (bytes..bytes + 4096).contains(&at[1]),
                "bar {at:?} for a file of {bytes} bytes"
            );
            seen.push(pct);
        }
        if b.text_of("#score-model").await.contains("model.arpa") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the upload did not end: {seen:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    }
    let between: Vec<u32> = seen
        .iter()
        .copied()
        .filter(|p| (1..100).contains(p))
        .collect();
    assert!(
        between.len() >= 3,
        "the row showed the upload part-way a few times: {seen:?}"
    );
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "rising: {seen:?}");
    assert!(b.client.find(Locator::Css("#model-sending")).await.is_err());
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// A researcher uploads an n-gram model on the study page, starts scoring as a background job,
/// watches its progress reach the end, and the study has a CE score for every method; then
/// deletes the model from the page.
#[tokio::test]
async fn researcher_scores_a_study_with_an_uploaded_model() {
    let (db, guard, app, study) = ritas_study("Scored").await;
    let r = reference();
    natstudy_core::service::imports::import_items(
        &db,
        study,
        &r.join("bugs.jsonl"),
        &r.join("transformations.jsonl"),
    )
    .await
    .expect("items");
    let dir = tempfile::tempdir().expect("dir");
    let model = dir.path().join("ref-4gram.arpa");
    let corpus = natstudy_tests::reference_dir().join("lm/corpus.txt");
    natstudy_tests::cli(
        &db.url,
        &[
            "lm",
            "train",
            "--tokens",
            &corpus.display().to_string(),
            "--out",
            &model.display().to_string(),
        ],
    )
    .await
    .expect("train");

    let b = Browser::start().await.expect("browser");
    b.open_as(&app.base, &format!("/studies/{study}"), RITA)
        .await
        .expect("study page");
    // a full load of the study page hydrates (its resources are made outside any Suspend)
    b.client
        .goto(&app.url(&format!("/studies/{study}")))
        .await
        .expect("goto");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated on a full load");
    b.wait_contains("#scoring", "No model on the server yet")
        .await;
    b.choose_file("#model-file", &model).await.expect("choose");
    b.click("#model-upload").await.expect("upload");
    b.wait_contains("#score-model", "ref-4gram.arpa").await;
    // the same file again: refused, and the refusal shows beside the form, the page stays
    // (without the page's script the browser left the page for the server's text)
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated after the upload");
    b.choose_file("#model-file", &model).await.expect("choose");
    b.click("#model-upload").await.expect("upload again");
    b.wait_contains(
        "#model-upload-error",
        "a model named ref-4gram.arpa exists already",
    )
    .await;
    let url = b.client.current_url().await.expect("url");
    assert_eq!(url.path(), format!("/studies/{study}"), "the page stays");
    assert!(b.client.find(Locator::Css("#model-sending")).await.is_err());
    // the generator can rank RenameVariable-2's names with the uploaded model
    b.wait_contains("#generate-model", "names ranked by ref-4gram.arpa")
        .await;
    b.click("#generate-operators option[value='RenameVariable-2']")
        .await
        .expect("operator");
    b.click("#generate-model option[value='ref-4gram.arpa']")
        .await
        .expect("model");
    b.click("#generate-preview").await.expect("preview");
    b.wait_contains("#generate-count", "proposed").await;
    let proposed = b.text_of("#generate-count").await;
    assert!(!proposed.starts_with("0 "), "{proposed}");
    assert!(
        app.models_dir.join("ref-4gram.arpa").is_file(),
        "stored in the models directory"
    );
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.click("#score-start").await.expect("start");
    b.wait_contains("#jobs", "score with ref-4gram.arpa").await;
    // (357 methods tokenized and scored, then the report: more than 30 s on a loaded machine)
    b.wait_for_job(
        "done: scored 357 methods",
        std::time::Duration::from_secs(180),
    )
    .await;
    b.wait_contains("#jobs", "357/357 (100%)").await;
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM ce_scores WHERE study_id = $1 AND model = 'ref-4gram'",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await
    .expect("count");
    assert_eq!(n, 357, "60 bugs + 297 transformations");
    // a Hugging Face folder through the folder picker: stored under the folder's name, listed
    // as a neural model
    b.client
        .find(Locator::Css("#folder-files"))
        .await
        .expect("folder input")
        .send_keys(
            &natstudy_tests::reference_dir()
                .join("nlm/models/llama")
                .canonicalize()
                .expect("the reference folder")
                .display()
                .to_string(),
        )
        .await
        .expect("choose a folder");
    b.click("#folder-upload").await.expect("upload the folder");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated after the upload");
    b.wait_contains("#score-model", "llama (neural").await;
    // what its weights take in memory: 336,192 of them in f32
    b.wait_contains("#models", "needs 1.3 MiB of memory to score")
        .await;
    // a model put in the models folder whose weights (4 TiB in f32) exceed what the server
    // has free is listed with the warning that scoring it would be refused
    natstudy_tests::model_too_big_for_memory(&app.models_dir.join("zz-huge"));
    b.goto_hydrated(&app.url(&format!("/studies/{study}")))
        .await
        .expect("the page again");
    b.wait_contains("#models .model-too-big", "more than the server's")
        .await;
    assert!(
        b.text_of("#models")
            .await
            .contains("needs 4.0 TiB of memory to score"),
        "{}",
        b.text_of("#models").await
    );
    std::fs::remove_dir_all(app.models_dir.join("zz-huge")).expect("remove");
    b.goto_hydrated(&app.url(&format!("/studies/{study}")))
        .await
        .expect("the page again");
    assert!(!b.text_of("#models").await.contains("zz-huge"));
    assert!(
        app.models_dir.join("llama/model.safetensors").is_file(),
        "the folder's weights stored under its name"
    );
    // verification as a background job, stopped from the page as it runs (javac on 297
    // files takes tens of seconds; the workers stop before their next bug), then run again:
    // every item compiled in its file, stored per item
    b.click("#verify-start").await.expect("verify");
    b.wait_contains("#jobs", "verify: compile every item").await;
    b.click("#jobs button.job-stop")
        .await
        .expect("stop the verification");
    b.wait_for_job("nothing stored", std::time::Duration::from_secs(60))
        .await;
    let stored: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM item_checks c JOIN items i ON i.id = c.item_id WHERE i.study_id = $1",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await
    .expect("count");
    assert_eq!(stored, 0, "a stopped verification stores nothing");
    b.click("#jobs tr.job.stopped button.job-retry")
        .await
        .expect("run it again");
    // (javac on 297 files: allow more than the usual 30 s on a loaded machine)
    b.wait_for_job(
        "done: 297 items checked",
        std::time::Duration::from_secs(180),
    )
    .await;
    let checked: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM item_checks c JOIN items i ON i.id = c.item_id WHERE i.study_id = $1 AND c.compiles IS NOT NULL",
    )
    .bind(study)
    .fetch_one(&db.pool)
    .await
    .expect("count");
    assert_eq!(checked, 297, "every item compiled (javac on this machine)");
    // the study's staff delete the models it uploaded from the page (the folder first, by
    // name); its scores stay
    b.wait_contains("#model-quota", "This study's models:")
        .await;
    b.click("#models button[aria-label='Delete llama']")
        .await
        .expect("delete the folder");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while app.models_dir.join("llama").exists() {
        assert!(std::time::Instant::now() < deadline, "the folder stays");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while b.text_of("#models").await.contains("llama") {
        assert!(
            std::time::Instant::now() < deadline,
            "the page still lists the folder"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    b.click("#models .model-delete").await.expect("delete");
    b.wait_contains("#scoring", "No model on the server yet")
        .await;
    assert!(!app.models_dir.join("ref-4gram.arpa").exists());
    let kept: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM ce_scores WHERE study_id = $1")
        .bind(study)
        .fetch_one(&db.pool)
        .await
        .expect("count");
    assert_eq!(kept, 357, "scores stay");
    b.close().await;
    guard.drop_now(db).await;
}

/// The admin's study page (monitor, batches, invites, participants, the generator, uploads,
/// the models with a long name and the warning that one is too big to score, background jobs
/// with their pace and their buttons — the running one stopped from the keyboard on the
/// phone, the failed one run again from the keyboard on the laptop —, members) fits a phone's
/// width and a laptop's: nothing makes the page scroll sideways (wide tables scroll inside
/// their own box). NATSTUDY_SCREENSHOTS=DIR keeps what each showed.
#[tokio::test]
async fn the_study_page_fits_a_phone_and_a_laptop() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let study = natstudy_tests::reference_study(&db, "Wide", true)
        .await
        .expect("study");
    let (_, _token) = natstudy_tests::open_queue(&db, study, 10)
        .await
        .expect("queue");
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", "a-long-password", Role::Admin)
        .await
        .expect("admin");
    natstudy_tests::model_too_big_for_memory(
        &app.models_dir
            .join("starcoder2_15b_instruct_v0_1_converted_by_hand_for_natstudy_scoring"),
    );
    // background jobs with their buttons: one running, one failed (whose model is back)
    std::fs::copy(
        natstudy_tests::reference_dir().join("lm/model.arpa"),
        app.models_dir.join("ref.arpa"),
    )
    .expect("model in the folder");
    // a neural model's job still loading its model (no steps yet: minutes for a 7B model),
    // 4.6 GiB of its 12.6 GiB read
    let loading = scoring_job(&db, study, "codellama-7b", None).await;
    let read = natstudy_core::store::jobs::Progress {
        load_read: 4_987_654_321,
        load_of: 13_476_839_424,
        ..Default::default()
    };
    natstudy_core::store::jobs::progress(&db, loading, read)
        .await
        .expect("progress");
    let running = scoring_job(&db, study, "ref.arpa", None).await;
    // its pace as its runner writes it: 5,000 tokens in 20 s, 250 s left
    let pace = natstudy_core::store::jobs::Progress {
        done: 10,
        total: 357,
        tokens: 5_000,
        counting_ms: 20_000,
        eta_ms: Some(250_000),
        ..Default::default()
    };
    natstudy_core::store::jobs::progress(&db, running, pace)
        .await
        .expect("progress");
    scoring_job(
        &db,
        study,
        "ref.arpa",
        Some((JobState::Failed, "model ref.arpa: not found")),
    )
    .await;
    let b = Browser::start().await.expect("browser");
    b.open_as(
        &app.base,
        &format!("/studies/{study}"),
        ("ada", "a-long-password", "ada (admin)"),
    )
    .await
    .expect("study page");
    for (w, h) in [(390u32, 844u32), (1366, 900)] {
        b.client.set_window_size(w, h).await.expect("size");
        b.goto_hydrated(&app.url(&format!("/studies/{study}")))
            .await
            .expect("reload");
        b.wait_contains("#monitor", "ratings").await;
        b.wait_contains("#invites", "open").await;
        b.wait_contains("#models .model-too-big", "more than the server's")
            .await;
        b.wait_contains("#jobs", "Run again").await;
        b.wait_contains("#jobs .job-pace", "250 tokens/s · about 5 min left")
            .await;
        b.wait_contains("#jobs", "loading the model… 37% (4.6 GiB of 12.6 GiB)")
            .await;
        if w < 500 {
            // on the phone, from the keyboard: the running job's Stop, focused, and Enter
            b.client
                .find(Locator::Css("#jobs button.job-stop"))
                .await
                .expect("Stop")
                .send_keys("\u{E007}")
                .await
                .expect("Enter");
            b.wait_contains("#jobs", "running (stopping…)").await;
        } else {
            // on the laptop, from the keyboard: the failed job's Run again, focused, and Space
            b.client
                .find(Locator::Css("#jobs button.job-retry"))
                .await
                .expect("Run again")
                .send_keys(" ")
                .await
                .expect("Space");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while natstudy_core::store::jobs::list(&db, study)
                .await
                .expect("jobs")
                .len()
                < 4
            {
                assert!(
                    std::time::Instant::now() < deadline,
                    "Run again from the keyboard started no job"
                );
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
        }
        if let Ok(dir) = std::env::var("NATSTUDY_SCREENSHOTS") {
            let png = b.client.screenshot().await.expect("screenshot");
            std::fs::write(
                std::path::Path::new(&dir).join(format!("study-{w}.png")),
                png,
            )
            .expect("write");
        }
        let overflow = b.sideways().await.expect("js");
        assert!(
            overflow <= 0.0,
            "at {w} px the page scrolls sideways by {overflow}"
        );
    }
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// The start page lists a staff account's studies with a way to their results, and an
/// annotator's studies with a way to their items; it hydrates on a full load for both. The
/// list of studies and the accounts page fit a phone's width: the studies' table scrolls inside
/// its own box, each account is a block of its own there (its role, its state and a new
/// password each on a line, every button on screen), and a table with its headings on a laptop.
#[tokio::test]
async fn the_studies_and_the_accounts_fit_a_phone() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    natstudy_tests::reference_study(&db, "Naturalness of Defects4J transformations, 2026", true)
        .await
        .expect("study");
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", "a-long-password", Role::Admin)
        .await
        .expect("admin");
    for name in ["a-researcher-with-a-long-name", "annotator-7"] {
        app.add_user(name, "a-long-password", Role::Annotator)
            .await
            .expect("user");
    }
    let b = Browser::start_sized(390, 844).await.expect("browser");
    b.open_as(
        &app.base,
        "/studies",
        ("ada", "a-long-password", "ada (admin)"),
    )
    .await
    .expect("studies");
    for (w, h) in [(390u32, 844u32), (1366, 900)] {
        b.client.set_window_size(w, h).await.expect("size");
        // the start page lists the studies, each with its results
        b.goto_hydrated(&app.url("/")).await.expect("home");
        b.wait_contains("#home-studies", "Naturalness of Defects4J")
            .await;
        // beside the study's name: on screen before the table scrolls, on a phone too
        let shown = b
            .client
            .execute(
                "const r = document.querySelector(\"#home-studies a[href$='/results']\") \
                   .getBoundingClientRect(); return r.right <= window.innerWidth && r.left >= 0",
                vec![],
            )
            .await
            .expect("js");
        assert_eq!(
            shown,
            serde_json::json!(true),
            "results link on screen at {w} px"
        );
        b.click("#home-studies a[href$='/results']")
            .await
            .expect("results");
        b.wait_for_text("h1", "Results")
            .await
            .expect("results page");
        b.goto_hydrated(&app.url("/studies"))
            .await
            .expect("studies");
        b.wait_contains("#studies", "Naturalness of Defects4J")
            .await;
        let overflow = b.sideways().await.expect("js");
        assert!(
            overflow <= 0.0,
            "/studies at {w} px scrolls sideways by {overflow}"
        );
        b.goto_hydrated(&app.url("/admin/users"))
            .await
            .expect("users");
        b.wait_contains("#users", "a-researcher-with-a-long-name")
            .await;
        let overflow = b.sideways().await.expect("js");
        assert!(
            overflow <= 0.0,
            "/admin/users at {w} px scrolls sideways by {overflow}"
        );
        // every control of every account on screen; the headings only where rows are rows
        let off = b
            .client
            .execute(
                "return [...document.querySelectorAll('#users button, #users input:not([type=hidden]), #users select')] \
                   .filter(e => e.getBoundingClientRect().right > window.innerWidth) \
                   .map(e => e.outerHTML.slice(0, 80))",
                vec![],
            )
            .await
            .expect("js");
        assert_eq!(off, serde_json::json!([]), "at {w} px, past the right edge");
        let headings = b
            .client
            .find(Locator::Css("#users thead"))
            .await
            .expect("thead")
            .is_displayed()
            .await
            .expect("displayed");
        assert_eq!(headings, w > 700, "headings at {w} px");
    }
    // an annotator's start page lists the studies it has items in, each a link to them
    let study = natstudy_core::store::studies::list(&db)
        .await
        .expect("studies")[0]
        .id;
    let ann = natstudy_core::store::users::credentials(&db, "annotator-7")
        .await
        .expect("db")
        .expect("annotator-7")
        .user
        .id;
    natstudy_core::store::invites::enrol_user(&db, study, ann)
        .await
        .expect("enrol");
    b.client.delete_all_cookies().await.expect("sign out");
    b.open_as(
        &app.base,
        "/",
        ("annotator-7", "a-long-password", "annotator-7 (annotator)"),
    )
    .await
    .expect("home");
    b.wait_contains("#my-studies", "Naturalness of Defects4J")
        .await;
    b.goto_hydrated(&app.url("/")).await.expect("home, served");
    b.wait_contains("#my-studies", "Naturalness of Defects4J")
        .await;
    // enrolled, in no batch yet: how far it is says so (counts: http.rs role_matrix)
    b.wait_contains("#my-studies", "no items for you yet").await;
    let serious = b.axe_serious().await.expect("axe");
    assert!(
        serious.is_empty(),
        "the annotator's start page: {serious:?}"
    );
    assert_eq!(b.text_of("#home-studies").await, "", "no staff list");
    b.click(&format!("#my-studies a[href='/annotate/{study}']"))
        .await
        .expect("the study's items");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("items page");
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// The study page's live panels are read again a while after each answer, not on a fixed
/// interval: over a link slower than the scoring panel's second (every request 1.5 s late), a
/// model put in the models folder still shows there. (With a 1 s interval a read was always
/// queued behind the one in flight, the panel never done loading, and it stayed on its first
/// answer — a job that had ended read "running" for good.) A job's Stop and Run again say so
/// at once, and the panel shows the server's answer after them: a read started by the action
/// (not by the timer) left the timer of the answer before it to fire mid-read, and from then
/// on the panel was frozen again.
#[tokio::test]
async fn live_panels_keep_up_over_a_link_slower_than_their_refresh() {
    let (db, guard, app, study) = ritas_study("Slow").await;
    let mut b = Browser::start().await.expect("browser");
    b.open_as(&app.base, &format!("/studies/{study}"), RITA)
        .await
        .expect("study page");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.wait_contains("#scoring", "No model on the server yet")
        .await;
    b.throttle(1500, 100_000).await.expect("slow link");
    // let the panel's reads fall behind the link before the model arrives
    tokio::time::sleep(std::time::Duration::from_secs(4)).await;
    std::fs::copy(
        natstudy_tests::reference_dir().join("lm/model.arpa"),
        app.models_dir.join("slow-link.arpa"),
    )
    .expect("model in the folder");
    b.wait_contains("#score-model", "slow-link.arpa").await;
    // a job's Stop and Run again answer the click at once, long before the link does: the
    // button says what it is doing and takes no second click (a second Run again would start
    // a second job)
    let running = scoring_job(&db, study, "slow-link.arpa", None).await;
    b.wait_contains("#jobs", "score with slow-link.arpa").await;
    b.click("#jobs button.job-stop").await.expect("stop");
    answered_at_once(&b, "#jobs button.job-stop", "Stopping…", "(stopping…)").await;
    b.wait_contains("#jobs .job-state", "running (stopping…)")
        .await;
    assert!(
        natstudy_core::store::jobs::list(&db, study)
            .await
            .expect("jobs")
            .iter()
            .any(|j| j.id == running && j.stop_requested),
        "the stop reached the server"
    );
    natstudy_core::store::jobs::finish(
        &db,
        running,
        JobState::Stopped,
        "stopped on request: nothing stored",
    )
    .await
    .expect("stopped");
    b.wait_contains("#jobs .job-state", "nothing stored").await;
    b.click("#jobs button.job-retry").await.expect("run again");
    answered_at_once(&b, "#jobs button.job-retry", "Starting…", "done").await;
    b.wait_for_job("done", std::time::Duration::from_secs(60))
        .await;
    assert_eq!(
        natstudy_core::store::jobs::list(&db, study)
            .await
            .expect("jobs")
            .len(),
        2,
        "one click, one more job"
    );
    b.close().await;
    guard.drop_now(db).await;
}

/// A scoring job of the study with `model`, as the runner leaves it: running, or ended as
/// `end` says. Nothing runs it.
async fn scoring_job(
    db: &natstudy_core::service::Db,
    study: StudyId,
    model: &str,
    end: Option<(JobState, &str)>,
) -> natstudy_vocab::ids::JobId {
    let params = serde_json::json!({ "model": model, "log10": false }).to_string();
    let label = format!("score with {model}");
    let job = natstudy_core::store::jobs::create(db, study, None, JobKind::Score, &label, &params)
        .await
        .expect("job");
    assert!(natstudy_core::store::jobs::start(db, job)
        .await
        .expect("start"));
    if let Some((state, message)) = end {
        natstudy_core::store::jobs::finish(db, job, state, message)
            .await
            .expect("end");
    }
    job
}

/// Right after a click on `button`: it reads `busy` and is disabled while the page's jobs do
/// not yet read `answer` (the server's answer, seconds away over the slow link).
async fn answered_at_once(b: &Browser, button: &str, busy: &str, answer: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    loop {
        let seen = b
            .client
            .execute(
                "const e = document.querySelector(arguments[0]); \
                 const s = document.querySelector('#jobs .job-state'); \
                 return [e ? e.textContent.trim() : '', !!(e && e.disabled), s ? s.textContent : ''];",
                vec![button.into()],
            )
            .await
            .expect("js");
        let text = seen[0].as_str().unwrap_or_default();
        let state = seen[2].as_str().unwrap_or_default();
        if text == busy {
            assert_eq!(seen[1], true, "{button} reads {busy:?} but takes clicks");
            assert!(
                !state.contains(answer),
                "the server answered before the button did: {state:?}"
            );
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{button} never read {busy:?}; it reads {text:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// On the study page, at a phone's and a laptop's width: staff exclude a participant with a
/// reason from the keyboard (the reason field, Enter) and include them again with the mouse;
/// the monitor says which participant is excluded and why. A researcher's *Try the survey*
/// gives a pilot link; the pilot participant's rating shows in the pilot's line only, and an
/// admin's *Clear the pilot* deletes it. The page never scrolls sideways.
#[tokio::test]
async fn staff_exclude_a_participant_and_clear_the_pilot_on_the_page() {
    use natstudy_tests::participants::{self, participant};
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let (study, token) = natstudy_tests::small::study(&db, "Paid").await;
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", "a-long-password", Role::Admin)
        .await
        .expect("admin");
    let c = participant(&app.base, study, &token).await;
    let (item, tok) = participants::rate_step(&app.base, &c, study)
        .await
        .expect("an item");
    participants::vote(&app.base, &c, study, item, &tok, "").await;
    let counted = || async {
        sqlx::query_scalar::<_, i64>("SELECT counted FROM annotators WHERE study_id = $1")
            .bind(study)
            .fetch_one(&db.pool)
            .await
            .expect("annotator")
    };
    let b = Browser::start().await.expect("browser");
    b.open_as(
        &app.base,
        &format!("/studies/{study}"),
        ("ada", "a-long-password", "ada (admin)"),
    )
    .await
    .expect("study page");
    for (w, h) in [(390u32, 844u32), (1366, 900)] {
        b.client.set_window_size(w, h).await.expect("size");
        b.goto_hydrated(&app.url(&format!("/studies/{study}")))
            .await
            .expect("reload");
        b.wait_contains("#annotators", "S1").await;
        if w < 500 {
            // the keyboard: the reason, then Enter
            b.client
                .find(Locator::Css("input[aria-label='Reason to exclude S1']"))
                .await
                .expect("reason")
                .send_keys("answers at random\u{E007}")
                .await
                .expect("typed");
            b.wait_contains("#exclusion-result", "Excluded: 1 vote")
                .await;
            b.wait_contains("#annotators", "excluded: answers at random")
                .await;
            assert_eq!(counted().await, 0);
        } else {
            // the mouse: the reason, then Include
            b.client
                .find(Locator::Css("input[aria-label='Reason to include S1']"))
                .await
                .expect("reason")
                .send_keys("checked again")
                .await
                .expect("typed");
            b.click("#annotators .exclusion-form button")
                .await
                .expect("Include");
            b.wait_contains("#exclusion-result", "Included again: 1 vote")
                .await;
            assert_eq!(counted().await, 1);
        }
        let overflow = b.sideways().await.expect("js");
        assert!(
            overflow <= 0.0,
            "at {w} px the page scrolls sideways by {overflow}"
        );
    }
    // the pilot: a link to try the survey, its rating counted in the pilot's line only
    b.click("#pilot-link").await.expect("Try the survey");
    b.wait_contains("#pilot-url", "/join/").await;
    let path = b.text_of("#pilot-url").await;
    let pilot_token = path.trim().trim_start_matches("/join/").to_owned();
    let tryer = participant(&app.base, study, &pilot_token).await;
    let (item, tok) = participants::rate_step(&app.base, &tryer, study)
        .await
        .expect("a pilot item");
    participants::vote(&app.base, &tryer, study, item, &tok, "").await;
    b.wait_contains("#pilot-summary", "1 pilot participant with 1 rating")
        .await;
    b.wait_contains("#monitor-votes", "1").await;
    b.click("#clear-pilot").await.expect("Clear the pilot");
    b.wait_contains(
        "#clear-pilot-result",
        "Deleted 1 pilot participant and 1 rating.",
    )
    .await;
    b.wait_contains("#pilot-summary", "0 pilot participants with 0 ratings")
        .await;
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

/// A paid study set up on the page, as a researcher buying places on Prolific does: the
/// monitor counts the places from the batch (its 3 items × k 3 ÷ N 2, rounded up, is 5; a
/// joined participant takes one), "Copy for Prolific" copies the link with Prolific's id
/// placeholders, and an attention item is set on the page (an unknown item is refused by
/// name) — by mouse on a laptop and by keyboard on a phone, on each store.
async fn places_to_buy_the_prolific_link_and_attention_items_on_the_page(store: Store) {
    use natstudy_tests::participants::participant;
    let (db, guard) = fresh_db(store).await.expect("db");
    let (study, token) = natstudy_tests::small::study(&db, "Bought").await;
    let mut s = natstudy_core::service::studies::settings(&db, study)
        .await
        .expect("settings");
    s.ratings_per_item = 3;
    s.items_per_participant = Some(2);
    natstudy_core::service::studies::update_settings(&db, study, None, &s)
        .await
        .expect("settings");
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", "a-long-password", Role::Admin)
        .await
        .expect("admin");
    let b = Browser::start().await.expect("browser");
    b.open_as(
        &app.base,
        &format!("/studies/{study}"),
        ("ada", "a-long-password", "ada (admin)"),
    )
    .await
    .expect("study page");
    b.wait_contains("#participants-needed", "2 items per participant")
        .await;
    b.wait_contains(
        "#participants-needed li.places",
        "3 items × k 3 ÷ 2, rounded up, is 5 participants; 0 places taken: 5 places to buy.",
    )
    .await;
    let _joined = participant(&app.base, study, &token).await;
    b.wait_contains(
        "#participants-needed li.places",
        "1 place taken: 4 places to buy.",
    )
    .await;
    // the clipboard, as the page's copy writes it
    b.client
        .execute(
            "navigator.clipboard.writeText = t => { window.copied = t; return Promise.resolve(); }",
            vec![],
        )
        .await
        .expect("stub");
    b.click("#invites .copy-prolific").await.expect("copy");
    let mut copied = serde_json::Value::Null;
    for _ in 0..50 {
        copied = b
            .client
            .execute("return window.copied || null", vec![])
            .await
            .expect("copied");
        if copied.is_string() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(
        copied,
        serde_json::json!(format!(
            "{}/join/{token}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}&SESSION_ID={{{{%SESSION_ID%}}}}",
            app.base
        ))
    );
    let gold = |item: &'static str| {
        let db = db.clone();
        async move {
            sqlx::query_scalar::<_, Option<i64>>(
                "SELECT gold_unnatural FROM items WHERE item_key = $1",
            )
            .bind(item)
            .fetch_one(&db.pool)
            .await
            .expect("item")
        }
    };
    // a laptop, the mouse: an unknown item is refused by name, then naming_1 is set
    b.client
        .find(Locator::Css("#attention-item"))
        .await
        .expect("item field")
        .send_keys("naming_9")
        .await
        .expect("typed");
    b.click("#attention-submit").await.expect("set");
    b.wait_contains("#attention-error", "naming_9").await;
    b.client
        .find(Locator::Css("#attention-item"))
        .await
        .expect("item field")
        .clear()
        .await
        .expect("cleared");
    b.client
        .find(Locator::Css("#attention-item"))
        .await
        .expect("item field")
        .send_keys("naming_1")
        .await
        .expect("typed");
    b.click("#attention-submit").await.expect("set");
    b.wait_contains(
        "#attention-result",
        "naming_1 is an attention item: expected unnatural.",
    )
    .await;
    assert_eq!(gold("naming_1").await, Some(1));
    // a phone, the keyboard: expected natural, sent with Enter
    b.client.set_window_size(390, 844).await.expect("size");
    b.goto_hydrated(&app.url(&format!("/studies/{study}")))
        .await
        .expect("reload");
    b.click("#attention-expect option[value='natural']")
        .await
        .expect("natural");
    b.client
        .find(Locator::Css("#attention-item"))
        .await
        .expect("item field")
        .send_keys("expression_1\u{E007}")
        .await
        .expect("typed");
    b.wait_contains(
        "#attention-result",
        "expression_1 is an attention item: expected natural.",
    )
    .await;
    assert_eq!(gold("expression_1").await, Some(0));
    let overflow = b.sideways().await.expect("js");
    assert!(
        overflow <= 0.0,
        "the phone's page scrolls sideways by {overflow}"
    );
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}

#[tokio::test]
async fn places_to_buy_the_prolific_link_and_attention_items_on_the_page_sqlite() {
    places_to_buy_the_prolific_link_and_attention_items_on_the_page(Store::Sqlite).await;
}

#[tokio::test]
async fn places_to_buy_the_prolific_link_and_attention_items_on_the_page_postgres() {
    places_to_buy_the_prolific_link_and_attention_items_on_the_page(Store::Postgres).await;
}
