//! Streaming exports: rows are written as the database yields them, never collected whole.

use std::collections::BTreeMap;
use std::io::Write;

use futures_util::TryStreamExt;
use serde::Serialize;
use sqlx::Row;

use super::{Db, StoreResult};
use crate::domain::vote::COLUMNS;
use natstudy_engine::analysis::{judges_unnatural, relative_change, Category, Tally};
use natstudy_vocab::ids::StudyId;

/// Where an export writes: a `Write` that may also ask the exporter to wait. The exporters call
/// `pace` after every row; a sink that streams to a slow client waits there until it has room,
/// so a large export never piles up in memory.
pub trait Sink: Write + Send {
    fn pace(&mut self) -> futures_util::future::BoxFuture<'_, std::io::Result<()>> {
        Box::pin(std::future::ready(Ok(())))
    }
}

impl<W: Write + Send + ?Sized> Sink for Box<W> {}
impl Sink for Vec<u8> {}
impl<W: Write + Send> Sink for std::io::BufWriter<W> {}

/// One labelled transformation.
#[derive(Debug, Serialize)]
pub struct DatasetRow {
    pub id: String,
    pub bug_id: String,
    pub project: String,
    pub operator: String,
    pub level: String,
    pub original: String,
    pub transformed: String,
    pub votes: usize,
    pub unnatural_votes: usize,
    pub category: Option<Category>,
    pub mean_cr: Option<f64>,
    pub mean_cc: Option<f64>,
    /// Per model: RNC = (H(b′)/H(b) − 1)·100.
    pub rnc: BTreeMap<String, f64>,
}

/// The one CSV writer of every export: each cell goes through [`neutralise`] on its way out,
/// so no export can write a cell a spreadsheet would run (the architecture test keeps
/// `csv::Writer` out of every other module of the server). A record with a cell that holds a
/// formula after a separator (`a;=1+1`: a spreadsheet that splits on `;` reads `=1+1`) is
/// written with every field quoted, so that the separator stays inside its cell.
pub struct SafeCsv<W: std::io::Write> {
    out: std::io::BufWriter<W>,
    /// The record being written, reused from record to record.
    record: Vec<u8>,
}

impl<W: std::io::Write> SafeCsv<W> {
    pub fn new(out: W) -> SafeCsv<W> {
        SafeCsv {
            out: std::io::BufWriter::new(out),
            record: Vec::new(),
        }
    }

    /// Writes one record, every cell neutralised.
    pub fn write_record<I, T>(&mut self, record: I) -> csv::Result<()>
    where
        I: IntoIterator<Item = T>,
        T: AsRef<[u8]>,
    {
        let cells: Vec<T> = record.into_iter().collect();
        let quoted = cells.iter().any(|c| formula_after_separator(c.as_ref()));
        let style = if quoted {
            csv::QuoteStyle::Always
        } else {
            csv::QuoteStyle::Necessary
        };
        let mut w = csv::WriterBuilder::new()
            .quote_style(style)
            .buffer_capacity(1024)
            .from_writer(std::mem::take(&mut self.record));
        w.write_record(cells.iter().map(|c| neutralise(c.as_ref())))?;
        self.record = w
            .into_inner()
            .map_err(|e| csv::Error::from(std::io::Error::other(e.to_string())))?;
        let written = self.out.write_all(&self.record);
        self.record.clear();
        Ok(written?)
    }

    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> anyhow::Result<W> {
        self.out
            .into_inner()
            .map_err(|e| anyhow::anyhow!("csv: {}", e.error()))
    }
}

/// One CSV record as bytes (quoted as needed), every cell neutralised for spreadsheets.
pub(crate) fn csv_line<I, T>(rec: I) -> anyhow::Result<Vec<u8>>
where
    I: IntoIterator<Item = T>,
    T: AsRef<[u8]>,
{
    let mut w = SafeCsv::new(Vec::new());
    w.write_record(rec)?;
    w.into_inner()
}

/// The characters that begin a formula in a spreadsheet (OWASP's list: `= + - @`, a tab, a
/// carriage return).
fn starts_formula(b: u8) -> bool {
    matches!(b, b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r')
}

/// Whether a cell holds a formula's first character right after a separator a spreadsheet
/// may split on (`,`, `;`, a tab, `|`): `a;=1+1` is two cells, the second a formula, in a
/// spreadsheet that splits on `;`.
fn formula_after_separator(cell: &[u8]) -> bool {
    cell.windows(2)
        .any(|w| matches!(w[0], b',' | b';' | b'\t' | b'|') && starts_formula(w[1]))
}

/// A cell that a spreadsheet would run as a formula (OWASP's rule: it begins with `= + - @`, a
/// tab or a carriage return, or holds one after a separator, and is not a number) gets a
/// leading `'`: participants' comments and crowd ids are written by strangers. (A record with
/// a formula after a separator is also quoted whole: [`SafeCsv`].)
pub fn neutralise(cell: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let risky = cell.first().is_some_and(|b| starts_formula(*b)) || formula_after_separator(cell);
    let number = std::str::from_utf8(cell)
        .ok()
        .is_some_and(|t| t.parse::<f64>().is_ok());
    if risky && !number {
        let mut v = Vec::with_capacity(cell.len() + 1);
        v.push(b'\'');
        v.extend_from_slice(cell);
        std::borrow::Cow::Owned(v)
    } else {
        std::borrow::Cow::Borrowed(cell)
    }
}

async fn models(db: &Db, study: StudyId) -> StoreResult<Vec<String>> {
    Ok(
        sqlx::query("SELECT DISTINCT model FROM ce_scores WHERE study_id = $1 ORDER BY model")
            .bind(study)
            .fetch_all(&db.pool)
            .await?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()?,
    )
}

/// The labelled dataset, one row per transformation, as JSON lines or CSV.
pub async fn dataset(
    db: &Db,
    study: StudyId,
    csv_out: bool,
    out: &mut dyn Sink,
) -> anyhow::Result<u64> {
    let models = models(db, study).await?;
    // a category only for an item with all k ratings (as the results page)
    let k = usize::try_from(super::assign::ratings_per_item(db, study).await?).unwrap_or(0);
    let mut sql = String::from(
        "SELECT i.id, i.item_key, b.bug_key, p.name AS project, i.operator, i.level, b.source AS original, i.source AS transformed",
    );
    for (n, _) in models.iter().enumerate() {
        sql.push_str(&format!(
            ", hb{n}.cross_entropy AS hb{n}, ht{n}.cross_entropy AS ht{n}"
        ));
    }
    sql.push_str(
        " FROM items i JOIN bugs b ON b.id = i.bug_id JOIN projects p ON p.id = b.project_id",
    );
    for (n, _) in models.iter().enumerate() {
        let m = n + 2;
        sql.push_str(&format!(
            " LEFT JOIN ce_scores hb{n} ON hb{n}.study_id = i.study_id AND hb{n}.model = ${m} AND hb{n}.target = b.bug_key \
              LEFT JOIN ce_scores ht{n} ON ht{n}.study_id = i.study_id AND ht{n}.model = ${m} AND ht{n}.target = i.item_key"
        ));
    }
    sql.push_str(" WHERE i.study_id = $1 ORDER BY i.id");
    let mut q = sqlx::query(&sql).bind(study);
    for m in &models {
        q = q.bind(m);
    }
    // votes stream alongside, ordered the same way
    let mut votes = sqlx::query("SELECT v.item_id, v.cr, v.cc FROM votes v JOIN items i ON i.id = v.item_id WHERE i.study_id = $1 AND v.counted = 1 ORDER BY v.item_id")
        .bind(study)
        .fetch(&db.pool);
    let mut pending: Option<(i64, u8, u8)> = None;
    let mut rows = q.fetch(&db.pool);
    if csv_out {
        let mut header = vec![
            "id",
            "bug_id",
            "project",
            "operator",
            "level",
            "original",
            "transformed",
            "votes",
            "unnatural_votes",
            "category",
            "mean_cr",
            "mean_cc",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
        header.extend(models.iter().map(|m| format!("rnc_{m}")));
        out.write_all(&csv_line(&header)?)?;
    }
    let mut n = 0u64;
    while let Some(r) = rows.try_next().await? {
        out.pace().await?;
        let id: i64 = r.try_get("id")?;
        let mut tally = Tally::default();
        loop {
            if pending.is_none() {
                pending = match votes.try_next().await? {
                    Some(v) => Some((
                        v.try_get(0)?,
                        v.try_get::<i64, _>(1)? as u8,
                        v.try_get::<i64, _>(2)? as u8,
                    )),
                    None => None,
                };
            }
            match pending {
                Some((item, cr, cc)) if item == id => {
                    tally.add(cr, cc);
                    pending = None;
                }
                Some((item, _, _)) if item < id => pending = None,
                _ => break,
            }
        }
        let mut rnc = BTreeMap::new();
        for (k, m) in models.iter().enumerate() {
            let (hb, ht): (Option<f64>, Option<f64>) = (
                r.try_get(format!("hb{k}").as_str())?,
                r.try_get(format!("ht{k}").as_str())?,
            );
            if let (Some(hb), Some(ht)) = (hb, ht) {
                rnc.insert(m.clone(), relative_change(hb, ht));
            }
        }
        let row = DatasetRow {
            id: r.try_get("item_key")?,
            bug_id: r.try_get("bug_key")?,
            project: r.try_get("project")?,
            operator: r.try_get("operator")?,
            level: r.try_get("level")?,
            original: r.try_get("original")?,
            transformed: r.try_get("transformed")?,
            votes: tally.votes,
            unnatural_votes: tally.unnatural,
            category: tally.category().filter(|_| tally.votes == k),
            mean_cr: tally.mean_cr(),
            mean_cc: tally.mean_cc(),
            rnc,
        };
        match csv_out {
            true => {
                let opt = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
                let mut rec = vec![
                    row.id.clone(),
                    row.bug_id.clone(),
                    row.project.clone(),
                    row.operator.clone(),
                    row.level.clone(),
                    row.original.clone(),
                    row.transformed.clone(),
                    row.votes.to_string(),
                    row.unnatural_votes.to_string(),
                    row.category
                        .map(|c| c.as_str().to_owned())
                        .unwrap_or_default(),
                    opt(row.mean_cr),
                    opt(row.mean_cc),
                ];
                rec.extend(models.iter().map(|m| opt(row.rnc.get(m).copied())));
                out.write_all(&csv_line(&rec)?)?;
            }
            false => {
                serde_json::to_writer(&mut *out, &row)?;
                out.write_all(b"\n")?;
            }
        }
        n += 1;
    }
    out.flush()?;
    Ok(n)
}

/// The vote's columns ([`COLUMNS`]) that [`votes_table`] writes in its own way; every other
/// one it writes as stored, after `comment`.
const FORMATTED: [&str; 6] = [
    "cr",
    "cc",
    "time_secs",
    "started_at",
    "context_opened",
    "comment",
];

/// The long vote table: one row per vote revision that counts, with its context.
pub async fn votes_table(
    db: &Db,
    study: StudyId,
    out: &mut dyn Sink,
    with_pid: bool,
    pilot: bool,
) -> anyhow::Result<u64> {
    let mut header = vec![
        "item",
        "level",
        "operator",
        "annotator",
        "cr",
        "cc",
        "unnatural",
        "time_secs",
        "started_at",
        "submitted_at",
        "original_left",
        "context_opened",
        "revision",
        "comment",
    ];
    // a vote's further columns, as stored, after those this table writes in its own way
    let extra: Vec<&str> = COLUMNS
        .iter()
        .map(|c| c.name)
        .filter(|name| !FORMATTED.contains(name))
        .collect();
    header.extend(&extra);
    header.extend(["source", "time_source"]);
    if with_pid {
        header.push("external_pid");
    }
    out.write_all(&csv_line(&header)?)?;
    let extra_sql: String = extra
        .iter()
        .enumerate()
        .map(|(i, name)| format!(", CAST(v.{name} AS TEXT) AS extra_{i}"))
        .collect();
    // the votes that count, or only the pilot's (fixed texts, no value of the request)
    let which = if pilot {
        "a.pilot = 1"
    } else {
        "v.counted = 1"
    };
    let sql = format!(
        "SELECT i.item_key, i.level, i.operator, a.code, a.external_pid, a.imported, v.cr, v.cc, v.time_secs, v.started_at, v.submitted_at, \
         v.original_left, v.side_known, v.context_opened, v.revision, v.comment, c.created_at AS handed_at{extra_sql} FROM votes v JOIN items i ON i.id = v.item_id \
         JOIN annotators a ON a.id = v.annotator_id \
         LEFT JOIN assignments c ON c.item_id = v.item_id AND c.annotator_id = v.annotator_id \
         WHERE i.study_id = $1 AND {which} ORDER BY i.id, a.id"
    );
    let mut rows = sqlx::query(&sql).bind(study).fetch(&db.pool);
    let mut n = 0;
    while let Some(r) = rows.try_next().await? {
        out.pace().await?;
        let (cr, cc): (i64, i64) = (r.try_get("cr")?, r.try_get("cc")?);
        let opt_f = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
        let opt_i = |x: Option<i64>| x.map(|v| v.to_string()).unwrap_or_default();
        // what an import does not know stays empty: no submission time, side or context
        let imported = r.try_get::<i64, _>("imported")? != 0;
        let known = |value: String| if imported { String::new() } else { value };
        let measured: Option<f64> = r.try_get("time_secs")?;
        // without a time the page measured (a vote sent before the page was interactive),
        // the server's: from when it handed the item out to when the vote arrived
        let handed: Option<i64> = r.try_get("handed_at")?;
        let submitted: i64 = r.try_get("submitted_at")?;
        let server = match (measured, imported, handed) {
            (None, false, Some(h)) if submitted >= h => Some((submitted - h) as f64 / 1000.0),
            _ => None,
        };
        let time = measured.or(server);
        let mut rec = vec![
            r.try_get::<String, _>("item_key")?,
            r.try_get("level")?,
            r.try_get("operator")?,
            r.try_get("code")?,
            cr.to_string(),
            cc.to_string(),
            judges_unnatural(cr as u8, cc as u8).to_string(),
            opt_f(time),
            opt_i(r.try_get("started_at")?),
            known(r.try_get::<i64, _>("submitted_at")?.to_string()),
            // the side shown: empty where it cannot be proven (a vote stored before sides
            // were stored as shown, in a study that randomised them for a while: 0033)
            if r.try_get::<i64, _>("side_known")? == 0 {
                String::new()
            } else {
                known((r.try_get::<i64, _>("original_left")? != 0).to_string())
            },
            known((r.try_get::<i64, _>("context_opened")? != 0).to_string()),
            r.try_get::<i64, _>("revision")?.to_string(),
            r.try_get("comment")?,
        ];
        for i in 0..extra.len() {
            rec.push(
                r.try_get::<Option<String>, _>(format!("extra_{i}").as_str())?
                    .unwrap_or_default(),
            );
        }
        rec.extend([
            if imported { "imported" } else { "survey" }.to_owned(),
            // measured by the participant's page, or not at all (never made up)
            match (measured, server, imported) {
                (Some(_), _, true) => "imported",
                (Some(_), _, false) => "measured",
                (None, Some(_), _) => "server",
                (None, None, _) => "none",
            }
            .to_owned(),
        ]);
        if with_pid {
            rec.push(
                r.try_get::<Option<String>, _>("external_pid")?
                    .unwrap_or_default(),
            );
        }
        out.write_all(&csv_line(&rec)?)?;
        n += 1;
    }
    out.flush()?;
    Ok(n)
}

/// The item × annotator matrix of binary judgements (1 unnatural, 0 natural, empty: no vote).
pub async fn matrix(db: &Db, study: StudyId, out: &mut dyn Sink) -> anyhow::Result<u64> {
    let codes: Vec<(i64, String)> = sqlx::query(
        "SELECT id, code FROM annotators WHERE study_id = $1 AND counted = 1 ORDER BY id",
    )
    .bind(study)
    .fetch_all(&db.pool)
    .await?
    .iter()
    .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
    .collect::<Result<_, sqlx::Error>>()?;
    let col: std::collections::HashMap<i64, usize> = codes
        .iter()
        .enumerate()
        .map(|(i, (id, _))| (*id, i))
        .collect();
    let mut header = vec!["item".to_owned()];
    header.extend(codes.iter().map(|(_, c)| c.clone()));
    out.write_all(&csv_line(&header)?)?;
    let mut rows = sqlx::query(
        "SELECT i.item_key, v.annotator_id, v.cr, v.cc FROM items i LEFT JOIN votes v ON v.item_id = i.id AND v.counted = 1 WHERE i.study_id = $1 ORDER BY i.id",
    )
    .bind(study)
    .fetch(&db.pool);
    let mut current: Option<(String, Vec<String>)> = None;
    let mut n = 0;
    let flush = |cur: Option<(String, Vec<String>)>, out: &mut dyn Sink| -> anyhow::Result<()> {
        if let Some((key, cells)) = cur {
            let mut rec = vec![key];
            rec.extend(cells);
            out.write_all(&csv_line(&rec)?)?;
        }
        Ok(())
    };
    while let Some(r) = rows.try_next().await? {
        out.pace().await?;
        let key: String = r.try_get("item_key")?;
        if current.as_ref().map(|c| &c.0) != Some(&key) {
            flush(current.take(), out)?;
            current = Some((key, vec![String::new(); codes.len()]));
            n += 1;
        }
        if let (Some(a), Some(cr), Some(cc)) = (
            r.try_get::<Option<i64>, _>("annotator_id")?,
            r.try_get::<Option<i64>, _>("cr")?,
            r.try_get::<Option<i64>, _>("cc")?,
        ) {
            if let (Some(c), Some(cur)) = (col.get(&a), current.as_mut()) {
                cur.1[*c] = u8::from(judges_unnatural(cr as u8, cc as u8)).to_string();
            }
        }
    }
    flush(current.take(), out)?;
    Ok(n)
}

/// The study's counted votes, for `survey.json` in the published package's layout (laid out
/// by [`natstudy_engine::formats::replication`]: it needs every item's raters at once).
pub async fn survey_votes(
    db: &Db,
    study: StudyId,
) -> anyhow::Result<Vec<natstudy_engine::formats::survey::SurveyVote>> {
    let mut rows = sqlx::query(
        "SELECT i.item_key, i.level, a.code, v.cr, v.cc, v.time_secs FROM votes v JOIN items i ON i.id = v.item_id \
         JOIN annotators a ON a.id = v.annotator_id WHERE i.study_id = $1 AND v.counted = 1",
    )
    .bind(study)
    .fetch(&db.pool);
    let mut out = Vec::new();
    while let Some(r) = rows.try_next().await? {
        let level: String = r.try_get("level")?;
        let likert = |column: &str| -> anyhow::Result<u8> {
            let x: i64 = r.try_get(column)?;
            u8::try_from(x).map_err(|_| anyhow::anyhow!("a stored {column} of {x}"))
        };
        out.push(natstudy_engine::formats::survey::SurveyVote {
            item: r.try_get("item_key")?,
            level: natstudy_engine::formats::Level::parse(&level)
                .ok_or_else(|| anyhow::anyhow!("a stored level {level}"))?,
            participant: r.try_get("code")?,
            cr: likert("cr")?,
            cc: likert("cc")?,
            time_secs: r.try_get::<Option<f64>, _>("time_secs")?,
        });
    }
    Ok(out)
}

/// The study's bugs and transformations in the interchange formats (for a round trip).
pub async fn items(
    db: &Db,
    study: StudyId,
    bugs_out: &mut dyn Sink,
    items_out: &mut dyn Sink,
) -> anyhow::Result<u64> {
    let mut bugs = sqlx::query(
        "SELECT b.bug_key, p.name AS project, b.file_path, b.method, b.source, b.file_source, b.fixed_source, b.buggy_lines, b.encoding FROM bugs b \
         JOIN projects p ON p.id = b.project_id WHERE b.study_id = $1 ORDER BY b.id",
    )
    .bind(study)
    .fetch(&db.pool);
    while let Some(r) = bugs.try_next().await? {
        bugs_out.pace().await?;
        let rec = super::generation::bug_record(&r)?;
        serde_json::to_writer(&mut *bugs_out, &rec)?;
        bugs_out.write_all(b"\n")?;
    }
    let mut rows = sqlx::query(
        "SELECT i.item_key, b.bug_key, i.operator, i.level, i.source, i.summary, i.gold_unnatural, \
         i.line_map, i.touches_buggy, i.buggy_lines, i.fixed_source, \
         c.compiles, c.tests_same, c.message FROM items i \
         JOIN bugs b ON b.id = i.bug_id LEFT JOIN item_checks c ON c.item_id = i.id \
         WHERE i.study_id = $1 ORDER BY i.id",
    )
    .bind(study)
    .fetch(&db.pool);
    let mut n = 0;
    while let Some(r) = rows.try_next().await? {
        items_out.pace().await?;
        let level: String = r.try_get("level")?;
        let mut obj = serde_json::json!({
            "id": r.try_get::<String, _>("item_key")?,
            "bug_id": r.try_get::<String, _>("bug_key")?,
            "operator": r.try_get::<String, _>("operator")?,
            "level": level,
            "source": r.try_get::<String, _>("source")?,
            "summary": r.try_get::<String, _>("summary")?,
        });
        if let Some(g) = r.try_get::<Option<i64>, _>("gold_unnatural")? {
            obj["gold"] =
                serde_json::Value::String(if g != 0 { "unnatural" } else { "natural" }.into());
        }
        // the line data (stored as JSON at import) and the fix carried over, when known
        for column in ["line_map", "buggy_lines"] {
            if let Some(text) = r.try_get::<Option<String>, _>(column)? {
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
                    obj[column] = v;
                }
            }
        }
        if let Some(t) = r.try_get::<Option<i64>, _>("touches_buggy")? {
            obj["touches_buggy"] = serde_json::Value::Bool(t != 0);
        }
        if let Some(f) = r.try_get::<Option<String>, _>("fixed_source")? {
            obj["fixed_source"] = serde_json::Value::String(f);
        }
        // `natstudy verify`'s result, when it ran
        if r.try_get::<Option<String>, _>("message")?.is_some() {
            obj["verification"] = serde_json::to_value(super::checks::check_of(&r)?)?;
        }
        serde_json::to_writer(&mut *items_out, &obj)?;
        items_out.write_all(b"\n")?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::{neutralise, COLUMNS, FORMATTED};

    #[test]
    fn the_columns_written_in_their_own_way_are_the_votes() {
        for name in FORMATTED {
            assert!(COLUMNS.iter().any(|c| c.name == name), "{name}");
        }
    }

    #[test]
    fn formulas_are_neutralised_and_numbers_kept() {
        assert_eq!(&*neutralise(b"=HYPERLINK(\"x\")"), b"'=HYPERLINK(\"x\")");
        assert_eq!(
            &*neutralise(b"+1+cmd|' /C calc'!A0"),
            b"'+1+cmd|' /C calc'!A0"
        );
        assert_eq!(&*neutralise(b"@SUM(A1)"), b"'@SUM(A1)");
        assert_eq!(&*neutralise(b"-0.25"), b"-0.25");
        assert_eq!(&*neutralise(b"plain text"), b"plain text");
        assert_eq!(&*neutralise(b""), b"");
        // after a separator a spreadsheet may split on: a formula of its own cell
        assert_eq!(&*neutralise(b";=1+1"), b"';=1+1");
        assert_eq!(&*neutralise(b"a,@SUM(A1)"), b"'a,@SUM(A1)");
        assert_eq!(&*neutralise(b"x|-2+3"), b"'x|-2+3");
        assert_eq!(&*neutralise(b"a; b = 1;"), b"a; b = 1;", "a space between");
    }

    /// A record with a formula after a separator is quoted whole (the separator stays in its
    /// cell for a spreadsheet that splits on `;`); other records are quoted as needed, and
    /// both read back as written (bar the neutralising quote).
    #[test]
    fn a_formula_after_a_separator_is_quoted_in_its_cell() {
        let line = super::csv_line(["1", ";=HYPERLINK(\"x\")", "plain"]).expect("csv");
        assert_eq!(
            String::from_utf8(line.clone()).expect("utf-8"),
            "\"1\",\"';=HYPERLINK(\"\"x\"\")\",\"plain\"\n"
        );
        let plain = super::csv_line(["1", "a b", "c,d"]).expect("csv");
        assert_eq!(String::from_utf8(plain).expect("utf-8"), "1,a b,\"c,d\"\n");
        let mut r = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(line.as_slice());
        let rec = r.records().next().expect("a record").expect("csv");
        assert_eq!(rec.get(1), Some("';=HYPERLINK(\"x\")"));
    }
}
