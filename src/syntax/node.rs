//! Reading a scope's tree-sitter node: its text, the self type an `impl`
//! names, where its head starts (decorators, attributes, doc comments),
//! where its content ends, and its signature.

use tree_sitter::Node;

pub(super) fn text(node: Node, source: &[u8]) -> String {
    String::from_utf8_lossy(&source[node.byte_range()]).into_owned()
}

/// The self type's last path segment, without generics or references.
pub(super) fn impl_name(mut node: Node, source: &[u8]) -> String {
    loop {
        let next = match node.kind() {
            "generic_type" | "reference_type" | "pointer_type" => node.child_by_field_name("type"),
            "scoped_type_identifier" => node.child_by_field_name("name"),
            _ => None,
        };
        match next {
            Some(n) => node = n,
            None => return text(node, source),
        }
    }
}

/// The first row of what decorates a scope's node: its decorators
/// (Python's `decorated_definition`), the outer attributes and `///` or
/// `/** */` doc comments before it (Rust; plain comments among them are
/// passed over, never a head of their own), its visibility.
pub(super) fn head_row(node: Node, source: &[u8]) -> usize {
    let mut row = node.start_position().row;
    if let Some(parent) = node.parent().filter(|p| p.kind() == "decorated_definition") {
        row = row.min(parent.start_position().row);
    }
    let mut prev = node.prev_sibling();
    while let Some(p) = prev {
        match p.kind() {
            "attribute_item" => row = row.min(p.start_position().row),
            "line_comment" | "block_comment" if is_outer_doc(&source[p.byte_range()]) => {
                row = row.min(p.start_position().row)
            }
            "line_comment" | "block_comment" => {}
            _ => break,
        }
        prev = p.prev_sibling();
    }
    row
}

/// `///` or `/**` doc comment text, documenting the item after it (not
/// `////` or `/***`, plain comments, nor `//!`, which documents its parent).
pub(super) fn is_outer_doc(text: &[u8]) -> bool {
    (text.starts_with(b"///") && !text.starts_with(b"////"))
        || (text.starts_with(b"/**") && !text.starts_with(b"/***") && !text.starts_with(b"/**/"))
}

/// The last row of real content: a block without a closing token (Python)
/// may have taken in comments that follow its last statement.
pub(super) fn last_row(node: Node) -> usize {
    let mut cursor = node.walk();
    let last = node.children(&mut cursor).filter(|c| c.kind() != "comment").last();
    match last {
        Some(c) if c.child_count() > 0 => last_row(c),
        Some(c) => c.end_position().row,
        None => node.end_position().row,
    }
}

/// The header up to the body, whitespace runs folded to one space.
pub(super) fn signature(node: Node, source: &[u8]) -> String {
    let end = node.child_by_field_name("body").map_or(node.end_byte(), |b| b.start_byte());
    let raw = String::from_utf8_lossy(&source[node.start_byte()..end.max(node.start_byte())]);
    let folded = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    folded.replace("( ", "(").replace(" )", ")").replace(", )", ")").replace(",)", ")")
}
