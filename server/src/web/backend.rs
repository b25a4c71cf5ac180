//! The server's implementation of `app::backend::Backend`: domain operations over the store.

use std::sync::Arc;

use app::backend::{Backend, BackendError, BackendHandle};
use app::model::{
    AnnotateState, AnnotateStep, DiffLine, GenerateRequest, GeneratedPreview, ItemView, Monitor,
    RatedRow, Role, ScoringView, ScreenerQuestion, Seg, StudyDetail, StudySettingsForm,
    StudySummary, User, UserRow, VoteForm,
};

use crate::db::Db;
use crate::store::{self, StoreError};

/// The domain as the pages reach it.
#[derive(Clone, Debug)]
pub struct DomainBackend {
    db: Db,
    models_dir: std::path::PathBuf,
    /// The model last loaded for the generator (file name, modification time, model): a
    /// preview and the addition that follows it load it once.
    last_model: Arc<tokio::sync::Mutex<Option<LoadedModel>>>,
}

type LoadedModel = (String, std::time::SystemTime, Arc<crate::engine::lm::Model>);

impl DomainBackend {
    pub fn handle(db: Db, models_dir: std::path::PathBuf) -> BackendHandle {
        Arc::new(DomainBackend {
            db,
            models_dir,
            last_model: Default::default(),
        })
    }

    /// A model of the models directory by file name (cached while the file is unchanged).
    async fn model(
        &self,
        name: Option<&str>,
    ) -> Result<Option<Arc<crate::engine::lm::Model>>, BackendError> {
        let Some(name) = name else { return Ok(None) };
        let path = self.models_dir.join(name);
        let modified = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .ok()
            .filter(|_| super::models::valid_name(name))
            .ok_or_else(|| BackendError::NotFound(format!("model {name}")))?;
        let mut cache = self.last_model.lock().await;
        if let Some((n, t, m)) = cache.as_ref() {
            if n == name && *t == modified {
                return Ok(Some(m.clone()));
            }
        }
        let m = crate::service::load_model(&path)
            .await
            .map_err(|e| BackendError::Invalid(format!("model {name}: {e:#}")))?;
        let m = Arc::new(m);
        *cache = Some((name.to_owned(), modified, m.clone()));
        Ok(Some(m))
    }
}

fn map(e: StoreError) -> BackendError {
    match e {
        StoreError::Conflict(what) => BackendError::Conflict(format!("{what} already exists")),
        StoreError::NotFound(what) => BackendError::NotFound(what),
        StoreError::Invalid(why) => BackendError::Invalid(why),
        StoreError::Forbidden(why) => BackendError::Forbidden(why),
        StoreError::Db(e) => {
            tracing::error!(error = %e, "database error");
            BackendError::Internal("database error".into())
        }
    }
}

fn join<T>(r: Result<T, tokio::task::JoinError>) -> Result<T, BackendError> {
    r.map_err(|e| BackendError::Internal(format!("worker failed: {e}")))
}

/// Adds an account: validates the name, hashes off the async threads, records the action.
pub async fn add_user(
    db: &Db,
    actor: Option<&User>,
    username: &str,
    password: &str,
    role: Role,
) -> Result<i64, BackendError> {
    validate_username(username)?;
    let pw = password.to_owned();
    let hash = join(tokio::task::spawn_blocking(move || crate::password::hash(&pw)).await)?
        .map_err(|e| BackendError::Invalid(e.to_string()))?;
    let id = store::users::insert(db, username, &hash, role)
        .await
        .map_err(map)?;
    store::audit::record(
        &db.pool,
        actor.map(|a| a.id),
        None,
        "user.add",
        &format!("{username} ({role})"),
    )
    .await
    .map_err(map)?;
    Ok(id)
}

pub fn validate_username(name: &str) -> Result<(), BackendError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '@'));
    if ok {
        Ok(())
    } else {
        Err(BackendError::Invalid(
            "username must be 1–64 characters: letters, digits, _ - . @".into(),
        ))
    }
}

#[async_trait::async_trait]
impl Backend for DomainBackend {
    #[tracing::instrument(skip(self, password))]
    async fn authenticate(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<User>, BackendError> {
        let creds = store::users::credentials(&self.db, username)
            .await
            .map_err(map)?;
        let (hash, user) = match creds {
            Some(c) if !c.disabled => (c.password_hash.unwrap_or_default(), Some(c.user)),
            _ => (crate::password::dummy_hash().to_owned(), None),
        };
        let pw = password.to_owned();
        let ok =
            join(tokio::task::spawn_blocking(move || crate::password::verify(&pw, &hash)).await)?;
        Ok(user.filter(|_| ok))
    }

    async fn my_studies(&self, user: &User) -> Result<Vec<(i64, String)>, BackendError> {
        store::participation::studies_of_user(&self.db, user.id)
            .await
            .map_err(map)
    }

    async fn user(&self, id: i64) -> Result<Option<User>, BackendError> {
        store::users::by_id(&self.db, id).await.map_err(map)
    }

    async fn list_users(&self) -> Result<Vec<UserRow>, BackendError> {
        store::users::list(&self.db).await.map_err(map)
    }

    #[tracing::instrument(skip(self, password))]
    async fn add_user(
        &self,
        actor: &User,
        username: &str,
        password: &str,
        role: Role,
    ) -> Result<i64, BackendError> {
        add_user(&self.db, Some(actor), username, password, role).await
    }

    async fn list_studies(&self) -> Result<Vec<StudySummary>, BackendError> {
        store::studies::list(&self.db).await.map_err(map)
    }

    #[tracing::instrument(skip(self))]
    async fn create_study(
        &self,
        actor: &User,
        name: &str,
        description: &str,
    ) -> Result<i64, BackendError> {
        if name.is_empty() || name.len() > 200 {
            return Err(BackendError::Invalid(
                "a study needs a name of 1–200 characters".into(),
            ));
        }
        store::studies::create(&self.db, Some(actor.id), name, description)
            .await
            .map_err(map)
    }

    async fn study_detail(&self, id: i64) -> Result<Option<StudyDetail>, BackendError> {
        store::studies::detail(&self.db, id).await.map_err(map)
    }

    #[tracing::instrument(skip(self, token, pid))]
    async fn join(&self, token: &str, pid: Option<&str>) -> Result<(i64, i64), BackendError> {
        store::participation::join(&self.db, token, pid)
            .await
            .map_err(map)
    }

    async fn annotator_in(
        &self,
        study: i64,
        participant: Option<i64>,
        user: Option<&User>,
    ) -> Result<Option<i64>, BackendError> {
        store::participation::annotator_in(&self.db, study, participant, user.map(|u| u.id))
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self))]
    async fn annotate_state(
        &self,
        study: i64,
        annotator: i64,
        revise: Option<i64>,
    ) -> Result<AnnotateState, BackendError> {
        annotate_state(&self.db, study, annotator, revise)
            .await
            .map_err(map)
    }

    async fn consent(
        &self,
        _study: i64,
        annotator: i64,
        answers: Vec<(String, String)>,
    ) -> Result<(), BackendError> {
        let obj: serde_json::Map<String, serde_json::Value> = answers
            .into_iter()
            .map(|(k, v)| (k, serde_json::Value::String(v.chars().take(200).collect())))
            .collect();
        store::participation::consent(
            &self.db,
            annotator,
            &serde_json::Value::Object(obj).to_string(),
        )
        .await
        .map_err(map)
    }

    async fn guideline_seen(&self, _study: i64, annotator: i64) -> Result<(), BackendError> {
        store::participation::guideline_seen(&self.db, annotator)
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self, vote), fields(token = %vote.token))]
    async fn submit_vote(
        &self,
        study: i64,
        annotator: i64,
        item: i64,
        vote: VoteForm,
    ) -> Result<(), BackendError> {
        store::assign::submit(&self.db, study, annotator, item, &vote, crate::db::now_ms())
            .await
            .map_err(map)?;
        Ok(())
    }

    async fn finish(&self, study: i64, annotator: i64) -> Result<(), BackendError> {
        store::participation::finish(&self.db, study, annotator)
            .await
            .map_err(map)
    }
    async fn renew_leases(&self, _study: i64, annotator: i64) -> Result<(), BackendError> {
        store::assign::renew_leases(&self.db, annotator, crate::db::now_ms())
            .await
            .map_err(map)?;
        Ok(())
    }

    #[tracing::instrument(skip(self))]
    async fn results(&self, study: i64) -> Result<app::model::ResultsView, BackendError> {
        let name = store::participation::study_settings(&self.db, study)
            .await
            .map_err(map)?
            .name;
        let data = store::analysis::study_data(&self.db, study)
            .await
            .map_err(map)?;
        let votes = data.votes.len() as i64;
        // CPU work off the async threads; a short bootstrap keeps the page quick
        let (headline, tables, charts) = join(
            tokio::task::spawn_blocking(move || {
                let options = crate::engine::analysis::Options {
                    bootstrap: 200,
                    ..Default::default()
                };
                let report = crate::engine::analysis::report_with(&data, &options);
                let charts = crate::engine::plots::report_charts(&report, &data);
                (
                    crate::report_view::headline(&name, &report),
                    crate::report_view::tables(&report),
                    charts,
                )
            })
            .await,
        )?;
        let charts = charts.map_err(|e| BackendError::Internal(e.to_string()))?;
        Ok(app::model::ResultsView {
            headline,
            tables,
            charts,
            votes,
        })
    }

    async fn monitor(&self, study: i64) -> Result<Monitor, BackendError> {
        store::monitor::monitor(&self.db, study).await.map_err(map)
    }

    #[tracing::instrument(skip(self, settings))]
    async fn update_settings(
        &self,
        actor: &User,
        study: i64,
        settings: StudySettingsForm,
    ) -> Result<(), BackendError> {
        store::monitor::update_settings(&self.db, study, Some(actor.id), &settings)
            .await
            .map_err(map)
    }

    #[tracing::instrument(skip(self, files))]
    async fn import_upload(
        &self,
        actor: &User,
        study: i64,
        kind: &str,
        files: Vec<(String, String)>,
    ) -> Result<String, BackendError> {
        use crate::store::imports::Outcome;
        let who = Some(actor.id);
        let db = &self.db;
        let one = |files: &[(String, String)]| -> Result<(String, String), BackendError> {
            match files {
                [f] => Ok(f.clone()),
                _ => Err(BackendError::Invalid(format!(
                    "{kind} takes exactly one file"
                ))),
            }
        };
        let outcome = match kind {
            "items" => match files.as_slice() {
                [b, t] => {
                    crate::service::import_items_text(db, study, who, (&b.0, &b.1), (&t.0, &t.1))
                        .await
                }
                _ => {
                    return Err(BackendError::Invalid(
                        "items take two files: bugs.jsonl and transformations.jsonl".into(),
                    ))
                }
            },
            "votes" => {
                let (n, t) = one(&files)?;
                crate::service::import_votes_text(db, study, who, &n, &t).await
            }
            "npr" => {
                let (n, t) = one(&files)?;
                crate::service::import_npr_text(db, study, who, &n, &t).await
            }
            "ce" => {
                let (n, t) = one(&files)?;
                crate::service::import_ce_text(db, study, who, &n, &t).await
            }
            other => {
                return Err(BackendError::Invalid(format!(
                    "unknown import kind {other}"
                )))
            }
        };
        match outcome {
            Ok(Outcome::Imported { rows }) => Ok(format!("imported {rows} rows")),
            Ok(Outcome::AlreadyImported) => Ok("already imported: nothing to do".into()),
            Err(e) => match e.downcast::<StoreError>() {
                Ok(se) => Err(map(se)),
                Err(e) => Err(BackendError::Invalid(format!("{e:#}"))),
            },
        }
    }

    #[tracing::instrument(skip(self))]
    async fn scoring(&self, study: i64) -> Result<ScoringView, BackendError> {
        let dir = self.models_dir.clone();
        let models = tokio::task::spawn_blocking(move || super::models::list(&dir))
            .await
            .map_err(|e| BackendError::Internal(e.to_string()))?;
        Ok(ScoringView {
            models,
            jobs: store::jobs::list(&self.db, study).await.map_err(map)?,
        })
    }

    #[tracing::instrument(skip(self))]
    async fn start_scoring(
        &self,
        actor: &User,
        study: i64,
        model: &str,
        log10: bool,
    ) -> Result<i64, BackendError> {
        if !super::models::valid_name(model) || !self.models_dir.join(model).is_file() {
            return Err(BackendError::NotFound(format!("model {model}")));
        }
        store::studies::detail(&self.db, study)
            .await
            .map_err(map)?
            .ok_or_else(|| BackendError::NotFound(format!("study {study}")))?;
        let label = format!("score with {model}{}", if log10 { " (log10)" } else { "" });
        let job = store::jobs::create(&self.db, study, Some(actor.id), "score", &label)
            .await
            .map_err(map)?;
        tokio::spawn(super::models::run_scoring(
            self.db.clone(),
            job,
            study,
            Some(actor.id),
            self.models_dir.join(model),
            log10,
        ));
        Ok(job)
    }

    #[tracing::instrument(skip(self))]
    async fn propose_transformations(
        &self,
        study: i64,
        request: &GenerateRequest,
    ) -> Result<Vec<GeneratedPreview>, BackendError> {
        let model = self.model(request.model.as_deref()).await?;
        let (bugs, proposals) = crate::service::propose(
            &self.db,
            study,
            &request.operators,
            request.all_sites,
            model,
        )
        .await
        .map_err(|e| BackendError::Invalid(format!("{e:#}")))?;
        let lines: std::collections::HashMap<&str, (&str, &[u32])> = bugs
            .iter()
            .map(|b| {
                (
                    b.bug_id.as_str(),
                    (b.source.as_str(), b.buggy_lines.as_slice()),
                )
            })
            .collect();
        Ok(proposals
            .into_iter()
            .map(|p| {
                let r = &p.generated.record;
                let (old, buggy) = lines.get(r.bug_id.as_str()).copied().unwrap_or(("", &[]));
                GeneratedPreview {
                    key: p.key.clone(),
                    bug_id: r.bug_id.clone(),
                    operator: r.operator.clone(),
                    level: r.level.as_str().to_owned(),
                    summary: r.summary.clone(),
                    touches_buggy: p.generated.touches_buggy,
                    diff: wire_rows(crate::engine::diff::diff_rows(old, &r.source, buggy)),
                }
            })
            .collect())
    }

    #[tracing::instrument(skip(self, keys), fields(keys = keys.len()))]
    async fn add_transformations(
        &self,
        actor: &User,
        study: i64,
        request: &GenerateRequest,
        keys: Vec<String>,
    ) -> Result<String, BackendError> {
        use crate::store::imports::Outcome;
        if keys.is_empty() {
            return Err(BackendError::Invalid(
                "select at least one transformation".into(),
            ));
        }
        let model = self.model(request.model.as_deref()).await?;
        match crate::service::add_proposals(
            &self.db,
            study,
            Some(actor.id),
            &request.operators,
            request.all_sites,
            model,
            &keys,
        )
        .await
        {
            Ok(Outcome::Imported { rows }) => Ok(format!("added {rows} items")),
            Ok(Outcome::AlreadyImported) => Ok("already added: nothing to do".into()),
            Err(e) => match e.downcast::<StoreError>() {
                Ok(se) => Err(map(se)),
                Err(e) => Err(BackendError::Invalid(format!("{e:#}"))),
            },
        }
    }

    #[tracing::instrument(skip(self))]
    async fn create_batch(
        &self,
        actor: &User,
        study: i64,
        name: &str,
        strategy: &str,
        level: Option<String>,
        sample: Option<usize>,
        pool: usize,
        seed: u64,
    ) -> Result<String, BackendError> {
        let strategy = store::assign::Strategy::parse(strategy)
            .ok_or_else(|| BackendError::Invalid(format!("unknown strategy {strategy}")))?;
        if name.is_empty() {
            return Err(BackendError::Invalid("a batch needs a name".into()));
        }
        let annotators = store::assign::ensure_pool(&self.db, study, pool.min(10_000))
            .await
            .map_err(map)?;
        let spec = store::assign::BatchSpec {
            name: name.to_owned(),
            strategy,
            filter: store::assign::ItemFilter {
                level,
                sample,
                ..Default::default()
            },
            annotators,
            seed,
            lease_secs: 1200,
            avoid_same_bug: true,
        };
        let info = store::assign::create_batch(&self.db, study, Some(actor.id), &spec)
            .await
            .map_err(map)?;
        Ok(format!(
            "batch {name}: {} items, {} planned assignments",
            info.items, info.assignments
        ))
    }

    async fn create_invite(
        &self,
        actor: &User,
        study: i64,
        batch: i64,
        cap: i64,
    ) -> Result<String, BackendError> {
        let token =
            store::participation::create_invite(&self.db, study, batch, cap, Some(actor.id))
                .await
                .map_err(map)?;
        Ok(format!("/join/{token}"))
    }

    async fn release_annotator(
        &self,
        actor: &User,
        study: i64,
        annotator: i64,
    ) -> Result<u64, BackendError> {
        store::assign::release(&self.db, study, annotator, Some(actor.id))
            .await
            .map_err(map)
    }

    async fn move_annotator(
        &self,
        actor: &User,
        study: i64,
        from: i64,
        to_code: &str,
    ) -> Result<u64, BackendError> {
        let to = store::assign::annotator_id(&self.db, study, to_code)
            .await
            .map_err(map)?;
        store::assign::move_unrated(&self.db, study, from, to, Some(actor.id))
            .await
            .map_err(map)
    }
}

/// The guideline's markdown as HTML; raw HTML in the markdown is dropped.
pub fn guideline_html(markdown: &str) -> String {
    use pulldown_cmark::{Event, Parser};
    let events =
        Parser::new(markdown).filter(|e| !matches!(e, Event::Html(_) | Event::InlineHtml(_)));
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

fn fresh_token() -> String {
    use rand::RngCore;
    let mut b = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn wire_rows(rows: Vec<crate::engine::diff::Row>) -> Vec<DiffLine> {
    use crate::engine::diff::RowKind;
    let segs = |v: Vec<crate::engine::diff::Segment>| {
        v.into_iter()
            .map(|s| Seg {
                text: s.text,
                changed: s.changed,
            })
            .collect()
    };
    rows.into_iter()
        .map(|r| DiffLine {
            kind: match r.kind {
                RowKind::Same => "same",
                RowKind::Removed => "removed",
                RowKind::Added => "added",
                RowKind::Changed => "changed",
            }
            .to_owned(),
            old_no: r.old_no,
            new_no: r.new_no,
            old: segs(r.old),
            new: segs(r.new),
            buggy: r.buggy,
        })
        .collect()
}

/// The screener of a study that sets none.
pub fn default_screener() -> Vec<ScreenerQuestion> {
    let q = |name: &str, label: &str, options: &[&str]| ScreenerQuestion {
        name: name.into(),
        label: label.into(),
        options: options.iter().map(|o| o.to_string()).collect(),
    };
    vec![
        q(
            "years",
            "Years of Java experience",
            &["<1", "1-3", "3-5", "5-10", ">10"],
        ),
        q(
            "role",
            "Your role",
            &["student", "developer", "researcher", "other"],
        ),
    ]
}

/// Where a participant stands, with the item to show.
pub async fn annotate_state(
    db: &Db,
    study: i64,
    annotator: i64,
    revise: Option<i64>,
) -> Result<AnnotateState, StoreError> {
    let settings = store::participation::study_settings(db, study).await?;
    let me = store::participation::annotator_state(db, annotator).await?;
    let (done, total) = store::assign::progress(db, study, annotator).await?;
    let step = if me.finished {
        AnnotateStep::Finished {
            completion_code: settings.completion_code.clone(),
        }
    } else if !me.consented {
        let mut screener: Vec<ScreenerQuestion> =
            serde_json::from_str(&settings.screener_json).unwrap_or_default();
        if screener.is_empty() {
            screener = default_screener();
        }
        let text = if settings.consent_text.trim().is_empty() {
            format!(
                "You are invited to take part in the study \"{}\". You will rate pairs of Java methods. \
                 Participation is voluntary; you may stop at any time. Your answers are stored under a code \
                 ({}) and never with your name.",
                settings.name, me.code
            )
        } else {
            settings.consent_text.clone()
        };
        AnnotateStep::Consent { text, screener }
    } else if !me.guideline_seen {
        AnnotateStep::Guideline
    } else {
        // only an item this annotator rated may be revised; anything else shows the queue
        let mine = match revise {
            Some(item) => store::participation::my_vote(db, annotator, item)
                .await?
                .map(|_| item),
            None => None,
        };
        let target = match mine {
            Some(item) => Some(item),
            None => store::assign::next_item(db, study, annotator, crate::db::now_ms())
                .await?
                .map(|h| h.item),
        };
        match target {
            Some(item) => {
                let it = store::participation::item_for_display(db, study, item).await?;
                let rows =
                    crate::engine::diff::diff_rows(&it.bug_source, &it.source, &it.buggy_lines);
                let method_line = it.file_source.as_deref().and_then(|f| {
                    let first = it.bug_source.lines().find(|l| !l.trim().is_empty())?.trim();
                    let at = f.find(first)?;
                    Some(f[..at].matches('\n').count() as u32 + 1)
                });
                let original_left = !settings.randomise_sides
                    || store::participation::original_left(db, annotator, item).await?;
                AnnotateStep::Rate(Box::new(ItemView {
                    item,
                    summary: it.summary,
                    operator: (!settings.blind_operator).then_some(it.operator),
                    bug_id: (!settings.blind_bug_id).then_some(it.bug_key),
                    project: it.project,
                    file_path: it.file_path,
                    method: it.method,
                    diff: wire_rows(rows),
                    file_source: it.file_source,
                    method_line,
                    method_lines: it.bug_source.lines().count() as u32,
                    original_left,
                    previous: store::participation::my_vote(db, annotator, item).await?,
                    token: fresh_token(),
                }))
            }
            None => AnnotateStep::Review {
                rated: store::participation::my_votes(db, study, annotator)
                    .await?
                    .into_iter()
                    .map(|(item, summary, cr, cc)| RatedRow {
                        item,
                        summary,
                        cr,
                        cc,
                    })
                    .collect(),
            },
        }
    };
    Ok(AnnotateState {
        study,
        study_name: settings.name,
        code: me.code,
        done,
        total,
        guideline_html: guideline_html(&settings.guideline),
        step,
    })
}
