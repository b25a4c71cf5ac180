//! `survey.json` laid out as the published replication package's `rq1.py` reads it, unmodified:
//!
//! - the levels in the published order (naming, expression, statement), since `rq1.py` slices
//!   the flattened items by position; the items of a level by their number;
//! - only the items with exactly five votes (`rq1.py` builds a 5 × N matrix), unless asked for
//!   all of them (then the file is for natstudy's import and other readers, not `rq1.py`);
//! - each participant as `S<n>`: `rq1.py` puts `S<n>`'s rating in column (n − 1) mod 5 (its
//!   `ID -= 5` reads S1–S10), so every item's raters must fall in five distinct columns. An
//!   imported participant (`S3@import`) keeps its number; the others are given numbers by a
//!   colouring of the "rated an item together" graph (DSATUR), and the mapping goes out beside
//!   the file;
//! - an untimed vote's time as `NaN`, which Python's `json` reads (and writes for a missing
//!   float): `rq1.py` then runs to its end and its time figures print `nan`, where any number
//!   would be a time nobody measured. natstudy's own import reads `NaN` as untimed.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

use super::survey::SurveyVote;
use super::Level;

/// The raters per item of the published design, and the columns of `rq1.py`'s matrix.
pub const RATERS: usize = 5;

/// The items named in full in an error; the rest are counted.
const NAMED: usize = 20;

/// What the layout keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Every rated item, not only those with exactly five votes.
    pub all_items: bool,
}

/// The file, and what a researcher needs to know about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub json: String,
    /// `(S<n>, the participant's code in natstudy)`, by number.
    pub participants: Vec<(String, String)>,
    pub items: usize,
    pub votes: usize,
    /// Items left out for not having exactly five votes: `(key, votes)`.
    pub left_out: Vec<(String, usize)>,
    /// Votes written with `"Time": NaN`.
    pub untimed: usize,
}

impl Layout {
    /// The highest participant number (`rq1.py` reads S1–S10).
    pub fn highest_number(&self) -> u32 {
        self.participants
            .iter()
            .filter_map(|(s, _)| s[1..].parse().ok())
            .max()
            .unwrap_or(0)
    }
}

/// Why a study's votes do not fit `rq1.py`'s layout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error(
        "{} item(s) have more than {RATERS} raters, which rq1.py's five columns cannot hold: {}; \
         `export --what votes` gives one row per vote",
        .0.len(),
        named(.0)
    )]
    TooManyRaters(Vec<String>),
    #[error(
        "the raters of {} item(s) cannot be laid in five columns (rq1.py puts participant S<n> in \
         column (n - 1) mod 5, so each item's raters need distinct columns): {}; \
         `export --what votes` gives one row per vote",
        .0.len(),
        named(.0)
    )]
    Columns(Vec<String>),
    #[error("item numbers written twice in one level (the file would keep one of each): {}", named(.0))]
    SameNumber(Vec<String>),
}

fn named(items: &[String]) -> String {
    let mut s = items
        .iter()
        .take(NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > NAMED {
        let _ = write!(s, " and {} more", items.len() - NAMED);
    }
    s
}

/// The number a participant keeps: `S<n>` or `S<n>@import`, n ≥ 1 without leading zeros.
fn kept_number(code: &str) -> Option<u32> {
    let digits = code
        .strip_suffix(crate::formats::IMPORTED_SUFFIX)
        .unwrap_or(code)
        .strip_prefix('S')?;
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The item's number within its level, as the file writes it.
fn number(key: &str) -> &str {
    key.rsplit_once('_').map_or(key, |(_, n)| n)
}

/// Lays out the votes (any order); every vote must be a counted one.
pub fn lay_out(votes: Vec<SurveyVote>, options: Options) -> Result<Layout, LayoutError> {
    // items in the published order: level, then number (numerically where it is one)
    type ItemKey = (Level, u64, String);
    let mut items: BTreeMap<ItemKey, Vec<SurveyVote>> = BTreeMap::new();
    for v in votes {
        let n = number(&v.item).parse::<u64>().unwrap_or(u64::MAX);
        items
            .entry((v.level, n, v.item.clone()))
            .or_default()
            .push(v);
    }
    let mut left_out = Vec::new();
    items.retain(|(_, _, key), vs| {
        let keep = options.all_items || vs.len() == RATERS;
        if !keep {
            left_out.push((key.clone(), vs.len()));
        }
        keep
    });
    let crowded: Vec<String> = items
        .iter()
        .filter(|(_, vs)| vs.len() > RATERS)
        .map(|((_, _, k), _)| k.clone())
        .collect();
    if !crowded.is_empty() {
        return Err(LayoutError::TooManyRaters(crowded));
    }
    let mut seen: HashMap<(Level, &str), &str> = HashMap::new();
    let mut twice = Vec::new();
    for (level, _, key) in items.keys() {
        if let Some(first) = seen.insert((*level, number(key)), key) {
            twice.push(format!("{first} and {key}"));
        }
    }
    if !twice.is_empty() {
        return Err(LayoutError::SameNumber(twice));
    }

    let numbers = number_participants(&items)?;
    let mut json = String::from("{");
    let mut level_open: Option<Level> = None;
    let mut first_item = true;
    let mut untimed = 0;
    let mut n_votes = 0;
    for ((level, _, key), vs) in &items {
        if level_open != Some(*level) {
            if level_open.is_some() {
                json.push_str("\n },");
            }
            let _ = write!(json, "\n {}: {{", quoted(level.as_str()));
            level_open = Some(*level);
            first_item = true;
        }
        if !first_item {
            json.push(',');
        }
        first_item = false;
        let _ = write!(json, "\n  {}: {{", quoted(number(key)));
        let mut rows: Vec<(u32, &SurveyVote)> =
            vs.iter().map(|v| (numbers[&v.participant], v)).collect();
        rows.sort_by_key(|(n, _)| *n);
        for (i, (n, v)) in rows.iter().enumerate() {
            let time = match v.time_secs.and_then(serde_json::Number::from_f64) {
                Some(t) => t.to_string(),
                None => {
                    untimed += 1;
                    "NaN".to_owned()
                }
            };
            let _ = write!(
                json,
                "{}\n   \"S{n}\": {{\"CR\": {}, \"CC\": {}, \"Time\": {time}}}",
                if i > 0 { "," } else { "" },
                v.cr,
                v.cc
            );
            n_votes += 1;
        }
        json.push_str("\n  }");
    }
    if level_open.is_some() {
        json.push_str("\n }\n");
    }
    json.push_str("}\n");
    let mut participants: Vec<(String, String)> = numbers
        .into_iter()
        .map(|(code, n)| (format!("S{n}"), code))
        .collect();
    participants.sort_by_key(|(s, _)| s[1..].parse::<u32>().unwrap_or(u32::MAX));
    Ok(Layout {
        json,
        participants,
        items: items.len(),
        votes: n_votes,
        left_out,
        untimed,
    })
}

fn quoted(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// Each rater's number: kept ones first, the rest coloured into the five columns so that no
/// item has two raters in one column, then numbered column by column in code order.
fn number_participants(
    items: &BTreeMap<(Level, u64, String), Vec<SurveyVote>>,
) -> Result<HashMap<String, u32>, LayoutError> {
    let codes: BTreeSet<&str> = items
        .values()
        .flatten()
        .map(|v| v.participant.as_str())
        .collect();
    // kept numbers, by number then code, first come first kept
    let mut kept: Vec<(u32, &str)> = codes
        .iter()
        .filter_map(|c| kept_number(c).map(|n| (n, *c)))
        .collect();
    kept.sort();
    let mut taken: BTreeSet<u32> = BTreeSet::new();
    let mut numbers: HashMap<String, u32> = HashMap::new();
    for (n, code) in kept {
        if taken.insert(n) {
            numbers.insert(code.to_owned(), n);
        }
    }
    let index: HashMap<&str, usize> = codes.iter().enumerate().map(|(i, c)| (*c, i)).collect();
    let codes: Vec<&str> = codes.into_iter().collect();
    let mut column: Vec<Option<usize>> = codes
        .iter()
        .map(|c| numbers.get(*c).map(|n| (*n as usize - 1) % RATERS))
        .collect();
    let mut neighbours: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); codes.len()];
    let mut item_of: Vec<Vec<&str>> = vec![Vec::new(); codes.len()];
    let mut clash = Vec::new();
    for ((_, _, key), vs) in items {
        let raters: Vec<usize> = vs.iter().map(|v| index[v.participant.as_str()]).collect();
        let mut fixed = BTreeSet::new();
        let mut bad = false;
        for (i, &a) in raters.iter().enumerate() {
            item_of[a].push(key);
            if let Some(c) = column[a] {
                bad |= !fixed.insert(c);
            }
            for &b in &raters[i + 1..] {
                bad |= a == b;
                neighbours[a].insert(b);
                neighbours[b].insert(a);
            }
        }
        if bad {
            clash.push(key.clone());
        }
    }
    if !clash.is_empty() {
        return Err(LayoutError::Columns(clash));
    }
    // DSATUR: the uncoloured rater whose neighbours use the most columns goes next; each
    // rater's used columns are kept as the colouring goes (O(V² + E) in all)
    let mut used = vec![[false; RATERS]; codes.len()];
    for v in 0..codes.len() {
        if let Some(c) = column[v] {
            for &u in &neighbours[v] {
                used[u][c] = true;
            }
        }
    }
    let saturation = |u: &[bool; RATERS]| u.iter().filter(|&&x| x).count();
    loop {
        let next = (0..codes.len())
            .filter(|&v| column[v].is_none())
            .max_by_key(|&v| {
                (
                    saturation(&used[v]),
                    neighbours[v].len(),
                    std::cmp::Reverse(v),
                )
            });
        let Some(v) = next else { break };
        let Some(c) = (0..RATERS).find(|&c| !used[v][c]) else {
            return Err(LayoutError::Columns(
                item_of[v].iter().map(|k| (*k).to_owned()).collect(),
            ));
        };
        column[v] = Some(c);
        for &u in &neighbours[v] {
            used[u][c] = true;
        }
    }
    // numbers: column c takes c+1, c+6, c+11, … that no kept participant has
    let mut next_of = [0u32; RATERS];
    for (v, code) in codes.iter().enumerate() {
        if numbers.contains_key(*code) {
            continue;
        }
        let c = column[v].unwrap_or(0);
        let n = loop {
            let n = c as u32 + 1 + RATERS as u32 * next_of[c];
            next_of[c] += 1;
            if !taken.contains(&n) {
                break n;
            }
        };
        taken.insert(n);
        numbers.insert((*code).to_owned(), n);
    }
    Ok(numbers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vote(item: &str, who: &str, cr: u8, time: Option<f64>) -> SurveyVote {
        let level = Level::parse(item.split('_').next().unwrap_or("")).unwrap_or(Level::Naming);
        SurveyVote {
            item: item.into(),
            level,
            participant: who.into(),
            cr,
            cc: 1,
            time_secs: time,
        }
    }

    fn group(item: &str, raters: &[&str]) -> Vec<SurveyVote> {
        raters
            .iter()
            .enumerate()
            .map(|(i, r)| vote(item, r, 1 + (i % 4) as u8, Some(2.5 + i as f64)))
            .collect()
    }

    /// `rq1.py`'s reading: levels and items in file order, each rater's column.
    fn columns(json: &str) -> Vec<(String, Vec<usize>)> {
        let v: serde_json::Value =
            serde_json::from_str(&json.replace("NaN", "null")).expect("json");
        let mut out = Vec::new();
        for (level, items) in v.as_object().expect("levels") {
            for (n, votes) in items.as_object().expect("items") {
                let cols = votes
                    .as_object()
                    .expect("votes")
                    .keys()
                    .map(|s| {
                        let id = s[1..].parse::<usize>().expect("S<n>") - 1;
                        if id >= 5 {
                            id - 5
                        } else {
                            id
                        }
                    })
                    .collect();
                out.push((format!("{level}_{n}"), cols));
            }
        }
        // the file's order, as Python's json keeps it
        let at = |key: &str| {
            let (level, n) = key.split_once('_').expect("key");
            let from = json.find(&format!("\n \"{level}\": {{")).expect("level");
            from + json[from..]
                .find(&format!("\n  \"{n}\": {{"))
                .expect("item")
        };
        out.sort_by_key(|(key, _)| at(key));
        out
    }

    #[test]
    fn published_order_complete_items_and_kept_numbers() {
        let a = [
            "S1@import",
            "S2@import",
            "S3@import",
            "S4@import",
            "S5@import",
        ];
        let b = [
            "S6@import",
            "S7@import",
            "S8@import",
            "S9@import",
            "S10@import",
        ];
        let mut votes = Vec::new();
        votes.extend(group("statement_1", &a));
        votes.extend(group("naming_10", &b));
        votes.extend(group("naming_2", &a));
        votes.extend(group("expression_3", &b));
        votes.extend(group("naming_4", &a[..3])); // incomplete
        let layout = lay_out(votes.clone(), Options::default()).expect("fits");
        let cols = columns(&layout.json);
        let order: Vec<&str> = cols.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            order,
            ["naming_2", "naming_10", "expression_3", "statement_1"]
        );
        for (_, c) in &cols {
            let distinct: BTreeSet<_> = c.iter().collect();
            assert_eq!(distinct.len(), 5, "{c:?}");
        }
        assert_eq!(layout.left_out, vec![("naming_4".to_owned(), 3)]);
        assert_eq!((layout.items, layout.votes, layout.untimed), (4, 20, 0));
        assert_eq!(layout.participants[9], ("S10".into(), "S10@import".into()));
        assert_eq!(layout.highest_number(), 10);
        let all = lay_out(votes, Options { all_items: true }).expect("fits");
        assert_eq!((all.items, all.votes), (5, 23));
        assert!(all.left_out.is_empty());
    }

    #[test]
    fn the_others_are_numbered_into_distinct_columns() {
        // two groups of five web participants, one imported rater among them
        let a = ["k1", "k2", "k3", "k4", "S4@import"];
        let b = ["m1", "m2", "m3", "m4", "m5"];
        let mut votes = Vec::new();
        for n in 1..=6 {
            votes.extend(group(
                &format!("naming_{n}"),
                if n % 2 == 0 { &a } else { &b },
            ));
        }
        // one item rated across the groups
        votes.extend(group("expression_1", &["k1", "k2", "m3", "m4", "m5"]));
        let layout = lay_out(votes, Options::default()).expect("fits");
        for (key, c) in columns(&layout.json) {
            assert_eq!(c.iter().collect::<BTreeSet<_>>().len(), 5, "{key}: {c:?}");
        }
        let map: HashMap<&str, &str> = layout
            .participants
            .iter()
            .map(|(s, c)| (c.as_str(), s.as_str()))
            .collect();
        assert_eq!(map["S4@import"], "S4");
        assert_eq!(layout.participants.len(), 10);
        assert!(layout.highest_number() <= 15);
        assert!(
            !layout.json.contains("@import") && !layout.json.contains("\"k1\""),
            "only S-codes in the file"
        );
    }

    #[test]
    fn raters_that_cannot_take_five_columns_are_named() {
        // six participants, every five of them rating an item together: any five columns
        // repeat one
        let p = ["a", "b", "c", "d", "e", "f"];
        let mut votes = Vec::new();
        for skip in 0..6 {
            let raters: Vec<&str> = p
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != skip)
                .map(|(_, r)| *r)
                .collect();
            votes.extend(group(&format!("naming_{}", skip + 1), &raters));
        }
        let err = lay_out(votes, Options::default()).expect_err("no layout");
        let LayoutError::Columns(items) = &err else {
            panic!("{err}")
        };
        assert!(!items.is_empty());
        let text = err.to_string();
        assert!(
            text.contains("naming_") && text.contains("--what votes"),
            "{text}"
        );

        // two kept numbers in one column rate one item together
        let votes = group("naming_1", &["S1@import", "S6@import", "x", "y", "z"]);
        assert_eq!(
            lay_out(votes, Options::default()),
            Err(LayoutError::Columns(vec!["naming_1".into()]))
        );
        // six raters of one item, with all items asked
        let votes = group("naming_1", &p);
        assert_eq!(
            lay_out(votes, Options { all_items: true }),
            Err(LayoutError::TooManyRaters(vec!["naming_1".into()]))
        );
    }

    #[test]
    fn an_untimed_vote_is_nan_and_reads_back_untimed() {
        let mut votes = group("naming_1", &["S1", "S2", "S3", "S4", "S5"]);
        votes[2].time_secs = None;
        let layout = lay_out(votes, Options::default()).expect("fits");
        assert_eq!(layout.untimed, 1);
        assert!(
            layout
                .json
                .contains("\"S3\": {\"CR\": 3, \"CC\": 1, \"Time\": NaN}"),
            "{}",
            layout.json
        );
        let back = super::super::survey::parse_survey(&layout.json, "survey.json").expect("reads");
        let times: Vec<Option<f64>> = back.iter().map(|v| v.time_secs).collect();
        assert_eq!(times, [Some(2.5), Some(3.5), None, Some(5.5), Some(6.5)]);
        let empty = lay_out(Vec::new(), Options::default()).expect("empty");
        assert_eq!(empty.json, "{}\n");
    }
}
