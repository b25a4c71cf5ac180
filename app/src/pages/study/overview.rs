//! `/studies/:id`: one study's overview, with its working parts below ([`super::work`]).

use leptos::prelude::*;

use crate::components::status::{ErrorBox, Loading};
use crate::study_api::get_study;
use crate::text::noun;

use super::StudyChanged;

#[component]
pub fn StudyPage() -> impl IntoView {
    let id = super::route_study_id();
    let changed = StudyChanged(RwSignal::new(0));
    provide_context(changed);
    let detail = Resource::new(move || (id(), changed.0.get()), |(s, _)| get_study(s));
    view! {
        <leptos_meta::Title text="Study" />
        <Suspense fallback=Loading>
            {move || Suspend::new(async move {
                // resources made inside a Suspend do not hydrate: the study's working parts
                // (which make their own) sit between the two halves, outside any Suspend
                match detail.await {
                    Ok(d) => {
                        let s = d.summary;
                        view! {
                            <h1 id="study-name">{s.name}</h1>
                            <p class="muted">{s.description}</p>
                            <section class="stats">
                                <div><b>{s.bugs}</b>" "{noun(s.bugs, "bug")}</div>
                                <div><b>{s.items}</b>" "{noun(s.items, "transformation")}</div>
                                <div><b>{s.votes}</b>" "{noun(s.votes, "vote")}</div>
                                <div><b>{s.annotators}</b>" "{noun(s.annotators, "annotator")}</div>
                                <div><b>{s.ratings_per_item}</b>" "{noun(s.ratings_per_item, "rating")}" per item"</div>
                            </section>
                        }
                            .into_any()
                    }
                    Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                }
            })}
        </Suspense>
        {move || view! { <super::work::StudyWork study=id() /> }}
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match detail.await {
                    Ok(d) => {
                        let s = d.summary;
                        view! {
                            <section class="card" id="downloads">
                                <h2>"Downloads"</h2>
                                <p class="row">
                                    <a href=format!("/studies/{}/export/dataset.jsonl", s.id) rel="external">"labelled dataset (JSONL)"</a>
                                    <a href=format!("/studies/{}/export/dataset.csv", s.id) rel="external">"labelled dataset (CSV)"</a>
                                    <a href=format!("/studies/{}/export/votes.csv", s.id) rel="external">"votes (CSV)"</a>
                                    <a href=format!("/studies/{}/export/matrix.csv", s.id) rel="external">"item × annotator matrix (CSV)"</a>
                                    <a href=format!("/studies/{}/export/survey.json", s.id) rel="external">"survey.json"</a>
                                    <a href=format!("/studies/{}/export/survey-participants.csv", s.id) rel="external" id="survey-participants-download">"survey.json's participants (CSV)"</a>
                                    <a href=format!("/studies/{}/export/reviews.csv", s.id) rel="external">"patch review (CSV)"</a>
                                    <a href=format!("/studies/{}/export/npr_results.csv", s.id) rel="external">"repair results (CSV)"</a>
                                    <a href=format!("/studies/{}/export/ce_scores.csv", s.id) rel="external">"cross-entropies (CSV)"</a>
                                    <a href=format!("/studies/{}/export/participants.csv", s.id) rel="external" id="participants-download">"participants and their codes (CSV)"</a>
                                    <a href=format!("/studies/{}/results", s.id) id="results-link">"Results: tables and charts"</a>
                                    <a href=format!("/studies/{}/review", s.id) id="review-link">"Review patches"</a>
                                    <a href=format!("/studies/{}/review/decide", s.id) id="review-decide-link">"Patch review: decisions"</a>
                                </p>
                            </section>
                            <section class="card">
                                <h2>"By level"</h2>
                                <ul>
                                    {d.levels
                                        .into_iter()
                                        .map(|l| view! { <li>{l.level}": "{l.items}</li> })
                                        .collect_view()}
                                </ul>
                            </section>
                            // a wide table: on a phone the card scrolls, by keyboard too
                            <section class="card" tabindex="0" role="region" aria-label="Transformations">
                                <h2>"Transformations"</h2>
                                <table class="grid" id="items">
                                    <thead>
                                        <tr><th>"Item"</th><th>"Bug"</th><th>"Operator"</th><th>"Level"</th><th>"Summary"</th><th class="num">"Votes"</th></tr>
                                    </thead>
                                    <tbody>
                                        {d.items
                                            .into_iter()
                                            .map(|i| view! {
                                                <tr>
                                                    <td>{i.key}</td><td>{i.bug}</td><td>{i.operator}</td>
                                                    <td>{i.level}</td><td><crate::text::Summary text=i.summary /></td><td class="num">{i.votes}</td>
                                                </tr>
                                            })
                                            .collect_view()}
                                    </tbody>
                                </table>
                            </section>
                            <section class="card">
                                <h2>"Activity"</h2>
                                <ul class="log" id="audit">
                                    {d.audit
                                        .into_iter()
                                        .map(|a| view! {
                                            <li>
                                                <code>{a.action}</code>" "{a.detail}" — "
                                                {a.user.unwrap_or_else(|| "system".into())}
                                            </li>
                                        })
                                        .collect_view()}
                                </ul>
                            </section>
                        }
                            .into_any()
                    }
                    Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                }
            })}
        </Suspense>
    }
}
