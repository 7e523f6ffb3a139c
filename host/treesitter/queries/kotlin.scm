; Kotlin for signpost's built-in indexer. Capture names: docs/tree-sitter.md.
; The grammar names few fields: children are matched by position.

(package_header (qualified_identifier) @package)
(import (qualified_identifier) @import)

; Definitions. A function in a class is a method (the emitter tells them apart).
(class_declaration "interface" name: (identifier) @name) @def.interface
(class_declaration "class" name: (identifier) @name) @def.class
(object_declaration name: (identifier) @name) @def.class
(enum_entry . (identifier) @name) @def.constant
(function_declaration name: (identifier) @name (function_value_parameters) @params) @def.function
; What it returns as written (`: JsonAdapter<T?>`, `: Segment?`).
(function_declaration name: (identifier) @name (function_value_parameters) . [(user_type) (nullable_type)] @returns) @def.function
; An extension function (`fun Reader.decode()`): the type it extends.
(function_declaration (user_type (identifier) @extension .) . name: (identifier) @name (function_value_parameters) @params) @def.function
(secondary_constructor "constructor" @name (function_value_parameters) @params) @def.constructor
; A primary constructor (`class Pair(val a: Int)`), at its parameter
; list's parenthesis: its parameters (`val source: BufferedSource`) are
; the class's properties, seen by its members.
(primary_constructor (class_parameters "(" @name @def.constructor) @params)
(class_body (property_declaration (variable_declaration . (identifier) @name)) @def.property)
(source_file (property_declaration (variable_declaration . (identifier) @name)) @def.variable)
(class_parameter ["val" "var"] (identifier) @name) @def.property

; Headers: superclass and interfaces of a class or an object declaration,
; a qualified one (`JsonAdapter.Factory`) by its last name in the type its
; qualifier names (so that `object Factory : JsonAdapter.Factory` is not
; its own supertype), delegated ones too (`Runnable by r`). An object literal's (`object : T { … }`) are its own,
; not the enclosing class's: its body sees T's members (below).
(class_declaration (delegation_specifiers (delegation_specifier [
  (constructor_invocation (user_type . (identifier) @extends .))
  (constructor_invocation (user_type . (identifier) @extends . (type_arguments) .))
  (constructor_invocation (user_type (identifier) @ref.qualifier . (identifier) @extends .))
  (constructor_invocation (user_type (identifier) @ref.qualifier . (identifier) @extends . (type_arguments) .))
  (user_type . (identifier) @extends .)
  (user_type . (identifier) @extends . (type_arguments) .)
  (user_type (identifier) @ref.qualifier . (identifier) @extends .)
  (user_type (identifier) @ref.qualifier . (identifier) @extends . (type_arguments) .)
  (explicit_delegation (user_type . (identifier) @extends .))
  (explicit_delegation (user_type . (identifier) @extends . (type_arguments) .))
  (explicit_delegation (user_type (identifier) @ref.qualifier . (identifier) @extends .))
  (explicit_delegation (user_type (identifier) @ref.qualifier . (identifier) @extends . (type_arguments) .))
])))
(object_declaration (delegation_specifiers (delegation_specifier [
  (constructor_invocation (user_type . (identifier) @extends .))
  (constructor_invocation (user_type . (identifier) @extends . (type_arguments) .))
  (constructor_invocation (user_type (identifier) @ref.qualifier . (identifier) @extends .))
  (constructor_invocation (user_type (identifier) @ref.qualifier . (identifier) @extends . (type_arguments) .))
  (user_type . (identifier) @extends .)
  (user_type . (identifier) @extends . (type_arguments) .)
  (user_type (identifier) @ref.qualifier . (identifier) @extends .)
  (user_type (identifier) @ref.qualifier . (identifier) @extends . (type_arguments) .)
  (explicit_delegation (user_type . (identifier) @extends .))
  (explicit_delegation (user_type . (identifier) @extends . (type_arguments) .))
  (explicit_delegation (user_type (identifier) @ref.qualifier . (identifier) @extends .))
  (explicit_delegation (user_type (identifier) @ref.qualifier . (identifier) @extends . (type_arguments) .))
])))
(object_literal
  (delegation_specifiers (delegation_specifier [
    (constructor_invocation (user_type (identifier) @anonymous.type .))
    (user_type (identifier) @anonymous.type .)
    (user_type (identifier) @anonymous.type . (type_arguments) .)]))
  (class_body) @anonymous)

; Typed names: parameters, constructor properties, properties, locals,
; nullable ones (`Segment?`) too.
; A written type (`@var.path`): its last name, in the type the name before
; it names (`JsonAdapter.Factory`), nullable or not.
(parameter . (identifier) @var.name [(user_type) (nullable_type)] @var.path)
(class_parameter (identifier) @var.name . [(user_type) (nullable_type)] @var.path)
(property_declaration (variable_declaration . (identifier) @var.name [(user_type) (nullable_type)] @var.path))
; A construction (`val r = Reader(…)`): a class's name, not a function's.
((property_declaration (variable_declaration . (identifier) @var.name .) (call_expression . (identifier) @var.type))
 (#match? @var.type "^[A-Z]"))
; A local or a property typed by its value (`var tail = head!!.prev`).
(property_declaration (variable_declaration . (identifier) @var.name .) (_) @var.value .)

; References.
(call_expression . (identifier) @call (value_arguments) @call.args)
(call_expression . (navigation_expression . (_) @call.receiver (identifier) @call .) (value_arguments) @call.args)
; A call given only a trailing lambda (`lock.withLock { … }`, `run { … }`):
; one argument. (Given arguments and a lambda, the lambda is counted with
; them: extract/syntax.rs `count_args`.)
(call_expression . (identifier) @call . (annotated_lambda) @call.args)
(call_expression . (navigation_expression . (_) @call.receiver (identifier) @call .) . (annotated_lambda) @call.args)
(user_type . (identifier) @ref.type)

; Function literals: a name declared in one is seen only inside it.
[(anonymous_function) (lambda_literal)] @literal
