; Scopes of Python for retry-run: @scope.<kind> on the definition node (it
; starts at `def`/`async`/`class`, below any decorators), @name on its name.
; Lambdas and comprehensions are not scopes.

(function_definition
  name: (identifier) @name) @scope.function

(class_definition
  name: (identifier) @name) @scope.class
