; C# for signpost's built-in indexer. Capture names: docs/tree-sitter.md.

(namespace_declaration name: (_) @package)
(file_scoped_namespace_declaration name: (_) @package)
; `using Ns;` brings every name of the namespace, `using static T;` every
; static member of T: both read as `Ns.*`. `using A = X.Y;` is an alias.
(using_directive !name [(identifier) (qualified_name)] @import @import.namespace)
(using_directive name: (identifier) @import.alias . [(identifier) (qualified_name)] @import)

; Definitions.
(class_declaration name: (identifier) @name (type_parameter_list)? @generics) @def.class
(record_declaration name: (identifier) @name (type_parameter_list)? @generics) @def.class
(struct_declaration name: (identifier) @name (type_parameter_list)? @generics) @def.struct
(interface_declaration name: (identifier) @name type_parameters: (type_parameter_list)? @generics) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(enum_member_declaration name: (identifier) @name) @def.constant
(delegate_declaration name: (identifier) @name type_parameters: (type_parameter_list)? @generics) @def.type
(method_declaration name: (identifier) @name parameters: (parameter_list) @params) @def.method
; What a method returns: a chain or a `var` read through it.
(method_declaration returns: (_) @returns name: (identifier) @name parameters: (parameter_list) @params) @def.method
; An extension method (`static string Decode(this Reader r)`): the type it extends.
((method_declaration name: (identifier) @name
   parameters: (parameter_list . (parameter (modifier) @extension.this
     type: [(identifier) @extension (generic_name (identifier) @extension) (nullable_type type: (identifier) @extension)
            (predefined_type) @extension (qualified_name name: (identifier) @extension)])) @params) @def.method
 (#eq? @extension.this "this"))
(constructor_declaration name: (identifier) @name parameters: (parameter_list) @params) @def.constructor
(property_declaration name: (identifier) @name) @def.property
; An indexer (`this[TKey key]`), named as it is written: a member taking
; its index, overloaded by it as methods are.
(indexer_declaration "this" @name parameters: (bracketed_parameter_list) @params) @def.method
(field_declaration (variable_declaration (variable_declarator name: (identifier) @name))) @def.field

; Headers: base classes and interfaces.
(base_list [(identifier) @extends (generic_name (identifier) @extends (type_argument_list) @ref.generics) (qualified_name name: (identifier) @extends)])

; Typed names: fields, properties, parameters, locals.
(variable_declaration type: [(identifier) @var.type (generic_name (identifier) @var.type (type_argument_list) @ref.generics)]
  (variable_declarator name: (identifier) @var.name))
(variable_declarator name: (identifier) @var.name (object_creation_expression type: [(identifier) @var.type (generic_name (identifier) @var.type (type_argument_list) @ref.generics)]))
; `var f = Configurator.GetFormatter(p)`: typed by its value.
(variable_declaration type: (implicit_type) (variable_declarator name: (identifier) @var.name (invocation_expression) @var.value))
; `var caseName = Enum.GetName(v)!`, `var first = words[0]`, `var n = o.Name`.
(variable_declaration type: (implicit_type) (variable_declarator name: (identifier) @var.name
  [(postfix_unary_expression) (member_access_expression) (element_access_expression) (await_expression)] @var.value))
; A lambda given to a LINQ or a collection's method that calls it with each
; element (`words.Select(word => word.Humanize())`): an element of the
; receiver.
(invocation_expression
  function: (member_access_expression expression: (_) @var.of name: (identifier) @_each)
  arguments: (argument_list . (argument (lambda_expression parameters: (implicit_parameter) @var.name)))
  (#any-of? @_each "Select" "Where" "Any" "All" "First" "FirstOrDefault" "Last" "LastOrDefault" "Single"
    "SingleOrDefault" "Count" "OrderBy" "OrderByDescending" "ThenBy" "ThenByDescending" "SelectMany" "ForEach"
    "TakeWhile" "SkipWhile" "Sum" "Max" "Min" "GroupBy" "Exists" "Find" "FindAll" "FindIndex" "RemoveAll"
    "TrueForAll" "DistinctBy" "MaxBy" "MinBy"))
(parameter type: [(identifier) @var.type (generic_name (identifier) @var.type (type_argument_list) @ref.generics)] name: (identifier) @var.name)
; A parameter, field or local of a built-in type (`string s`, `this string
; input`): its extension methods are called on it. An array (`T[] array`):
; it is passed to the overload of arrays.
(parameter type: [(predefined_type) (array_type)] @var.type name: (identifier) @var.name)
(variable_declaration type: [(predefined_type) (array_type)] @var.type (variable_declarator name: (identifier) @var.name))
(property_declaration type: (predefined_type) @var.type name: (identifier) @var.name)
(property_declaration type: [(identifier) @var.type (generic_name (identifier) @var.type (type_argument_list) @ref.generics)] name: (identifier) @var.name)
; The same, nullable (`IStore? store`).
(variable_declaration type: (nullable_type type: [(identifier) @var.type (generic_name (identifier) @var.type (type_argument_list) @ref.generics)])
  (variable_declarator name: (identifier) @var.name))
(parameter type: (nullable_type type: [(identifier) @var.type (generic_name (identifier) @var.type (type_argument_list) @ref.generics)]) name: (identifier) @var.name)
(parameter type: (nullable_type type: (predefined_type) @var.type) name: (identifier) @var.name)
(property_declaration type: (nullable_type type: [(identifier) @var.type (generic_name (identifier) @var.type (type_argument_list) @ref.generics)]) name: (identifier) @var.name)

; References.
(invocation_expression function: [(identifier) @call (generic_name (identifier) @call (type_argument_list) @ref.generics)] arguments: (argument_list) @call.args)
(invocation_expression
  function: (member_access_expression expression: _ @call.receiver name: [(identifier) @call (generic_name (identifier) @call (type_argument_list) @ref.generics)])
  arguments: (argument_list) @call.args)
(object_creation_expression type: [(identifier) @new (generic_name (identifier) @new (type_argument_list) @ref.generics)] arguments: (argument_list) @call.args)
(parameter type: [(identifier) @ref.type (generic_name (identifier) @ref.type (type_argument_list) @ref.generics)])
(variable_declaration type: [(identifier) @ref.type (generic_name (identifier) @ref.type (type_argument_list) @ref.generics)])
(method_declaration returns: [(identifier) @ref.type (generic_name (identifier) @ref.type (type_argument_list) @ref.generics)])
(property_declaration type: [(identifier) @ref.type (generic_name (identifier) @ref.type (type_argument_list) @ref.generics)])
(base_list [(identifier) @ref.type (generic_name (identifier) @ref.type (type_argument_list) @ref.generics)])
(type_argument_list (identifier) @ref.type)
(nullable_type type: [(identifier) @ref.type (generic_name (identifier) @ref.type (type_argument_list) @ref.generics)])

; Function literals: a name declared in one is seen only inside it.
; A local function too (its parameters are not those of the method around it).
[(anonymous_method_expression) (lambda_expression) (local_function_statement)] @literal
