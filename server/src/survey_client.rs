//! A survey participant over HTTP, speaking to the server as the survey's pages do: join
//! through an invite, consent, read the guideline, ask for the item, vote. The load benchmark
//! (`natstudy bench http`) and the end-to-end tests share it, so both send what a browser sends.

use std::time::Duration;

use natstudy_vocab::ids::{ItemId, StudyId};

/// A participant's client: keeps its session cookie, never follows redirects.
pub fn client(timeout: Duration) -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .build()
}

/// The requests of a join, in order: the invite, the consent (with the demo screener's
/// answers), the guideline read.
pub const JOIN_STEPS: [&str; 3] = ["/api/join", "/api/annotate/consent", "/api/annotate/start"];

/// Sends join step `step` (an index of [`JOIN_STEPS`]); an error names the step and the status
/// when the server refused it.
pub async fn join_step(
    c: &reqwest::Client,
    base: &str,
    study: StudyId,
    invite: &str,
    step: usize,
) -> anyhow::Result<()> {
    let sid = study.to_string();
    let path = JOIN_STEPS
        .get(step)
        .ok_or_else(|| anyhow::anyhow!("no join step {step}"))?;
    let form: Vec<(&str, &str)> = match step {
        0 => vec![("token", invite)],
        1 => vec![
            ("study", &sid),
            ("answers[years]", "1-3"),
            ("answers[role]", "developer"),
        ],
        _ => vec![("study", &sid)],
    };
    let r = c.post(format!("{base}{path}")).form(&form).send().await?;
    if !(r.status().is_success() || r.status().is_redirection()) {
        anyhow::bail!("{path}: {}", r.status());
    }
    Ok(())
}

/// The participant's state, as the survey page gets it.
pub async fn state(
    c: &reqwest::Client,
    base: &str,
    study: StudyId,
) -> reqwest::Result<serde_json::Value> {
    c.post(format!("{base}/api/annotate/state"))
        .form(&[("study", study.to_string())])
        .send()
        .await?
        .error_for_status()?
        .json()
        .await
}

/// The state a vote's answer carries, as the survey page takes it (`None`: the vote was kept
/// but the answer carries no state; ask [`state`]). An error for a refused vote.
pub async fn next_state(r: reqwest::Response) -> reqwest::Result<Option<serde_json::Value>> {
    let next: serde_json::Value = r.error_for_status()?.json().await?;
    Ok((!next.is_null()).then_some(next))
}

/// The item to rate and its submit token, when the state is the rating step.
pub fn rate_step(state: &serde_json::Value) -> Option<(ItemId, String)> {
    let rate = &state["step"]["Rate"];
    Some((
        ItemId(rate["item"].as_i64()?),
        rate["token"].as_str()?.to_owned(),
    ))
}

/// A vote: the two answers, a comment and the submit token the page was given.
#[derive(Debug, Clone, Copy)]
pub struct Answers<'a> {
    pub cr: u8,
    pub cc: u8,
    pub comment: &'a str,
}

/// Submits a vote; an error only when no answer came (the status is the caller's to judge).
pub async fn vote(
    c: &reqwest::Client,
    base: &str,
    study: StudyId,
    item: ItemId,
    token: &str,
    answers: Answers<'_>,
) -> reqwest::Result<reqwest::Response> {
    c.post(format!("{base}/api/annotate/vote"))
        .form(&[
            ("study", study.to_string()),
            ("item", item.to_string()),
            ("cr", answers.cr.to_string()),
            ("cc", answers.cc.to_string()),
            ("comment", answers.comment.to_owned()),
            ("token", token.to_owned()),
        ])
        .send()
        .await
}
