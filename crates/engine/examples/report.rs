//! Times each part of the analysis of a synthetic study (for profiling; `natstudy bench report`
//! is the benchmark): `cargo run --release -p natstudy-engine --example report -- 100000 1000`.

use std::time::Instant;

use natstudy_engine::analysis::{self, synthetic};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let bootstrap: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(0);
    let data = synthetic::study(n, 3);
    let options = analysis::Options {
        bootstrap,
        ..Default::default()
    };
    for _ in 0..3 {
        let t = Instant::now();
        let report = analysis::report_with(&data, &options);
        println!(
            "{n} items, bootstrap {bootstrap}: {:.3} s (kappa {:?})",
            t.elapsed().as_secs_f64(),
            report.fleiss_kappa
        );
    }
}
