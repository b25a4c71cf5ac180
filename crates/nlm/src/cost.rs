//! What a forward pass costs, in multiply-adds: what orders a study's batches (the costliest
//! first) and what a scoring job's time left follows.

use crate::config::Config;

/// A model's cost of a forward pass: each position goes through every projection and the
/// output head (a multiply-add per weight), and each pair of positions of a sequence meets
/// in every attention head twice (scores, then their sum of values). Attention is computed
/// whole and masked, local layers included, so every pair counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cost {
    /// Multiply-adds per position.
    pub per_position: u64,
    /// Multiply-adds per pair of positions.
    pub per_pair: u64,
}

impl Cost {
    pub(crate) fn of(c: &Config) -> Cost {
        let n = |v: usize| v as u64;
        let (d, hd) = (n(c.hidden), n(c.head_dim));
        let (q, kv) = (
            n(c.heads).saturating_mul(hd),
            n(c.kv_heads).saturating_mul(hd),
        );
        let mlp = c.family.mlp_matrices();
        let projections = [
            d.saturating_mul(q.saturating_add(kv.saturating_mul(2))),
            q.saturating_mul(d),
            mlp.saturating_mul(d).saturating_mul(n(c.intermediate)),
        ];
        let layer = projections.iter().fold(0u64, |a, &b| a.saturating_add(b));
        Cost {
            per_position: n(c.layers)
                .saturating_mul(layer)
                .saturating_add(d.saturating_mul(n(c.vocab))),
            per_pair: n(c.layers).saturating_mul(q.saturating_mul(2)),
        }
    }

    /// A batch of `sequences` sequences padded to `longest` positions (a padded position
    /// costs what a real one does).
    pub fn batch(&self, sequences: usize, longest: usize) -> u64 {
        let (s, t) = (sequences as u64, longest as u64);
        s.saturating_mul(t).saturating_mul(
            self.per_position
                .saturating_add(t.saturating_mul(self.per_pair)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn llama() -> Config {
        // CodeLlama 7B's shape
        let v = serde_json::json!({
            "model_type": "llama", "vocab_size": 32016, "hidden_size": 4096,
            "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
            "intermediate_size": 11008, "max_position_embeddings": 16384,
            "rms_norm_eps": 1e-5, "rope_theta": 1e6,
        });
        Config::parse(&v).expect("a llama config")
    }

    #[test]
    fn a_position_costs_about_the_weights() {
        let c = Cost::of(&llama());
        // 32 × (4 × 4096² + 3 × 4096 × 11008) + 4096 × 32016: CodeLlama 7B's 6.6 billion
        // weights, less its input embeddings (looked up, not multiplied)
        assert_eq!(
            c.per_position,
            32 * (4 * 4096 * 4096 + 3 * 4096 * 11008) + 4096 * 32016
        );
        assert_eq!(c.per_pair, 32 * 2 * 4096);
        // a method of 512 tokens: attention is a fiftieth of a 7B model's work (a tiny
        // model's attention weighs far more)
        let all = c.batch(1, 512);
        let attention = 512 * 512 * c.per_pair;
        assert_eq!(all, 512 * c.per_position + attention);
        assert!((0.015..0.025).contains(&(attention as f64 / all as f64)));
    }

    #[test]
    fn padding_costs_and_nothing_overflows() {
        let c = Cost::of(&llama());
        assert_eq!(c.batch(3, 100), 3 * c.batch(1, 100));
        assert_eq!(c.batch(0, 100), 0);
        assert_eq!(c.batch(usize::MAX, usize::MAX), u64::MAX);
    }
}
