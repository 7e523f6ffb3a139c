; swift for signpost's built-in indexer. Capture names: docs/tree-sitter.md.
; Swift has no package declarations: a module is a build target, so names
; resolve through their types and the project. A function's parameters are
; its own children (`@params` is the declaration).

; Definitions. Structs, enums, classes and extensions are all
; `class_declaration`s; an extension's members belong to the type extended.
(class_declaration "class" name: (type_identifier) @name) @def.class
(class_declaration "struct" name: (type_identifier) @name) @def.struct
(class_declaration "enum" name: (type_identifier) @name) @def.enum
(class_declaration "actor" name: (type_identifier) @name) @def.class
(protocol_declaration name: (type_identifier) @name) @def.interface
(typealias_declaration name: (type_identifier) @name) @def.type
(enum_entry name: (simple_identifier) @name) @def.constant
(function_declaration name: (simple_identifier) @name) @params @def.function
; The type returned is read after the arrow (read.rs: the grammar names it
; `name` as well as `return_type`, a field named twice matches only its
; first child, and a pattern for it costs a quarter of a second to compile).
(protocol_function_declaration name: (simple_identifier) @name) @params @def.method
(init_declaration "init" @name) @params @def.constructor
(class_declaration "extension" name: (user_type (type_identifier) @owner)
  body: (class_body (function_declaration name: (simple_identifier) @name) @params @def.method))
(class_declaration "extension" name: (user_type (type_identifier) @owner)
  body: (class_body (init_declaration "init" @name) @params @def.constructor))
(class_body (property_declaration name: (pattern bound_identifier: (simple_identifier) @name)) @def.property)
(class_declaration "extension" name: (user_type (type_identifier) @owner)
  body: (class_body (property_declaration name: (pattern bound_identifier: (simple_identifier) @name)) @def.property))
(protocol_body (protocol_property_declaration name: (pattern bound_identifier: (simple_identifier) @name)) @def.property)
(source_file (property_declaration name: (pattern bound_identifier: (simple_identifier) @name)) @def.variable)

; An extension of an array type (`extension [ServerTrustEvaluating]`): its
; methods are read as top-level functions, and `self` in them is such an
; array.
(class_declaration "extension" name: (array_type) @self.type)

; Headers: a superclass and the protocols adopted.
; A qualified one (`Origins.Base`) by its last name in the type its
; qualifier names, not as two supertypes.
(inheritance_specifier inherits_from: (user_type . (type_identifier) @extends .))
(inheritance_specifier inherits_from: (user_type . (type_identifier) @extends . (type_arguments) .))
(inheritance_specifier inherits_from: (user_type (type_identifier) @ref.qualifier . (type_identifier) @extends .))
(inheritance_specifier
  inherits_from: (user_type (type_identifier) @ref.qualifier . (type_identifier) @extends . (type_arguments) .))

; Typed names: parameters, properties and locals, by written type or value.
; An existential or opaque type (`any URLRequestConvertible`, `some P`)
; too: the protocol's members.
(parameter (simple_identifier) @var.name .
  [(user_type) (array_type) (optional_type) (dictionary_type) (tuple_type) (existential_type) (opaque_type)] @var.written)
(property_declaration name: (pattern bound_identifier: (simple_identifier) @var.name)
  (type_annotation (_) @var.written))
(protocol_property_declaration name: (pattern bound_identifier: (simple_identifier) @var.name)
  (type_annotation (_) @var.written))
(property_declaration name: (pattern bound_identifier: (simple_identifier) @var.name) !value)
(property_declaration name: (pattern bound_identifier: (simple_identifier) @var.name) value: (_) @var.value)
(for_statement item: (pattern bound_identifier: (simple_identifier) @var.name) collection: (_) @var.of)
; A closure's parameters (`{ error in … }`, `{ (a, b: T) in … }`): of their
; written type, else of none known; either way they hide what is named so
; around the closure.
(lambda_parameter name: (simple_identifier) @var.name . name: (_) @var.written)
(lambda_parameter name: (simple_identifier) @var.name @var.unknown)
; A name bound in a pattern (`if case let .failure(error) = r`, `case let
; .success(v):`): of no type known, hiding what is named so around it.
(pattern !bound_identifier . (simple_identifier) @var.name @var.unknown .)
; `case let x as T:` in a `switch`: `x` is a `T`, seen only in its case.
(switch_pattern (pattern (value_binding_pattern) . (pattern bound_identifier: (simple_identifier) @var.name)
  . (user_type) @var.written))
(switch_entry) @var.block
; `catch { … }` binds `error`, seen only in its block.
(catch_block !error (catch_keyword) @catch.error) @var.block
(catch_block) @var.block
; `guard let x = value`, `if let x = value as? T`: typed by the value.
[(guard_statement (value_binding_pattern)) (if_statement (value_binding_pattern))] @let.bindings

; References. `Item(name: …)` is a construction (a call of a type's name).
(call_expression (simple_identifier) @call (call_suffix (value_arguments) @call.args))
(call_expression (navigation_expression target: (_) @call.receiver suffix: (navigation_suffix suffix: (simple_identifier) @call))
  (call_suffix (value_arguments) @call.args))
; An implicit member (`.value(arg, index: i)`, `.init(rawValue: r)`): a
; member of the type the context expects (lib.rs: its receiver is `.`).
(call_expression (prefix_expression "." target: (simple_identifier) @call @call.implicit)
  (call_suffix (value_arguments) @call.args))
; A call with only a trailing closure (`items.map { … }`). A closure
; given to a sequence's method that calls it with each element
; (`items.forEach { $0.run() }`, `.first(where: { item in … })`) is read
; in code (extract/syntax.rs `each_closures`): its first parameter is an
; element of the receiver.
(call_expression (simple_identifier) @call (call_suffix . (lambda_literal)))
(call_expression (navigation_expression target: (_) @call.receiver suffix: (navigation_suffix suffix: (simple_identifier) @call))
  (call_suffix . (lambda_literal)))
; A type named through another (`Origins.Element`): each name after the
; first in the one before it.
(user_type . (type_identifier) @ref.type)
(user_type (type_identifier) @ref.qualifier . (type_identifier) @ref.type)

; Function literals: a name declared in one is seen only inside it.
(lambda_literal) @literal
