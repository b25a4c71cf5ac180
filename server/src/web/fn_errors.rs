//! Server functions' errors as HTTP statuses. `server_fn` answers every error with 500,
//! arguments it could not read included (`study=abc`, `page=-1`): those are the client's
//! mistake, and answered here as 400 Bad Request — the body (what the browser's half reads) is
//! kept as it was. Errors of the functions themselves keep the status they set
//! (`natstudy_core::api::map`).

use axum::body::Body;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;

/// The longest error body looked at: `server_fn`'s errors are a kind and a message.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// The kinds of `server_fn` error (the body's prefix before `|`) that say the request's
/// arguments could not be read.
const CLIENT_KINDS: [&str; 3] = ["Args", "MissingArg", "Deserialization"];

/// Answers 400 where a server function could not read its arguments (see the module).
pub async fn arguments_are_client_errors(req: Request, next: Next) -> Response {
    let resp = next.run(req).await;
    if resp.status() != StatusCode::INTERNAL_SERVER_ERROR
        || !resp
            .headers()
            .contains_key(server_fn::error::SERVER_FN_ERROR_HEADER)
    {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_ERROR_BODY).await else {
        // no error of server_fn's is this long: answered as it was, without the body
        return Response::from_parts(parts, Body::empty());
    };
    if is_client_kind(&bytes) {
        parts.status = StatusCode::BAD_REQUEST;
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// Whether a `server_fn` error body (`Kind|message`) is of a kind in [`CLIENT_KINDS`].
fn is_client_kind(body: &[u8]) -> bool {
    body.iter()
        .position(|&b| b == b'|')
        .is_some_and(|end| CLIENT_KINDS.iter().any(|k| k.as_bytes() == &body[..end]))
}

#[cfg(test)]
mod tests {
    use super::is_client_kind;

    #[test]
    fn only_unreadable_arguments_are_the_clients() {
        assert!(is_client_kind(b"Args|invalid digit found in string"));
        assert!(is_client_kind(b"MissingArg|study"));
        assert!(is_client_kind(b"Deserialization|expected u32"));
        assert!(!is_client_kind(b"ServerError|internal error"));
        assert!(!is_client_kind(b"Args"));
        assert!(!is_client_kind(b""));
    }
}
