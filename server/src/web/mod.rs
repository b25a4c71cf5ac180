//! The HTTP server: Leptos pages and server functions on axum, sessions, guards, static files.

pub mod access;
pub mod assets;
pub mod download;
pub mod embedded;
pub mod fn_errors;
pub mod guard;
pub mod limits;
pub mod models;
pub mod sessions;

use crate::transport::connections;
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use axum::extract::FromRef;
use axum::http::{header, HeaderValue};
use axum::Router;
use leptos::prelude::*;
use leptos_axum::{generate_route_list, LeptosRoutes};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;
use tower_sessions::cookie::{time::Duration as CookieDuration, SameSite};
use tower_sessions::{Expiry, SessionManagerLayer};

use natstudy_core::service::Db;
use natstudy_types::backend::BackendHandle;

/// What the handlers share.
#[derive(Clone, FromRef)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub db: Db,
    pub backend: BackendHandle,
    pub models_dir: PathBuf,
    /// The largest upload (models, imports), in bytes.
    pub max_upload_bytes: usize,
    /// The most bytes of models one study may upload.
    pub model_quota_bytes: u64,
    /// Exports running at once, and how long a stalled client may hold one.
    pub exports: download::ExportLimits,
    pub reports: std::sync::Arc<natstudy_core::service::reports::ReportCache>,
}

/// How the web server is set up.
#[derive(Debug, Clone)]
pub struct WebConfig {
    pub addr: SocketAddr,
    /// The built site: `pkg/` (wasm, js, css) and public files.
    pub site_root: PathBuf,
    /// Mark cookies `Secure` (behind TLS).
    pub secure_cookies: bool,
    /// Sessions end after this long without a request.
    pub idle_timeout_secs: i64,
    /// Language models researchers pick or upload on the study page (shared storage when
    /// several instances serve one database).
    pub models_dir: PathBuf,
    /// Sessions end this long after sign-in or join, however active.
    pub session_max_secs: i64,
    /// The largest upload (a model, or the files of one import), in bytes.
    pub max_upload_bytes: usize,
    /// The largest body of any other request, in bytes.
    pub max_body_bytes: usize,
    /// The most bytes of models one study may upload (the models folder is shared).
    pub model_quota_bytes: u64,
    /// Sign-in throttling.
    pub login: natstudy_core::service::throttle::LoginLimits,
    /// Joins through invite links per client address.
    pub joins: natstudy_core::service::throttle::JoinLimits,
    /// Background jobs: how many at once, heartbeat, when a silent one counts as dead.
    pub jobs: natstudy_core::service::jobs::JobLimits,
    /// Export downloads: how many at once, how long a stalled client may hold one.
    pub exports: download::ExportLimits,
    /// A header that trusted reverse proxies append the client's address to (e.g.
    /// `x-forwarded-for`: the entry the outermost trusted proxy appended is taken, never one
    /// the client wrote). Unset: the peer address.
    pub client_ip_header: Option<limits::ClientIpHeader>,
    /// Results computed once per change of a study's data, shared by every viewer.
    pub reports: std::sync::Arc<natstudy_core::service::reports::ReportCache>,
    /// The JDK and class/source paths the study page's verification job compiles with (set by
    /// whoever runs the server: pages never name a path or a command).
    pub verify: natstudy_engine::verify::CompilerConfig,
    /// Open connections at most, and how long a client may hold one idle.
    pub connections: connections::ConnectionLimits,
    /// The host names requests may be addressed to (`Host`), beside IP literals and
    /// `localhost`, which are always accepted; `*` accepts any (see [`limits::HostPolicy`]).
    pub allowed_hosts: limits::HostPolicy,
}

impl WebConfig {
    pub fn new(addr: SocketAddr) -> WebConfig {
        WebConfig {
            addr,
            site_root: default_site_root(),
            secure_cookies: false,
            idle_timeout_secs: 8 * 3600,
            models_dir: PathBuf::from("natstudy-data/models"),
            session_max_secs: 7 * 24 * 3600,
            max_upload_bytes: 256 << 20,
            max_body_bytes: 1 << 20,
            model_quota_bytes: 1 << 30,
            login: Default::default(),
            joins: Default::default(),
            jobs: Default::default(),
            exports: Default::default(),
            client_ip_header: None,
            reports: Default::default(),
            verify: Default::default(),
            connections: Default::default(),
            allowed_hosts: Default::default(),
        }
    }
}

/// `./target/site` when run from the workspace, else the one next to the sources of this build.
pub fn default_site_root() -> PathBuf {
    let here = PathBuf::from("target/site");
    if here.join("pkg").is_dir() {
        return here;
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/site"))
}

/// The whole application as an axum router.
pub async fn router(db: Db, config: &WebConfig) -> anyhow::Result<Router> {
    let assets = assets::Assets::load(&config.site_root);
    // pages a stale site cannot hydrate are refused here, at start, not met in a browser
    assets.check_build(app::BUILD_ID)?;
    let leptos_options = LeptosOptions::builder()
        // the hashed name of the js/wasm pair (see `assets`)
        .output_name(assets.output_name.clone())
        .site_root(config.site_root.to_string_lossy().to_string())
        .site_pkg_dir("pkg")
        .site_addr(config.addr)
        .build();
    let key = sessions::cookie_key(&db).await?;
    let backend = natstudy_core::api::Core::handle(
        db.clone(),
        &natstudy_core::api::BackendConfig {
            devices: natstudy_core::service::devices::DeviceKey::derive(key.master()),
            secure_cookies: config.secure_cookies,
            models_dir: config.models_dir.clone(),
            session: natstudy_types::backend::SessionPolicy {
                max_age_secs: config.session_max_secs,
                idle_secs: config.idle_timeout_secs,
            },
            login: config.login,
            joins: config.joins,
            jobs: config.jobs,
            reports: config.reports.clone(),
            verify: config.verify.clone(),
            // a zip's sources may hold more than the upload: text compresses about fourfold
            max_zip_content: (config.max_upload_bytes as u64).saturating_mul(4),
            model_quota: config.model_quota_bytes,
        },
    );
    let state = AppState {
        leptos_options: leptos_options.clone(),
        db: db.clone(),
        backend: backend.clone(),
        models_dir: config.models_dir.clone(),
        max_upload_bytes: config.max_upload_bytes,
        model_quota_bytes: config.model_quota_bytes,
        exports: config.exports.clone(),
        reports: config.reports.clone(),
    };

    let store = sessions::DbSessionStore::open(&db).await?;
    spawn_expired_session_cleanup(store.clone());
    let session_layer = SessionManagerLayer::new(store)
        .with_name("natstudy.sid")
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(config.secure_cookies)
        .with_expiry(Expiry::OnInactivity(CookieDuration::seconds(
            config.idle_timeout_secs,
        )))
        .with_signed(key);

    let routes = route_list();
    let ctx_backend = backend.clone();
    let stylesheet = app::StylesheetHref(assets.stylesheet.clone());
    let participant = assets.participant.clone().map(app::ParticipantBundle);
    let context = move || {
        provide_context(ctx_backend.clone());
        provide_context(stylesheet.clone());
        if let Some(p) = &participant {
            provide_context(p.clone());
        }
        limits::provide_request_nonce();
    };
    let app = Router::new()
        // browsers ask for it whatever the page links: the site's icon is an SVG
        .route(
            "/favicon.ico",
            axum::routing::get(|| async { axum::response::Redirect::permanent("/favicon.svg") }),
        )
        .route(
            "/pkg/{file}",
            axum::routing::get({
                let assets = assets.clone();
                move |file, req| assets::pkg(assets.clone(), file, req)
            }),
        )
        .route(
            "/studies/{id}/export/{what}",
            axum::routing::get(download::export),
        )
        .route(
            "/studies/{id}/charts/{file}",
            axum::routing::get(download::chart),
        )
        .route(
            "/studies/{id}/tables/{file}",
            axum::routing::get(download::table),
        )
        .route(
            "/studies/{id}/paper.zip",
            axum::routing::get(download::paper_zip),
        )
        .route(
            "/studies/{id}/models",
            axum::routing::post(models::upload).layer(axum::extract::DefaultBodyLimit::max(
                config.max_upload_bytes,
            )),
        )
        .leptos_routes_with_context(&state, routes, context.clone(), {
            let options = leptos_options.clone();
            move || app::shell(options.clone())
        })
        .fallback(leptos_axum::file_and_error_handler_with_context::<
            AppState,
            _,
        >(context, app::shell))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::pages,
        ))
        .layer(axum::middleware::from_fn(
            fn_errors::arguments_are_client_errors,
        ))
        .layer(axum::middleware::from_fn_with_state(
            config.secure_cookies,
            guard::same_origin,
        ))
        .layer(session_layer)
        // axum's own 2 MiB default would cut imports below --max-upload-mb: the limits are
        // body_limit's, per route
        .layer(axum::extract::DefaultBodyLimit::disable())
        .layer(axum::middleware::from_fn_with_state(
            limits::BodyLimits {
                upload: config.max_upload_bytes,
                other: config.max_body_bytes,
            },
            limits::body_limit,
        ))
        .layer(axum::middleware::from_fn_with_state(
            config.client_ip_header.clone(),
            limits::client_ip,
        ))
        .layer(axum::middleware::from_fn(limits::content_security_policy))
        .layer(axum::middleware::from_fn_with_state(
            std::sync::Arc::new(config.allowed_hosts.clone()),
            limits::known_host,
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::REFERRER_POLICY,
            HeaderValue::from_static("same-origin"),
        ))
        // pages and answers are never stored by the browser; the build outputs say otherwise
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-store"),
        ))
        .layer(
            tower_http::compression::CompressionLayer::new()
                .quality(tower_http::CompressionLevel::Precise(5)),
        )
        .layer(TraceLayer::new_for_http())
        .with_state(state);
    Ok(app)
}

/// The app's routes, generated once per process. Generating them runs the app with every
/// resource's loading suppressed by a process-wide flag (`leptos_server`'s
/// `SuppressResourceLoad`, leptos issue 4773): a resource that another server of the process
/// first polls meanwhile waits forever, and its page never ends. Tests start many servers in
/// one process, and a page whose resource was polled while another test's server started hung
/// until the client gave up (`tests/tests/http.rs`
/// `starting_a_server_never_stalls_another_servers_pages`).
fn route_list() -> Vec<leptos_axum::AxumRouteListing> {
    static ROUTES: std::sync::OnceLock<Vec<leptos_axum::AxumRouteListing>> =
        std::sync::OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(app::App)).clone()
}

/// Deletes expired sessions every ten minutes, for as long as the server runs; a failed round
/// is logged and the next one tries again.
fn spawn_expired_session_cleanup(store: sessions::DbSessionStore) {
    use tower_sessions::session_store::ExpiredDeletion;
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(600));
        loop {
            every.tick().await;
            if let Err(e) = store.delete_expired().await {
                tracing::warn!(error = %e, "expired sessions not deleted this round");
            }
        }
    });
}

/// Connections waiting to be accepted: a burst of participants (an invite posted to a crowd
/// platform) must not overflow the queue — a dropped connection attempt is retried by the
/// client only after a second.
const BACKLOG: u32 = 1024;

fn listen(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// Serves until ctrl-c, within the configuration's connection limits ([`connections`]).
/// `on_ready` gets the bound address (port 0 picks a free one).
pub async fn serve(
    db: Db,
    config: WebConfig,
    on_ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    if !config.site_root.join("pkg").is_dir() {
        tracing::warn!(site_root = %config.site_root.display(), "no built site (pkg/) here: pages will not hydrate; run scripts/build-site");
    }
    let listener =
        listen(config.addr).with_context(|| format!("cannot listen on {}", config.addr))?;
    let addr = listener.local_addr()?;
    let limits = connections::ConnectionLimits {
        max: connections::fit_to_descriptors(config.connections.max),
        // behind a reverse proxy every connection comes from the proxy
        per_client: match config.client_ip_header {
            Some(_) => 0,
            None => config.connections.per_client,
        },
        ..config.connections.clone()
    };
    let app = router(db, &WebConfig { addr, ..config }).await?;
    on_ready(addr);
    connections::serve(listener, app, limits, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await;
    Ok(())
}
