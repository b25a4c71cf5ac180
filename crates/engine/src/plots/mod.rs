//! The study's figures as a paper shows them, as SVG (plotters) sized for print, and as PNG and
//! PDF (`export`): naturalness categories per level and per operator (stacked bars), time on
//! item per level and RNC per category (Tukey box plots), ROC curves of RNC per model, and per
//! repair tool its prediction changes by category and its drop in plausible and correct rates.
//! Plain data in, text and bytes out.

mod answers;
mod axis;
mod bars;
mod boxes;
mod export;
pub mod style;

pub use boxes::{box_axis, display_exponent};
pub use export::{svg_to_pdf, svg_to_png};

use plotters::prelude::RGBColor;

use super::analysis::{Category, Report};
use crate::formats::Level;
use natstudy_vocab::Operator;

#[derive(Debug, thiserror::Error)]
#[error("chart {chart}: {reason}")]
pub struct PlotError {
    pub chart: String,
    pub reason: String,
}

fn err(chart: &str) -> impl Fn(String) -> PlotError + '_ {
    move |reason| PlotError {
        chart: chart.to_owned(),
        reason,
    }
}

/// One figure: a stable id (its file name), a title, a caption saying what it shows and on
/// which data, and the SVG, which declares its print size.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub id: String,
    pub title: String,
    pub caption: String,
    pub svg: String,
    /// As wide as both columns of a page (one column otherwise).
    pub wide: bool,
}

/// A category as people read it ("likely natural").
fn words(c: Category) -> String {
    c.as_str().replace('_', " ")
}

fn category_series() -> Vec<(String, RGBColor)> {
    Category::ALL
        .iter()
        .zip(style::CATEGORY_COLOURS)
        .map(|(c, colour)| (words(*c), colour))
        .collect()
}

fn counts(c: &super::analysis::CategoryCounts) -> Vec<f64> {
    vec![
        c.natural as f64,
        c.likely_natural as f64,
        c.likely_unnatural as f64,
        c.unnatural as f64,
    ]
}

fn figure(
    id: &str,
    title: &str,
    caption: String,
    drawn: Result<(String, (u32, u32)), String>,
) -> Result<Figure, PlotError> {
    let (svg, size) = drawn.map_err(err(id))?;
    Ok(Figure {
        id: id.to_owned(),
        title: title.to_owned(),
        caption,
        svg: style::print_size(svg, size),
        wide: size.0 > style::ONE_COLUMN,
    })
}

/// The items the figures of the votes stand on, as a caption says it.
fn items_note(report: &Report) -> String {
    match report.ratings_per_item {
        Some(k) => format!("{} items with exactly {k} ratings", report.complete_items),
        None => format!("{} rated items", report.complete_items),
    }
}

/// Every figure of a report, in the order a paper shows them.
pub use answers::question_figures;

pub fn report_figures(report: &Report) -> Result<Vec<Figure>, PlotError> {
    let mut out = Vec::new();
    let categories = category_series();
    // levels always naming → expression → statement
    let levels: Vec<(String, Vec<f64>)> = Level::ALL
        .iter()
        .filter_map(|l| {
            report
                .counts_by_level
                .get(l.as_str())
                .map(|c| (l.as_str().to_owned(), counts(c)))
        })
        .collect();
    if !levels.is_empty() {
        out.push(figure(
            "naturalness_by_level",
            "Naturalness by level",
            format!(
                "Items per naturalness category at each transformation level ({}).",
                items_note(report)
            ),
            bars::stacked(&levels, &categories, "items", style::ONE_COLUMN),
        )?);
    }
    // operators by level, in the published table's order, then any the vocabulary lacks
    let mut operators: Vec<(String, Vec<f64>)> = Operator::ALL
        .iter()
        .filter_map(|o| {
            report
                .counts_by_operator
                .get(o.name())
                .map(|c| (o.name().to_owned(), counts(c)))
        })
        .collect();
    for (name, c) in &report.counts_by_operator {
        if !operators.iter().any(|(n, _)| n == name) {
            operators.push((name.clone(), counts(c)));
        }
    }
    if !operators.is_empty() {
        out.push(figure(
            "naturalness_by_operator",
            "Naturalness by operator",
            format!(
                "Items per naturalness category for each operator, naming, expression and statement operators in turn ({}).",
                items_note(report)
            ),
            bars::stacked(&operators, &categories, "items", style::TWO_COLUMNS),
        )?);
    }
    if let Some(t) = &report.time {
        // the times the table counts: complete items, counted participants, under the cutoff
        let groups: Vec<(String, Vec<f64>)> = Level::ALL
            .iter()
            .map(|l| {
                let v = t
                    .times_by_level
                    .get(l.as_str())
                    .cloned()
                    .unwrap_or_default();
                (l.as_str().to_owned(), v)
            })
            .collect();
        let ns: Vec<String> = groups
            .iter()
            .map(|(l, v)| format!("{l} {}", v.len()))
            .collect();
        out.push(figure(
            "time_by_level",
            "Time on item by level",
            format!(
                "Seconds on an item per vote at each level ({}, as the time table counts them), times at or above the 99th percentile ({}) dropped; votes: {}. Whiskers at the most extreme times within 1.5 IQR, outliers as points.",
                items_note(report),
                bars::number(t.p99_cutoff),
                ns.join(", ")
            ),
            boxes::box_plots(&groups, "time on item (s)", style::ONE_COLUMN),
        )?);
    }
    if !report.robustness.is_empty() {
        let tools: Vec<(String, Vec<f64>)> = report
            .robustness
            .iter()
            .map(|(tool, r)| {
                let v = Category::ALL
                    .iter()
                    .map(|c| {
                        r.change_share_by_category
                            .get(c.as_str())
                            .copied()
                            .unwrap_or(0.0)
                            * r.changes_all as f64
                    })
                    .collect();
                (tool.clone(), v)
            })
            .collect();
        out.push(figure(
            "robustness",
            "Prediction changes by naturalness",
            "Transformations that changed a repair tool's result (its prediction changes), by the naturalness category of the transformation.".to_owned(),
            bars::stacked(&tools, &categories, "prediction changes", style::ONE_COLUMN),
        )?);
        let pct = |x: Option<f64>| x.map(|v| 100.0 * v);
        let rows: Vec<(String, Vec<Option<f64>>)> = report
            .robustness
            .iter()
            .flat_map(|(tool, r)| {
                [
                    (
                        format!("{tool}, all"),
                        vec![pct(r.all.plausible_drop), pct(r.all.correct_drop)],
                    ),
                    (
                        format!("{tool}, natural"),
                        vec![pct(r.natural.plausible_drop), pct(r.natural.correct_drop)],
                    ),
                ]
            })
            .collect();
        out.push(figure(
            "rate_drop",
            "Drop in plausible and correct rates",
            "Per repair tool, how much lower its plausible and its correct rate are on transformed bugs than on the original bugs (per bug, as a share of the original rate), over all transformations and over natural ones only.".to_owned(),
            bars::grouped(
                &rows,
                &[
                    ("plausible rate".to_owned(), style::SERIES_COLOURS[0]),
                    ("correct rate".to_owned(), style::SERIES_COLOURS[1]),
                ],
                "drop (% of the original rate)",
                style::ONE_COLUMN,
            ),
        )?);
    }
    let mut rocs = Vec::new();
    for (model, m) in &report.rnc {
        let groups: Vec<(String, Vec<f64>)> = Category::ALL
            .iter()
            .map(|c| {
                (
                    words(*c),
                    m.ranking
                        .iter()
                        .filter(|r| r.category == Some(*c))
                        .map(|r| r.rnc)
                        .collect(),
                )
            })
            .collect();
        let ns: Vec<String> = groups
            .iter()
            .map(|(c, v)| format!("{c} {}", v.len()))
            .collect();
        out.push(figure(
            &format!("rnc_by_category_{model}"),
            &format!("RNC by category ({model})"),
            format!(
                "Relative naturalness change of each transformation under the language model {model}, by naturalness category; transformations: {}. Whiskers at the most extreme values within 1.5 IQR, outliers as points.",
                ns.join(", ")
            ),
            boxes::box_plots(&groups, "RNC (%)", style::ONE_COLUMN),
        )?);
        if let Some(roc) = &m.roc_rnc {
            rocs.push((
                format!("{model} (AUC {:.3})", m.auc_rnc.unwrap_or(f64::NAN)),
                roc.fpr
                    .iter()
                    .copied()
                    .zip(roc.tpr.iter().copied())
                    .collect::<Vec<_>>(),
            ));
        }
    }
    if !rocs.is_empty() {
        out.push(figure(
            "roc_rnc",
            "ROC of RNC: natural vs unnatural",
            "How well each language model's RNC separates natural from unnatural transformations (likely categories left out): the ROC curve per model, its AUC in the legend; the diagonal is chance.".to_owned(),
            roc::roc_curves(&rocs, style::ONE_COLUMN),
        )?);
    }
    Ok(out)
}

mod roc;

#[cfg(test)]
mod tests;
