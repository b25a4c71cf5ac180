//! `natstudy batch …` and `natstudy invite …`: assigning annotation work.

use anyhow::Result;
use clap::{Args, Subcommand};

use super::Global;
use natstudy_core::service::batches::{self, ItemFilter};

#[derive(Subcommand, Debug)]
pub enum BatchCommand {
    /// Build a batch from a study's items and assign it
    Create(CreateArgs),
    /// Release an annotator's unrated items back to the pool (drop-out)
    Release {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// participant code, e.g. S3
        annotator: String,
    },
    /// Move an annotator's unrated items to another annotator
    Move {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// The participant code whose unrated items move, e.g. S3
        from: String,
        /// The participant code they move to, e.g. S7
        to: String,
    },
    /// Set how long a claim of the batch is held without an answer (claims from now on)
    Lease {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// The batch, by its name
        #[arg(long)]
        batch: String,
        /// The lease in minutes, 1 to 1,440
        #[arg(long)]
        minutes: i64,
    },
    /// Release the items of every participant who has done nothing for a while
    ReleaseIdle {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// Idle for at least this many minutes
        #[arg(long)]
        minutes: i64,
    },
}

#[derive(Args, Debug)]
pub struct CreateArgs {
    /// The study, by its name (`natstudy study list` lists them)
    #[arg(long)]
    pub study: String,
    /// The batch's name (an invite link names it with --batch)
    #[arg(long)]
    pub name: String,
    /// fixed (groups of k, as in the published study) or dynamic (leased queue)
    #[arg(long, default_value = "fixed")]
    pub strategy: String,
    /// Only items of this level: naming, expression or statement
    #[arg(long)]
    pub level: Option<String>,
    /// Only items of this operator, e.g. RenameVariable-1
    #[arg(long)]
    pub operator: Option<String>,
    /// Only items of this project's bugs, e.g. Lang
    #[arg(long)]
    pub project: Option<String>,
    /// Explicit item ids, comma-separated
    #[arg(long, value_delimiter = ',')]
    pub ids: Vec<String>,
    /// A random sample of this many matching items
    #[arg(long)]
    pub sample: Option<usize>,
    /// Only items `natstudy verify` found to compile (and to pass their tests as the original)
    #[arg(long)]
    pub verified: bool,
    /// Participants S1..SN (created when missing)
    #[arg(long, default_value_t = 0)]
    pub pool: usize,
    /// Accounts to enrol as annotators, comma-separated usernames
    #[arg(long, value_delimiter = ',')]
    pub users: Vec<String>,
    /// The random seed of the sample and the assignment (the same seed, the same batch)
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Lease length of the dynamic queue, minutes
    #[arg(long, default_value_t = 20)]
    pub lease_minutes: i64,
    /// Allow two transformations of the same bug in a row
    #[arg(long)]
    pub allow_same_bug_in_a_row: bool,
}

pub async fn run(g: &Global, cmd: BatchCommand) -> Result<()> {
    let db = g.db().await?;
    match cmd {
        BatchCommand::Create(a) => {
            let study = natstudy_core::service::studies::id_by_name(&db, &a.study).await?;
            let request = natstudy_core::service::batches::BatchRequest {
                filter: ItemFilter {
                    level: a.level,
                    operator: a.operator,
                    project: a.project,
                    ids: a.ids,
                    sample: a.sample,
                    verified_only: a.verified,
                },
                pool: a.pool,
                users: a.users,
                seed: a.seed,
                lease_secs: a.lease_minutes.max(1) * 60,
                avoid_same_bug: !a.allow_same_bug_in_a_row,
                ..natstudy_core::service::batches::BatchRequest::new(&a.name, &a.strategy)
            };
            let info = natstudy_core::service::batches::create(&db, study, None, request).await?;
            println!(
                "batch {} (id {}): {} items, {} planned assignments",
                a.name, info.id, info.items, info.assignments
            );
            if info.full {
                eprintln!("warning: every item of the batch already has k ratings: its participants would get nothing to rate");
            }
        }
        BatchCommand::Release { study, annotator } => {
            let s = natstudy_core::service::studies::id_by_name(&db, &study).await?;
            let a = batches::annotator_by_code(&db, s, &annotator).await?;
            println!(
                "released {} items",
                batches::release(&db, s, a, None).await?
            );
        }
        BatchCommand::Lease {
            study,
            batch,
            minutes,
        } => {
            let s = natstudy_core::service::studies::id_by_name(&db, &study).await?;
            let b = batches::by_name(&db, s, &batch).await?;
            natstudy_core::service::batches::set_lease(&db, s, b, minutes, None).await?;
            println!("batch {batch}: leases of {minutes} minutes from now on");
        }
        BatchCommand::ReleaseIdle { study, minutes } => {
            let s = natstudy_core::service::studies::id_by_name(&db, &study).await?;
            let (holders, items) =
                natstudy_core::service::batches::release_idle(&db, s, minutes, None).await?;
            println!(
                "released {items} items held by {holders} participants idle for {minutes} minutes"
            );
        }
        BatchCommand::Move { study, from, to } => {
            let s = natstudy_core::service::studies::id_by_name(&db, &study).await?;
            let f = batches::annotator_by_code(&db, s, &from).await?;
            println!(
                "moved {} items",
                batches::move_unrated(&db, s, f, &to, None).await?
            );
        }
    }
    Ok(())
}

#[derive(Subcommand, Debug)]
pub enum InviteCommand {
    /// Create an invite link into a batch (a designed study's link needs none: its units go
    /// to all its participants), or with --review a review-only link whose participants review
    /// the study's patches; prints its path (/join/TOKEN)
    Create {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// The batch the link's participants rate, by its name (a naturalness study's link
        /// needs one; a designed study's none)
        #[arg(long, conflicts_with = "review")]
        batch: Option<String>,
        /// A review-only invite (patch review, no survey)
        #[arg(long)]
        review: bool,
        /// How many participants the link may create
        #[arg(long, default_value_t = 1)]
        cap: i64,
        /// A pilot link (also what every link is while the study is in its pilot phase): its
        /// participants' votes count nowhere but `export --pilot`
        #[arg(long, conflicts_with = "review")]
        pilot: bool,
    },
    /// List a study's invite links, newest first: path, what they join, places used of the
    /// cap, and whether each is open, full, closed, a pilot link
    List {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
    },
}

/// An invite link's line of `invite list`.
fn invite_line(i: &natstudy_types::InviteRow) -> String {
    let state = if i.closed {
        "closed"
    } else if i.full {
        "full (every item has its k ratings)"
    } else if i.used >= i.cap {
        "used up"
    } else {
        "open"
    };
    format!(
        "{}\t{}\t{}/{} used\t{state}{}",
        i.path,
        i.batch
            .as_deref()
            .map_or("review".to_owned(), |b| format!("batch {b}")),
        i.used,
        i.cap,
        if i.pilot {
            "\tpilot link: its participants count nowhere but export --pilot"
        } else {
            ""
        }
    )
}

pub async fn invite(g: &Global, cmd: InviteCommand) -> Result<()> {
    let db = g.db().await?;
    match cmd {
        InviteCommand::Create {
            study,
            batch,
            review,
            cap,
            pilot,
        } => {
            // the page's rules: each through the service the page calls
            use natstudy_core::service::invites;
            let s = natstudy_core::service::studies::id_by_name(&db, &study).await?;
            let path = match batch {
                Some(batch) if !review => {
                    let b = natstudy_core::service::batches::by_name(&db, s, &batch).await?;
                    if !invites::batch_has_room(&db, b).await? {
                        eprintln!("warning: every item of batch {batch} already has k ratings: the link will turn participants away until there is room");
                    }
                    if pilot {
                        invites::create_pilot(&db, s, b, cap, None).await?
                    } else {
                        invites::create(&db, s, b, cap, None).await?
                    }
                }
                // a designed study's link leads into its survey (its units go to everyone)
                None if !review => invites::create_for_design(&db, s, cap, pilot, None).await?,
                _ => invites::create_review(&db, s, cap, None).await?,
            };
            println!("{path}");
            // say what kind of link it is: a pilot link counts nowhere
            let m = natstudy_core::service::monitor::monitor(&db, s).await?;
            if let Some(i) = m.invites.iter().find(|i| i.path == path) {
                if i.pilot {
                    eprintln!("a pilot link (the study is in its pilot phase, or --pilot): its participants' ratings count nowhere but `export --pilot`");
                }
            }
        }
        InviteCommand::List { study } => {
            let s = natstudy_core::service::studies::id_by_name(&db, &study).await?;
            let m = natstudy_core::service::monitor::monitor(&db, s).await?;
            if m.invites.is_empty() {
                println!("no invite links (natstudy invite create makes one)");
            }
            for i in &m.invites {
                println!("{}", invite_line(i));
            }
        }
    }
    Ok(())
}

/// `natstudy gold`: marks gold/attention items with their expected judgement.
#[derive(Args, Debug)]
pub struct GoldArgs {
    /// The study, by its name (`natstudy study list` lists them)
    #[arg(long)]
    pub study: String,
    /// The item (transformation id)
    pub item: String,
    /// natural, unnatural, or none to clear
    pub expect: String,
}

pub async fn gold(g: &Global, a: GoldArgs) -> Result<()> {
    let db = g.db().await?;
    let s = natstudy_core::service::studies::id_by_name(&db, &a.study).await?;
    natstudy_core::service::monitor::set_gold(&db, s, &a.item, &a.expect).await?;
    println!("{}: gold {}", a.item, a.expect);
    Ok(())
}
