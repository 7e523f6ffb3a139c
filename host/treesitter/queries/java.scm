; Java for signpost's built-in indexer. Capture names: docs/tree-sitter.md.

(package_declaration [(identifier) (scoped_identifier)] @package)
(import_declaration [(identifier) (scoped_identifier)] @import)

; Definitions.
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name parameters: (formal_parameters) @params) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(annotation_type_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(enum_constant name: (identifier) @name) @def.constant
(method_declaration type: (_) @returns name: (identifier) @name parameters: (formal_parameters) @params) @def.method
(annotation_type_element_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name parameters: (formal_parameters) @params) @def.constructor
(compact_constructor_declaration name: (identifier) @name) @def.constructor
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @def.field
(constant_declaration declarator: (variable_declarator name: (identifier) @name)) @def.constant

; Headers: superclass and interfaces.
(superclass [(type_identifier) @extends (generic_type (type_identifier) @extends)
             (scoped_type_identifier (type_identifier) @extends .)])
(super_interfaces (type_list [(type_identifier) @extends (generic_type (type_identifier) @extends)
                              (scoped_type_identifier (type_identifier) @extends .)]))
(extends_interfaces (type_list [(type_identifier) @extends (generic_type (type_identifier) @extends)
                                (scoped_type_identifier (type_identifier) @extends .)]))

; Typed names: fields, parameters, locals (what a call's receiver is).
(field_declaration type: [(type_identifier) @var.type (generic_type (type_identifier) @var.type)]
  declarator: (variable_declarator name: (identifier) @var.name))
(formal_parameter type: [(type_identifier) @var.type (generic_type (type_identifier) @var.type)]
  name: (identifier) @var.name)
((local_variable_declaration type: [(type_identifier) @var.type (generic_type (type_identifier) @var.type)]
  declarator: (variable_declarator name: (identifier) @var.name))
 (#not-eq? @var.type "var"))
; `var s = Store.open();`: typed by its value.
((local_variable_declaration type: (type_identifier) @_var
  declarator: (variable_declarator name: (identifier) @var.name value: (_) @var.value))
 (#eq? @_var "var"))
; Primitives and arrays (`int n`, `boolean[] array`, `String... parts`):
; what an overload's argument is.
(field_declaration type: [(integral_type) (floating_point_type) (boolean_type) (array_type)] @var.type
  declarator: (variable_declarator name: (identifier) @var.name))
(formal_parameter type: [(integral_type) (floating_point_type) (boolean_type) (array_type)] @var.type
  name: (identifier) @var.name)
(local_variable_declaration type: [(integral_type) (floating_point_type) (boolean_type) (array_type)] @var.type
  declarator: (variable_declarator name: (identifier) @var.name))
; Whole written types, for what a collection holds (`List<Item> items`).
(field_declaration type: (generic_type) @var.written declarator: (variable_declarator name: (identifier) @var.name))
(formal_parameter type: (generic_type) @var.written name: (identifier) @var.name)
(enhanced_for_statement type: [(type_identifier) @var.type (generic_type (type_identifier) @var.type)]
  name: (identifier) @var.name)
(record_declaration parameters: (formal_parameters (formal_parameter
  type: [(type_identifier) @var.type (generic_type (type_identifier) @var.type)]
  name: (identifier) @var.name)))

; References.
(method_invocation object: (_)? @call.receiver name: (identifier) @call arguments: (argument_list) @call.args)
; `this(…)` and `super(…)` in a constructor: another constructor.
(explicit_constructor_invocation constructor: [(this) (super)] @new arguments: (argument_list) @call.args)
; An anonymous class's body: the members of the type it extends are in scope.
(object_creation_expression type: [(type_identifier) @anonymous.type (generic_type (type_identifier) @anonymous.type)]
  (class_body) @anonymous)
(object_creation_expression type: [(type_identifier) @new (generic_type (type_identifier) @new)]
  arguments: (argument_list) @call.args)
(type_identifier) @ref.type
(method_reference . (identifier) @call.receiver (identifier) @call .)

; Function literals: a name declared in one is seen only inside it.
(lambda_expression) @literal
