//! Use cases shared by the command line and the web: accounts, participation rules, jobs,
//! imports, generation and scoring. Errors are [`ServiceError`]s (see `error.rs`) or, for the
//! older file-based use cases, anyhow errors that [`ServiceError::from_anyhow`] classifies.

pub mod accounts;
pub mod annotate;
pub mod error;
pub mod jobs;
pub mod participation;
pub mod throttle;

pub use error::{ServiceError, ServiceResult};

use std::path::Path;

use anyhow::{Context, Result};

use crate::db::Db;
use crate::formats;
use crate::store::{self, imports::Outcome};

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

fn name(path: &Path) -> String {
    path.display().to_string()
}

/// Validates and imports `bugs.jsonl` + `transformations.jsonl` texts into a study.
pub async fn import_items_text(
    db: &Db,
    study: i64,
    actor: Option<i64>,
    bugs: (&str, &str),
    transformations: (&str, &str),
) -> Result<Outcome> {
    let parsed_bugs = formats::items::parse_bugs(bugs.1, bugs.0)?;
    let parsed =
        formats::items::parse_transformations(transformations.1, transformations.0, &parsed_bugs)?;
    let digest = store::imports::digest(&[bugs.1, transformations.1]);
    Ok(store::imports::items(db, study, actor, &digest, &parsed_bugs, &parsed).await?)
}

pub async fn import_items(
    db: &Db,
    study: i64,
    bugs: &Path,
    transformations: &Path,
) -> Result<Outcome> {
    let (b, t) = (read(bugs)?, read(transformations)?);
    import_items_text(
        db,
        study,
        None,
        (&name(bugs), &b),
        (&name(transformations), &t),
    )
    .await
}

/// The study's known targets (bug ids and transformation ids), for cross-checks.
pub async fn targets(db: &Db, study: i64) -> Result<std::collections::HashSet<String>> {
    Ok(store::analysis::target_keys(db, study).await?)
}

pub async fn import_votes(db: &Db, study: i64, survey: &Path) -> Result<Outcome> {
    import_votes_text(db, study, None, &name(survey), &read(survey)?).await
}

pub async fn import_votes_text(
    db: &Db,
    study: i64,
    actor: Option<i64>,
    file: &str,
    text: &str,
) -> Result<Outcome> {
    let votes = formats::survey::parse_survey(text, file)?;
    let known = targets(db, study).await?;
    let mut problems = formats::Problems::default();
    for v in &votes {
        if !known.contains(&v.item) {
            problems.push(
                file,
                0,
                &v.item,
                "unknown item (not a transformation id of the study)",
            );
        }
    }
    problems.finish(())?;
    let digest = store::imports::digest(&[text]);
    Ok(store::imports::votes(db, study, actor, &digest, &votes).await?)
}

/// The results tables a study imports: repair tools' results and cross-entropy scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultsTable {
    /// `npr_results.csv`
    Npr,
    /// `ce_scores.csv`
    Ce,
}

pub async fn import_results(
    db: &Db,
    study: i64,
    table: ResultsTable,
    file: &Path,
) -> Result<Outcome> {
    import_results_text(db, study, None, table, &name(file), &read(file)?).await
}

/// Validates a results table against the study's targets and imports it.
pub async fn import_results_text(
    db: &Db,
    study: i64,
    actor: Option<i64>,
    table: ResultsTable,
    file: &str,
    text: &str,
) -> Result<Outcome> {
    let known = targets(db, study).await?;
    let digest = store::imports::digest(&[text]);
    Ok(match table {
        ResultsTable::Npr => {
            let rows = formats::results::parse_npr(text, file, &known)?;
            store::imports::npr(db, study, actor, &digest, &rows).await?
        }
        ResultsTable::Ce => {
            let rows = formats::results::parse_ce(text, file, &known)?;
            store::imports::ce(db, study, actor, &digest, &rows).await?
        }
    })
}

/// A generated transformation and the key the study page selects it by.
pub struct Proposal {
    pub key: String,
    pub generated: crate::generate::Generated,
}

/// The engine's transformations of a study's bugs that are not items yet, numbered after the
/// study's items.
pub async fn propose(
    db: &Db,
    study: i64,
    operators: &str,
    all_sites: bool,
    model: Option<std::sync::Arc<crate::engine::lm::Model>>,
) -> Result<(Vec<formats::items::BugRecord>, Vec<Proposal>)> {
    let operators = crate::generate::parse_operators(operators)?;
    let bugs = store::generation::bugs(db, study).await?;
    let (mut next, seen) = store::generation::existing(db, study).await?;
    let opts = crate::generate::Options {
        operators,
        all_sites,
    };
    let (bugs, generated) = tokio::task::spawn_blocking(move || {
        let scorer = model
            .as_deref()
            .map(|m| m as &dyn crate::engine::transform::NameScorer);
        let out = crate::generate::generate(&bugs, "study bugs", &opts, scorer, &mut next, &|| {});
        (bugs, out)
    })
    .await?;
    let proposals = generated?
        .into_iter()
        .filter(|g| !seen.contains(&(g.record.bug_id.clone(), g.record.source.clone())))
        .map(|g| Proposal {
            key: format!(
                "{}:{}:{}",
                g.record.bug_id,
                g.record.operator,
                &store::imports::digest(&[&g.record.source])[..16]
            ),
            generated: g,
        })
        .collect();
    Ok((bugs, proposals))
}

/// Adds the selected proposals (by key) as items, numbered consecutively after the study's.
pub async fn add_proposals(
    db: &Db,
    study: i64,
    actor: Option<i64>,
    operators: &str,
    all_sites: bool,
    model: Option<std::sync::Arc<crate::engine::lm::Model>>,
    keys: &[String],
) -> Result<Outcome> {
    let wanted: std::collections::HashSet<&str> = keys.iter().map(String::as_str).collect();
    let (bugs, proposals) = propose(db, study, operators, all_sites, model).await?;
    let (mut next, _) = store::generation::existing(db, study).await?;
    let records: Vec<formats::items::TransformationRecord> = proposals
        .into_iter()
        .filter(|p| wanted.contains(p.key.as_str()))
        .map(|p| {
            let mut r = p.generated.record;
            let n = next.entry(r.level).or_insert(1);
            r.id = format!("{}_{n}", r.level.as_str());
            *n += 1;
            r
        })
        .collect();
    anyhow::ensure!(
        records.len() == wanted.len(),
        "{} of the {} selected transformations are no longer proposed (added already, or the bugs changed); preview again",
        wanted.len() - records.len(),
        wanted.len()
    );
    let sources: Vec<&str> = records.iter().map(|r| r.source.as_str()).collect();
    let digest = store::imports::digest(&sources);
    let used: std::collections::HashSet<&str> = records.iter().map(|r| r.bug_id.as_str()).collect();
    let bugs: Vec<formats::items::BugRecord> = bugs
        .into_iter()
        .filter(|b| used.contains(b.bug_id.as_str()))
        .collect();
    Ok(store::imports::items(db, study, actor, &digest, &bugs, &records).await?)
}

/// What scoring a study did.
pub struct Scored {
    pub methods: usize,
    pub tokens: u64,
}

/// Scores every bug and transformation of a study with a model (on all cores) and stores the
/// cross-entropies as that model's CE scores, replacing earlier ones. `start` is told how many
/// methods there are; `progress` is called once per method scored.
pub async fn score_study(
    db: &Db,
    study: i64,
    actor: Option<i64>,
    model: crate::engine::lm::Model,
    name: &str,
    opts: crate::engine::lm::tokenize::TokenizeOptions,
    log10: bool,
    start: impl FnOnce(u64),
    progress: std::sync::Arc<dyn Fn() + Send + Sync>,
) -> Result<Scored> {
    let targets = store::analysis::sources(db, study).await?;
    start(targets.len() as u64);
    let (scores, tokens) = tokio::task::spawn_blocking(move || {
        crate::engine::lm::score::score_many(&model, &targets, opts, log10, &*progress)
    })
    .await?;
    let rows: Vec<formats::results::CeRecord> = scores
        .into_iter()
        .map(|(target, ce)| formats::results::CeRecord {
            model: name.to_owned(),
            target,
            cross_entropy: ce,
        })
        .collect();
    let methods = store::imports::replace_ce(db, study, actor, name, &rows).await?;
    Ok(Scored { methods, tokens })
}

/// Loads a language model file (ARPA or binary) off the async threads.
pub async fn load_model(path: &Path) -> Result<crate::engine::lm::Model> {
    let p = path.to_owned();
    tokio::task::spawn_blocking(move || crate::engine::lm::binary::load(&p))
        .await?
        .with_context(|| format!("cannot load {}", path.display()))
}
