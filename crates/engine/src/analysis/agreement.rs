//! Agreement: Fleiss' kappa and Krippendorff's alpha per question and overall, with seeded
//! bootstrap confidence intervals.

use std::collections::HashMap;

use serde::Serialize;

use super::*;
use crate::stats::{self};

/// A coefficient with its bootstrap 95% interval (items resampled).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measure {
    pub value: Option<f64>,
    pub ci95: Option<(f64, f64)>,
}

/// Agreement on one question's 4-point scale.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScaleAgreement {
    /// Fleiss' kappa over the four answers (items with the modal number of ratings).
    pub fleiss_kappa: Measure,
    /// Krippendorff's alpha, ordinal and interval (every item; missing ratings allowed).
    pub alpha_ordinal: Measure,
    pub alpha_interval: Measure,
}

/// Agreement beyond the headline binary kappa.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agreement {
    pub binary_fleiss_kappa: Measure,
    pub binary_alpha_nominal: Measure,
    pub readability: ScaleAgreement,
    pub conventions: ScaleAgreement,
}

/// Fleiss' kappa rows: `cats` category counts per unit, on the units with the modal number of values.
pub(super) fn fleiss_rows(units: &[Vec<f64>], cats: &[f64]) -> Option<stats::FleissRows> {
    let mut freq: HashMap<usize, usize> = HashMap::new();
    for u in units.iter().filter(|u| !u.is_empty()) {
        *freq.entry(u.len()).or_default() += 1;
    }
    let k = freq
        .into_iter()
        .max_by_key(|&(n, c)| (c, n))
        .map(|(n, _)| n)?;
    let table: Vec<Vec<f64>> = units
        .iter()
        .filter(|u| u.len() == k)
        .map(|u| {
            cats.iter()
                .map(|c| u.iter().filter(|v| *v == c).count() as f64)
                .collect()
        })
        .collect();
    stats::FleissRows::new(&table).ok()
}

/// A coefficient's estimate and, when the options ask for it, its bootstrap interval.
pub(super) fn with_ci(stat: &dyn stats::Resample, options: &Options, salt: u64) -> Measure {
    let value = stat.estimate().filter(|x| x.is_finite());
    let ci95 = if options.bootstrap > 0 && value.is_some() {
        stats::bootstrap_ci(stat, options.bootstrap, options.seed ^ salt)
    } else {
        None
    };
    Measure { value, ci95 }
}

pub(super) fn kappa_measure(
    units: &[Vec<f64>],
    cats: &[f64],
    options: &Options,
    salt: u64,
) -> Measure {
    match fleiss_rows(units, cats) {
        Some(rows) => with_ci(&rows, options, salt),
        None => Measure {
            value: None,
            ci95: None,
        },
    }
}

pub(super) fn alpha_measure(
    units: &[Vec<f64>],
    metric: stats::AlphaMetric,
    options: &Options,
    salt: u64,
) -> Measure {
    with_ci(&stats::AlphaUnits::new(units, metric), options, salt)
}

pub(super) fn scale(units: &[Vec<f64>], options: &Options, salt: u64) -> ScaleAgreement {
    let cats = [1.0, 2.0, 3.0, 4.0];
    ScaleAgreement {
        fleiss_kappa: kappa_measure(units, &cats, options, salt),
        alpha_ordinal: alpha_measure(units, stats::AlphaMetric::Ordinal, options, salt + 1),
        alpha_interval: alpha_measure(units, stats::AlphaMetric::Interval, options, salt + 2),
    }
}

/// Agreement of the study's votes.
pub fn agreement(data: &StudyData, options: &Options) -> Agreement {
    let mut cr: Vec<Vec<f64>> = vec![Vec::new(); data.items.len()];
    let mut cc: Vec<Vec<f64>> = vec![Vec::new(); data.items.len()];
    let mut bin: Vec<Vec<f64>> = vec![Vec::new(); data.items.len()];
    for v in &data.votes {
        if v.item < data.items.len() {
            cr[v.item].push(f64::from(v.cr));
            cc[v.item].push(f64::from(v.cc));
            bin[v.item].push(f64::from(u8::from(judges_unnatural(v.cr, v.cc))));
        }
    }
    let ((binary_fleiss_kappa, binary_alpha_nominal), (readability, conventions)) = rayon::join(
        || {
            rayon::join(
                || kappa_measure(&bin, &[0.0, 1.0], options, 1),
                || alpha_measure(&bin, stats::AlphaMetric::Nominal, options, 2),
            )
        },
        || rayon::join(|| scale(&cr, options, 10), || scale(&cc, options, 20)),
    );
    Agreement {
        binary_fleiss_kappa,
        binary_alpha_nominal,
        readability,
        conventions,
    }
}
