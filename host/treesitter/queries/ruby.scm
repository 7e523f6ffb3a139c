; ruby for signpost's built-in indexer. Capture names: docs/tree-sitter.md.
; Ruby has no package declarations: modules are namespaces (`Shop::Item`),
; and `require` names files, not definitions, so names resolve through the
; enclosing modules and the project.

; Definitions.
(module name: (constant) @name) @def.module
(class name: (constant) @name) @def.class
; A compact reopening (`class Shop::Gift`) belongs to the module it names.
(module name: (scope_resolution scope: (_) @owner name: (constant) @name)) @def.module
(class name: (scope_resolution scope: (_) @owner name: (constant) @name)) @def.class
(method name: (_) @name parameters: (method_parameters)? @params) @def.method
((method name: (identifier) @name parameters: (method_parameters)? @params) @def.constructor
 (#eq? @name "initialize"))
(singleton_method name: (_) @name parameters: (method_parameters)? @params) @def.method
(body_statement (assignment left: (constant) @name) @def.constant)
(program (assignment left: (constant) @name) @def.constant)

; Headers: the superclass, and modules mixed in (`include Comparable`).
(superclass (constant) @extends)
(superclass (scope_resolution scope: (_) @ref.qualifier name: (constant) @extends))
((call method: (identifier) @_mix arguments: (argument_list (constant) @extends))
 (#any-of? @_mix "include" "extend" "prepend"))
((call method: (identifier) @_mix
   arguments: (argument_list (scope_resolution scope: (_) @ref.qualifier name: (constant) @extends)))
 (#any-of? @_mix "include" "extend" "prepend"))

; Values: `item = Shop::Item.new(…)`.
(assignment left: (identifier) @var.name right: (_) @var.value)
; Parameters: names that shadow methods of the same name.
(method_parameters (identifier) @var.name @var.unknown)
(method_parameters (optional_parameter name: (identifier) @var.name value: (_) @var.value))
(method_parameters (keyword_parameter name: (identifier) @var.name @var.unknown))
(block_parameters (identifier) @var.name @var.unknown)

; A bare name that is no local variable is a call of `self`'s method
; (`save`, `puts total`, `price * 2`): read, resolved only through the
; class, its ancestors and mixins, or a top-level `def`, never to another
; class's method; a parameter or a variable assigned in the method
; shadows it.
(body_statement (identifier) @read)
(argument_list (identifier) @read)
(binary left: (identifier) @read)
(binary right: (identifier) @read)
(assignment right: (identifier) @read)
(if condition: (identifier) @read)
(unless condition: (identifier) @read)
; `settings.default_encoding`: the bare name before the dot is a call too.
(call receiver: (identifier) @read)

; References. `Item.new(…)` constructs an Item (its `initialize`).
((call receiver: [(constant) @new (scope_resolution scope: (_) @ref.qualifier name: (constant) @new)]
   method: (identifier) @_new arguments: (argument_list)? @call.args)
 (#eq? @_new "new"))
(call receiver: (_)? @call.receiver method: (identifier) @call arguments: (argument_list)? @call.args)
(superclass (scope_resolution scope: (_) @ref.qualifier name: (constant) @ref.type))
(constant) @ref.type
