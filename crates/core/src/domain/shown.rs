//! What a participant is shown of an item, decided in one place: what the rating page draws
//! is what the data say was shown.

/// An item's summary as its participant reads it: with the operator blinded (the study's
/// setting, on by default), a summary names no operator — "RenameVariable-2 applied to
/// compute59" reads "A transformation applied to compute59" — for the name is the bias the
/// setting exists to prevent. Every operator of the vocabulary and the item's own `operator`
/// (an imported one may be outside it) are taken out, longest first.
pub fn summary(summary: &str, operator: &str, blind: bool) -> String {
    if !blind {
        return summary.to_owned();
    }
    // the vocabulary's names and the item's own (a name shorter than four letters would be
    // found inside ordinary words), longest first; one pass each, never inside what it wrote
    let own = operator.trim();
    let mut names: Vec<&str> = natstudy_vocab::Operator::ALL
        .iter()
        .map(|o| o.name())
        .chain((own.chars().count() >= 4).then_some(own))
        .collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    names.dedup();
    let mut out = summary.to_owned();
    for name in names {
        out = out.replace(name, "\u{1}");
    }
    let out = out.replace('\u{1}', "a transformation");
    match out.strip_prefix("a transformation") {
        Some(rest) => format!("A transformation{rest}"),
        None => out,
    }
}

#[cfg(test)]
mod tests {
    /// With the operator blinded, a summary names no operator (of the vocabulary, or the
    /// item's own); shown, it is the item's.
    #[test]
    fn a_blinded_summary_names_no_operator() {
        let shown = super::summary(
            "RenameVariable-2 applied to compute59",
            "RenameVariable-2",
            true,
        );
        assert_eq!(shown, "A transformation applied to compute59");
        assert_eq!(
            super::summary(
                "RenameVariable-2 applied to compute59",
                "RenameVariable-2",
                false
            ),
            "RenameVariable-2 applied to compute59"
        );
        assert_eq!(
            super::summary("MyOwnRewrite on line 4", "MyOwnRewrite", true),
            "A transformation on line 4"
        );
        for op in natstudy_vocab::Operator::ALL {
            let s = super::summary(&format!("{} applied to f", op.name()), "", true);
            assert!(!s.contains(op.name()), "{s}");
        }
        assert_eq!(
            super::summary("rename `i` to `index`", "", true),
            "rename `i` to `index`"
        );
    }
}
