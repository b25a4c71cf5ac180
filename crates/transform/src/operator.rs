//! The 24 operators (their names, levels and which the study kept live in `natstudy-vocab`)
//! and the rules each applies.

pub use natstudy_vocab::{Operator, UnknownOperator};

use super::{
    conditionals, declarations, expression, loops, naming, swap, switches, Candidate, Ctx,
};

use Operator::*;

/// The candidate edits of an operator in a method.
pub(crate) fn candidates(op: Operator, ctx: &Ctx<'_>) -> Vec<Candidate> {
    match op {
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
        Switch2If => switches::switch_to_if(ctx),
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
