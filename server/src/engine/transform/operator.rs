//! The 24 operators: their published names, levels, and which the study kept.

use std::fmt;
use std::str::FromStr;

use crate::formats::Level;

use super::{conditionals, declarations, expression, loops, naming, swap, Candidate, Ctx};

/// A semantic-preserving transformation operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operator {
    RenameVariable1,
    RenameVariable2,
    SwitchRelation,
    Unary2Add,
    Add2Equal,
    MergeVarDecl,
    InfixDividing,
    SwitchEqualExp,
    SwitchStringEqual,
    For2While,
    While2For,
    ElseIf2If,
    Switch2If,
    SwapStatement,
    ReverseIf,
    If2CondExp,
    CondExp2If,
    DividingComposedIf,
    Do2While,
    IfElse2IfElseIf,
    ModifyConstant,
    DivideVarDecl,
    DividePrePostFix,
    LoopIfContinue2Else,
}

use Operator::*;

impl Operator {
    /// Every operator, the study's 18 first.
    pub const ALL: [Operator; 24] = [
        RenameVariable1,
        RenameVariable2,
        SwitchRelation,
        Unary2Add,
        Add2Equal,
        MergeVarDecl,
        InfixDividing,
        SwitchEqualExp,
        SwitchStringEqual,
        For2While,
        While2For,
        ElseIf2If,
        Switch2If,
        SwapStatement,
        ReverseIf,
        If2CondExp,
        CondExp2If,
        DividingComposedIf,
        Do2While,
        IfElse2IfElseIf,
        ModifyConstant,
        DivideVarDecl,
        DividePrePostFix,
        LoopIfContinue2Else,
    ];

    /// The name the published study uses.
    pub fn name(self) -> &'static str {
        match self {
            RenameVariable1 => "RenameVariable-1",
            RenameVariable2 => "RenameVariable-2",
            SwitchRelation => "SwitchRelation",
            Unary2Add => "Unary2Add",
            Add2Equal => "Add2Equal",
            MergeVarDecl => "MergeVarDecl",
            InfixDividing => "InfixDividing",
            SwitchEqualExp => "SwitchEqualExp",
            SwitchStringEqual => "SwitchStringEqual",
            For2While => "For2While",
            While2For => "While2For",
            ElseIf2If => "ElseIf2If",
            Switch2If => "Switch2If",
            SwapStatement => "SwapStatement",
            ReverseIf => "ReverseIf",
            If2CondExp => "If2CondExp",
            CondExp2If => "CondExp2If",
            DividingComposedIf => "DividingComposedIf",
            Do2While => "Do2While",
            IfElse2IfElseIf => "IfElse2IfElseIf",
            ModifyConstant => "ModifyConstant",
            DivideVarDecl => "DivideVarDecl",
            DividePrePostFix => "DividePrePostFix",
            LoopIfContinue2Else => "LoopIfContinue2Else",
        }
    }

    pub fn level(self) -> Level {
        match self {
            RenameVariable1 | RenameVariable2 => Level::Naming,
            SwitchRelation | Unary2Add | Add2Equal | MergeVarDecl | InfixDividing
            | SwitchEqualExp | SwitchStringEqual | ModifyConstant | DivideVarDecl
            | DividePrePostFix => Level::Expression,
            _ => Level::Statement,
        }
    }

    /// One of the 18 operators the published study kept (the other six it filtered out).
    pub fn studied(self) -> bool {
        !matches!(
            self,
            Do2While
                | IfElse2IfElseIf
                | ModifyConstant
                | DivideVarDecl
                | DividePrePostFix
                | LoopIfContinue2Else
        )
    }

    /// The study's 18.
    pub fn studied_set() -> Vec<Operator> {
        Operator::ALL.into_iter().filter(|o| o.studied()).collect()
    }

    pub(crate) fn candidates(self, ctx: &Ctx<'_>) -> Vec<Candidate> {
        match self {
            RenameVariable1 => naming::first_char(ctx),
            RenameVariable2 => naming::substitute(ctx),
            SwitchRelation => expression::switch_relation(ctx),
            Unary2Add => expression::unary_to_add(ctx),
            Add2Equal => expression::add_to_equal(ctx),
            MergeVarDecl => declarations::merge(ctx),
            InfixDividing => declarations::infix_dividing(ctx),
            SwitchEqualExp => expression::switch_equal(ctx),
            SwitchStringEqual => expression::switch_string_equal(ctx),
            For2While => loops::for_to_while(ctx),
            While2For => loops::while_to_for(ctx),
            ElseIf2If => conditionals::else_if_to_if(ctx),
            Switch2If => conditionals::switch_to_if(ctx),
            SwapStatement => swap::swap_statements(ctx),
            ReverseIf => conditionals::reverse_if(ctx),
            If2CondExp => conditionals::if_to_cond(ctx),
            CondExp2If => conditionals::cond_to_if(ctx),
            DividingComposedIf => conditionals::divide_composed_if(ctx),
            Do2While => loops::do_to_while(ctx),
            IfElse2IfElseIf => conditionals::if_else_to_else_if(ctx),
            ModifyConstant => expression::modify_constant(ctx),
            DivideVarDecl => declarations::divide(ctx),
            DividePrePostFix => expression::divide_pre_post_fix(ctx),
            LoopIfContinue2Else => loops::if_continue_to_else(ctx),
        }
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
