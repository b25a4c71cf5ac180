//! Patch review's automatic checks, before people see anything: a repair tool's patch as a
//! patched method (given whole or as a unified diff against the target's buggy method), the
//! no-op and syntactic-equivalence (SYE) checks on Java tokens, and the optional
//! trivial-compiler-equivalence (TCE) check with javac in [`tce`].

use crate::lm::tokenize::{tokens, TokenizeOptions};

pub mod tce;

/// A reviewer's answer: is the patch semantically equivalent to the developer's fix?
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Correct,
    Wrong,
    Unsure,
}

impl Verdict {
    pub const ALL: [Verdict; 3] = [Verdict::Correct, Verdict::Wrong, Verdict::Unsure];

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Correct => "correct",
            Verdict::Wrong => "wrong",
            Verdict::Unsure => "unsure",
        }
    }

    pub fn parse(s: &str) -> Option<Verdict> {
        Verdict::ALL.into_iter().find(|v| v.as_str() == s.trim())
    }
}

/// Why a patch was decided without people.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AutoReason {
    /// The patched method is token-identical to the buggy one: wrong.
    Noop,
    /// The patched method is token-identical to the developer's fixed method: correct.
    Sye,
    /// The patched and fixed programs compile to identical class files (`-g:none`): correct.
    Tce,
}

impl AutoReason {
    pub const ALL: [AutoReason; 3] = [AutoReason::Noop, AutoReason::Sye, AutoReason::Tce];

    pub fn as_str(self) -> &'static str {
        match self {
            AutoReason::Noop => "noop",
            AutoReason::Sye => "sye",
            AutoReason::Tce => "tce",
        }
    }

    pub fn parse(s: &str) -> Option<AutoReason> {
        AutoReason::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Whether the reason decides the patch correct (else wrong).
    pub fn correct(self) -> bool {
        !matches!(self, AutoReason::Noop)
    }

    /// What the reason means, for pages and exports.
    pub fn explain(self) -> &'static str {
        match self {
            AutoReason::Noop => "the patched method has the same tokens as the buggy one (no-op)",
            AutoReason::Sye => {
                "the patched method has the same tokens as the developer's fix (SYE)"
            }
            AutoReason::Tce => {
                "the patched and fixed programs compile to identical class files (TCE)"
            }
        }
    }
}

/// How a patch was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchForm {
    /// The whole patched method.
    Method,
    /// A unified diff against the target's buggy method.
    UnifiedDiff,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    #[error("the patch is empty")]
    Empty,
    #[error("the patch looks like a unified diff but does not parse: {0}")]
    BadDiff(String),
    #[error("the unified diff does not apply to the target's buggy method: {0}")]
    DoesNotApply(String),
}

/// Whether a patch text is a unified diff (a `@@ -a,b +c,d @@` hunk header on a line of its own
/// start, after optional `---`/`+++` headers) rather than a method.
fn looks_like_diff(patch: &str) -> bool {
    patch
        .lines()
        .map(str::trim_end)
        .find(|l| !l.is_empty() && !l.starts_with("diff ") && !l.starts_with("index "))
        .is_some_and(|l| l.starts_with("--- ") || l.starts_with("@@ -"))
}

/// The patched method: `patch` itself, or `patch` applied to `buggy` when it is a unified diff.
pub fn patched_method(buggy: &str, patch: &str) -> Result<(String, PatchForm), PatchError> {
    if patch.trim().is_empty() {
        return Err(PatchError::Empty);
    }
    if !looks_like_diff(patch) {
        return Ok((patch.to_owned(), PatchForm::Method));
    }
    // diffy wants the file headers; hunks alone are common in tools' output
    let text = if patch.trim_start().starts_with("@@") {
        format!("--- a\n+++ b\n{patch}")
    } else {
        patch.to_owned()
    };
    let text = if text.ends_with('\n') {
        text
    } else {
        text + "\n"
    };
    let parsed = diffy::Patch::from_str(&text).map_err(|e| PatchError::BadDiff(e.to_string()))?;
    let base = if buggy.ends_with('\n') {
        buggy.to_owned()
    } else {
        format!("{buggy}\n")
    };
    let out = diffy::apply(&base, &parsed).map_err(|e| PatchError::DoesNotApply(e.to_string()))?;
    Ok((out, PatchForm::UnifiedDiff))
}

/// Java tokens of a method, comments and whitespace dropped (the same tokenizer as the
/// language model's).
pub fn java_tokens(src: &str) -> Vec<String> {
    tokens(src, TokenizeOptions::default())
}

/// The token-level checks: no-op (the patch changes no token of the buggy method) and SYE (its
/// tokens are those of the developer's fixed method, when known). `None`: people decide.
pub fn token_check(buggy: &str, patched: &str, fixed: Option<&str>) -> Option<AutoReason> {
    let p = java_tokens(patched);
    if p.is_empty() {
        return None;
    }
    if p == java_tokens(buggy) {
        return Some(AutoReason::Noop);
    }
    if fixed.is_some_and(|f| java_tokens(f) == p) {
        return Some(AutoReason::Sye);
    }
    None
}

pub use crate::transform::{transformed_fixed, MAX_MERGE_BYTES};

#[cfg(test)]
mod tests {
    use super::*;

    const BUGGY: &str =
        "int max(int a, int b) {\n    if (a < b) {\n        return a;\n    }\n    return b;\n}\n";
    const FIXED: &str =
        "int max(int a, int b) {\n    if (a < b) {\n        return b;\n    }\n    return a;\n}\n";

    #[test]
    fn no_op_ignores_comments_whitespace_and_layout() {
        let reformatted =
            "int max(int a,int b){ // the larger\n  if(a<b){return a;}\n  /* else */ return b;\n}";
        assert_eq!(
            token_check(BUGGY, reformatted, Some(FIXED)),
            Some(AutoReason::Noop)
        );
        // a changed string literal's whitespace is a change
        assert_eq!(
            token_check(
                "void f() { g(\"a b\"); }",
                "void f() { g(\"a  b\"); }",
                None
            ),
            None
        );
    }

    #[test]
    fn sye_is_the_fixed_method_up_to_formatting() {
        let patched = "int max(int a, int b)\n{\n    if (a < b)\n        {   return b; } // fixed\n    return a;\n}";
        assert_eq!(
            token_check(BUGGY, patched, Some(FIXED)),
            Some(AutoReason::Sye)
        );
        assert_eq!(
            token_check(BUGGY, patched, None),
            None,
            "no fixed method known"
        );
        // equivalent but written differently: people decide
        let other = "int max(int a, int b) {\n    return a < b ? b : a;\n}";
        assert_eq!(token_check(BUGGY, other, Some(FIXED)), None);
    }

    #[test]
    fn a_patch_is_a_method_or_a_unified_diff() {
        let (m, form) = patched_method(BUGGY, FIXED).expect("method");
        assert_eq!((m.as_str(), form), (FIXED, PatchForm::Method));
        let diff = "@@ -2,5 +2,5 @@\n     if (a < b) {\n-        return a;\n+        return b;\n     }\n-    return b;\n+    return a;\n }\n";
        let (m, form) = patched_method(BUGGY, diff).expect("diff applies");
        assert_eq!((m.as_str(), form), (FIXED, PatchForm::UnifiedDiff));
        let with_headers = format!("--- a/Max.java\n+++ b/Max.java\n{diff}");
        assert_eq!(patched_method(BUGGY, &with_headers).expect("diff").0, FIXED);
        let stale = diff.replace("if (a < b)", "if (a > b)");
        assert!(matches!(
            patched_method(BUGGY, &stale),
            Err(PatchError::DoesNotApply(_))
        ));
        assert_eq!(patched_method(BUGGY, "  \n"), Err(PatchError::Empty));
    }
}
