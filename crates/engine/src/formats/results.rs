//! `npr_results.csv` (`tool,target,status[,patch,developer_patch]`),
//! `ce_scores.csv` (`model,target,cross_entropy`) and `reviews.csv`
//! (`tool,target,reviewer,verdict[,note]`).

use std::collections::{HashMap, HashSet};

use super::{FormatError, Problems};
use crate::review::Verdict;

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

impl Csv {
    /// A row's cell in the column `name`, trimmed ("" when the column is absent).
    fn cell(&self, row: &csv::StringRecord, name: &str) -> String {
        col(&self.headers, name)
            .and_then(|i| row.get(i))
            .map(str::trim)
            .unwrap_or("")
            .to_owned()
    }
}

/// A table of values keyed by (`key` column, target): the NPR results (key `tool`, value
/// `status`) and the cross-entropy scores (key `model`, value `cross_entropy`).
/// The longest name of a repair tool or language model.
pub const MAX_NAME: usize = 64;

/// Whether a repair tool's or language model's name is one natstudy can carry everywhere it
/// goes — file names of charts and exports (`rnc_by_category_NAME.svg`), download headers,
/// page titles: 1 to [`MAX_NAME`] ASCII letters, digits and `- _ . +`, not starting with a dot.
/// `Err` says why not.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("empty".into());
    }
    if name.len() > MAX_NAME {
        return Err(format!("longer than {MAX_NAME} characters"));
    }
    if name.starts_with('.') {
        return Err(format!("{name:?} starts with a dot"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+')))
    {
        return Err(format!(
            "{c:?} in {name:?}: use letters, digits and - _ . + only"
        ));
    }
    Ok(())
}

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
            let get = |name: &str| csv.cell(r, name);
            let (key, target) = (get(self.key), get("target"));
            let mut ok = true;
            if let Err(why) = check_name(&key) {
                problems.push(file, *line, self.key, why);
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

/// One reviewer's verdict on a tool's patch of a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewRecord {
    pub tool: String,
    pub target: String,
    pub reviewer: String,
    pub verdict: Verdict,
    pub note: String,
}

/// The longest reviewer name and note a review file may carry.
pub const MAX_REVIEWER_CHARS: usize = 200;
pub const MAX_NOTE_CHARS: usize = 5_000;

/// Reads reviewers' verdicts; `tasks` are the study's review tasks as (tool, target).
pub fn parse_reviews(
    text: &str,
    file: &str,
    tasks: &HashSet<(String, String)>,
) -> Result<Vec<ReviewRecord>, FormatError> {
    let mut problems = Problems::default();
    let Some(csv) = read_csv(
        text,
        file,
        &["tool", "target", "reviewer", "verdict"],
        &mut problems,
    ) else {
        return problems.finish(Vec::new());
    };
    let mut out = Vec::new();
    let mut seen: HashMap<(String, String, String), usize> = HashMap::new();
    for (line, r) in &csv.rows {
        let get = |name: &str| csv.cell(r, name);
        let (tool, target, reviewer) = (get("tool"), get("target"), get("reviewer"));
        let mut ok = true;
        if !tasks.contains(&(tool.clone(), target.clone())) {
            problems.push(
                file,
                *line,
                "target",
                format!("no review task for {tool:?} on {target:?} (run `natstudy review create` first)"),
            );
            ok = false;
        }
        if reviewer.is_empty() || reviewer.chars().count() > MAX_REVIEWER_CHARS {
            problems.push(
                file,
                *line,
                "reviewer",
                format!("expected 1 to {MAX_REVIEWER_CHARS} characters"),
            );
            ok = false;
        }
        let verdict = Verdict::parse(&get("verdict"));
        if verdict.is_none() {
            problems.push(
                file,
                *line,
                "verdict",
                format!("{:?} is not correct, wrong or unsure", get("verdict")),
            );
            ok = false;
        }
        let note = get("note");
        if note.chars().count() > MAX_NOTE_CHARS {
            problems.push(
                file,
                *line,
                "note",
                format!("longer than {MAX_NOTE_CHARS} characters"),
            );
            ok = false;
        }
        if let Some(first) = seen.insert((tool.clone(), target.clone(), reviewer.clone()), *line) {
            problems.push(
                file,
                *line,
                "reviewer",
                format!(
                    "a second verdict of {reviewer} on {tool} / {target} (first on line {first})"
                ),
            );
            ok = false;
        }
        if let (true, Some(verdict)) = (ok, verdict) {
            out.push(ReviewRecord {
                tool,
                target,
                reviewer,
                verdict,
                note,
            });
        }
    }
    if out.is_empty() && problems.is_empty() {
        problems.push(file, 0, "(file)", "no records");
    }
    problems.finish(out)
}

/// Whether `x` can be a cross-entropy: a finite, non-negative number (a model whose scores
/// come out NaN or infinite has failed, on either store alike).
pub fn is_cross_entropy(x: f64) -> bool {
    x.is_finite() && x >= 0.0
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
            .filter(|x| is_cross_entropy(*x))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_and_model_names_must_fit_file_names_and_headers() {
        for good in ["codellama", "ref-4gram", "GPT-Neo_2.7B", "a+b", "x"] {
            assert_eq!(check_name(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            ".hidden",
            "a/b",
            "a\"b",
            "line\r\nbreak",
            "a b",
            "x/../../y",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_name(&"m".repeat(MAX_NAME)).is_ok());
        assert!(check_name(&"m".repeat(MAX_NAME + 1)).is_err());
        let targets: HashSet<String> = ["Lang-1".to_owned()].into();
        let err = parse_ce(
            "model,target,cross_entropy\nm\"x,Lang-1,2.5\n",
            "ce.csv",
            &targets,
        )
        .expect_err("a quote in a model name");
        let text = err.to_string();
        assert!(
            text.contains("ce.csv:2") && text.contains("model"),
            "{text}"
        );
    }

    #[test]
    fn reviews_name_every_bad_line_and_field() {
        let tasks: HashSet<(String, String)> = [("t1", "Lang-1"), ("t1", "naming_1")]
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect();
        let good = "tool,target,reviewer,verdict,note\nt1,Lang-1,ann,correct,\nt1,Lang-1,bob,wrong,\"off by one, see line 3\"\n";
        let rows = parse_reviews(good, "reviews.csv", &tasks).expect("good");
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[1].verdict, rows[1].note.as_str()),
            (Verdict::Wrong, "off by one, see line 3")
        );
        let bad = "tool,target,reviewer,verdict\nt1,Lang-1,ann,yes\nt2,Lang-1,ann,correct\nt1,naming_1,,wrong\nt1,Lang-1,ann,wrong\n";
        let err = parse_reviews(bad, "reviews.csv", &tasks)
            .expect_err("bad")
            .to_string();
        for want in [
            "reviews.csv:2: field `verdict`",
            "reviews.csv:3: field `target`",
            "reviews.csv:4: field `reviewer`",
            "reviews.csv:5: field `reviewer`",
        ] {
            assert!(err.contains(want), "{want} in {err}");
        }
        let err = parse_reviews("tool,target,verdict\n", "r.csv", &tasks).expect_err("header");
        assert!(err.to_string().contains("reviewer"), "{err}");
    }
}
