//! Synthetic studies of each design, drawn from latent models with a fixed seed: what
//! `natstudy bench report --design …` analyses (and a test of the analysis at scale).

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

use super::kinds::pairwise::TIE;
use super::record::{Answer, Response, Shown, Snippet};
use super::{parse_design, Design};

/// The designs a synthetic study can have.
pub const KINDS: [&str; 4] = ["likert", "pairwise", "best-worst", "answer"];

/// A study of `kind` with `snippets` snippets and `responses` responses by `participants`
/// participants (each snippet answered by distinct participants where the kind asks about one
/// snippet). `None` for a kind not in [`KINDS`].
pub fn study(
    kind: &str,
    snippets: usize,
    responses: usize,
    participants: usize,
) -> Option<(Design, Vec<Snippet>, Vec<Response>)> {
    let design_text = match kind {
        "likert" => "title = \"L\"\nconditions = [\"original\", \"transformed\"]\n[[question]]\nid = \"q\"\nkind = \"likert\"\nprompt = \"P\"\npoints = 5\n",
        "pairwise" => "title = \"P\"\n[[question]]\nid = \"q\"\nkind = \"pairwise\"\nprompt = \"P\"\nties = true\n",
        "best-worst" => "title = \"B\"\n[[question]]\nid = \"q\"\nkind = \"best-worst\"\nprompt = \"P\"\nset_size = 4\n",
        "answer" => "title = \"A\"\n[[question]]\nid = \"q\"\nkind = \"answer\"\nprompt = \"P\"\n",
        _ => return None,
    };
    let design = parse_design("synthetic", design_text).ok()?;
    let mut rng = ChaCha8Rng::seed_from_u64(20_261_207);
    let normal = Normal::new(0.0, 1.0).ok()?;
    let options: Vec<String> = ["A", "B", "C", "D"].map(str::to_owned).to_vec();
    let quality: Vec<f64> = (0..snippets).map(|_| normal.sample(&mut rng)).collect();
    let list: Vec<Snippet> = (0..snippets)
        .map(|i| Snippet {
            id: format!("S{}", i + 1),
            code: format!("int f{i}() {{ return {i}; }}"),
            language: "java".into(),
            original: None,
            condition: (kind == "likert").then(|| ["original", "transformed"][i % 2].to_owned()),
            key: if kind == "answer" {
                [("q".to_owned(), options[i % 4].clone())].into()
            } else {
                Default::default()
            },
            options: if kind == "answer" {
                [("q".to_owned(), options.clone())].into()
            } else {
                Default::default()
            },
            context: None,
            group: None,
        })
        .collect();
    let leniency: Vec<f64> = (0..participants.max(1))
        .map(|_| 0.5 * normal.sample(&mut rng))
        .collect();
    let participant = |p: usize| format!("P{}", p + 1);
    let seconds =
        |rng: &mut ChaCha8Rng| ((5.0 + 20.0 * rng.gen::<f64>()) * 1000.0).round() / 1000.0;
    let mut out = Vec::with_capacity(responses);
    let per_snippet = responses.div_ceil(snippets.max(1));
    match kind {
        "likert" | "answer" => {
            let people: Vec<usize> = (0..participants.max(per_snippet)).collect();
            'fill: for (s, snippet) in list.iter().enumerate() {
                let raters: Vec<usize> = people
                    .choose_multiple(&mut rng, per_snippet.min(people.len()))
                    .copied()
                    .collect();
                for p in raters {
                    if out.len() == responses {
                        break 'fill;
                    }
                    let latent = quality[s] - if s % 2 == 1 { 0.7 } else { 0.0 }
                        + leniency[p % leniency.len()]
                        + normal.sample(&mut rng);
                    let answer = if kind == "likert" {
                        let point = [-1.5, -0.5, 0.5, 1.5]
                            .iter()
                            .filter(|t| latent > **t)
                            .count()
                            + 1;
                        Answer::Number(point as f64)
                    } else {
                        let right = latent > -0.5;
                        let key = &options[s % 4];
                        Answer::Text(if right {
                            key.clone()
                        } else {
                            options[(s + 1) % 4].clone()
                        })
                    };
                    out.push(Response {
                        participant: participant(p),
                        question: "q".into(),
                        shown: Shown::Item(snippet.id.clone()),
                        answer,
                        seconds: Some(seconds(&mut rng)),
                    });
                }
            }
        }
        "pairwise" => {
            for r in 0..responses {
                let a = rng.gen_range(0..snippets);
                let mut b = rng.gen_range(0..snippets - 1);
                if b >= a {
                    b += 1;
                }
                let d = quality[a] - quality[b] + normal.sample(&mut rng);
                let pick = if d.abs() < 0.2 {
                    TIE.to_owned()
                } else if d > 0.0 {
                    list[a].id.clone()
                } else {
                    list[b].id.clone()
                };
                out.push(Response {
                    participant: participant(r % participants.max(1)),
                    question: "q".into(),
                    shown: Shown::Pair([list[a].id.clone(), list[b].id.clone()]),
                    answer: Answer::Text(pick),
                    seconds: Some(seconds(&mut rng)),
                });
            }
        }
        _ => {
            let all: Vec<usize> = (0..snippets).collect();
            for r in 0..responses {
                let set: Vec<usize> = all.choose_multiple(&mut rng, 4).copied().collect();
                let noisy: Vec<f64> = set
                    .iter()
                    .map(|&s| quality[s] + normal.sample(&mut rng))
                    .collect();
                let by = |better: bool| {
                    (0..set.len())
                        .max_by(|&x, &y| {
                            let o = noisy[x].total_cmp(&noisy[y]);
                            if better {
                                o
                            } else {
                                o.reverse()
                            }
                        })
                        .map_or(0, |i| set[i])
                };
                out.push(Response {
                    participant: participant(r % participants.max(1)),
                    question: "q".into(),
                    shown: Shown::Set(set.iter().map(|&s| list[s].id.clone()).collect()),
                    answer: Answer::BestWorst {
                        best: list[by(true)].id.clone(),
                        worst: list[by(false)].id.clone(),
                    },
                    seconds: Some(seconds(&mut rng)),
                });
            }
        }
    }
    Some((design, list, out))
}
