//! A synthetic study for benchmarks and profiling: `n` items of `n / 5 + 1` bugs, five votes
//! each (readability answers correlated per item), five repair tools with results on every bug
//! and item, two language models with cross-entropies. Seeded: the same `n` and seed give the
//! same study.

use rand::{Rng, SeedableRng};

use super::{Item, StudyData, Vote};
use crate::formats::Level;

pub fn study(n: usize, seed: u64) -> StudyData {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let bugs = n / 5 + 1;
    let mut data = StudyData {
        bugs: (0..bugs).map(|b| format!("B-{b}")).collect(),
        ..Default::default()
    };
    for i in 0..n {
        let level = Level::ALL[i % 3];
        data.items.push(Item {
            key: format!("{level}_{i}"),
            bug: format!("B-{}", i % bugs),
            level,
            operator: format!("Op{}", i % 18),
            gold_unnatural: None,
        });
        let bias: f64 = rng.gen_range(0.0..1.0);
        for a in 0..5 {
            let hi = rng.gen_bool(bias);
            data.votes.push(Vote {
                item: i,
                annotator: format!("S{}", (i + a) % 10 + 1),
                cr: if hi {
                    rng.gen_range(3..=4)
                } else {
                    rng.gen_range(1..=2)
                },
                cc: rng.gen_range(1..=4),
                time_secs: Some(rng.gen_range(2.0..60.0)),
            });
        }
    }
    for tool in ["t1", "t2", "t3", "t4", "t5"] {
        for b in &data.bugs {
            data.npr.push((tool.into(), b.clone(), rng.gen_range(0..3)));
        }
        for it in &data.items {
            data.npr
                .push((tool.into(), it.key.clone(), rng.gen_range(0..3)));
        }
    }
    for model in ["m1", "m2"] {
        for b in &data.bugs {
            data.ce
                .push((model.into(), b.clone(), rng.gen_range(1.5..4.0)));
        }
        for it in &data.items {
            data.ce
                .push((model.into(), it.key.clone(), rng.gen_range(1.5..4.5)));
        }
    }
    data
}
