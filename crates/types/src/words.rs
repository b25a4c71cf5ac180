//! Counted nouns, spelled the same by the pages and by the messages the services write.

/// "1 annotator", "2 annotators", "0 annotators".
pub fn count(n: i64, word: &str) -> String {
    format!("{n} {}", noun(n, word))
}

/// The noun for a count of `n`: "annotator" for 1, "annotators" otherwise.
pub fn noun(n: i64, word: &str) -> String {
    if n == 1 {
        word.to_owned()
    } else {
        format!("{word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1, "item"), "1 item");
        assert_eq!(count(0, "item"), "0 items");
        assert_eq!(count(2, "annotator"), "2 annotators");
        assert_eq!(noun(-1, "vote"), "votes");
    }
}
