; scala for signpost's built-in indexer. Capture names: docs/tree-sitter.md.
; Symbols are spelled as SemanticDB (scip-java) spells them: a class `Item#`,
; its companion object `Item.` (a namespace spelled as a term), the primary
; constructor `` `<init>`(). ``.

(package_clause name: (package_identifier) @package)
; A package object's members are its package's (`package object data` after
; `package cats` is `cats.data`'s).
(package_object name: (identifier) @package)
(import_declaration path: (identifier) @import.from . (namespace_selectors (identifier) @import))

; Definitions.
(class_definition name: (identifier) @name) @def.class
(trait_definition name: (identifier) @name) @def.trait
(enum_definition name: (identifier) @name) @def.enum
(object_definition name: (identifier) @name @term) @def.module
(class_definition class_parameters: (class_parameters) @name @params @def.constructor)
(class_parameter name: (identifier) @name) @def.property
; Operators are methods too (`def ++(l: List[A])`).
(function_definition name: [(identifier) (operator_identifier)] @name parameters: (parameters)? @params return_type: (_)? @returns) @def.method
(function_declaration name: [(identifier) (operator_identifier)] @name parameters: (parameters)? @params return_type: (_)? @returns) @def.method
(template_body (val_definition pattern: (identifier) @name) @def.property)
(template_body (var_definition pattern: (identifier) @name) @def.property)
(type_definition name: (type_identifier) @name type: (_)? @returns) @def.type

; Headers: `extends A with B` (each of the clause's types, which the
; grammar gives one field name: a pattern naming the field meets only the
; first).
(extends_clause [(type_identifier) @extends (generic_type type: (type_identifier) @extends)])
; An infix type (`extends (A Ior Nothing)`): its operator is the type.
(extends_clause (tuple_type (infix_type operator: (identifier) @extends)))
(extends_clause (infix_type operator: (identifier) @extends))

; Typed names, values, and parameterless methods read as fields.
(parameter name: (identifier) @var.name type: (_) @var.written)
(class_parameter name: (identifier) @var.name type: (_) @var.written)
(val_definition pattern: (identifier) @var.name type: (_) @var.written)
(val_definition pattern: (identifier) @var.name !type value: (_) @var.value)
(var_definition pattern: (identifier) @var.name !type value: (_) @var.value)

; References: calls, `new T(…)`, and `item.price` (a method without
; parentheses runs when read).
(call_expression function: (identifier) @call arguments: (arguments) @call.args)
(call_expression function: (field_expression value: (_) @call.receiver field: (identifier) @call) arguments: (arguments) @call.args)
(instance_expression [(type_identifier) @new (generic_type type: (type_identifier) @new)] arguments: (arguments)? @call.args)
(field_expression value: (_) @call.receiver field: (identifier) @read)
; A bare name bound to a val (`val iter = reverseIterator`): a method
; without parentheses, where no variable of that name is in scope.
(val_definition value: (identifier) @read)
(type_identifier) @ref.type

; Function literals: a name declared in one is seen only inside it.
(lambda_expression) @literal
