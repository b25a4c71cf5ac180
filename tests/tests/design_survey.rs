//! A designed study served to its participants, through the services the web calls, on both
//! stores: units handed out k each (the least answered first), never twice to one
//! participant, held and let go by their leases, what was shown counterbalanced and recorded,
//! answers read by each kind's rules (a bad one refused with nothing written), a resent
//! answer stored once, and the finish deciding the code by the work that may still come.

use std::collections::{BTreeMap, HashMap, HashSet};

use natstudy_core::service::{self, answering, designs, Db};
use natstudy_core::store::assign;
use natstudy_engine::design::parse_design;
use natstudy_tests::{fresh_db, on_both_stores, Store};
use natstudy_types::{AnnotatorId, AnswerForm, StudyId};
use serde_json::Value;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A study of `design` (TOML) with `n` Java snippets S1..Sn, k = `k`, and `people` participants.
async fn designed_study(
    db: &Db,
    design: &str,
    n: usize,
    k: i64,
    people: usize,
) -> (StudyId, Vec<AnnotatorId>) {
    let d = parse_design("design.toml", design).expect("design");
    let study = designs::create(db, None, None, "designed", "", &d)
        .await
        .expect("study");
    let lines: String = (1..=n)
        .map(|i| {
            format!(
                "{{\"id\": \"S{i}\", \"code\": \"int f{i}() {{ return {i}; }}\", \"language\": \"java\"}}\n"
            )
        })
        .collect();
    designs::import_snippets_text(db, study, None, "snippets.jsonl", &lines)
        .await
        .expect("snippets");
    sqlx::query("UPDATE studies SET ratings_per_item = $2 WHERE id = $1")
        .bind(study)
        .bind(k)
        .execute(&mut *db.write().await.expect("write"))
        .await
        .expect("k");
    let pool = assign::ensure_pool(db, study, people).await.expect("pool");
    (study, pool)
}

const PAIRWISE: &str = r#"title = "Which reads better"
[[question]]
id = "better"
kind = "pairwise"
prompt = "Which of the two reads better?"
ties = true
"#;

fn form(claim: i64, token: &str, fields: &[(&str, &str)]) -> AnswerForm {
    AnswerForm {
        claim,
        token: token.into(),
        time_secs: Some(3.5),
        fields: fields
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        revise: false,
    }
}

/// The participant consents (the default screener answered) and has read the guideline.
async fn consented(db: &Db, study: StudyId, a: AnnotatorId) {
    let screener = vec![
        ("years".to_owned(), "1-3".to_owned()),
        ("role".to_owned(), "developer".to_owned()),
    ];
    service::participation::consent(db, study, a, screener)
        .await
        .expect("consent");
    service::participation::guideline_seen(db, study, a)
        .await
        .expect("guideline");
}

/// [`form`] as a revision of the unit's answers.
fn revision(claim: i64, token: &str, fields: &[(&str, &str)]) -> AnswerForm {
    AnswerForm {
        revise: true,
        ..form(claim, token, fields)
    }
}

async fn responses(db: &Db) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM responses")
        .fetch_one(&db.pool)
        .await
        .expect("count")
}

async fn designed_units_are_handed_out_k_each(store: Store) {
    let (db, _guard) = fresh_db(store).await.expect("db");
    // 5 snippets: all 10 pairs, each to be answered twice by 6 participants
    let (study, pool) = designed_study(&db, PAIRWISE, 5, 2, 6).await;
    let d = designs::of(&db, study).await.expect("design");
    // handed out a minute ago: the page's 3.5 s are within the hold
    let now = now_ms() - 60_000;
    let mut firsts = HashSet::new();
    let mut seen: HashMap<AnnotatorId, HashSet<Vec<String>>> = HashMap::new();
    for (p, &a) in pool.iter().enumerate() {
        let mut first = true;
        while let Some(claim) = answering::claim_unit(&db, study, a, &d, 2, None, now)
            .await
            .expect("claim")
        {
            let mut unit = claim.shown.clone();
            unit.sort();
            assert!(
                seen.entry(a).or_default().insert(unit),
                "a participant is never handed a unit twice"
            );
            if first {
                firsts.insert(claim.shown.clone());
                first = false;
            }
            // the same unit again until it is answered (the hold is theirs)
            let again = answering::claim_unit(&db, study, a, &d, 2, None, now)
                .await
                .expect("claim")
                .expect("held");
            assert_eq!(again.id, claim.id);
            let pick = if p % 3 == 0 { "tie" } else { "A" };
            let token = format!("t{}", claim.id);
            let got = answering::submit(&db, study, a, form(claim.id, &token, &[("better", pick)]))
                .await
                .expect("answer");
            assert_eq!(got, natstudy_core::store::units::Answered::Stored);
            // the same submit again is the same answer
            let again =
                answering::submit(&db, study, a, form(claim.id, &token, &[("better", "B")]))
                    .await
                    .expect("resent");
            assert_eq!(again, natstudy_core::store::units::Answered::Again);
        }
    }
    assert!(firsts.len() > 1, "participants start on units of their own");
    // the units are fixed once handed out: more snippets are refused, nothing written
    let more = "{\"id\": \"S6\", \"code\": \"int g() { return 6; }\", \"language\": \"java\"}\n";
    let e = designs::import_snippets_text(&db, study, None, "more.jsonl", more)
        .await
        .expect_err("fixed");
    assert!(e.to_string().contains("snippets are fixed"), "{e}");
    assert_eq!(
        designs::stored_snippets(&db, study)
            .await
            .expect("snippets")
            .len(),
        5
    );
    // every pair answered exactly k = 2 times, A first once each way (counterbalanced and
    // recorded in the export as shown)
    let out = designs::export_responses(&db, study).await.expect("export");
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 20, "{out}");
    let mut by_pair: BTreeMap<Vec<String>, Vec<Vec<String>>> = BTreeMap::new();
    for l in &lines {
        let shown: Vec<String> = serde_json::from_value(l["pair"].clone()).expect("pair");
        let mut key = shown.clone();
        key.sort();
        by_pair.entry(key).or_default().push(shown);
        assert_eq!(l["seconds"], 3.5);
        // "A" is the snippet shown first
        if l["answer"] != "tie" {
            assert_eq!(l["answer"], l["pair"][0]);
        }
    }
    assert_eq!(by_pair.len(), 10);
    for (pair, shown) in &by_pair {
        assert_eq!(shown.len(), 2, "{pair:?}");
        assert_ne!(shown[0][0], shown[1][0], "{pair:?}: each side first once");
    }
    // the export reads back in as the same responses
    let again = designs::create(
        &db,
        None,
        None,
        "re-imported",
        "",
        &parse_design("d", PAIRWISE).expect("design"),
    )
    .await
    .expect("study");
    let snippets: String = (1..=5)
        .map(|i| {
            format!(
                "{{\"id\": \"S{i}\", \"code\": \"int f{i}() {{ return {i}; }}\", \"language\": \"java\"}}\n"
            )
        })
        .collect();
    designs::import_snippets_text(&db, again, None, "s.jsonl", &snippets)
        .await
        .expect("snippets");
    designs::import_responses_text(&db, again, None, "r.jsonl", &out)
        .await
        .expect("responses");
    assert_eq!(
        designs::export_responses(&db, again).await.expect("export"),
        out
    );
}

on_both_stores!(designed_units_are_handed_out_k_each => designed_units_are_handed_out_k_each_sqlite, designed_units_are_handed_out_k_each_postgres);

const MIXED: &str = r#"title = "Reading"
[[question]]
id = "readable"
kind = "likert"
prompt = "How easy is it to read?"
points = 5
labels = ["Very hard", "Very easy"]
[[question]]
id = "smells"
kind = "multi"
prompt = "Which smells do you see?"
options = ["long", "deep", "none"]
[[question]]
id = "why"
kind = "text"
prompt = "Why?"
max_chars = 20
[[question]]
id = "minutes"
kind = "number"
prompt = "Minutes to fix a bug in it?"
min = 0
max = 60
"#;

async fn a_bad_answer_is_refused_with_nothing_written(store: Store) {
    let (db, _guard) = fresh_db(store).await.expect("db");
    let (study, pool) = designed_study(&db, MIXED, 2, 1, 3).await;
    let d = designs::of(&db, study).await.expect("design");
    let now = now_ms();
    let claim = answering::claim_unit(&db, study, pool[0], &d, 1, None, now)
        .await
        .expect("claim")
        .expect("a unit");
    let good = [
        ("readable", "4"),
        ("smells.1", "on"),
        ("smells.3", "on"),
        ("why", "short names"),
        ("minutes", "12.5"),
    ];
    let refused = |fields: Vec<(&'static str, &'static str)>| {
        let db = db.clone();
        let claim = claim.id;
        let a = pool[0];
        async move {
            let e = answering::submit(&db, study, a, form(claim, "x", &fields))
                .await
                .expect_err("refused");
            e.to_string()
        }
    };
    let without = |name: &str| -> Vec<(&'static str, &'static str)> {
        good.iter().copied().filter(|(k, _)| *k != name).collect()
    };
    let with = |name: &'static str, value: &'static str| -> Vec<(&'static str, &'static str)> {
        let mut v = without(name);
        v.push((name, value));
        v
    };
    for (fields, says) in [
        (
            without("readable"),
            "“How easy is it to read?” is not answered",
        ),
        (with("readable", "6"), "“How easy is it to read?”"),
        (with("why", "far more than twenty characters"), "at most 20"),
        (with("minutes", "61"), "“Minutes to fix a bug in it?”"),
        (with("minutes", "NaN"), "not a number"),
    ] {
        let e = refused(fields.clone()).await;
        assert!(e.contains(says), "{fields:?}: {e}");
    }
    assert_eq!(responses(&db).await, 0, "nothing written");
    // someone else's unit: refused
    let e = answering::submit(&db, study, pool[1], form(claim.id, "y", &good))
        .await
        .expect_err("not theirs");
    assert!(e.to_string().contains("not a unit handed to you"), "{e}");
    // a lapsed hold goes to the next participant (k = 1): the other snippet first, then this
    let later = now + answering::HOLD_MS + 1;
    let other = answering::claim_unit(&db, study, pool[1], &d, 1, None, later - 1)
        .await
        .expect("claim")
        .expect("the other unit");
    assert_ne!(other.shown, claim.shown);
    let taken = answering::claim_unit(&db, study, pool[2], &d, 1, None, later)
        .await
        .expect("claim");
    assert_eq!(
        taken.map(|c| c.shown),
        Some(claim.shown.clone()),
        "the lapsed unit is free again"
    );
    // the late answer of the first participant is still kept (the work was done)
    answering::submit(&db, study, pool[0], form(claim.id, "late", &good))
        .await
        .expect("kept");
    assert_eq!(responses(&db).await, 4, "one response a question");
    let out = designs::export_responses(&db, study).await.expect("export");
    assert!(out.contains("\"answer\":[\"long\",\"none\"]"), "{out}");
    assert!(out.contains("\"answer\":12.5"), "{out}");
    // another answer to an answered unit: refused, the first kept
    let e = answering::submit(&db, study, pool[0], form(claim.id, "other", &good))
        .await
        .expect_err("answered");
    assert!(e.to_string().contains("answered already"), "{e}");
    assert_eq!(responses(&db).await, 4);
}

on_both_stores!(a_bad_answer_is_refused_with_nothing_written => a_bad_answer_is_refused_with_nothing_written_sqlite, a_bad_answer_is_refused_with_nothing_written_postgres);

const BEST_WORST: &str = r#"title = "Easiest and hardest"
item_order = "latin-square"
[[question]]
id = "ease"
kind = "best-worst"
prompt = "Which is the easiest and which the hardest to understand?"
set_size = 4
"#;

async fn a_finish_gives_the_code_only_when_no_unit_can_come(store: Store) {
    let (db, _guard) = fresh_db(store).await.expect("db");
    let (study, pool) = designed_study(&db, BEST_WORST, 8, 1, 2).await;
    sqlx::query("UPDATE studies SET completion_code = 'C0DE' WHERE id = $1")
        .bind(study)
        .execute(&mut *db.write().await.expect("write"))
        .await
        .expect("code");
    let d = designs::of(&db, study).await.expect("design");
    let now = now_ms();
    let claim = answering::claim_unit(&db, study, pool[0], &d, 1, None, now)
        .await
        .expect("claim")
        .expect("a set");
    assert_eq!(claim.shown.len(), 4);
    answering::submit(
        &db,
        study,
        pool[0],
        form(claim.id, "t1", &[("ease.best", "B"), ("ease.worst", "D")]),
    )
    .await
    .expect("answer");
    let out = designs::export_responses(&db, study).await.expect("export");
    let line: Value = serde_json::from_str(out.trim()).expect("json");
    assert_eq!(line["set"], serde_json::json!(claim.shown));
    assert_eq!(line["best"], claim.shown[1].as_str());
    assert_eq!(line["worst"], claim.shown[3].as_str());
    // sets are left: a finish now is a return without the code
    service::participation::finish(&db, study, pool[0])
        .await
        .expect("finish");
    let outcome: Option<String> =
        sqlx::query_scalar("SELECT outcome FROM annotators WHERE id = $1")
            .bind(pool[0])
            .fetch_one(&db.pool)
            .await
            .expect("outcome");
    assert_eq!(outcome.as_deref(), Some("returned"));
    // the other participant answers every set left: then their finish is complete
    while let Some(c) = answering::claim_unit(&db, study, pool[1], &d, 1, None, now)
        .await
        .expect("claim")
    {
        answering::submit(
            &db,
            study,
            pool[1],
            form(
                c.id,
                &format!("t{}", c.id),
                &[("ease.best", "A"), ("ease.worst", "C")],
            ),
        )
        .await
        .expect("answer");
    }
    service::participation::finish(&db, study, pool[1])
        .await
        .expect("finish");
    let outcome: Option<String> =
        sqlx::query_scalar("SELECT outcome FROM annotators WHERE id = $1")
            .bind(pool[1])
            .fetch_one(&db.pool)
            .await
            .expect("outcome");
    assert_eq!(outcome.as_deref(), Some("completed"));
}

on_both_stores!(a_finish_gives_the_code_only_when_no_unit_can_come => a_finish_gives_the_code_only_when_no_unit_can_come_sqlite, a_finish_gives_the_code_only_when_no_unit_can_come_postgres);

/// An attention unit is a check, not work: with N = 3 a participant who answered two pairs
/// and the check has not done their work — a finish then is a return without the code (the
/// third pair is free), the progress says 2 of 3 — and after the third pair it is complete.
async fn an_attention_unit_is_not_work_toward_n(store: Store) {
    let (db, _guard) = fresh_db(store).await.expect("db");
    let (study, pool) = designed_study(&db, PAIRWISE, 5, 1, 2).await;
    designs::import_attention_text(
        &db,
        study,
        "attention.jsonl",
        "{\"question\": \"better\", \"pair\": [\"S5\", \"S4\"], \"answer\": \"S5\"}\n",
    )
    .await
    .expect("attention");
    sqlx::query(
        "UPDATE studies SET items_per_participant = 3, completion_code = 'C0DE' WHERE id = $1",
    )
    .bind(study)
    .execute(&mut *db.write().await.expect("write"))
    .await
    .expect("N");
    let d = designs::of(&db, study).await.expect("design");
    let cache = service::annotate::SurveyCache::default();
    let now = now_ms();
    // the first stops after the check; the second answers the third pair too
    for (p, &a) in pool.iter().enumerate() {
        consented(&db, study, a).await;
        let units = if p == 0 { 3 } else { 4 };
        for n in 0..units {
            let c = answering::claim_unit(&db, study, a, &d, 1, Some(3), now)
                .await
                .expect("claim")
                .expect("a unit");
            assert_eq!(c.attention.is_some(), n == 2, "the check after two pairs");
            answering::submit(
                &db,
                study,
                a,
                form(c.id, &format!("t{p}-{n}"), &[("better", "A")]),
            )
            .await
            .expect("answer");
            if n == 2 {
                let state = service::annotate::annotate_state(&db, &cache, study, a, None, None)
                    .await
                    .expect("state");
                assert_eq!((state.done, state.total), (2, 3), "the check is not work");
            }
        }
        if p == 1 {
            assert!(
                answering::claim_unit(&db, study, a, &d, 1, Some(3), now)
                    .await
                    .expect("claim")
                    .is_none(),
                "N units answered: nothing more"
            );
        }
        service::participation::finish(&db, study, a)
            .await
            .expect("finish");
        let outcome: Option<String> =
            sqlx::query_scalar("SELECT outcome FROM annotators WHERE id = $1")
                .bind(a)
                .fetch_one(&db.pool)
                .await
                .expect("outcome");
        let expected = if p == 0 { "returned" } else { "completed" };
        assert_eq!(outcome.as_deref(), Some(expected), "participant {p}");
    }
}

on_both_stores!(an_attention_unit_is_not_work_toward_n => an_attention_unit_is_not_work_toward_n_sqlite, an_attention_unit_is_not_work_toward_n_postgres);

/// A participant revises an answer before the finish, as in the naturalness study: the list
/// of answered units holds each with its answers in words (the checks aside), the unit shown
/// again holds the answers given, and a revision replaces them in the export (the replaced
/// answers kept in the store) with the first answer's time. A revision resent is one; a bad
/// one is refused with nothing changed; a check cannot be revised; after the finish nothing
/// can.
async fn answers_are_revised_before_the_finish(store: Store) {
    let (db, _guard) = fresh_db(store).await.expect("db");
    let (study, pool) = designed_study(&db, PAIRWISE, 3, 1, 1).await;
    designs::import_attention_text(
        &db,
        study,
        "attention.jsonl",
        "{\"question\": \"better\", \"pair\": [\"S2\", \"S1\"], \"answer\": \"S2\"}\n",
    )
    .await
    .expect("attention");
    let a = pool[0];
    let d = designs::of(&db, study).await.expect("design");
    let now = now_ms() - 60_000;
    let mut claims = Vec::new();
    // pair, pair, the check (answered right), pair
    for n in 0..4 {
        let c = answering::claim_unit(&db, study, a, &d, 1, None, now)
            .await
            .expect("claim")
            .expect("a unit");
        let pick = if n == 2 { "A" } else { "B" };
        answering::submit(
            &db,
            study,
            a,
            form(c.id, &format!("t{n}"), &[("better", pick)]),
        )
        .await
        .expect("answer");
        claims.push(c);
    }
    assert!(claims[2].attention.is_some());
    let listed = service::revising::answered_units(&db, study, a, &d)
        .await
        .expect("list");
    assert_eq!(listed.len(), 3, "the pairs, not the check: {listed:?}");
    assert_eq!(listed[0].claim, claims[0].id);
    assert_eq!(listed[0].answers, "better: B");
    assert!(listed[0].shown.starts_with("A int f"), "{listed:?}");
    // the first pair shown again with its answer, then revised to A
    let first = &claims[0];
    let view = service::revising::revise_view(&db, study, a, &d, first.id)
        .await
        .expect("view")
        .expect("revisable");
    assert!(view.revising);
    assert_eq!(view.given, [("better".to_owned(), "B".to_owned())]);
    assert!(
        service::revising::revise_view(&db, study, a, &d, claims[2].id)
            .await
            .expect("view")
            .is_none(),
        "a check is not revised"
    );
    let before = designs::export_responses(&db, study).await.expect("export");
    let seconds_of = |out: &str, pair: &[String]| -> Vec<Value> {
        out.lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("json"))
            .filter(|v| v["pair"] == serde_json::json!(pair))
            .map(|v| v["seconds"].clone())
            .collect()
    };
    // a bad revision: refused, nothing changed
    let e = answering::submit(&db, study, a, revision(first.id, "r0", &[("better", "C")]))
        .await
        .expect_err("refused");
    assert!(e.to_string().contains("neither A nor B"), "{e}");
    assert_eq!(
        designs::export_responses(&db, study).await.expect("export"),
        before
    );
    for _ in 0..2 {
        // the same revision twice is one
        answering::submit(&db, study, a, revision(first.id, "r1", &[("better", "A")]))
            .await
            .expect("revised");
    }
    let after = designs::export_responses(&db, study).await.expect("export");
    assert_eq!(after.lines().count(), 3, "{after}");
    let revised: Vec<Value> = after
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("json"))
        .filter(|v| v["pair"] == serde_json::json!(first.shown))
        .collect();
    assert_eq!(revised.len(), 1, "{after}");
    assert_eq!(revised[0]["answer"], first.shown[0].as_str(), "A now");
    assert_eq!(
        seconds_of(&after, &first.shown),
        seconds_of(&before, &first.shown),
        "the first answer's time"
    );
    let kept: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM responses WHERE claim_id = $1 AND replaced_at IS NOT NULL",
    )
    .bind(first.id)
    .fetch_one(&db.pool)
    .await
    .expect("kept");
    assert_eq!(kept, 1, "the replaced answer is kept");
    let listed = service::revising::answered_units(&db, study, a, &d)
        .await
        .expect("list");
    assert_eq!(listed[0].answers, "better: A");
    // at most MAX_REVISIONS versions, the first answer one of them (as a vote's): two so far,
    // eighteen more, then the next is refused and changes nothing
    for i in 0..18 {
        let pick = if i % 2 == 0 { "B" } else { "A" };
        answering::submit(
            &db,
            study,
            a,
            revision(first.id, &format!("m{i}"), &[("better", pick)]),
        )
        .await
        .expect("revised");
    }
    let after = designs::export_responses(&db, study).await.expect("export");
    let e = answering::submit(&db, study, a, revision(first.id, "m18", &[("better", "B")]))
        .await
        .expect_err("too many");
    assert!(e.to_string().contains("at most 20 revisions"), "{e}");
    assert_eq!(
        designs::export_responses(&db, study).await.expect("export"),
        after
    );
    // another participant's unit is not theirs to see again
    let others = assign::ensure_pool(&db, study, 2).await.expect("pool");
    assert_ne!(others[1], a);
    assert!(
        service::revising::revise_view(&db, study, others[1], &d, first.id)
            .await
            .expect("view")
            .is_none(),
        "not theirs"
    );
    // a check is answered once; an unknown claim is not theirs
    let e = answering::submit(
        &db,
        study,
        a,
        revision(claims[2].id, "r2", &[("better", "B")]),
    )
    .await
    .expect_err("a check");
    assert!(e.to_string().contains("check"), "{e}");
    assert!(
        answering::submit(&db, study, a, revision(9_999, "r3", &[("better", "B")]))
            .await
            .is_err()
    );
    // after the finish, answers are final
    service::participation::finish(&db, study, a)
        .await
        .expect("finish");
    let e = answering::submit(&db, study, a, revision(first.id, "r4", &[("better", "B")]))
        .await
        .expect_err("final");
    assert!(e.to_string().contains("final"), "{e}");
    assert_eq!(
        designs::export_responses(&db, study).await.expect("export"),
        after
    );
}

on_both_stores!(answers_are_revised_before_the_finish => answers_are_revised_before_the_finish_sqlite, answers_are_revised_before_the_finish_postgres);

/// Attention units of a pairwise study: read by line (a bad file refused with nothing
/// written), handed to every participant once after their second pair, outside k and outside
/// the export; a miss is told once, and at the study's limit the survey ends with the
/// screen-out.
async fn attention_units_check_every_participant(store: Store) {
    let (db, _guard) = fresh_db(store).await.expect("db");
    let (study, pool) = designed_study(&db, PAIRWISE, 5, 1, 2).await;
    let units = |db: Db| async move {
        let n: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM design_units WHERE attention IS NOT NULL")
                .fetch_one(&db.pool)
                .await
                .expect("count");
        n
    };
    let bad = "{\"question\": \"better\", \"pair\": [\"S1\", \"S2\"], \"answer\": \"S1\"}\n\
               {\"participant\": \"P1\", \"question\": \"better\", \"pair\": [\"S3\", \"S3\"], \"answer\": \"S3\"}\n";
    let e = designs::import_attention_text(&db, study, "attention.jsonl", bad)
        .await
        .expect_err("refused");
    assert!(e.to_string().contains("attention.jsonl:2:"), "{e}");
    assert_eq!(units(db.clone()).await, 0, "nothing written");
    let good = "{\"question\": \"better\", \"pair\": [\"S5\", \"S4\"], \"answer\": \"S5\"}\n";
    designs::import_attention_text(&db, study, "attention.jsonl", good)
        .await
        .expect("attention");
    assert_eq!(units(db.clone()).await, 1);
    sqlx::query("UPDATE studies SET gold_failures = 1 WHERE id = $1")
        .bind(study)
        .execute(&mut *db.write().await.expect("write"))
        .await
        .expect("limit");
    let d = designs::of(&db, study).await.expect("design");
    let cache = service::annotate::SurveyCache::default();
    for (p, &a) in pool.iter().enumerate() {
        consented(&db, study, a).await;
        let now = now_ms() - 60_000;
        let mut handed = Vec::new();
        for n in 0..3 {
            let c = answering::claim_unit(&db, study, a, &d, 1, None, now)
                .await
                .expect("claim")
                .expect("a unit");
            handed.push(c.clone());
            // the first participant misses the check (B is S4), the second gets it right
            let pick = if n == 2 && p == 0 { "B" } else { "A" };
            answering::submit(
                &db,
                study,
                a,
                form(c.id, &format!("t{}", c.id), &[("better", pick)]),
            )
            .await
            .expect("answer");
        }
        assert!(handed[0].attention.is_none() && handed[1].attention.is_none());
        assert!(
            handed[2].attention.is_some(),
            "the check comes after two pairs"
        );
        assert_eq!(handed[2].shown, ["S5", "S4"], "shown as given");
        let state = service::annotate::annotate_state(&db, &cache, study, a, None, None)
            .await
            .expect("state");
        let outcome: Option<String> =
            sqlx::query_scalar("SELECT outcome FROM annotators WHERE id = $1")
                .bind(a)
                .fetch_one(&db.pool)
                .await
                .expect("outcome");
        if p == 0 {
            assert_eq!(outcome.as_deref(), Some("screened_out"), "{state:?}");
        } else {
            assert_eq!(outcome, None, "{state:?}");
            assert!(matches!(
                state.step,
                natstudy_types::AnnotateStep::Answer(_)
            ));
        }
    }
    // the export holds the pairs' answers, not the checks' (the screened-out participant's
    // left out as an excluded participant's are)
    let out = designs::export_responses(&db, study).await.expect("export");
    assert!(!out.contains("[\"S5\",\"S4\"]"), "{out}");
    assert_eq!(out.lines().count(), 2, "{out}");
}

on_both_stores!(attention_units_check_every_participant => attention_units_check_every_participant_sqlite, attention_units_check_every_participant_postgres);

/// Hand-made answers: a subnormal time from the page is not taken (the server's is), a unit
/// answered days after it was handed out is untimed (a time on item is at most a day), and the
/// export still reads every response back; after the finish no answer is taken.
async fn hostile_times_and_answers_after_the_finish(store: Store) {
    let (db, _guard) = fresh_db(store).await.expect("db");
    let (study, pool) = designed_study(&db, PAIRWISE, 4, 1, 2).await;
    let d = designs::of(&db, study).await.expect("design");
    let a = pool[0];
    let minute_ago = now_ms() - 60_000;
    let c = answering::claim_unit(&db, study, a, &d, 1, None, minute_ago)
        .await
        .expect("claim")
        .expect("a pair");
    let mut tiny = form(c.id, "t1", &[("better", "A")]);
    tiny.time_secs = Some(1e-320);
    answering::submit(&db, study, a, tiny)
        .await
        .expect("answer");
    let days_ago = now_ms() - 2 * 86_400_000;
    let c = answering::claim_unit(&db, study, a, &d, 1, None, days_ago)
        .await
        .expect("claim")
        .expect("a pair");
    let mut late = form(c.id, "t2", &[("better", "B")]);
    late.time_secs = None;
    answering::submit(&db, study, a, late)
        .await
        .expect("answer");
    let out = designs::export_responses(&db, study).await.expect("export");
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 2, "{out}");
    let t = lines[0]["seconds"].as_f64().expect("timed");
    assert!(
        (59.0..120.0).contains(&t),
        "the server's time, not 1e-320: {t}"
    );
    assert!(
        lines[1].get("seconds").is_none(),
        "untimed past a day: {}",
        lines[1]
    );
    // the other participant holds a pair, finishes, and then sends its answer by hand
    let b = pool[1];
    let c = answering::claim_unit(&db, study, b, &d, 1, None, now_ms())
        .await
        .expect("claim")
        .expect("a pair");
    service::participation::finish(&db, study, b)
        .await
        .expect("finish");
    let e = answering::submit(&db, study, b, form(c.id, "t3", &[("better", "A")]))
        .await
        .expect_err("finished");
    assert!(e.to_string().contains("you finished this study"), "{e}");
    assert_eq!(responses(&db).await, 2, "nothing written");
}

on_both_stores!(hostile_times_and_answers_after_the_finish => hostile_times_and_answers_after_the_finish_sqlite, hostile_times_and_answers_after_the_finish_postgres);
