//! The diff annotators see: a line diff of original vs transformed method (similar), with
//! word-level emphasis inside changed lines and the buggy lines marked, as rows that render
//! side by side or unified.

use similar::{ChangeTag, DiffOp, TextDiff};

/// A piece of a line; `changed` pieces are the tokens the transformation touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub text: String,
    pub changed: bool,
}

/// How a row of the diff relates the two sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    Same,
    Removed,
    Added,
    Changed,
}

/// One row: a line of the original (left), of the transformed method (right), or both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub kind: RowKind,
    pub old_no: Option<u32>,
    pub new_no: Option<u32>,
    pub old: Vec<Segment>,
    pub new: Vec<Segment>,
    /// The original line is one of the buggy lines.
    pub buggy: bool,
}

fn strip_newline(s: &str) -> String {
    s.strip_suffix('\n')
        .map(|s| s.strip_suffix('\r').unwrap_or(s))
        .unwrap_or(s)
        .to_owned()
}

fn plain(line: &str) -> Vec<Segment> {
    vec![Segment {
        text: strip_newline(line),
        changed: false,
    }]
}

/// Merges neighbouring segments of the same kind and drops the line end.
fn segments(parts: Vec<(bool, String)>) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    for (changed, text) in parts {
        let text = text.replace(['\n', '\r'], "");
        if text.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.changed == changed => last.text.push_str(&text),
            _ => out.push(Segment { text, changed }),
        }
    }
    out
}

/// Java-ish tokens: identifiers/numbers, runs of whitespace, and single other characters.
fn tokens(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
        let end = if word(c) || c.is_whitespace() {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if (word(c) && word(d)) || (c.is_whitespace() && d.is_whitespace()) {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            end
        } else {
            i + c.len_utf8()
        };
        debug_assert_eq!(start, i);
        out.push(&line[i..end]);
        start = end;
    }
    out
}

/// The two lines as segments, the tokens that differ marked changed.
fn token_diff(old: &str, new: &str) -> (Vec<Segment>, Vec<Segment>) {
    let (a, b) = (tokens(old), tokens(new));
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &a, &b);
    let (mut left, mut right) = (Vec::new(), Vec::new());
    for op in ops {
        for change in op.iter_changes(&a, &b) {
            let text = change.value().to_string();
            match change.tag() {
                ChangeTag::Equal => {
                    left.push((false, text.clone()));
                    right.push((false, text));
                }
                ChangeTag::Delete => left.push((true, text)),
                ChangeTag::Insert => right.push((true, text)),
            }
        }
    }
    (segments(left), segments(right))
}

/// The rows of the diff of `old` → `new`; `buggy` are 1-based line numbers of `old`.
pub fn diff_rows(old: &str, new: &str, buggy: &[u32]) -> Vec<Row> {
    let diff = TextDiff::from_lines(old, new);
    let old_lines: Vec<&str> = diff.old_slices().to_vec();
    let new_lines: Vec<&str> = diff.new_slices().to_vec();
    let is_buggy = |i: usize| buggy.contains(&(i as u32 + 1));
    let mut rows = Vec::new();
    for op in diff.ops() {
        match *op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for k in 0..len {
                    rows.push(Row {
                        kind: RowKind::Same,
                        old_no: Some((old_index + k) as u32 + 1),
                        new_no: Some((new_index + k) as u32 + 1),
                        old: plain(old_lines[old_index + k]),
                        new: plain(new_lines[new_index + k]),
                        buggy: is_buggy(old_index + k),
                    });
                }
            }
            DiffOp::Delete {
                old_index, old_len, ..
            } => {
                for k in 0..old_len {
                    rows.push(Row {
                        kind: RowKind::Removed,
                        old_no: Some((old_index + k) as u32 + 1),
                        new_no: None,
                        old: plain(old_lines[old_index + k]),
                        new: Vec::new(),
                        buggy: is_buggy(old_index + k),
                    });
                }
            }
            DiffOp::Insert {
                new_index, new_len, ..
            } => {
                for k in 0..new_len {
                    rows.push(Row {
                        kind: RowKind::Added,
                        old_no: None,
                        new_no: Some((new_index + k) as u32 + 1),
                        old: Vec::new(),
                        new: plain(new_lines[new_index + k]),
                        buggy: false,
                    });
                }
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                // token-level emphasis for the paired lines of this hunk
                let pairs = old_len.min(new_len);
                let mut removed: Vec<Vec<Segment>> = Vec::new();
                let mut added: Vec<Vec<Segment>> = Vec::new();
                for k in 0..pairs {
                    let (o, a) = token_diff(
                        &strip_newline(old_lines[old_index + k]),
                        &strip_newline(new_lines[new_index + k]),
                    );
                    removed.push(o);
                    added.push(a);
                }
                let n = old_len.max(new_len);
                for k in 0..n {
                    let (o, a) = (k < old_len, k < new_len);
                    rows.push(Row {
                        kind: match (o, a) {
                            (true, true) => RowKind::Changed,
                            (true, false) => RowKind::Removed,
                            _ => RowKind::Added,
                        },
                        old_no: o.then(|| (old_index + k) as u32 + 1),
                        new_no: a.then(|| (new_index + k) as u32 + 1),
                        old: if o {
                            removed
                                .get(k)
                                .cloned()
                                .unwrap_or_else(|| plain(old_lines[old_index + k]))
                        } else {
                            Vec::new()
                        },
                        new: if a {
                            added
                                .get(k)
                                .cloned()
                                .unwrap_or_else(|| plain(new_lines[new_index + k]))
                        } else {
                            Vec::new()
                        },
                        buggy: o && is_buggy(old_index + k),
                    });
                }
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    /// A compact rendering: `=`/`-`/`+`/`~` rows, `[changed]` pieces, `!` on buggy lines.
    fn render(rows: &[Row]) -> String {
        let side = |s: &[Segment]| {
            s.iter()
                .map(|g| {
                    if g.changed {
                        format!("[{}]", g.text)
                    } else {
                        g.text.clone()
                    }
                })
                .collect::<String>()
        };
        rows.iter()
            .map(|r| {
                let mark = match r.kind {
                    RowKind::Same => '=',
                    RowKind::Removed => '-',
                    RowKind::Added => '+',
                    RowKind::Changed => '~',
                };
                let bug = if r.buggy { "!" } else { " " };
                format!("{mark}{bug} {} | {}\n", side(&r.old), side(&r.new))
            })
            .collect()
    }

    fn check(old: &str, new: &str, buggy: &[u32], expect: expect_test::Expect) {
        expect.assert_eq(&render(&diff_rows(old, new, buggy)));
    }

    #[test]
    fn renamed_variable_is_emphasised_word_by_word() {
        check(
            "int f(int count) {\n    return count + 1;\n}\n",
            "int f(int c) {\n    return c + 1;\n}\n",
            &[2],
            expect![[r#"
                ~  int f(int [count]) { | int f(int [c]) {
                ~!     return [count] + 1; |     return [c] + 1;
                =  } | }
            "#]],
        );
    }

    #[test]
    fn inserted_and_removed_lines() {
        check(
            "for (int i = 0; i < n; i++) {\n    s += i;\n}\n",
            "int i = 0;\nwhile (i < n) {\n    s += i;\n    i++;\n}\n",
            &[1],
            expect![[r#"
                ~! [for (]int i = 0;[ i < n; i++) {] | int i = 0;
                +   | while (i < n) {
                =      s += i; |     s += i;
                +   |     i++;
                =  } | }
            "#]],
        );
    }
}
