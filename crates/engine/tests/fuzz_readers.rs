//! Every reader of untrusted input, fed arbitrary bytes and hostile headers: it returns a value
//! or an error, never panics, and allocates in proportion to what it read.
//!
//! CI runs a bounded number of cases; run longer with
//! `PROPTEST_CASES=100000 cargo test -p natstudy-engine --test fuzz_readers --release`.

use std::collections::HashSet;
use std::io::Cursor;

use natstudy_engine::formats::{items, results, survey};
use natstudy_engine::lm::{arpa, binary};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    // PROPTEST_CASES overrides this (proptest reads it for the default config)
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(400),
        ..ProptestConfig::default()
    }
}

/// Bytes that look like the format now and then: a prefix of a valid file, then noise.
fn near(valid: &'static str) -> impl Strategy<Value = Vec<u8>> {
    (
        0..=valid.len(),
        proptest::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(move |(cut, noise)| {
            let mut v = valid.as_bytes()[..cut].to_vec();
            v.extend(noise);
            v
        })
}

const ARPA: &str = "\\data\\\nngram 1=3\nngram 2=1\n\n\\1-grams:\n-1.0\t<s>\t-0.5\n-0.5\t</s>\n-0.7\ta\t-0.2\n\n\\2-grams:\n-0.3\t<s> a\n\n\\end\\\n";
const BUGS: &str = "{\"bug_id\":\"b1\",\"project\":\"p\",\"file\":\"A.java\",\"method\":\"m\",\"buggy_lines\":[2],\"source\":\"int m() {\\n  return 1;\\n}\"}\n";
const TRANSFORMATIONS: &str = "{\"id\":\"naming_1\",\"bug_id\":\"b1\",\"operator\":\"RenameVariable-1\",\"level\":\"naming\",\"source\":\"int m() {\\n  return 2;\\n}\",\"summary\":\"s\"}\n";
const SURVEY: &str = "{\"naming\": {\"1\": {\"S6\": {\"CR\": 1, \"CC\": 2, \"Time\": 20.72}}}}";
const NPR: &str = "tool,target,status\nT,b1,correct\nT,naming_1,wrong\n";
const CE: &str = "model,target,cross_entropy\nm,b1,2.5\nm,naming_1,3.0\n";

fn targets() -> HashSet<String> {
    ["b1", "naming_1"].iter().map(|s| s.to_string()).collect()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arpa_never_panics(bytes in prop_oneof![near(ARPA), proptest::collection::vec(any::<u8>(), 0..256)]) {
        let _ = arpa::read(Cursor::new(bytes));
    }

    #[test]
    fn binary_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256), order in 0u32..20, words in any::<u32>()) {
        let mut with_header = b"NSLM1\0".to_vec();
        with_header.extend(order.to_le_bytes());
        with_header.extend(words.to_le_bytes());
        with_header.extend(&bytes);
        let _ = binary::read(&mut Cursor::new(with_header));
        let _ = binary::read(&mut Cursor::new(bytes));
    }

    #[test]
    fn items_never_panic(b in prop_oneof![near(BUGS), proptest::collection::vec(any::<u8>(), 0..256)],
                         t in prop_oneof![near(TRANSFORMATIONS), proptest::collection::vec(any::<u8>(), 0..256)]) {
        let bugs = items::parse_bugs(&text(&b), "bugs.jsonl").unwrap_or_default();
        let _ = items::parse_transformations(&text(&t), "transformations.jsonl", &bugs);
        let good = items::parse_bugs(BUGS, "bugs.jsonl").expect("valid bugs");
        let _ = items::parse_transformations(&text(&t), "transformations.jsonl", &good);
    }

    #[test]
    fn survey_never_panics(bytes in prop_oneof![near(SURVEY), proptest::collection::vec(any::<u8>(), 0..256)]) {
        let _ = survey::parse_survey(&text(&bytes), "survey.json");
    }

    #[test]
    fn csvs_never_panic(n in prop_oneof![near(NPR), proptest::collection::vec(any::<u8>(), 0..256)],
                        c in prop_oneof![near(CE), proptest::collection::vec(any::<u8>(), 0..256)]) {
        let _ = results::parse_npr(&text(&n), "npr.csv", &targets());
        let _ = results::parse_ce(&text(&c), "ce.csv", &targets());
    }
}

/// The model bomb of the issue: 30 bytes that claim a trillion unigrams. It must fail cleanly,
/// not reserve memory for the claim.
#[test]
fn a_model_that_claims_huge_counts_is_refused_cheaply() {
    let bomb = "\\data\\\nngram 1=1000000000000\n";
    let err = arpa::read(Cursor::new(bomb)).expect_err("declared, not found");
    assert!(err.to_string().contains("declared 1000000000000"), "{err}");

    let mut bin = b"NSLM1\0".to_vec();
    bin.extend(1u32.to_le_bytes()); // order 1
    bin.extend(1u32.to_le_bytes()); // one word
    bin.extend(1u32.to_le_bytes());
    bin.push(b'a');
    bin.extend(u64::MAX.to_le_bytes()); // claims 2^64 unigrams
    assert!(binary::read(&mut Cursor::new(bin)).is_err());

    let mut words = b"NSLM1\0".to_vec();
    words.extend(2u32.to_le_bytes());
    words.extend(u32::MAX.to_le_bytes()); // claims 4 G words, has none
    assert!(binary::read(&mut Cursor::new(words)).is_err());

    let mut long = b"NSLM1\0".to_vec();
    long.extend(1u32.to_le_bytes());
    long.extend(1u32.to_le_bytes());
    long.extend((1u32 << 20).to_le_bytes()); // a 1 MiB word that is not there
    assert!(binary::read(&mut Cursor::new(long)).is_err());

    let deep = "\\data\\\n".to_owned()
        + &(1..=40)
            .map(|n| format!("ngram {n}=0\n"))
            .collect::<String>();
    assert!(arpa::read(Cursor::new(deep)).is_err(), "orders are bounded");
}

/// The samples the fuzzers start from are valid files (so the near-misses are near).
#[test]
fn the_samples_are_valid() {
    let bugs = items::parse_bugs(BUGS, "bugs.jsonl").expect("bugs");
    items::parse_transformations(TRANSFORMATIONS, "transformations.jsonl", &bugs)
        .expect("transformations");
    survey::parse_survey(SURVEY, "survey.json").expect("survey");
    results::parse_npr(NPR, "npr.csv", &targets()).expect("npr");
    results::parse_ce(CE, "ce.csv", &targets()).expect("ce");
}

/// The reference model still reads (the bounds refuse nothing real).
#[test]
fn valid_models_still_read() {
    let m = arpa::read(Cursor::new(ARPA)).expect("valid ARPA");
    assert_eq!(m.order(), 2);
    let mut bin = Vec::new();
    binary::write(&m, &mut bin).expect("write");
    let back = binary::read(&mut Cursor::new(bin)).expect("read back");
    assert_eq!(back.grams.len(), 2);
    assert_eq!(back.grams[0].len(), 3);
}
