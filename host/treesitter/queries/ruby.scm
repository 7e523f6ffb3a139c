; ruby for signpost's built-in indexer. Capture names: docs/tree-sitter.md.
; Ruby has no package declarations: modules are namespaces (`Shop::Item`),
; and `require` names files, not definitions, so names resolve through the
; enclosing modules and the project.

; Definitions.
(module name: [(constant) @name (scope_resolution name: (constant) @name)]) @def.module
(class name: [(constant) @name (scope_resolution name: (constant) @name)]) @def.class
(method name: (_) @name parameters: (method_parameters)? @params) @def.method
((method name: (identifier) @name parameters: (method_parameters)? @params) @def.constructor
 (#eq? @name "initialize"))
(singleton_method name: (_) @name parameters: (method_parameters)? @params) @def.method
(body_statement (assignment left: (constant) @name) @def.constant)
(program (assignment left: (constant) @name) @def.constant)

; Headers: the superclass, and modules mixed in (`include Comparable`).
(superclass [(constant) @extends (scope_resolution name: (constant) @extends)])
((call method: (identifier) @_mix
   arguments: (argument_list [(constant) @extends (scope_resolution name: (constant) @extends)]))
 (#any-of? @_mix "include" "extend" "prepend"))

; Values: `item = Shop::Item.new(…)`.
(assignment left: (identifier) @var.name right: (_) @var.value)

; References. `Item.new(…)` constructs an Item (its `initialize`).
((call receiver: [(constant) @new (scope_resolution scope: (_) @ref.qualifier name: (constant) @new)]
   method: (identifier) @_new arguments: (argument_list)? @call.args)
 (#eq? @_new "new"))
(call receiver: (_)? @call.receiver method: (identifier) @call arguments: (argument_list)? @call.args)
(superclass (scope_resolution scope: (_) @ref.qualifier name: (constant) @ref.type))
(constant) @ref.type
