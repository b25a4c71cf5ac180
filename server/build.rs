//! Embeds the built site (`target/site`: the wasm, js and css with their precompressed
//! siblings, and the public files) in a release build of the `natstudy` binary, so that the
//! binary alone, copied to any folder or machine, serves its pages whole (`serve` writes them
//! into its data folder once: `natstudy::web::embedded`). A debug build, and a build before the
//! site is built, embed nothing and read the site from disk as before (`--site-root`).

use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for e in entries {
        if e.is_dir() {
            files_under(&e, out);
        } else if e.is_file() {
            out.push(e);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let site = manifest.join("../target/site");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=NATSTUDY_EMBED_SITE");
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let wanted = match std::env::var("NATSTUDY_EMBED_SITE").as_deref() {
        Ok("0") => false,
        Ok(_) => true,
        Err(_) => release,
    };
    // only a build that embeds the site is rebuilt when the site changes
    if wanted {
        println!("cargo:rerun-if-changed={}", site.display());
    }
    let mut files = Vec::new();
    if wanted && site.join("pkg").is_dir() {
        files_under(&site, &mut files);
    }
    let mut code = String::from("/// The embedded site: (path under the site's root, bytes).\npub static FILES: &[(&str, &[u8])] = &[\n");
    for f in &files {
        let Ok(rel) = f.strip_prefix(&site) else {
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        let abs = f.canonicalize().unwrap_or_else(|_| f.clone());
        code.push_str(&format!(
            "    ({rel:?}, include_bytes!({:?})),\n",
            abs.display().to_string()
        ));
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("site.rs");
    if let Err(e) = std::fs::write(&out, code) {
        panic!("cannot write {}: {e}", out.display());
    }
}
