//! Every numeric routine of the analysis terminates on any finite input: votes' times and
//! cross-entropies drawn from the extremes of `f64` (`f64::MAX`, 1e308, the least positive
//! values, zero) run through the whole report, its charts and their rasterisation. Three times
//! of 1e308, `f64::MAX` and 9e307 once spun `natstudy report` for minutes (the box plot's axis).
//!
//! CI runs a bounded number of cases; run longer with
//! `PROPTEST_CASES=2000 cargo test -p natstudy-engine --test extreme_values --release`.

use natstudy_engine::analysis::{report_with, synthetic, Options};
use natstudy_engine::plots;
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(24),
        ..ProptestConfig::default()
    }
}

/// A finite number, often at an extreme of the type.
fn extreme() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::MAX),
        Just(1e308),
        Just(9e307),
        Just(f64::MIN_POSITIVE),
        Just(5e-324),
        Just(0.0),
        Just(-f64::MAX),
        (0.0..1e9f64),
        any::<f64>().prop_filter("finite", |x| x.is_finite()),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_report_and_its_charts_finish_on_extreme_numbers(
        times in proptest::collection::vec(extreme(), 1..40),
        ces in proptest::collection::vec(extreme(), 1..40),
    ) {
        let mut data = synthetic::study(15, 3);
        for (v, t) in data.votes.iter_mut().zip(times.iter().cycle()) {
            v.time_secs = Some(t.abs());
        }
        for (c, x) in data.ce.iter_mut().zip(ces.iter().cycle()) {
            c.2 = *x;
        }
        let options = Options { bootstrap: 20, ..Options::default() };
        let report = report_with(&data, &options);
        let figures = plots::report_figures(&report).expect("figures");
        prop_assert!(!figures.is_empty());
        for f in &figures {
            let png = plots::svg_to_png(&f.id, &f.svg, 96.0).expect("png");
            prop_assert!(png.starts_with(b"\x89PNG"));
        }
    }
}
