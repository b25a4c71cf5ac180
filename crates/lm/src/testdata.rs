//! Test data shared by the estimators' tests.

/// Sentences over a Zipf-like vocabulary of 5,000 words (seeded), long and short.
pub fn corpus(sentences: usize) -> Vec<Vec<String>> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    (0..sentences)
        .map(|_| {
            let len = rng.gen_range(0..25);
            (0..len)
                .map(|_| {
                    let u: f64 = rng.gen_range(0.0..1.0);
                    format!("w{}", (5000.0 * u.powi(4)) as usize)
                })
                .collect()
        })
        .collect()
}
