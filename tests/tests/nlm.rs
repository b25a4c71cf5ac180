//! A study scored by a neural causal model (#41), on SQLite and PostgreSQL: `natstudy lm score
//! --model <Hugging Face folder or GGUF file>` scores every bug's method and every
//! transformation as the published tool does (transformers' loss with `--nats`, bits per token
//! by default), in batches of similar lengths, stores them under the model's name for the RNC
//! analysis, and writes `ce_scores.csv` with `--out`.

/// A GGUF file made from the reference llama by `crates/nlm/tests/data/make_references.py`.
fn gguf(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../crates/nlm/tests/data/gguf"
    ))
    .join(name)
}

#[path = "../../crates/nlm/tests/support/crafted.rs"]
mod crafted;

use natstudy_nlm::CausalLm;
use natstudy_tests::{cli, fresh_db, on_both_stores, reference_dir, Store};

async fn scored(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = natstudy_tests::reference_study(&db, "S", true)
        .await
        .expect("study");
    let model = reference_dir().join("nlm/models/llama");
    let dir = tempfile::tempdir().expect("dir");
    let out = dir.path().join("ce_scores.csv");
    let m = model.display().to_string();
    let o = out.display().to_string();
    cli(
        &db.url,
        &[
            "lm", "score", "--model", &m, "--study", "S", "--nats", "--out", &o, "--batch", "1",
        ],
    )
    .await
    .expect("score");
    cli(
        &db.url,
        &[
            "lm",
            "score",
            "--model",
            &m,
            "--study",
            "S",
            "--name",
            "llama-bits",
            "--threads",
            "1",
        ],
    )
    .await
    .expect("bits");
    let g = gguf("llama-q8_0.gguf").display().to_string();
    cli(
        &db.url,
        &["lm", "score", "--model", &g, "--study", "S", "--batch", "4"],
    )
    .await
    .expect("gguf");
    let sources = natstudy_core::store::analysis::sources(&db, study)
        .await
        .expect("sources");
    let rows = natstudy_core::service::scoring::ce_of_model(&db, study, "llama")
        .await
        .expect("rows");
    let bits = natstudy_core::service::scoring::ce_of_model(&db, study, "llama-bits")
        .await
        .expect("rows");
    assert_eq!(
        rows.len(),
        sources.len(),
        "every method has two tokens or more"
    );
    assert_eq!(bits.len(), rows.len());
    let packed = natstudy_core::service::scoring::ce_of_model(&db, study, "llama-q8_0")
        .await
        .expect("rows");
    assert_eq!(packed.len(), rows.len(), "the GGUF file under its stem");
    // the stored loss is the model's own (one at a time: exactly; in batches of similar
    // lengths: within float rounding), and bits are nats over ln 2
    let lm = CausalLm::load(&model).expect("model");
    let q8 = CausalLm::load(&gguf("llama-q8_0.gguf")).expect("gguf");
    for (target, text) in sources.iter().step_by(37) {
        let q = q8
            .cross_entropy(text, None)
            .expect("ce")
            .expect("scored")
            .ce_nats;
        let got_q = packed
            .iter()
            .find(|r| &r.target == target)
            .expect("row")
            .cross_entropy;
        assert!(
            (got_q - q / std::f64::consts::LN_2).abs() < 1e-6 * got_q,
            "{target}: {got_q} vs {q} nats"
        );
        let want = lm
            .cross_entropy(text, None)
            .expect("ce")
            .expect("scored")
            .ce_nats;
        let got = rows
            .iter()
            .find(|r| &r.target == target)
            .expect("row")
            .cross_entropy;
        assert!(
            (got - want).abs() <= 1e-12 * want.abs(),
            "{target}: {got} vs {want}"
        );
        let b = bits
            .iter()
            .find(|r| &r.target == target)
            .expect("row")
            .cross_entropy;
        assert!(
            (b - want / std::f64::consts::LN_2).abs() < 1e-6 * b.abs(),
            "{target}"
        );
    }
    let csv = std::fs::read_to_string(&out).expect("csv");
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("model,target,cross_entropy"));
    assert_eq!(lines.count(), rows.len());
    // the RNC analysis reads the model like any other
    let rep = dir.path().join("report");
    let r = rep.display().to_string();
    cli(
        &db.url,
        &["report", "--study", "S", "--bootstrap", "0", "--out", &r],
    )
    .await
    .expect("report");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(rep.join("report.json")).expect("report"))
            .expect("json");
    for model in ["llama", "llama-q8_0"] {
        assert!(
            report["rnc"][model]["items"]
                .as_u64()
                .is_some_and(|n| n > 0),
            "{model}: {}",
            report["rnc"]
        );
    }
    // a scoring told to stop (as a stopped job's is) ends after the batch under way, an
    // error, and stores nothing under its name
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = asked.clone();
    let stopped = natstudy_core::service::neural::score_study(
        &db,
        study,
        None,
        std::sync::Arc::new(lm),
        "llama-stopped",
        natstudy_core::service::neural::Run {
            batch: 1,
            threads: Some(1),
            ..Default::default()
        },
        |_, _| {},
        std::sync::Arc::new(move |_, _| {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            false
        }),
    )
    .await;
    let stopped = stopped.map(|s| s.methods);
    natstudy_tests::assert_stopped_storing_nothing(&db, study, "llama-stopped", &stopped).await;
    assert_eq!(
        asked.load(std::sync::atomic::Ordering::Relaxed),
        1,
        "one batch of one"
    );
    guard.drop_now(db).await;
}

on_both_stores!(scored => a_study_is_scored_by_a_neural_model_sqlite, a_study_is_scored_by_a_neural_model_postgres);

/// The study page's scoring job runs a Hugging Face folder and a GGUF file, both uploaded
/// through the page, as it runs an n-gram file: listed with their size as neural, scored in the
/// background with progress.
#[tokio::test]
async fn the_scoring_job_runs_a_model_folder() {
    use natstudy_tests::{Role, TestApp};
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", "a-long-password", Role::Admin)
        .await
        .expect("admin");
    let study = natstudy_tests::reference_study(&db, "S", false)
        .await
        .expect("study");
    let c = app
        .signed_in("ada", "a-long-password")
        .await
        .expect("sign in");
    // the Hugging Face folder through the page's folder upload, as a folder picker sends it
    let files: Vec<(String, Vec<u8>)> = ["config.json", "model.safetensors", "tokenizer.json"]
        .iter()
        .map(|f| {
            let bytes = std::fs::read(reference_dir().join("nlm/models/llama").join(f));
            (format!("llama/{f}"), bytes.expect("reference file"))
        })
        .collect();
    let r = app
        .upload_folder(&c, study, "tiny-llama", files)
        .await
        .expect("upload");
    assert!(r.status().is_redirection(), "{}", r.status());
    // the GGUF file through the page's upload form
    let upload = |name: &str, bytes: Vec<u8>| app.upload_model(&c, study, name, bytes);
    let q4 = std::fs::read(gguf("llama-q4_0.gguf")).expect("gguf");
    let r = upload("tiny-q4.gguf", q4).await.expect("upload");
    assert!(r.status().is_redirection(), "{}", r.status());
    // a file named .gguf that is not one is refused, and nothing is kept
    let r = upload("fake.gguf", b"\\data\\\n".to_vec())
        .await
        .expect("upload");
    assert_eq!(r.status(), reqwest::StatusCode::UNPROCESSABLE_ENTITY);
    assert!(!app.models_dir.join("fake.gguf").exists());
    let view = app.scoring_view(&c, study).await.expect("view");
    assert_eq!(view["models"][0]["name"], "tiny-llama");
    assert!(view["models"][0]["bytes"]
        .as_u64()
        .is_some_and(|b| b > 100_000));
    assert_eq!(view["models"][1]["name"], "tiny-q4.gguf");
    for m in 0..2 {
        assert_eq!(view["models"][m]["neural"], true, "{}", view["models"][m]);
    }
    // what each needs in memory, as the engine reads it from the files' headers, and what
    // the server has free
    let llama = natstudy_nlm::weight_bytes(&reference_dir().join("nlm/models/llama"));
    let q4 = natstudy_nlm::weight_bytes(&gguf("llama-q4_0.gguf"));
    assert_eq!(view["models"][0]["memory"], llama.expect("folder"));
    assert_eq!(view["models"][1]["memory"], q4.expect("gguf"));
    assert!(view["memory_free"].as_u64().is_some_and(|f| f > 1 << 20));
    // a job asked to stop while its model loads ends stopped and stores nothing; the load
    // itself, told to stop, ends before its next tensor
    for model in ["tiny-llama", "tiny-q4.gguf"] {
        stopped_while_loading(&app, &db, study, model).await;
        let told = natstudy_core::service::jobs::Counters::default();
        told.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let e = natstudy_core::service::neural::load_until(
            &app.models_dir.join(model),
            &told,
            &Default::default(),
        )
        .await
        .err();
        assert!(
            e.as_ref()
                .is_some_and(|e| e.to_string().contains("nothing stored")),
            "{model}: {e:?}"
        );
    }
    stopped_while_another_loads(&app, &db, study, "tiny-llama").await;
    for model in ["tiny-llama", "tiny-q4.gguf"] {
        stopped_part_way_through_the_load(&app, &db, study, model).await;
    }
    for (model, name) in [("tiny-llama", "tiny-llama"), ("tiny-q4.gguf", "tiny-q4")] {
        scoring_job(&c, &app, &db, study, model).await;
        let rows = natstudy_core::service::scoring::ce_of_model(&db, study, name)
            .await
            .expect("rows");
        assert_eq!(rows.len(), 357, "{model}");
    }
    guard.drop_now(db).await;
}

/// Runs a scoring job with `model` that was asked to stop as it started: it ends stopped
/// before scoring anything, and nothing is stored under the model's name.
async fn stopped_while_loading(
    app: &natstudy_tests::TestApp,
    db: &natstudy_core::service::Db,
    study: natstudy_vocab::ids::StudyId,
    model: &str,
) {
    let (job, run) = started_scoring(app, db, study, model, Default::default()).await;
    let state = natstudy_core::service::jobs::stop(db, study, job).await;
    assert_eq!(
        state.expect("stop"),
        natstudy_core::store::JobState::Running
    );
    run.await;
    ended_stopped(app, db, study, job, model).await;
}

/// Runs a scoring job with `model` while another load holds the one-load-at-a-time turn
/// (and holds it until this test lets go), asks it to stop once it waits, and expects it to
/// end stopped, storing nothing, while the other load still runs: a job is not held up by a
/// load it will never make.
async fn stopped_while_another_loads(
    app: &natstudy_tests::TestApp,
    db: &natstudy_core::service::Db,
    study: natstudy_vocab::ids::StudyId,
    model: &str,
) {
    let (entered, holding) = std::sync::mpsc::channel::<()>();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let never = std::sync::atomic::AtomicBool::new(false);
    let path = app.models_dir.join(model);
    let other = tokio::spawn(async move {
        natstudy_core::service::neural::checked_load(
            &path,
            natstudy_nlm::Device::Cpu,
            &never,
            move |_, _| {
                entered.send(()).expect("entered");
                released.recv().expect("released");
                Ok(())
            },
        )
        .await
    });
    tokio::task::spawn_blocking(move || holding.recv().expect("the other load runs"))
        .await
        .expect("wait");
    let (job, run) = started_scoring(app, db, study, model, Default::default()).await;
    let run = tokio::spawn(run);
    // the job is waiting for its turn (its progress ticks read the row meanwhile)
    tokio::time::sleep(natstudy_core::service::jobs::PROGRESS_EVERY * 2).await;
    assert!(!run.is_finished(), "the job waits for the other load");
    let waits = (
        std::time::Duration::from_secs(30),
        "the stopped job ends while the other load still runs",
    );
    stop_and_wait(db, (study, job), run, waits).await;
    assert!(!other.is_finished(), "the other load still runs");
    ended_stopped(app, db, study, job, model).await;
    release.send(()).expect("release");
    other.await.expect("other").expect("the other load");
}

/// Runs a scoring job with `model` whose load pauses once it has read half its tensors'
/// bytes: the job is asked to stop there, through its row as the study page asks, and the
/// load is let go on as soon as its stop is asked again and says so (a slow disk, where the
/// stop lands while a tensor is read). The job ends stopped, storing nothing, its row keeps
/// the bytes read when it stopped, and the load reads no tensor after.
async fn stopped_part_way_through_the_load(
    app: &natstudy_tests::TestApp,
    db: &natstudy_core::service::Db,
    study: natstudy_vocab::ids::StudyId,
    model: &str,
) {
    use std::sync::{Arc, Mutex};
    #[derive(Debug, Default)]
    struct Seen {
        paused_at: Option<natstudy_nlm::Loaded>,
        asked_after: Vec<natstudy_nlm::Loaded>,
        stopped: Option<bool>,
    }
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (entered, paused) = std::sync::mpsc::channel::<()>();
    let entered = Mutex::new(entered);
    let load = natstudy_core::service::neural::NeuralLoader::new({
        let seen = seen.clone();
        move |path, device, stop| {
            let lm = natstudy_nlm::CausalLm::load_until(path, device, &|l| {
                if stop(l) {
                    return true;
                }
                let mut s = seen.lock().expect("seen");
                if s.paused_at.is_some() {
                    s.asked_after.push(l);
                    return false;
                }
                if l.read < l.of / 2 {
                    return false;
                }
                s.paused_at = Some(l);
                drop(s);
                entered.lock().expect("entered").send(()).expect("paused");
                // the tensor's read takes until the job's stop reaches the load
                let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
                while std::time::Instant::now() < until {
                    if stop(l) {
                        return true;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                false
            });
            let stopped = matches!(lm, Err(natstudy_nlm::NlmError::Stopped));
            seen.lock().expect("seen").stopped = Some(stopped);
            lm
        }
    });
    let (job, run) = started_scoring(app, db, study, model, load).await;
    let run = tokio::spawn(run);
    tokio::task::spawn_blocking(move || {
        paused
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the load reaches half its bytes")
    })
    .await
    .expect("wait");
    let waits = (std::time::Duration::from_secs(60), "the stopped job ends");
    stop_and_wait(db, (study, job), run, waits).await;
    let seen = std::mem::take(&mut *seen.lock().expect("seen"));
    assert_eq!(seen.stopped, Some(true), "{model}: the load ended stopped");
    assert!(seen.asked_after.is_empty(), "{model}: {seen:?}");
    let at = seen.paused_at.expect("paused");
    assert!(0 < at.read && at.read < at.of, "{model}: {at:?}");
    let j = ended_stopped(app, db, study, job, model).await;
    assert_eq!(
        (j.load_read as u64, j.load_of as u64),
        (at.read, at.of),
        "{model}: the row keeps the bytes read when the load stopped"
    );
}

/// A scoring job with `model`, started (as its runner starts it) on a cache whose neural
/// models `load` reads, and its work, not yet run.
async fn started_scoring(
    app: &natstudy_tests::TestApp,
    db: &natstudy_core::service::Db,
    study: natstudy_vocab::ids::StudyId,
    model: &str,
    load: natstudy_core::service::neural::NeuralLoader,
) -> (
    natstudy_vocab::ids::JobId,
    impl std::future::Future<Output = ()> + Send + 'static,
) {
    use natstudy_core::service::jobs::JobKind;
    let params = serde_json::json!({ "model": model, "log10": false }).to_string();
    let job = natstudy_core::store::jobs::create(db, study, None, JobKind::Score, "score", &params)
        .await
        .expect("job");
    assert!(natstudy_core::store::jobs::start(db, job)
        .await
        .expect("start"));
    let models = std::sync::Arc::new(
        natstudy_core::service::models::ModelCache::new(app.models_dir.clone(), 1)
            .with_neural_loader(load),
    );
    let run = natstudy_core::service::scoring::run_scoring(
        db.clone(),
        job,
        study,
        None,
        (models, model.into()),
        false,
    );
    (job, run)
}

/// Expects the job to have ended stopped with nothing stored under the model's name.
async fn ended_stopped(
    app: &natstudy_tests::TestApp,
    db: &natstudy_core::service::Db,
    study: natstudy_vocab::ids::StudyId,
    job: natstudy_vocab::ids::JobId,
    model: &str,
) -> natstudy_core::store::jobs::JobRecord {
    use natstudy_core::store::JobState;
    let jobs = natstudy_core::store::jobs::list(db, study)
        .await
        .expect("jobs");
    let j = jobs.into_iter().find(|j| j.id == job).expect("job");
    assert_eq!(j.state, JobState::Stopped, "{model}: {}", j.message);
    assert!(
        j.message.contains("nothing stored"),
        "{model}: {}",
        j.message
    );
    let name = natstudy_core::service::neural::default_name(&app.models_dir.join(model));
    let rows = natstudy_core::service::scoring::ce_of_model(db, study, &name).await;
    assert!(rows.expect("rows").is_empty(), "{model}");
    j
}

/// Asks the running `job` to stop, as the study page asks, and waits up to `within` for its
/// `run` to end (`why` says what the wait expects).
async fn stop_and_wait(
    db: &natstudy_core::service::Db,
    (study, job): (natstudy_vocab::ids::StudyId, natstudy_vocab::ids::JobId),
    run: tokio::task::JoinHandle<()>,
    (within, why): (std::time::Duration, &str),
) {
    let state = natstudy_core::service::jobs::stop(db, study, job).await;
    assert_eq!(
        state.expect("stop"),
        natstudy_core::store::JobState::Running
    );
    tokio::time::timeout(within, run)
        .await
        .expect(why)
        .expect("job");
}

/// Starts the study page's scoring job with `model` and waits until it is done.
async fn scoring_job(
    c: &reqwest::Client,
    app: &natstudy_tests::TestApp,
    db: &natstudy_core::service::Db,
    study: natstudy_vocab::ids::StudyId,
    model: &str,
) {
    use natstudy_core::store::JobState;
    let j = job_end(c, app, db, study, model).await;
    assert_eq!(j.state, JobState::Done, "{model}: {}", j.message);
    assert!(
        j.message.contains("scored 357 methods"),
        "{model}: {}",
        j.message
    );
    // its pace, as the row keeps it: the tokens scored, counted while scoring, and no time
    // left once done
    let tokens: i64 = j
        .message
        .split(" tokens)")
        .next()
        .and_then(|m| m.rsplit('(').next())
        .and_then(|n| n.parse().ok())
        .expect("the tokens in the message");
    assert_eq!(j.tokens, tokens, "{model}: {}", j.message);
    assert!(j.counting_ms > 0, "{model}");
    assert_eq!(j.eta_ms, None, "{model}");
    // its model's load, as the row keeps it: every byte of its tensors read
    assert!(j.load_of > 100_000, "{model}: {}", j.load_of);
    assert_eq!(j.load_read, j.load_of, "{model}");
    if !model.ends_with(".gguf") {
        let bytes = std::fs::read(app.models_dir.join(model).join("model.safetensors"));
        let bytes = bytes.expect("weights");
        let header = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        assert_eq!(j.load_of as u64, bytes.len() as u64 - 8 - header, "{model}");
    }
}

/// Starts the study page's scoring job with `model` and waits until it ends (within 120 s).
async fn job_end(
    c: &reqwest::Client,
    app: &natstudy_tests::TestApp,
    db: &natstudy_core::service::Db,
    study: natstudy_vocab::ids::StudyId,
    model: &str,
) -> natstudy_core::store::jobs::JobRecord {
    use natstudy_core::store::JobState;
    let job: natstudy_vocab::ids::JobId = c
        .post(app.url("/api/studies/score"))
        .form(&[("study", study.to_string()), ("model", model.into())])
        .send()
        .await
        .expect("score")
        .json()
        .await
        .expect("job id");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let j = loop {
        let jobs = natstudy_core::store::jobs::list(db, study)
            .await
            .expect("jobs");
        let j = jobs.into_iter().find(|j| j.id == job).expect("job");
        if j.state == JobState::Done || j.state == JobState::Failed {
            break j;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the job never ended: {j:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    j
}

/// RenameVariable-2 with a masked model (`transform --names-model`): the variable masked at
/// every occurrence, the model's most likely whole word that is a valid, unused identifier
/// taken — what the model itself proposes first, among the names the engine may use.
#[tokio::test]
async fn a_masked_model_names_the_renamed_variable() {
    use natstudy_engine::transform::NameScorer;
    let model_dir = reference_dir().join("nlm/models/roberta");
    let dir = tempfile::tempdir().expect("dir");
    let method = "    int sum(int[] values) {\n        int total = 0;\n        for (int value : values) {\n            total += value;\n        }\n        return total;\n    }\n";
    let bug = serde_json::json!({"bug_id": "B-1", "project": "P", "file": "A.java", "method": "sum",
        "source": method, "buggy_lines": [4]});
    let bugs = dir.path().join("bugs.jsonl");
    std::fs::write(&bugs, format!("{bug}\n")).expect("bugs");
    let out = dir.path().join("t.jsonl");
    let (b, o, m) = (
        bugs.display().to_string(),
        out.display().to_string(),
        model_dir.display().to_string(),
    );
    cli(
        "sqlite::memory:",
        &[
            "transform",
            "--bugs",
            &b,
            "--operators",
            "RenameVariable-2",
            "--names-model",
            &m,
            "--out",
            &o,
        ],
    )
    .await
    .expect("transform");
    let rows = natstudy_tests::read_jsonl(&out);
    let names = natstudy_core::service::neural::load_masked(&model_dir)
        .await
        .expect("model");
    let masked = method.replace("total", natstudy_engine::transform::MASK);
    let used = ["sum", "values", "value", "total"];
    let first = names
        .propose(&masked, natstudy_engine::transform::MASK)
        .into_iter()
        .find(|n| {
            !used.contains(&n.as_str())
                && n.chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
                && n.chars().all(|c| c.is_alphanumeric() || c == '_')
                && !natstudy_vocab::JAVA_KEYWORDS.contains(&n.as_str())
                && !natstudy_vocab::JAVA_CONTEXTUAL.contains(&n.as_str())
        })
        .expect("a proposal");
    let summary = rows
        .iter()
        .filter_map(|r| r["summary"].as_str())
        .find(|s| s.starts_with("renames `total`"))
        .expect("total renamed");
    assert_eq!(summary, format!("renames `total` to `{first}`"));
}

/// A model whose weights cannot fit in the memory free is refused before a tensor is read —
/// loading it would have the operating system end the process — saying what it would take and
/// what the machine has: by `lm score`, and by the study page's scoring job, whose server goes
/// on serving.
#[tokio::test]
async fn a_model_larger_than_the_memory_free_is_refused_before_loading() {
    use natstudy_core::store::JobState;
    use natstudy_tests::{Role, TestApp};
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let study = natstudy_tests::reference_study(&db, "S", false)
        .await
        .expect("study");
    let dir = tempfile::tempdir().expect("dir");
    let huge = dir.path().join("huge");
    natstudy_tests::model_too_big_for_memory(&huge);
    let m = huge.display().to_string();
    let e = cli(&db.url, &["lm", "score", "--model", &m, "--study", "S"])
        .await
        .err()
        .map(|e| format!("{e:#}"))
        .unwrap_or_default();
    assert!(
        e.contains("4398.0 GB of memory on the CPU") && e.contains("GB free"),
        "{e}"
    );

    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("ada", "a-long-password", Role::Admin)
        .await
        .expect("admin");
    natstudy_tests::model_too_big_for_memory(&app.models_dir.join("huge"));
    let c = app
        .signed_in("ada", "a-long-password")
        .await
        .expect("sign in");
    let j = job_end(&c, &app, &db, study, "huge").await;
    assert_eq!(j.state, JobState::Failed, "{}", j.message);
    assert!(
        j.message
            .starts_with("cannot load huge: its weights take 4398.0 GB"),
        "{}",
        j.message
    );
    // the server goes on: the page still lists the models, the folder among them
    let view = app.scoring_view(&c, study).await.expect("view");
    assert_eq!(view["models"][0]["name"], "huge", "{view}");
    assert_eq!(view["models"][0]["memory"], 1u64 << 42, "{view}");
    assert!(view["memory_free"].as_u64().is_some_and(|f| f < 1 << 42));
    guard.drop_now(db).await;
}

/// A model folder whose `tokenizer.json` made the tokenizers library panic (a continuing-
/// subword prefix that cuts the byte-level `Ġ` inside its character; 0.22 panicked, 0.23
/// refuses the token as out of its vocabulary): `natstudy lm score` fails with one error
/// naming the file and what failed — no "thread … panicked" line, no exit 101.
#[test]
fn a_tokenizer_the_library_panics_on_is_one_clear_error() {
    let tmp = tempfile::tempdir().expect("dir");
    let (data, model) = (tmp.path().join("data"), tmp.path().join("cut"));
    let reference = reference_dir().join("nlm/models/gptneo");
    std::fs::create_dir_all(&model).expect("dir");
    for f in ["config.json", "model.safetensors"] {
        std::fs::copy(reference.join(f), model.join(f)).expect("copy");
    }
    let mut t: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(reference.join("tokenizer.json")).expect("read"),
    )
    .expect("json");
    t["model"]["continuing_subword_prefix"] = "(".into();
    std::fs::write(model.join("tokenizer.json"), t.to_string()).expect("write");
    assert!(natstudy_in(&data, &["study", "create", "S"])
        .status
        .success());
    let m = model.display().to_string();
    let out = natstudy_in(&data, &["lm", "score", "--model", &m, "--study", "S"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cut/tokenizer.json: the tokenizers library failed reading it")
            || (stderr.contains("cut/tokenizer.json: Token `")
                && stderr.contains("` out of vocabulary")),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// GGUF files crafted so that candle's reader panics on them (an alignment of 0 divides by
/// zero; the reference file with its embedding's dimensions patched to 2³² × 2³², a product
/// that overflows): `natstudy lm score` fails with one error naming the file — no "thread …
/// panicked" line from the panic it caught, no exit 101.
#[test]
fn a_gguf_file_the_reader_panics_on_is_one_clear_error() {
    let tmp = tempfile::tempdir().expect("dir");
    let data = tmp.path().join("data");
    let alignment = crafted::zero_alignment();
    let dims = crafted::huge_embedding(std::fs::read(gguf("llama-q8_0.gguf")).expect("read"));
    assert!(natstudy_in(&data, &["study", "create", "S"])
        .status
        .success());
    for (file, bytes) in [("alignment.gguf", alignment), ("dims.gguf", dims)] {
        let p = tmp.path().join(file);
        std::fs::write(&p, bytes).expect("write");
        let m = p.display().to_string();
        let out = natstudy_in(&data, &["lm", "score", "--model", &m, "--study", "S"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{file}: {stderr}");
        assert!(stderr.contains(file), "{file}: {stderr}");
        assert!(!stderr.contains("panicked"), "{file}: {stderr}");
    }
}

/// `natstudy --data-dir DATA ARGS…`, run to its end.
fn natstudy_in(data: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(natstudy_tests::natstudy_bin().expect("binary"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .output()
        .expect("run")
}

/// The reference llama with its final norm's weights made NaN, in `dir`: every score it gives
/// is NaN.
fn nan_model(dir: &std::path::Path) {
    let from = reference_dir().join("nlm/models/llama");
    for f in ["config.json", "tokenizer.json", "tokenizer_config.json"] {
        std::fs::copy(from.join(f), dir.join(f)).expect("copy");
    }
    let mut bytes = std::fs::read(from.join("model.safetensors")).expect("weights");
    let n = u64::from_le_bytes(bytes[..8].try_into().expect("header length")) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + n]).expect("header");
    let offsets = &header["model.norm.weight"]["data_offsets"];
    let (start, end) = (
        8 + n + offsets[0].as_u64().expect("start") as usize,
        8 + n + offsets[1].as_u64().expect("end") as usize,
    );
    for w in bytes[start..end].chunks_exact_mut(4) {
        w.copy_from_slice(&f32::NAN.to_le_bytes());
    }
    std::fs::write(dir.join("model.safetensors"), bytes).expect("write");
}

/// A model whose scores come out NaN fails its scoring in words naming the method, and stores
/// nothing, on each store alike (SQLite once refused the row as an internal error; PostgreSQL
/// stored and exported `NaN`).
async fn a_nan_score_fails_in_words_and_stores_nothing(store: Store) {
    let (db, guard) = fresh_db(store).await.expect("db");
    let study = natstudy_tests::reference_study(&db, "S", true)
        .await
        .expect("study");
    let dir = tempfile::tempdir().expect("dir");
    nan_model(dir.path());
    let m = dir.path().display().to_string();
    let e = cli(
        &db.url,
        &[
            "lm", "score", "--model", &m, "--study", "S", "--name", "nan", "--batch", "1",
        ],
    )
    .await
    .expect_err("a NaN score is refused");
    let words = format!("{e:#}");
    assert!(
        words.contains("came out NaN") && words.contains("none of its scores were stored"),
        "{words}"
    );
    let rows = natstudy_core::service::scoring::ce_of_model(&db, study, "nan")
        .await
        .expect("rows");
    assert!(rows.is_empty(), "{} scores stored", rows.len());
    guard.drop_now(db).await;
}

on_both_stores!(a_nan_score_fails_in_words_and_stores_nothing => a_nan_score_fails_in_words_and_stores_nothing_sqlite, a_nan_score_fails_in_words_and_stores_nothing_postgres);
