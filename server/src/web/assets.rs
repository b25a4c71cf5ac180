//! The site's build outputs under content-hashed names: `pkg/natstudy.{hash}.js`,
//! `pkg/natstudy.{hash}_bg.wasm` and `pkg/natstudy.{hash}.css` are the files of `pkg/` under a
//! name that changes with their content, so browsers may keep them for a year
//! (`immutable`); anything else under `pkg/` must be revalidated. Precompressed `.br`/`.gz`
//! siblings (written by `scripts/build-site`) are served to browsers that accept them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::{Path as UrlPath, Request};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use tower::ServiceExt;

/// What the pages link: the hashed names, and the real file behind each.
#[derive(Debug, Clone, Default)]
pub struct Assets {
    /// `natstudy.{hash}` (the js and, with `_bg`, the wasm share one hash: they are a pair).
    pub output_name: String,
    /// `natstudy_participant.{hash}`: the participants' smaller bundle, when built.
    pub participant: Option<String>,
    /// `/pkg/natstudy.{hash}.css`
    pub stylesheet: String,
    files: Arc<HashMap<String, PathBuf>>,
    pkg: PathBuf,
    /// Each built wasm (its path) and the build it was made from ([`app::BUILD_ID`] as found
    /// inside it; `None` when it holds none, as a site from before build ids).
    builds: Vec<(PathBuf, Option<String>)>,
}

/// The [`app::BUILD_ID`] compiled into a wasm: `natstudy-build:` and 16 hex digits.
fn build_in(wasm: &[u8]) -> Option<String> {
    const MARK: &[u8] = b"natstudy-build:";
    // (memchr's search: a debug build's wasm is 12 MB, read at every start)
    memchr::memmem::find_iter(wasm, MARK).find_map(|start| {
        let id = wasm.get(start..start + MARK.len() + 16)?;
        id[MARK.len()..]
            .iter()
            .all(u8::is_ascii_hexdigit)
            .then(|| String::from_utf8_lossy(id).into_owned())
    })
}

fn short_hash(parts: &[&[u8]]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    format!("{:x}", h.finalize())[..16].to_owned()
}

impl Assets {
    /// Hashes the built site's files (names stay unhashed when the site is not built).
    pub fn load(site_root: &Path) -> Assets {
        let pkg = site_root.join("pkg");
        let read = |name: &str| std::fs::read(pkg.join(name)).ok();
        let mut files = HashMap::new();
        let mut builds = Vec::new();
        let mut pair = |base: &str| match (
            read(&format!("{base}.js")),
            read(&format!("{base}_bg.wasm")),
        ) {
            (Some(js), Some(wasm)) => {
                builds.push((pkg.join(format!("{base}_bg.wasm")), build_in(&wasm)));
                let name = format!("{base}.{}", short_hash(&[&js, &wasm]));
                files.insert(format!("{name}.js"), pkg.join(format!("{base}.js")));
                files.insert(
                    format!("{name}_bg.wasm"),
                    pkg.join(format!("{base}_bg.wasm")),
                );
                Some(name)
            }
            _ => None,
        };
        let output_name = pair("natstudy").unwrap_or_else(|| "natstudy".to_owned());
        let participant = pair("natstudy_participant");
        let stylesheet = match read("natstudy.css") {
            Some(css) => {
                let name = format!("natstudy.{}.css", short_hash(&[&css]));
                files.insert(name.clone(), pkg.join("natstudy.css"));
                format!("/pkg/{name}")
            }
            None => "/pkg/natstudy.css".to_owned(),
        };
        Assets {
            output_name,
            participant,
            stylesheet,
            files: Arc::new(files),
            pkg,
            builds,
        }
    }

    /// Whether every built wasm comes from the sources `build` names (this server's
    /// [`app::BUILD_ID`]). A server must not serve a site built from other sources: its pages
    /// would fail to hydrate part-way. A site with no wasm at all passes (pages then work
    /// without scripts, as the server warns).
    pub fn check_build(&self, build: &str) -> Result<(), StaleSite> {
        for (wasm, found) in &self.builds {
            if found.as_deref() != Some(build) {
                return Err(StaleSite {
                    wasm: wasm.clone(),
                    found: found.clone(),
                    expected: build.to_owned(),
                });
            }
        }
        Ok(())
    }
}

/// A site whose wasm was built from other sources than the server.
#[derive(Debug, thiserror::Error)]
#[error(
    "the site's {} was built from other sources ({}) than this server ({expected}): its pages would fail to hydrate; rebuild the site with scripts/build-site (scripts/run-demo builds both), or point --site-root at the site built with this server",
    wasm.display(),
    found.as_deref().unwrap_or("a build without an id")
)]
pub struct StaleSite {
    pub wasm: PathBuf,
    pub found: Option<String>,
    pub expected: String,
}

/// `GET /pkg/{file}`: a hashed name with a year of caching, any other file of `pkg/` to be
/// revalidated; precompressed siblings when the browser accepts them.
pub async fn pkg(assets: Assets, UrlPath(file): UrlPath<String>, req: Request) -> Response {
    let (path, immutable) = match assets.files.get(&file) {
        Some(path) => (path.clone(), true),
        None if !file.contains(['/', '\\']) && !file.starts_with('.') => {
            (assets.pkg.join(&file), false)
        }
        None => return StatusCode::NOT_FOUND.into_response(),
    };
    let served = tower_http::services::ServeFile::new(path)
        .precompressed_br()
        .precompressed_gzip()
        .oneshot(req)
        .await;
    let mut res = match served {
        Ok(r) => r.into_response(),
        Err(e) => match e {},
    };
    let cache = if immutable && res.status().is_success() {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wasm_names_the_build_it_comes_from() {
        assert_eq!(build_in(b""), None);
        assert_eq!(build_in(b"natstudy-build:"), None);
        assert_eq!(build_in(b"xx natstudy-build:0123456789abcde"), None);
        // a mention without an id before the real one
        assert_eq!(
            build_in(b"name=natstudy-build:]\0natstudy-build:0123456789abcdef\0").as_deref(),
            Some("natstudy-build:0123456789abcdef")
        );
        assert_eq!(
            build_in(app::BUILD_ID.as_bytes()).as_deref(),
            Some(app::BUILD_ID)
        );
    }

    #[test]
    fn a_site_from_other_sources_is_refused() {
        let dir = tempfile::tempdir().expect("dir");
        let pkg = dir.path().join("pkg");
        std::fs::create_dir_all(&pkg).expect("pkg");
        // no wasm at all: nothing to compare
        assert!(Assets::load(dir.path()).check_build(app::BUILD_ID).is_ok());
        std::fs::write(pkg.join("natstudy.js"), "js").expect("js");
        let wasm = |build: &str| format!("\0asm…{build}\0…").into_bytes();
        std::fs::write(pkg.join("natstudy_bg.wasm"), wasm(app::BUILD_ID)).expect("wasm");
        assert!(Assets::load(dir.path()).check_build(app::BUILD_ID).is_ok());
        // the participants' bundle from another build
        std::fs::write(pkg.join("natstudy_participant.js"), "pjs").expect("js");
        std::fs::write(
            pkg.join("natstudy_participant_bg.wasm"),
            wasm("natstudy-build:00000000000000ff"),
        )
        .expect("wasm");
        let err = Assets::load(dir.path())
            .check_build(app::BUILD_ID)
            .expect_err("stale participants' bundle");
        assert!(err.wasm.ends_with("natstudy_participant_bg.wasm"));
        let message = err.to_string();
        assert!(
            message.contains("natstudy-build:00000000000000ff")
                && message.contains(app::BUILD_ID)
                && message.contains("scripts/build-site"),
            "{message}"
        );
        // a wasm from before build ids
        std::fs::write(pkg.join("natstudy_participant_bg.wasm"), "old").expect("wasm");
        let err = Assets::load(dir.path())
            .check_build(app::BUILD_ID)
            .expect_err("old bundle");
        assert_eq!(err.found, None);
        assert!(err.to_string().contains("a build without an id"));
    }

    #[test]
    fn names_follow_the_content() {
        let dir = tempfile::tempdir().expect("dir");
        let pkg = dir.path().join("pkg");
        std::fs::create_dir_all(&pkg).expect("pkg");
        assert_eq!(Assets::load(dir.path()).output_name, "natstudy");
        std::fs::write(pkg.join("natstudy.js"), "js").expect("js");
        std::fs::write(pkg.join("natstudy_bg.wasm"), "wasm").expect("wasm");
        std::fs::write(pkg.join("natstudy.css"), "css").expect("css");
        let a = Assets::load(dir.path());
        assert!(a.output_name.starts_with("natstudy.") && a.output_name.len() == 25);
        assert!(a.files.contains_key(&format!("{}_bg.wasm", a.output_name)));
        std::fs::write(pkg.join("natstudy_bg.wasm"), "wasm 2").expect("wasm");
        assert_ne!(Assets::load(dir.path()).output_name, a.output_name);
        assert_eq!(Assets::load(dir.path()).stylesheet, a.stylesheet);
        // the participants' bundle, when built, has its own hashed pair
        assert_eq!(a.participant, None);
        std::fs::write(pkg.join("natstudy_participant.js"), "pjs").expect("js");
        std::fs::write(pkg.join("natstudy_participant_bg.wasm"), "pwasm").expect("wasm");
        let a = Assets::load(dir.path());
        let p = a.participant.clone().expect("participant bundle");
        assert!(p.starts_with("natstudy_participant.") && p != a.output_name);
        assert!(a.files.contains_key(&format!("{p}_bg.wasm")));
    }
}
