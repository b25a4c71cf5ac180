//! Studies: the list, creation (admins) and one study's overview.

use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use crate::components::layout::CurrentUser;
use crate::components::status::{ErrorBox, Loading};
use crate::model::Role;
use crate::model::StudyId;
use crate::study_api::{get_study, list_studies, CreateStudy};
use crate::text::noun;

#[component]
pub fn StudiesPage() -> impl IntoView {
    let create = ServerAction::<CreateStudy>::new();
    let studies = Resource::new(move || create.version().get(), |_| list_studies());
    let user = expect_context::<CurrentUser>();
    view! {
        <leptos_meta::Title text="Studies" />
        <h1>"Studies"</h1>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                let admin = matches!(user.await, Ok(Some(u)) if u.role == Role::Admin);
                admin.then(|| view! {
                    <section class="card">
                        <h2>"New study"</h2>
                        <ActionForm action=create attr:id="create-study-form" attr:class="row">
                            <input type="text" name="name" placeholder="name" required />
                            <input type="text" name="description" placeholder="description" />
                            <button type="submit">"Create"</button>
                        </ActionForm>
                        {move || create.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorBox message=e.to_string() /> })}
                    </section>
                })
            })}
        </Suspense>
        <Suspense fallback=Loading>
            {move || Suspend::new(async move {
                match studies.await {
                    Ok(rows) if rows.is_empty() => view! { <p class="muted">"No studies yet."</p> }.into_any(),
                    Ok(rows) => view! {
                        <table class="grid" id="studies">
                            <thead>
                                <tr>
                                    <th>"Study"</th><th class="num">"Bugs"</th><th class="num">"Items"</th>
                                    <th class="num">"Votes"</th><th class="num">"Annotators"</th><th class="num">"k"</th>
                                </tr>
                            </thead>
                            <tbody>
                                {rows
                                    .into_iter()
                                    .map(|s| view! {
                                        <tr>
                                            <td><a href=format!("/studies/{}", s.id)>{s.name}</a></td>
                                            <td class="num">{s.bugs}</td>
                                            <td class="num">{s.items}</td>
                                            <td class="num">{s.votes}</td>
                                            <td class="num">{s.annotators}</td>
                                            <td class="num">{s.ratings_per_item}</td>
                                        </tr>
                                    })
                                    .collect_view()}
                            </tbody>
                        </table>
                    }
                        .into_any(),
                    Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// Moves on when the study's items change on this page (an import, generated items added), so
/// the study's summary (the header tiles) reloads.
#[derive(Debug, Clone, Copy)]
pub struct StudyChanged(RwSignal<u32>);

impl StudyChanged {
    pub fn bump(self) {
        self.0.update(|n| *n += 1);
    }
}

#[component]
pub fn StudyPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || {
        params.with(|p| {
            p.get("id")
                .and_then(|s| s.parse::<StudyId>().ok())
                .unwrap_or(StudyId(0))
        })
    };
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
        {move || view! { <crate::pages::study_admin::StudyWork study=id() /> }}
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
                                    <a href=format!("/studies/{}/export/reviews.csv", s.id) rel="external">"patch review (CSV)"</a>
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

/// `/studies/:id/results`: the analysis of the votes so far, refreshed as votes arrive.
#[component]
pub fn ResultsPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || {
        params.with(|p| {
            p.get("id")
                .and_then(|s| s.parse::<StudyId>().ok())
                .unwrap_or(StudyId(0))
        })
    };
    let (tick, set_tick) = signal(0u32);
    #[cfg(feature = "hydrate")]
    {
        if let Ok(h) = set_interval_with_handle(
            move || set_tick.update(|t| *t += 1),
            std::time::Duration::from_secs(15),
        ) {
            on_cleanup(move || h.clear());
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = set_tick;
    let results = Resource::new(
        move || (id(), tick.get()),
        |(s, _)| crate::study_api::get_results(s),
    );
    view! {
        <leptos_meta::Title text="Results" />
        <h1>"Results"</h1>
        <p><a href=move || format!("/studies/{}", id())>"Back to the study"</a></p>
        <Transition fallback=Loading>
            {move || Suspend::new(async move {
                match results.await {
                    Ok(r) => {
                        let study = id();
                        view! {
                        <p class="muted">"Analysis of " <b id="results-votes">{r.votes}</b> " votes; refreshed every 15 s."</p>
                        <section class="card" id="results-headline">
                            {r.headline.into_iter().map(|l| view! { <p>{l}</p> }).collect_view()}
                        </section>
                        <p class="downloads" id="paper-zip">
                            <a href=format!("/studies/{study}/paper.zip") rel="external" download>"Download every table and figure"</a>
                            " (zip: CSV and LaTeX tables, SVG, PDF and PNG figures, report.tex)"
                        </p>
                        <section class="charts">
                            {r.figures
                                .into_iter()
                                .map(|f| {
                                    let href = |ext: &str| format!("/studies/{study}/charts/{}.{ext}", f.id);
                                    let (svg_href, pdf_href, png_href) = (href("svg"), href("pdf"), href("png"));
                                    view! {
                                        <figure class=if f.wide { "chart wide" } else { "chart" } id=format!("{}-svg", f.id)>
                                            <div class="chart-image" role="img" aria-label=f.title.clone() inner_html=f.svg></div>
                                            <figcaption>
                                                <b>{f.title}". "</b>{f.caption}" "
                                                <span class="downloads">
                                                    <a href=svg_href rel="external" download>"SVG"</a>" "
                                                    <a href=pdf_href rel="external" download class="pdf">"PDF"</a>" "
                                                    <a href=png_href rel="external" download class="png">"PNG"</a>
                                                </span>
                                            </figcaption>
                                        </figure>
                                    }
                                })
                                .collect_view()}
                        </section>
                        <div id="results-tables">
                            {r.tables.into_iter().map(|t| view! {
                                <section class="card">
                                    <h2>{t.title.clone()}</h2>
                                    <p class="table-note">{t.note}" "
                                        <span class="downloads">
                                            <a href=format!("/studies/{study}/tables/{}.csv", t.id) rel="external" download>"CSV"</a>" "
                                            <a href=format!("/studies/{study}/tables/{}.tex", t.id) rel="external" download>"LaTeX"</a>
                                        </span>
                                    </p>
                                    // a wide table scrolls inside its card: by keyboard too
                                    <div class="table-scroll" tabindex="0" role="region" aria-label=t.title>
                                    <table class="grid" id=format!("table-{}", t.id)>
                                        // the first column names the row; the others hold numbers: right-aligned, tabular figures
                                        <thead><tr>{t.header.into_iter().enumerate().map(|(i, h)| view! { <th class=(i > 0).then_some("num")>{h}</th> }).collect_view()}</tr></thead>
                                        <tbody>
                                            {t.rows.into_iter().map(|row| view! {
                                                <tr>{row.into_iter().enumerate().map(|(i, c)| view! { <td class=(i > 0).then_some("num")>{c}</td> }).collect_view()}</tr>
                                            }).collect_view()}
                                        </tbody>
                                    </table>
                                    </div>
                                </section>
                            }).collect_view()}
                        </div>
                    }
                    .into_any()
                    }
                    Err(e) => view! { <ErrorBox message=e.to_string() /> }.into_any(),
                }
            })}
        </Transition>
    }
}
