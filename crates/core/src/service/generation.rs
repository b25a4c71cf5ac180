//! Generating items: the engine's transformations of a study's bugs, proposed as previews and
//! added as items on request.

use std::collections::BTreeMap;

use super::{ServiceError, ServiceResult};
use crate::store::Db;
use crate::store::{self, imports::Outcome};
use natstudy_engine::formats;
use natstudy_vocab::ids::{StudyId, UserId};

/// A generated transformation and the key the study page selects it by.
pub struct Proposal {
    pub key: String,
    pub generated: natstudy_engine::generate::Generated,
}

/// The engine's transformations of a study's bugs that are not items yet, numbered after the
/// study's items.
pub async fn propose(
    db: &Db,
    study: StudyId,
    operators: &str,
    all_sites: bool,
    model: Option<std::sync::Arc<natstudy_engine::lm::Scorer>>,
) -> ServiceResult<(Vec<formats::items::BugRecord>, Vec<Proposal>)> {
    let operators = natstudy_engine::generate::parse_operators(operators)
        .map_err(|e| ServiceError::Invalid(e.to_string()))?;
    let bugs = store::generation::bugs(db, study).await?;
    let (mut next, seen) = store::generation::existing(db, study).await?;
    let opts = natstudy_engine::generate::Options {
        operators,
        all_sites,
    };
    // the preview's client may leave (a closed tab, a reload): its work stops with it; and it
    // stops at its budget whether or not the client waits
    let cancel = Cancel::default();
    let budget = Budget::new(cancel.flag.clone());
    let (bugs, generated) = tokio::task::spawn_blocking(move || {
        if let Err(e) = budget.admits(&bugs, &opts) {
            return (bugs, Some(Err(e)));
        }
        let names = model.map(natstudy_engine::NgramNames);
        let scorer = names
            .as_ref()
            .map(|m| m as &dyn natstudy_engine::transform::NameScorer);
        let out =
            generate_bounded(&bugs, &opts, scorer, &mut next, &budget).map(|p| p.within(&budget));
        (bugs, out)
    })
    .await?;
    drop(cancel);
    let generated = generated.ok_or_else(|| {
        ServiceError::Invalid("the preview was cancelled: its client went away".into())
    })??;
    let proposals = generated
        .map_err(|e| ServiceError::Invalid(e.to_string()))?
        .into_iter()
        .filter(|g| !seen.contains(&(g.record.bug_id.clone(), g.record.source.clone())))
        .map(|g| Proposal {
            key: format!(
                "{}:{}:{}",
                g.record.bug_id,
                g.record.operator,
                &store::imports::digest(&[&g.record.source])[..16]
            ),
            generated: g,
        })
        .collect();
    Ok((bugs, proposals))
}

/// Bugs the preview works on between two looks at whether its client is still there.
const CHUNK: usize = 8;

/// The most bytes of transformed text one preview (or addition) holds — each application's
/// method, and its file when the bug has one: a preview whose estimate exceeds them is refused
/// before any rewriting, and a run stops once past them.
pub const MAX_PREVIEW_BYTES: usize = 64 << 20;

/// The longest a preview (or an addition, or an explanation) runs, whether or not its client
/// waits.
pub const MAX_PREVIEW_TIME: std::time::Duration = std::time::Duration::from_secs(120);

/// A preview's generation, whole or stopped at [`MAX_PREVIEW_BYTES`].
type Generation =
    Result<Vec<natstudy_engine::generate::Generated>, natstudy_engine::generate::Problems>;

/// What a preview's run gave: its transformations, or that they grew past the bound.
#[derive(Debug)]
enum Preview {
    Done(Generation),
    /// The bytes of transformed methods made when it stopped.
    TooBig(usize),
    /// It ran out of its time.
    TooLong,
}

/// What a preview may cost: its bytes ([`MAX_PREVIEW_BYTES`]) and its time
/// ([`MAX_PREVIEW_TIME`]), and whether its client is still there.
struct Budget {
    cancelled: std::sync::Arc<std::sync::atomic::AtomicBool>,
    deadline: std::time::Instant,
    max_bytes: usize,
}

impl Budget {
    fn new(cancelled: std::sync::Arc<std::sync::atomic::AtomicBool>) -> Budget {
        Budget {
            cancelled,
            deadline: std::time::Instant::now() + MAX_PREVIEW_TIME,
            max_bytes: MAX_PREVIEW_BYTES,
        }
    }

    fn cancelled(&self) -> bool {
        self.cancelled.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn out_of_time(&self) -> bool {
        std::time::Instant::now() >= self.deadline
    }

    /// Whether the work is to stop now: its client left, or its time ran out.
    fn stop(&self) -> bool {
        self.cancelled() || self.out_of_time()
    }

    /// The work's estimate ([`natstudy_engine::generate::estimate`]) within the budget, or
    /// why not, in words: the sites, the methods' size and what to do instead.
    fn admits(
        &self,
        bugs: &[formats::items::BugRecord],
        opts: &natstudy_engine::generate::Options,
    ) -> ServiceResult<()> {
        let stop = || self.stop();
        let Some(e) = natstudy_engine::generate::estimate(bugs, opts, &stop) else {
            return Err(self.why_stopped());
        };
        if e.bytes <= self.max_bytes {
            return Ok(());
        }
        let largest = bugs.iter().map(|b| b.source.len()).max().unwrap_or(0);
        Err(ServiceError::Invalid(format!(
            "this preview would try {} applications of {} operators on {} bugs (methods up to \
             {} KiB): about {} MiB of transformed text, over the preview's budget of {} MiB. \
             Choose fewer operators{}, or generate on the command line (natstudy transform \
             writes a file)",
            e.sites,
            opts.operators.len(),
            bugs.len(),
            largest.div_ceil(1024),
            e.bytes >> 20,
            self.max_bytes >> 20,
            if opts.all_sites {
                ", leave \u{201c}also away from the buggy lines\u{201d} off"
            } else {
                ""
            }
        )))
    }

    /// Why work stopped before its end: its client left, or its time ran out.
    fn why_stopped(&self) -> ServiceError {
        if self.cancelled() {
            ServiceError::Invalid("the preview was cancelled: its client went away".into())
        } else {
            ServiceError::Invalid(format!(
                "the preview ran for its {} s and stopped: choose fewer operators or bugs, or \
                 generate on the command line (natstudy transform writes a file)",
                MAX_PREVIEW_TIME.as_secs()
            ))
        }
    }
}

impl Preview {
    /// The generation, or why there is none.
    fn within(self, budget: &Budget) -> ServiceResult<Generation> {
        match self {
            Preview::Done(g) => Ok(g),
            Preview::TooBig(n) => Err(ServiceError::Invalid(format!(
                "the preview passed {} MiB of transformed methods ({} MiB made): choose fewer \
                 operators, or generate on the command line (natstudy transform writes a file)",
                budget.max_bytes >> 20,
                n >> 20
            ))),
            Preview::TooLong => Err(budget.why_stopped()),
        }
    }
}

/// Set when the request that started a preview goes away (its future is dropped).
#[derive(Default)]
struct Cancel {
    flag: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for Cancel {
    fn drop(&mut self) {
        self.flag.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// [`natstudy_engine::generate::generate`] a few bugs at a time within `budget`: stopping
/// (`None`) as soon as its client leaves, [`Preview::TooLong`] once its time runs out,
/// [`Preview::TooBig`] once the methods pass its bytes. Otherwise the same transformations,
/// numbered the same, and problems at the same lines as one run over every bug.
fn generate_bounded(
    bugs: &[formats::items::BugRecord],
    opts: &natstudy_engine::generate::Options,
    scorer: Option<&dyn natstudy_engine::transform::NameScorer>,
    next: &mut BTreeMap<formats::Level, usize>,
    budget: &Budget,
) -> Option<Preview> {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let mut bytes = 0usize;
    let stopped = || {
        if budget.cancelled() {
            None
        } else {
            Some(Preview::TooLong)
        }
    };
    for (i, chunk) in bugs.chunks(CHUNK).enumerate() {
        if bytes > budget.max_bytes {
            return Some(Preview::TooBig(bytes));
        }
        if budget.stop() {
            return stopped();
        }
        let stop = || budget.stop();
        let done = natstudy_engine::generate::generate_until(
            chunk,
            "study bugs",
            opts,
            scorer,
            next,
            &|| {},
            &stop,
        );
        if stop() {
            return stopped();
        }
        match done {
            Ok(g) => {
                bytes += g
                    .iter()
                    .map(|g| g.record.source.len() + g.file_source.as_ref().map_or(0, String::len))
                    .sum::<usize>();
                out.extend(g)
            }
            Err(natstudy_engine::generate::Problems(p)) => {
                problems.extend(p.into_iter().map(|mut p| {
                    p.line += i * CHUNK;
                    p
                }))
            }
        }
    }
    if bytes > budget.max_bytes {
        return Some(Preview::TooBig(bytes));
    }
    Some(Preview::Done(if problems.is_empty() {
        Ok(out)
    } else {
        Err(natstudy_engine::generate::Problems(problems))
    }))
}

/// Applications kept, and per rule: refusals and the first place one happened.
type OperatorTally<'r> = (usize, BTreeMap<&'r str, (usize, String)>);

/// A refusal rule as the study page says it: the page's own control, not the command line's
/// flag, for what allows a site away from the buggy lines.
fn page_words(rule: &str) -> String {
    if rule == natstudy_engine::transform::NOT_BUGGY {
        "changes no buggy line (allowed with \u{201c}also away from the buggy lines\u{201d})".into()
    } else {
        rule.to_owned()
    }
}

/// Why each operator did or did not apply to the study's bugs, summed over the bugs: per
/// operator the applications kept and the refusals by rule (most frequent first, with the
/// first bug and line where each happened).
pub async fn explain(
    db: &Db,
    study: StudyId,
    operators: &str,
    all_sites: bool,
) -> ServiceResult<Vec<natstudy_types::OperatorWhy>> {
    let operators = natstudy_engine::generate::parse_operators(operators)
        .map_err(|e| ServiceError::Invalid(e.to_string()))?;
    let bugs = store::generation::bugs(db, study).await?;
    let opts = natstudy_engine::generate::Options {
        operators: operators.clone(),
        all_sites,
    };
    // the asker may leave: the work stops with them, between two chunks of bugs; and it stops
    // at the preview's budget whether or not they wait
    let cancel = Cancel::default();
    let budget = Budget::new(cancel.flag.clone());
    let out =
        tokio::task::spawn_blocking(move || -> ServiceResult<Vec<natstudy_types::OperatorWhy>> {
            budget.admits(&bugs, &opts)?;
            let explained =
                explain_bounded(&bugs, &opts, &budget).ok_or_else(|| budget.why_stopped())?;
            let mut per_op: BTreeMap<natstudy_engine::transform::Operator, OperatorTally<'_>> =
                operators.iter().map(|o| (*o, Default::default())).collect();
            for (bug, e) in bugs.iter().zip(&explained) {
                let Ok(ops) = e else { continue };
                for x in ops {
                    let entry = per_op.entry(x.operator).or_default();
                    entry.0 += x.applied;
                    for r in &x.refused {
                        let rule = entry
                            .1
                            .entry(r.rule)
                            .or_insert_with(|| (0, format!("{} line {}", bug.bug_id, r.line)));
                        rule.0 += 1;
                    }
                }
            }
            Ok(operators
                .iter()
                .map(|op| {
                    let (kept, rules) = per_op.remove(op).unwrap_or_default();
                    let mut refusals: Vec<natstudy_types::RefusalCount> = rules
                        .into_iter()
                        .map(|(rule, (count, example))| natstudy_types::RefusalCount {
                            rule: page_words(rule),
                            count,
                            example,
                        })
                        .collect();
                    refusals.sort_by(|a, b| b.count.cmp(&a.count).then(a.rule.cmp(&b.rule)));
                    natstudy_types::OperatorWhy {
                        operator: op.name().to_owned(),
                        kept,
                        refusals,
                    }
                })
                .collect::<Vec<_>>())
        })
        .await
        .map_err(|e| ServiceError::Internal(e.into()))?;
    drop(cancel);
    out
}

/// Each bug's explanation ([`natstudy_engine::generate::explain`]) a few bugs at a time, stopping
/// (`None`) as soon as the client leaves or the budget's time runs out.
fn explain_bounded(
    bugs: &[formats::items::BugRecord],
    opts: &natstudy_engine::generate::Options,
    budget: &Budget,
) -> Option<Vec<Result<Vec<natstudy_engine::transform::Explanation>, String>>> {
    let mut out = Vec::with_capacity(bugs.len());
    for chunk in bugs.chunks(CHUNK) {
        if budget.stop() {
            return None;
        }
        out.extend(natstudy_engine::generate::explain(chunk, opts, &|| {}));
    }
    Some(out)
}

/// Adds the selected proposals (by key) as items, numbered consecutively after the study's.
pub async fn add_proposals(
    db: &Db,
    study: StudyId,
    actor: Option<UserId>,
    operators: &str,
    all_sites: bool,
    model: Option<std::sync::Arc<natstudy_engine::lm::Scorer>>,
    keys: &[String],
) -> ServiceResult<Outcome> {
    let wanted: std::collections::HashSet<&str> = keys.iter().map(String::as_str).collect();
    let (bugs, proposals) = propose(db, study, operators, all_sites, model).await?;
    let (mut next, _) = store::generation::existing(db, study).await?;
    let records: Vec<formats::items::TransformationRecord> = proposals
        .into_iter()
        .filter(|p| wanted.contains(p.key.as_str()))
        .map(|p| {
            let mut r = p.generated.record;
            let n = next.entry(r.level).or_insert(1);
            r.id = format!("{}_{n}", r.level.as_str());
            *n += 1;
            r
        })
        .collect();
    if records.len() != wanted.len() {
        return Err(ServiceError::Conflict(format!(
            "{} of the {} selected transformations are no longer proposed (added already, or the bugs changed); preview again",
            wanted.len() - records.len(),
            wanted.len()
        )));
    }
    let sources: Vec<&str> = records.iter().map(|r| r.source.as_str()).collect();
    let digest = store::imports::digest(&sources);
    let used: std::collections::HashSet<&str> = records.iter().map(|r| r.bug_id.as_str()).collect();
    let bugs: Vec<formats::items::BugRecord> = bugs
        .into_iter()
        .filter(|b| used.contains(b.bug_id.as_str()))
        .collect();
    let derived = super::imports::derive_items(bugs.clone(), records.clone()).await?;
    Ok(store::imports::items(db, study, actor, &digest, &bugs, &records, &derived).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A budget of `max_bytes` and the preview's time, stopped by `flag`.
    fn budget_of(flag: &std::sync::Arc<std::sync::atomic::AtomicBool>, max_bytes: usize) -> Budget {
        Budget {
            cancelled: flag.clone(),
            deadline: std::time::Instant::now() + MAX_PREVIEW_TIME,
            max_bytes,
        }
    }

    /// A preview whose estimate exceeds its bytes is refused in words before any rewriting:
    /// the sites, the methods' size, the budget and what to do instead; one within them runs.
    /// Out of time, a run stops and says so (not "cancelled").
    #[test]
    fn a_preview_over_its_budget_is_refused_before_it_runs() {
        let bugs: Vec<_> = (1..=4).map(bug).collect();
        let opts = natstudy_engine::generate::Options {
            operators: natstudy_engine::generate::parse_operators("all").expect("operators"),
            all_sites: true,
        };
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let e = natstudy_engine::generate::estimate(&bugs, &opts, &|| false).expect("estimated");
        assert!(e.sites > 0 && e.bytes > 0, "{e:?}");
        let mut next = BTreeMap::new();
        let made = match generate_bounded(
            &bugs,
            &opts,
            None,
            &mut next,
            &budget_of(&flag, MAX_PREVIEW_BYTES),
        ) {
            Some(Preview::Done(Ok(g))) => g,
            other => panic!("{other:?}"),
        };
        let made_bytes: usize = made
            .iter()
            .map(|g| g.record.source.len() + g.file_source.as_ref().map_or(0, String::len))
            .sum();
        assert!(
            made.len() <= e.sites,
            "{} made, {} estimated",
            made.len(),
            e.sites
        );
        assert!(
            made_bytes <= e.bytes,
            "{made_bytes} made, {} estimated",
            e.bytes
        );
        let small = budget_of(&flag, e.bytes - 1);
        let refused = small.admits(&bugs, &opts).expect_err("over the budget");
        let words = refused.to_string();
        for says in [
            "applications",
            "operators",
            "MiB",
            "leave",
            "natstudy transform",
        ] {
            assert!(words.contains(says), "{says}: {words}");
        }
        assert!(budget_of(&flag, e.bytes).admits(&bugs, &opts).is_ok());
        let late = Budget {
            cancelled: flag.clone(),
            deadline: std::time::Instant::now(),
            max_bytes: MAX_PREVIEW_BYTES,
        };
        assert!(matches!(
            generate_bounded(&bugs, &opts, None, &mut BTreeMap::new(), &late),
            Some(Preview::TooLong)
        ));
        let said = Preview::TooLong
            .within(&late)
            .expect_err("out of time")
            .to_string();
        assert!(
            said.contains("stopped") && !said.contains("cancelled"),
            "{said}"
        );
        assert!(explain_bounded(&bugs, &opts, &late).is_none());
    }

    fn bug(n: usize) -> formats::items::BugRecord {
        let text = format!(
            r#"{{"bug_id": "B-{n}", "project": "P", "file": "A.java", "method": "m", "source": "int m(int count) {{\n  if (count < {n}) {{\n    return count;\n  }}\n  return 0;\n}}\n", "buggy_lines": [2]}}"#
        );
        formats::items::parse_bugs(&text, "b.jsonl")
            .expect("a bug")
            .remove(0)
    }

    /// A preview of one long method (1,500 lines, every one buggy: thousands of sites) whose
    /// client leaves stops within its current site, not after the method: before, the look at
    /// the client came only between chunks of bugs, and such a method ran for minutes.
    #[test]
    fn a_preview_of_one_long_method_stops_when_cancelled() {
        let mut body = String::from("int m(int a, int b) {\n    int s = 0;\n");
        for i in 0..500 {
            body.push_str(&format!(
                "    int x{i} = a + {i};\n    if (x{i} < b) {{ s = s + x{i}; }}\n    for (int j{i} = 0; j{i} < 3; j{i}++) {{ s += j{i}; }}\n"
            ));
        }
        body.push_str("    return s;\n}\n");
        let lines: Vec<String> = (1..=body.lines().count()).map(|l| l.to_string()).collect();
        let record = serde_json::json!({
            "bug_id": "long", "project": "P", "file": "A.java", "method": "m",
            "source": body, "buggy_lines": lines.iter().map(|l| l.parse::<u64>().unwrap_or(1)).collect::<Vec<_>>(),
        });
        let bugs = formats::items::parse_bugs(&record.to_string(), "b.jsonl").expect("a bug");
        let opts = natstudy_engine::generate::Options {
            operators: natstudy_engine::generate::parse_operators("all").expect("operators"),
            all_sites: false,
        };
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let setter = flag.clone();
        let asked = std::time::Instant::now();
        let stopper = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            setter.store(true, std::sync::atomic::Ordering::Relaxed);
            std::time::Instant::now()
        });
        let mut next = BTreeMap::new();
        let out = generate_bounded(
            &bugs,
            &opts,
            None,
            &mut next,
            &budget_of(&flag, MAX_PREVIEW_BYTES),
        );
        let stopped_at = stopper.join().expect("stopper");
        assert!(out.is_none(), "the preview ran to its end");
        let after = stopped_at.elapsed();
        assert!(
            after < std::time::Duration::from_secs(5),
            "it went on {after:?} after its client left ({:?} in all)",
            asked.elapsed()
        );
    }

    /// In chunks, the run gives what one run gives; cancelled, it stops before the next chunk.
    #[test]
    fn a_preview_stops_when_cancelled_and_is_otherwise_the_same() {
        let bugs: Vec<_> = (1..=20).map(bug).collect();
        let opts = natstudy_engine::generate::Options {
            operators: natstudy_engine::generate::parse_operators("studied").expect("operators"),
            all_sites: false,
        };
        let mut whole_next = BTreeMap::new();
        let whole = natstudy_engine::generate::generate(
            &bugs,
            "study bugs",
            &opts,
            None,
            &mut whole_next,
            &|| {},
        )
        .expect("generated");
        let mut next = BTreeMap::new();
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let chunked = match generate_bounded(
            &bugs,
            &opts,
            None,
            &mut next,
            &budget_of(&flag, MAX_PREVIEW_BYTES),
        ) {
            Some(Preview::Done(g)) => g.expect("generated"),
            other => panic!("not cancelled, not too big: {other:?}"),
        };
        // bounded: past the bytes allowed, it stops and says so
        let made: usize = chunked.iter().map(|g| g.record.source.len()).sum();
        let mut again = BTreeMap::new();
        match generate_bounded(&bugs, &opts, None, &mut again, &budget_of(&flag, made / 2)) {
            Some(Preview::TooBig(n)) => assert!(n > made / 2 && n <= made, "{n} of {made}"),
            other => panic!("past the bound: {other:?}"),
        }
        match generate_bounded(
            &bugs,
            &opts,
            None,
            &mut BTreeMap::new(),
            &budget_of(&flag, made),
        ) {
            Some(Preview::Done(Ok(g))) => assert_eq!(g.len(), chunked.len()),
            other => panic!("within the bound: {other:?}"),
        }
        let refused = Preview::TooBig(70 << 20)
            .within(&budget_of(&flag, MAX_PREVIEW_BYTES))
            .expect_err("too big");
        assert!(
            refused.to_string().contains("choose fewer operators"),
            "{refused}"
        );
        assert!(!whole.is_empty());
        let ids = |g: &[natstudy_engine::generate::Generated]| {
            g.iter()
                .map(|g| (g.record.id.clone(), g.record.source.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&chunked), ids(&whole));
        assert_eq!(next, whole_next);
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
        let mut next = BTreeMap::new();
        assert!(generate_bounded(
            &bugs,
            &opts,
            None,
            &mut next,
            &budget_of(&flag, MAX_PREVIEW_BYTES)
        )
        .is_none());
        assert!(explain_bounded(&bugs, &opts, &budget_of(&flag, MAX_PREVIEW_BYTES)).is_none());
        let whole = natstudy_engine::generate::explain(&bugs, &opts, &|| {});
        let open = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let chunked = explain_bounded(&bugs, &opts, &budget_of(&open, MAX_PREVIEW_BYTES))
            .expect("not cancelled");
        assert_eq!(
            format!("{chunked:?}"),
            format!("{whole:?}"),
            "the same explanations"
        );
        assert!(next.is_empty(), "nothing was generated");
        // a dropped request sets the flag
        let cancel = Cancel::default();
        let seen = cancel.flag.clone();
        drop(cancel);
        assert!(seen.load(std::sync::atomic::Ordering::Relaxed));
    }
}
