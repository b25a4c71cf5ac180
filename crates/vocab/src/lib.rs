//! The words natstudy's parts share: the levels and operators of semantic-preserving
//! transformations (as the published study names them) and Java's reserved words. The engine
//! and the browser's UI both use these lists; each exists once, here.

pub mod ids;
mod role;

pub use ids::{AnnotatorId, BatchId, ItemId, JobId, StudyId, UserId};
pub use role::Role;

use std::fmt;
use std::str::FromStr;

/// The naturalness-study levels of transformation operators.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Naming,
    Expression,
    Statement,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Naming, Level::Expression, Level::Statement];

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Naming => "naming",
            Level::Expression => "expression",
            Level::Statement => "statement",
        }
    }

    pub fn parse(s: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Declares the operators from one table: variant, published name, level, kept by the study.
macro_rules! operators {
    ($($variant:ident = $name:literal, $level:ident, $studied:literal;)*) => {
        /// A semantic-preserving transformation operator.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Operator {
            $($variant,)*
        }

        impl Operator {
            /// Every operator, the study's 18 first.
            pub const ALL: [Operator; [$(stringify!($variant)),*].len()] = [$(Operator::$variant,)*];

            /// The name the published study uses.
            pub fn name(self) -> &'static str {
                match self {
                    $(Operator::$variant => $name,)*
                }
            }

            pub fn level(self) -> Level {
                match self {
                    $(Operator::$variant => Level::$level,)*
                }
            }

            /// One of the 18 operators the published study kept (the other six it filtered out).
            pub fn studied(self) -> bool {
                match self {
                    $(Operator::$variant => $studied,)*
                }
            }
        }
    };
}

operators! {
    RenameVariable1 = "RenameVariable-1", Naming, true;
    RenameVariable2 = "RenameVariable-2", Naming, true;
    SwitchRelation = "SwitchRelation", Expression, true;
    Unary2Add = "Unary2Add", Expression, true;
    Add2Equal = "Add2Equal", Expression, true;
    MergeVarDecl = "MergeVarDecl", Expression, true;
    InfixDividing = "InfixDividing", Expression, true;
    SwitchEqualExp = "SwitchEqualExp", Expression, true;
    SwitchStringEqual = "SwitchStringEqual", Expression, true;
    For2While = "For2While", Statement, true;
    While2For = "While2For", Statement, true;
    ElseIf2If = "ElseIf2If", Statement, true;
    Switch2If = "Switch2If", Statement, true;
    SwapStatement = "SwapStatement", Statement, true;
    ReverseIf = "ReverseIf", Statement, true;
    If2CondExp = "If2CondExp", Statement, true;
    CondExp2If = "CondExp2If", Statement, true;
    DividingComposedIf = "DividingComposedIf", Statement, true;
    Do2While = "Do2While", Statement, false;
    IfElse2IfElseIf = "IfElse2IfElseIf", Statement, false;
    ModifyConstant = "ModifyConstant", Expression, false;
    DivideVarDecl = "DivideVarDecl", Expression, false;
    DividePrePostFix = "DividePrePostFix", Expression, false;
    LoopIfContinue2Else = "LoopIfContinue2Else", Statement, false;
}

impl Operator {
    /// The study's 18.
    pub fn studied_set() -> Vec<Operator> {
        Operator::ALL.into_iter().filter(|o| o.studied()).collect()
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown operator name.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown operator `{0}` (known: {known})", known = Operator::ALL.map(|o| o.name()).join(", "))]
pub struct UnknownOperator(pub String);

impl FromStr for Operator {
    type Err = UnknownOperator;

    fn from_str(s: &str) -> Result<Operator, UnknownOperator> {
        Operator::ALL
            .into_iter()
            .find(|o| o.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownOperator(s.to_owned()))
    }
}

/// Java's keywords and reserved literals (what a highlighter marks as keywords).
pub const JAVA_KEYWORDS: &[&str] = &[
    "abstract",
    "assert",
    "boolean",
    "break",
    "byte",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extends",
    "final",
    "finally",
    "float",
    "for",
    "goto",
    "if",
    "implements",
    "import",
    "instanceof",
    "int",
    "interface",
    "long",
    "native",
    "new",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "short",
    "static",
    "strictfp",
    "super",
    "switch",
    "synchronized",
    "this",
    "throw",
    "throws",
    "transient",
    "try",
    "var",
    "void",
    "volatile",
    "while",
    "true",
    "false",
    "null",
    "record",
    "yield",
];

/// Contextual words that are not keywords but that no variable should be renamed to.
pub const JAVA_CONTEXTUAL: &[&str] = &["sealed", "permits", "non-sealed", "_"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eighteen_studied_operators_first_then_six() {
        assert_eq!(Operator::ALL.len(), 24);
        assert!(Operator::ALL[..18].iter().all(|o| o.studied()));
        assert!(Operator::ALL[18..].iter().all(|o| !o.studied()));
        assert_eq!(
            "renamevariable-1".parse::<Operator>(),
            Ok(Operator::RenameVariable1)
        );
        assert!("Nope".parse::<Operator>().is_err());
        let levels = |l: Level| Operator::ALL.iter().filter(|o| o.level() == l).count();
        assert_eq!(
            (
                levels(Level::Naming),
                levels(Level::Expression),
                levels(Level::Statement)
            ),
            (2, 10, 12)
        );
    }
}
