//! The cumulative link models on the `wine` data of R's `ordinal` (a published worked example:
//! 72 ratings of bitterness by 9 judges of 8 bottles), against R's own figures
//! (`data/make_wine.R` made `data/wine.csv` and `data/wine_expected.json`): `clm` to 1e-4 and
//! `clmm` with crossed judge and bottle intercepts to 1e-3, the tolerances the analysis states.

use natstudy_stats::{cumulative_logit, cumulative_logit_mixed, Factor};

struct Wine {
    rating: Vec<u32>,
    x: Vec<Vec<f64>>,
    judge: Vec<usize>,
    bottle: Vec<usize>,
}

fn wine() -> Wine {
    let text = include_str!("data/wine.csv");
    let mut w = Wine {
        rating: Vec::new(),
        x: Vec::new(),
        judge: Vec::new(),
        bottle: Vec::new(),
    };
    for line in text.lines().skip(1) {
        let f: Vec<u32> = line
            .split(',')
            .map(|c| c.parse().expect("a number"))
            .collect();
        w.rating.push(f[0]);
        w.x.push(vec![f64::from(f[1]), f64::from(f[2])]);
        w.judge.push(f[3] as usize - 1);
        w.bottle.push(f[4] as usize - 1);
    }
    w
}

/// The numbers of `"key": [..]` (or `"key": x`) in the section `section` of the expected file.
fn expected(section: &str, key: &str) -> Vec<f64> {
    let text = include_str!("data/wine_expected.json");
    let from = text.find(&format!("\"{section}\"")).expect("section");
    let rest = &text[from..];
    let at = rest.find(&format!("\"{key}\": ")).expect("key") + key.len() + 4;
    let rest = &rest[at..];
    let end = rest.find([']', '}']).expect("end");
    rest[..end]
        .trim_start_matches('[')
        .split(',')
        .map(|x| x.trim().parse().expect("number"))
        .collect()
}

fn close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= tol * w.abs().max(1.0),
            "{what}: {got:?} against R's {want:?}"
        );
    }
}

#[test]
fn clm_equals_r_ordinal_on_the_wine_data() {
    let w = wine();
    let fit = cumulative_logit(&w.rating, &w.x).expect("fit");
    close(
        &fit.thresholds,
        &expected("clm", "thresholds"),
        1e-4,
        "thresholds",
    );
    close(
        &fit.coefficients,
        &expected("clm", "coefficients"),
        1e-4,
        "coefficients",
    );
    close(
        &fit.coefficient_se,
        &expected("clm", "standard_errors"),
        1e-4,
        "standard errors",
    );
    close(
        &[fit.log_likelihood],
        &expected("clm", "log_likelihood"),
        1e-4,
        "log-likelihood",
    );
}

#[test]
fn clmm_equals_r_ordinal_on_the_wine_data() {
    let w = wine();
    let fit = cumulative_logit_mixed(
        &w.rating,
        &w.x,
        [
            Factor {
                level: &w.judge,
                levels: 9,
            },
            Factor {
                level: &w.bottle,
                levels: 8,
            },
        ],
    )
    .expect("fit");
    close(
        &fit.thresholds,
        &expected("clmm", "thresholds"),
        1e-3,
        "thresholds",
    );
    close(
        &fit.coefficients,
        &expected("clmm", "coefficients"),
        1e-3,
        "coefficients",
    );
    close(
        &fit.sd,
        &expected("clmm", "sd"),
        1e-3,
        "standard deviations",
    );
    close(
        &[fit.log_likelihood],
        &expected("clmm", "log_likelihood"),
        1e-3,
        "log-likelihood",
    );
}
