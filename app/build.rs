//! Fingerprints the sources that both halves of a page are built from.
//!
//! The server renders a page and the browser's wasm hydrates it; both compile this crate (and
//! the wire types and vocabulary it uses), and hydration breaks when the two were built from
//! different sources. The fingerprint (`NATSTUDY_APP_BUILD`, a SHA-256 prefix over the files'
//! paths and contents, and the lockfile) ends up in both, as [`BUILD_ID`](crate::BUILD_ID):
//! the server compares it with the one inside the site's wasm, and the wasm with the page's.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// What the pages are built from, relative to this crate: folders (every file inside) and
/// single files.
const INPUTS: &[&str] = &[
    "src",
    "Cargo.toml",
    "../crates/types/src",
    "../crates/types/Cargo.toml",
    "../crates/vocab/src",
    "../crates/vocab/Cargo.toml",
    "../Cargo.toml",
    "../Cargo.lock",
];

fn files_under(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = match std::fs::read_dir(path) {
            Ok(dir) => dir.filter_map(|e| e.ok().map(|e| e.path())).collect(),
            Err(_) => return,
        };
        entries.sort();
        for entry in entries {
            files_under(&entry, out);
        }
    } else if path.is_file() {
        out.push(path.to_owned());
    }
}

fn main() {
    let here = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let mut hash = Sha256::new();
    for input in INPUTS {
        let path = here.join(input);
        println!("cargo:rerun-if-changed={}", path.display());
        let mut files = Vec::new();
        files_under(&path, &mut files);
        for file in files {
            // the path relative to this crate, so that two checkouts of one commit agree
            let name = file.strip_prefix(&here).unwrap_or(&file);
            hash.update(name.to_string_lossy().as_bytes());
            hash.update([0]);
            hash.update(std::fs::read(&file).unwrap_or_default());
            hash.update([0]);
        }
    }
    let digest = hash.finalize();
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=NATSTUDY_APP_BUILD={hex}");
}
