//! Studies of any design: a study made from a design file, its snippets and responses
//! imported (checked in full by the design engine, then written in one transaction), its
//! responses exported in the format they are imported in, and its per-question report.

use serde_json::{json, Value};

use super::imports::{name, read, Outcome};
use super::{ServiceError, ServiceResult};
use crate::store;
use crate::store::designs::NewResponse;
use crate::store::Db;
use natstudy_engine::design::{
    self, report, responses, snippets, units, Design, Response, Snippet,
};
use natstudy_engine::formats::IMPORTED_SUFFIX;
use natstudy_vocab::ids::{StudyId, UserId};

/// A design given by name (`naturalness`) or as a file's text, read and checked.
pub fn read_design(given: &str) -> ServiceResult<Design> {
    match design::builtin(given) {
        Some(text) => Ok(design::parse_design(given, text)?),
        None => {
            let path = std::path::Path::new(given);
            let text = read(path)?;
            Ok(design::parse_design(&name(path), &text)?)
        }
    }
}

/// Whether a design is the published naturalness study's (whose items and votes live in the
/// study tables of old, so that everything it had works as it did).
pub fn is_naturalness(d: &Design) -> bool {
    design::parse_design("naturalness", design::NATURALNESS).is_ok_and(|n| n == *d)
}

/// Makes a study of a design.
pub async fn create(
    db: &Db,
    actor: Option<UserId>,
    owner: Option<UserId>,
    study_name: &str,
    description: &str,
    d: &Design,
) -> ServiceResult<StudyId> {
    let study = super::studies::create(db, actor, owner, study_name, description).await?;
    if !is_naturalness(d) {
        set(db, study, d).await?;
    }
    Ok(study)
}

/// Gives a study a design; refused in words once a response is recorded.
pub async fn set(db: &Db, study: StudyId, d: &Design) -> ServiceResult<()> {
    let stored = if is_naturalness(d) {
        return Err(ServiceError::Invalid(
            "the naturalness design is a study's own when it has no other: make a new study \
             without --design for it"
                .into(),
        ));
    } else {
        serde_json::to_string(d).map_err(|e| ServiceError::Invalid(e.to_string()))?
    };
    Ok(store::designs::set_design(db, study, &stored).await?)
}

/// The study's design; the naturalness study's when it has no other.
pub async fn of(db: &Db, study: StudyId) -> ServiceResult<Design> {
    match store::designs::design(db, study).await? {
        Some(json) => serde_json::from_str(&json).map_err(|e| {
            ServiceError::Invalid(format!(
                "the stored design of study {study} is unreadable: {e}"
            ))
        }),
        None => Ok(design::parse_design("naturalness", design::NATURALNESS)?),
    }
}

/// The design of a study made from a design file; refused in words for a naturalness study.
async fn designed(db: &Db, study: StudyId) -> ServiceResult<Design> {
    match store::designs::design(db, study).await? {
        Some(_) => of(db, study).await,
        None => Err(ServiceError::Invalid(
            "this study is a naturalness study: its items are bugs and transformations (import \
             items); snippets and responses are for a study made with --design FILE"
                .into(),
        )),
    }
}

/// The study's snippets, in the order imported.
pub async fn stored_snippets(db: &Db, study: StudyId) -> ServiceResult<Vec<Snippet>> {
    parse_snippets(store::designs::snippets(db, study).await?)
}

/// The snippets `ids` of the study (a unit's): read by key, whatever the study's size.
pub async fn snippets_by_id(
    db: &Db,
    study: StudyId,
    ids: &[String],
) -> ServiceResult<Vec<Snippet>> {
    parse_snippets(store::designs::snippets_by_id(db, study, ids).await?)
}

fn parse_snippets(records: Vec<String>) -> ServiceResult<Vec<Snippet>> {
    records
        .iter()
        .map(|r| {
            serde_json::from_str(r)
                .map_err(|e| ServiceError::Invalid(format!("a stored snippet is unreadable: {e}")))
        })
        .collect()
}

/// Imports `snippets.jsonl` (a file's name and text) into a designed study.
pub async fn import_snippets_text(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    file: &str,
    text: &str,
) -> ServiceResult<Outcome> {
    let d = designed(db, study).await?;
    let parsed = snippets::parse_snippets(file, text, &d)?;
    let rows: Vec<(String, String)> = parsed
        .iter()
        .map(|s| Ok((s.id.clone(), serde_json::to_string(s)?)))
        .collect::<Result<_, serde_json::Error>>()
        .map_err(|e| ServiceError::Invalid(e.to_string()))?;
    // the units are planned over all the study's snippets, those it had and these
    let mut all = stored_snippets(db, study).await?;
    all.extend(parsed);
    let units = tokio::task::spawn_blocking(move || plan_units(&d, &all, study))
        .await
        .map_err(|e| ServiceError::Invalid(format!("the units could not be planned: {e}")))??;
    let digest = store::imports::digest(&[text]);
    Ok(store::designs::add_snippets(db, study, actor, &digest, &rows, &units).await?)
}

/// The seed a study's plan and orders are drawn from: its id (a study's draw is the same on
/// every run and store).
pub fn study_seed(study: StudyId) -> u64 {
    study.get() as u64
}

/// The units of a study (snippet ids, as planned), by the design's rules; too few snippets for
/// a pair or a set are no units yet (not an error: more snippets may come), too many units
/// are refused in words.
fn plan_units(d: &Design, all: &[Snippet], study: StudyId) -> ServiceResult<Vec<Vec<String>>> {
    match units::plan(d, all, study_seed(study)) {
        Ok(planned) => Ok(planned
            .into_iter()
            .map(|u| u.into_iter().map(|i| all[i].id.clone()).collect())
            .collect()),
        Err(units::UnitsError::TooFewForPairs(_) | units::UnitsError::TooFewForSets { .. }) => {
            Ok(Vec::new())
        }
        Err(e) => Err(ServiceError::Invalid(e.to_string())),
    }
}

pub async fn import_snippets(
    db: &Db,
    study: StudyId,
    path: &std::path::Path,
) -> ServiceResult<Outcome> {
    import_snippets_text(db, study, None, &name(path), &read(path)?).await
}

/// Imports `attention.jsonl` (a file's name and text) into a designed study whose snippets
/// are imported: its attention units, replacing those it had (refused once a participant was
/// shown one).
pub async fn import_attention_text(
    db: &Db,
    study: StudyId,
    file: &str,
    text: &str,
) -> ServiceResult<Outcome> {
    let d = designed(db, study).await?;
    let snippets = stored_snippets(db, study).await?;
    let units = design::attention::parse_attention(file, text, &d, &snippets)?;
    let rows: Vec<(Vec<String>, String)> = units
        .iter()
        .map(|u| Ok((u.members.clone(), serde_json::to_string(&u.expect)?)))
        .collect::<Result<_, serde_json::Error>>()
        .map_err(|e| ServiceError::Invalid(e.to_string()))?;
    store::units::replace_attention(db, study, &rows).await?;
    Ok(Outcome::Imported { rows: rows.len() })
}

pub async fn import_attention(
    db: &Db,
    study: StudyId,
    path: &std::path::Path,
) -> ServiceResult<Outcome> {
    import_attention_text(db, study, &name(path), &read(path)?).await
}

/// Imports `responses.jsonl` into a designed study whose snippets are imported.
pub async fn import_responses_text(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    file: &str,
    text: &str,
) -> ServiceResult<Outcome> {
    let d = designed(db, study).await?;
    let snippets = stored_snippets(db, study).await?;
    if snippets.is_empty() {
        return Err(ServiceError::Invalid(
            "the study has no snippets yet: import its snippets first".into(),
        ));
    }
    let parsed = responses::parse_responses(file, text, &d, &snippets)?;
    let rows: Vec<NewResponse> = parsed
        .iter()
        .map(|r| NewResponse {
            participant: r.participant.clone(),
            question: r.question.clone(),
            record: r.to_json_line(),
            seconds: r.seconds,
        })
        .collect();
    let digest = store::imports::digest(&[text]);
    Ok(store::designs::import_responses(db, study, actor, &digest, &rows).await?)
}

pub async fn import_responses(
    db: &Db,
    study: StudyId,
    path: &std::path::Path,
) -> ServiceResult<Outcome> {
    import_responses_text(db, study, None, &name(path), &read(path)?).await
}

/// The participant's code as given: an imported participant's without its namespace.
fn given_code(code: &str) -> &str {
    code.strip_suffix(IMPORTED_SUFFIX).unwrap_or(code)
}

/// The study's responses that count (and the excluded ones' with `include_excluded`), in the
/// order they were given.
pub async fn stored_responses(
    db: &Db,
    study: StudyId,
    include_excluded: bool,
) -> ServiceResult<(Design, Vec<Snippet>, Vec<Response>)> {
    let d = designed(db, study).await?;
    let snippets = stored_snippets(db, study).await?;
    let rows = store::designs::responses(db, study, include_excluded).await?;
    let mut lines = String::new();
    for (code, record) in rows {
        let mut v: Value = serde_json::from_str(&record)
            .map_err(|e| ServiceError::Invalid(format!("a stored response is unreadable: {e}")))?;
        v["participant"] = json!(given_code(&code));
        lines.push_str(&v.to_string());
        lines.push('\n');
    }
    let parsed = responses::parse_responses("(stored responses)", &lines, &d, &snippets)?;
    Ok((d, snippets, parsed))
}

/// `responses.jsonl` of the study: one line a response, the format `import responses` reads.
pub async fn export_responses(db: &Db, study: StudyId) -> ServiceResult<String> {
    let (_, _, responses) = stored_responses(db, study, false).await?;
    let mut out = String::new();
    for r in &responses {
        out.push_str(&r.to_json_line());
        out.push('\n');
    }
    Ok(out)
}

/// The responses as a long ("tidy") CSV table, a row a response, and its codebook (a row a
/// question: its kind, prompt, scale or options, labels). Every cell is neutralised for
/// spreadsheets (participants' answers are written by strangers).
pub async fn export_responses_csv(db: &Db, study: StudyId) -> ServiceResult<(String, String)> {
    use natstudy_engine::design::{Answer, Shown};
    let (d, _, responses) = stored_responses(db, study, false).await?;
    let csv_error = |e: anyhow::Error| ServiceError::Invalid(format!("csv: {e}"));
    let mut table = crate::store::export::SafeCsv::new(Vec::new());
    let header = [
        "participant",
        "question",
        "kind",
        "item",
        "a",
        "b",
        "set",
        "answer",
        "best",
        "worst",
        "seconds",
    ];
    let write = |w: &mut crate::store::export::SafeCsv<Vec<u8>>, row: &[String]| {
        w.write_record(row).map_err(|e| csv_error(e.into()))
    };
    write(&mut table, &header.map(str::to_owned))?;
    for r in &responses {
        let kind = d.question(&r.question).map_or("", |q| q.kind.name());
        let (item, a, b, set) = match &r.shown {
            Shown::Item(s) => (s.clone(), String::new(), String::new(), String::new()),
            Shown::Pair([x, y]) => (String::new(), x.clone(), y.clone(), String::new()),
            Shown::Set(list) => (String::new(), String::new(), String::new(), list.join(" ")),
        };
        let (answer, best, worst) = match &r.answer {
            Answer::Number(x) => (format!("{x}"), String::new(), String::new()),
            Answer::Text(t) => (t.clone(), String::new(), String::new()),
            Answer::Options(list) => (list.join(" | "), String::new(), String::new()),
            Answer::BestWorst { best, worst } => (String::new(), best.clone(), worst.clone()),
        };
        let seconds = r.seconds.map(|t| format!("{t}")).unwrap_or_default();
        write(
            &mut table,
            &[
                r.participant.clone(),
                r.question.clone(),
                kind.to_owned(),
                item,
                a,
                b,
                set,
                answer,
                best,
                worst,
                seconds,
            ],
        )?;
    }
    let mut book = crate::store::export::SafeCsv::new(Vec::new());
    write(
        &mut book,
        &["question", "kind", "prompt", "scale", "labels"].map(str::to_owned),
    )?;
    for q in &d.questions {
        let (scale, labels) = q.kind.scale_words();
        write(
            &mut book,
            &[
                q.id.clone(),
                q.kind.name().to_owned(),
                q.prompt.clone(),
                scale,
                labels,
            ],
        )?;
    }
    let text = |w: crate::store::export::SafeCsv<Vec<u8>>| -> ServiceResult<String> {
        let bytes = w.into_inner().map_err(csv_error)?;
        String::from_utf8(bytes).map_err(|e| ServiceError::Invalid(e.to_string()))
    };
    Ok((text(table)?, text(book)?))
}

/// The report of a designed study: `{"study", "design", "questions": {"<id>": …}}`.
pub async fn report_json(db: &Db, study: StudyId, include_excluded: bool) -> ServiceResult<Value> {
    let (d, snippets, responses) = stored_responses(db, study, include_excluded).await?;
    let questions = tokio::task::spawn_blocking(move || {
        let q = report::analyse(&d, &snippets, &responses);
        (d, snippets.len(), responses.len(), q)
    })
    .await
    .map_err(|e| ServiceError::Invalid(format!("the analysis stopped: {e}")))?;
    let (d, snippet_count, response_count, questions) = questions;
    Ok(json!({
        "design": d,
        "snippets": snippet_count,
        "responses": response_count,
        "questions": questions,
    }))
}

/// Whether the study was made from a design file (else it is a naturalness study).
pub async fn is_designed(db: &Db, study: StudyId) -> ServiceResult<bool> {
    Ok(store::designs::design(db, study).await?.is_some())
}
