use expect_test::{expect, Expect};

use super::*;

/// The problems a design file gets, one a line (or the design read, as TOML).
fn check(text: &str, expect: Expect) {
    let got = match parse_design("d.toml", text) {
        Ok(d) => d.to_toml(),
        Err(e) => e.to_string(),
    };
    expect.assert_eq(&got);
}

#[test]
fn the_naturalness_design_reads_back_as_written() {
    let d = parse_design("naturalness", NATURALNESS).expect("built in");
    assert_eq!(d.questions.len(), 2);
    let again = parse_design("again", &d.to_toml()).expect("its own TOML");
    assert_eq!(again, d);
}

#[test]
fn a_likert_design_round_trips() {
    check(
        r#"title = "R"
conditions = ["original", "transformed"]
[[question]]
id = "readability"
kind = "likert"
prompt = "How easy is it?"
points = 7
labels = ["Hard", "Easy"]
"#,
        expect![[r#"
            title = "R"
            conditions = ["original", "transformed"]

            [[question]]
            id = "readability"
            kind = "likert"
            prompt = "How easy is it?"
            points = 7
            labels = ["Hard", "Easy"]
        "#]],
    );
}

#[test]
fn bad_designs_name_their_line_and_key() {
    check(
        r#"title = "T"
[[question]]
id = "q"
kind = "likert"
prompt = "P"
points = 12
"#,
        expect![[r#"
            invalid input (1 problem; nothing was imported):
              d.toml:6: field `points`: 12 points: a scale has 2 to 11
        "#]],
    );
    check(
        r#"title = "T"
[[question]]
id = "q"
kind = "pairwise"
prompt = "P"
per_snippet = 0
[[question]]
id = "r"
kind = "likert"
prompt = "P"
per_snippet = 3
"#,
        expect![[r#"
            invalid input (3 problems; nothing was imported):
              d.toml:6: field `per_snippet`: 0: a snippet is in 1 to 1000 pairs or sets
              d.toml:9: field `points`: a likert question needs `points` (2 to 11)
              d.toml:11: field `per_snippet`: a likert question has no `per_snippet`
        "#]],
    );
    check(
        r#"title = "T"
[[question]]
id = "q"
kind = "likert"
prompt = "P"
points = 5
labels = ["a", "b", "c"]
[[question]]
id = "q"
kind = "pairwise"
prompt = "P"
colour = "red"
"#,
        expect![[r#"
            invalid input (1 problem; nothing was imported):
              d.toml:12: field `colour`: unknown field `colour`, expected one of `id`, `kind`, `prompt`, `points`, `labels`, `options`, `max_chars`, `min`, `max`, `ties`, `set_size`, `per_snippet`
        "#]],
    );
    check(
        r#"title = "T"
[[question]]
id = "q"
kind = "likert"
prompt = "P"
points = 5
labels = ["a", "b", "c"]
[[question]]
id = "q"
kind = "choice"
prompt = "P"
options = ["x", "x"]
[[question]]
id = "r s"
kind = "best-worst"
prompt = "P"
set_size = 9
ties = false
[[question]]
id = "n"
kind = "rank"
prompt = "P"
"#,
        expect![[r#"
            invalid input (7 problems; nothing was imported):
              d.toml:7: field `labels`: 3 labels for 5 points: give one per point, or the two ends'
              d.toml:9: field `id`: `q` is used twice
              d.toml:12: field `options`: `x` is listed twice
              d.toml:14: field `id`: `r s` is not an id (letters, digits, _ and -, at most 64)
              d.toml:17: field `set_size`: 9: a set holds 3 to 8 snippets
              d.toml:18: field `ties`: a best-worst question has no `ties`
              d.toml:21: field `kind`: `rank` is not a kind: likert, choice, multi, text, number, pairwise, best-worst, answer
        "#]],
    );
}

#[test]
fn a_design_asks_about_one_unit() {
    check(
        r#"title = "T"
[[question]]
id = "a"
kind = "likert"
prompt = "P"
points = 5
[[question]]
id = "b"
kind = "pairwise"
prompt = "P"
"#,
        expect![[r#"
            invalid input (1 problem; nothing was imported):
              d.toml:9: field `kind`: a pairwise question asks about a pair of snippets, but `a` asks about one snippet: the questions of a design all ask about one snippet, a pair or a set
        "#]],
    );
    check(
        "title = \"T\"\n",
        expect![[r#"
            invalid input (1 problem; nothing was imported):
              d.toml: field `question`: a design needs at least one [[question]]
        "#]],
    );
}

fn pairwise_design() -> Design {
    parse_design(
        "d.toml",
        "title = \"T\"\n[[question]]\nid = \"better\"\nkind = \"pairwise\"\nprompt = \"P\"\nties = false\n",
    )
    .expect("design")
}

#[test]
fn bad_responses_name_their_line_and_nothing_is_read() {
    let design = pairwise_design();
    let snippets = snippets::parse_snippets(
        "s.jsonl",
        "{\"id\": \"S1\", \"code\": \"a\"}\n{\"id\": \"S2\", \"code\": \"b\"}\n",
        &design,
    )
    .expect("snippets");
    let text = [
        r#"{"participant": "P1", "question": "better", "pair": ["S1", "S2"], "answer": "S1", "seconds": 3.5}"#,
        r#"{"participant": "P2", "question": "better", "pair": ["S1", "S1"], "answer": "S1"}"#,
        r#"{"participant": "P3", "question": "better", "pair": ["S1", "S9"], "answer": "tie"}"#,
        r#"{"participant": "P4", "question": "better", "pair": ["S1", "S2"], "answer": "tie", "seconds": -1}"#,
        r#"{"participant": "P5", "question": "worse", "item": "S1", "answer": 3}"#,
        r#"{"participant": "P6", "question": "better", "item": "S1", "answer": "S1"}"#,
    ]
    .join("\n");
    let e = responses::parse_responses("r.jsonl", &text, &design, &snippets).expect_err("bad");
    expect![[r#"
        invalid input (7 problems; nothing was imported):
          r.jsonl:2: field `pair`: names `S1` twice
          r.jsonl:3: field `pair`: `S9` is not a snippet of the study
          r.jsonl:4: field `seconds`: -1 is not a time on item (0, or a normal number of seconds up to a day)
          r.jsonl:4: field `answer`: this question allows no tie
          r.jsonl:5: field `question`: `worse` is not a question of the design (better)
          r.jsonl:6: field `item`: a pairwise question is answered about a pair of snippets with pair, answer, seconds
          r.jsonl:6: field `pair`: missing: a list of two snippet ids, A first
    "#]]
    .assert_eq(&e.to_string());
}

#[test]
fn responses_read_back_as_written() {
    let design = pairwise_design();
    let snippets = snippets::parse_snippets(
        "s.jsonl",
        "{\"id\": \"S1\", \"code\": \"a\"}\n{\"id\": \"S2\", \"code\": \"b\"}\n",
        &design,
    )
    .expect("snippets");
    let line = r#"{"participant":"P1","question":"better","pair":["S2","S1"],"answer":"S1","seconds":3.5}"#;
    let r = responses::parse_responses("r.jsonl", line, &design, &snippets).expect("read");
    assert_eq!(r[0].to_json_line(), line);
}

#[test]
fn bad_snippets_name_their_line_and_field() {
    let design = parse_design(
        "d.toml",
        "title = \"T\"\nconditions = [\"a\", \"b\"]\n[[question]]\nid = \"out\"\nkind = \"answer\"\nprompt = \"P\"\n",
    )
    .expect("design");
    let text = [
        r#"{"id": "S1", "code": "x", "condition": "a", "key": {"out": "B"}, "options": {"out": ["A", "B"]}}"#,
        r#"{"id": "S1", "code": "x", "condition": "c", "key": {"out": "C"}, "options": {"out": ["A", "B"]}}"#,
        r#"{"id": "S3", "code": " ", "condition": "b", "colour": 1}"#,
    ]
    .join("\n");
    let e = snippets::parse_snippets("s.jsonl", &text, &design).expect_err("bad");
    expect![[r#"
        invalid input (6 problems; nothing was imported):
          s.jsonl:2: field `id`: `S1` is used twice
          s.jsonl:2: field `condition`: `c` is not one of the design's conditions (a, b)
          s.jsonl:2: field `key`: the right answer to `out`, `C`, is not one of its options
          s.jsonl:3: field `colour`: unknown field; a snippet has id, code, language, original, condition, key, options, context, group
          s.jsonl:3: field `code`: empty
          s.jsonl:3: field `key`: missing the right answer to `out`
    "#]]
    .assert_eq(&e.to_string());
}

/// A design nested past the TOML reader's depth is refused in words, not by a stack overflow.
#[test]
fn a_deeply_nested_design_is_refused_in_words() {
    let text = format!(
        "title = \"T\"\nx = {}1{}\n",
        "{a=".repeat(5000),
        "}".repeat(5000)
    );
    let e = parse_design("d.toml", &text).expect_err("too deep");
    assert!(e.to_string().contains("d.toml:2"), "{e}");
    let text = format!(
        "title = \"T\"\nx = {}{}\n",
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    assert!(parse_design("d.toml", &text).is_err());
}
