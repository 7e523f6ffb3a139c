; TypeScript and JavaScript (the TSX grammar) for signpost's built-in indexer.
; Capture names: docs/tree-sitter.md. The package is the file's path under
; its package.json (Packages::FilePath), as scip-typescript spells it.

; Imports: each imported name, after the module it comes from
; (`import { Circle as C } from "./shapes"` → `./shapes.Circle`, alias C).
(import_statement
  (import_clause (named_imports (import_specifier name: (identifier) @import alias: (identifier)? @import.alias)))
  source: (string (string_fragment) @import.from))
; `import ky from "./core/Ky"`: the module's default export, named `ky` here.
(import_statement (import_clause . (identifier) @import.alias) source: (string (string_fragment) @import.default))
; `export default class Ky {}`, `export default function f() {}`, `export
; default ky;`: what the module's `default` is.
(export_statement "default" declaration: [(class_declaration name: (type_identifier) @export.default)
                                          (abstract_class_declaration name: (type_identifier) @export.default)
                                          (function_declaration name: (identifier) @export.default)
                                          (generator_function_declaration name: (identifier) @export.default)])
(export_statement "default" value: (identifier) @export.default)
; Re-exports (an index file's `export * from "./vanilla"`, `export { a, b
; as c } from "./y"`): the module's names, followed as imports are.
(export_statement "*" source: (string (string_fragment) @import)) @import.namespace
(export_statement (export_clause (export_specifier name: (identifier) @import alias: (identifier)? @import.alias))
  source: (string (string_fragment) @import.from))
; `import * as util from "./util"`: the module's names through `util.`.
(import_statement
  (import_clause (namespace_import (identifier) @import.alias) @import.namespace)
  source: (string (string_fragment) @import))

; Definitions.
(class_declaration name: (type_identifier) @name) @def.class
(abstract_class_declaration name: (type_identifier) @name) @def.class
(class name: (type_identifier) @name) @def.class
(interface_declaration name: (type_identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(enum_body (property_identifier) @name @def.constant)
(enum_body (enum_assignment name: (property_identifier) @name) @def.constant)
(type_alias_declaration name: (type_identifier) @name) @def.type
(function_declaration name: (identifier) @name parameters: (formal_parameters) @params
  return_type: (type_annotation)? @returns) @def.function
; An overload signature: one definition with the implementation after it.
(function_signature name: (identifier) @name parameters: (formal_parameters) @params
  return_type: (type_annotation)? @returns) @def.function
(generator_function_declaration name: (identifier) @name parameters: (formal_parameters) @params) @def.function
(method_definition name: [(property_identifier) (private_property_identifier)] @name
  parameters: (formal_parameters) @params return_type: (type_annotation)? @returns) @def.method
((method_definition name: (property_identifier) @name parameters: (formal_parameters) @params) @def.constructor
 (#eq? @name "constructor"))
(method_signature name: (property_identifier) @name parameters: (formal_parameters) @params
  return_type: (type_annotation)? @returns) @def.method
(abstract_method_signature name: (property_identifier) @name parameters: (formal_parameters) @params
  return_type: (type_annotation)? @returns) @def.method
(public_field_definition name: [(property_identifier) (private_property_identifier)] @name) @def.property
; An object literal's properties (`module.exports = { parse, valid }`):
; definitions of their file, as scip-typescript has them.
(object (pair key: (property_identifier) @name @meta) @def.property)
(object (shorthand_property_identifier) @name @meta @def.property)
(property_signature name: (property_identifier) @name) @def.property
; A constructor's parameter with a modifier declares a property of its class.
(required_parameter (accessibility_modifier) pattern: (identifier) @name) @def.property
(required_parameter "readonly" pattern: (identifier) @name) @def.property
; Top-level constants and variables; one holding a function is a function
; (spelled as a term, `main.`, as scip-typescript spells it).
(program (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable))
(program (variable_declaration (variable_declarator name: (identifier) @name) @def.variable))
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable)))
(program (lexical_declaration (variable_declarator name: (identifier) @name
  value: [(arrow_function parameters: (formal_parameters) @params)
          (arrow_function parameter: (identifier) @params)
          (function_expression parameters: (formal_parameters) @params)] @term) @def.function))
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name
  value: [(arrow_function parameters: (formal_parameters) @params)
          (arrow_function parameter: (identifier) @params)
          (function_expression parameters: (formal_parameters) @params)] @term) @def.function)))

; Headers: the class extended, the interfaces implemented or extended.
(class_heritage (extends_clause value: [(identifier) @extends
                                        (member_expression property: (property_identifier) @extends)]))
(class_heritage (implements_clause [(type_identifier) @extends (generic_type name: (type_identifier) @extends)]))
(extends_type_clause [(type_identifier) @extends (generic_type name: (type_identifier) @extends)])

; Typed names: parameters, variables, fields (what a call's receiver is).
(required_parameter pattern: (identifier) @var.name
  type: (type_annotation [(type_identifier) @var.type (generic_type name: (type_identifier) @var.type)]))
(required_parameter pattern: (identifier) @var.name type: (type_annotation) @var.written)
(optional_parameter pattern: (identifier) @var.name type: (type_annotation) @var.written)
(public_field_definition name: (property_identifier) @var.name type: (type_annotation) @var.written)
(optional_parameter pattern: (identifier) @var.name
  type: (type_annotation [(type_identifier) @var.type (generic_type name: (type_identifier) @var.type)]))
(variable_declarator name: (identifier) @var.name
  type: (type_annotation [(type_identifier) @var.type (generic_type name: (type_identifier) @var.type)]))
(variable_declarator name: (identifier) @var.name value: (new_expression constructor: (identifier) @var.type))
; Values, and elements of what an expression gives.
(variable_declarator name: (identifier) @var.name !type value: (_) @var.value)
(for_in_statement left: (identifier) @var.name right: (_) @var.of)
(call_expression function: (member_expression object: (_) @var.of)
  arguments: (arguments . (arrow_function parameters: (formal_parameters . (required_parameter pattern: (identifier) @var.name)))))
(call_expression function: (member_expression object: (_) @var.of)
  arguments: (arguments . (arrow_function parameter: (identifier) @var.name)))
; Collections: `shapes: Shape[]`, `readonly Shape[]`, `Array<Shape>`; their elements:
; `for (const s of shapes)`, `shapes.map((s) => …)` and the like.
(required_parameter pattern: (identifier) @var.name
  type: (type_annotation [(array_type (type_identifier) @var.elem)
                          (readonly_type (array_type (type_identifier) @var.elem))
                          (generic_type name: (type_identifier) @_array
                            type_arguments: (type_arguments . (type_identifier) @var.elem))]))
(for_in_statement left: (identifier) @var.name right: (identifier) @var.like)
(call_expression function: (member_expression object: (identifier) @var.like)
  arguments: (arguments . (arrow_function parameters: (formal_parameters . (required_parameter pattern: (identifier) @var.name)))))
(call_expression function: (member_expression object: (identifier) @var.like)
  arguments: (arguments . (arrow_function parameter: (identifier) @var.name)))
(public_field_definition name: (property_identifier) @var.name
  type: (type_annotation [(type_identifier) @var.type (generic_type name: (type_identifier) @var.type)]))

; A function passed, returned or stored as a value (`arr.map(toName)`,
; `return handler`, `{ onClick: handle }`): read, so that it has its users;
; a name read resolves only to a definition, never to a local.
(arguments (identifier) @read)
(return_statement (identifier) @read)
(variable_declarator value: (identifier) @read)
(pair value: (identifier) @read)
(shorthand_property_identifier) @read

; References.
(call_expression function: (identifier) @call arguments: (arguments) @call.args)
(call_expression function: (member_expression object: (_) @call.receiver
    property: [(property_identifier) (private_property_identifier)] @call)
  arguments: (arguments) @call.args)
; A method passed as a value (`list.map(this.toName)`, `this.#onDone`).
(arguments (member_expression object: (_) @call.receiver property: [(property_identifier) (private_property_identifier)] @read))
(new_expression constructor: (identifier) @new arguments: (arguments)? @call.args)
(type_identifier) @ref.type

; Function literals: a name declared in one is seen only inside it.
[(arrow_function) (function_expression)] @literal
