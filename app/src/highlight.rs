//! Java syntax classes for display: keywords, literals, comments, plain text.

use natstudy_vocab::JAVA_KEYWORDS as KEYWORDS;

/// The CSS class of a token: `kw`, `str`, `num`, `com` or `` (plain).
pub fn class_of(token: &str) -> &'static str {
    if token.starts_with("//") || token.starts_with("/*") {
        "com"
    } else if token.starts_with('"') || token.starts_with('\'') {
        "str"
    } else if token.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        "num"
    } else if KEYWORDS.contains(&token) {
        "kw"
    } else {
        ""
    }
}

/// Splits a piece of a line into (class, text) tokens. Strings and comments that began in an
/// earlier piece are not tracked: a piece is highlighted on its own.
pub fn highlight(text: &str) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            i = chars.len();
        } else if c == '"' || c == '\'' {
            i += 1;
            while i < chars.len() && chars[i] != c {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(chars.len());
        } else if c.is_alphanumeric() || c == '_' || c == '$' {
            while i < chars.len()
                && (chars[i].is_alphanumeric()
                    || chars[i] == '_'
                    || chars[i] == '$'
                    || (c.is_ascii_digit() && chars[i] == '.'))
            {
                i += 1;
            }
        } else {
            i += 1;
        }
        let tok: String = chars[start..i].iter().collect();
        let class = class_of(&tok);
        match out.last_mut() {
            Some((k, t)) if *k == class && class.is_empty() => t.push_str(&tok),
            _ => out.push((class, tok)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        let h = highlight("return \"a\" + 42; // done");
        let classes: Vec<&str> = h.iter().map(|(c, _)| *c).collect();
        assert_eq!(classes, vec!["kw", "", "str", "", "num", "", "com"]);
        assert_eq!(
            h.iter().map(|(_, t)| t.as_str()).collect::<String>(),
            "return \"a\" + 42; // done"
        );
    }
}
