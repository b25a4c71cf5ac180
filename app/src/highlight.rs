//! Java syntax classes for display: keywords, literals, comments, plain text; and the tokens a
//! diff line is drawn from (a line breaks between tokens only, never inside one).

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

/// The characters Java's operators are made of: a run of them is one token (`->`, `&&`, `>=`),
/// so that a line never breaks inside an operator.
fn operator_char(c: char) -> bool {
    matches!(
        c,
        '=' | '<' | '>' | '!' | '&' | '|' | '+' | '-' | '*' | '/' | '%' | '^' | '~' | '?' | ':'
    )
}

/// Splits a piece of a line into Java tokens with their classes: identifiers and keywords,
/// numbers, string and character literals, comments (`//` to the end, `/* … */`), runs of
/// operator characters, single punctuation marks, and runs of whitespace (class `ws`).
/// Strings and comments that began in an earlier piece are not tracked: a piece is read on
/// its own. The tokens joined are the text.
pub fn tokens(text: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            i = chars.len();
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i = (i + 2).min(chars.len());
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
            let number = c.is_ascii_digit();
            // whether the number is hexadecimal so far (one pass: a long token stays linear)
            let mut hex = false;
            while i < chars.len() {
                let d = chars[i];
                hex |= number && matches!(d, 'x' | 'X');
                // the sign of an exponent: 1e-5, 0x1p+3 (a hex number's e is a digit)
                let exponent_sign = number && matches!(d, '+' | '-') && {
                    let prev = chars[i - 1];
                    if hex {
                        matches!(prev, 'p' | 'P')
                    } else {
                        matches!(prev, 'e' | 'E')
                    }
                };
                if d.is_alphanumeric()
                    || d == '_'
                    || d == '$'
                    || (number && d == '.')
                    || exponent_sign
                {
                    i += 1;
                } else {
                    break;
                }
            }
        } else if c.is_whitespace() {
            while i < chars.len() && chars[i].is_whitespace() {
                i += 1;
            }
        } else if operator_char(c) {
            while i < chars.len() && operator_char(chars[i]) {
                // a comment starts a token of its own
                if chars[i] == '/' && matches!(chars.get(i + 1), Some('/' | '*')) && i > start {
                    break;
                }
                i += 1;
            }
        } else {
            i += 1;
        }
        let tok: String = chars[start..i].iter().collect();
        let class = if c.is_whitespace() {
            "ws"
        } else {
            class_of(&tok)
        };
        out.push((class, tok));
    }
    out
}

/// Splits a piece of a line into (class, text) runs: the tokens with plain ones (and
/// whitespace) merged.
pub fn highlight(text: &str) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for (class, tok) in tokens(text) {
        let class = if class == "ws" { "" } else { class };
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

    fn split(text: &str) -> Vec<String> {
        let t = tokens(text);
        assert_eq!(t.iter().map(|(_, s)| s.as_str()).collect::<String>(), text);
        t.into_iter().map(|(_, s)| s).collect()
    }

    /// The units a line may break between: whole operators, literals with their signs, a
    /// comment after an operator.
    #[test]
    fn tokens_are_whole() {
        assert_eq!(
            split("x -> a >= 1e-5 && s != \"a-b c\";"),
            [
                "x",
                " ",
                "->",
                " ",
                "a",
                " ",
                ">=",
                " ",
                "1e-5",
                " ",
                "&&",
                " ",
                "s",
                " ",
                "!=",
                " ",
                "\"a-b c\"",
                ";"
            ]
        );
        assert_eq!(
            split("Character.codePointCount(s, 0x1F, 1.5f)"),
            [
                "Character",
                ".",
                "codePointCount",
                "(",
                "s",
                ",",
                " ",
                "0x1F",
                ",",
                " ",
                "1.5f",
                ")"
            ]
        );
        // 0x1E+2 is a sum, not an exponent: hex digits have none without p
        assert_eq!(split("0x1E+2"), ["0x1E", "+", "2"]);
        assert_eq!(split("i=/* n */j//k"), ["i", "=", "/* n */", "j", "//k"]);
        assert_eq!(split("'\\''+x"), ["'\\''", "+", "x"]);
        assert_eq!(tokens("  ")[0].0, "ws");
    }
}
