//! An item as it is shown: its diff, its file's context and its summary.

use serde::{Deserialize, Serialize};

use crate::ItemId;

/// A piece of a diff line; `changed` pieces are highlighted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seg {
    pub text: String,
    pub changed: bool,
}

/// One row of a diff (see the server's `engine::diff`). `kind`: same, removed, added, changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffLine {
    pub kind: String,
    pub old_no: Option<u32>,
    pub new_no: Option<u32>,
    pub old: Vec<Seg>,
    pub new: Vec<Seg>,
    /// The original line is a buggy line.
    pub buggy: bool,
    /// The transformed line is one of the transformed method's buggy lines.
    #[serde(default)]
    pub buggy_new: bool,
}

/// The part of an item's method file shown under Context, asked for when it is opened: the
/// method and the lines around it, bounded (a huge file is never sent whole), from line
/// `first_line` of the file's `total_lines`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileContext {
    pub text: String,
    pub first_line: u32,
    pub total_lines: u32,
}

/// An item as a participant rates it. Blinded studies leave `operator` and `bug_id` out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemView {
    pub item: ItemId,
    pub summary: String,
    pub operator: Option<String>,
    pub bug_id: Option<String>,
    pub project: String,
    pub file_path: String,
    pub method: String,
    pub diff: Vec<DiffLine>,
    /// Whether the method's file is known: its part ([`FileContext`]) is sent only when the
    /// participant opens Context, never with the item.
    pub has_file: bool,
    /// 1-based line of the file where the method starts, if found.
    pub method_line: Option<u32>,
    pub method_lines: u32,
    pub original_left: bool,
    /// The participant's current answers when revising: (CR, CC, comment).
    pub previous: Option<(u8, u8, String)>,
    /// A fresh idempotency key for this rendering's submit.
    pub token: String,
}
