//! The two sides of a pair: a checkout folder or a single file, on disk or in an uploaded
//! archive held in memory. Only `.java` files count; folders whose name starts with a dot
//! (`.git`, `.svn`) and links are passed over. Every read is bounded.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use super::encoding::{self, Encoding};
use crate::formats::items::MAX_FILE_BYTES;

/// The most `.java` files one side may hold (a checkout of the largest Defects4J project has a
/// few thousand).
pub const MAX_JAVA_FILES: usize = 200_000;

/// What a path of a pair is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Missing,
    File,
    /// A folder's `.java` files: paths relative to it, `/`-separated, sorted, with their sizes.
    Dir(Vec<(String, u64)>),
}

/// Why a side cannot be read: said on the CSV row, in the column of the side.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ReadError(pub String);

/// Where the pairs' files are.
pub trait Files: Sync {
    /// What `path` (as the CSV gives it) is.
    fn entry(&self, path: &str) -> Result<Entry, ReadError>;
    /// The bytes of a file: `path` as the CSV gives it, then `/`-separated inside a folder.
    /// Larger than `max` bytes is an error.
    fn read(&self, path: &str, inner: Option<&str>, max: u64) -> Result<Vec<u8>, ReadError>;
    /// Whether `a/inner` and `b/inner` hold the same bytes (read in bounded chunks: this is
    /// how files above the size bound are compared).
    fn same(&self, a: &str, b: &str, inner: &str) -> Result<bool, ReadError>;
}

/// Files on disk; relative paths are relative to `base` (the CSV's folder).
pub struct Disk {
    pub base: PathBuf,
}

impl Disk {
    fn path(&self, path: &str, inner: Option<&str>) -> PathBuf {
        let mut p = self.base.join(path);
        if let Some(i) = inner {
            p.extend(i.split('/'));
        }
        p
    }
}

fn is_java(name: &str) -> bool {
    name.ends_with(".java")
}

impl Files for Disk {
    fn entry(&self, path: &str) -> Result<Entry, ReadError> {
        let root = self.path(path, None);
        let meta = match std::fs::metadata(&root) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Entry::Missing),
            Err(e) => return Err(ReadError(format!("cannot read {}: {e}", root.display()))),
        };
        if meta.is_file() {
            return Ok(Entry::File);
        }
        let mut out = Vec::new();
        let walk = walkdir::WalkDir::new(&root)
            .follow_links(false)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
        for e in walk {
            let e = e.map_err(|e| ReadError(format!("cannot read {}: {e}", root.display())))?;
            if !e.file_type().is_file() || !is_java(&e.file_name().to_string_lossy()) {
                continue;
            }
            let rel = e.path().strip_prefix(&root).map_err(|_| {
                ReadError(format!(
                    "{} is outside {}",
                    e.path().display(),
                    root.display()
                ))
            })?;
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let size = e
                .metadata()
                .map_err(|x| ReadError(format!("cannot read {}: {x}", e.path().display())))?
                .len();
            out.push((parts.join("/"), size));
            if out.len() > MAX_JAVA_FILES {
                return Err(ReadError(format!(
                    "{} holds more than {MAX_JAVA_FILES} .java files",
                    root.display()
                )));
            }
        }
        Ok(Entry::Dir(out))
    }

    fn read(&self, path: &str, inner: Option<&str>, max: u64) -> Result<Vec<u8>, ReadError> {
        let p = self.path(path, inner);
        let file = std::fs::File::open(&p)
            .map_err(|e| ReadError(format!("cannot read {}: {e}", p.display())))?;
        let mut bytes = Vec::new();
        file.take(max + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| ReadError(format!("cannot read {}: {e}", p.display())))?;
        if bytes.len() as u64 > max {
            return Err(too_big(&p.display().to_string(), max));
        }
        Ok(bytes)
    }

    fn same(&self, a: &str, b: &str, inner: &str) -> Result<bool, ReadError> {
        let open = |root: &str| {
            let p = self.path(root, Some(inner));
            std::fs::File::open(&p)
                .map(|f| (std::io::BufReader::with_capacity(64 * 1024, f), p.clone()))
                .map_err(|e| ReadError(format!("cannot read {}: {e}", p.display())))
        };
        let (mut x, px) = open(a)?;
        let (mut y, py) = open(b)?;
        let (mut bx, mut by) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
        loop {
            let n = fill(&mut x, &mut bx)
                .map_err(|e| ReadError(format!("cannot read {}: {e}", px.display())))?;
            let m = fill(&mut y, &mut by)
                .map_err(|e| ReadError(format!("cannot read {}: {e}", py.display())))?;
            if n != m || bx[..n] != by[..m] {
                return Ok(false);
            }
            if n == 0 {
                return Ok(true);
            }
        }
    }
}

/// Reads until `buf` is full or the end: how many bytes it holds.
fn fill(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

fn too_big(name: &str, max: u64) -> ReadError {
    ReadError(format!("{name} is larger than {} KiB", max / 1024))
}

/// Files of an uploaded archive, by their `/`-separated path inside it; paths in the CSV are
/// relative to `base` (the CSV's folder in the archive) and may not leave the archive.
pub struct Memory {
    pub base: String,
    pub files: BTreeMap<String, Vec<u8>>,
}

/// `base` joined with a relative, `/`-separated `path`: `None` for an absolute path or one that
/// climbs out of the archive.
pub fn join_inside(base: &str, path: &str) -> Option<String> {
    if path.starts_with('/') || path.starts_with('\\') || path.contains('\\') {
        return None;
    }
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for c in Path::new(path).components() {
        match c {
            Component::Normal(s) => parts.push(s.to_str()?),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.join("/"))
}

impl Memory {
    fn key(&self, path: &str) -> Result<String, ReadError> {
        join_inside(&self.base, path)
            .ok_or_else(|| ReadError(format!("{path} leads outside the archive")))
    }
}

impl Files for Memory {
    fn entry(&self, path: &str) -> Result<Entry, ReadError> {
        let key = self.key(path)?;
        if self.files.contains_key(&key) {
            return Ok(Entry::File);
        }
        let prefix = if key.is_empty() {
            String::new()
        } else {
            format!("{key}/")
        };
        let inside: Vec<(String, u64)> = self
            .files
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(k, v)| (k[prefix.len()..].to_owned(), v.len() as u64))
            .filter(|(k, _)| is_java(k) && !k.split('/').any(|p| p.starts_with('.')))
            .collect();
        if inside.is_empty() && !self.files.keys().any(|k| k.starts_with(&prefix)) {
            return Ok(Entry::Missing);
        }
        Ok(Entry::Dir(inside))
    }

    fn read(&self, path: &str, inner: Option<&str>, max: u64) -> Result<Vec<u8>, ReadError> {
        let mut key = self.key(path)?;
        if let Some(i) = inner {
            key = format!("{key}/{i}");
        }
        let bytes = self
            .files
            .get(&key)
            .ok_or_else(|| ReadError(format!("{key} is not in the archive")))?;
        if bytes.len() as u64 > max {
            return Err(too_big(&key, max));
        }
        Ok(bytes.clone())
    }

    fn same(&self, a: &str, b: &str, inner: &str) -> Result<bool, ReadError> {
        let get = |root: &str| -> Result<&Vec<u8>, ReadError> {
            let key = format!("{}/{inner}", self.key(root)?);
            self.files
                .get(&key)
                .ok_or_else(|| ReadError(format!("{key} is not in the archive")))
        };
        Ok(get(a)? == get(b)?)
    }
}

/// A file's decoded text and the encoding it was read in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    pub text: String,
    pub encoding: &'static str,
}

/// A `.java` file that differs between the two sides: its path inside the checkout (or its
/// name, for a pair of single files) and each side's text (`None`: absent on that side).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    pub path: String,
    pub buggy: Option<Text>,
    pub fixed: Option<Text>,
}

/// Which column of the CSV a problem is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Buggy,
    Fixed,
}

impl Side {
    pub fn column(self) -> &'static str {
        match self {
            Side::Buggy => "buggy",
            Side::Fixed => "fixed",
        }
    }
}

fn decode(bytes: &[u8], name: &str, enc: Encoding) -> Result<Text, ReadError> {
    if bytes.contains(&0) {
        return Err(ReadError(format!(
            "{name} is a binary file, not Java source"
        )));
    }
    encoding::decode(bytes, enc)
        .map(|(text, encoding)| Text { text, encoding })
        .map_err(|e| ReadError(format!("{name}: {e}")))
}

/// A file read: its text and its bytes.
type FileRead = (Text, Vec<u8>);

/// The `.java` files that differ between the sides of a pair. A side that is missing, a folder
/// paired with a file, a binary or oversized changed file, or a pair without any difference is
/// an error of the side's column.
pub fn changed(
    files: &dyn Files,
    buggy: &str,
    fixed: &str,
    enc: Encoding,
) -> Result<Vec<Changed>, (Side, ReadError)> {
    let b = files.entry(buggy).map_err(|e| (Side::Buggy, e))?;
    let f = files.entry(fixed).map_err(|e| (Side::Fixed, e))?;
    let max = MAX_FILE_BYTES as u64;
    let read = |side: Side, root: &str, inner: Option<&str>| {
        let name = inner.map_or(root.to_owned(), |i| format!("{root}/{i}"));
        files
            .read(root, inner, max)
            .and_then(|bytes| Ok((decode(&bytes, &name, enc)?, bytes)))
            .map_err(|e| (side, e))
    };
    let out = match (b, f) {
        (Entry::Missing, _) => {
            return Err((
                Side::Buggy,
                ReadError(format!("{buggy}: no such file or folder")),
            ))
        }
        (_, Entry::Missing) => {
            return Err((
                Side::Fixed,
                ReadError(format!("{fixed}: no such file or folder")),
            ))
        }
        (Entry::File, Entry::File) => {
            let (bt, bb) = read(Side::Buggy, buggy, None)?;
            let (ft, fb) = read(Side::Fixed, fixed, None)?;
            let name = buggy.rsplit(['/', '\\']).next().unwrap_or(buggy).to_owned();
            if bb == fb {
                Vec::new()
            } else {
                vec![Changed {
                    path: name,
                    buggy: Some(bt),
                    fixed: Some(ft),
                }]
            }
        }
        (Entry::Dir(bs), Entry::Dir(fs)) => {
            let bmap: BTreeMap<&str, u64> = bs.iter().map(|(p, s)| (p.as_str(), *s)).collect();
            let fmap: BTreeMap<&str, u64> = fs.iter().map(|(p, s)| (p.as_str(), *s)).collect();
            let mut all: Vec<&str> = bmap.keys().chain(fmap.keys()).copied().collect();
            all.sort_unstable();
            all.dedup();
            let mut out = Vec::new();
            for p in all {
                let one = |side: Side,
                           root: &str,
                           present: bool|
                 -> Result<Option<FileRead>, (Side, ReadError)> {
                    if present {
                        read(side, root, Some(p)).map(Some)
                    } else {
                        Ok(None)
                    }
                };
                match (bmap.get(p), fmap.get(p)) {
                    (Some(a), Some(b)) if a.max(b) > &max => {
                        // above the bound: fine while unchanged, refused once it differs
                        if a == b && files.same(buggy, fixed, p).map_err(|e| (Side::Buggy, e))? {
                            continue;
                        }
                        let side = if a > &max { Side::Buggy } else { Side::Fixed };
                        let root = if a > &max { buggy } else { fixed };
                        return Err((side, too_big(&format!("{root}/{p}"), max)));
                    }
                    (bs, fs) => {
                        let bt = one(Side::Buggy, buggy, bs.is_some())?;
                        let ft = one(Side::Fixed, fixed, fs.is_some())?;
                        if let (Some((_, x)), Some((_, y))) = (&bt, &ft) {
                            if x == y {
                                continue;
                            }
                        }
                        out.push(Changed {
                            path: p.to_owned(),
                            buggy: bt.map(|t| t.0),
                            fixed: ft.map(|t| t.0),
                        });
                    }
                }
            }
            out
        }
        (Entry::File, Entry::Dir(_)) | (Entry::Dir(_), Entry::File) => {
            return Err((
                Side::Fixed,
                ReadError(format!(
                    "{buggy} and {fixed}: one is a folder, the other a file"
                )),
            ))
        }
    };
    if out.is_empty() {
        return Err((
            Side::Fixed,
            ReadError(format!("{buggy} and {fixed} hold the same Java sources")),
        ));
    }
    Ok(out)
}
