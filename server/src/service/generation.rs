//! Generating items: the engine's transformations of a study's bugs, proposed as previews and
//! added as items on request.

use std::collections::BTreeMap;

use super::{ServiceError, ServiceResult};
use crate::db::Db;
use crate::formats;
use crate::ids::{StudyId, UserId};
use crate::store::{self, imports::Outcome};

/// A generated transformation and the key the study page selects it by.
pub struct Proposal {
    pub key: String,
    pub generated: crate::generate::Generated,
}

/// The engine's transformations of a study's bugs that are not items yet, numbered after the
/// study's items.
pub async fn propose(
    db: &Db,
    study: StudyId,
    operators: &str,
    all_sites: bool,
    model: Option<std::sync::Arc<crate::engine::lm::Scorer>>,
) -> ServiceResult<(Vec<formats::items::BugRecord>, Vec<Proposal>)> {
    let operators = crate::generate::parse_operators(operators)
        .map_err(|e| ServiceError::Invalid(e.to_string()))?;
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
    let proposals = generated
        .map_err(|e| ServiceError::Invalid(e.to_string()))?
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

/// Applications kept, and per rule: refusals and the first place one happened.
type OperatorTally<'r> = (usize, BTreeMap<&'r str, (usize, String)>);

/// Why each operator did or did not apply to the study's bugs, summed over the bugs: per
/// operator the applications kept and the refusals by rule (most frequent first, with the
/// first bug and line where each happened).
pub async fn explain(
    db: &Db,
    study: StudyId,
    operators: &str,
    all_sites: bool,
) -> ServiceResult<Vec<app::model::OperatorWhy>> {
    let operators = crate::generate::parse_operators(operators)
        .map_err(|e| ServiceError::Invalid(e.to_string()))?;
    let bugs = store::generation::bugs(db, study).await?;
    let opts = crate::generate::Options {
        operators: operators.clone(),
        all_sites,
    };
    tokio::task::spawn_blocking(move || {
        let explained = crate::generate::explain(&bugs, &opts, &|| {});
        let mut per_op: BTreeMap<crate::engine::transform::Operator, OperatorTally<'_>> =
            operators.iter().map(|o| (*o, Default::default())).collect();
        for (bug, e) in bugs.iter().zip(&explained) {
            let Ok(ops) = e else { continue };
            for x in ops {
                let entry = per_op.entry(x.operator).or_default();
                entry.0 += x.applied;
                for r in &x.refused {
                    let rule = entry
                        .1
                        .entry(r.rule)
                        .or_insert_with(|| (0, format!("{} line {}", bug.bug_id, r.line)));
                    rule.0 += 1;
                }
            }
        }
        operators
            .iter()
            .map(|op| {
                let (kept, rules) = per_op.remove(op).unwrap_or_default();
                let mut refusals: Vec<app::model::RefusalCount> = rules
                    .into_iter()
                    .map(|(rule, (count, example))| app::model::RefusalCount {
                        rule: rule.to_owned(),
                        count,
                        example,
                    })
                    .collect();
                refusals.sort_by(|a, b| b.count.cmp(&a.count).then(a.rule.cmp(&b.rule)));
                app::model::OperatorWhy {
                    operator: op.name().to_owned(),
                    kept,
                    refusals,
                }
            })
            .collect()
    })
    .await
    .map_err(|e| ServiceError::Internal(e.into()))
}

/// Adds the selected proposals (by key) as items, numbered consecutively after the study's.
pub async fn add_proposals(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    operators: &str,
    all_sites: bool,
    model: Option<std::sync::Arc<crate::engine::lm::Scorer>>,
    keys: &[String],
) -> ServiceResult<Outcome> {
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
    if records.len() != wanted.len() {
        return Err(ServiceError::Conflict(format!(
            "{} of the {} selected transformations are no longer proposed (added already, or the bugs changed); preview again",
            wanted.len() - records.len(),
            wanted.len()
        )));
    }
    let sources: Vec<&str> = records.iter().map(|r| r.source.as_str()).collect();
    let digest = store::imports::digest(&sources);
    let used: std::collections::HashSet<&str> = records.iter().map(|r| r.bug_id.as_str()).collect();
    let bugs: Vec<formats::items::BugRecord> = bugs
        .into_iter()
        .filter(|b| used.contains(b.bug_id.as_str()))
        .collect();
    let derived = super::imports::derive_items(bugs.clone(), records.clone()).await?;
    Ok(store::imports::items(db, study, actor, &digest, &bugs, &records, &derived).await?)
}
