//! A model's scores, checked before any is stored: each a cross-entropy
//! (`formats::results::is_cross_entropy`: finite, non-negative). A NaN or infinite score fails
//! the scoring with its method named, and nothing of it is stored — on SQLite, which refused
//! the row as an internal error, and on PostgreSQL, which stored and exported `NaN`, alike.

use natstudy_engine::formats::results::{is_cross_entropy, CeRecord};

/// A score that no cross-entropy can be.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the model's score of {target} came out {value} (not a number a cross-entropy can be): the model failed on it, and none of its scores were stored")]
pub struct InvalidScore {
    pub target: String,
    pub value: f64,
}

/// The scores, if every one is a cross-entropy; else the first that is not.
pub fn checked(rows: &[CeRecord]) -> Result<(), InvalidScore> {
    match rows.iter().find(|r| !is_cross_entropy(r.cross_entropy)) {
        None => Ok(()),
        Some(r) => Err(InvalidScore {
            target: r.target.clone(),
            value: r.cross_entropy,
        }),
    }
}

#[cfg(test)]
mod tests {
    /// A NaN or infinite score fails the scoring in words naming its method; finite ones pass.
    #[test]
    fn a_score_that_is_no_number_fails_the_scoring() {
        let row = |target: &str, x: f64| super::CeRecord {
            model: "m".into(),
            target: target.into(),
            cross_entropy: x,
        };
        assert!(super::checked(&[row("a", 0.0), row("b", 3.5)]).is_ok());
        for bad in [f64::NAN, f64::INFINITY, -1.0] {
            let e =
                super::checked(&[row("a", 2.0), row("expression_3", bad)]).expect_err("refused");
            let words = e.to_string();
            assert!(
                words.contains("expression_3") && words.contains("none of its scores"),
                "{words}"
            );
        }
    }
}
