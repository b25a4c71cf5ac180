//! Intraclass correlation, one-way random effects (Shrout & Fleiss' ICC(1,1) and ICC(1,k)), as
//! pingouin's `intraclass_corr` computes its `ICC1` and `ICC1k` rows.

use super::{Result, StatsError};

/// ICC(1,1) and ICC(1,k) of one-way random effects.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OneWayIcc {
    /// the reliability of a single rating (pingouin's `ICC1`)
    pub single: f64,
    /// the reliability of the mean of k ratings (pingouin's `ICC1k`)
    pub average: f64,
}

/// `ratings[t]` holds target t's k ratings (the same k for every target, at least two targets
/// and two ratings each). Undefined (an error) when every target's mean is the same as every
/// rating, i.e. when there is no variance at all.
pub fn icc_one_way(ratings: &[Vec<f64>]) -> Result<OneWayIcc> {
    let n = ratings.len();
    let k = ratings.first().map_or(0, Vec::len);
    if n < 2 || k < 2 {
        return Err(StatsError::Invalid(
            "the ICC needs at least two targets with at least two ratings each".into(),
        ));
    }
    if ratings.iter().any(|r| r.len() != k) {
        return Err(StatsError::Invalid(
            "the ICC needs the same number of ratings for every target".into(),
        ));
    }
    let grand = ratings.iter().flatten().sum::<f64>() / (n * k) as f64;
    let means: Vec<f64> = ratings
        .iter()
        .map(|r| r.iter().sum::<f64>() / k as f64)
        .collect();
    let ss_between: f64 = means.iter().map(|m| (m - grand).powi(2)).sum::<f64>() * k as f64;
    let ss_within: f64 = ratings
        .iter()
        .zip(&means)
        .map(|(r, m)| r.iter().map(|x| (x - m).powi(2)).sum::<f64>())
        .sum();
    let ms_between = ss_between / (n - 1) as f64;
    let ms_within = ss_within / (n * (k - 1)) as f64;
    let kf = k as f64;
    let single_den = ms_between + (kf - 1.0) * ms_within;
    if single_den == 0.0 || ms_between == 0.0 {
        return Err(StatsError::Invalid(
            "the ICC is undefined when every rating is the same".into(),
        ));
    }
    Ok(OneWayIcc {
        single: (ms_between - ms_within) / single_den,
        average: (ms_between - ms_within) / ms_between,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shrout & Fleiss (1979), table 2: six targets, four judges; ICC(1,1) = .17, ICC(1,4) = .44
    #[test]
    fn shrout_and_fleiss_worked_example() {
        let r = [
            vec![9.0, 2.0, 5.0, 8.0],
            vec![6.0, 1.0, 3.0, 2.0],
            vec![8.0, 4.0, 6.0, 8.0],
            vec![7.0, 1.0, 2.0, 6.0],
            vec![10.0, 5.0, 6.0, 9.0],
            vec![6.0, 2.0, 4.0, 7.0],
        ];
        let icc = icc_one_way(&r).expect("icc");
        assert!((icc.single - 0.1657).abs() < 1e-4, "{icc:?}");
        assert!((icc.average - 0.4428).abs() < 1e-4, "{icc:?}");
    }

    #[test]
    fn unequal_or_constant_ratings_are_refused_in_words() {
        assert!(icc_one_way(&[vec![1.0, 2.0], vec![1.0]]).is_err());
        assert!(icc_one_way(&[vec![3.0, 3.0], vec![3.0, 3.0]]).is_err());
    }
}
