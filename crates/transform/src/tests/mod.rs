//! Data-driven tests of every operator: `check(operator, before, expect![[after]])`, with the
//! cases where an operator must refuse. Inputs are methods; every line counts as buggy unless
//! a test says otherwise.

mod explain;
mod expressions;
mod moves;
mod naming;
mod requests;
mod statements;
