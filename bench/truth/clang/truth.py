#!/usr/bin/env python3
"""C / C++ ground truth for Signpost's code graph, from libclang (clang.cindex).

Parses every .c/.cc/.cpp/.cxx file of a repository (and, for C++, every header
on its own; for C, every header that no parsed file included), one file at a
time, and writes the definitions (functions, methods, constructors, classes,
structs, enums, namespaces, typedefs, fields, function-like macros) declared in
the repository's own files, plus CALLS / EXTENDS / OVERRIDES edges between them,
as one JSON file.  See README.md beside this file for the rules.

Run (run.sh sets up the virtualenv with the `libclang` wheel first):
    bench/truth/clang/run.sh /tmp/repos/redis c /tmp/truth/redis.json
or directly:
    /tmp/clangtruth-venv/bin/python bench/truth/clang/truth.py ROOT {c,cpp} OUT.json
        [--flags "-DFOO -Iinc"] [--no-profile] [--limit N] [-v]
"""
import argparse
import ctypes
import glob
import json
import os
import re
import subprocess
import sys
import time

import clang.cindex as ci

CK = ci.CursorKind

# --------------------------------------------------------------------------
# libclang functions the Python binding does not wrap.
_lib = ci.conf.lib
_lib.clang_getOverriddenCursors.argtypes = [
    ci.Cursor, ctypes.POINTER(ctypes.POINTER(ci.Cursor)), ctypes.POINTER(ctypes.c_uint)]
_lib.clang_getOverriddenCursors.restype = None
_lib.clang_disposeOverriddenCursors.argtypes = [ctypes.POINTER(ci.Cursor)]
_lib.clang_disposeOverriddenCursors.restype = None
_lib.clang_Cursor_isMacroFunctionLike.argtypes = [ci.Cursor]
_lib.clang_Cursor_isMacroFunctionLike.restype = ctypes.c_uint

PARSE_KEEP_GOING = 0x200  # CXTranslationUnit_KeepGoing: go on past fatal errors (missing includes)

FUNC_KINDS = {CK.FUNCTION_DECL, CK.CXX_METHOD, CK.CONSTRUCTOR, CK.DESTRUCTOR,
              CK.CONVERSION_FUNCTION, CK.FUNCTION_TEMPLATE}
RECORD_KINDS = {CK.STRUCT_DECL, CK.CLASS_DECL, CK.UNION_DECL, CK.CLASS_TEMPLATE,
                CK.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION}
TYPE_KINDS = {CK.TYPEDEF_DECL, CK.TYPE_ALIAS_DECL, CK.TYPE_ALIAS_TEMPLATE_DECL}
SCOPE_KINDS = RECORD_KINDS | {CK.NAMESPACE, CK.ENUM_DECL}
# cursor kinds never worth descending into while looking for defs and calls
NO_DESCEND = {CK.MACRO_INSTANTIATION, CK.INCLUSION_DIRECTIVE, CK.TEMPLATE_TYPE_PARAMETER,
              CK.TEMPLATE_NON_TYPE_PARAMETER, CK.TEMPLATE_TEMPLATE_PARAMETER,
              CK.TYPE_REF, CK.TEMPLATE_REF, CK.NAMESPACE_REF, CK.ANNOTATE_ATTR,
              CK.ASM_LABEL_ATTR, CK.VISIBILITY_ATTR}

# `typedef struct { ... } Foo;`: clang names the anonymous struct after the
# typedef (USR c:@SA@Foo); the typedef is the def, the struct is not
TYPEDEF_NAMED = re.compile(r"@(SA|UA|EA|CA)@[^@]*$")

# compiler builtins: not calls for the graph, counted apart
BUILTIN = re.compile(r"c:@F@__(builtin_|atomic_|sync_|c11_atomic_)")

SKIP_DIR_NAMES = {"examples", "example", "bench", "benchmark", "benchmarks",
                  "fuzz", "fuzzing", "fuzzer", "fuzzers", ".git"}
VENDOR_TOP = {"deps", "vendor", "third_party", "external", "modules"}
SRC_EXT = (".c", ".cc", ".cpp", ".cxx")
HDR_EXT = (".h", ".hh", ".hpp", ".hxx", ".inl")

# Per-repository flags (keyed by the root's basename).  Paths are relative to
# the root; "stubs" are generated headers (build outputs) written to a scratch
# include dir so that the files including them parse.
PROFILES = {
    "redis": {
        # no -Isrc: redis-cli.c's <sds.h> must be hiredis' (src/ files reach
        # their own headers through "quotes")
        "include": ["deps/hiredis", "deps/linenoise", "deps/lua/src",
                    "deps/hdr_histogram", "deps/fpconv", "deps/fast_float",
                    "deps/jemalloc/include"],
        "defines": ["-DREDIS_STATIC=", "-DUSE_BACKTRACE", "-D_GNU_SOURCE",
                    '-DHDR_MALLOC_INCLUDE="hdr_redis_malloc.h"',  # deps/hdr_histogram/Makefile
                    "-DLUA_ANSI", "-DENABLE_CJSON_GLOBAL", "-DLUA_USE_MKSTEMP"],  # deps/Makefile
        "jemalloc": True,
        "stubs": {"release.h": '#include "version.h"\n#define REDIS_GIT_SHA1 "00000000"\n'
                               '#define REDIS_GIT_DIRTY "0"\n'
                               '#define REDIS_BUILD_ID "truth"\n'
                               '#define REDIS_BUILD_ID_RAW REDIS_VERSION REDIS_BUILD_ID '
                               'REDIS_GIT_DIRTY REDIS_GIT_SHA1\n'},
    },
    "jq": {
        "include": [".", "src", "vendor"],
        "defines": ["-DUSE_DECNUM=1", "-DIEEE_8087", "-DHAVE_PTHREAD=1"],
        "stubs": {"src/version.h": '#define JQ_VERSION "truth"\n',
                  "src/config_opts.inc": '#define JQ_CONFIG "truth"\n',
                  "src/builtin.inc": "\n"},
    },
    "spdlog": {
        "include": ["include"],
        "defines": ["-DSPDLOG_COMPILED_LIB"],
        "stubs": {},
    },
    "fmt": {
        "include": ["include"],
        "defines": [],
        "stubs": {},
    },
}


# redis' vendored jemalloc needs headers that its ./configure generates; this
# writes the usual x86_64 Linux answers (as for redis' own `--with-jemalloc-
# prefix=je_ --with-lg-quantum=3 --disable-cache-oblivious` build), with the
# private namespace off so internal names stay as written in the source.
JEMALLOC_DEFS = {
    "JEMALLOC_PREFIX": '"je_"', "JEMALLOC_CPREFIX": '"JE_"',
    "JEMALLOC_PRIVATE_NAMESPACE": "je_", "CPU_SPINWAIT": '__asm__ volatile("pause")',
    "HAVE_CPU_SPINWAIT": "1", "LG_VADDR": "48", "JEMALLOC_C11_ATOMICS": "",
    "JEMALLOC_GCC_ATOMIC_ATOMICS": "", "JEMALLOC_GCC_U8_ATOMIC_ATOMICS": "",
    "JEMALLOC_GCC_SYNC_ATOMICS": "", "JEMALLOC_GCC_U8_SYNC_ATOMICS": "",
    "JEMALLOC_HAVE_BUILTIN_CLZ": "", "JEMALLOC_USE_SYSCALL": "",
    "JEMALLOC_HAVE_SECURE_GETENV": "", "JEMALLOC_HAVE_PTHREAD_ATFORK": "",
    "JEMALLOC_HAVE_PTHREAD_SETNAME_NP": "", "JEMALLOC_HAVE_PTHREAD_GETNAME_NP": "",
    "JEMALLOC_HAVE_CLOCK_MONOTONIC_COARSE": "", "JEMALLOC_HAVE_CLOCK_MONOTONIC": "",
    "JEMALLOC_HAVE_CLOCK_REALTIME": "", "JEMALLOC_THREADED_INIT": "",
    "JEMALLOC_TLS_MODEL": '__attribute__((tls_model("initial-exec")))',
    "JEMALLOC_STATS": "", "LG_QUANTUM": "3", "LG_PAGE": "12", "CONFIG_LG_SLAB_MAXREGS": "9",
    "LG_HUGEPAGE": "21", "JEMALLOC_MAPS_COALESCE": "", "JEMALLOC_RETAIN": "",
    "JEMALLOC_TLS": "", "JEMALLOC_INTERNAL_UNREACHABLE": "__builtin_unreachable",
    "JEMALLOC_INTERNAL_FFSLL": "__builtin_ffsll", "JEMALLOC_INTERNAL_FFSL": "__builtin_ffsl",
    "JEMALLOC_INTERNAL_FFS": "__builtin_ffs", "JEMALLOC_INTERNAL_POPCOUNTL": "__builtin_popcountl",
    "JEMALLOC_INTERNAL_POPCOUNT": "__builtin_popcount",
    "JEMALLOC_PROC_SYS_VM_OVERCOMMIT_MEMORY": "", "JEMALLOC_HAVE_MADVISE": "",
    "JEMALLOC_HAVE_MADVISE_HUGE": "", "JEMALLOC_PURGE_MADVISE_FREE": "",
    "JEMALLOC_PURGE_MADVISE_DONTNEED": "", "JEMALLOC_PURGE_MADVISE_DONTNEED_ZEROS": "",
    "JEMALLOC_MADVISE_DONTDUMP": "", "JEMALLOC_HAVE_MPROTECT": "",
    "JEMALLOC_HAS_ALLOCA_H": "1", "JEMALLOC_HAS_RESTRICT": "", "LG_SIZEOF_INT": "2",
    "LG_SIZEOF_LONG": "3", "LG_SIZEOF_LONG_LONG": "3", "LG_SIZEOF_INTMAX_T": "3",
    "JEMALLOC_HAVE_PTHREAD": "", "JEMALLOC_HAVE_DLSYM": "",
    "JEMALLOC_HAVE_PTHREAD_MUTEX_ADAPTIVE_NP": "", "JEMALLOC_HAVE_SCHED_GETCPU": "",
    "JEMALLOC_HAVE_SCHED_SETAFFINITY": "", "JEMALLOC_BACKGROUND_THREAD": "",
    "JEMALLOC_EXPORT": "", "JEMALLOC_CONFIG_MALLOC_CONF": '""',
    "JEMALLOC_STRERROR_R_RETURNS_CHAR_WITH_GNU_SOURCE": "",
    "JEMALLOC_ZERO_REALLOC_DEFAULT_FREE": "",
    "JEMALLOC_HAVE_ATTR": "", "JEMALLOC_HAVE_ATTR_ALLOC_SIZE": "",
    "JEMALLOC_HAVE_ATTR_FORMAT_ARG": "", "JEMALLOC_HAVE_ATTR_FORMAT_GNU_PRINTF": "",
    "JEMALLOC_HAVE_ATTR_FORMAT_PRINTF": "", "JEMALLOC_HAVE_ATTR_FALLTHROUGH": "",
    "JEMALLOC_HAVE_ATTR_COLD": "", "JEMALLOC_OVERRIDE_MEMALIGN": "",
    "JEMALLOC_OVERRIDE_VALLOC": "", "JEMALLOC_USABLE_SIZE_CONST": "const",
    "LG_SIZEOF_PTR": "3",
}
JEMALLOC_SUBST = {"install_suffix": "", "je_": "je_", "jemalloc_version": "5.3.0-0-g0",
                  "jemalloc_version_major": "5", "jemalloc_version_minor": "3",
                  "jemalloc_version_bugfix": "0", "jemalloc_version_nrev": "0",
                  "jemalloc_version_gid": "0", "private_namespace": "je_"}


def jemalloc_stubs(root, stub_dir):
    src = os.path.join(root, "deps/jemalloc/include/jemalloc")
    if not os.path.isdir(src):
        return

    def conf(name):
        with open(os.path.join(src, name + ".in")) as f:
            text = f.read()
        text = re.sub(r"@([A-Za-z_]+)@", lambda m: JEMALLOC_SUBST.get(m.group(1), ""), text)

        def undef(m):
            n = m.group(2)
            if n in JEMALLOC_DEFS:
                return f"{m.group(1)}define {n} {JEMALLOC_DEFS[n]}".rstrip()
            return m.group(0)
        return re.sub(r"^(#\s*)undef\s+(\w+)[ \t]*$", undef, text, flags=re.M)

    out = os.path.join(stub_dir, "jemalloc")
    os.makedirs(os.path.join(out, "internal"), exist_ok=True)
    defs = conf("internal/jemalloc_internal_defs.h")
    defs += "\n#define JEMALLOC_NO_PRIVATE_NAMESPACE\n"
    with open(os.path.join(out, "internal/jemalloc_internal_defs.h"), "w") as f:
        f.write(defs)
    with open(os.path.join(out, "internal/jemalloc_preamble.h"), "w") as f:
        f.write(conf("internal/jemalloc_preamble.h"))
    parts = ["#ifndef JEMALLOC_H_\n#define JEMALLOC_H_\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"]
    for h in ("jemalloc_defs.h", "jemalloc_macros.h", "jemalloc_protos.h", "jemalloc_typedefs.h"):
        parts.append(conf(h))
    parts.append("#ifdef __cplusplus\n}\n#endif\n#endif\n")
    with open(os.path.join(out, "jemalloc.h"), "w") as f:
        f.write("\n".join(parts))


def builtin_include_dir():
    """clang's own stddef.h/stdatomic.h/...: the libclang wheel does not ship
    them, the clang-tidy wheel (same LLVM 18) does.  Else a clang resource dir
    on the machine, else gcc's (parses, but gcc's stdatomic.h and intrinsics
    headers give clang errors)."""
    try:
        import clang_tidy  # PyPI clang-tidy, installed by run.sh
        base = os.path.join(os.path.dirname(clang_tidy.__file__), "data/lib/clang")
        for d in sorted(glob.glob(os.path.join(base, "*", "include")), reverse=True):
            if os.path.exists(os.path.join(d, "stddef.h")):
                return d
    except ImportError:
        pass
    for pat in ("/usr/lib/llvm-*/lib/clang/*/include", "/usr/lib/clang/*/include",
                "/usr/local/lib/clang/*/include"):
        for d in sorted(glob.glob(pat), reverse=True):
            if os.path.exists(os.path.join(d, "stddef.h")):
                return d
    try:
        d = subprocess.run(["gcc", "-print-file-name=include"], capture_output=True,
                           text=True, check=True).stdout.strip()
        if os.path.exists(os.path.join(d, "stddef.h")):
            return d
    except (OSError, subprocess.CalledProcessError):
        pass
    return None


def is_skipped_dir(rel_dir_parts):
    for p in rel_dir_parts:
        pl = p.lower()
        if pl in SKIP_DIR_NAMES or pl.startswith("test"):
            return True
    return False


def component(rel):
    """'' for the project's own code, else the vendored package root."""
    parts = rel.split("/")
    if len(parts) > 1 and parts[0] in VENDOR_TOP:
        return "/".join(parts[:2])
    for i, p in enumerate(parts[:-1]):
        if p == "bundled":
            return "/".join(parts[:i + 1])
    return ""


def is_vendored(rel):
    return component(rel) != ""


class Truth:
    def __init__(self, root, lang, extra_flags, use_profile, verbose):
        self.root = os.path.realpath(root)
        self.lang = lang
        self.verbose = verbose
        name = os.path.basename(self.root.rstrip("/"))
        prof = PROFILES.get(name, {}) if use_profile else {}
        self.stub_dir = None
        flags = []
        if prof.get("stubs"):
            self.stub_dir = os.path.join("/tmp/clangtruth-stubs", name)
            for rel, text in prof["stubs"].items():
                p = os.path.join(self.stub_dir, rel)
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "w") as f:
                    f.write(text)
            flags.append("-I" + self.stub_dir)
        if prof.get("jemalloc"):
            self.stub_dir = self.stub_dir or os.path.join("/tmp/clangtruth-stubs", name)
            jemalloc_stubs(self.root, self.stub_dir)
            if "-I" + self.stub_dir not in flags:
                flags.append("-I" + self.stub_dir)
        for inc in prof.get("include", ["include", "src", "."]):
            flags.append("-I" + os.path.normpath(os.path.join(self.root, inc)))
        flags += prof.get("defines", [])
        flags += extra_flags
        bi = builtin_include_dir()
        if bi:
            flags += ["-isystem", bi]
        self.common = flags + ["-ferror-limit=0", "-Wno-everything"]
        self.index = ci.Index.create()
        # results
        self.ents = {}        # (usr, comp) -> entity dict
        self.macros = {}      # (file, line, name) -> entity dict
        self.calls = set()    # (caller ref, callee ref, call file, ctor/member/fn, category, site)
        self.extends = set()
        self.overrides = set()
        self.sites = {}       # (file, line, col, callee) -> (category, is ctor)
        self.files_parsed = 0
        self.err_files = 0
        self.err_diags = 0
        self.err_by_file = {}
        self.walked_ok = set()  # top-level cursors (file, extent, kind, usr) walked in an error-free TU
        self.seen_files = set()   # repo files some parsed file included
        self.clean_seen = set()   # ... some error-free parse included
        self._rel_cache = {}

    # ---------------------------------------------------------------- paths
    def rel(self, fobj):
        if fobj is None:
            return None
        name = fobj.name if not isinstance(fobj, str) else fobj
        r = self._rel_cache.get(name)
        if r is None:
            real = os.path.realpath(name)
            if real.startswith(self.root + "/"):
                r = real[len(self.root) + 1:]
            else:
                r = ""
            self._rel_cache[name] = r
        return r or None

    def loc(self, c):
        l = c.location
        f = self.rel(l.file)
        return (f, l.line) if f else (None, 0)

    # ------------------------------------------------------------ entities
    @staticmethod
    def anonymous(c):
        s = c.spelling
        return (not s) or s.startswith("(") or "(unnamed" in s or "(anonymous" in s

    def container(self, c):
        if self.cur_lang == "c":
            return ""
        names = []
        p = c.semantic_parent
        while p is not None and p.kind != CK.TRANSLATION_UNIT:
            if p.kind in SCOPE_KINDS and not self.anonymous(p):
                names.append(p.spelling)
            elif p.kind in FUNC_KINDS:
                names.append(p.spelling)
            p = p.semantic_parent
        return "::".join(reversed(names))

    def def_kind(self, c):
        k = c.kind
        if k == CK.CONSTRUCTOR:
            return "constructor"
        if k in (CK.CXX_METHOD, CK.DESTRUCTOR, CK.CONVERSION_FUNCTION):
            return "method"
        if k == CK.FUNCTION_DECL:
            return "function"
        if k == CK.FUNCTION_TEMPLATE:
            tk = _lib.clang_getTemplateCursorKind(c)
            if tk == CK.CONSTRUCTOR.value:
                return "constructor"
            p = c.semantic_parent
            if p is not None and p.kind in RECORD_KINDS:
                return "method"
            return "function"
        if k in (CK.STRUCT_DECL, CK.UNION_DECL):
            return "struct"
        if k == CK.CLASS_DECL:
            return "class"
        if k in (CK.CLASS_TEMPLATE, CK.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION):
            tk = _lib.clang_getTemplateCursorKind(c)
            return "class" if tk == CK.CLASS_DECL.value else "struct"
        if k == CK.ENUM_DECL:
            return "enum"
        if k == CK.NAMESPACE:
            return "module"
        if k in TYPE_KINDS:
            return "type"
        if k == CK.FIELD_DECL:
            return "field"
        if k == CK.VAR_DECL:
            p = c.semantic_parent
            if p is not None and p.kind in RECORD_KINDS:
                return "field"  # static data member
        return None

    def is_def_cursor(self, c, kind):
        if kind in ("type", "field"):
            return True
        if kind == "module":
            return False  # every block is a declaration of the one namespace
        return c.is_definition()

    def ref_key(self, c, f=None):
        """Identity of the entity behind cursor c, before the final merge:
        (usr, component, definition file or None)."""
        usr = c.get_usr()
        if not usr:
            return None
        if f is None:
            f, _ = self.loc(c)
        d = c.get_definition() if c.kind != CK.NAMESPACE else None
        dfile = None
        if d is not None:
            dfile, _ = self.loc(d)
        compf = dfile or f
        if compf is None:
            return None
        return (usr, component(compf), dfile)

    def record(self, c, kind):
        f, line = self.loc(c)
        if f is None:
            return None
        usr = c.get_usr()
        if not usr:
            return None
        comp = component(f)
        key = (usr, comp)
        e = self.ents.get(key)
        if e is None:
            name = c.spelling
            if kind == "constructor" or name.startswith("~"):
                name = name.split("<", 1)[0]  # `buffer<T>` -> `buffer`
            e = {"name": name, "kind": kind, "container": self.container(c),
                 "defs": {}, "decls": [], "usr": usr, "comp": comp}
            self.ents[key] = e
        if self.is_def_cursor(c, kind):
            e["defs"].setdefault(f, line)
            if kind in ("function", "method", "constructor") and e["kind"] != kind:
                e["kind"] = kind
        else:
            pl = (f, line)
            if pl not in e["decls"]:
                e["decls"].append(pl)
        return key

    # ------------------------------------------------------------ resolving
    @staticmethod
    def template_of(c):
        for _ in range(8):
            t = _lib.clang_getSpecializedCursorTemplate(c)
            if t is None or t == c:
                break
            t._tu = c._tu
            c = t
        return c

    def in_repo(self, c):
        if self.loc(c)[0]:
            return True
        d = c.get_definition()
        return d is not None and self.loc(d)[0] is not None

    def overload_set(self, ovl):
        """A template-dependent call names an overload set: one in-repo
        function and nothing else resolves to it ('dependent1'); none in the
        repository is an external call; several is unresolved ('dependent')."""
        n = _lib.clang_getNumOverloadedDecls(ovl)
        usrs, repo, first = set(), 0, None
        for i in range(n):
            d = _lib.clang_getOverloadedDecl(ovl, i)
            if d is None:
                continue
            d._tu = ovl._tu
            if d.kind not in FUNC_KINDS:
                # using-declaration / using-shadow (`using std::move;`): its
                # definition cursor is the function it brings in
                d = d.get_definition()
                if d is None or d.kind not in FUNC_KINDS:
                    usrs.add(None)
                    continue
            d = self.template_of(d)
            usrs.add(d.get_usr())
            if self.in_repo(d):
                repo += 1
                first = d
        if repo == 0:
            return None, "external-dependent"
        if len(usrs) == 1 and first is not None and first.kind in FUNC_KINDS:
            return first, "dependent1"
        return None, "dependent"

    def callee_of(self, call):
        """-> (cursor or None, category) for a CALL_EXPR."""
        ref = call.referenced
        if ref is None:
            # template-dependent call: look at the callee expression
            kids = list(call.get_children())
            cand = kids[0] if kids else None
            while cand is not None and cand.kind == CK.UNEXPOSED_EXPR:
                ks = list(cand.get_children())
                cand = ks[0] if ks else None
            if cand is None:
                return None, "noref"
            # a dependent overloaded operator (`*it`, `a + b`): ADL decides at
            # instantiation, so even a single visible candidate is not the truth
            for k in kids:
                if k.kind in (CK.DECL_REF_EXPR, CK.OVERLOADED_DECL_REF):
                    r = k.referenced
                    if r is not None and r.kind == CK.OVERLOADED_DECL_REF and \
                            r.spelling.startswith("operator"):
                        return None, "dependent"
            if cand.kind == CK.OVERLOADED_DECL_REF:
                return self.overload_set(cand)
            if cand.kind in (CK.MEMBER_REF_EXPR, CK.DECL_REF_EXPR):
                r = cand.referenced
                if r is not None and r.kind == CK.OVERLOADED_DECL_REF:
                    return self.overload_set(r)
                if r is not None and r.kind in FUNC_KINDS:
                    return r, "fn"
                return None, "dependent"
            # T(args) / Tmpl<T>(args) with a dependent type: a constructor call
            for k in kids:
                if k.kind in (CK.TEMPLATE_REF, CK.TYPE_REF):
                    r = k.referenced
                    if r is not None and not self.in_repo(r):
                        return None, "external-dependent"
                    return None, "dependent"
                if k.kind != CK.NAMESPACE_REF:
                    break
            return None, "noref"
        if ref.kind in FUNC_KINDS:
            return ref, "fn"
        if ref.kind in (CK.VAR_DECL, CK.PARM_DECL, CK.FIELD_DECL):
            return None, "indirect"
        return None, "other"

    def add_call(self, call, fn_ref):
        f, line = self.loc(call)
        col = call.location.column
        target, cat = self.callee_of(call)
        if target is not None:
            target = self.template_of(target)
            tf, _ = self.loc(target)
            d = target.get_definition()
            df = self.loc(d)[0] if d is not None else None
            usr = target.get_usr()
            if (tf or df) and usr:
                rk = (usr, component(df or tf), df)
                site = (f, line, col, usr)
                if site not in self.sites:
                    self.sites[site] = ("repo-" + cat, target.kind == CK.CONSTRUCTOR)
                if fn_ref is not None:
                    tkind = ("ctor" if target.kind == CK.CONSTRUCTOR else
                             "member" if target.kind in (CK.CXX_METHOD, CK.DESTRUCTOR) else "fn")
                    self.calls.add((fn_ref, rk, f, tkind, cat, site))
                else:
                    self.sites[site] = ("outside", False)
                return
            site = (f, line, col, usr or target.spelling)
            self.sites.setdefault(site, ("builtin" if usr and BUILTIN.match(usr) else "external", False))
            return
        site = (f, line, col, cat + ":" + call.spelling)
        self.sites.setdefault(site, ("external" if cat.startswith("external") else
                                     "unresolved-" + cat, False))

    def overridden(self, c):
        arr = ctypes.POINTER(ci.Cursor)()
        n = ctypes.c_uint(0)
        _lib.clang_getOverriddenCursors(c, ctypes.byref(arr), ctypes.byref(n))
        out = []
        for i in range(n.value):
            o = arr[i]
            o._tu = c._tu
            o = self.template_of(o)
            k = self.ref_key(o)
            if k is not None:
                out.append(k)
        if n.value:
            _lib.clang_disposeOverriddenCursors(arr)
        return out

    def base_target(self, b):
        t = b.referenced
        if t is None or t.kind not in RECORD_KINDS:
            d = b.type.get_declaration()
            if d is not None and d.kind in RECORD_KINDS:
                t = d
        if t is None or t.kind not in RECORD_KINDS:
            for ch in b.get_children():
                if ch.kind in (CK.TEMPLATE_REF, CK.TYPE_REF):
                    r = ch.referenced
                    if r is not None and r.kind in RECORD_KINDS:
                        t = r
                        break
        if t is None or t.kind not in RECORD_KINDS:
            return None
        return self.template_of(t)

    # ------------------------------------------------------------ walking
    def relations(self, c, k):
        """OVERRIDES of a virtual method, EXTENDS of a class definition."""
        if k in (CK.CXX_METHOD, CK.DESTRUCTOR) and c.is_virtual_method():
            me = self.ref_key(c)
            for o in self.overridden(c):
                self.overrides.add((me, o))
        if k in RECORD_KINDS and c.is_definition():
            me = self.ref_key(c)
            for ch in c.get_children():
                if ch.kind == CK.CXX_BASE_SPECIFIER:
                    t = self.base_target(ch)
                    if t is not None:
                        tk = self.ref_key(t)
                        if tk is not None:
                            self.extends.add((me, tk))

    def walk(self, top):
        stack = [(top, None)]
        while stack:
            c, fn = stack.pop()
            k = c.kind
            if k in NO_DESCEND:
                continue
            if k == CK.CALL_EXPR:
                self.add_call(c, fn)
            elif k.is_declaration() and fn is None:
                dk = self.def_kind(c)
                if dk is not None and not (dk in ("class", "struct", "enum", "module")
                                           and (self.anonymous(c) or TYPEDEF_NAMED.search(c.get_usr()))):
                    if self.record(c, dk) is not None:
                        self.relations(c, k)
                if k in FUNC_KINDS and c.is_definition():
                    fn = self.ref_key(c)
            # Entities declared inside a function body (local classes, the
            # structs that fmt's FMT_STRING macro expands to, lambdas) are not
            # defs; calls in them belong to the enclosing function.
            kids = list(c.get_children())
            for ch in reversed(kids):
                stack.append((ch, fn))

    def parse(self, path, as_lang, fragment=False):
        """Parse one file and walk it.  A fragment (a source file that another
        source #includes) that a clean parse already covered is dropped when
        it does not parse cleanly on its own."""
        std = "-std=gnu11" if as_lang == "c" else "-std=c++17"
        args = ["-x", "c" if as_lang == "c" else "c++", std] + self.common
        self.cur_lang = as_lang
        t0 = time.time()
        try:
            tu = self.index.parse(path, args=args, options=(
                ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD | PARSE_KEEP_GOING))
        except ci.TranslationUnitLoadError as e:
            print(f"  ! could not parse {path}: {e}", file=sys.stderr)
            return
        errs = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
        main = self.rel(path)
        if fragment and errs and main in self.clean_seen:
            return False
        self.files_parsed += 1
        if errs:
            self.err_files += 1
            self.err_diags += len(errs)
            self.err_by_file[main] = [len(errs), str(errs[0])]
        for inc in tu.get_includes():
            r = self.rel(inc.include)
            if r:
                self.seen_files.add(r)
                if not errs:
                    self.clean_seen.add(r)
        pending = []
        for c in tu.cursor.get_children():
            f = self.rel(c.location.file)
            if f is None:
                continue
            if c.kind == CK.MACRO_DEFINITION:
                if _lib.clang_Cursor_isMacroFunctionLike(c):
                    line = c.location.line
                    self.macros.setdefault((f, line, c.spelling), {
                        "name": c.spelling, "kind": "macro", "container": "",
                        "file": f, "line": line})
                continue
            if c.kind in (CK.MACRO_INSTANTIATION, CK.INCLUSION_DIRECTIVE):
                continue
            ext = c.extent
            # the USR tells apart one text expanded under other macros (jq's
            # decBasic.c is compiled as decDouble*, decQuad*, decSingle*)
            key = (f, ext.start.offset, ext.end.offset, c.kind.value, c.get_usr())
            if f != main and key in self.walked_ok:
                continue
            self.walk(c)
            pending.append(key)
        if not errs:
            self.walked_ok.update(pending)
        if self.verbose:
            print(f"  {main}: {len(errs)} errors, {time.time() - t0:.1f}s", file=sys.stderr)
        return True

    # ------------------------------------------------------------ output
    def finish(self):
        # 1. Entities per (usr, comp): one def per definition file; with no
        #    definition in the component, fold the declarations into the
        #    component that has one (project first), else one decl-only def.
        by_usr = {}
        for (usr, comp), e in self.ents.items():
            by_usr.setdefault(usr, []).append(e)
        defs = []
        ids = {}           # (usr, comp) -> [(file, id)]
        for usr in sorted(by_usr):
            es = sorted(by_usr[usr], key=lambda e: (e["comp"] != "", e["comp"]))
            with_def = [e for e in es if e["defs"]]
            without = [e for e in es if not e["defs"]]
            for e in with_def:
                for f in sorted(e["defs"], key=lambda f: (f, e["defs"][f])):
                    d = {"id": len(defs), "kind": e["kind"], "name": e["name"],
                         "container": e["container"], "file": f, "line": e["defs"][f],
                         "alt": [], "vendored": is_vendored(f)}
                    defs.append(d)
                    ids.setdefault((usr, e["comp"]), []).append((f, d["id"]))
            if with_def:
                for e in with_def:
                    first = defs[ids[(usr, e["comp"])][0][1]]
                    for pl in e["decls"]:
                        if list(pl) not in first["alt"] and pl != (first["file"], first["line"]):
                            first["alt"].append(list(pl))
                    # other definitions of the same entity in this component
                    # are separate defs (per-file static/C tag), no alt needed
                target = ids[(usr, with_def[0]["comp"])]
                for e in without:
                    first = defs[target[0][1]]
                    for pl in e["decls"]:
                        if list(pl) not in first["alt"]:
                            first["alt"].append(list(pl))
                    ids[(usr, e["comp"])] = target
            else:
                e0 = es[0]
                decls = [pl for e in es for pl in e["decls"]]
                f, line = decls[0]
                d = {"id": len(defs), "kind": e0["kind"], "name": e0["name"],
                     "container": e0["container"], "file": f, "line": line,
                     "alt": [list(pl) for pl in decls[1:]], "vendored": is_vendored(f)}
                defs.append(d)
                for e in es:
                    ids[(usr, e["comp"])] = [(f, d["id"])]
        # 2. The same source entity can carry two USRs: a header parsed as C
        #    and as C++ (C++ USRs are mangled), or a function that one build
        #    of the file makes static (lua's one-file etc/all.c).  One def
        #    per (kind, name, container, file, line).
        remap, seen, merged = {}, {}, []
        for d in defs:
            k = (d["kind"], d["name"], d["container"], d["file"], d["line"])
            if k in seen:
                t = merged[seen[k]]
                for pl in d["alt"]:
                    if pl not in t["alt"]:
                        t["alt"].append(pl)
                remap[d["id"]] = t["id"]
            else:
                remap[d["id"]] = seen[k] = d["id"] = len(merged)
                merged.append(d)
        defs = merged
        for m in sorted(self.macros.values(), key=lambda m: (m["file"], m["line"], m["name"])):
            defs.append({"id": len(defs), "kind": "macro", "name": m["name"], "container": "",
                         "file": m["file"], "line": m["line"], "alt": [],
                         "vendored": is_vendored(m["file"])})

        def resolve(rk, ctx_file=None):
            if rk is None:
                return None
            usr, comp, dfile = rk
            cands = ids.get((usr, comp))
            if not cands and usr in by_usr:
                # seen only from a component we never recorded it in: any will do
                alts = [ids[(usr, e["comp"])] for e in by_usr[usr] if (usr, e["comp"]) in ids]
                cands = alts[0] if alts else None
            if not cands:
                return None
            for f, i in cands:
                if f == dfile:
                    return remap[i]
            for f, i in cands:
                if f == ctx_file:
                    return remap[i]
            return remap[cands[0][1]]

        edges = set()
        dep1, sure = set(), set()
        implicit_ctor = 0
        missing = 0
        missing_ex = []
        for caller, callee, site_file, tkind, cat, site in sorted(self.calls, key=str):
            a = resolve(caller)
            b = resolve(callee, site_file)
            if b is None:
                # declared in the repo's files only implicitly: a compiler-made
                # constructor / operator= / destructor of a repo class, or a
                # compiler builtin (neither counted), or a C implicit
                # declaration (external)
                if tkind != "fn":
                    implicit_ctor += 1
                    self.sites[site] = ("implicit-member", True)
                elif BUILTIN.match(callee[0]):
                    self.sites[site] = ("builtin", False)  # likely() -> __builtin_expect
                else:
                    self.sites[site] = ("external", False)
                continue
            if a is None:
                missing += 1
                if len(missing_ex) < 40:
                    missing_ex.append([site_file, list(caller)])
                continue
            edges.add(("CALLS", a, b))
            (dep1 if cat == "dependent1" else sure).add((a, b))
        for me, base in self.extends:
            a, b = resolve(me), resolve(base)
            if a is not None and b is not None and a != b:
                edges.add(("EXTENDS", a, b))
        for me, o in self.overrides:
            a, b = resolve(me), resolve(o)
            if a is not None and b is not None and a != b:
                edges.add(("OVERRIDES", a, b))
        cats = {}
        for cat, _ in self.sites.values():
            cats[cat] = cats.get(cat, 0) + 1
        unresolved = sum(v for k, v in cats.items() if k.startswith("unresolved-"))
        external = cats.get("external", 0)
        order = {"CALLS": 0, "EXTENDS": 1, "OVERRIDES": 2}
        out = {
            "tool": f"libclang {ci_version()} (clang.cindex)",
            "language": self.lang,
            "root": self.root,
            "defs": defs,
            "edges": [{"type": t, "from": a, "to": b}
                      for t, a, b in sorted(edges, key=lambda e: (order[e[0]], e[1], e[2]))],
            "unresolved_calls": unresolved,
            "external_calls": external,
            "parse_errors": {"files": self.err_files, "diagnostics": self.err_diags},
        }
        examples = {}
        for site, (cat, _) in sorted(self.sites.items(), key=lambda kv: str(kv[0])):
            ex = examples.setdefault(cat, [])
            if len(ex) < 25:
                ex.append(f"{site[0]}:{site[1]}:{site[2]} {site[3]}")
        stats = {"call_sites": cats, "call_site_examples": examples,
                 "implicit_member_calls": implicit_ctor,
                 "dependent1_only_edges": sorted(dep1 - sure),
                 "calls_with_unmatched_defs": missing,
                 "unmatched_examples": missing_ex}
        return out, stats


def ci_version():
    """'18.1.1' from clang_getClangVersion ('clang version 18.1.1 (...)')."""
    try:
        f = _lib.clang_getClangVersion
        f.argtypes = []
        f.restype = ci._CXString
        f.errcheck = ci._CXString.from_result
        m = re.search(r"version (\d+\.\d+(\.\d+)?)", f())
        if m:
            return m.group(1)
    except Exception:
        pass
    return "18.x"


INCLUDE_SRC_RE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+\.(?:c|cc|cpp|cxx))[>"]', re.M)


MODULE_RE = re.compile(r"^\s*(export\s+)?module\b[^;]*;", re.M)


def is_module_unit(path):
    try:
        with open(path, errors="replace") as f:
            return MODULE_RE.search(f.read(200000)) is not None
    except OSError:
        return False


def included_sources(srcs):
    """Source files that another source of the same directory #includes
    (fragments such as redis' ae_epoll.c or decNumber's decBasic.c; not lua's
    one-file build etc/all.c, which includes ../src/*.c)."""
    names = set()
    for p in srcs:
        try:
            with open(p, errors="replace") as f:
                for m in INCLUDE_SRC_RE.finditer(f.read()):
                    names.add(os.path.normpath(os.path.join(os.path.dirname(p), m.group(1))))
        except OSError:
            pass
    return names


def list_files(root):
    srcs, hdrs, skipped = [], [], set()
    for d, dirs, files in os.walk(root):
        rd = os.path.relpath(d, root)
        parts = [] if rd == "." else rd.split(os.sep)
        keep = []
        for x in sorted(dirs):
            if is_skipped_dir([x]):
                skipped.add("/".join(parts + [x]))
            else:
                keep.append(x)
        dirs[:] = keep
        for fn in sorted(files):
            p = os.path.join(d, fn)
            if fn.endswith(SRC_EXT):
                srcs.append(p)
            elif fn.endswith(HDR_EXT):
                hdrs.append(p)
    return sorted(srcs), sorted(hdrs), sorted(skipped)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root")
    ap.add_argument("lang", choices=["c", "cpp"])
    ap.add_argument("out")
    ap.add_argument("--flags", default="", help="extra compiler flags (space separated)")
    ap.add_argument("--no-profile", action="store_true", help="ignore the built-in per-repo flags")
    ap.add_argument("--limit", type=int, default=0, help="parse only the first N files (debug)")
    ap.add_argument("--stats", help="also write per-category counts and per-file errors here")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    t0 = time.time()
    sys.setrecursionlimit(20000)
    T = Truth(a.root, a.lang, a.flags.split(), not a.no_profile, a.verbose)
    srcs, hdrs, skipped = list_files(T.root)
    if a.limit:
        srcs = srcs[:a.limit]
        hdrs = hdrs[:a.limit]

    def lang_of(p):
        if p.endswith((".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx")):
            return "cpp"
        return a.lang

    print(f"[{os.path.basename(T.root)}] {len(srcs)} sources, {len(hdrs)} headers; "
          f"skipped dirs: {', '.join(skipped) or '-'}", file=sys.stderr)
    # A C++20 module unit (fmt's src/fmt.cc: `export module fmt;` around
    # #includes of every header and of format.cc/os.cc) is not parsed: inside
    # a module purview libclang 18 gives references USRs without their
    # namespaces (c:@F@report_error for fmt::v12::report_error).
    modules = [p for p in srcs if p.endswith(SRC_EXT[1:]) and is_module_unit(p)]
    srcs = [p for p in srcs if p not in modules]
    frag_names = included_sources(srcs + modules)
    frags = [p for p in srcs if os.path.normpath(p) in frag_names]
    fragments_skipped = []
    for p in srcs:
        if p not in frags:
            T.parse(p, lang_of(p))
    for p in frags:
        if not T.parse(p, lang_of(p), fragment=True):
            fragments_skipped.append(T.rel(p))
    n_src = T.files_parsed
    hdr_parsed = 0
    for p in hdrs:
        r = T.rel(p)
        if a.lang == "cpp" or r not in T.seen_files:
            T.parse(p, lang_of(p))
            hdr_parsed += 1
    out, stats = T.finish()
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    stats["errors_by_file"] = T.err_by_file
    stats["skipped_dirs"] = skipped
    stats["fragments_not_parsed_alone"] = fragments_skipped
    stats["module_units_not_parsed"] = [T.rel(p) for p in modules]
    stats["flags"] = T.common
    if a.stats:
        with open(a.stats, "w") as f:
            json.dump(stats, f, indent=1)
    et = {}
    for e in out["edges"]:
        et[e["type"]] = et.get(e["type"], 0) + 1
    kinds = {}
    for d in out["defs"]:
        kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
    print(f"{os.path.basename(T.root)}: files {T.files_parsed} ({n_src} sources + {hdr_parsed} headers), "
          f"defs {len(out['defs'])}, CALLS {et.get('CALLS', 0)}, EXTENDS {et.get('EXTENDS', 0)}, "
          f"OVERRIDES {et.get('OVERRIDES', 0)}, unresolved {out['unresolved_calls']}, "
          f"external {out['external_calls']}, parse errors {T.err_files} files / {T.err_diags} diags, "
          f"{time.time() - t0:.0f}s")
    if modules:
        print(f"  C++20 module units not parsed: {' '.join(T.rel(p) for p in modules)}")
    if fragments_skipped:
        print(f"  included sources dropped (they only parse inside their includer): "
              f"{' '.join(fragments_skipped)}")
    print(f"  defs by kind: {json.dumps(kinds, sort_keys=True)}; call sites: "
          f"{json.dumps(stats['call_sites'], sort_keys=True)}")


if __name__ == "__main__":
    main()
