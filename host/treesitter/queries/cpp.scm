; C and C++ for signpost's built-in indexer, both read with the C++ grammar
; (C's syntax is nearly a subset of it). Capture names: docs/tree-sitter.md.

; Namespaces: a namespace block is a module that declares what it holds.
(namespace_definition name: (_) @name body: (declaration_list)) @def.module
; `using namespace metric;`: the namespace's names, as an import of all of them.
(using_declaration "namespace" @import.namespace [(identifier) (qualified_identifier)] @import)

; Types.
(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.class
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @def.enum
(enumerator name: (identifier) @name) @def.constant
(type_definition declarator: (type_identifier) @name) @def.type
(alias_declaration name: (type_identifier) @name) @def.type

; Functions with a body; a prototype is not a definition. One in a class
; body is its method (or constructor, when named like the class).
(function_definition
  declarator: (function_declarator declarator: [(identifier) (field_identifier)] @name parameters: (parameter_list) @params)) @def.function
(function_definition
  declarator: (_ declarator: (function_declarator declarator: [(identifier) (field_identifier)] @name parameters: (parameter_list) @params))) @def.function
(function_definition
  declarator: (reference_declarator (function_declarator declarator: [(identifier) (field_identifier)] @name parameters: (parameter_list) @params))) @def.function
; `char **names(…)`: a pointer to a pointer.
(function_definition
  declarator: (_ declarator: (_ declarator: (function_declarator declarator: [(identifier) (field_identifier)] @name parameters: (parameter_list) @params)))) @def.function
; A block after a macro call in a function (`jv_array_foreach(a, i, x) { … }`,
; `list_for_each(pos, head) { … }`) parses as a function definition without
; a type whose parameters are bare names, but no C or C++ function is
; defined in a block: it is a call of the macro, and what the block calls,
; the enclosing function calls. (A constructor a misread macro left in a
; block has typed parameters, or none.)
(compound_statement (function_definition !type
  declarator: (function_declarator declarator: (identifier) @call
    parameters: (parameter_list . (parameter_declaration !declarator)) @call.args)) @macro.block)
; Destructors and operators, in a class body.
(function_definition
  declarator: (function_declarator declarator: [(destructor_name) (operator_name)] @name parameters: (parameter_list) @params)) @def.method
((class_specifier name: (type_identifier) @class body: (field_declaration_list
   (function_definition declarator: (function_declarator declarator: (identifier) @name parameters: (parameter_list) @params)) @def.constructor))
 (#eq? @class @name))
((struct_specifier name: (type_identifier) @class body: (field_declaration_list
   (function_definition declarator: (function_declarator declarator: (identifier) @name parameters: (parameter_list) @params)) @def.constructor))
 (#eq? @class @name))

; Members declared in a class body and defined apart.
(field_declaration_list
  (field_declaration declarator: (function_declarator declarator: (field_identifier) @name parameters: (parameter_list) @params)) @def.method)
(field_declaration_list
  (field_declaration declarator: (_ declarator: (function_declarator declarator: (field_identifier) @name parameters: (parameter_list) @params))) @def.method)
((class_specifier name: (type_identifier) @class body: (field_declaration_list
   (declaration declarator: (function_declarator declarator: (identifier) @name parameters: (parameter_list) @params)) @def.constructor))
 (#eq? @class @name))
((struct_specifier name: (type_identifier) @class body: (field_declaration_list
   (declaration declarator: (function_declarator declarator: (identifier) @name parameters: (parameter_list) @params)) @def.constructor))
 (#eq? @class @name))

; Out-of-class definitions, `double Circle::area() const { … }`: the type
; they belong to is the qualifier (@owner), a template's too (`Box<T>::get`).
(function_definition
  declarator: [(function_declarator declarator: (qualified_identifier
                 scope: [(namespace_identifier) @owner (template_type name: (type_identifier) @owner)]
                 name: [(identifier) (destructor_name) (operator_name)] @name) parameters: (parameter_list) @params)
               (_ declarator: (function_declarator declarator: (qualified_identifier
                 scope: [(namespace_identifier) @owner (template_type name: (type_identifier) @owner)]
                 name: [(identifier) (destructor_name) (operator_name)] @name) parameters: (parameter_list) @params))
               (reference_declarator (function_declarator declarator: (qualified_identifier
                 scope: [(namespace_identifier) @owner (template_type name: (type_identifier) @owner)]
                 name: [(identifier) (destructor_name) (operator_name)] @name) parameters: (parameter_list) @params))]) @def.method
(function_definition
  declarator: [(function_declarator declarator: (qualified_identifier name: (qualified_identifier
                 scope: [(namespace_identifier) @owner (template_type name: (type_identifier) @owner)]
                 name: [(identifier) (destructor_name) (operator_name)] @name)) parameters: (parameter_list) @params)
               (_ declarator: (function_declarator declarator: (qualified_identifier name: (qualified_identifier
                 scope: [(namespace_identifier) @owner (template_type name: (type_identifier) @owner)]
                 name: [(identifier) (destructor_name) (operator_name)] @name)) parameters: (parameter_list) @params))
               (reference_declarator (function_declarator declarator: (qualified_identifier name: (qualified_identifier
                 scope: [(namespace_identifier) @owner (template_type name: (type_identifier) @owner)]
                 name: [(identifier) (destructor_name) (operator_name)] @name)) parameters: (parameter_list) @params))]) @def.method
((function_definition
  declarator: (function_declarator
    declarator: [(qualified_identifier scope: (namespace_identifier) @owner name: (identifier) @name)
                 (qualified_identifier name: (qualified_identifier scope: (namespace_identifier) @owner name: (identifier) @name))]
    parameters: (parameter_list) @params)) @def.constructor
 (#eq? @owner @name))

; Fields, globals, macros.
(field_declaration declarator: [(field_identifier) @name
  (pointer_declarator declarator: (field_identifier) @name)
  (array_declarator declarator: (field_identifier) @name)]) @def.field
(translation_unit (declaration declarator: [(identifier) @name (init_declarator declarator: (identifier) @name)]) @def.variable)
(declaration_list (declaration declarator: [(identifier) @name (init_declarator declarator: (identifier) @name)]) @def.variable)
(preproc_def name: (identifier) @name value: (_)) @def.constant
(preproc_function_def name: (identifier) @name parameters: (preproc_params) @params) @def.function

; Headers: base classes.
(base_class_clause [(type_identifier) @extends
  (qualified_identifier scope: (namespace_identifier) @ref.qualifier name: (type_identifier) @extends)
  (template_type name: (type_identifier) @extends)])

; Typed names: parameters, fields, locals (`Shape &s`, `struct point *p`,
; `shapes::Square *sq = …`).
([(parameter_declaration
    type: [(type_identifier) @var.type (qualified_identifier scope: (namespace_identifier) @var.qualifier name: (type_identifier) @var.type)
           (struct_specifier name: (type_identifier) @var.type) (template_type name: (type_identifier) @var.type)
           (qualified_identifier scope: (namespace_identifier) @var.qualifier name: (template_type name: (type_identifier) @var.type))]
    declarator: [(identifier) @var.name (pointer_declarator declarator: (identifier) @var.name)
                 (reference_declarator (identifier) @var.name)])
  (optional_parameter_declaration
    type: [(type_identifier) @var.type (qualified_identifier scope: (namespace_identifier) @var.qualifier name: (type_identifier) @var.type)
           (struct_specifier name: (type_identifier) @var.type) (template_type name: (type_identifier) @var.type)
           (qualified_identifier scope: (namespace_identifier) @var.qualifier name: (template_type name: (type_identifier) @var.type))]
    declarator: [(identifier) @var.name (pointer_declarator declarator: (identifier) @var.name)
                 (reference_declarator (identifier) @var.name)])])
(field_declaration
  type: [(type_identifier) @var.type (qualified_identifier scope: (namespace_identifier) @var.qualifier name: (type_identifier) @var.type)
         (struct_specifier name: (type_identifier) @var.type) (template_type name: (type_identifier) @var.type)
           (qualified_identifier scope: (namespace_identifier) @var.qualifier name: (template_type name: (type_identifier) @var.type))]
  declarator: [(field_identifier) @var.name (pointer_declarator declarator: (field_identifier) @var.name)
               (reference_declarator (field_identifier) @var.name)])
(declaration
  type: [(type_identifier) @var.type (qualified_identifier scope: (namespace_identifier) @var.qualifier name: (type_identifier) @var.type)
         (struct_specifier name: (type_identifier) @var.type) (template_type name: (type_identifier) @var.type)
           (qualified_identifier scope: (namespace_identifier) @var.qualifier name: (template_type name: (type_identifier) @var.type))]
  declarator: [(identifier) @var.name (pointer_declarator declarator: (identifier) @var.name)
               (reference_declarator (identifier) @var.name)
               (init_declarator declarator: [(identifier) @var.name (pointer_declarator declarator: (identifier) @var.name)
                                             (reference_declarator (identifier) @var.name)])])

; References. A call qualified by a scope (`shapes::total(…)`,
; `Shape::make()`) names its scope with @call.scope.
(call_expression function: (identifier) @call arguments: (argument_list) @call.args)
(call_expression function: (template_function name: (identifier) @call) arguments: (argument_list) @call.args)
(call_expression function: (field_expression argument: (_) @call.receiver field: (field_identifier) @call)
  arguments: (argument_list) @call.args)
(call_expression function: (qualified_identifier scope: (namespace_identifier) @call.scope name: (identifier) @call)
  arguments: (argument_list) @call.args)
; A nested scope (`lib::detail::clamp(…)`): the innermost one names it.
(call_expression function: (qualified_identifier name: (qualified_identifier
    scope: (namespace_identifier) @call.scope name: (identifier) @call))
  arguments: (argument_list) @call.args)
(call_expression function: (qualified_identifier name: (qualified_identifier name: (qualified_identifier
    scope: (namespace_identifier) @call.scope name: (identifier) @call)))
  arguments: (argument_list) @call.args)
(new_expression type: [(type_identifier) @new (qualified_identifier scope: (namespace_identifier) @ref.qualifier name: (type_identifier) @new)]
  arguments: (argument_list) @call.args)
(declaration type: [(type_identifier) @new (qualified_identifier scope: (namespace_identifier) @ref.qualifier name: (type_identifier) @new)]
  declarator: (init_declarator value: (argument_list) @call.args))
(type_identifier) @ref.type
(qualified_identifier scope: (namespace_identifier) @ref.qualifier name: (type_identifier) @ref.type)
(qualified_identifier scope: (namespace_identifier) @ref.qualifier name: (template_type name: (type_identifier) @ref.type))

; Function literals: a name declared in one is seen only inside it.
(lambda_expression) @literal
