//! The `natstudy` command line.

mod batch;
mod bench;
mod export;
mod import;
pub(crate) mod lm;
mod report;
mod review;
mod study;
mod transform;
mod user;
mod verify;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};

use natstudy_core::service::Db;

#[derive(Parser, Debug)]
#[command(
    name = "natstudy",
    version,
    about = "Human studies of the naturalness of code transformations"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Clone)]
pub struct Global {
    /// Directory of the embedded SQLite database (natstudy.db)
    #[arg(
        long,
        global = true,
        default_value = "./natstudy-data",
        env = "NATSTUDY_DATA_DIR"
    )]
    pub data_dir: PathBuf,
    /// Database URL (sqlite://… or postgres://…); overrides --data-dir for every command
    #[arg(
        long,
        global = true,
        env = "NATSTUDY_DATABASE_URL",
        hide_env_values = true
    )]
    pub database_url: Option<String>,
    /// Nice steps the runtime's threads (requests, background work) run below the process,
    /// which keeps the database's write path at its priority (Linux); 0 runs them equal
    #[arg(
        long,
        global = true,
        default_value_t = natstudy_core::priority::REQUEST_NICE,
        value_parser = clap::value_parser!(i32).range(0..=19),
        env = "NATSTUDY_REQUEST_NICE"
    )]
    pub request_nice: i32,
}

impl Global {
    pub async fn db(&self) -> Result<Db> {
        let url = match &self.database_url {
            Some(u) => u.clone(),
            None => Db::sqlite_url_in(&self.data_dir)?,
        };
        Db::connect(&url).await
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the web application
    Serve(ServeArgs),
    /// Manage accounts
    #[command(subcommand)]
    User(user::UserCommand),
    /// Manage studies
    #[command(subcommand)]
    Study(study::StudyCommand),
    /// Import items, votes, repair results or cross-entropy scores into a study
    #[command(subcommand)]
    Import(import::ImportCommand),
    /// Build and steer annotation batches
    #[command(subcommand)]
    Batch(batch::BatchCommand),
    /// Train the n-gram language model and score studies with it
    #[command(subcommand)]
    Lm(lm::LmCommand),
    /// Export the labelled dataset, votes, matrix, survey.json or items
    Export(export::ExportArgs),
    /// Benchmarks (figures for the issue notes)
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Mark a gold/attention item with its expected judgement
    Gold(batch::GoldArgs),
    /// Exclude a participant from the analysis, or include them again, with a reason
    #[command(subcommand)]
    Participant(study::ParticipantCommand),
    /// Invite links for anonymous participants
    #[command(subcommand)]
    Invite(batch::InviteCommand),
    /// The study's results: tables, or report.json with --json / --out
    Report(report::ReportArgs),
    /// Patch review: build the tasks, list them, rule on disagreements
    #[command(subcommand)]
    Review(review::ReviewCommand),
    /// Generate transformations of bugs (transformations.jsonl) with the built-in engine
    Transform(transform::TransformArgs),
    /// Compile every item in its file with javac (and run a test command): stored per item
    Verify(verify::VerifyArgs),
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on
    #[arg(long, default_value = "127.0.0.1:3000", env = "NATSTUDY_ADDR")]
    pub addr: SocketAddr,
    /// Create the demo study and one account per role (if missing) and print the logins
    #[arg(long)]
    pub demo: bool,
    /// The built site (pkg/ and public files); default ./target/site, else the site a release
    /// binary carries (written once into the data folder), else the checkout's
    #[arg(long, env = "NATSTUDY_SITE_ROOT")]
    pub site_root: Option<PathBuf>,
    /// Mark session cookies Secure (when served over HTTPS)
    #[arg(long)]
    pub secure_cookies: bool,
    /// Sign out after this many minutes without a request
    #[arg(long, default_value_t = 480)]
    pub idle_minutes: i64,
    /// End every session this many hours after sign-in or join, however active
    #[arg(long, default_value_t = 168)]
    pub session_max_hours: i64,
    /// The largest upload (a model, or the files of one import), in MiB
    #[arg(long, default_value_t = 256)]
    pub max_upload_mb: usize,
    /// The largest body of any other request, in KiB
    #[arg(long, default_value_t = 1024)]
    pub max_body_kb: usize,
    /// The most MiB of models one study may upload (the models folder is shared); staff
    /// delete their study's models on its page
    #[arg(long, default_value_t = 1024)]
    pub model_quota_mb: u64,
    /// Background jobs (scoring, verification, generator previews) running at once on this
    /// instance; more wait in a queue. One study holds at most all but one of them, so with 2
    /// or more another study's work always finds a slot
    #[arg(long, default_value_t = 1)]
    pub max_jobs: usize,
    /// Export downloads running at once on this instance
    #[arg(long, default_value_t = 2)]
    pub max_exports: usize,
    /// Connections open at once (more wait to be accepted); lowered to what the open-files
    /// limit holds
    #[arg(long, default_value_t = crate::transport::connections::ConnectionLimits::default().max)]
    pub max_connections: usize,
    /// Connections open at once from one client address (an IPv6 /64); one more is answered
    /// 503 (0: no limit; off with --client-ip-header, where every connection is the proxy's)
    #[arg(long, default_value_t = crate::transport::connections::ConnectionLimits::default().per_client)]
    pub max_connections_per_client: usize,
    /// Header that trusted reverse proxies append the client's address to (e.g.
    /// x-forwarded-for, as nginx's $proxy_add_x_forwarded_for and Caddy do); the entry the
    /// outermost trusted proxy appended is the client's (see --trusted-proxies). Without it,
    /// the peer address is the client's (sign-in and join throttling)
    #[arg(long)]
    pub client_ip_header: Option<String>,
    /// Host names this server is reached by (comma-separated; e.g. study.example.org):
    /// requests naming another host are refused (421), which keeps a page of another site
    /// whose name points at this machine (DNS rebinding) away. IP addresses and localhost are
    /// always accepted; `*` accepts any name
    #[arg(long, env = "NATSTUDY_ALLOWED_HOSTS", default_value = "")]
    pub allowed_hosts: String,
    /// With --client-ip-header: how many trusted proxies in front of natstudy append to the
    /// header; the client is that many entries from its right end (1: the right-most, what a
    /// single nginx or Caddy appended). Entries further left are the client's own words
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=16))]
    pub trusted_proxies: u16,
    /// Joins through invite links one client address may make at once; then one every two
    /// seconds (0: no limit, for a load test whose participants share one address)
    #[arg(long, default_value_t = natstudy_core::service::throttle::JoinLimits::default().per_ip_burst)]
    pub join_burst: u32,
    /// With --demo: allow an address other than loopback (the demo's passwords are public)
    #[arg(long)]
    pub public_demo: bool,
    /// The `java` of the JDK the study page's verification job compiles with
    #[arg(long, default_value = "java", env = "NATSTUDY_JAVA")]
    pub java: PathBuf,
    /// The classpath that verification job compiles against (the projects' classes and jars)
    #[arg(long, env = "NATSTUDY_VERIFY_CLASSPATH")]
    pub verify_classpath: Option<String>,
}

/// Runs the command line; errors go to stderr with exit code 1.
pub fn main() -> ExitCode {
    quiet_on_broken_pipe();
    let cli = Cli::parse();
    init_tracing(matches!(cli.command, Command::Serve(_)));
    // neural models on the CPU score batches side by side, a thread each: candle's own pool for
    // elementwise work would only make those threads queue on its lock (read by candle from the
    // environment, set here while this is the only thread)
    std::env::set_var("CANDLE_NUM_THREADS", "1");
    // the runtime's threads below the main thread, which opens the database's write
    // connection, and below the threads the spawner starts (see `priority`)
    natstudy_core::priority::set_request_nice(cli.global.request_nice);
    natstudy_core::priority::keep_base_spawner();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_start(natstudy_core::priority::lower_current_thread)
        .build();
    let runtime = match runtime {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        // `natstudy … | head`: the reader has what it wanted
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Whether an error is a write to a closed pipe (the reader of our output went away).
/// (A service's internal error is looked into: its transparent wrapper hides the io error
/// from the chain.)
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    fn broken(c: &(dyn std::error::Error + 'static)) -> bool {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    }
    e.chain().any(|c| {
        broken(c)
            || matches!(
                c.downcast_ref::<natstudy_core::service::ServiceError>(),
                Some(natstudy_core::service::ServiceError::Internal(inner)) if inner.chain().any(broken)
            )
    })
}

/// `natstudy review list | head`: Rust ignores SIGPIPE, so `println!` to a pipe whose reader
/// left panics. A command whose reader went away ends quietly instead (exit 0, nothing on
/// stderr); every other panic is reported as before.
fn quiet_on_broken_pipe() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info.payload_as_str().unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        report(info)
    }));
}

fn init_tracing(server: bool) {
    use tracing_subscriber::EnvFilter;
    let default = if server {
        "info,tower_http=info,sqlx=warn"
    } else {
        "warn"
    };
    let filter =
        EnvFilter::try_from_env("NATSTUDY_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Runs the command line from arguments (the first is the program name), as `main` would.
pub async fn run_from<I, T>(args: I) -> Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    run(Cli::try_parse_from(args)?).await
}

pub async fn run(cli: Cli) -> Result<()> {
    let g = cli.global;
    match cli.command {
        Command::Serve(args) => serve(&g, args).await,
        Command::User(cmd) => user::run(&g, cmd).await,
        Command::Study(cmd) => study::run(&g, cmd).await,
        Command::Participant(cmd) => study::participant(&g, cmd).await,
        Command::Import(cmd) => import::run(&g, cmd).await,
        Command::Report(args) => report::run(&g, args).await,
        Command::Review(cmd) => review::run(&g, cmd).await,
        Command::Batch(cmd) => batch::run(&g, cmd).await,
        Command::Invite(cmd) => batch::invite(&g, cmd).await,
        Command::Gold(args) => batch::gold(&g, args).await,
        Command::Bench(cmd) => bench::run(&g, cmd).await,
        Command::Export(args) => export::run(&g, args).await,
        Command::Lm(cmd) => lm::run(&g, cmd).await,
        Command::Transform(args) => transform::run(args).await,
        Command::Verify(args) => verify::run(&g, args).await,
    }
}

async fn serve(g: &Global, args: ServeArgs) -> Result<()> {
    if args.demo && !args.addr.ip().is_loopback() && !args.public_demo {
        bail!(
            "--demo listens on loopback only (its passwords are published): use --addr 127.0.0.1:PORT, \
             or add --public-demo to expose it on {} anyway",
            args.addr
        );
    }
    let db = g.db().await?;
    if args.demo {
        natstudy_core::demo::check_data_is_demo(&db).await?;
    }
    let demo_link = if args.demo {
        Some(
            natstudy_core::demo::ensure(&db)
                .await
                .context("cannot set up the demo")?,
        )
    } else {
        None
    };
    let mut config = crate::web::WebConfig::new(args.addr);
    match args.site_root {
        Some(root) => config.site_root = root,
        // a release binary away from its checkout serves the site built into it
        None if !std::path::Path::new("target/site/pkg").is_dir()
            && crate::web::embedded::present() =>
        {
            config.site_root = crate::web::embedded::unpack(&g.data_dir)
                .context("cannot write the site this binary carries")?;
            tracing::info!(site_root = %config.site_root.display(), "serving the site built into this binary");
        }
        None => {}
    }
    config.secure_cookies = args.secure_cookies;
    config.idle_timeout_secs = args.idle_minutes.max(1) * 60;
    config.session_max_secs = args.session_max_hours.max(1) * 3600;
    config.max_upload_bytes = args.max_upload_mb.max(1) << 20;
    config.max_body_bytes = args.max_body_kb.max(16) << 10;
    config.model_quota_bytes = args.model_quota_mb.max(1) << 20;
    config.jobs.concurrent = args.max_jobs.max(1);
    config.exports =
        crate::web::download::ExportLimits::new(args.max_exports.max(1), config.exports.stall);
    config.connections.max = args.max_connections.max(1);
    config.connections.per_client = args.max_connections_per_client;
    config.client_ip_header = args
        .client_ip_header
        .map(|h| crate::web::limits::ClientIpHeader::new(&h, usize::from(args.trusted_proxies)));
    config.joins.per_ip_burst = args.join_burst;
    if args.join_burst == 0 {
        // no join limit (a load test from one address): no limit of unanswered joins either
        config.joins.unanswered = 0;
    }
    config.allowed_hosts = crate::web::limits::HostPolicy::parse(&args.allowed_hosts);
    config.verify = natstudy_engine::verify::CompilerConfig {
        java: args.java,
        classpath: args.verify_classpath,
        ..Default::default()
    };
    config.models_dir = g.data_dir.join("models");
    let demo = args.demo;
    crate::web::serve(db, config, move |addr| {
        println!("natstudy listening on http://{addr}");
        if demo {
            println!("demo study: {}", natstudy_core::demo::STUDY);
            if let Some(link) = &demo_link {
                println!("anonymous participant link: http://{addr}{link}");
            }
            println!("sign in as (username / password):");
            for (name, password, role) in natstudy_core::demo::ACCOUNTS {
                println!("  {name:<11} / {password:<21} ({role})");
            }
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every command says what it does, and every option and argument what it takes: `--help`
    /// is the CLI's manual.
    #[test]
    fn every_command_and_argument_says_what_it_is() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for a in cmd.get_arguments() {
                let id = a.get_id().as_str();
                if a.is_hide_set() || id == "help" || id == "version" {
                    continue;
                }
                if a.get_help().is_none() && a.get_long_help().is_none() {
                    missing.push(format!("{path}: {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                let path = format!("{path} {}", sub.get_name());
                if sub.get_about().is_none() && sub.get_long_about().is_none() {
                    missing.push(format!("{path}: what it does"));
                }
                walk(sub, &path, missing);
            }
        }
        let mut missing = Vec::new();
        walk(&super::Cli::command(), "natstudy", &mut missing);
        assert!(missing.is_empty(), "no help: {missing:#?}");
    }
}
