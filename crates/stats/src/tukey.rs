//! Tukey's box-plot statistics: quartiles (numpy's linear percentiles), whiskers at the most
//! extreme data points within 1.5 IQR of the box, and the points beyond them as outliers.
//! Whiskers end at data, never at the fences: a chart of non-negative times never shows a
//! whisker below zero.

use super::{percentile, Result, StatsError};

/// What a box plot draws for one group.
#[derive(Debug, Clone, PartialEq)]
pub struct TukeyBox {
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
    /// The least data point at or above `q1 − 1.5 IQR`.
    pub lower_whisker: f64,
    /// The greatest data point at or below `q3 + 1.5 IQR`.
    pub upper_whisker: f64,
    /// The data points beyond the whiskers, in ascending order.
    pub outliers: Vec<f64>,
    /// How many data points (finite ones; others are not data).
    pub n: usize,
}

/// The box of `xs`, its non-finite values left out. An error when no finite value remains.
pub fn tukey_box(xs: &[f64]) -> Result<TukeyBox> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return Err(StatsError::Empty("box plot"));
    }
    v.sort_by(f64::total_cmp);
    let q1 = percentile(&v, 25.0)?;
    let median = percentile(&v, 50.0)?;
    let q3 = percentile(&v, 75.0)?;
    // the fences in halves, so that extreme finite data cannot overflow them to infinity
    let iqr_half = q3 / 2.0 - q1 / 2.0;
    let low_fence = q1 - 3.0 * iqr_half;
    let high_fence = q3 + 3.0 * iqr_half;
    // within the fences there is always a data point: q1 and q3 lie between data points
    let lower_whisker = v.iter().copied().find(|x| *x >= low_fence).unwrap_or(v[0]);
    let upper_whisker = v
        .iter()
        .rev()
        .copied()
        .find(|x| *x <= high_fence)
        .unwrap_or(v[v.len() - 1]);
    let outliers = v
        .iter()
        .copied()
        .filter(|x| *x < lower_whisker || *x > upper_whisker)
        .collect();
    Ok(TukeyBox {
        q1,
        median,
        q3,
        lower_whisker,
        upper_whisker,
        outliers,
        n: v.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whiskers_end_at_data_points_within_the_fences() {
        // quartiles 3.25 and 7.75 (numpy linear), IQR 4.5: fences -3.5 and 14.5
        let b = tukey_box(&[0.83, 1.51, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 40.0]).expect("box");
        assert_eq!(b.n, 10);
        assert!((b.q1 - 3.25).abs() < 1e-12, "{b:?}");
        assert!((b.median - 5.5).abs() < 1e-12);
        assert!((b.q3 - 7.75).abs() < 1e-12);
        // the shortest time, not the fence below zero
        assert_eq!(b.lower_whisker, 0.83);
        // 40 is beyond the upper fence: an outlier; the whisker ends at 9
        assert_eq!(b.upper_whisker, 9.0);
        assert_eq!(b.outliers, vec![40.0]);
    }

    #[test]
    fn outliers_on_both_sides_and_one_value() {
        let b = tukey_box(&[-100.0, 10.0, 11.0, 12.0, 13.0, 100.0]).expect("box");
        assert_eq!((b.lower_whisker, b.upper_whisker), (10.0, 13.0));
        assert_eq!(b.outliers, vec![-100.0, 100.0]);
        let one = tukey_box(&[4.0]).expect("box");
        assert_eq!(
            (
                one.q1,
                one.median,
                one.q3,
                one.lower_whisker,
                one.upper_whisker
            ),
            (4.0, 4.0, 4.0, 4.0, 4.0)
        );
        assert!(one.outliers.is_empty());
    }

    #[test]
    fn extreme_and_non_finite_values_neither_overflow_nor_count() {
        let b = tukey_box(&[1e308, f64::MAX, 9e307, f64::NAN, f64::INFINITY]).expect("box");
        assert_eq!(b.n, 3);
        assert!(b.q1.is_finite() && b.q3.is_finite());
        assert_eq!(b.upper_whisker, f64::MAX);
        assert!(tukey_box(&[f64::NAN]).is_err());
        assert!(tukey_box(&[]).is_err());
    }
}
