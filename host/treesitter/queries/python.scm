; Python for signpost's built-in indexer. Capture names: docs/tree-sitter.md.
; The package is the module, from the file's path (Packages::ModuleFile).

(import_statement name: (dotted_name) @import)
(import_statement name: (aliased_import name: (dotted_name) @import alias: (identifier) @import.alias))
(import_from_statement module_name: (dotted_name) @import.from name: (dotted_name) @import)
(import_from_statement module_name: (dotted_name) @import.from
  name: (aliased_import name: (dotted_name) @import alias: (identifier) @import.alias))
; A relative import (`from .utils import echo as echo`, `from .. import x`):
; made absolute from the file's module (lib.rs, `python_relative`).
(import_from_statement module_name: (relative_import) @import.from name: (dotted_name) @import)
(import_from_statement module_name: (relative_import) @import.from
  name: (aliased_import name: (dotted_name) @import alias: (identifier) @import.alias))
; `from .core import *`: every public name of the module.
(import_from_statement module_name: (_) @import.from (wildcard_import) @import)

; Definitions. A function in a class is a method (the emitter tells them apart).
(class_definition name: (identifier) @name) @def.class
(function_definition name: (identifier) @name parameters: (parameters) @params return_type: (type)? @returns) @def.function
(module (expression_statement (assignment left: (identifier) @name) @def.variable))
; A module's names bound under `try:` or `if …:` (`has_crypto = True`), the
; first binding only; a class's attributes (`SHA256 = hashlib.sha256`).
(module (try_statement body: (block (expression_statement (assignment left: (identifier) @name) @def.variable))))
(module (if_statement consequence: (block (expression_statement (assignment left: (identifier) @name) @def.variable))))
(class_definition body: (block (expression_statement (assignment left: (identifier) @name) @def.field)))
; Instance attributes: `self.x = …` in a method is a field of its class.
((assignment left: (attribute object: (identifier) @_self attribute: (identifier) @name)) @def.field
 (#eq? @_self "self"))

; Headers: base classes.
(class_definition superclasses: (argument_list [(identifier) @extends (attribute attribute: (identifier) @extends)]))

; Typed names: annotated parameters and variables.
(typed_parameter . (identifier) @var.name type: (type [(identifier) @var.type (generic_type (identifier) @var.type)]))
(typed_default_parameter name: (identifier) @var.name type: (type [(identifier) @var.type (generic_type (identifier) @var.type)]))
(assignment left: (identifier) @var.name type: (type [(identifier) @var.type (generic_type (identifier) @var.type)]))
(assignment left: (identifier) @var.name !type right: (_) @var.value)

; Collections: `shapes: List[Shape]`, `list[Shape]`, `Sequence[Shape]`; `for s in shapes`.
(typed_parameter . (identifier) @var.name
  type: (type (generic_type (type_parameter . (type (identifier) @var.elem)))))
(for_statement left: (identifier) @var.name right: (identifier) @var.like)
(for_in_clause left: (identifier) @var.name right: (identifier) @var.like)
(for_statement left: (identifier) @var.name right: (_) @var.of)
(for_in_clause left: (identifier) @var.name right: (_) @var.of)

; References.
(call function: (identifier) @call arguments: (argument_list) @call.args)
; Code run without a call written: a decorator, a property read (or a
; method passed as a value).
(decorator (identifier) @read)
; `@cli.command()`: the decorated function is attached to `cli`.
(decorator (call function: (attribute object: (identifier) @read)))
(decorator (attribute object: (identifier) @read))
(attribute object: (_) @call.receiver attribute: (identifier) @read)
; A function passed, returned or stored as a value (`key=sort_key`,
; `return decorator`, `handlers = {"a": on_a}`): read, so that it has its
; users; a name read resolves only to a definition, never to a local.
(argument_list (identifier) @read)
(keyword_argument value: (identifier) @read)
(return_statement (identifier) @read)
(assignment right: (identifier) @read)
(pair value: (identifier) @read)
(call function: (attribute object: (_) @call.receiver attribute: (identifier) @call) arguments: (argument_list) @call.args)
(type (identifier) @ref.type)
(type (generic_type (identifier) @ref.type))

; Function literals: a name declared in one is seen only inside it.
(lambda) @literal
