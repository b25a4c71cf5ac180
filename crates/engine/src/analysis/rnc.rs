//! RNC: relative naturalness change from cross-entropies, natural vs unnatural by AUC, and the
//! most natural transformations.

use std::collections::{BTreeMap, HashMap};

use rayon::prelude::*;

use serde::Serialize;

use super::*;
use crate::stats::{self, Alternative, MannWhitney};

/// RNC of one language model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelReport {
    pub items: usize,
    pub mww_natural_vs_unnatural: Option<MannWhitney>,
    pub mww_likely_natural_vs_likely_unnatural: Option<MannWhitney>,
    /// Spearman's ρ of H(b′) and H(b) over the items with a category (complete items), as the
    /// published `rq3.py` computes it (it reads only categorised items).
    pub spearman_original_vs_transformed: Option<f64>,
    /// The same over every item with both cross-entropies, incomplete ones included; equal
    /// to the above when every scored item is complete.
    pub spearman_all_scored: Option<f64>,
    pub auc_rnc: Option<f64>,
    pub auc_nc: Option<f64>,
    pub auc_ce: Option<f64>,
    pub roc_rnc: Option<stats::Roc>,
    /// Per item: (key, CE = H(b′), NC = H(b′) − H(b), RNC = (H(b′)/H(b) − 1)·100), by RNC ascending.
    pub ranking: Vec<RncRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RncRow {
    pub key: String,
    pub category: Option<Category>,
    pub ce: f64,
    pub nc: f64,
    pub rnc: f64,
}

/// The AUC of "natural" (positive) against "unnatural" items, the score being
/// 1 − (x − min)/(max − min) over all items' values of the metric.
pub(super) fn auc_natural(values: &[(Option<Category>, f64)]) -> Option<(f64, stats::Roc)> {
    let (min, max) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, x)| {
            (lo.min(*x), hi.max(*x))
        });
    let (labels, scores): (Vec<bool>, Vec<f64>) = values
        .iter()
        .filter_map(|(c, x)| match c {
            Some(Category::Natural) => Some((true, 1.0 - (x - min) / (max - min))),
            Some(Category::Unnatural) => Some((false, 1.0 - (x - min) / (max - min))),
            _ => None,
        })
        .unzip();
    let roc = stats::roc_curve(&labels, &scores).ok()?;
    Some((stats::auc(&roc.fpr, &roc.tpr), roc))
}

pub(super) fn rnc(data: &StudyData, results: &[ItemResult]) -> BTreeMap<String, ModelReport> {
    let mut by_model: BTreeMap<&str, HashMap<&str, f64>> = BTreeMap::new();
    for (model, target, h) in &data.ce {
        by_model
            .entry(model.as_str())
            .or_default()
            .insert(target.as_str(), *h);
    }
    let by_model: Vec<(&str, HashMap<&str, f64>)> = by_model.into_iter().collect();
    by_model
        .par_iter()
        .map(|(model, h)| (model.to_string(), model_report(data, results, h)))
        .collect()
}

/// One model's RNC analysis: `h` is its cross-entropy per target.
fn model_report(data: &StudyData, results: &[ItemResult], h: &HashMap<&str, f64>) -> ModelReport {
    let mut rows: Vec<RncRow> = Vec::new();
    let mut originals = Vec::new();
    for (i, it) in data.items.iter().enumerate() {
        let (Some(&hb2), Some(&hb)) = (h.get(it.key.as_str()), h.get(it.bug.as_str())) else {
            continue;
        };
        originals.push(hb);
        rows.push(RncRow {
            key: it.key.clone(),
            category: results[i].category,
            ce: hb2,
            nc: hb2 - hb,
            rnc: relative_change(hb, hb2),
        });
    }
    let of = |c: Category| -> Vec<f64> {
        rows.iter()
            .filter(|r| r.category == Some(c))
            .map(|r| r.rnc)
            .collect()
    };
    let transformed: Vec<f64> = rows.iter().map(|r| r.ce).collect();
    let (categorised, categorised_originals): (Vec<f64>, Vec<f64>) = rows
        .iter()
        .zip(&originals)
        .filter(|(r, _)| r.category.is_some())
        .map(|(r, hb)| (r.ce, *hb))
        .unzip();
    let metric = |f: fn(&RncRow) -> f64| -> Vec<(Option<Category>, f64)> {
        rows.iter().map(|r| (r.category, f(r))).collect()
    };
    let rnc_auc = auc_natural(&metric(|r| r.rnc));
    let mut report = ModelReport {
        items: rows.len(),
        mww_natural_vs_unnatural: stats::mann_whitney_u(
            &of(Category::Natural),
            &of(Category::Unnatural),
            Alternative::Less,
        )
        .ok(),
        mww_likely_natural_vs_likely_unnatural: stats::mann_whitney_u(
            &of(Category::LikelyNatural),
            &of(Category::LikelyUnnatural),
            Alternative::Less,
        )
        .ok(),
        spearman_original_vs_transformed: stats::spearman(&categorised, &categorised_originals)
            .ok(),
        spearman_all_scored: stats::spearman(&transformed, &originals).ok(),
        auc_rnc: rnc_auc.as_ref().map(|(a, _)| *a),
        auc_nc: auc_natural(&metric(|r| r.nc)).map(|(a, _)| a),
        auc_ce: auc_natural(&metric(|r| r.ce)).map(|(a, _)| a),
        roc_rnc: rnc_auc.map(|(_, roc)| roc),
        ranking: Vec::new(),
    };
    rows.sort_by(|a, b| a.rnc.total_cmp(&b.rnc).then_with(|| a.key.cmp(&b.key)));
    report.ranking = rows;
    report
}

/// The `percent`% most natural transformations by RNC (lowest first), at least one when any.
pub fn most_natural(model: &ModelReport, percent: f64) -> &[RncRow] {
    let n = model.ranking.len();
    let k = ((percent.clamp(0.0, 100.0) / 100.0) * n as f64).ceil() as usize;
    &model.ranking[..k.min(n)]
}
/// RNC in percent: the transformed method's cross-entropy relative to the original's,
/// (H(b′) − H(b)) / H(b) · 100.
pub fn relative_change(h_original: f64, h_transformed: f64) -> f64 {
    (h_transformed / h_original - 1.0) * 100.0
}
