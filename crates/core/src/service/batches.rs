//! Batches: the rules for building one, shared by the study page and `natstudy batch create`.

use super::{ServiceError, ServiceResult};
use crate::store::assign::{self, BatchSpec, Strategy};
pub use crate::store::assign::{BatchInfo, ItemFilter};
use crate::store::users;
use crate::store::Db;
use natstudy_vocab::ids::{StudyId, UserId};

/// The most participants `S1..Sn` one batch may create.
pub const MAX_POOL: usize = 10_000;
/// The lease of a dynamic queue unless one is given: 20 minutes.
pub const DEFAULT_LEASE_SECS: i64 = 1200;

/// What to build.
#[derive(Debug, Clone)]
pub struct BatchRequest {
    pub name: String,
    /// `fixed`/`fixed_groups` or `dynamic`/`dynamic_queue`.
    pub strategy: String,
    pub filter: ItemFilter,
    /// Participants `S1..Sn` (created when missing).
    pub pool: usize,
    /// Accounts enrolled as annotators.
    pub users: Vec<String>,
    pub seed: u64,
    pub lease_secs: i64,
    pub avoid_same_bug: bool,
}

impl BatchRequest {
    /// A request with the defaults the study page uses.
    pub fn new(name: &str, strategy: &str) -> BatchRequest {
        BatchRequest {
            name: name.trim().to_owned(),
            strategy: strategy.to_owned(),
            filter: ItemFilter::default(),
            pool: 0,
            users: Vec::new(),
            seed: 1,
            lease_secs: DEFAULT_LEASE_SECS,
            avoid_same_bug: true,
        }
    }
}

/// Builds a batch: checks the request, creates or enrols its annotators, plans it.
pub async fn create(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    request: BatchRequest,
) -> ServiceResult<BatchInfo> {
    let strategy = Strategy::from_input(&request.strategy).ok_or_else(|| {
        ServiceError::Invalid(format!(
            "unknown strategy {} (fixed or dynamic)",
            request.strategy
        ))
    })?;
    if request.name.trim().is_empty() {
        return Err(ServiceError::Invalid("a batch needs a name".into()));
    }
    if request.pool > MAX_POOL {
        return Err(ServiceError::Invalid(format!(
            "a batch creates at most {MAX_POOL} participants"
        )));
    }
    if request.filter.sample == Some(0) {
        return Err(ServiceError::Invalid(
            "a sample takes at least one item".into(),
        ));
    }
    // the accounts first (reads only); the pool and the enrolments are made in the batch's
    // own transaction, so a refused batch leaves no annotator behind
    let mut joining = assign::Joining {
        pool: request.pool,
        users: Vec::with_capacity(request.users.len()),
    };
    for name in &request.users {
        let account = users::credentials(db, name)
            .await?
            .ok_or_else(|| ServiceError::NotFound(format!("account {name}")))?;
        joining.users.push(account.user.id);
    }
    let spec = BatchSpec {
        name: request.name.trim().to_owned(),
        strategy,
        filter: request.filter,
        annotators: Vec::new(),
        seed: request.seed,
        lease_secs: request.lease_secs.max(60),
        avoid_same_bug: request.avoid_same_bug,
    };
    Ok(assign::create_batch_joining(db, study, actor, &spec, &joining).await?)
}

/// The study's batch called `name`.
pub async fn by_name(
    db: &Db,
    study: StudyId,
    name: &str,
) -> ServiceResult<natstudy_vocab::ids::BatchId> {
    Ok(assign::batch_id(db, study, name).await?)
}

/// The participant of code `code` (e.g. `S3`) in the study.
pub async fn annotator_by_code(
    db: &Db,
    study: StudyId,
    code: &str,
) -> ServiceResult<natstudy_vocab::ids::AnnotatorId> {
    Ok(assign::annotator_id(db, study, code).await?)
}

/// Releases what the annotator holds but has not rated, for others to take: the items freed.
pub async fn release(
    db: &Db,
    study: StudyId,
    annotator: natstudy_vocab::ids::AnnotatorId,
    actor: Option<UserId>,
) -> ServiceResult<u64> {
    Ok(assign::release(db, study, annotator, actor).await?)
}

/// The longest lease a batch may set, in minutes (a day).
pub const MAX_LEASE_MINUTES: i64 = 24 * 60;

/// Sets a batch's lease, 1 minute to [`MAX_LEASE_MINUTES`], for the claims made from now on.
pub async fn set_lease(
    db: &Db,
    study: StudyId,
    batch: natstudy_vocab::ids::BatchId,
    minutes: i64,
    actor: Option<UserId>,
) -> ServiceResult<()> {
    if !(1..=MAX_LEASE_MINUTES).contains(&minutes) {
        return Err(super::ServiceError::Invalid(format!(
            "a lease is 1–{MAX_LEASE_MINUTES} minutes"
        )));
    }
    Ok(assign::set_lease(db, study, batch, minutes * 60, actor).await?)
}

/// Releases the items held by every participant who has done nothing for `minutes` (1 to a
/// week): (holders, items) released.
pub async fn release_idle(
    db: &Db,
    study: StudyId,
    minutes: i64,
    actor: Option<UserId>,
) -> ServiceResult<(u64, u64)> {
    if !(1..=7 * 24 * 60).contains(&minutes) {
        return Err(super::ServiceError::Invalid(
            "idle for 1 minute to a week".into(),
        ));
    }
    let now = crate::db::now_ms();
    Ok(assign::release_idle(db, study, now - minutes * 60_000, now, actor).await?)
}

/// Hands the annotator's unrated items to the annotator of code `to_code`: how many moved.
pub async fn move_unrated(
    db: &Db,
    study: StudyId,
    from: natstudy_vocab::ids::AnnotatorId,
    to_code: &str,
    actor: Option<UserId>,
) -> ServiceResult<u64> {
    let to = assign::annotator_id(db, study, to_code).await?;
    Ok(assign::move_unrated(db, study, from, to, actor).await?)
}
