//! What every request passes through before it reaches a handler: an explicit body limit
//! (uploads get their own, larger one), the client's address for throttling, and a
//! Content-Security-Policy whose script nonce the Leptos hydration scripts carry.

use std::net::{IpAddr, SocketAddr};

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Body limits in bytes.
#[derive(Debug, Clone, Copy)]
pub struct BodyLimits {
    /// Model uploads and imports.
    pub upload: usize,
    /// Every other request.
    pub other: usize,
}

/// Paths that take uploads.
pub fn is_upload(path: &str) -> bool {
    path == "/api/studies/import" || (path.starts_with("/studies/") && path.ends_with("/models"))
}

/// Refuses a declared body over the limit with 413 at once, and cuts an undeclared (chunked)
/// one at the limit, so no request makes the server hold more than the limit.
pub async fn body_limit(State(limits): State<BodyLimits>, req: Request, next: Next) -> Response {
    let limit = if is_upload(req.uri().path()) {
        limits.upload
    } else {
        limits.other
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(size) = declared.filter(|&n| n > limit as u64) {
        let words = too_large(size, limit);
        // a server function's caller reads its error in the server functions' encoding
        let body = if req.uri().path().starts_with("/api/") {
            format!("ServerError|{words}")
        } else {
            words
        };
        return (StatusCode::PAYLOAD_TOO_LARGE, body).into_response();
    }
    let (parts, body) = req.into_parts();
    let body = Body::new(http_body_util::Limited::new(body, limit));
    next.run(Request::from_parts(parts, body)).await
}

/// What a request over the body limit is told: its size and the limit in MB, and what to do.
pub fn too_large(size: u64, limit: usize) -> String {
    let mb = |n: u64| format!("{:.1} MB", n as f64 / 1e6);
    let (this, most) = match (mb(size), mb(limit as u64)) {
        // sizes that read alike in MB are told in bytes
        (a, b) if a == b => (format!("{size} bytes"), format!("{limit} bytes")),
        pair => pair,
    };
    format!(
        "This is {this} and the limit here is {most}: send a smaller file, or import a large \
         one with the natstudy command line (natstudy import …)."
    )
}

/// Which `Host` a request may name. A page of another site whose name an attacker points at
/// 127.0.0.1 (DNS rebinding) reaches a loopback server with its own name in `Host`; refusing
/// names the operator did not give closes that door. IP literals and `localhost` are always
/// accepted (rebinding needs a name); `*` among the names accepts any host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostPolicy {
    /// Host names, lower case, without port.
    pub names: Vec<String>,
}

impl HostPolicy {
    /// From `--allowed-hosts` (comma-separated names; ports and case ignored).
    pub fn parse(list: &str) -> HostPolicy {
        HostPolicy {
            names: list
                .split(',')
                .map(|n| n.trim().trim_end_matches('.').to_ascii_lowercase())
                .filter(|n| !n.is_empty())
                .collect(),
        }
    }

    /// Whether a request addressed to `host` (a `Host` header's value: name or address, with
    /// or without port) is served.
    pub fn allows(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        // "[::1]:3000", "127.0.0.1:3000", "example.org:443", "example.org"
        let name = if let Some(rest) = host.strip_prefix('[') {
            rest.split(']').next().unwrap_or("")
        } else {
            match host.rsplit_once(':') {
                Some((n, port)) if port.bytes().all(|b| b.is_ascii_digit()) => n,
                _ => host.as_str(),
            }
        };
        let name = name.trim_end_matches('.');
        name.parse::<IpAddr>().is_ok()
            || name == "localhost"
            || self.names.iter().any(|n| n == "*" || n == name)
    }
}

/// Refuses a request whose `Host` (or, for HTTP/2, authority) the [`HostPolicy`] does not
/// accept, with 421 Misdirected Request; a request that names no host at all is refused too,
/// and one with two `Host` headers with 400 (RFC 9112 §3.2: a proxy in front may route by the
/// other one than this server would read).
pub async fn known_host(
    State(policy): State<std::sync::Arc<HostPolicy>>,
    req: Request,
    next: Next,
) -> Response {
    let mut hosts = req.headers().get_all(axum::http::header::HOST).iter();
    let first = hosts.next();
    if hosts.next().is_some() {
        return (
            StatusCode::BAD_REQUEST,
            "two Host headers: a request names one host",
        )
            .into_response();
    }
    let host = first
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| req.uri().authority().map(|a| a.to_string()));
    match host {
        Some(h) if policy.allows(&h) => next.run(req).await,
        _ => (
            StatusCode::MISDIRECTED_REQUEST,
            "unknown host: this server answers only the names it was given (--allowed-hosts)",
        )
            .into_response(),
    }
}

/// Where the client's address comes from behind reverse proxies: a header they append to
/// (`x-forwarded-for`), and how many of them append to it. The client writes whatever it likes
/// at the header's left end, so only the entries the trusted proxies appended count: the
/// `trusted_proxies`-th from the right is the address the outermost trusted proxy saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientIpHeader {
    /// The header's name, lower case.
    pub name: String,
    /// Trusted proxies in front of natstudy that append to the header (at least 1).
    pub trusted_proxies: usize,
}

impl ClientIpHeader {
    pub fn new(name: &str, trusted_proxies: usize) -> ClientIpHeader {
        ClientIpHeader {
            name: name.to_ascii_lowercase(),
            trusted_proxies: trusted_proxies.max(1),
        }
    }

    /// The client's address from the header's values (every occurrence, in order, as one
    /// comma-separated list): the `trusted_proxies`-th entry from the right. `None` when the
    /// list is shorter (the request did not come through every proxy) or that entry is not an
    /// address (`1.2.3.4`, `2001:db8::1`, `[2001:db8::1]:443` and `1.2.3.4:80` are).
    pub fn client<'a>(&self, values: impl IntoIterator<Item = &'a str>) -> Option<IpAddr> {
        let entries: Vec<&str> = values
            .into_iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect();
        let entry = entries
            .len()
            .checked_sub(self.trusted_proxies)
            .map(|i| entries[i])?;
        entry
            .parse::<IpAddr>()
            .ok()
            .or_else(|| entry.parse::<SocketAddr>().ok().map(|s| s.ip()))
    }
}

/// Puts the client's address into the request (`app::auth::ClientIp`): the peer, or, behind
/// trusted proxies, the address they appended to their header ([`ClientIpHeader::client`];
/// the peer when the header does not have it).
pub async fn client_ip(
    State(header): State<Option<ClientIpHeader>>,
    mut req: Request,
    next: Next,
) -> Response {
    let from_header = header.as_ref().and_then(|h| {
        h.client(
            req.headers()
                .get_all(h.name.as_str())
                .iter()
                .filter_map(|v| v.to_str().ok()),
        )
    });
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    req.extensions_mut()
        .insert(app::auth::ClientIp(from_header.or(peer)));
    next.run(req).await
}

/// The script nonce of one response.
#[derive(Debug, Clone)]
pub struct CspNonce(pub String);

/// Sets a strict Content-Security-Policy: scripts only from this site or inline with this
/// response's nonce (the hydration scripts), wasm allowed, no plugins, no framing, forms and
/// connections to this site only. Styles allow inline attributes (the pages set widths).
pub async fn content_security_policy(mut req: Request, next: Next) -> Response {
    use rand::RngCore;
    let mut b = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut b);
    let nonce: String = b.iter().map(|x| format!("{x:02x}")).collect();
    req.extensions_mut().insert(CspNonce(nonce.clone()));
    let mut resp = next.run(req).await;
    let policy = format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; \
         connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; \
         form-action 'self'"
    );
    if let Ok(v) = HeaderValue::from_str(&policy) {
        resp.headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, v);
    }
    resp
}

/// In a Leptos render: makes the response's CSP nonce the one the hydration scripts carry.
pub fn provide_request_nonce() {
    use leptos::prelude::{provide_context, use_context};
    let nonce = use_context::<axum::http::request::Parts>()
        .and_then(|p| p.extensions.get::<CspNonce>().map(|n| n.0.clone()));
    if let Some(n) = nonce {
        provide_context(leptos::nonce::Nonce::from_value(n));
    }
}

#[cfg(test)]
mod tests {
    use super::{is_upload, ClientIpHeader, HostPolicy};

    #[test]
    fn a_size_over_the_limit_is_told_in_mb_or_bytes() {
        assert!(super::too_large(5_200_000, 1 << 20)
            .starts_with("This is 5.2 MB and the limit here is 1.0 MB: send a smaller file"));
        assert!(super::too_large(1_048_577, 1 << 20)
            .starts_with("This is 1048577 bytes and the limit here is 1048576 bytes"));
    }

    #[test]
    fn hosts_are_addresses_localhost_or_given_names() {
        let none = HostPolicy::default();
        for ok in [
            "127.0.0.1:3000",
            "[::1]:3000",
            "localhost:3000",
            "LOCALHOST",
            "10.0.0.5",
        ] {
            assert!(none.allows(ok), "{ok}");
        }
        for refused in [
            "attacker.example:3000",
            "rebind.evil.test",
            "",
            "localhost.evil.test",
        ] {
            assert!(!none.allows(refused), "{refused}");
        }
        let given = HostPolicy::parse("study.example.org, Other.Example.");
        assert!(given.allows("study.example.org"));
        assert!(given.allows("study.example.org:443"));
        assert!(given.allows("other.example"));
        assert!(!given.allows("example.org"));
        assert!(HostPolicy::parse("*").allows("anything.test"));
    }
    use std::net::IpAddr;

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().expect("address"))
    }

    #[test]
    fn the_client_is_what_the_trusted_proxies_appended() {
        let one = ClientIpHeader::new("X-Forwarded-For", 1);
        assert_eq!(one.name, "x-forwarded-for");
        // nginx's $proxy_add_x_forwarded_for: the client's own header, then its address
        assert_eq!(one.client(["6.6.6.6, 203.0.113.7"]), ip("203.0.113.7"));
        assert_eq!(one.client(["203.0.113.7"]), ip("203.0.113.7"));
        // several header lines are one list, in order
        assert_eq!(one.client(["6.6.6.6", "203.0.113.7"]), ip("203.0.113.7"));
        assert_eq!(one.client(["[2001:db8::1]:443"]), ip("2001:db8::1"));
        assert_eq!(one.client(["10.1.1.1:8080"]), ip("10.1.1.1"));
        assert_eq!(one.client(["2001:db8::7"]), ip("2001:db8::7"));
        // nothing appended, or garbage where the proxy's entry should be: no address
        assert_eq!(one.client([]), None);
        assert_eq!(one.client(["1.2.3.4, unknown"]), None);
        let two = ClientIpHeader::new("x-forwarded-for", 2);
        assert_eq!(
            two.client(["6.6.6.6, 203.0.113.7, 10.0.0.254"]),
            ip("203.0.113.7")
        );
        assert_eq!(two.client(["10.0.0.254"]), None, "came past a proxy");
        assert_eq!(ClientIpHeader::new("h", 0).trusted_proxies, 1);
    }

    #[test]
    fn uploads_are_the_import_and_the_model_routes() {
        assert!(is_upload("/api/studies/import"));
        assert!(is_upload("/studies/3/models"));
        assert!(!is_upload("/api/annotate/vote"));
        assert!(!is_upload("/studies/3"));
    }
}
