; Go for signpost's built-in indexer. Capture names: docs/tree-sitter.md.

(package_clause (package_identifier) @package)
(import_spec name: (package_identifier)? @import.alias path: (_) @import)

; Definitions. A method belongs to its receiver's type (@owner).
(function_declaration name: (identifier) @name parameters: (parameter_list) @params result: (_)? @returns) @def.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: [
    (type_identifier) @owner
    (pointer_type (type_identifier) @owner)
    (generic_type type: (type_identifier) @owner)
    (pointer_type (generic_type type: (type_identifier) @owner))]))
  name: (field_identifier) @name
  parameters: (parameter_list) @params
  result: (_)? @returns) @def.method
(type_spec name: (type_identifier) @name type: (struct_type)) @def.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @def.interface
(type_spec name: (type_identifier) @name type: [(type_identifier) (qualified_type) (generic_type)
  (pointer_type) (slice_type) (map_type) (array_type) (channel_type) (function_type)]) @def.type
(type_alias name: (type_identifier) @name) @def.type
(method_elem name: (field_identifier) @name parameters: (parameter_list) @params result: (_)? @returns) @def.method
(field_declaration name: (field_identifier) @name) @def.field
(source_file (const_declaration (const_spec name: (identifier) @name) @def.constant))
(source_file (var_declaration (var_spec name: (identifier) @name) @def.variable))

; Headers: an embedded struct or interface.
(field_declaration !name type: [(type_identifier) @extends (pointer_type (type_identifier) @extends)
  (qualified_type package: (package_identifier) @ref.qualifier name: (type_identifier) @extends)])
(interface_type (type_elem [(type_identifier) @extends
  (qualified_type package: (package_identifier) @ref.qualifier name: (type_identifier) @extends)]))

; Typed names: fields, parameters, receivers, vars.
(field_declaration name: (field_identifier) @var.name type: [(type_identifier) @var.type
  (pointer_type (type_identifier) @var.type)
  (qualified_type package: (package_identifier) @var.qualifier name: (type_identifier) @var.type)
  (pointer_type (qualified_type package: (package_identifier) @var.qualifier name: (type_identifier) @var.type))])
(parameter_declaration name: (identifier) @var.name type: [(type_identifier) @var.type
  (pointer_type (type_identifier) @var.type)
  (qualified_type package: (package_identifier) @var.qualifier name: (type_identifier) @var.type)
  (pointer_type (qualified_type package: (package_identifier) @var.qualifier name: (type_identifier) @var.type))])
(var_spec name: (identifier) @var.name type: [(type_identifier) @var.type
  (pointer_type (type_identifier) @var.type)
  (qualified_type package: (package_identifier) @var.qualifier name: (type_identifier) @var.type)
  (pointer_type (qualified_type package: (package_identifier) @var.qualifier name: (type_identifier) @var.type))])
(short_var_declaration
  left: (expression_list . (identifier) @var.name)
  right: (expression_list . [(composite_literal type: (type_identifier) @var.type)
    (unary_expression operand: (composite_literal type: (type_identifier) @var.type))
    (composite_literal type: (qualified_type package: (package_identifier) @var.qualifier name: (type_identifier) @var.type))
    (unary_expression operand: (composite_literal type: (qualified_type package: (package_identifier) @var.qualifier name: (type_identifier) @var.type)))]))

; References.
(call_expression function: (identifier) @call arguments: (argument_list) @call.args)
(call_expression function: (selector_expression operand: (_) @call.receiver field: (field_identifier) @call)
  arguments: (argument_list) @call.args)
(type_identifier) @ref.type
(qualified_type package: (package_identifier) @ref.qualifier name: (type_identifier) @ref.type)
; Functions and method values passed as values (`r.Use(middleware.Logger)`,
; `http.HandlerFunc(mx.routeHTTP)`, `FuncMap{"rpad": rpad}`): read, so they
; count for their callers; a plain name only when it names a callable.
(argument_list (identifier) @read)
(argument_list (selector_expression operand: (_) @call.receiver field: (field_identifier) @read))
(keyed_element (literal_element (identifier) @read) .)
(keyed_element (literal_element (selector_expression operand: (_) @call.receiver field: (field_identifier) @read)) .)

; Values: `s := NewStore()`, `item, err := s.Find(id)` (the first result);
; elements: `for _, it := range s.All()`.
(short_var_declaration left: (expression_list . (identifier) @var.name) right: (expression_list . (_) @var.value))
(var_spec name: (identifier) @var.name !type value: (expression_list . (_) @var.value))
(for_statement (range_clause left: (expression_list (_) . (identifier) @var.name .) right: (_) @var.of))

; Function literals: a name declared in one is seen only inside it.
(func_literal) @literal
