//! The site embedded in a release binary (`build.rs`): written once into the data folder, under
//! this build's id, for the server to serve as it serves a built site on disk.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

include!(concat!(env!("OUT_DIR"), "/site.rs"));

/// Whether this binary carries its site.
pub fn present() -> bool {
    FILES.iter().any(|(path, _)| path.starts_with("pkg/"))
}

/// Writes the embedded site into `data_dir/site/<build id>` (once: a folder already complete
/// is reused) and returns that folder.
pub fn unpack(data_dir: &Path) -> Result<PathBuf> {
    unpack_files(
        data_dir,
        &app::BUILD_ID.replace([':', '/', '\\'], "-"),
        FILES,
    )
}

fn unpack_files(data_dir: &Path, build: &str, files: &[(&str, &[u8])]) -> Result<PathBuf> {
    let root = data_dir.join("site").join(build);
    let done = root.join(".complete");
    if done.is_file() {
        return Ok(root);
    }
    // written beside, then renamed into place: a server killed half-way leaves no half site
    let partial = data_dir
        .join("site")
        .join(format!("{build}.partial-{}", std::process::id()));
    for (path, bytes) in files {
        let file = partial.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&file, bytes).with_context(|| format!("cannot write {}", file.display()))?;
    }
    std::fs::write(partial.join(".complete"), b"")?;
    if root.exists() && !done.is_file() {
        // a folder a killed server left incomplete
        std::fs::remove_dir_all(&root)
            .with_context(|| format!("cannot replace {}", root.display()))?;
    }
    if let Err(e) = std::fs::rename(&partial, &root) {
        let _ = std::fs::remove_dir_all(&partial);
        // another server of the same build put it there first
        if !done.is_file() {
            return Err(e).with_context(|| format!("cannot move the site into {}", root.display()));
        }
    }
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The site is written once under its build, whole; a folder a killed server left without
    /// its completion mark is written again; a complete one is reused as it is.
    #[test]
    fn the_site_is_written_once_and_whole() {
        let dir = tempfile::tempdir().expect("dir");
        let files: &[(&str, &[u8])] = &[("pkg/a.js", b"js"), ("favicon.svg", b"<svg/>")];
        let root = unpack_files(dir.path(), "b1", files).expect("unpack");
        assert_eq!(std::fs::read(root.join("pkg/a.js")).expect("file"), b"js");
        std::fs::write(root.join("pkg/a.js"), b"kept").expect("write");
        unpack_files(dir.path(), "b1", files).expect("again");
        assert_eq!(
            std::fs::read(root.join("pkg/a.js")).expect("file"),
            b"kept",
            "reused"
        );
        std::fs::remove_file(root.join(".complete")).expect("unmark");
        unpack_files(dir.path(), "b1", files).expect("rewritten");
        assert_eq!(
            std::fs::read(root.join("pkg/a.js")).expect("file"),
            b"js",
            "rewritten"
        );
        let left: Vec<_> = std::fs::read_dir(dir.path().join("site"))
            .expect("dir")
            .collect();
        assert_eq!(left.len(), 1, "no partial folder left");
    }
}
