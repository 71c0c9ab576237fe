; Scopes of TypeScript (and TSX) for retry-run: @scope.<kind> on the node
; whose lines the scope spans, @name on its name. Only definitions with a
; body: overload and `declare` signatures, abstract and interface method
; signatures are other nodes. A function or class bound to a name (a
; `const`, a class field, an object property) is the bound expression,
; named by what it is bound to; `src/syntax/js.rs` places its lines.

(function_declaration name: (identifier) @name) @scope.function
(generator_function_declaration name: (identifier) @name) @scope.function
(method_definition name: (_) @name) @scope.function

(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)] @scope.function)
(public_field_definition
  name: (_) @name
  value: [(arrow_function) (function_expression) (generator_function)] @scope.function)
(pair
  key: (_) @name
  value: [(arrow_function) (function_expression) (generator_function)] @scope.function)

; `export default function () {}` and `export default class {}`: "default".
(export_statement "default" @name value: (function_expression !name) @scope.function)
(export_statement "default" @name value: (generator_function !name) @scope.function)
(export_statement "default" @name value: (class !name) @scope.class)

(class_declaration name: (type_identifier) @name) @scope.class
(abstract_class_declaration name: (type_identifier) @name) @scope.class
(variable_declarator name: (identifier) @name value: (class) @scope.class)

(interface_declaration name: (type_identifier) @name) @scope.interface
(enum_declaration name: (identifier) @name) @scope.enum

; `namespace A.B {}` is A, then B inside it; `declare module "x"` is not.
(internal_module name: [(identifier) (nested_identifier)] @name) @scope.namespace
(module name: [(identifier) (nested_identifier)] @name) @scope.namespace
