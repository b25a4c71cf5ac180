//! `npr_results.csv` (`tool,target,status[,patch,developer_patch]`) and
//! `ce_scores.csv` (`model,target,cross_entropy`).

use std::collections::{HashMap, HashSet};

use super::{FormatError, Problems};

/// A repair tool's outcome on one target (a bug id or a transformation id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NprRecord {
    pub tool: String,
    pub target: String,
    /// 0 wrong, 1 plausible, 2 correct
    pub status: u8,
    pub patch: Option<String>,
    pub developer_patch: Option<String>,
}

/// A language model's cross-entropy of one target.
#[derive(Debug, Clone, PartialEq)]
pub struct CeRecord {
    pub model: String,
    pub target: String,
    pub cross_entropy: f64,
}

pub fn parse_status(s: &str) -> Option<u8> {
    match s.trim() {
        "wrong" | "0" => Some(0),
        "plausible" | "1" => Some(1),
        "correct" | "2" => Some(2),
        _ => None,
    }
}

struct Csv {
    headers: Vec<String>,
    rows: Vec<(usize, csv::StringRecord)>,
}

fn read_csv(text: &str, file: &str, required: &[&str], problems: &mut Problems) -> Option<Csv> {
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(text.as_bytes());
    let headers: Vec<String> = match rdr.headers() {
        Ok(h) => h.iter().map(|s| s.trim().to_owned()).collect(),
        Err(e) => {
            problems.push(file, 1, "(header)", format!("unreadable header: {e}"));
            return None;
        }
    };
    for r in required {
        if !headers.iter().any(|h| h == r) {
            problems.push(file, 1, r, "missing column");
        }
    }
    if !problems.is_empty() {
        return None;
    }
    let mut rows = Vec::new();
    for rec in rdr.records() {
        match rec {
            Ok(r) => {
                let line = r.position().map(|p| p.line() as usize).unwrap_or(0);
                rows.push((line, r));
            }
            Err(e) => {
                let line = e.position().map(|p| p.line() as usize).unwrap_or(0);
                problems.push(file, line, "(row)", format!("unreadable row: {e}"));
            }
        }
    }
    Some(Csv { headers, rows })
}

fn col(headers: &[String], name: &str) -> Option<usize> {
    headers.iter().position(|h| h == name)
}

/// A table of values keyed by (`key` column, target): the NPR results (key `tool`, value
/// `status`) and the cross-entropy scores (key `model`, value `cross_entropy`).
struct Keyed<'s> {
    key: &'s str,
    value: &'s str,
    /// "result" or "score", for the duplicate message.
    noun: &'s str,
}

impl Keyed<'_> {
    /// Checks every row (key non-empty, target known, value parses, no (key, target) twice)
    /// and hands the good ones to `keep` with a getter of any column by name.
    fn read<V>(
        &self,
        text: &str,
        file: &str,
        targets: &HashSet<String>,
        parse: impl Fn(&str) -> Result<V, String>,
        mut keep: impl FnMut(&dyn Fn(&str) -> String, String, String, V),
    ) -> Result<(), FormatError> {
        let mut problems = Problems::default();
        let Some(csv) = read_csv(text, file, &[self.key, "target", self.value], &mut problems)
        else {
            return problems.finish(());
        };
        let mut seen: HashMap<(String, String), usize> = HashMap::new();
        for (line, r) in &csv.rows {
            let get = |name: &str| {
                col(&csv.headers, name)
                    .and_then(|i| r.get(i))
                    .map(str::trim)
                    .unwrap_or("")
                    .to_owned()
            };
            let (key, target) = (get(self.key), get("target"));
            let mut ok = true;
            if key.is_empty() {
                problems.push(file, *line, self.key, "empty");
                ok = false;
            }
            if !targets.contains(&target) {
                problems.push(
                    file,
                    *line,
                    "target",
                    format!(
                        "unknown target {target:?} (not a bug or transformation id of the study)"
                    ),
                );
                ok = false;
            }
            let value = parse(&get(self.value));
            if let Err(why) = &value {
                problems.push(file, *line, self.value, why.clone());
                ok = false;
            }
            if let Some(first) = seen.insert((key.clone(), target.clone()), *line) {
                problems.push(
                    file,
                    *line,
                    "target",
                    format!(
                        "duplicate {} for {key} on {target} (first on line {first})",
                        self.noun
                    ),
                );
                ok = false;
            }
            if let (true, Ok(value)) = (ok, value) {
                keep(&get, key, target, value);
            }
        }
        problems.finish(())
    }
}

/// Reads NPR results; `targets` are the study's known bug and transformation ids.
pub fn parse_npr(
    text: &str,
    file: &str,
    targets: &HashSet<String>,
) -> Result<Vec<NprRecord>, FormatError> {
    let mut out = Vec::new();
    let table = Keyed {
        key: "tool",
        value: "status",
        noun: "result",
    };
    let status =
        |s: &str| parse_status(s).ok_or(format!("{s:?} is not wrong, plausible or correct"));
    table.read(text, file, targets, status, |get, tool, target, status| {
        let opt = |name: &str| Some(get(name)).filter(|s| !s.is_empty());
        out.push(NprRecord {
            tool,
            target,
            status,
            patch: opt("patch"),
            developer_patch: opt("developer_patch"),
        });
    })?;
    Ok(out)
}

/// Reads cross-entropy scores; `targets` are the study's known bug and transformation ids.
pub fn parse_ce(
    text: &str,
    file: &str,
    targets: &HashSet<String>,
) -> Result<Vec<CeRecord>, FormatError> {
    let mut out = Vec::new();
    let table = Keyed {
        key: "model",
        value: "cross_entropy",
        noun: "score",
    };
    let number = |s: &str| {
        s.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or(format!("{s:?} is not a non-negative number"))
    };
    table.read(
        text,
        file,
        targets,
        number,
        |_, model, target, cross_entropy| {
            out.push(CeRecord {
                model,
                target,
                cross_entropy,
            });
        },
    )?;
    Ok(out)
}
