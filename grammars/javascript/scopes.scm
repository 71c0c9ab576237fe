; Scopes of JavaScript (.js .mjs .cjs .jsx) for retry-run, as TypeScript's
; (grammars/typescript/scopes.scm) without its types: @scope.<kind> on
; the node whose lines the scope spans, @name on its name. A function or
; class bound to a name (a `const`, a class field, an object property) is
; the bound expression, named by what it is bound to.

(function_declaration name: (identifier) @name) @scope.function
(generator_function_declaration name: (identifier) @name) @scope.function
(method_definition name: (_) @name) @scope.function

(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)] @scope.function)
(field_definition
  property: (_) @name
  value: [(arrow_function) (function_expression) (generator_function)] @scope.function)
(pair
  key: (_) @name
  value: [(arrow_function) (function_expression) (generator_function)] @scope.function)

(export_statement "default" @name value: (function_expression !name) @scope.function)
(export_statement "default" @name value: (generator_function !name) @scope.function)
(export_statement "default" @name value: (class !name) @scope.class)

(class_declaration name: (identifier) @name) @scope.class
(variable_declarator name: (identifier) @name value: (class) @scope.class)
