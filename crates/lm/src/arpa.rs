//! The ARPA text format (as KenLM and SRILM read and write it).

use std::collections::HashMap;
use std::io::{BufRead, Write};

use super::{Entry, LmError, Model};

/// Writes `model` as ARPA; n-grams of an order are sorted by their words for stable output.
pub fn write(model: &Model, out: &mut dyn Write) -> Result<(), LmError> {
    writeln!(out, "\\data\\")?;
    for (i, g) in model.grams.iter().enumerate() {
        writeln!(out, "ngram {}={}", i + 1, g.len())?;
    }
    let top = model.order();
    for (i, grams) in model.grams.iter().enumerate() {
        writeln!(out, "\n\\{}-grams:", i + 1)?;
        let mut rows: Vec<(String, &Entry)> = grams
            .iter()
            .map(|(g, e)| {
                (
                    g.iter()
                        .map(|w| model.words[*w as usize].as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                    e,
                )
            })
            .collect();
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        for (words, e) in rows {
            if i + 1 < top {
                writeln!(out, "{}\t{}\t{}", fmt(e.prob), words, fmt(e.backoff))?;
            } else {
                writeln!(out, "{}\t{}", fmt(e.prob), words)?;
            }
        }
    }
    writeln!(out, "\n\\end\\")?;
    Ok(())
}

fn fmt(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else {
        format!("{:.7}", x)
    }
}

/// The highest order a model file may declare.
pub const MAX_ORDER: usize = 16;

/// Reads an ARPA model. Memory grows with the n-grams read, never with the counts the file
/// declares (an untrusted file may claim any count).
pub fn read(input: impl BufRead) -> Result<Model, LmError> {
    let mut model = Model::default();
    let mut declared: Vec<usize> = Vec::new();
    let mut section: Option<usize> = None;
    let bad = |line: usize, reason: &str| LmError::Arpa {
        line,
        reason: reason.to_owned(),
    };
    for (i, line) in input.lines().enumerate() {
        let line = line?;
        let no = i + 1;
        let t = line.trim();
        if t.is_empty() || t == "\\data\\" {
            continue;
        }
        if t == "\\end\\" {
            break;
        }
        if let Some(rest) = t.strip_prefix("ngram ") {
            let (n, count) = rest
                .split_once('=')
                .ok_or_else(|| bad(no, "expected ngram N=COUNT"))?;
            let n: usize = n.trim().parse().map_err(|_| bad(no, "bad order"))?;
            let count: usize = count.trim().parse().map_err(|_| bad(no, "bad count"))?;
            if n != declared.len() + 1 {
                return Err(bad(no, "orders must be declared in sequence"));
            }
            if n > MAX_ORDER {
                return Err(bad(no, &format!("order {n} is above {MAX_ORDER}")));
            }
            declared.push(count);
            // The count is the file's claim: tables grow with the n-grams actually read.
            model.grams.push(HashMap::new());
            continue;
        }
        if let Some(rest) = t.strip_prefix('\\') {
            let n: usize = rest
                .trim_end_matches("-grams:")
                .parse()
                .map_err(|_| bad(no, "bad section header"))?;
            if n == 0 || n > declared.len() {
                return Err(bad(no, "section for an undeclared order"));
            }
            section = Some(n);
            continue;
        }
        let n = section.ok_or_else(|| bad(no, "n-gram outside a section"))?;
        let mut parts = line.split('\t');
        let prob: f64 = parts
            .next()
            .and_then(|p| p.trim().parse().ok())
            .ok_or_else(|| bad(no, "bad probability"))?;
        let words = parts.next().ok_or_else(|| bad(no, "missing words"))?;
        let backoff: f64 = match parts.next() {
            Some(b) => b.trim().parse().map_err(|_| bad(no, "bad backoff"))?,
            None => 0.0,
        };
        let gram: Vec<u32> = words
            .split(' ')
            .filter(|w| !w.is_empty())
            .map(|w| model.intern(w))
            .collect();
        if gram.len() != n {
            return Err(bad(no, &format!("expected {n} words")));
        }
        model.grams[n - 1].insert(gram, Entry { prob, backoff });
    }
    for (i, &count) in declared.iter().enumerate() {
        if model.grams[i].len() != count {
            return Err(LmError::Arpa {
                line: 0,
                reason: format!(
                    "{}-grams: declared {count}, found {}",
                    i + 1,
                    model.grams[i].len()
                ),
            });
        }
    }
    if model.grams.is_empty() {
        return Err(LmError::Arpa {
            line: 0,
            reason: "no \\data\\ section".into(),
        });
    }
    Ok(model)
}
