//! The part of a method's file a participant is shown under *Context*: the method with the
//! lines around it, bounded, so that a huge file (a generated parser, a 4 MiB source) makes
//! neither a huge page nor a huge hydration. Plain data in, plain data out.

/// Lines of the file kept on each side of the method, at most.
pub const AROUND: usize = 200;
/// Bytes of the file kept besides the method's own lines, at most.
pub const MAX_BYTES: usize = 96 * 1024;
/// Characters of one line kept (a minified line is cut, with an ellipsis).
pub const MAX_LINE: usize = 400;

/// A window of a file: its text, the 1-based number of its first line, and the file's lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub text: String,
    pub first_line: u32,
    pub total_lines: u32,
}

/// The method (`method_lines` lines from 1-based `method_line`, when found in the file) with
/// up to [`AROUND`] lines on each side, growing outward from the method one line a side at a
/// time while the lines besides the method's stay within [`MAX_BYTES`]; without the method's
/// place, the file's first lines. Every line is cut at [`MAX_LINE`] characters.
pub fn window(file: &str, method_line: Option<u32>, method_lines: u32) -> Window {
    let lines: Vec<&str> = file.lines().collect();
    let total = lines.len();
    let (start, len) = match method_line {
        Some(m) if m >= 1 && (m as usize) <= total => {
            let s = m as usize - 1;
            (s, (method_lines as usize).max(1).min(total - s))
        }
        _ => (0, 0),
    };
    // what a line adds to the text: as shown (cut, with its ellipsis) and its newline
    let cost = |i: usize| {
        let (kept, cut) = shown(lines[i]);
        kept.len() + if cut { '…'.len_utf8() } else { 0 } + 1
    };
    let (mut lo, mut hi) = (start, start + len);
    let mut budget = MAX_BYTES;
    let (mut up, mut down) = (0, 0);
    loop {
        let mut grew = false;
        if up < AROUND && lo > 0 && cost(lo - 1) <= budget {
            lo -= 1;
            up += 1;
            budget -= cost(lo);
            grew = true;
        }
        let below = if len == 0 { 2 * AROUND } else { AROUND };
        if down < below && hi < total && cost(hi) <= budget {
            budget -= cost(hi);
            hi += 1;
            down += 1;
            grew = true;
        }
        if !grew {
            break;
        }
    }
    let mut text = String::new();
    for l in &lines[lo..hi] {
        let (kept, cut) = shown(l);
        text.push_str(kept);
        if cut {
            text.push('…');
        }
        text.push('\n');
    }
    Window {
        text,
        first_line: lo as u32 + 1,
        total_lines: total as u32,
    }
}

/// A line as shown: its first [`MAX_LINE`] characters, and whether it was cut.
fn shown(line: &str) -> (&str, bool) {
    match line.char_indices().nth(MAX_LINE) {
        Some((at, _)) => (&line[..at], true),
        None => (line, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn a_small_file_is_shown_whole() {
        let f = file(30);
        let w = window(&f, Some(10), 5);
        assert_eq!((w.first_line, w.total_lines), (1, 30));
        assert_eq!(w.text, f);
    }

    #[test]
    fn a_long_file_is_the_method_and_the_lines_around_it() {
        let f = file(5_000);
        let w = window(&f, Some(2_000), 10);
        assert_eq!(w.first_line, 2_000 - AROUND as u32);
        let shown: Vec<&str> = w.text.lines().collect();
        assert_eq!(shown.len(), 10 + 2 * AROUND);
        assert_eq!(shown[AROUND], "line 2000");
        assert_eq!(shown.last(), Some(&"line 2209"));
    }

    #[test]
    fn the_bytes_around_the_method_are_bounded() {
        // 4 MiB in lines of 2 KiB: the method's lines, and what fits in the budget around it
        let line = "x".repeat(2_000);
        let f: String = (0..2_000).map(|_| format!("{line}\n")).collect();
        let w = window(&f, Some(1_000), 3);
        // every line cut to MAX_LINE characters and an ellipsis
        let each = MAX_LINE + '…'.len_utf8() + 1;
        assert!(w.text.lines().all(|l| l.chars().count() == MAX_LINE + 1));
        let around = MAX_BYTES / each;
        assert_eq!(w.text.len(), (3 + around) * each);
        // as many lines above the method as below (give or take the last one)
        assert_eq!(w.first_line as usize, 1_000 - around.div_ceil(2));
    }

    #[test]
    fn without_the_methods_place_the_file_begins() {
        let f = file(5_000);
        let w = window(&f, None, 10);
        assert_eq!(w.first_line, 1);
        assert_eq!(w.text.lines().count(), 2 * AROUND);
        let past_end = window(&f, Some(9_999), 3);
        assert_eq!(past_end.first_line, 1);
    }

    #[test]
    fn a_cut_line_keeps_whole_characters() {
        let f = "é".repeat(MAX_LINE + 10);
        let w = window(&f, Some(1), 1);
        assert_eq!(w.text, format!("{}…\n", "é".repeat(MAX_LINE)));
    }
}
