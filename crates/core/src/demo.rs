//! The demo: a study of real-looking Java bugs and transformations, and one account per role.

use anyhow::Result;
use natstudy_types::Role;

use crate::store::Db;
use crate::store::{self, StoreError};

const BUGS: &str = include_str!("../assets/demo/bugs.jsonl");
const TRANSFORMATIONS: &str = include_str!("../assets/demo/transformations.jsonl");
pub const STUDY: &str = "Demo: naturalness of transformations";

/// Demo accounts: (username, password, role).
pub const ACCOUNTS: [(&str, &str, Role); 3] = [
    ("admin", "demo-admin-pass", Role::Admin),
    ("researcher", "demo-researcher-pass", Role::Researcher),
    ("annotator", "demo-annotator-pass", Role::Annotator),
];

/// Refuses to plant the demo's published passwords into a database that holds anything but
/// the demo: other accounts or other studies mean real data (production, a real study).
pub async fn check_data_is_demo(db: &Db) -> Result<()> {
    let others: Vec<String> = store::users::list(db)
        .await?
        .into_iter()
        .map(|u| u.account.username)
        .filter(|n| !ACCOUNTS.iter().any(|(a, _, _)| a == n))
        .collect();
    let studies: Vec<String> = store::studies::list(db)
        .await?
        .into_iter()
        .map(|s| s.name)
        .filter(|n| n != STUDY)
        .collect();
    if !others.is_empty() || !studies.is_empty() {
        anyhow::bail!(
            "--demo refuses this database: it holds data other than the demo ({} other accounts, {} other studies). \
             The demo's passwords are public; run the demo on its own --data-dir.",
            others.len(),
            studies.len()
        );
    }
    Ok(())
}

/// Creates the demo study, accounts and a batch unless they exist, and returns an invite path
/// for an anonymous participant. Safe to run at every start.
pub async fn ensure(db: &Db) -> Result<String> {
    for (name, password, role) in ACCOUNTS {
        if store::users::credentials(db, name).await?.is_none() {
            crate::service::accounts::add_user(db, None, name, password, role)
                .await
                .map_err(|e| anyhow::anyhow!("demo account {name}: {e}"))?;
        }
    }
    let study = match store::studies::id_by_name(db, STUDY).await {
        Ok(id) => id,
        Err(StoreError::NotFound(_)) => {
            store::studies::create(
                db,
                None,
                STUDY,
                "Four bugs from Apache Commons projects and fifteen transformations of them.",
            )
            .await?
        }
        Err(e) => return Err(e.into()),
    };
    // the demo researcher works on the demo study
    store::members::add(
        db,
        study,
        "researcher",
        store::members::MemberRole::Member,
        None,
    )
    .await?;
    crate::service::imports::import_items_text(
        db,
        study,
        None,
        ("demo/bugs.jsonl", BUGS),
        ("demo/transformations.jsonl", TRANSFORMATIONS),
    )
    .await?;
    // one dynamic batch: the demo annotator account and invited participants share it
    let batch = match store::assign::batch_id(db, study, "demo").await {
        Ok(b) => b,
        Err(StoreError::NotFound(_)) => {
            let user = store::users::credentials(db, "annotator")
                .await?
                .map(|c| c.user.id);
            let mut annotators = Vec::new();
            if let Some(u) = user {
                annotators.push(store::invites::enrol_user(db, study, u).await?);
            }
            let spec = store::assign::BatchSpec {
                name: "demo".into(),
                strategy: store::assign::Strategy::DynamicQueue,
                filter: Default::default(),
                annotators,
                seed: 2024,
                lease_secs: 1200,
                avoid_same_bug: true,
            };
            store::assign::create_batch(db, study, None, &spec)
                .await?
                .id
        }
        Err(e) => return Err(e.into()),
    };
    let token = store::invites::create_invite(db, study, batch, 1000, None).await?;
    Ok(format!("/join/{token}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_files_are_valid() {
        let bugs = natstudy_engine::formats::items::parse_bugs(BUGS, "bugs").expect("demo bugs");
        let items =
            natstudy_engine::formats::items::parse_transformations(TRANSFORMATIONS, "t", &bugs)
                .expect("demo transformations");
        assert_eq!(bugs.len(), 4);
        assert_eq!(items.len(), 15);
    }
}
