//! The participant's survey as the pages show it: where a participant stands and the item to
//! rate (with its diff), the guideline's markdown made safe, the default screener.

use natstudy_types::{
    AnnotateState, AnnotateStep, FileContext, ItemView, Outcome, RatedRow, Revise,
};

use std::sync::{Arc, LazyLock};

use natstudy_types::DiffLine;

use super::memo::Memo;
pub use super::survey_cache::SurveyCache;
use super::{ServiceError, ServiceResult};
use crate::present::wire::wire_rows;
use crate::store::Db;
use crate::store::{self, StoreError};
use natstudy_vocab::ids::{AnnotatorId, ItemId, StudyId};

/// The guideline's (or consent's) markdown as HTML: raw HTML is dropped, and links and images
/// keep only http(s), mailto and relative targets (`javascript:` and the like become `#`).
pub fn guideline_html(markdown: &str) -> String {
    use pulldown_cmark::{Event, Parser, Tag};
    let events = Parser::new(markdown)
        .filter(|e| !matches!(e, Event::Html(_) | Event::InlineHtml(_)))
        .map(|e| match e {
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => Event::Start(Tag::Link {
                link_type,
                dest_url: safe_url(dest_url),
                title,
                id,
            }),
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => Event::Start(Tag::Image {
                link_type,
                dest_url: safe_url(dest_url),
                title,
                id,
            }),
            other => other,
        });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// A link target that is http(s), mailto or relative; anything else becomes `#`.
fn safe_url(url: pulldown_cmark::CowStr<'_>) -> pulldown_cmark::CowStr<'_> {
    let lower = url.trim().to_ascii_lowercase();
    // a scheme is letters (and + - .) before the first ':' that comes before any / ? #
    let scheme = lower
        .find(':')
        .filter(|&i| !lower[..i].contains(['/', '?', '#']))
        .map(|i| &lower[..i]);
    match scheme {
        None | Some("http") | Some("https") | Some("mailto") => url,
        Some(_) => "#".into(),
    }
}

/// Diff lines computed once per item (and what it is made of), bounded to 64 MiB.
static DIFFS: LazyLock<Memo<Vec<DiffLine>>> = LazyLock::new(|| Memo::new(64 << 20));
/// The parts of method files shown under Context, once per item, bounded to 16 MiB.
static FILES: LazyLock<Memo<FileContext>> = LazyLock::new(|| Memo::new(16 << 20));
/// Guidelines as HTML, once per text, bounded to 4 MiB.
static GUIDELINES: LazyLock<Memo<String>> = LazyLock::new(|| Memo::new(4 << 20));

/// The item's diff as the rating page shows it — the transformed side marks the transformed
/// method's buggy lines — computed once (off the async threads) and then shared.
async fn item_diff(
    item: ItemId,
    it: &store::survey::ItemForDisplay,
) -> Result<Arc<Vec<DiffLine>>, StoreError> {
    let key = DIFFS.key((
        item,
        &it.bug_source,
        &it.source,
        &it.buggy_lines,
        &it.transformed_buggy_lines,
    ));
    if let Some(lines) = DIFFS.get(key) {
        return Ok(lines);
    }
    let weight = 4 * (it.bug_source.len() + it.source.len()) + 256;
    let (old, new, buggy, marked) = (
        it.bug_source.clone(),
        it.source.clone(),
        it.buggy_lines.clone(),
        it.transformed_buggy_lines.clone(),
    );
    let lines = tokio::task::spawn_blocking(move || {
        DIFFS.get_or(key, weight, || {
            let mut lines = wire_rows(natstudy_engine::diff::diff_rows(&old, &new, &buggy));
            if let Some(marked) = &marked {
                for l in &mut lines {
                    l.buggy_new = l.new_no.is_some_and(|n| marked.contains(&n));
                }
            }
            crate::present::wire::bounded_rows(lines)
        })
    })
    .await
    .map_err(|e| StoreError::Invalid(format!("the diff could not be computed: {e}")))?;
    Ok(lines)
}

fn guideline_memo(markdown: &str) -> Arc<String> {
    GUIDELINES.get_or(GUIDELINES.key(markdown), 4 * markdown.len() + 64, || {
        guideline_html(markdown)
    })
}

/// Where a participant stands, with the item to show: the queue's next, or `revise` (an item
/// they rated, a unit they answered), or — when the queue has nothing more — `page` (from 1;
/// a page past the last is the last) of the items they rated.
pub async fn annotate_state(
    db: &Db,
    cache: &SurveyCache,
    study: StudyId,
    annotator: AnnotatorId,
    revise: Option<Revise>,
    page: Option<u32>,
) -> Result<AnnotateState, StoreError> {
    let page = page.map_or(0, |p| i64::from(p.max(1)) - 1);
    state_of(db, cache, study, annotator, revise, page, Next::Claim).await
}

/// Where the item's method starts in its file (1-based, when found) and its length in lines.
fn method_in_file(it: &store::survey::ItemForDisplay) -> (Option<u32>, u32) {
    let line = it.file_source.as_deref().and_then(|f| {
        let first = it.bug_source.lines().find(|l| !l.trim().is_empty())?.trim();
        let at = f.find(first)?;
        Some(f[..at].matches('\n').count() as u32 + 1)
    });
    (line, it.bug_source.lines().count() as u32)
}

/// The part of the item's method file shown under Context, asked for when the participant
/// opens it: the method with the lines around it, bounded ([`super::file_window`]). Only an
/// item planned for, held by or rated by the annotator (`Forbidden` otherwise); `None` when
/// the item has no file.
pub async fn item_context(
    db: &Db,
    cache: &SurveyCache,
    study: StudyId,
    annotator: AnnotatorId,
    item: ItemId,
) -> ServiceResult<Option<FileContext>> {
    if !store::survey::may_see(db, study, annotator, item).await? {
        return Err(ServiceError::Forbidden("not an item of yours".into()));
    }
    let held = cache.item(db, study, item).await?;
    if held.1.file_source.is_none() {
        return Ok(None);
    }
    // keyed by what the part is made of (item ids repeat across databases), all of it off
    // the async threads: a file may be 4 MiB
    let part = tokio::task::spawn_blocking(move || {
        let it = &held.1;
        let key = FILES.key((item, &it.file_source, &it.bug_source));
        let (method_line, method_lines) = method_in_file(it);
        let f = it.file_source.as_deref().unwrap_or_default();
        // the part is at most 96 KiB besides the method's own lines
        let weight = 2 * it.bug_source.len() + (96 << 10) + 256;
        FILES.get_or(key, weight, || {
            let w = super::file_window::window(f, method_line, method_lines);
            FileContext {
                text: w.text,
                first_line: w.first_line,
                total_lines: w.total_lines,
            }
        })
    })
    .await?;
    Ok(Some(part.as_ref().clone()))
}

/// Where the queue's next item comes from.
enum Next {
    /// Claimed now ([`store::assign::next_item`]).
    Claim,
    /// Already claimed, with a vote (`None`: nothing was left).
    Claimed(Option<store::assign::Handed>),
}

/// [`annotate_state`] after a vote that claimed the queue's next item with it (`claimed`:
/// that claim, `None` when nothing was left), so the state claims nothing more.
pub async fn state_after_vote(
    db: &Db,
    cache: &SurveyCache,
    study: StudyId,
    annotator: AnnotatorId,
    claimed: Option<store::assign::Handed>,
) -> Result<AnnotateState, StoreError> {
    state_of(db, cache, study, annotator, None, 0, Next::Claimed(claimed)).await
}

async fn state_of(
    db: &Db,
    cache: &SurveyCache,
    study: StudyId,
    annotator: AnnotatorId,
    revise: Option<Revise>,
    page: i64,
    next: Next,
) -> Result<AnnotateState, StoreError> {
    let store::survey::Standing {
        settings,
        annotator: me,
        progress: (done, total),
    } = store::survey::standing_issuing_resume_code(db, study, annotator).await?;
    // a designed study's participants answer its units (its progress is theirs)
    let designed = match store::designs::design(db, study).await? {
        Some(_) => Some(
            super::designs::of(db, study)
                .await
                .map_err(|e| StoreError::Invalid(e.to_string()))?,
        ),
        None => None,
    };
    let (done, total) = match &designed {
        // the work (attention units are checks outside it), at most N units
        Some(_) => {
            let units = store::units::count(db, study).await?;
            (
                store::units::answered(db, study, annotator).await?,
                settings
                    .crowd
                    .items_per_participant
                    .map_or(units, |n| n.min(units)),
            )
        }
        None => (done, total),
    };
    // attention items: told once after the first answer against the expected one, and at the
    // study's number of them the survey ends with the screen-out code
    let mut me = me;
    let mut notice = None;
    if let (Some(allowed), false, true) =
        (settings.crowd.gold_failures, me.finished, me.guideline_seen)
    {
        let failed = if designed.is_some() {
            store::units::attention_misses(db, annotator).await?
        } else {
            store::survey::gold_votes(db, annotator)
                .await?
                .into_iter()
                .filter(|&(cr, cc, unnatural)| {
                    natstudy_engine::analysis::judges_unnatural(cr, cc) != unnatural
                })
                .count() as i64
        };
        if failed >= allowed {
            // the survey ends, and the participant leaves the analysis
            let reason = format!("attention: {failed} check items answered against the expected answer (a survey ends at {allowed})");
            store::survey::finish_excluding(
                db,
                study,
                annotator,
                store::Outcome::ScreenedOut,
                Some(&reason),
            )
            .await?;
            me.finished = true;
            me.outcome = Some(store::Outcome::ScreenedOut);
        } else if failed > 0 && !me.attention_warned {
            store::survey::attention_warned(db, study, annotator).await?;
            notice = Some(
                if designed.is_some() {
                    DESIGNED_ATTENTION_NOTICE
                } else {
                    ATTENTION_NOTICE
                }
                .to_owned(),
            );
        }
    }
    let required = settings.crowd.items_per_participant;
    // the work asked of a participant is at most N items
    let total = match required {
        Some(n) => total.min(n).max(done),
        None => total,
    };
    let step = if me.finished {
        finished_step(&settings, done, me.outcome)
    } else if !me.consented {
        let screener = super::screener::of(&settings.screener_json);
        let text = if settings.consent_text.trim().is_empty() {
            format!(
                "You are invited to take part in the study \"{}\". You will {}. \
                 Participation is voluntary; you may stop at any time. Your answers are stored under a code \
                 ({}) and never with your name.",
                settings.name,
                if designed.is_some() {
                    "answer questions about snippets of code"
                } else {
                    "rate pairs of Java methods"
                },
                me.code
            )
        } else {
            settings.consent_text.clone()
        };
        AnnotateStep::Consent { text, screener }
    } else if !me.guideline_seen {
        AnnotateStep::Guideline
    } else if let Some(design) = &designed {
        let unit = match revise {
            Some(Revise::Unit(claim)) => Some(claim),
            _ => None,
        };
        let at = (study, annotator);
        super::designed_step::step(db, &settings, at, design, done, me.waiting_since, unit).await?
    } else {
        // only an item this annotator rated may be revised (its vote fills the form); anything
        // else shows the queue, which never hands out an item the annotator rated
        let mine = match revise {
            Some(Revise::Item(item)) => store::my_votes::my_vote(db, annotator, item)
                .await?
                .map(|vote| (item, vote)),
            _ => None,
        };
        let target = match mine {
            Some((item, vote)) => Some((item, Some(vote), None)),
            None => match next {
                Next::Claimed(claimed) => claimed,
                Next::Claim => {
                    store::assign::next_item(db, study, annotator, crate::db::now_ms()).await?
                }
            }
            .map(|h| (h.item, None, Some(h.original_left))),
        };
        match target {
            Some((item, previous, side)) => {
                if previous.is_none() && me.waiting_since.is_some() {
                    // an item came: a later wait starts again
                    store::survey::set_waiting(db, study, annotator, None).await?;
                }
                let held = cache.item(db, study, item).await?;
                let it = &held.1;
                let diff = item_diff(item, it).await?;
                let (method_line, method_lines) = method_in_file(it);
                let original_left = !settings.randomise_sides
                    || match side {
                        Some(left) => left,
                        None => store::my_votes::original_left(db, annotator, item).await?,
                    };
                AnnotateStep::Rate(Box::new(ItemView {
                    item,
                    summary: crate::domain::shown::summary(
                        &it.summary,
                        &it.operator,
                        settings.blind_operator,
                    ),
                    operator: (!settings.blind_operator).then(|| it.operator.clone()),
                    bug_id: (!settings.blind_bug_id).then(|| it.bug_key.clone()),
                    project: it.project.clone(),
                    file_path: it.file_path.clone(),
                    method: it.method.clone(),
                    diff: diff.as_ref().clone(),
                    has_file: it.file_source.is_some(),
                    method_line,
                    method_lines,
                    original_left,
                    previous,
                    token: super::participation::fresh_token(),
                }))
            }
            None => {
                let now = crate::db::now_ms();
                let waiting = super::waiting::waiting(
                    db,
                    &settings,
                    (study, annotator),
                    done,
                    me.waiting_since,
                    now,
                    None,
                )
                .await?;
                let mine = store::my_votes::my_votes(db, study, annotator, page).await?;
                let (pages, before) = (mine.pages(), mine.before());
                let hold_lapsed = mine.total == 0
                    && waiting.is_none()
                    && store::assign::lapsed_unanswered(db, annotator, now).await?;
                AnnotateStep::Review {
                    rated: mine
                        .rows
                        .into_iter()
                        .map(|(item, summary, cr, cc)| RatedRow {
                            item,
                            summary: crate::domain::shown::summary(
                                &summary,
                                "",
                                settings.blind_operator,
                            ),
                            cr,
                            cc,
                        })
                        .collect(),
                    page: u32::try_from(mine.page + 1).unwrap_or(u32::MAX),
                    pages: u32::try_from(pages).unwrap_or(u32::MAX),
                    before: u64::try_from(before).unwrap_or(0),
                    total: u64::try_from(mine.total).unwrap_or(0),
                    waiting,
                    required: required.and_then(|n| u64::try_from(n).ok()),
                    hold_lapsed,
                    designed: false,
                    units: Vec::new(),
                }
            }
        }
    };
    Ok(AnnotateState {
        study,
        study_name: settings.name,
        code: me.code,
        resume_code: me
            .resume_code
            .as_deref()
            .map(store::resume_codes::display_resume_code),
        done,
        total,
        guideline_html: guideline_memo(&settings.guideline).as_ref().clone(),
        step,
        notice,
    })
}

/// What a participant is told, once, after an attention item answered against its expected
/// answer.
/// The same, told in a designed study.
pub const DESIGNED_ATTENTION_NOTICE: &str = "One of the units you answered was a check whose \
    answer is agreed, and your answer differed from it. Please read each unit carefully: after \
    further such answers the survey ends.";

pub const ATTENTION_NOTICE: &str = "One of the pairs you rated was a check item whose answer is \
    agreed, and your answer differed from it. Please read each pair carefully: after further \
    such answers the survey ends.";

/// The end of the survey: the code of the participant's outcome (the completion code only
/// for the work asked, the partial code after the study's wait, the screen-out code for a
/// participant the screener turned away) and where they go back to with it. A participant who
/// finished before outcomes were kept reads as the code was given then.
fn finished_step(
    settings: &store::survey::StudySettings,
    rated: i64,
    outcome: Option<store::Outcome>,
) -> AnnotateStep {
    let rated = u64::try_from(rated).unwrap_or(0);
    let min_rated = u64::try_from(settings.min_rated_for_code).unwrap_or(0);
    let outcome = match outcome {
        Some(store::Outcome::Completed) => Outcome::Completed,
        Some(store::Outcome::Partial) => Outcome::Partial,
        Some(store::Outcome::Returned) => Outcome::Returned,
        Some(store::Outcome::ScreenedOut) => Outcome::ScreenedOut,
        None if rated >= min_rated => Outcome::Completed,
        None => Outcome::Returned,
    };
    let crowd = &settings.crowd;
    let (code, url) = match outcome {
        Outcome::Completed => (&settings.completion_code, &crowd.completion_url),
        Outcome::Partial => (&crowd.partial_code, &crowd.completion_url),
        Outcome::ScreenedOut => (&crowd.screenout_code, &crowd.screenout_url),
        Outcome::Returned => (&None, &None),
    };
    AnnotateStep::Finished {
        completion_code: code.clone(),
        redirect: url
            .as_deref()
            .map(|u| super::urls::fill_code(u, code.as_deref())),
        rated,
        min_rated,
        has_code: settings.completion_code.is_some(),
        outcome,
    }
}

#[cfg(test)]
mod tests {
    use super::guideline_html;

    #[test]
    fn the_completion_code_is_for_work_done() {
        let mut s = settings();
        let code = |s: &crate::store::survey::StudySettings, rated| match super::finished_step(
            s, rated, None,
        ) {
            natstudy_types::AnnotateStep::Finished {
                completion_code, ..
            } => completion_code,
            other => panic!("{other:?}"),
        };
        assert_eq!(code(&s, 0), None, "a full study: nothing rated, no code");
        assert_eq!(code(&s, 1).as_deref(), Some("C0DE"));
        s.min_rated_for_code = 10;
        assert_eq!(code(&s, 9), None);
        assert_eq!(code(&s, 10).as_deref(), Some("C0DE"));
        s.min_rated_for_code = 0;
        assert_eq!(code(&s, 0).as_deref(), Some("C0DE"));
    }

    fn settings() -> crate::store::survey::StudySettings {
        crate::store::survey::StudySettings {
            name: "S".into(),
            ratings_per_item: 5,
            consent_text: String::new(),
            screener_json: "[]".into(),
            guideline: String::new(),
            blind_operator: true,
            blind_bug_id: false,
            randomise_sides: false,
            completion_code: Some("C0DE".into()),
            min_rated_for_code: 1,
            crowd: crate::store::survey::CrowdSettings {
                items_per_participant: Some(10),
                partial_after_minutes: Some(15),
                partial_code: Some("PART".into()),
                completion_url: Some(
                    "https://app.prolific.com/submissions/complete?cc={code}".into(),
                ),
                screenout_code: Some("SCRN".into()),
                screenout_url: Some("https://example.org/out?c={code}".into()),
                speeder_seconds: None,
                gold_failures: None,
                pilot: false,
            },
        }
    }

    /// Each outcome has its code and its way back: the completion code for the work asked,
    /// the partial code after the wait (through the same URL), no code for work left undone,
    /// the screen-out code through its own URL.
    #[test]
    fn each_outcome_has_its_code_and_way_back() {
        use crate::store::Outcome as O;
        let s = settings();
        let end = |o| match super::finished_step(&s, 3, Some(o)) {
            natstudy_types::AnnotateStep::Finished {
                completion_code,
                redirect,
                ..
            } => (completion_code, redirect),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            end(O::Completed),
            (
                Some("C0DE".into()),
                Some("https://app.prolific.com/submissions/complete?cc=C0DE".into())
            )
        );
        assert_eq!(
            end(O::Partial),
            (
                Some("PART".into()),
                Some("https://app.prolific.com/submissions/complete?cc=PART".into())
            )
        );
        assert_eq!(end(O::Returned), (None, None));
        assert_eq!(
            end(O::ScreenedOut),
            (
                Some("SCRN".into()),
                Some("https://example.org/out?c=SCRN".into())
            )
        );
    }

    /// No completion code before N while work may come; the code at N; the partial code only
    /// after the study's wait; when nothing can come, the code for the minimum.
    #[test]
    fn finishing_gives_the_outcome_of_the_work_done() {
        use crate::store::Outcome as O;
        let mut s = settings();
        let min = 60_000;
        let at = |done, may_come, since: Option<i64>, now| {
            crate::service::outcome::outcome_on_finish(&s, done, may_come, since, now)
        };
        assert_eq!(at(10, true, None, 0), O::Completed, "N reached");
        assert_eq!(at(11, false, None, 0), O::Completed);
        assert_eq!(at(1, true, None, 0), O::Returned, "work may come: no code");
        assert_eq!(
            at(1, true, Some(0), 15 * min - 1),
            O::Returned,
            "wait not over"
        );
        assert_eq!(at(1, true, Some(0), 15 * min), O::Partial);
        assert_eq!(at(1, false, Some(0), 0), O::Completed, "nothing can come");
        assert_eq!(
            at(0, false, None, 0),
            O::Returned,
            "a full study: nothing rated"
        );
        s.crowd.partial_after_minutes = None;
        assert_eq!(
            crate::service::outcome::outcome_on_finish(&s, 1, true, Some(0), 1 << 40),
            O::Returned,
            "no partial code offered"
        );
        s.crowd.items_per_participant = None;
        assert_eq!(
            crate::service::outcome::outcome_on_finish(&s, 5, true, None, 0),
            O::Returned,
            "without N: all they can be given"
        );
        assert_eq!(
            crate::service::outcome::outcome_on_finish(&s, 5, false, None, 0),
            O::Completed
        );
    }

    /// The default guideline explains the marker the diff puts on buggy lines, in the words
    /// the stylesheet shows.
    #[test]
    fn the_default_guideline_explains_the_buggy_line_marker() {
        let css = include_str!("../../../../style/main.css");
        let marker = css
            .split("content: \"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .map(str::trim)
            .expect("the marker in main.css");
        assert_eq!(marker, "◀ buggy line");
        let html = guideline_html(crate::store::studies::DEFAULT_GUIDELINE);
        assert!(html.contains(marker), "{html}");
    }

    #[test]
    fn guideline_links_keep_only_safe_targets() {
        let html = guideline_html(
            "[a](https://example.org) [b](javascript:alert(1)) [c](/studies/1) \
             [d](mailto:x@example.org) [e](JaVaScRiPt:alert(1)) [f](data:text/html,x) \
             ![i](vbscript:x) <script>alert(1)</script>",
        );
        assert!(html.contains(r#"href="https://example.org""#), "{html}");
        assert!(html.contains(r##"href="/studies/1""##), "{html}");
        assert!(html.contains(r#"href="mailto:x@example.org""#), "{html}");
        assert!(!html.to_lowercase().contains("javascript:"), "{html}");
        assert!(!html.contains("data:"), "{html}");
        assert!(!html.contains("vbscript:"), "{html}");
        assert!(!html.contains("<script>"), "{html}");
        assert_eq!(html.matches(r##"="#""##).count(), 4, "{html}");
    }
}
