//! The line diff of a buggy file against its fixed file, and the buggy-line rule.
//!
//! **Buggy lines** (one definition, used by `natstudy import bugs` and the study page): every
//! line of the buggy file that the fix deletes or replaces; for a hunk that only inserts, the
//! line after the insertion point — the line before when the one after lies outside any method
//! (or past the end of the file). Lines are compared without their terminators (`\n`, `\r\n`),
//! so a file without a trailing newline or with CRLF endings has the same buggy lines as its LF
//! twin. The diff is Myers' over whole lines with git's heuristics, as `git diff` computes it.

use imara_diff::{Algorithm, Diff, InternedInput};

/// One hunk of the diff, 0-based: the buggy file's lines `old_start..old_start + old_len` are
/// replaced by the fixed file's `new_start..new_start + new_len`. A pure insertion
/// (`old_len == 0`) goes between the buggy file's lines `old_start` and `old_start + 1`
/// (1-based), that is after `old_start` lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
}

/// What one hunk marks in the buggy file, 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    /// Lines the fix deletes or replaces.
    Lines(Vec<usize>),
    /// A pure insertion after `after` lines: the rule picks the line after or before it.
    InsertAfter(usize),
}

/// The file's lines without their terminators.
pub fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

/// The diff of two files' lines, as hunks, plus the map of unchanged lines (`equal[i] =
/// Some(j)`: buggy line `i` is fixed line `j`, 0-based). Myers' algorithm with git's
/// heuristics and its sliding of ambiguous hunks by indentation (imara-diff), so a hunk lies
/// where `git diff` puts it.
pub fn diff(old: &[&str], new: &[&str]) -> (Vec<Hunk>, Vec<Option<usize>>) {
    let mut input: InternedInput<&str> = InternedInput::default();
    input.update_before(old.iter().copied());
    input.update_after(new.iter().copied());
    let mut d = Diff::compute(Algorithm::Myers, &input);
    d.postprocess_lines(&input);
    let mut hunks = Vec::new();
    let mut equal = vec![None; old.len()];
    let (mut i, mut j) = (0usize, 0usize);
    for h in d.hunks() {
        let (bs, be) = (h.before.start as usize, h.before.end as usize);
        let (as_, ae) = (h.after.start as usize, h.after.end as usize);
        while i < bs {
            equal[i] = Some(j);
            i += 1;
            j += 1;
        }
        hunks.push(Hunk {
            old_start: bs,
            old_len: be - bs,
            new_start: as_,
            new_len: ae - as_,
        });
        i = be;
        j = ae;
    }
    while i < old.len() {
        equal[i] = Some(j);
        i += 1;
        j += 1;
    }
    (hunks, equal)
}

/// What each hunk marks in the buggy file.
pub fn marks(hunks: &[Hunk]) -> Vec<Mark> {
    hunks
        .iter()
        .map(|h| {
            if h.old_len == 0 {
                Mark::InsertAfter(h.old_start)
            } else {
                Mark::Lines((h.old_start + 1..=h.old_start + h.old_len).collect())
            }
        })
        .collect()
}

/// The buggy line a pure insertion after `after` lines marks, given which lines lie inside a
/// method (`inside(l)`, 1-based) and the file's line count: the line after the insertion point,
/// else the line before; `None` when neither lies inside a method.
pub fn insertion_line(after: usize, count: usize, inside: impl Fn(usize) -> bool) -> Option<usize> {
    let next = after + 1;
    if next <= count && inside(next) {
        Some(next)
    } else if after >= 1 && inside(after) {
        Some(after)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunks_of(a: &str, b: &str) -> Vec<Hunk> {
        diff(&lines(a), &lines(b)).0
    }

    #[test]
    fn a_replacement_marks_the_replaced_lines() {
        let h = hunks_of("a\nb\nc\nd\n", "a\nB\nC\nd\n");
        assert_eq!(marks(&h), vec![Mark::Lines(vec![2, 3])]);
    }

    #[test]
    fn a_deletion_marks_the_deleted_lines() {
        let h = hunks_of("a\nb\nc\n", "a\nc\n");
        assert_eq!(marks(&h), vec![Mark::Lines(vec![2])]);
    }

    #[test]
    fn a_pure_insertion_marks_the_point_after_so_many_lines() {
        let h = hunks_of("a\nb\nc\n", "a\nb\nnew\nc\n");
        assert_eq!(marks(&h), vec![Mark::InsertAfter(2)]);
        // inside a method: the line after; at a method's end the line after is outside
        assert_eq!(insertion_line(2, 3, |_| true), Some(3));
        assert_eq!(insertion_line(3, 3, |_| true), Some(3));
        assert_eq!(insertion_line(2, 3, |l| l <= 2), Some(2));
        assert_eq!(insertion_line(2, 3, |_| false), None);
        assert_eq!(insertion_line(0, 3, |l| l == 1), Some(1));
    }

    #[test]
    fn a_deletion_next_to_an_insertion_is_one_hunk() {
        let h = hunks_of("a\nb\nc\n", "a\nx\ny\nc\n");
        assert_eq!(
            h,
            vec![Hunk {
                old_start: 1,
                old_len: 1,
                new_start: 1,
                new_len: 2
            }]
        );
    }

    #[test]
    fn line_endings_and_a_missing_last_newline_change_nothing() {
        let lf = "a\nb\nc\n";
        assert!(hunks_of(lf, "a\r\nb\r\nc\r\n").is_empty());
        assert!(hunks_of(lf, "a\nb\nc").is_empty());
        let h = hunks_of("a\r\nb\r\nc", "a\r\nB\r\nc");
        assert_eq!(marks(&h), vec![Mark::Lines(vec![2])]);
    }

    #[test]
    fn unchanged_lines_map_to_their_place_in_the_fixed_file() {
        let (_, eq) = diff(&lines("a\nb\nc\n"), &lines("z\na\nc\n"));
        assert_eq!(eq, vec![Some(1), None, Some(2)]);
    }
}
