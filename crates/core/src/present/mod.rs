//! Engine results and store rows as people read them: the report's tables (`tables`; a
//! designed study's, `questions`) as text (`text`) and LaTeX (`latex`), and the pages' wire
//! types (`wire`).

pub mod latex;
pub mod questions;
pub mod tables;
pub mod text;
pub mod wire;
