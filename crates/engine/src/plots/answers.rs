//! A designed study's figures (its report as `design::report` makes it): each Likert
//! question's answers by condition, the share of each point.

use plotters::style::RGBColor;
use serde_json::Value;

use super::{bars, figure, style, Figure, PlotError};

/// `n` colours from the category ramp (dark purple to yellow), evenly spaced: the points of a
/// scale in order, lightness rising with the point.
fn ramp(n: usize) -> Vec<RGBColor> {
    let anchors = style::CATEGORY_COLOURS;
    (0..n)
        .map(|i| {
            let t = if n > 1 {
                i as f64 / (n - 1) as f64
            } else {
                0.0
            };
            let at = t * (anchors.len() - 1) as f64;
            let (lo, frac) = (at.floor() as usize, at.fract());
            let hi = (lo + 1).min(anchors.len() - 1);
            let mix =
                |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * frac).round() as u8;
            RGBColor(
                mix(anchors[lo].0, anchors[hi].0),
                mix(anchors[lo].1, anchors[hi].1),
                mix(anchors[lo].2, anchors[hi].2),
            )
        })
        .collect()
}

/// Each Likert question's answers by condition, in the design's order of questions.
pub fn question_figures(report: &Value) -> Result<Vec<Figure>, PlotError> {
    let mut out = Vec::new();
    let design = report["design"]["questions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for q in &design {
        let (Some(id), Some("likert")) = (q["id"].as_str(), q["kind"].as_str()) else {
            continue;
        };
        let points = q["points"].as_u64().unwrap_or(0) as usize;
        let labels: Vec<String> = q["labels"]
            .as_array()
            .map(|l| {
                l.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let entry = &report["questions"][id];
        let Some(conditions) = entry["conditions"].as_object() else {
            continue;
        };
        let groups: Vec<(String, Vec<f64>)> = conditions
            .iter()
            .map(|(name, c)| {
                let counts: Vec<f64> = c["counts"]
                    .as_array()
                    .map(|a| a.iter().map(|x| x.as_f64().unwrap_or(0.0)).collect())
                    .unwrap_or_default();
                let total: f64 = counts.iter().sum();
                let shares = counts
                    .iter()
                    .map(|x| if total > 0.0 { 100.0 * x / total } else { 0.0 })
                    .collect();
                (name.clone(), shares)
            })
            .collect();
        if groups.is_empty() || points == 0 {
            continue;
        }
        let series: Vec<(String, RGBColor)> = ramp(points)
            .into_iter()
            .enumerate()
            .map(|(i, colour)| {
                let p = i + 1;
                let name = if labels.len() == points {
                    format!("{p} {}", labels[i])
                } else if labels.len() == 2 && p == 1 {
                    format!("1 {}", labels[0])
                } else if labels.len() == 2 && p == points {
                    format!("{p} {}", labels[1])
                } else {
                    p.to_string()
                };
                (name, colour)
            })
            .collect();
        let answers: Vec<String> = conditions
            .iter()
            .map(|(name, c)| format!("{name} {}", c["answers"]))
            .collect();
        out.push(figure(
            &format!("{id}_by_condition"),
            &format!("{id}: answers by condition"),
            format!(
                "The share of each point of the scale among the answers to “{}” in each condition ({} answers).",
                q["prompt"].as_str().unwrap_or(id),
                answers.join(", ")
            ),
            bars::stacked(&groups, &series, "answers (%)", style::ONE_COLUMN),
        )?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ramp_runs_from_the_first_category_colour_to_the_last() {
        let r = ramp(7);
        assert_eq!(r.len(), 7);
        assert_eq!(r[0], style::CATEGORY_COLOURS[0]);
        assert_eq!(r[6], style::CATEGORY_COLOURS[3]);
        assert_eq!(ramp(1).len(), 1);
    }

    /// One figure per Likert question, with the conditions as bars and the points in its
    /// legend; other kinds and empty questions draw none.
    #[test]
    fn each_likert_question_draws_its_answers_by_condition() {
        let report = serde_json::json!({
            "design": {"questions": [
                {"id": "r", "kind": "likert", "prompt": "How easy?", "points": 3, "labels": ["Hard", "Easy"]},
                {"id": "p", "kind": "pairwise", "prompt": "Which?", "ties": true},
                {"id": "e", "kind": "likert", "prompt": "Empty", "points": 5}
            ]},
            "questions": {
                "r": {"conditions": {
                    "original": {"answers": 4, "counts": [1, 1, 2]},
                    "transformed": {"answers": 0, "counts": [0, 0, 0]}
                }},
                "p": {},
                "e": {"conditions": {}}
            }
        });
        let figures = question_figures(&report).expect("figures");
        assert_eq!(figures.len(), 1);
        let f = &figures[0];
        assert_eq!(f.id, "r_by_condition");
        for text in ["original", "transformed", "1 Hard", "3 Easy", "answers (%)"] {
            assert!(f.svg.contains(text), "{text} in the figure");
        }
        assert!(
            f.caption.contains("original 4, transformed 0"),
            "{}",
            f.caption
        );
    }
}
