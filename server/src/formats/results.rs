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

/// Reads NPR results; `targets` are the study's known bug and transformation ids.
pub fn parse_npr(
    text: &str,
    file: &str,
    targets: &HashSet<String>,
) -> Result<Vec<NprRecord>, FormatError> {
    let mut problems = Problems::default();
    let Some(csv) = read_csv(text, file, &["tool", "target", "status"], &mut problems) else {
        return problems.finish(Vec::new());
    };
    let (t, g, s) = (
        col(&csv.headers, "tool"),
        col(&csv.headers, "target"),
        col(&csv.headers, "status"),
    );
    let (p, d) = (
        col(&csv.headers, "patch"),
        col(&csv.headers, "developer_patch"),
    );
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    let mut out = Vec::new();
    for (line, r) in &csv.rows {
        let get = |i: Option<usize>| i.and_then(|i| r.get(i)).map(str::trim).unwrap_or("");
        let (tool, target, status) = (get(t), get(g), get(s));
        let mut ok = true;
        if tool.is_empty() {
            problems.push(file, *line, "tool", "empty");
            ok = false;
        }
        if !targets.contains(target) {
            problems.push(
                file,
                *line,
                "target",
                format!("unknown target {target:?} (not a bug or transformation id of the study)"),
            );
            ok = false;
        }
        let status = parse_status(status);
        if status.is_none() {
            problems.push(
                file,
                *line,
                "status",
                format!("{:?} is not wrong, plausible or correct", get(s)),
            );
            ok = false;
        }
        if let Some(first) = seen.insert((tool.to_owned(), target.to_owned()), *line) {
            problems.push(
                file,
                *line,
                "target",
                format!("duplicate result for {tool} on {target} (first on line {first})"),
            );
            ok = false;
        }
        if let (true, Some(status)) = (ok, status) {
            let opt = |i: Option<usize>| Some(get(i).to_owned()).filter(|s| !s.is_empty());
            out.push(NprRecord {
                tool: tool.to_owned(),
                target: target.to_owned(),
                status,
                patch: opt(p),
                developer_patch: opt(d),
            });
        }
    }
    problems.finish(out)
}

/// Reads cross-entropy scores; `targets` are the study's known bug and transformation ids.
pub fn parse_ce(
    text: &str,
    file: &str,
    targets: &HashSet<String>,
) -> Result<Vec<CeRecord>, FormatError> {
    let mut problems = Problems::default();
    let Some(csv) = read_csv(
        text,
        file,
        &["model", "target", "cross_entropy"],
        &mut problems,
    ) else {
        return problems.finish(Vec::new());
    };
    let (m, g, c) = (
        col(&csv.headers, "model"),
        col(&csv.headers, "target"),
        col(&csv.headers, "cross_entropy"),
    );
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    let mut out = Vec::new();
    for (line, r) in &csv.rows {
        let get = |i: Option<usize>| i.and_then(|i| r.get(i)).map(str::trim).unwrap_or("");
        let (model, target, ce) = (get(m), get(g), get(c));
        let mut ok = true;
        if model.is_empty() {
            problems.push(file, *line, "model", "empty");
            ok = false;
        }
        if !targets.contains(target) {
            problems.push(
                file,
                *line,
                "target",
                format!("unknown target {target:?} (not a bug or transformation id of the study)"),
            );
            ok = false;
        }
        let value = ce
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0);
        if value.is_none() {
            problems.push(
                file,
                *line,
                "cross_entropy",
                format!("{ce:?} is not a non-negative number"),
            );
            ok = false;
        }
        if let Some(first) = seen.insert((model.to_owned(), target.to_owned()), *line) {
            problems.push(
                file,
                *line,
                "target",
                format!("duplicate score for {model} on {target} (first on line {first})"),
            );
            ok = false;
        }
        if let (true, Some(cross_entropy)) = (ok, value) {
            out.push(CeRecord {
                model: model.to_owned(),
                target: target.to_owned(),
                cross_entropy,
            });
        }
    }
    problems.finish(out)
}
