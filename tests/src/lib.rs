//! Test harness: a real `natstudy` server on a free loopback port over a fresh database
//! (a temporary SQLite file, or a new PostgreSQL database), HTTP clients, and headless Chromium.

pub mod browser;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::{Context, Result};
use natstudy::web::WebConfig;
use natstudy_core::service::Db;
use natstudy_vocab::ids::{BatchId, StudyId, UserId};

pub use natstudy_types::Role;

/// Which database a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    Sqlite,
    Postgres,
}

/// The PostgreSQL server the suite uses (trust auth); CI provides it and the suite fails without it.
pub fn postgres_admin_url() -> String {
    std::env::var("NATSTUDY_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A fresh, empty, migrated database of the given kind. Keep the returned guard alive.
pub async fn fresh_db(store: Store) -> Result<(Db, DbGuard)> {
    match store {
        Store::Sqlite => {
            let dir = tempfile::tempdir()?;
            let url = Db::sqlite_url_in(dir.path())?;
            Ok((Db::connect(&url).await?, DbGuard::Dir(dir)))
        }
        Store::Postgres => {
            let guard = empty_postgres().await?;
            Ok((Db::connect(&guard.url()?).await?, guard))
        }
    }
}

/// A new PostgreSQL database with nothing in it, not even the migrations: its URL is the
/// guard's [`DbGuard::url`].
pub async fn empty_postgres() -> Result<DbGuard> {
    use sqlx::Connection;
    let admin = postgres_admin_url();
    let name = format!(
        "natstudy_t{}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst),
        rand_suffix()
    );
    let mut conn = sqlx::PgConnection::connect(&admin).await.with_context(|| {
        format!("PostgreSQL is required for this test: cannot connect to {admin}")
    })?;
    sqlx::Executor::execute(&mut conn, format!("CREATE DATABASE {name}").as_str()).await?;
    Ok(DbGuard::Postgres { admin, name })
}

fn rand_suffix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0)
}

/// Keeps a test database alive; PostgreSQL databases are dropped by [`DbGuard::drop_now`].
pub enum DbGuard {
    Dir(tempfile::TempDir),
    Postgres { admin: String, name: String },
}

impl DbGuard {
    /// The database's URL (what `natstudy --database-url` takes).
    pub fn url(&self) -> Result<String> {
        Ok(match self {
            DbGuard::Dir(dir) => Db::sqlite_url_in(dir.path())?,
            DbGuard::Postgres { admin, name } => {
                let base = admin.rsplit_once('/').map(|(b, _)| b).unwrap_or(admin);
                format!("{base}/{name}")
            }
        })
    }

    /// Drops the PostgreSQL database (call at the end of a test; connections must be closed).
    pub async fn drop_now(self, db: Db) {
        // a connection still checked out by a background task must not hold the test forever
        let _ = tokio::time::timeout(std::time::Duration::from_secs(10), db.close()).await;
        if let DbGuard::Postgres { admin, name } = self {
            use sqlx::Connection;
            if let Ok(mut conn) = sqlx::PgConnection::connect(&admin).await {
                let _ = sqlx::Executor::execute(
                    &mut conn,
                    format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str(),
                )
                .await;
            }
        }
    }
}

/// A running server.
pub struct TestApp {
    pub addr: SocketAddr,
    pub base: String,
    pub db: Db,
    /// The server's models directory (a fresh temporary directory).
    pub models_dir: std::path::PathBuf,
    _models: tempfile::TempDir,
    handle: tokio::task::JoinHandle<()>,
}

impl TestApp {
    /// Starts a server on a free port over `db`.
    pub async fn start(db: Db) -> Result<TestApp> {
        TestApp::start_with(db, |_| {}).await
    }

    /// Starts a server on a free port over `db`, with its configuration changed by `configure`.
    pub async fn start_with(db: Db, configure: impl FnOnce(&mut WebConfig)) -> Result<TestApp> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let mut config = WebConfig::new("127.0.0.1:0".parse()?);
        let models = tempfile::tempdir()?;
        config.models_dir = models.path().to_owned();
        configure(&mut config);
        let server_db = db.clone();
        let handle = tokio::spawn(async move {
            let res = natstudy::web::serve(server_db, config, move |addr| {
                let _ = tx.send(addr);
            })
            .await;
            if let Err(e) = res {
                eprintln!("test server stopped: {e:#}");
            }
        });
        let addr = rx.await.context("server did not start")?;
        Ok(TestApp {
            addr,
            base: format!("http://{addr}"),
            db,
            models_dir: models.path().to_owned(),
            _models: models,
            handle,
        })
    }

    /// The built site the server serves (the default one).
    pub fn site_root(&self) -> std::path::PathBuf {
        natstudy::web::default_site_root()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Adds an account directly (as the CLI would).
    pub async fn add_user(&self, name: &str, password: &str, role: Role) -> Result<UserId> {
        natstudy_core::service::accounts::add_user(&self.db, None, name, password, role)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))
    }

    /// Makes the account a member of the study (researchers work only on their studies).
    pub async fn add_member(&self, study: StudyId, name: &str) -> Result<()> {
        self.add_member_as(
            study,
            name,
            natstudy_core::store::members::MemberRole::Member,
        )
        .await
    }

    /// Makes the account a member of the study in the given role (an owner, say).
    pub async fn add_member_as(
        &self,
        study: StudyId,
        name: &str,
        role: natstudy_core::store::members::MemberRole,
    ) -> Result<()> {
        natstudy_core::store::members::add(&self.db, study, name, role, None)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))
    }

    /// An HTTP client with its own cookie jar that does not follow redirects.
    pub fn client(&self) -> reqwest::Client {
        // a request the server never answers fails the test instead of holding the suite
        participants::client()
    }

    /// Posts a model file to the study page's upload form (`POST /studies/{id}/models`, field
    /// `model`) as `client`. The request is made at once; the future borrows nothing.
    pub fn upload_model(
        &self,
        client: &reqwest::Client,
        study: StudyId,
        name: &str,
        bytes: Vec<u8>,
    ) -> impl std::future::Future<Output = reqwest::Result<reqwest::Response>> + use<> {
        let form = reqwest::multipart::Form::new().part(
            "model",
            reqwest::multipart::Part::bytes(bytes).file_name(name.to_owned()),
        );
        client
            .post(self.url(&format!("/studies/{study}/models")))
            .multipart(form)
            .send()
    }

    /// Uploads a model folder as the study page's folder picker does: each file in field
    /// `files` under its path (`folder/file`), after the name in field `folder` (empty: the
    /// server takes the picked folder's).
    pub fn upload_folder(
        &self,
        client: &reqwest::Client,
        study: StudyId,
        name: &str,
        files: Vec<(String, Vec<u8>)>,
    ) -> impl std::future::Future<Output = reqwest::Result<reqwest::Response>> + use<> {
        let mut form = reqwest::multipart::Form::new().text("folder", name.to_owned());
        for (path, bytes) in files {
            form = form.part(
                "files",
                reqwest::multipart::Part::bytes(bytes).file_name(path),
            );
        }
        client
            .post(self.url(&format!("/studies/{study}/models")))
            .multipart(form)
            .send()
    }

    /// The study page's scoring panel as `client` sees it (models, quota, jobs).
    pub async fn scoring_view(
        &self,
        client: &reqwest::Client,
        study: StudyId,
    ) -> Result<serde_json::Value> {
        Ok(client
            .post(self.url("/api/studies/scoring"))
            .form(&[("study", study.to_string())])
            .send()
            .await?
            .json()
            .await?)
    }

    /// A client signed in as `name`.
    pub async fn signed_in(&self, name: &str, password: &str) -> Result<reqwest::Client> {
        let c = self.client();
        let r = c
            .post(self.url("/api/login"))
            .form(&[("username", name), ("password", password)])
            .send()
            .await?;
        anyhow::ensure!(
            r.status().is_success() || r.status().is_redirection(),
            "login of {name} failed: {}",
            r.status()
        );
        Ok(c)
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

/// `../shared/reference` (or `$NATSTUDY_SHARED/reference`): the reference data for tests.
/// Compares every leaf of `expected` with the same path in `actual`: integers exactly, other
/// numbers to 1e-9 relative, the rest equal; each difference is pushed to `failures`.
pub fn compare_json(
    expected: &serde_json::Value,
    actual: &serde_json::Value,
    path: &str,
    failures: &mut Vec<String>,
) {
    use serde_json::Value;
    match expected {
        Value::Object(map) => {
            for (k, v) in map {
                let sub = format!("{path}.{k}");
                match actual.get(k) {
                    Some(a) => compare_json(v, a, &sub, failures),
                    None => failures.push(format!("{sub}: missing")),
                }
            }
        }
        Value::Number(n) => {
            let want = n.as_f64().unwrap_or(f64::NAN);
            let got = actual.as_f64();
            let ok = match got {
                Some(g) if n.is_i64() || n.is_u64() => g == want,
                Some(g) => (g - want).abs() <= 1e-9 * want.abs().max(1e-300),
                None => false,
            };
            if !ok {
                failures.push(format!("{path}: expected {want}, got {actual}"));
            }
        }
        other => {
            if other != actual {
                failures.push(format!("{path}: expected {other}, got {actual}"));
            }
        }
    }
}

/// The test fixtures of this repository (`tests/fixtures`).
pub fn fixtures_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures"))
}

pub fn reference_dir() -> std::path::PathBuf {
    match std::env::var("NATSTUDY_SHARED") {
        Ok(dir) => std::path::PathBuf::from(dir).join("reference"),
        Err(_) => std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/reference"
        )),
    }
}

/// A model folder of the llama family whose one tensor holds 2⁴⁰ bfloat16 weights (4 TiB in
/// f32), in a sparse file: its header and no data on disk.
pub fn model_too_big_for_memory(dir: &std::path::Path) {
    let reference = reference_dir().join("nlm/models/llama");
    std::fs::create_dir_all(dir).expect("dir");
    for f in ["config.json", "tokenizer.json"] {
        std::fs::copy(reference.join(f), dir.join(f)).expect("copy");
    }
    let data: u64 = 2 << 40;
    let header = format!(
        r#"{{"model.embed_tokens.weight":{{"dtype":"BF16","shape":[1048576,1048576],"data_offsets":[0,{data}]}}}}"#
    );
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    let file = dir.join("model.safetensors");
    std::fs::write(&file, &bytes).expect("header");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .and_then(|f| f.set_len(bytes.len() as u64 + data))
        .expect("sparse data");
}

/// Run the `natstudy` command line against a database.
pub async fn cli(url: &str, args: &[&str]) -> anyhow::Result<()> {
    let mut all = vec!["natstudy", "--database-url", url];
    all.extend_from_slice(args);
    natstudy::cli::run_from(all).await
}

/// The `natstudy` binary of this build (next to the test executables' `deps/` folder).
pub fn natstudy_bin() -> Result<std::path::PathBuf> {
    let exe = std::env::current_exe()?;
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .context("no target directory")?;
    let bin = dir.join("natstudy");
    if !bin.is_file() {
        // `cargo test -p natstudy-tests` does not build another package's binary: build it
        // once (cargo sets $CARGO for the tests it runs)
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args(["build", "-p", "natstudy", "--bin", "natstudy"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()?;
        anyhow::ensure!(status.success(), "cannot build the natstudy binary");
    }
    anyhow::ensure!(
        bin.is_file(),
        "{} is missing: build it first (cargo build -p natstudy)",
        bin.display()
    );
    Ok(bin)
}

/// A `natstudy serve` process on a free loopback port (for tests that measure or kill it).
pub struct ServerProcess {
    pub child: std::process::Child,
    pub base: String,
}

impl ServerProcess {
    /// Starts `natstudy --data-dir DIR serve --addr 127.0.0.1:0 ARGS…` and waits until it listens.
    pub fn start(data_dir: &std::path::Path, args: &[&str]) -> Result<ServerProcess> {
        use std::io::BufRead;
        let mut child = std::process::Command::new(natstudy_bin()?)
            .arg("--data-dir")
            .arg(data_dir)
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(args)
            .env("NATSTUDY_LOG", "warn")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()?;
        let out = child.stdout.take().context("stdout")?;
        let mut lines = std::io::BufReader::new(out).lines();
        let base = loop {
            let line = lines.next().context("server exited before listening")??;
            if let Some(url) = line.strip_prefix("natstudy listening on ") {
                break url.trim().to_owned();
            }
        };
        // keep reading stdout so the server never blocks on a full pipe
        std::thread::spawn(move || for _ in lines {});
        Ok(ServerProcess { child, base })
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// The process's peak resident memory (VmHWM), in KiB.
    pub fn peak_rss_kib(&self) -> Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .context("no VmHWM")
    }

    /// The server's resident memory now (VmRSS), in KiB.
    pub fn rss_kib(&self) -> Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .context("no VmRSS")
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs an async test body `fn(Store)` as two tests, one per database (`multi_thread:` first:
/// on four worker threads).
#[macro_export]
macro_rules! on_both_stores {
    // on a runtime of four worker threads (tests whose tasks must really run at once)
    (multi_thread: $body:ident => $sqlite:ident, $postgres:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $sqlite() {
            $body($crate::Store::Sqlite).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $postgres() {
            $body($crate::Store::Postgres).await;
        }
    };
    ($body:ident => $sqlite:ident, $postgres:ident) => {
        #[tokio::test]
        async fn $sqlite() {
            $body($crate::Store::Sqlite).await;
        }

        #[tokio::test]
        async fn $postgres() {
            $body($crate::Store::Postgres).await;
        }
    };
}

/// A new study named `name` with the reference study's items (`shared/reference/study-small`)
/// and, when `with_votes`, its survey's votes.
pub async fn reference_study(db: &Db, name: &str, with_votes: bool) -> Result<StudyId> {
    let dir = reference_dir().join("study-small");
    let err = |e: natstudy_core::service::ServiceError| anyhow::anyhow!("{e}");
    let study = natstudy_core::service::studies::create(db, None, None, name, "")
        .await
        .map_err(err)?;
    natstudy_core::service::imports::import_items(
        db,
        study,
        &dir.join("bugs.jsonl"),
        &dir.join("transformations.jsonl"),
    )
    .await
    .map_err(err)?;
    if with_votes {
        natstudy_core::service::imports::import_votes(db, study, &dir.join("survey.json"))
            .await
            .map_err(err)?;
    }
    Ok(study)
}

/// The reference study with everything the results show: items and votes, the repair tools'
/// results and the language models' cross-entropies.
pub async fn reference_study_with_results(db: &Db, name: &str) -> Result<StudyId> {
    let study = reference_study(db, name, true).await?;
    let dir = reference_dir().join("study-small");
    for (what, file) in [("npr", "npr_results.csv"), ("ce", "ce_scores.csv")] {
        let path = dir.join(file).display().to_string();
        cli(&db.url, &["import", what, "--study", name, &path]).await?;
    }
    Ok(study)
}

/// A dynamic-queue batch over all of the study's items and an invite link into it with `cap`
/// places: (batch id, invite token).
pub async fn open_queue(db: &Db, study: StudyId, cap: i64) -> Result<(BatchId, String)> {
    use natstudy_core::store::assign::{self, BatchSpec, Strategy};
    let spec = BatchSpec {
        name: "online".into(),
        strategy: Strategy::DynamicQueue,
        filter: Default::default(),
        annotators: vec![],
        seed: 7,
        lease_secs: 600,
        avoid_same_bug: false,
    };
    let batch = assign::create_batch(db, study, None, &spec)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .id;
    let token = natstudy_core::store::invites::create_invite(db, study, batch, cap, None)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((batch, token))
}

/// A study `name` holding the items of `bugs` and `transformations` (files' text, as the
/// import reads them).
pub async fn study_of(db: &Db, name: &str, bugs: &str, transformations: &str) -> Result<StudyId> {
    let study = natstudy_core::store::studies::create(db, None, name, "")
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    natstudy_core::service::imports::import_items_text(
        db,
        study,
        None,
        ("bugs.jsonl", bugs),
        ("transformations.jsonl", transformations),
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(study)
}

/// A participant's side of the survey over HTTP, against any server (`base`: its URL): the
/// requests of `natstudy::survey_client` (which the load benchmark sends too), failing as
/// tests do.
pub mod participants {
    use natstudy::survey_client::{self as sc, Answers};
    use natstudy_vocab::ids::{ItemId, StudyId};

    /// A client that keeps cookies and never follows redirects.
    pub fn client() -> reqwest::Client {
        sc::client(std::time::Duration::from_secs(90)).expect("http client")
    }

    /// A participant who joined through the invite, consented and read the guideline.
    pub async fn participant(base: &str, study: StudyId, token: &str) -> reqwest::Client {
        let c = client();
        for step in 0..sc::JOIN_STEPS.len() {
            sc::join_step(&c, base, study, token, step)
                .await
                .expect("join step");
        }
        c
    }

    /// The participant's state: its code, and the item and submit token the rating page gets.
    pub async fn state(
        base: &str,
        c: &reqwest::Client,
        study: StudyId,
    ) -> reqwest::Result<serde_json::Value> {
        sc::state(c, base, study).await
    }

    /// The item and submit token the rating page gets.
    pub async fn rate_step(
        base: &str,
        c: &reqwest::Client,
        study: StudyId,
    ) -> Option<(ItemId, String)> {
        sc::rate_step(&state(base, c, study).await.expect("state"))
    }

    /// Submits a vote (CR 2, CC 3).
    pub async fn vote(
        base: &str,
        c: &reqwest::Client,
        study: StudyId,
        item: ItemId,
        token: &str,
        comment: &str,
    ) -> reqwest::Response {
        try_vote(base, c, study, item, token, comment)
            .await
            .expect("vote")
    }

    /// Submits a vote; an error when no answer came (the server went away).
    pub async fn try_vote(
        base: &str,
        c: &reqwest::Client,
        study: StudyId,
        item: ItemId,
        token: &str,
        comment: &str,
    ) -> reqwest::Result<reqwest::Response> {
        let answers = Answers {
            cr: 2,
            cc: 3,
            comment,
        };
        sc::vote(c, base, study, item, token, answers).await
    }
}

/// The records of a JSON-lines file.
pub fn read_jsonl(f: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(f)
        .unwrap_or_else(|e| panic!("{}: {e}", f.display()))
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect()
}

/// A parsed vote for tests that drive the store: `token` any text, made the 32 hex digits a
/// rating page would send (the same text gives the same token, so a resent vote is one).
pub fn test_vote(
    token: &str,
    cr: u8,
    cc: u8,
    time_secs: Option<f64>,
) -> natstudy_core::domain::Vote {
    use std::hash::{Hash, Hasher};
    let half = |salt: u8| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (token, salt).hash(&mut h);
        h.finish()
    };
    let form = natstudy_types::VoteForm {
        cr: Some(cr),
        cc: Some(cc),
        time_secs,
        token: format!("{:016x}{:016x}", half(1), half(2)),
        ..Default::default()
    };
    natstudy_core::domain::Vote::parse(form, natstudy_core::db::now_ms())
        .expect("a valid test vote")
}

/// A scoring told to stop: its result is the stopped error, and nothing is stored under its
/// model's name.
pub async fn assert_stopped_storing_nothing<T: std::fmt::Debug>(
    db: &Db,
    study: StudyId,
    model: &str,
    result: &natstudy_core::service::ServiceResult<T>,
) {
    assert!(
        result
            .as_ref()
            .err()
            .is_some_and(|e| e.to_string().contains("nothing stored")),
        "{result:?}"
    );
    let rows = natstudy_core::service::scoring::ce_of_model(db, study, model)
        .await
        .expect("rows");
    assert!(rows.is_empty(), "{model}: {} rows stored", rows.len());
}

/// A small study's files: two bugs (Lang-1 with its file) and three transformations of them
/// (two naming, one expression), as `import items` reads them.
pub mod small {
    pub const BUGS: &str = concat!(
        r#"{"bug_id": "Lang-1", "project": "Lang", "file": "src/A.java", "method": "size", "source": "    int size(int[] values) {\n        int count = values.length;\n        return count;\n    }\n", "file_source": "class A {\n\n    int size(int[] values) {\n        int count = values.length;\n        return count;\n    }\n}\n", "buggy_lines": [2]}"#,
        "\n",
        r#"{"bug_id": "Math-2", "project": "Math", "file": "src/B.java", "method": "max", "source": "    int max(int a, int b) {\n        if (a < b) {\n            return b;\n        }\n        return a;\n    }\n", "buggy_lines": [2]}"#,
        "\n"
    );
    pub const TRANSFORMATIONS: &str = concat!(
        r#"{"id": "naming_1", "bug_id": "Lang-1", "operator": "RenameVariable-1", "level": "naming", "source": "    int size(int[] values) {\n        int c = values.length;\n        return c;\n    }\n", "summary": "renames `count` to `c`"}"#,
        "\n",
        r#"{"id": "expression_1", "bug_id": "Math-2", "operator": "SwitchRelation", "level": "expression", "source": "    int max(int a, int b) {\n        if (b > a) {\n            return b;\n        }\n        return a;\n    }\n", "summary": "swaps `a < b` to `b > a`"}"#,
        "\n",
        r#"{"id": "naming_2", "bug_id": "Math-2", "operator": "RenameVariable-1", "level": "naming", "source": "    int max(int x, int b) {\n        if (x < b) {\n            return b;\n        }\n        return x;\n    }\n", "summary": "renames `a` to `x`"}"#,
        "\n"
    );

    /// A study named `name` of these three items, with its default settings.
    pub async fn items(
        db: &natstudy_core::service::Db,
        name: &str,
    ) -> natstudy_vocab::ids::StudyId {
        let study = natstudy_core::store::studies::create(db, None, name, "")
            .await
            .expect("study");
        natstudy_core::service::imports::import_items_text(
            db,
            study,
            None,
            ("bugs", BUGS),
            ("t", TRANSFORMATIONS),
        )
        .await
        .expect("items");
        study
    }

    /// A study named `name` of these three items with a dynamic batch ("online") and an
    /// invite link into it for five participants: (study, the link's token).
    pub async fn study(
        db: &natstudy_core::service::Db,
        name: &str,
    ) -> (natstudy_vocab::ids::StudyId, String) {
        let study = items(db, name).await;
        let (_, token) = super::open_queue(db, study, 5).await.expect("invite");
        (study, token)
    }
}
