; php for signpost's built-in indexer. Capture names: docs/tree-sitter.md.
; A namespace (`namespace Acme\Shop;`) is the package, its parts dotted;
; `use Acme\Shop\Item;` imports a name of it. Variables keep their `$`
; (`$cart`), as receivers write them; fields are named without it, as
; `$this->items` reads them.

(namespace_definition name: (namespace_name) @package)
(namespace_use_clause [(qualified_name) (name)] @import . (name)? @import.alias)

; Definitions.
(class_declaration name: (name) @name) @def.class
(interface_declaration name: (name) @name) @def.interface
(trait_declaration name: (name) @name) @def.trait
(enum_declaration name: (name) @name) @def.enum
(enum_case name: (name) @name) @def.constant
(method_declaration name: (name) @name parameters: (formal_parameters) @params return_type: (_)? @returns) @def.method
((method_declaration name: (name) @name parameters: (formal_parameters) @params) @def.constructor
 (#eq? @name "__construct"))
(function_definition name: (name) @name parameters: (formal_parameters) @params return_type: (_)? @returns) @def.function
(property_declaration (property_element name: (variable_name (name) @name))) @def.field
(property_promotion_parameter name: (variable_name (name) @name)) @def.property
(const_element (name) @name) @def.constant

; Headers: `extends`, `implements`.
(base_clause [(name) @extends (qualified_name (name) @extends .)])
(class_interface_clause [(name) @extends (qualified_name (name) @extends .)])
; A trait used in a class (`use Loggable;`): its members are the class's.
(use_declaration [(name) @extends (qualified_name (name) @extends .)])

; Typed names: fields, promoted and plain parameters; values of variables.
; A docblock's type (`/** @var Handler[] */`, `@param list<Item> $items`)
; counts where none or only `array` is written (read in Rust).
(property_declaration type: (_)? @var.written (property_element name: (variable_name (name) @var.name)))
; A promoted constructor parameter is a property of the class: its scope
; is the class, not the constructor.
(property_promotion_parameter type: (_) @var.written name: (variable_name (name) @var.name)) @var.member
(simple_parameter type: (_)? @var.written name: (variable_name) @var.name)
(assignment_expression left: (variable_name) @var.name right: (_) @var.value)
; `foreach ($items as $item)`, `foreach ($items as $key => $item)`: an
; element of what the collection gives.
(foreach_statement . (_) @var.of . (variable_name) @var.name)
(foreach_statement . (_) @var.of . (pair (_) (variable_name) @var.name))

; References.
(function_call_expression function: (name) @call arguments: (arguments) @call.args)
(member_call_expression object: (_) @call.receiver name: (name) @call arguments: (arguments) @call.args)
(nullsafe_member_call_expression object: (_) @call.receiver name: (name) @call arguments: (arguments) @call.args)
(scoped_call_expression scope: (_) @call.scope name: (name) @call arguments: (arguments) @call.args)
(object_creation_expression [(name) @new (qualified_name (name) @new .)] (arguments)? @call.args)
(named_type [(name) @ref.type (qualified_name (name) @ref.type .)])

; Function literals: a name declared in one is seen only inside it.
[(anonymous_function) (arrow_function)] @literal
