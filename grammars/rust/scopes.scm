; Scopes of Rust for retry-run: @scope.<kind> on the item, @name on its name.
; Only items with a body are scopes: a trait method signature
; (function_signature_item), `mod m;`, `struct Unit;` and extern fns are not.
; Closures and macro_rules! bodies are not items, so never scopes.
; For an impl, @name is the self type; its last path segment without
; generics becomes the name (impl<T> fmt::Display for a::Foo<T> -> Foo).

(function_item
  name: (identifier) @name
  body: (block)) @scope.function

(impl_item
  type: (_) @name
  body: (declaration_list)) @scope.impl

(trait_item
  name: (type_identifier) @name
  body: (declaration_list)) @scope.trait

(mod_item
  name: (identifier) @name
  body: (declaration_list)) @scope.mod

(struct_item
  name: (type_identifier) @name
  body: (_)) @scope.struct

(enum_item
  name: (type_identifier) @name
  body: (enum_variant_list)) @scope.enum

(union_item
  name: (type_identifier) @name
  body: (field_declaration_list)) @scope.struct
