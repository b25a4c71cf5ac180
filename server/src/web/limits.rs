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
    if declared.is_some_and(|n| n > limit as u64) {
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("request body over the limit of {limit} bytes"),
        )
            .into_response();
    }
    let (parts, body) = req.into_parts();
    let body = Body::new(http_body_util::Limited::new(body, limit));
    next.run(Request::from_parts(parts, body)).await
}

/// Puts the client's address into the request (`app::auth::ClientIp`): the peer, or the first
/// address of a trusted proxy's header when one is configured.
pub async fn client_ip(
    State(header_name): State<Option<String>>,
    mut req: Request,
    next: Next,
) -> Response {
    let from_header = header_name.as_deref().and_then(|h| {
        req.headers()
            .get(h)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .and_then(|v| v.trim().parse::<IpAddr>().ok())
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
    use super::is_upload;

    #[test]
    fn uploads_are_the_import_and_the_model_routes() {
        assert!(is_upload("/api/studies/import"));
        assert!(is_upload("/studies/3/models"));
        assert!(!is_upload("/api/annotate/vote"));
        assert!(!is_upload("/studies/3"));
    }
}
