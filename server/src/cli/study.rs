//! `natstudy study …` and `natstudy participant …`: studies, their settings and members, and
//! excluding a participant.

use anyhow::{Context, Result};
use clap::{Args, Subcommand};

use super::Global;
use natstudy_core::service::Db;

#[derive(Subcommand, Debug)]
pub enum StudyCommand {
    /// Create a study
    Create {
        /// The study's name, unique (other commands name the study with it)
        name: String,
        /// A line on what the study is, shown on its page
        #[arg(long, default_value = "")]
        description: String,
        /// The account that owns the study (researchers see only their studies)
        #[arg(long)]
        owner: Option<String>,
        /// The study's design: a design file (TOML: its questions, see README "Designing a
        /// study"), or `naturalness`, the published study's (the default)
        #[arg(long)]
        design: Option<String>,
    },
    /// Print a study's design as a design file (TOML)
    Design {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
    },
    /// List studies with their counts
    List,
    /// Change a study's settings (those given; the rest stay): what the study page sets
    Set(Box<StudySet>),
    /// Print every setting of a study as JSON (the form `study set` and the page change)
    Show {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
    },
    /// Who may see and act on a study (admins may on every study)
    #[command(subcommand)]
    Member(MemberCommand),
    /// Delete the pilot's participants and their votes (`study set --pilot off` ends the phase)
    ClearPilot {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
    },
}

/// `natstudy study set`: each option given replaces that setting; `none` clears an optional
/// one.
#[derive(clap::Args, Debug)]
pub struct StudySet {
    /// The study, by its name (`natstudy study list` lists them)
    #[arg(long)]
    study: String,
    /// Ratings each item needs (k), 1–50
    #[arg(long)]
    ratings_per_item: Option<i64>,
    /// Ratings asked of each participant (N), or `none`: all they can be given
    #[arg(long)]
    items_per_participant: Option<String>,
    /// The completion code (`none`: no code)
    #[arg(long)]
    completion_code: Option<String>,
    /// Rated items a participant needs for the code when no more can come to them
    #[arg(long)]
    min_rated_for_code: Option<i64>,
    /// Where a finished participant is sent; `{code}` stands for their code (`none`: nowhere)
    #[arg(long)]
    completion_url: Option<String>,
    /// The code of a participant the screener turns away (`none`: no code)
    #[arg(long)]
    screenout_code: Option<String>,
    /// Where a participant the screener turns away is sent; `{code}` for the screen-out code
    #[arg(long)]
    screenout_url: Option<String>,
    /// The code of a participant who stops after waiting for items held by others
    #[arg(long)]
    partial_code: Option<String>,
    /// Minutes of such a wait before the partial code is offered (`none`: never)
    #[arg(long)]
    partial_after_minutes: Option<String>,
    /// Flag a participant whose median time on item is under this many seconds (`none`: no one)
    #[arg(long)]
    speeder_seconds: Option<String>,
    /// End a participant's survey with the screen-out code after this many attention (gold)
    /// items answered against their expected answer (`none`: never)
    #[arg(long)]
    gold_failures: Option<String>,
    /// The pilot phase: while on, the invite links made are pilot links, whose participants'
    /// votes count toward no k, no figure and no export but `export --pilot`
    #[arg(long, value_parser = ["on", "off"])]
    pilot: Option<String>,
    /// Hide the operator's name from participants (true or false)
    #[arg(long)]
    blind_operator: Option<bool>,
    /// Hide the bug's id from participants (true or false)
    #[arg(long)]
    blind_bug_id: Option<bool>,
    /// Show the original on a random side (true or false)
    #[arg(long)]
    randomise_sides: Option<bool>,
    /// The screener as JSON: `[{"name","label","options":[..],"screen_out":[..]}]`
    #[arg(long)]
    screener_json: Option<String>,
    /// A file whose text is the guideline (markdown)
    #[arg(long)]
    guideline_file: Option<std::path::PathBuf>,
    /// A file whose text is the consent text shown before the screener
    #[arg(long)]
    consent_file: Option<std::path::PathBuf>,
}

/// An optional number as `study set` takes it: a number, or `none` (or empty) for none.
fn optional_number(what: &str, value: &str) -> Result<Option<i64>> {
    let v = value.trim();
    if v.is_empty() || v.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    v.parse()
        .map(Some)
        .with_context(|| format!("--{what}: a number or `none`, not {value:?}"))
}

/// An optional text as `study set` takes it: `none` clears it.
fn optional_text(value: String) -> String {
    if value.trim().eq_ignore_ascii_case("none") {
        String::new()
    } else {
        value
    }
}

/// Applies `study set`'s options to the study's settings, checked and stored as the page's.
async fn study_set(db: &Db, set: StudySet) -> Result<()> {
    let id = natstudy_core::service::studies::id_by_name(db, &set.study).await?;
    let mut f = natstudy_core::service::studies::settings(db, id).await?;
    if let Some(k) = set.ratings_per_item {
        f.ratings_per_item = k;
    }
    if let Some(n) = &set.items_per_participant {
        f.items_per_participant = optional_number("items-per-participant", n)?;
    }
    if let Some(c) = set.completion_code {
        f.completion_code = optional_text(c);
    }
    if let Some(m) = set.min_rated_for_code {
        f.min_rated_for_code = m;
    }
    if let Some(u) = set.completion_url {
        f.completion_url = optional_text(u);
    }
    if let Some(c) = set.screenout_code {
        f.screenout_code = optional_text(c);
    }
    if let Some(u) = set.screenout_url {
        f.screenout_url = optional_text(u);
    }
    if let Some(c) = set.partial_code {
        f.partial_code = optional_text(c);
    }
    if let Some(m) = &set.partial_after_minutes {
        f.partial_after_minutes = optional_number("partial-after-minutes", m)?;
    }
    if let Some(s) = &set.speeder_seconds {
        f.speeder_seconds = optional_number("speeder-seconds", s)?;
    }
    if let Some(g) = &set.gold_failures {
        f.gold_failures = optional_number("gold-failures", g)?;
    }
    if let Some(p) = &set.pilot {
        f.pilot = p == "on";
    }
    if let Some(b) = set.blind_operator {
        f.blind_operator = b;
    }
    if let Some(b) = set.blind_bug_id {
        f.blind_bug_id = b;
    }
    if let Some(b) = set.randomise_sides {
        f.randomise_sides = b;
    }
    if let Some(j) = set.screener_json {
        f.screener_json = j;
    }
    let read = |p: &std::path::Path| {
        std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))
    };
    if let Some(p) = &set.guideline_file {
        f.guideline = read(p)?;
    }
    if let Some(p) = &set.consent_file {
        f.consent_text = read(p)?;
    }
    natstudy_core::service::studies::update_settings(db, id, None, &f).await?;
    println!("{}", serde_json::to_string_pretty(&f)?);
    Ok(())
}

#[derive(Subcommand, Debug)]
pub enum MemberCommand {
    /// Add an account to a study (or change its standing there)
    Add {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// The account's name
        user: String,
        /// owner or member
        #[arg(long, default_value = "member")]
        role: String,
    },
    /// Remove an account from a study
    Remove {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
        /// The account's name
        user: String,
    },
    /// List a study's members
    List {
        /// The study, by its name (`natstudy study list` lists them)
        #[arg(long)]
        study: String,
    },
}

pub async fn run(g: &Global, cmd: StudyCommand) -> Result<()> {
    let db = g.db().await?;
    match cmd {
        StudyCommand::Create {
            name,
            description,
            owner,
            design,
        } => {
            let owner = match owner {
                Some(o) => Some(natstudy_core::service::accounts::id_by_name(&db, &o).await?),
                None => None,
            };
            let id = match design {
                Some(given) => {
                    let d = natstudy_core::service::designs::read_design(&given)?;
                    natstudy_core::service::designs::create(
                        &db,
                        None,
                        owner,
                        &name,
                        &description,
                        &d,
                    )
                    .await?
                }
                None => {
                    natstudy_core::service::studies::create(&db, None, owner, &name, &description)
                        .await?
                }
            };
            println!("created study {name} (id {id})");
        }
        StudyCommand::Design { study } => {
            let id = natstudy_core::service::studies::id_by_name(&db, &study).await?;
            let d = natstudy_core::service::designs::of(&db, id).await?;
            print!("{}", d.to_toml());
        }
        StudyCommand::Member(cmd) => member(&db, cmd).await?,
        StudyCommand::ClearPilot { study } => {
            let id = natstudy_core::service::studies::id_by_name(&db, &study).await?;
            let (p, v) = natstudy_core::service::pilot::clear(&db, id, None).await?;
            println!("deleted {p} pilot participants and their {v} votes");
        }
        StudyCommand::Set(set) => study_set(&db, *set).await?,
        StudyCommand::Show { study } => {
            let id = natstudy_core::service::studies::id_by_name(&db, &study).await?;
            let f = natstudy_core::service::studies::settings(&db, id).await?;
            println!("{}", serde_json::to_string_pretty(&f)?);
        }
        StudyCommand::List => {
            for s in natstudy_core::service::studies::list_all(&db).await? {
                println!(
                    "{:<40} bugs {:>5}  items {:>6}  votes {:>7}  annotators {:>4}",
                    s.name, s.bugs, s.items, s.votes, s.annotators
                );
            }
        }
    }
    Ok(())
}

#[derive(Subcommand, Debug)]
pub enum ParticipantCommand {
    /// Leave the participant's votes out of k, every figure and every export (their items go
    /// back to the queue); kept with the reason in the audit log
    Exclude(ExclusionArgs),
    /// Count an excluded participant's votes again
    Include(ExclusionArgs),
}

#[derive(Args, Debug)]
pub struct ExclusionArgs {
    /// The study, by its name (`natstudy study list` lists them)
    #[arg(long)]
    pub study: String,
    /// The participant's code (the monitor's and the participants table's first column)
    pub code: String,
    /// Why (one line, kept with the change: who, when, why)
    #[arg(long)]
    pub reason: String,
}

pub async fn participant(g: &Global, cmd: ParticipantCommand) -> Result<()> {
    let db = g.db().await?;
    let (exclude, args) = match cmd {
        ParticipantCommand::Exclude(a) => (true, a),
        ParticipantCommand::Include(a) => (false, a),
    };
    let study = natstudy_core::service::studies::id_by_name(&db, &args.study).await?;
    let moved = natstudy_core::service::exclusions::set_by_code(
        &db,
        study,
        &args.code,
        exclude,
        &args.reason,
        None,
    )
    .await
    .with_context(|| format!("participant {} of study {}", args.code, args.study))?;
    let done = if exclude { "excluded" } else { "included" };
    match moved {
        Some(votes) => println!("participant {}: {done} ({votes} votes)", args.code),
        None => println!(
            "participant {} was already {done}: nothing changed",
            args.code
        ),
    }
    Ok(())
}

async fn member(db: &Db, cmd: MemberCommand) -> Result<()> {
    use natstudy_core::service::members;
    match cmd {
        MemberCommand::Add { study, user, role } => {
            let id = natstudy_core::service::studies::id_by_name(db, &study).await?;
            members::add(db, id, None, &user, &role).await?;
            println!("{user} is now {role} of {study}");
        }
        MemberCommand::Remove { study, user } => {
            let id = natstudy_core::service::studies::id_by_name(db, &study).await?;
            members::remove(db, id, None, &user).await?;
            println!("{user} removed from {study}");
        }
        MemberCommand::List { study } => {
            let id = natstudy_core::service::studies::id_by_name(db, &study).await?;
            for (name, role) in members::list(db, id).await? {
                println!("{name:<24} {role}");
            }
        }
    }
    Ok(())
}
