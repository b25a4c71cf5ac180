//! The benchmark export's layout: one folder per transformed bug with the transformed buggy
//! file (`buggy/<path in the project>`), the transformed fixed file when the fix could follow
//! (`fixed/<path>`), and `meta.json` (bug, operator, naturalness, RNC per model, the buggy lines
//! in the transformed file, the line map, verification); plus one index line per folder. Names
//! come from imported data, so every folder and path is made safe here: no absolute paths, no
//! `..`, no characters outside `[A-Za-z0-9._-]` in a folder name, no two folders alike.

use std::collections::{BTreeMap, HashSet};

use serde_json::{json, Value};

use crate::transform::find_lines;
use crate::verify::{place, Check};

/// A bug as the export needs it.
#[derive(Debug, Clone, Copy)]
pub struct Bug<'a> {
    pub key: &'a str,
    pub project: &'a str,
    pub file_path: &'a str,
    /// The method's name.
    pub method_name: &'a str,
    /// The buggy method's text, as it appears in `file_source`.
    pub method: &'a str,
    pub file_source: Option<&'a str>,
    /// The project file's encoding when not UTF-8 (`ISO-8859-1`): the Java files are written
    /// in it.
    pub encoding: Option<&'a str>,
}

/// A transformation and what the study learnt about it.
#[derive(Debug, Clone)]
pub struct Item<'a> {
    pub key: &'a str,
    pub operator: &'a str,
    pub level: &'a str,
    pub summary: &'a str,
    pub source: &'a str,
    /// The buggy lines of the transformed method (1-based, the method's own lines).
    pub buggy_lines: &'a [usize],
    pub line_map: Option<&'a Value>,
    /// The developer's fix carried over to the transformed method.
    pub fixed_source: Option<&'a str>,
    /// `natural`, `likely_natural`, …; `None` before anyone rated it.
    pub category: Option<&'a str>,
    pub votes: usize,
    pub unnatural_votes: usize,
    /// RNC (percent) per language model.
    pub rnc: BTreeMap<&'a str, f64>,
    pub verification: Option<&'a Check>,
}

/// One folder of the export.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The folder's name (safe, unique within the export).
    pub dir: String,
    /// Files relative to the folder, with their bytes (`meta.json` included; Java files in
    /// the bug's encoding).
    pub files: Vec<(String, Vec<u8>)>,
    /// The folder's line in the index.
    pub index: Value,
}

/// `[A-Za-z0-9._-]` only, no leading dot, at most 100 bytes; `fallback` when nothing is left.
pub fn safe_name(s: &str, fallback: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    while out.starts_with('.') {
        out.remove(0);
    }
    if out.is_empty() {
        fallback.to_owned()
    } else {
        out
    }
}

/// A relative path made of safe names (`..`, `.`, empty parts and roots dropped); the last part
/// keeps `.java` when the original did, so javac accepts the file.
pub fn safe_path(path: &str, fallback: &str) -> String {
    let parts: Vec<String> = path
        .split(['/', '\\'])
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
        .map(|p| safe_name(p, "_"))
        .collect();
    if parts.is_empty() {
        return fallback.to_owned();
    }
    parts.iter().take(32).cloned().collect::<Vec<_>>().join("/")
}

/// The folder for `item` of `bug`; `taken` holds the folder names used so far.
pub fn entry(bug: &Bug<'_>, item: &Item<'_>, taken: &mut HashSet<String>) -> Entry {
    let base = safe_name(item.key, "item");
    let mut dir = base.clone();
    let mut n = 1;
    while !taken.insert(dir.to_ascii_lowercase()) {
        n += 1;
        dir = format!("{base}-{n}");
    }
    let start = bug.file_source.and_then(|f| find_lines(f, bug.method));
    let whole_file = start.is_some();
    let (path, buggy_text, fixed_text, offset) = match (bug.file_source, start) {
        (Some(file), Some((first, _))) => {
            let path = safe_path(bug.file_path, "Unit.java");
            let buggy = place(file, bug.method, item.source).unwrap_or_default();
            let fixed = item.fixed_source.and_then(|f| place(file, bug.method, f));
            (path, buggy, fixed, first - 1)
        }
        _ => {
            // no file: the method alone, its lines its own
            let name = format!("{}.java", safe_name(bug.method_name, "method"));
            let text = |s: &str| format!("{}\n", s.trim_end_matches('\n'));
            (name, text(item.source), item.fixed_source.map(text), 0)
        }
    };
    let file_lines: Vec<usize> = item.buggy_lines.iter().map(|l| l + offset).collect();
    // the project's encoding, unless a character of the transformation cannot be written in
    // it (then UTF-8, and meta.json says so)
    let encoded = |text: &str| crate::bugs::encoding::encode(text, bug.encoding).ok();
    let in_encoding = encoded(&buggy_text).is_some()
        && fixed_text.as_deref().is_none_or(|f| encoded(f).is_some());
    let encoding = if in_encoding {
        bug.encoding.unwrap_or(crate::bugs::encoding::UTF_8)
    } else {
        crate::bugs::encoding::UTF_8
    };
    let bytes = |text: &str| {
        if in_encoding {
            encoded(text).unwrap_or_default()
        } else {
            text.as_bytes().to_vec()
        }
    };
    let mut files = vec![(format!("buggy/{path}"), bytes(&buggy_text))];
    if let Some(f) = &fixed_text {
        files.push((format!("fixed/{path}"), bytes(f)));
    }
    let verification = item.verification.map(|c| {
        json!({
            "compiles": c.compiles,
            "tests_same": c.tests_same,
            "verified": c.verified(),
            "message": c.message,
        })
    });
    let meta = json!({
        "id": item.key,
        "bug_id": bug.key,
        "project": bug.project,
        "file": path,
        "original_file_path": bug.file_path,
        "whole_file": whole_file,
        "encoding": encoding,
        "method": bug.method_name,
        "operator": item.operator,
        "level": item.level,
        "summary": item.summary,
        "category": item.category,
        "votes": item.votes,
        "unnatural_votes": item.unnatural_votes,
        "rnc": item.rnc,
        "buggy_lines": file_lines,
        "buggy_lines_in_method": item.buggy_lines,
        "method_first_line": offset + 1,
        "line_map": item.line_map,
        "fixed": fixed_text.is_some(),
        "verification": verification,
    });
    let mut text = serde_json::to_string_pretty(&meta).unwrap_or_default();
    text.push('\n');
    files.push(("meta.json".to_owned(), text.into_bytes()));
    let index = json!({
        "dir": dir,
        "id": item.key,
        "bug_id": bug.key,
        "project": bug.project,
        "operator": item.operator,
        "level": item.level,
        "category": item.category,
        "buggy_file": format!("{dir}/buggy/{path}"),
        "fixed_file": fixed_text.as_ref().map(|_| format!("{dir}/fixed/{path}")),
        "buggy_lines": file_lines,
        "verified": item.verification.map(Check::verified),
    });
    Entry { dir, files, index }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_stay_inside_the_export() {
        assert_eq!(safe_path("../../etc/passwd", "x"), "etc/passwd");
        assert_eq!(safe_path("/abs/./a b/Foo.java", "x"), "abs/a_b/Foo.java");
        assert_eq!(safe_path("..", "Unit.java"), "Unit.java");
        assert_eq!(safe_name("..", "item"), "item");
        assert_eq!(safe_name(".hidden", "item"), "hidden");
        assert_eq!(safe_name("naming_1/../x", "item"), "naming_1_.._x");
        let mut taken = HashSet::new();
        let bug = Bug {
            key: "B-1",
            project: "P",
            file_path: "src/p/Foo.java",
            method_name: "f",
            method: "    int f() {\n        return 1;\n    }",
            file_source: Some("class Foo {\n    int f() {\n        return 1;\n    }\n}\n"),
            encoding: None,
        };
        let item = Item {
            key: "a/b",
            operator: "RenameVariable-1",
            level: "naming",
            summary: "",
            source: "    int f() {\n        int one = 1;\n        return one;\n    }",
            buggy_lines: &[2, 3],
            line_map: None,
            fixed_source: None,
            category: Some("natural"),
            votes: 5,
            unnatural_votes: 1,
            rnc: BTreeMap::new(),
            verification: None,
        };
        let a = entry(&bug, &item, &mut taken);
        let b = entry(
            &bug,
            &Item {
                key: "A_b",
                ..item.clone()
            },
            &mut taken,
        );
        assert_eq!((a.dir.as_str(), b.dir.as_str()), ("a_b", "A_b-2"));
        assert_eq!(a.files[0].0, "buggy/src/p/Foo.java");
        assert_eq!(
            a.files[0].1,
            b"class Foo {\n    int f() {\n        int one = 1;\n        return one;\n    }\n}\n"
        );
        assert_eq!(a.index["buggy_lines"], json!([3, 4]), "file lines");
        assert_eq!(a.files.len(), 2, "no fixed file without a fix");
    }

    /// A bug read as ISO-8859-1 is written back in it; a character it cannot hold falls back
    /// to UTF-8, and meta.json says which.
    #[test]
    fn java_files_keep_the_bug_encoding() {
        let file = "class Foo {\n    // caf\u{e9}\n    int f() {\n        return 1;\n    }\n}\n";
        let method = "    int f() {\n        return 1;\n    }";
        let bug = Bug {
            key: "B-1",
            project: "P",
            file_path: "Foo.java",
            method_name: "f",
            method,
            file_source: Some(file),
            encoding: Some("ISO-8859-1"),
        };
        let item = |source: &'static str| Item {
            key: "i",
            operator: "RenameVariable-1",
            level: "naming",
            summary: "",
            source,
            buggy_lines: &[2],
            line_map: None,
            fixed_source: None,
            category: None,
            votes: 0,
            unnatural_votes: 0,
            rnc: BTreeMap::new(),
            verification: None,
        };
        let e = entry(&bug, &item(method), &mut HashSet::new());
        assert!(e.files[0].1.contains(&0xe9), "é as one Latin-1 byte");
        let meta: Value = serde_json::from_slice(&e.files[1].1).expect("json");
        assert_eq!(meta["encoding"], "ISO-8859-1");
        let e = entry(
            &bug,
            &item("    int f() {\n        return 1; // \u{20ac}\n    }"),
            &mut HashSet::new(),
        );
        assert!(std::str::from_utf8(&e.files[0].1).is_ok_and(|t| t.contains("café")));
        let meta: Value = serde_json::from_slice(&e.files[1].1).expect("json");
        assert_eq!(meta["encoding"], "UTF-8");
    }
}
