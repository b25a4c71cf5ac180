//! A transformed method's lines against its original's: the hunks of their line diff (the
//! line map) and where the bug's lines went.

use similar::{DiffOp, TextDiff};

use crate::Hunk;

/// What a transformed method's lines are with respect to its bug: the changed lines (the line
/// map), whether a buggy line changed, and the buggy lines in the transformed method's
/// coordinates (an unchanged buggy line where it moved to; a changed one as every line that
/// replaced it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LineData {
    pub line_map: Vec<Hunk>,
    pub touches_buggy: bool,
    pub buggy_lines: Vec<u32>,
}

/// The line data of `transformed` against `original` and its 1-based `buggy` lines — the same
/// hunks `transform` reports, so a generated item and an imported one agree.
///
/// A buggy line follows every move: kept in place, it is where the diff aligns it; deleted or
/// replaced, it is found where it went when its text (indentation aside) is among the lines the
/// transformation inserted, nearest first (SwapStatement, ReverseIf, a loop's body moved);
/// rewritten, the lines that replace it are buggy; deleted outright (merged into another
/// declaration), the line now at its place is. So a bug with buggy lines never gives an item
/// without any.
pub fn line_data(original: &str, buggy: &[u32], transformed: &str) -> LineData {
    let is_buggy = |l: usize| buggy.iter().any(|b| *b as usize == l);
    let old: Vec<&str> = original.lines().collect();
    let new: Vec<&str> = transformed.lines().collect();
    let mut lines = Vec::new();
    let mut touches_buggy = false;
    // buggy lines the diff deletes or replaces: (old 0-based, new position of the hunk, the
    // hunk's new lines when it replaces)
    let mut moved: Vec<(usize, usize, Option<std::ops::Range<usize>>)> = Vec::new();
    let mut inserted: Vec<usize> = Vec::new();
    for op in line_diff(original, transformed).ops() {
        match *op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => lines.extend(
                (0..len)
                    .filter(|k| is_buggy(old_index + k + 1))
                    .map(|k| (new_index + k + 1) as u32),
            ),
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => {
                for o in (old_index..old_index + old_len).filter(|o| is_buggy(o + 1)) {
                    touches_buggy = true;
                    moved.push((o, new_index, None));
                }
            }
            DiffOp::Insert {
                new_index, new_len, ..
            } => inserted.extend(new_index..new_index + new_len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                inserted.extend(new_index..new_index + new_len);
                for o in (old_index..old_index + old_len).filter(|o| is_buggy(o + 1)) {
                    touches_buggy = true;
                    moved.push((o, new_index, Some(new_index..new_index + new_len)));
                }
            }
        }
    }
    let mut claimed = vec![false; new.len()];
    for (o, at, hunk) in moved {
        let text = old.get(o).map_or("", |t| t.trim());
        let found = inserted
            .iter()
            .copied()
            .filter(|&n| {
                !text.is_empty() && !claimed[n] && new.get(n).is_some_and(|t| t.trim() == text)
            })
            .min_by_key(|&n| n.abs_diff(at));
        match (found, hunk) {
            (Some(n), _) => {
                claimed[n] = true;
                lines.push(n as u32 + 1);
            }
            (None, Some(range)) => lines.extend(range.map(|n| n as u32 + 1)),
            (None, None) if at < new.len() => lines.push(at as u32 + 1),
            (None, None) if at > 0 => lines.push(at as u32),
            (None, None) => {}
        }
    }
    lines.sort_unstable();
    lines.dedup();
    LineData {
        line_map: hunks(original, transformed),
        touches_buggy,
        buggy_lines: lines,
    }
}

/// A line diff that gives up refining after a second (a hostile, huge import then gets a
/// coarser but still correct diff instead of holding a thread for minutes).
pub(crate) fn line_diff<'a>(old: &'a str, new: &'a str) -> TextDiff<'a, 'a, 'a, str> {
    TextDiff::configure()
        .timeout(std::time::Duration::from_secs(1))
        .diff_lines(old, new)
}

/// The line diff of two method texts as hunks.
pub(crate) fn hunks(old: &str, new: &str) -> Vec<Hunk> {
    let diff = line_diff(old, new);
    diff.ops()
        .iter()
        .filter_map(|op| match *op {
            DiffOp::Equal { .. } => None,
            DiffOp::Delete {
                old_index, old_len, ..
            } => Some(Hunk {
                original: (old_index + 1..=old_index + old_len).collect(),
                transformed: Vec::new(),
            }),
            DiffOp::Insert {
                new_index, new_len, ..
            } => Some(Hunk {
                original: Vec::new(),
                transformed: (new_index + 1..=new_index + new_len).collect(),
            }),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => Some(Hunk {
                original: (old_index + 1..=old_index + old_len).collect(),
                transformed: (new_index + 1..=new_index + new_len).collect(),
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buggy_lines_follow_the_transformation() {
        let original = "int f(int a) {\n    int b = a + 1;\n    if (b > 2) {\n        return b;\n    }\n    return 0;\n}\n";
        // a statement inserted above the buggy `if` (line 3) moves it to line 4; the buggy
        // `return b;` (line 4) is rewritten over two lines (5 and 6)
        let transformed = "int f(int a) {\n    int b = a + 1;\n    int c = b;\n    if (b > 2) {\n        int r = b;\n        return r;\n    }\n    return 0;\n}\n";
        let d = line_data(original, &[3, 4], transformed);
        assert!(d.touches_buggy);
        assert_eq!(d.buggy_lines, vec![4, 5, 6]);
        assert_eq!(d.line_map, hunks(original, transformed));
        // a change away from the buggy lines: they only move
        let renamed_tail = original.replace("return 0;", "return -0;");
        let d = line_data(original, &[3, 4], &renamed_tail);
        assert!(!d.touches_buggy);
        assert_eq!(d.buggy_lines, vec![3, 4]);
    }
}
