; Rust for signpost's built-in indexer. Capture names: docs/tree-sitter.md.
; The package is the module path from the file's path in its crate
; (Packages::CratePath); `use` paths are rewritten to it.

; Imports: `use a::b::C;`, `use a::{B, C};`, `use a::*;`.
(use_declaration argument: (scoped_identifier) @import)
(use_declaration argument: (use_as_clause path: (scoped_identifier) @import alias: (identifier) @import.alias))
(use_declaration argument: (scoped_use_list path: (_) @import.from
  list: (use_list [(identifier) @import (use_as_clause path: (identifier) @import alias: (identifier) @import.alias)])))
(use_declaration argument: (use_wildcard [(identifier) (scoped_identifier) (crate) (self) (super)] @import))

; Definitions.
(struct_item name: (type_identifier) @name) @def.struct
(union_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
; A variant is spelled as a type, as rust-analyzer does (`Unit#Metric#`).
(enum_variant name: (identifier) @name) @def.struct
(trait_item name: (type_identifier) @name) @def.trait
; An alias's `@returns` is the type it stands for.
(type_item name: (type_identifier) @name type: (_) @returns) @def.type
; `mod m { … }`; `mod m;` only names the file `m.rs`, which is the module.
(mod_item name: (identifier) @name body: (declaration_list)) @def.module
(const_item name: (identifier) @name) @def.constant
(static_item name: (identifier) @name) @def.variable
(macro_definition name: (identifier) @name) @def.macro
(field_declaration name: (field_identifier) @name) @def.field
(function_item name: (identifier) @name parameters: (parameters) @params return_type: (_)? @returns) @def.function
(function_signature_item name: (identifier) @name parameters: (parameters) @params return_type: (_)? @returns) @def.method
; A function of an impl block belongs to the impl's type, wherever that is
; declared in the module, and is spelled in the impl's descriptor.
(impl_item
  trait: [(type_identifier) (scoped_type_identifier) (generic_type)]? @impl.trait
  type: [(type_identifier) @owner
         (generic_type type: (type_identifier) @owner)
         (scoped_type_identifier name: (type_identifier) @owner)
         ; `impl IntoIterator for &'a Utf8Sequence`: the type's, spelled as written.
         (reference_type type: [(type_identifier) @owner (generic_type type: (type_identifier) @owner)])] @impl.type
  body: (declaration_list (function_item name: (identifier) @name parameters: (parameters) @params
                                         return_type: (_)? @returns) @def.method))
(impl_item
  trait: [(type_identifier) (scoped_type_identifier) (generic_type)]? @impl.trait
  type: [(type_identifier) @owner
         (generic_type type: (type_identifier) @owner)
         (scoped_type_identifier name: (type_identifier) @owner)
         ; `impl IntoIterator for &'a Utf8Sequence`: the type's, spelled as written.
         (reference_type type: [(type_identifier) @owner (generic_type type: (type_identifier) @owner)])] @impl.type
  body: (declaration_list [(type_item name: (type_identifier) @name) @def.type
                           (const_item name: (identifier) @name) @def.constant]))

; Typed names: parameters, lets, fields (what a call's receiver is).
(parameter pattern: (identifier) @var.name
  type: [(type_identifier) @var.type
         (generic_type type: (type_identifier) @var.type)
         (reference_type type: [(type_identifier) @var.type (generic_type type: (type_identifier) @var.type)])])
(let_declaration pattern: (identifier) @var.name
  type: [(type_identifier) @var.type
         (generic_type type: (type_identifier) @var.type)
         (reference_type type: [(type_identifier) @var.type (generic_type type: (type_identifier) @var.type)])])
(let_declaration pattern: (identifier) @var.name value: (struct_expression name: (type_identifier) @var.type))
; The whole type, for what a wrapper holds (`Arc<Mutex<State>>`).
(parameter pattern: (identifier) @var.name type: (_) @var.written)
(let_declaration pattern: (identifier) @var.name type: (_) @var.written)
(field_declaration name: (field_identifier) @var.name type: (_) @var.written)
; Values: `let o = Order::new(…)`; `if let Some(x) = self.find(…)`.
; `let a = match x { … }`: what its first arm gives.
(let_declaration pattern: (identifier) @var.name !type
  value: (match_expression body: (match_block . (match_arm value: (_) @var.value))))
(let_declaration pattern: (identifier) @var.name !type value: (_) @var.value (#not-match? @var.value "^match\\s"))
(let_condition pattern: (tuple_struct_pattern type: (identifier) @var.unwrap . (identifier) @var.name) value: (_) @var.value
  (#any-of? @var.unwrap "Some" "Ok"))
(let_condition pattern: (tuple_struct_pattern type: (identifier) @var.unwrap . (mut_pattern (identifier) @var.name))
  value: (_) @var.value (#any-of? @var.unwrap "Some" "Ok"))
; `match x { Some(v) => … }`: v is what x holds.
(match_expression value: (_) @var.value
  body: (match_block (match_arm pattern: (match_pattern (tuple_struct_pattern type: (identifier) @var.unwrap
    . (identifier) @var.name)) (#any-of? @var.unwrap "Some" "Ok"))))
; A tuple variant's fields, by position (`Class(ClassUnicode)`: `.0`), and
; the values a pattern binds from them (`HirKind::Class(ref cls)`: what
; `HirKind::Class.0` is).
(enum_variant body: (ordered_field_declaration_list) @tuple.fields)
(tuple_struct_pattern type: (scoped_identifier)) @tuple.pattern
; Collections: `shapes: &[Box<dyn Shape>]`, `Vec<Shape>`; `for s in shapes`.
(parameter pattern: (identifier) @var.name
  type: (reference_type type: (array_type element: [(type_identifier) @var.elem
    (generic_type type_arguments: (type_arguments [(type_identifier) @var.elem
                                                   (dynamic_type trait: (type_identifier) @var.elem)]))])))
(parameter pattern: (identifier) @var.name
  type: (_ type: (generic_type type_arguments: (type_arguments [(type_identifier) @var.elem
    (generic_type type_arguments: (type_arguments (dynamic_type trait: (type_identifier) @var.elem)))]))))
(parameter pattern: (identifier) @var.name
  type: (generic_type type_arguments: (type_arguments [(type_identifier) @var.elem
    (generic_type type_arguments: (type_arguments (dynamic_type trait: (type_identifier) @var.elem)))])))
(let_declaration pattern: (identifier) @var.name
  type: (generic_type type_arguments: (type_arguments [(type_identifier) @var.elem
    (generic_type type_arguments: (type_arguments (dynamic_type trait: (type_identifier) @var.elem)))])))
(for_expression pattern: (identifier) @var.name
  value: [(identifier) @var.like (reference_expression value: (identifier) @var.like)])
; Elements of what an expression gives: `for a in cmd.get_arguments()`,
; `.map(|a| a.get_id())` on an iterator.
(for_expression pattern: (identifier) @var.name value: (_) @var.of)
(call_expression function: (field_expression value: (_) @var.of)
  arguments: (arguments . (closure_expression parameters: (closure_parameters .
    [(identifier) @var.name (reference_pattern (identifier) @var.name)]))))
(field_declaration name: (field_identifier) @var.name
  type: [(type_identifier) @var.type (generic_type type: (type_identifier) @var.type)])

; References.
(call_expression function: (identifier) @call arguments: (arguments) @call.args)
(call_expression function: (field_expression value: (_) @call.receiver field: (field_identifier) @call)
  arguments: (arguments) @call.args)
(call_expression function: (scoped_identifier path: (_) @call.scope name: (identifier) @call)
  arguments: (arguments) @call.args)
(call_expression function: (generic_function function: (identifier) @call) arguments: (arguments) @call.args)
(call_expression function: (generic_function function: (scoped_identifier path: (_) @call.scope name: (identifier) @call))
  arguments: (arguments) @call.args)
(call_expression function: (generic_function function: (field_expression value: (_) @call.receiver
  field: (field_identifier) @call)) arguments: (arguments) @call.args)
(macro_invocation macro: (identifier) @call)
; Calls inside a macro's arguments (`vec![Circle::new(1.0)]`,
; `println!("{}", unit.suffix())`): tree-sitter keeps them as tokens.
(token_tree (identifier) @call . (token_tree) @call.args)
(token_tree [(identifier) (self)] @call.receiver . "." . (identifier) @call . (token_tree) @call.args)
; `ok!(Usage::new(cmd).render())`: a receiver the tokens do not give whole.
(token_tree "." @call.receiver . (identifier) @call . (token_tree) @call.args)
(token_tree (identifier) @call.scope . "::" . (identifier) @call . (token_tree) @call.args)
(type_identifier) @ref.type

; Function literals: a name declared in one is seen only inside it.
(closure_expression) @literal
; A match arm: what its pattern binds is seen only in the arm.
(match_arm) @literal

; Functions used as values: turbofished (`.map(parse::<u8>)`), stored in a
; struct's field (`ErrorVTable { object_drop: object_drop::<E>, describe:
; describe }`, unless a variable of that name is nearer). A plain name
; passed as an argument or a shorthand field (`Error { code }`) is all but
; always a local value (a pattern's binding, say): not read.
(arguments (generic_function function: (identifier) @read))
(field_initializer value: (identifier) @read)
(field_initializer value: (generic_function function: (identifier) @read))
