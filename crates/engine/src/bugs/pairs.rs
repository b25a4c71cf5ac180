//! `pairs.csv`: `bug_id,project,buggy,fixed`, one bug a row; `buggy` and `fixed` are checkout
//! folders or single files, relative to the CSV unless absolute.

use std::collections::HashMap;

use crate::formats::{FormatError, Problems};

/// One row of `pairs.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    /// The row's line in the CSV (the header is line 1).
    pub line: usize,
    pub bug_id: String,
    pub project: String,
    pub buggy: String,
    pub fixed: String,
}

const COLUMNS: [&str; 4] = ["bug_id", "project", "buggy", "fixed"];
/// The most rows one file may hold (Defects4J has 835 active bugs).
pub const MAX_PAIRS: usize = 100_000;

/// Reads `pairs.csv`; `file` names it in messages. Every problem is reported, by line and
/// column: unknown or missing columns, empty cells, a bug twice, too many rows.
pub fn parse(text: &str, file: &str) -> Result<Vec<Pair>, FormatError> {
    let mut problems = Problems::default();
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let header: Vec<String> = match reader.headers() {
        Ok(h) => h.iter().map(|c| c.trim().to_owned()).collect(),
        Err(e) => {
            problems.push(file, 1, "(header)", format!("unreadable: {e}"));
            return problems.finish(Vec::new());
        }
    };
    for c in &header {
        if !COLUMNS.contains(&c.as_str()) {
            problems.push(
                file,
                1,
                c,
                format!("unknown column (expected {})", COLUMNS.join(",")),
            );
        }
    }
    let mut at = HashMap::new();
    for c in COLUMNS {
        match header.iter().position(|h| h == c) {
            Some(i) => {
                at.insert(c, i);
            }
            None => problems.push(file, 1, c, "missing column"),
        }
    }
    if !problems.is_empty() {
        return problems.finish(Vec::new());
    }
    let mut out = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, row) in reader.records().enumerate() {
        let line = i + 2;
        let row = match row {
            Ok(r) => r,
            Err(e) => {
                problems.push(file, line, "(row)", format!("unreadable: {e}"));
                continue;
            }
        };
        if out.len() >= MAX_PAIRS {
            problems.push(file, line, "(row)", format!("more than {MAX_PAIRS} rows"));
            break;
        }
        if row.len() != header.len() {
            problems.push(
                file,
                line,
                "(row)",
                format!("{} cells, the header has {}", row.len(), header.len()),
            );
            continue;
        }
        let mut cell = |c: &str| {
            let v = row.get(at[c]).unwrap_or("").trim().to_owned();
            if v.is_empty() {
                problems.push(file, line, c, "empty");
            }
            v
        };
        let pair = Pair {
            line,
            bug_id: cell("bug_id"),
            project: cell("project"),
            buggy: cell("buggy"),
            fixed: cell("fixed"),
        };
        if pair.bug_id.is_empty() {
            continue;
        }
        if let Some(first) = seen.insert(pair.bug_id.clone(), line) {
            problems.push(
                file,
                line,
                "bug_id",
                format!("{} is already on line {first}", pair.bug_id),
            );
        }
        out.push(pair);
    }
    problems.finish(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_read_by_column_name() {
        let p = parse("project,bug_id,fixed,buggy\nLang,Lang-1,f,b\n", "pairs.csv").expect("ok");
        assert_eq!(
            p,
            vec![Pair {
                line: 2,
                bug_id: "Lang-1".into(),
                project: "Lang".into(),
                buggy: "b".into(),
                fixed: "f".into()
            }]
        );
    }

    #[test]
    fn unknown_columns_empty_cells_and_repeats_are_named_by_line() {
        let e = parse("bug_id,project,buggy,fixed,extra\n", "p.csv").expect_err("extra");
        assert_eq!(
            e.problems[0].to_string(),
            "p.csv:1: field `extra`: unknown column (expected bug_id,project,buggy,fixed)"
        );
        let e = parse("bug_id,project,buggy,fixed\nA,P,,f\nA,P,b,f\n", "p.csv").expect_err("bad");
        let got: Vec<String> = e.problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(
            got,
            vec![
                "p.csv:2: field `buggy`: empty",
                "p.csv:3: field `bug_id`: A is already on line 2"
            ]
        );
    }
}
