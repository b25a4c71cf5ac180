//! `natstudy user …`: accounts.

use std::io::{IsTerminal, Read};

use anyhow::{bail, Result};
use clap::Subcommand;

use super::Global;
use natstudy_types::Role;

#[derive(Subcommand, Debug)]
pub enum UserCommand {
    /// Add an account; the password comes from a prompt, or from standard input when piped
    Add {
        /// admin, researcher or annotator
        #[arg(long, value_parser = parse_role)]
        role: Role,
        /// The account's name, with which it signs in
        name: String,
    },
    /// Set an account's password (prompt or standard input); its sessions end
    Passwd {
        /// The account's name
        name: String,
    },
    /// Disable an account: it can no longer sign in and its sessions end
    Disable {
        /// The account's name
        name: String,
    },
    /// Enable a disabled account again
    Enable {
        /// The account's name
        name: String,
    },
    /// List accounts
    List,
}

fn parse_role(s: &str) -> Result<Role, String> {
    Role::parse(s).ok_or_else(|| format!("unknown role {s:?} (admin, researcher or annotator)"))
}

/// A password from standard input when piped, else from a hidden prompt (asked twice).
fn read_password() -> Result<String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        let first = rpassword::prompt_password("Password: ")?;
        let second = rpassword::prompt_password("Repeat password: ")?;
        if first != second {
            bail!("the passwords differ");
        }
        Ok(first)
    } else {
        let mut s = String::new();
        stdin.lock().read_to_string(&mut s)?;
        let line = s.lines().next().unwrap_or("").to_owned();
        Ok(line)
    }
}

pub async fn run(g: &Global, cmd: UserCommand) -> Result<()> {
    let db = g.db().await?;
    match cmd {
        UserCommand::Add { role, name } => {
            let password = read_password()?;
            let id = natstudy_core::service::accounts::add_user(&db, None, &name, &password, role)
                .await
                .map_err(|e| anyhow::anyhow!("cannot add user {name}: {e}"))?;
            println!("added {role} {name} (id {id})");
        }
        UserCommand::Passwd { name } => {
            let password = read_password()?;
            natstudy_core::service::accounts::set_password(&db, None, &name, &password)
                .await
                .map_err(|e| anyhow::anyhow!("cannot set the password of {name}: {e}"))?;
            println!("password of {name} changed; its sessions have ended");
        }
        UserCommand::Disable { name } => {
            natstudy_core::service::accounts::set_disabled(&db, None, &name, true)
                .await
                .map_err(|e| anyhow::anyhow!("cannot disable {name}: {e}"))?;
            println!("disabled {name}; its sessions have ended");
        }
        UserCommand::Enable { name } => {
            natstudy_core::service::accounts::set_disabled(&db, None, &name, false)
                .await
                .map_err(|e| anyhow::anyhow!("cannot enable {name}: {e}"))?;
            println!("enabled {name}");
        }
        UserCommand::List => {
            for u in natstudy_core::service::accounts::list(&db).await? {
                println!(
                    "{:<24} {:<10} {}",
                    u.username,
                    u.role,
                    if u.disabled { "disabled" } else { "active" }
                );
            }
        }
    }
    Ok(())
}
