//! An uploaded zip of checkouts with its `pairs.csv`, read into memory with every bound
//! checked before anything is extracted: the entry count, each entry's name (no absolute
//! path, no `..`, no backslash, no drive), and the total uncompressed size that the entries
//! declare — and, while extracting, that no entry inflates past what it declared (a zip bomb
//! lies in its headers). Only `pairs.csv` and `.java` files are kept; nothing touches the disk.

use std::collections::BTreeMap;
use std::io::{Cursor, Read};

use super::sources::{join_inside, Memory};

/// The bounds of an archive.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_entries: usize,
    /// The most bytes the kept entries may hold once uncompressed.
    pub max_total: u64,
}

/// Why an archive is refused (nothing of it is read).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchiveError {
    #[error("not a zip archive: {0}")]
    NotZip(String),
    #[error("more than {0} entries")]
    TooManyEntries(usize),
    #[error("entry `{0}` leads outside the archive")]
    Traversal(String),
    #[error("the entries would hold more than {0} MiB uncompressed")]
    TooLarge(u64),
    #[error("entry `{0}` inflates past the size it declares")]
    Lies(String),
    #[error("entry `{0}`: {1}")]
    Entry(String, String),
    #[error("no pairs.csv in the archive")]
    NoPairs,
}

/// The archive's `pairs.csv` (its path in the archive and its text) and its files, with paths
/// in the CSV relative to the CSV's folder.
pub struct Archive {
    pub pairs_path: String,
    pub pairs: String,
    pub files: Memory,
}

fn kept(name: &str) -> bool {
    name.ends_with(".java") || name.rsplit('/').next() == Some("pairs.csv")
}

/// Reads an archive within `limits`.
pub fn read(bytes: &[u8], limits: Limits) -> Result<Archive, ArchiveError> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| ArchiveError::NotZip(e.to_string()))?;
    if zip.len() > limits.max_entries {
        return Err(ArchiveError::TooManyEntries(limits.max_entries));
    }
    // every name and the declared sizes first, before one byte is inflated
    let mut total = 0u64;
    let mut wanted = Vec::new();
    for i in 0..zip.len() {
        let f = zip
            .by_index_raw(i)
            .map_err(|e| ArchiveError::NotZip(e.to_string()))?;
        let name = f.name().to_owned();
        let normal = join_inside("", &name)
            .filter(|n| !n.is_empty() || f.is_dir())
            .filter(|_| !name.contains(':'))
            .ok_or_else(|| ArchiveError::Traversal(name.clone()))?;
        if name.split('/').any(|p| p == "..") {
            return Err(ArchiveError::Traversal(name));
        }
        if f.is_dir() || !kept(&normal) {
            continue;
        }
        total = total.saturating_add(f.size());
        if total > limits.max_total {
            return Err(ArchiveError::TooLarge(limits.max_total >> 20));
        }
        wanted.push((i, normal, f.size()));
    }
    let mut files = BTreeMap::new();
    for (i, name, size) in wanted {
        let f = zip
            .by_index(i)
            .map_err(|e| ArchiveError::Entry(name.clone(), e.to_string()))?;
        let mut out = Vec::with_capacity(size.min(1 << 20) as usize);
        f.take(size + 1)
            .read_to_end(&mut out)
            .map_err(|e| ArchiveError::Entry(name.clone(), e.to_string()))?;
        if out.len() as u64 != size {
            return Err(ArchiveError::Lies(name));
        }
        files.insert(name, out);
    }
    let pairs_path = files
        .keys()
        .filter(|k| k.rsplit('/').next() == Some("pairs.csv"))
        .min_by_key(|k| (k.matches('/').count(), k.len()))
        .cloned()
        .ok_or(ArchiveError::NoPairs)?;
    let pairs_bytes = files.remove(&pairs_path).unwrap_or_default();
    let pairs = String::from_utf8(pairs_bytes)
        .map_err(|_| ArchiveError::Entry(pairs_path.clone(), "not UTF-8 text".into()))?;
    let base = pairs_path
        .rsplit_once('/')
        .map(|(dir, _)| dir.to_owned())
        .unwrap_or_default();
    Ok(Archive {
        pairs_path,
        pairs,
        files: Memory { base, files },
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    const LIMITS: Limits = Limits {
        max_entries: 100,
        max_total: 1 << 20,
    };

    fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, data) in entries {
            w.start_file(*name, opts).expect("entry");
            w.write_all(data).expect("write");
        }
        w.finish().expect("zip").into_inner()
    }

    #[test]
    fn the_csv_folder_is_the_base_and_only_sources_are_kept() {
        let z = zip_of(&[
            ("data/pairs.csv", b"bug_id,project,buggy,fixed\n"),
            ("data/B-1/buggy/A.java", b"class A {}"),
            ("data/B-1/buggy/build.xml", b"<project/>"),
        ]);
        let a = read(&z, LIMITS).expect("reads");
        assert_eq!(a.pairs_path, "data/pairs.csv");
        assert_eq!(a.files.base, "data");
        let names: Vec<&String> = a.files.files.keys().collect();
        assert_eq!(names, vec!["data/B-1/buggy/A.java"]);
    }

    #[test]
    fn traversal_bombs_and_too_many_entries_are_refused() {
        let z = zip_of(&[("pairs.csv", b"x"), ("../evil/A.java", b"class A {}")]);
        assert_eq!(
            read(&z, LIMITS).err(),
            Some(ArchiveError::Traversal("../evil/A.java".into()))
        );
        let z = zip_of(&[("pairs.csv", b"x"), ("/etc/A.java", b"class A {}")]);
        assert!(matches!(read(&z, LIMITS), Err(ArchiveError::Traversal(_))));
        // 2 MiB of zeros compress to a few KiB: the declared size is refused before inflating
        let zeros = vec![0u8; 2 << 20];
        let z = zip_of(&[("pairs.csv", b"x"), ("A.java", &zeros)]);
        assert!(z.len() < 64 * 1024);
        assert_eq!(read(&z, LIMITS).err(), Some(ArchiveError::TooLarge(1)));
        let many: Vec<(String, Vec<u8>)> = (0..101)
            .map(|i| (format!("f{i}.java"), Vec::new()))
            .collect();
        let refs: Vec<(&str, &[u8])> = many
            .iter()
            .map(|(n, d)| (n.as_str(), d.as_slice()))
            .collect();
        assert_eq!(
            read(&zip_of(&refs), LIMITS).err(),
            Some(ArchiveError::TooManyEntries(100))
        );
        assert!(matches!(
            read(b"not a zip", LIMITS),
            Err(ArchiveError::NotZip(_))
        ));
        assert_eq!(
            read(&zip_of(&[("A.java", b"")]), LIMITS).err(),
            Some(ArchiveError::NoPairs)
        );
    }
}
