//! Request guards that hold for every route: CSRF defence for state-changing requests and
//! role checks for pages (server functions check roles themselves, see `app::auth`).

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use tower_sessions::Session;

use super::AppState;
use natstudy_types::Role;
use natstudy_vocab::ids::{AnnotatorId, StudyId};

/// Refuses cross-site state-changing requests. Browsers send `Sec-Fetch-Site` and `Origin`;
/// a request that carries either must come from this site: the origin's scheme and host both
/// this server's (`https` when it sets secure cookies or its proxy says `X-Forwarded-Proto:
/// https`, `http` otherwise; an `https://` page of another server on the same host name is
/// another site). (The session cookie is also `SameSite=Lax`, so a cross-site form post
/// arrives without it.)
pub async fn same_origin(State(secure): State<bool>, req: Request, next: Next) -> Response {
    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        return next.run(req).await;
    }
    let headers = req.headers();
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        if site == "cross-site" {
            return (StatusCode::FORBIDDEN, "cross-site request refused").into_response();
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let forwarded = headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .map(str::trim);
        let scheme = match forwarded {
            Some(p) if p.eq_ignore_ascii_case("https") => "https",
            Some(p) if p.eq_ignore_ascii_case("http") => "http",
            _ if secure => "https",
            _ => "http",
        };
        if !is_this_origin(origin, scheme, host) {
            return (StatusCode::FORBIDDEN, "cross-origin request refused").into_response();
        }
    }
    next.run(req).await
}

/// Whether a request's `Origin` is this server's: the same scheme, and the same host and port
/// (a scheme's default port written or not).
fn is_this_origin(origin: &str, scheme: &str, host: &str) -> bool {
    let Some((o_scheme, o_host)) = origin.split_once("://") else {
        return false;
    };
    let default = |h: &str| -> String {
        let h = h.to_ascii_lowercase();
        let port = if scheme == "https" { ":443" } else { ":80" };
        h.strip_suffix(port).map(str::to_owned).unwrap_or(h)
    };
    o_scheme.eq_ignore_ascii_case(scheme) && !host.is_empty() && default(o_host) == default(host)
}

/// The study of a patch-review page (`/studies/{id}/review`).
fn review_page(path: &str) -> Option<StudyId> {
    (path.ends_with("/review") && path.matches('/').count() == 3)
        .then(|| study_of(path))
        .flatten()
}

/// Which roles may open a page path; `None` for public pages.
pub fn page_roles(path: &str) -> Option<&'static [Role]> {
    let under = |prefix: &str| path == prefix || path.starts_with(&format!("{prefix}/"));
    if under("/admin") {
        Some(Role::ADMINS)
    } else if study_of(path).is_some() && path.ends_with("/review/decide") {
        // deciding disagreements and building the review queue: admins
        Some(Role::ADMINS)
    } else if review_page(path).is_some() {
        // a study's patch review: any account that is a member (checked with the study)
        Some(Role::ANYONE)
    } else if under("/studies") {
        Some(Role::STAFF)
    } else if under("/annotate") {
        Some(Role::ANYONE)
    } else {
        None
    }
}

/// Sends anonymous visitors of protected pages to the sign-in page and refuses wrong roles.
pub async fn pages(
    State(state): State<AppState>,
    session: Session,
    req: Request,
    next: Next,
) -> Response {
    let Some(roles) = page_roles(req.uri().path()) else {
        return next.run(req).await;
    };
    // every page and route under /studies/{id} names a study by a number that fits an id:
    // anything else (`/studies/99999999999999999999999`, `/studies/x/…`) is no study at all
    if names_no_study(req.uri().path()) {
        return no_such_study(None);
    }
    // invited participants have no account: their session names their annotator record
    // (the lifetime rules apply to them too)
    let review = review_page(req.uri().path());
    if (req.uri().path().starts_with("/annotate/") || review.is_some())
        && app::auth::keep_alive(&session, state.backend.as_ref()).await
    {
        let participant: Option<AnnotatorId> =
            session.get(app::auth::PARTICIPANT_KEY).await.ok().flatten();
        if let Some(p) = participant {
            match review {
                // the survey of a study: only its own participant's (decided here, the same
                // way every time, not by the page's first answer racing its headers)
                None => match annotate_study(req.uri().path()) {
                    None => return next.run(req).await,
                    Some(study) => {
                        if let Ok(Some(_)) = state.backend.annotator_in(study, Some(p), None).await
                        {
                            return next.run(req).await;
                        }
                    }
                },
                // a review page: only the participants of the study's review-only invite
                Some(study) => {
                    if let Ok(Some(_)) = state.backend.review_participant(study, p).await {
                        return next.run(req).await;
                    }
                }
            }
        }
    }
    let user = app::auth::signed_in(&session, state.backend.as_ref())
        .await
        .ok()
        .flatten();
    match user {
        // a participant whose session ended (or a new device): the way back is their resume
        // code or their invite link, not the staff's sign-in page
        None if req.uri().path().starts_with("/annotate/") => {
            let next_path = req
                .uri()
                .path_and_query()
                .map(|p| p.as_str())
                .unwrap_or("/");
            session_ended(&form_urlencoded(next_path))
        }
        None => {
            let next_path = req
                .uri()
                .path_and_query()
                .map(|p| p.as_str())
                .unwrap_or("/");
            let encoded: String = form_urlencoded(next_path);
            Redirect::to(&format!("/login?next={encoded}")).into_response()
        }
        Some(u) if roles.contains(&u.role) => {
            // a study's survey: its annotators only, decided before the page renders
            if let Some(study) = annotate_study(req.uri().path()) {
                match state.backend.annotator_in(study, None, Some(&u)).await {
                    Ok(Some(_)) => return next.run(req).await,
                    Ok(None) => return forbidden(&u),
                    Err(e) => {
                        tracing::error!(error = %e, "cannot tell a study's annotators");
                        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
                    }
                }
            }
            // a study's pages, downloads and uploads: its members only (admins: every study)
            if let Some(study) = study_of(req.uri().path()) {
                if !state.backend.may_access(&u, study).await.unwrap_or(false) {
                    tracing::warn!(user = %u.username, %study, "refused: not a member of the study");
                    return forbidden(&u);
                }
                // an admin may open every study, and a study that is not there is none: one
                // page that says so (not the study page's parts each failing on their own)
                if let Ok(false) = state.backend.study_exists(study).await {
                    return no_such_study(Some(study));
                }
            }
            next.run(req).await
        }
        Some(u) => forbidden(&u),
    }
}

/// The study a `/studies/{id}/…` path is about, its segment percent-decoded as the router
/// decodes it (`%31` is study 1). The handlers check the decoded, typed id themselves: this is
/// the guard's second check, not the only one.
pub fn study_of(path: &str) -> Option<StudyId> {
    let segment = path.strip_prefix("/studies/")?.split('/').next()?;
    percent_decode(segment)?.parse().ok()
}

/// The study of a survey page (`/annotate/{id}`, the id percent-decoded as the router decodes
/// it); `None` for any other path.
fn annotate_study(path: &str) -> Option<StudyId> {
    let segment = path.strip_prefix("/annotate/")?;
    (!segment.contains('/'))
        .then(|| percent_decode(segment)?.parse().ok())
        .flatten()
}

/// A `/studies/{segment}…` path whose segment is not a study id.
fn names_no_study(path: &str) -> bool {
    path.strip_prefix("/studies/")
        .is_some_and(|rest| !rest.is_empty() && study_of(path).is_none())
}

/// `%XX` escapes decoded; `None` for a malformed escape or bytes that are not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A page the guard answers itself (it runs before the app): the site's head and top bar
/// (`nav`: what follows the brand in it), then `main`, with `status`.
fn guard_page(status: StatusCode, title: &str, nav: &str, main: &str) -> Response {
    let page = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · natstudy</title><link rel=\"stylesheet\" href=\"/pkg/natstudy.css\"></head>\
         <body><header class=\"topbar\"><a class=\"brand\" href=\"/\">natstudy</a>{nav}</header>\
         <main class=\"page\">{main}</main></body></html>"
    );
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .body(Body::from(page))
        .unwrap_or_else(|_| status.into_response())
}

/// The page a participant gets on the survey without a session: how to continue.
fn session_ended(next: &str) -> Response {
    guard_page(
        StatusCode::UNAUTHORIZED,
        "Continue the study",
        "",
        &format!(
            "<section class=\"card narrow\" id=\"session-ended\"><h1>Continue the study</h1>\
             <p>This browser has no session for the study: it ended after a while without activity, \
             or you started on another device. Your answers so far are saved.</p>\
             <ul><li><a href=\"/resume\" id=\"resume-link\">Continue with your resume code</a> \
             (shown at the top of every survey page, like <code>K3M9Q-X2P7A</code>), or</li>\
             <li>open the invite link you were given again, in this browser.</li></ul>\
             <p class=\"muted\">Taking part with an account? <a href=\"/login?next={next}\" id=\"sign-in-link\">Sign in</a>.</p>\
             </section>"
        ),
    )
}

/// The page of a study that is not there (404): titled as the app's own 404 page.
fn no_such_study(study: Option<StudyId>) -> Response {
    let what = study.map_or_else(|| "no such study".to_owned(), |s| format!("no study {s}"));
    guard_page(
        StatusCode::NOT_FOUND,
        "Not found",
        "",
        &format!(
            "<h1>Not found</h1><p id=\"not-found\">There is {what} here: it may \
             have been deleted, or the link is mistyped. <a href=\"/studies\">The studies</a> lists \
             those you may open.</p>"
        ),
    )
}

/// The refusal page: the site's header (who is signed in, home, sign out) and what happened.
fn forbidden(user: &natstudy_types::User) -> Response {
    let who = format!("{} ({})", escape_html(&user.username), user.role.as_str());
    guard_page(
        StatusCode::FORBIDDEN,
        "Forbidden",
        &format!(
            "<nav class=\"nav\"><a href=\"/\">Home</a><span class=\"who\" id=\"who\">{who}</span>\
             <form class=\"inline\" method=\"post\" action=\"/api/logout\"><button type=\"submit\" id=\"logout\">Sign out</button></form>\
             </nav>"
        ),
        &format!(
            "<h1>Forbidden</h1>\
             <p>You are signed in as {who}, and this account may not open this page (it belongs to a \
             study you are not a member of, or needs another role). Ask the study's owner or an admin \
             for access, or <a href=\"/\">go back home</a>.</p>"
        ),
    )
}

/// Text safe inside HTML.
fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn form_urlencoded(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_roles_cover_prefixes_exactly() {
        assert_eq!(page_roles("/admin/users"), Some(&[Role::Admin][..]));
        assert_eq!(
            page_roles("/studies/3"),
            Some(&[Role::Admin, Role::Researcher][..])
        );
        assert_eq!(page_roles("/studiesx"), None);
        assert_eq!(page_roles("/studies/3/review"), Some(Role::ANYONE));
        assert_eq!(page_roles("/studies/3/review/decide"), Some(Role::ADMINS));
        assert_eq!(page_roles("/studies/x/review"), Some(Role::STAFF));
        assert_eq!(page_roles("/login"), None);
        assert_eq!(form_urlencoded("/a b?c=d"), "/a%20b%3Fc%3Dd");
        assert_eq!(study_of("/studies/12/export/votes.csv"), Some(StudyId(12)));
        assert_eq!(study_of("/studies/12"), Some(StudyId(12)));
        assert_eq!(study_of("/studies"), None);
        assert_eq!(study_of("/studies/new"), None);
        assert_eq!(study_of("/studies/%31/export/votes.csv"), Some(StudyId(1)));
        assert_eq!(study_of("/studies/%39%39%39/models"), Some(StudyId(999)));
        assert_eq!(study_of("/studies/%3/models"), None);
        assert_eq!(study_of("/studies/%FF/models"), None);
        assert!(names_no_study("/studies/99999999999999999999999/results"));
        assert!(names_no_study("/studies/x/review"));
        assert!(!names_no_study("/studies/"));
        assert!(!names_no_study("/studies/%31/results"));
        assert_eq!(annotate_study("/annotate/7"), Some(StudyId(7)));
        assert_eq!(annotate_study("/annotate/%37"), Some(StudyId(7)));
        assert_eq!(annotate_study("/annotate/7/x"), None);
        assert_eq!(annotate_study("/annotate"), None);
        assert_eq!(annotate_study("/studies/7"), None);
    }

    #[test]
    fn an_origin_is_this_site_by_scheme_and_host() {
        assert!(is_this_origin(
            "http://127.0.0.1:3000",
            "http",
            "127.0.0.1:3000"
        ));
        assert!(
            !is_this_origin("https://127.0.0.1:3000", "http", "127.0.0.1:3000"),
            "another scheme"
        );
        assert!(!is_this_origin(
            "http://127.0.0.1:3000",
            "https",
            "127.0.0.1:3000"
        ));
        assert!(is_this_origin(
            "https://study.example",
            "https",
            "study.example:443"
        ));
        assert!(is_this_origin(
            "HTTPS://Study.Example",
            "https",
            "study.example"
        ));
        assert!(!is_this_origin(
            "http://evil.example",
            "http",
            "study.example"
        ));
        assert!(!is_this_origin("null", "http", "study.example"));
        assert!(!is_this_origin("http://", "http", ""));
        assert!(!is_this_origin(
            "http://127.0.0.1:3000.evil",
            "http",
            "127.0.0.1:3000"
        ));
    }
}
