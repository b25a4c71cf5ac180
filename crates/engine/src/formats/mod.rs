//! The interchange formats (see `shared/reference/README.md`): readers that validate every
//! record before anything is written, and report errors by file, line and field.

pub mod benchmark;
pub mod items;
pub mod replication;
pub mod results;
pub mod survey;

/// The ending of an imported participant's code (`S3@import`): an online participant `S3` of
/// the same study is another person.
pub const IMPORTED_SUFFIX: &str = "@import";

use std::fmt;

/// One problem in an input file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: String,
    /// 1-based line; 0 when the problem concerns the whole file.
    pub line: usize,
    pub field: String,
    pub reason: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(
                f,
                "{}:{}: field `{}`: {}",
                self.file, self.line, self.field, self.reason
            )
        } else {
            write!(f, "{}: field `{}`: {}", self.file, self.field, self.reason)
        }
    }
}

/// Every problem found in an input (at most [`MAX_PROBLEMS`] are kept).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct FormatError {
    pub problems: Vec<Problem>,
    pub truncated: bool,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        writeln!(
            f,
            "invalid input ({n}{} problem{}; nothing was imported):",
            if self.truncated { "+" } else { "" },
            if n == 1 { "" } else { "s" }
        )?;
        for p in &self.problems {
            writeln!(f, "  {p}")?;
        }
        Ok(())
    }
}

pub const MAX_PROBLEMS: usize = 50;

/// Collects problems while a reader walks its input.
#[derive(Debug, Default)]
pub struct Problems {
    list: Vec<Problem>,
    truncated: bool,
}

impl Problems {
    pub fn push(&mut self, file: &str, line: usize, field: &str, reason: impl Into<String>) {
        if self.list.len() >= MAX_PROBLEMS {
            self.truncated = true;
            return;
        }
        self.list.push(Problem {
            file: file.to_owned(),
            line,
            field: field.to_owned(),
            reason: reason.into(),
        });
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// `Ok(value)` when nothing was wrong; else every problem, file by file in line order (a
    /// file's own problems, line 0, first), each line's in the order found.
    pub fn finish<T>(mut self, value: T) -> Result<T, FormatError> {
        if self.list.is_empty() {
            Ok(value)
        } else {
            self.list
                .sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
            Err(FormatError {
                problems: self.list,
                truncated: self.truncated,
            })
        }
    }
}

pub use natstudy_vocab::Level;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_come_out_in_line_order() {
        let mut p = Problems::default();
        p.push("b.jsonl", 7, "source", "late");
        p.push("b.jsonl", 2, "bug_id", "early");
        p.push("a.jsonl", 9, "id", "other file");
        p.push("b.jsonl", 2, "file", "same line, found second");
        let err = p.finish(()).expect_err("problems");
        let order: Vec<(&str, usize, &str)> = err
            .problems
            .iter()
            .map(|x| (x.file.as_str(), x.line, x.field.as_str()))
            .collect();
        assert_eq!(
            order,
            vec![
                ("a.jsonl", 9, "id"),
                ("b.jsonl", 2, "bug_id"),
                ("b.jsonl", 2, "file"),
                ("b.jsonl", 7, "source")
            ]
        );
    }
}
