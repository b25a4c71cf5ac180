//! Patch review through the command line, on SQLite and PostgreSQL: the reference study with
//! patches (tests/fixtures/patch-review, made with scikit-learn by its make.py), automatic
//! no-op / SYE decisions, duplicates reviewed once, two reviewers' verdicts imported, Cohen's
//! kappa equal to scikit-learn's, robustness following the decided statuses, an adjudication,
//! the exports, and an all-or-nothing import of a bad file.

use std::path::PathBuf;

use natstudy_tests::{
    cli, compare_json, fixtures_dir, fresh_db, natstudy_bin, on_both_stores, reference_dir, Store,
};
use serde_json::Value;

fn p(dir: &std::path::Path, f: &str) -> String {
    dir.join(f).display().to_string()
}

async fn report(url: &str, study: &str) -> Value {
    let out = tempfile::tempdir().expect("dir");
    cli(
        url,
        &[
            "report",
            "--study",
            study,
            "--bootstrap",
            "200",
            "--out",
            &out.path().display().to_string(),
        ],
    )
    .await
    .expect("report");
    serde_json::from_slice(&std::fs::read(out.path().join("report.json")).expect("report.json"))
        .expect("json")
}

/// A study with the reference items and votes and the given repair results.
async fn study(url: &str, name: &str, npr: &str) {
    let r = reference_dir().join("study-small");
    cli(url, &["study", "create", name]).await.expect("create");
    cli(
        url,
        &[
            "import",
            "items",
            "--study",
            name,
            &p(&r, "bugs.jsonl"),
            &p(&r, "transformations.jsonl"),
        ],
    )
    .await
    .expect("items");
    cli(
        url,
        &["import", "votes", "--study", name, &p(&r, "survey.json")],
    )
    .await
    .expect("votes");
    cli(url, &["import", "npr", "--study", name, npr])
        .await
        .expect("npr");
}

async fn patch_review(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let url = db.url.clone();
    let fx: PathBuf = fixtures_dir().join("patch-review");
    let r = reference_dir().join("study-small");
    study(&url, "rev", &p(&fx, "npr_results.csv")).await;
    // a later bugs file brings the developer's fixed methods of bugs already there
    cli(
        &url,
        &[
            "import",
            "items",
            "--study",
            "rev",
            &p(&fx, "bugs_fixed.jsonl"),
            &p(&r, "transformations.jsonl"),
        ],
    )
    .await
    .expect("fixed sources");
    cli(&url, &["review", "create", "--study", "rev"])
        .await
        .expect("review create");
    // a second run creates nothing new
    cli(&url, &["review", "create", "--study", "rev"])
        .await
        .expect("again");

    // a bad verdict file names every problem and writes nothing
    let bad = tempfile::NamedTempFile::new().expect("tmp");
    std::fs::write(
        bad.path(),
        "tool,target,reviewer,verdict\nrecoder,Chart-1,rev_a,maybe\nnobody,Chart-1,rev_a,correct\n",
    )
    .expect("write");
    let err = cli(
        &url,
        &[
            "import",
            "reviews",
            "--study",
            "rev",
            &bad.path().display().to_string(),
        ],
    )
    .await
    .expect_err("bad file")
    .to_string();
    assert!(
        err.contains(":2: field `verdict`") && err.contains(":3: field `target`"),
        "{err}"
    );
    let before = report(&url, "rev").await;
    assert_eq!(before["patch_review"]["reviewed"], 0, "nothing imported");

    cli(
        &url,
        &[
            "import",
            "reviews",
            "--study",
            "rev",
            &p(&fx, "reviews.csv"),
        ],
    )
    .await
    .expect("reviews");
    let got = report(&url, "rev").await;
    let expected: Value =
        serde_json::from_slice(&std::fs::read(fx.join("expected.json")).expect("expected"))
            .expect("json");
    let mut failures = Vec::new();
    compare_json(&expected, &got, "", &mut failures);
    assert!(
        failures.is_empty(),
        "{} figures differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let pr = &got["patch_review"];
    let (lo, hi) = (
        pr["cohen_kappa_ci"][0].as_f64().expect("ci"),
        pr["cohen_kappa_ci"][1].as_f64().expect("ci"),
    );
    let k = pr["cohen_kappa"].as_f64().expect("kappa");
    assert!(lo < k && k < hi, "{lo} < {k} < {hi}");

    // the decided statuses feed the robustness analysis: the same figures as importing them
    study(&url, "decided", &p(&fx, "decided_npr.csv")).await;
    let decided = report(&url, "decided").await;
    assert_eq!(got["robustness"], decided["robustness"]);
    assert_ne!(
        got["robustness"], before["robustness"],
        "the review changed the figures"
    );

    // an admin decides one disagreement correct: one more correct patch, and the figures move
    let open: Vec<(String, String)> = {
        let db = natstudy_core::service::Db::connect(&url).await.expect("db");
        let id = natstudy_core::store::studies::id_by_name(&db, "rev")
            .await
            .expect("id");
        let rows = natstudy_core::store::reviews::tasks(&db, id)
            .await
            .expect("tasks");
        let tasks = natstudy_core::store::analysis::review_tasks(&rows);
        natstudy_engine::analysis::open_disagreements(&tasks)
            .into_iter()
            .map(|i| (rows[i].tool.clone(), rows[i].target.clone()))
            .collect()
    };
    assert_eq!(open.len() as u64, pr["disagreements"].as_u64().expect("n"));
    // the command's list is the admins' page: `review list --open` names the overview's open
    // disagreements in its order, `review list` every task
    let listed = |open_only: bool| {
        let mut args = vec![
            "--database-url",
            url.as_str(),
            "review",
            "list",
            "--study",
            "rev",
        ];
        if open_only {
            args.push("--open");
        }
        let out = std::process::Command::new(natstudy_bin().expect("the binary"))
            .args(&args)
            .output()
            .expect("natstudy review list");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let page: Vec<(String, String)> = {
        let db = natstudy_core::service::Db::connect(&url).await.expect("db");
        let id = natstudy_core::service::studies::id_by_name(&db, "rev")
            .await
            .expect("id");
        natstudy_core::service::reviews::overview(&db, id)
            .await
            .expect("overview")
            .open
            .into_iter()
            .map(|r| (r.tool, r.target))
            .collect()
    };
    assert_eq!(page, open);
    let text = listed(true);
    let named: Vec<(String, String)> = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f[2], "disagreement", "{l}");
            (f[0].to_owned(), f[1].to_owned())
        })
        .collect();
    assert_eq!(named, page, "review list --open");
    assert_eq!(
        listed(false).lines().count() as u64,
        pr["tasks"].as_u64().expect("n"),
        "review list"
    );
    let (tool, target) = &open[0];
    cli(
        &url,
        &[
            "review", "decide", "--study", "rev", "--tool", tool, "--target", target, "correct",
        ],
    )
    .await
    .expect("decide");
    let after = report(&url, "rev").await;
    assert_eq!(after["patch_review"]["adjudicated"], 1);
    assert_eq!(
        after["patch_review"]["correct"].as_u64(),
        pr["correct"].as_u64().map(|c| c + 1)
    );
    assert_eq!(
        after["patch_review"]["cohen_kappa"], pr["cohen_kappa"],
        "κ is the reviewers'"
    );
    assert_ne!(after["robustness"][tool], got["robustness"][tool]);
    let err = cli(
        &url,
        &[
            "review", "decide", "--study", "rev", "--tool", "x", "--target", "y", "correct",
        ],
    )
    .await
    .expect_err("unknown task");
    assert!(err.to_string().contains("not found"), "{err}");

    // exports: one row per task with its decision; the verdicts in the import format
    let dir = tempfile::tempdir().expect("dir");
    let tasks_csv = dir.path().join("reviews.csv");
    cli(
        &url,
        &[
            "export",
            "--study",
            "rev",
            "--what",
            "reviews",
            "--out",
            &tasks_csv.display().to_string(),
        ],
    )
    .await
    .expect("export reviews");
    let text = std::fs::read_to_string(&tasks_csv).expect("csv");
    assert_eq!(
        text.lines().count() as u64,
        pr["tasks"].as_u64().expect("n") + 1
    );
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{tool},{target},")))
        .expect("row");
    assert!(line.contains(",decided,correct,admin,"), "{line}");
    assert!(
        text.contains(",decided,plausible,auto,noop,"),
        "a no-op row"
    );
    let verdicts_csv = dir.path().join("verdicts.csv");
    cli(
        &url,
        &[
            "export",
            "--study",
            "rev",
            "--what",
            "review-verdicts",
            "--out",
            &verdicts_csv.display().to_string(),
        ],
    )
    .await
    .expect("export verdicts");
    let exported = std::fs::read_to_string(&verdicts_csv).expect("csv");
    let original = std::fs::read_to_string(fx.join("reviews.csv")).expect("csv");
    assert_eq!(exported.lines().count(), original.lines().count());
    // re-importing the exported verdicts changes nothing
    cli(
        &url,
        &[
            "import",
            "reviews",
            "--study",
            "rev",
            &verdicts_csv.display().to_string(),
        ],
    )
    .await
    .expect("round trip");
    let again = report(&url, "rev").await;
    assert_eq!(again["patch_review"], after["patch_review"]);
    guard.drop_now(db).await;
}

on_both_stores!(patch_review => patch_review_sqlite, patch_review_postgres);

/// The page's queue: no patch is held by or judged by more than k reviewers, a reviewer gets
/// back the patch they hold, a full patch refuses a newcomer's verdict, and verdicts are checked.
async fn review_queue(store: Store) {
    use natstudy_core::service::reviews;
    let (db, guard) = fresh_db(store).await.expect("db");
    let url = db.url.clone();
    let fx: PathBuf = fixtures_dir().join("patch-review");
    study(&url, "q", &p(&fx, "npr_results.csv")).await;
    let id = natstudy_core::store::studies::id_by_name(&db, "q")
        .await
        .expect("id");
    reviews::create(&db, id, None, reviews::CreateOptions::default())
        .await
        .expect("tasks");
    let next = |who: &'static str| {
        let db = db.clone();
        async move {
            reviews::next_for(&db, id, who)
                .await
                .expect("next")
                .expect("a patch")
        }
    };
    let a = next("ann").await;
    assert_eq!(next("ann").await.task, a.task, "the held patch comes back");
    let b = next("bob").await;
    assert_eq!(b.task, a.task, "a second reviewer of the same patch");
    let c = next("cy").await;
    assert_ne!(c.task, a.task, "the first patch has its two reviewers");
    assert!(a.left > 0 && a.done == 0);
    let err = reviews::submit(&db, id, a.task, "cy", "correct", "")
        .await
        .expect_err("full");
    assert!(
        err.to_string().contains("already has all its reviews"),
        "{err}"
    );
    let err = reviews::submit(&db, id, a.task, "ann", "maybe", "")
        .await
        .expect_err("verdict");
    assert!(
        err.to_string().contains("not correct, wrong or unsure"),
        "{err}"
    );
    let long = "x".repeat(reviews::MAX_NOTE_CHARS + 1);
    assert!(reviews::submit(&db, id, a.task, "ann", "wrong", &long)
        .await
        .is_err());
    reviews::submit(&db, id, a.task, "ann", "wrong", "off by one")
        .await
        .expect("ann");
    reviews::submit(&db, id, a.task, "bob", "correct", "")
        .await
        .expect("bob");
    // a revision of one's own verdict is allowed on a full patch
    reviews::submit(&db, id, a.task, "ann", "correct", "")
        .await
        .expect("revise");
    let after = next("ann").await;
    assert_eq!((after.done, after.task == a.task), (1, false));
    // a task of another study is not found from this one
    let other = natstudy_core::store::studies::create(&db, None, "other", "")
        .await
        .expect("other");
    assert!(reviews::submit(&db, other, c.task, "cy", "correct", "")
        .await
        .is_err());
    // a reviewer answers only what the queue gave them: dan picks eve's patch by its id
    // (it has room for a second reviewer) and is refused; eve answers it
    let e = next("eve").await;
    let err = reviews::submit(&db, id, e.task, "dan", "wrong", "")
        .await
        .expect_err("not given");
    assert!(err.to_string().contains("not given to you"), "{err}");
    reviews::submit(&db, id, e.task, "eve", "correct", "")
        .await
        .expect("eve was given it");
    // and no account can take a participant reviewer's name
    for name in ["S2@invite", "s2@INVITE", "S3@import"] {
        let err = natstudy_core::service::accounts::add_user(
            &db,
            None,
            name,
            "a-long-password",
            natstudy_tests::Role::Annotator,
        )
        .await
        .expect_err("reserved");
        assert!(err.to_string().contains("reserved"), "{name}: {err}");
    }
    guard.drop_now(db).await;
}

on_both_stores!(review_queue => review_queue_sqlite, review_queue_postgres);
