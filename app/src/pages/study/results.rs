//! `/studies/:id/results`: the analysis of the votes so far.

use leptos::prelude::*;

use crate::components::refresh::Refresh;
use crate::components::status::{ErrorBox, Loading};

/// `/studies/:id/results`: the analysis of the votes so far, refreshed as votes arrive.
#[component]
pub fn ResultsPage() -> impl IntoView {
    let id = super::route_study_id();
    // read again 15 s after each answer (a large study's analysis may take longer than that)
    let refresh = Refresh::after(std::time::Duration::from_secs(15));
    let results = Resource::new(
        move || (id(), refresh.tick()),
        move |(s, _)| refresh.read(crate::study_api::get_results(s)),
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
                        {if r.analysed_votes == r.votes {
                            view! { <p class="muted">"Analysis of " <b id="results-votes">{r.votes}</b> " " {crate::text::noun(r.votes, "vote")} "; refreshed every 15 s."</p> }.into_any()
                        } else {
                            // the figures stand on complete items (and included participants)
                            // only: the headline's count, said beside the study's
                            view! { <p class="muted">"Analysis of " <b id="results-analysed">{r.analysed_votes}</b> " of the " <b id="results-votes">{r.votes}</b> " votes: those on items with all their ratings, from participants not excluded; refreshed every 15 s."</p> }.into_any()
                        }}
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
                                            // a wide figure keeps its size on a phone and scrolls in its
                                            // card: by keyboard too
                                            // on a phone it says so (a figure cut at the screen's edge read as all of it)
                                            {f.wide.then(|| view! { <p class="scroll-cue">"Wider than the screen: swipe it sideways for the rest, its legend included →"</p> })}
                                            <div class="chart-image" role="img" aria-label=f.title.clone() tabindex=f.wide.then_some("0") inner_html=f.svg></div>
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
