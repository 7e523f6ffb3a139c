// truth.go — ground-truth code graph for a Go repository, from the real Go
// type checker (go/parser + go/types), used to measure Signpost's
// tree-sitter indexer (symbols + CALLS / IMPLEMENTS edges resolved by name).
//
// Standard library only; no module downloads. Every package of the checkout
// is parsed (non-test .go files that match the build constraints for
// GOOS/GOARCH with cgo off) and type-checked by this program, in import
// order; imports are served by a small importer: the checkout's own packages
// from the set checked here, the standard library from the "source"
// importer, and anything else (third-party modules) fails cleanly. Type
// errors are collected and checking goes on.
//
// Run:   bench/truth/go/run.sh REPO_ROOT OUT.json        (builds, then runs)
// or:    truth [-gotool] [-gopath] [-details FILE] REPO_ROOT OUT.json
//
// Output: one JSON file (schema in README.md) and a one-line summary on
// stdout; type errors and unresolved calls are listed in -details FILE.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// ---------------------------------------------------------------- output

type Def struct {
	ID        int    `json:"id"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Container string `json:"container"`
	File      string `json:"file"`
	Line      int    `json:"line"`
}

type Edge struct {
	Type     string `json:"type"`
	From     int    `json:"from"`
	To       int    `json:"to"`
	Dynamic  bool   `json:"dynamic,omitempty"`  // CALLS to an interface method
	Ref      bool   `json:"ref,omitempty"`      // func/method value, never called at this site
	Pointer  bool   `json:"pointer,omitempty"`  // IMPLEMENTS only via *T; EXTENDS: embeds *T
	Promoted bool   `json:"promoted,omitempty"` // IMPLEMENTS_METHOD: method found through embedding
}

// ---------------------------------------------------------------- loading

type lpkg struct {
	path, dir string
	names     []string // file paths, sorted
	files     []*ast.File
	tpkg      *types.Package
	info      *types.Info
	state     int // 0 new, 1 checking, 2 done
}

type loader struct {
	root        string
	fset        *token.FileSet
	pkgs        map[string]*lpkg
	order       []*lpkg // sorted by import path
	std         types.ImporterFrom
	allowGopath bool
	typeErrors  []string
	importFail  map[string]string // import path -> reason
	skipped     []string
	parsed      map[string]*ast.File
	alias       map[string]string // root-module path of a nested module's dir -> its own path
}

func (l *loader) rel(filename string) string {
	r, err := filepath.Rel(l.root, filename)
	if err != nil {
		return filepath.ToSlash(filename)
	}
	return filepath.ToSlash(r)
}

func readModulePath(gomod string) string {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "module") {
			rest := strings.TrimSpace(strings.TrimPrefix(line, "module"))
			if i := strings.Index(rest, "//"); i >= 0 {
				rest = strings.TrimSpace(rest[:i])
			}
			return strings.Trim(rest, "\"`")
		}
	}
	return ""
}

// discover walks the checkout and groups the buildable non-test .go files by
// directory. Directories named testdata or vendor, or starting with "." are
// skipped (as the go tool does). With gotool, directories starting with "_"
// and nested modules (their own go.mod) are skipped too, i.e. exactly the
// packages of `go list ./...`; without it they are kept, a nested module
// under its own module path.
func (l *loader) discover(ctxt *build.Context, gotool bool) error {
	rootMod := readModulePath(filepath.Join(l.root, "go.mod"))
	if rootMod == "" {
		rootMod = "local"
	}
	type mod struct{ dir, path string }
	mods := map[string]mod{l.root: {l.root, rootMod}}
	return filepath.Walk(l.root, func(dir string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return nil
		}
		base := fi.Name()
		if dir != l.root {
			if strings.HasPrefix(base, ".") || base == "testdata" || base == "vendor" {
				return filepath.SkipDir
			}
			if gotool && strings.HasPrefix(base, "_") {
				l.skipped = append(l.skipped, l.rel(dir)+"/ (go tool ignores _dirs)")
				return filepath.SkipDir
			}
		}
		m := mods[filepath.Dir(dir)]
		if dir == l.root {
			m = mods[l.root]
		} else if p := readModulePath(filepath.Join(dir, "go.mod")); p != "" {
			if gotool {
				l.skipped = append(l.skipped, l.rel(dir)+"/ (nested module "+p+")")
				return filepath.SkipDir
			}
			m = mod{dir, p}
		}
		mods[dir] = m
		ents, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		byName := map[string][]string{}
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
				continue
			}
			ok, err := ctxt.MatchFile(dir, n)
			if err != nil || !ok {
				l.skipped = append(l.skipped, l.rel(filepath.Join(dir, n))+" (build constraints)")
				continue
			}
			fn := filepath.Join(dir, n)
			f, err := parser.ParseFile(l.fset, fn, nil, parser.ParseComments)
			if err != nil {
				l.typeErrors = append(l.typeErrors, "parse: "+err.Error())
			}
			if f == nil {
				continue
			}
			l.parsed[fn] = f
			byName[f.Name.Name] = append(byName[f.Name.Name], fn)
		}
		if len(byName) == 0 {
			return nil
		}
		// One package per directory: keep the largest (ignoring "documentation").
		best := ""
		for n, fs := range byName {
			if n == "documentation" && len(byName) > 1 {
				continue
			}
			if best == "" || len(fs) > len(byName[best]) || (len(fs) == len(byName[best]) && n < best) {
				best = n
			}
		}
		for n, fs := range byName {
			if n != best {
				for _, fn := range fs {
					l.skipped = append(l.skipped, l.rel(fn)+" (package "+n+" != "+best+")")
				}
			}
		}
		rel, _ := filepath.Rel(m.dir, dir)
		ip := m.path
		if rel != "." {
			ip = m.path + "/" + filepath.ToSlash(rel)
		}
		p := &lpkg{path: ip, dir: dir}
		names := byName[best]
		sort.Strings(names)
		for _, fn := range names {
			p.names = append(p.names, fn)
			p.files = append(p.files, l.parsed[fn])
		}
		l.pkgs[ip] = p
		if m.dir != l.root {
			// A nested module (e.g. _examples/x with its own go.mod) may
			// import its sibling packages through the enclosing module's
			// path (served by a required version of that module); serve
			// them from this checkout.
			r, _ := filepath.Rel(l.root, dir)
			l.alias[rootMod+"/"+filepath.ToSlash(r)] = ip
		}
		return nil
	})
}

func (l *loader) Import(path string) (*types.Package, error) {
	return l.ImportFrom(path, "", 0)
}

func (l *loader) ImportFrom(path, dir string, mode types.ImportMode) (*types.Package, error) {
	if a, ok := l.alias[path]; ok {
		path = a
	}
	if p, ok := l.pkgs[path]; ok {
		if p.state == 1 {
			return nil, fmt.Errorf("import cycle through %s", path)
		}
		l.check(p)
		return p.tpkg, nil
	}
	if path == "unsafe" {
		return types.Unsafe, nil
	}
	first := strings.SplitN(path, "/", 2)[0]
	isStd := !strings.Contains(first, ".")
	if isStd {
		if !hasGoFiles(filepath.Join(build.Default.GOROOT, "src", filepath.FromSlash(path))) {
			l.importFail[path] = "not in the " + runtime.Version() + " standard library"
			return nil, fmt.Errorf("package %q is not in the %s standard library", path, runtime.Version())
		}
		return l.std.ImportFrom(path, dir, mode)
	}
	if l.allowGopath {
		pkg, err := l.std.ImportFrom(path, dir, mode)
		if err != nil {
			l.importFail[path] = "GOPATH: " + err.Error()
		}
		return pkg, err
	}
	l.importFail[path] = "third-party (not type-checked, offline)"
	return nil, fmt.Errorf("third-party package %q not available (offline)", path)
}

func hasGoFiles(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
			return true
		}
	}
	return false
}

func (l *loader) check(p *lpkg) {
	if p.state != 0 {
		return
	}
	p.state = 1
	p.info = &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Implicits:  map[ast.Node]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
		Instances:  map[*ast.Ident]types.Instance{},
	}
	conf := types.Config{
		Importer: l,
		Error: func(err error) {
			l.typeErrors = append(l.typeErrors, err.Error())
		},
	}
	p.tpkg, _ = conf.Check(p.path, l.fset, p.files, p.info)
	p.state = 2
}

// ---------------------------------------------------------------- extraction

type extractor struct {
	l        *loader
	defs     []Def
	defOf    map[types.Object]int
	edges    map[[3]interface{}]*Edge
	eorder   [][3]interface{}
	calls    map[string]int // breakdown of call sites
	unres    []string       // unresolved call sites, for -details
	promoted []string       // call sites reaching a method through embedding
	srcLine  map[string][]string
}

func (x *extractor) addDef(obj types.Object, kind, name, container string, pos token.Pos) int {
	p := x.l.fset.Position(pos)
	id := len(x.defs)
	x.defs = append(x.defs, Def{id, kind, name, container, x.l.rel(p.Filename), p.Line})
	if obj != nil {
		x.defOf[obj] = id
	}
	return id
}

func (x *extractor) addEdge(e Edge) {
	k := [3]interface{}{e.From, e.To, e.Type}
	if old, ok := x.edges[k]; ok {
		old.Ref = old.Ref && e.Ref // a real call wins over a mere reference
		old.Pointer = old.Pointer && e.Pointer
		old.Promoted = old.Promoted && e.Promoted
		return
	}
	ne := e
	x.edges[k] = &ne
	x.eorder = append(x.eorder, k)
}

// recvTypeName returns the name of a method receiver's type (`*Store[T]` → Store).
func recvTypeName(e ast.Expr) string {
	if id := embeddedIdent(e); id != nil {
		return id.Name
	}
	return "?"
}

// embeddedIdent returns the identifier naming an embedded field's type.
func embeddedIdent(e ast.Expr) *ast.Ident {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.SelectorExpr:
			return t.Sel
		case *ast.Ident:
			return t
		default:
			return nil
		}
	}
}

func (x *extractor) collectDefs(p *lpkg) {
	info := p.info
	for _, f := range p.files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				obj := info.Defs[d.Name]
				if d.Recv != nil && len(d.Recv.List) > 0 {
					x.addDef(obj, "method", d.Name.Name, p.path+"."+recvTypeName(d.Recv.List[0].Type), d.Name.Pos())
				} else {
					x.addDef(obj, "function", d.Name.Name, p.path, d.Name.Pos())
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						obj := info.Defs[s.Name]
						kind := "type"
						if s.Assign == token.NoPos && obj != nil {
							switch obj.Type().Underlying().(type) {
							case *types.Struct:
								kind = "struct"
							case *types.Interface:
								kind = "interface"
							}
						}
						x.addDef(obj, kind, s.Name.Name, p.path, s.Name.Pos())
						cont := p.path + "." + s.Name.Name
						switch t := s.Type.(type) {
						case *ast.StructType:
							x.collectFields(info, t, cont)
						case *ast.InterfaceType:
							for _, m := range t.Methods.List {
								if _, ok := m.Type.(*ast.FuncType); ok && len(m.Names) > 0 {
									for _, n := range m.Names {
										x.addDef(info.Defs[n], "method", n.Name, cont, n.Pos())
									}
								}
							}
						}
					case *ast.ValueSpec:
						kind := "variable"
						if d.Tok == token.CONST {
							kind = "constant"
						}
						for _, n := range s.Names {
							if n.Name == "_" {
								continue
							}
							x.addDef(info.Defs[n], kind, n.Name, p.path, n.Pos())
						}
					}
				}
			}
		}
	}
}

func (x *extractor) collectFields(info *types.Info, st *ast.StructType, cont string) {
	for _, fld := range st.Fields.List {
		if len(fld.Names) == 0 {
			if id := embeddedIdent(fld.Type); id != nil {
				x.addDef(info.Defs[id], "field", id.Name, cont, id.Pos())
			}
		}
		for _, n := range fld.Names {
			x.addDef(info.Defs[n], "field", n.Name, cont, n.Pos())
			// fields of an anonymous struct-typed field: container T.field
			if inner, ok := fld.Type.(*ast.StructType); ok {
				x.collectFields(info, inner, cont+"."+n.Name)
			}
		}
	}
}

func unparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

func isInterfaceMethod(f *types.Func) bool {
	sig, ok := f.Type().(*types.Signature)
	if !ok || sig.Recv() == nil {
		return false
	}
	return types.IsInterface(sig.Recv().Type())
}

// go1.21+ builtins that a go1.19 checker reports as undeclared.
var newBuiltins = map[string]bool{"min": true, "max": true, "clear": true}

func (x *extractor) srcText(pos token.Pos) string {
	p := x.l.fset.Position(pos)
	lines, ok := x.srcLine[p.Filename]
	if !ok {
		data, _ := os.ReadFile(p.Filename)
		lines = strings.Split(string(data), "\n")
		x.srcLine[p.Filename] = lines
	}
	if p.Line-1 < len(lines) {
		return strings.TrimSpace(lines[p.Line-1])
	}
	return ""
}

// funcTarget: a call or reference reaching function/method obj.
func (x *extractor) funcTarget(from int, obj *types.Func, ref bool, pos token.Pos) {
	obj = obj.Origin()
	to, local := x.defOf[obj]
	if !local {
		if !ref {
			if isInterfaceMethod(obj) {
				x.calls["external:interface_method"]++
			} else if obj.Pkg() != nil && x.l.pkgs[obj.Pkg().Path()] == nil {
				if sig := obj.Type().(*types.Signature); sig.Recv() != nil {
					x.calls["external:method"]++
				} else {
					x.calls["external:function"]++
				}
			} else {
				x.calls["external:other"]++
			}
		}
		return
	}
	if !ref {
		x.calls["edge"]++
	}
	if from < 0 {
		x.calls["unattributed"]++
		return
	}
	x.addEdge(Edge{Type: "CALLS", From: from, To: to, Dynamic: isInterfaceMethod(obj), Ref: ref})
}

func (x *extractor) unresolved(reason string, call *ast.CallExpr) {
	x.calls["unresolved:"+reason]++
	p := x.l.fset.Position(call.Pos())
	x.unres = append(x.unres, fmt.Sprintf("%s:%d: [%s] %s", x.l.rel(p.Filename), p.Line, reason, x.srcText(call.Pos())))
}

func (x *extractor) walk(p *lpkg, from int, root ast.Node) {
	info := p.info
	handled := map[ast.Node]bool{} // callee nodes (calls, not refs)
	ast.Inspect(root, func(n ast.Node) bool {
		switch e := n.(type) {
		case *ast.CallExpr:
			x.classifyCall(p, from, e, handled)
		case *ast.SelectorExpr:
			if handled[e] {
				return true
			}
			if sel, ok := info.Selections[e]; ok && (sel.Kind() == types.MethodVal || sel.Kind() == types.MethodExpr) {
				handled[e.Sel] = true
				if f, ok := sel.Obj().(*types.Func); ok {
					x.funcTarget(from, f, true, e.Pos())
				}
			}
		case *ast.Ident:
			if handled[e] {
				return true
			}
			if f, ok := info.Uses[e].(*types.Func); ok {
				x.funcTarget(from, f, true, e.Pos())
			}
		}
		return true
	})
}

func (x *extractor) classifyCall(p *lpkg, from int, call *ast.CallExpr, handled map[ast.Node]bool) {
	info := p.info
	fun := unparen(call.Fun)
	if tv, ok := info.Types[fun]; ok {
		if tv.IsType() {
			x.calls["conversion(not counted)"]++
			return
		}
		if tv.IsBuiltin() {
			x.calls["external:builtin"]++
			if id, ok := fun.(*ast.Ident); ok {
				handled[id] = true
			}
			return
		}
	}
	// generic instantiation F[T](...) / x.M[T](...): look through the index
	// when it names a function; an index into a slice/map of funcs is a
	// func value.
	switch ix := fun.(type) {
	case *ast.IndexExpr:
		if isFuncName(info, ix.X) {
			fun = unparen(ix.X)
		}
	case *ast.IndexListExpr:
		if isFuncName(info, ix.X) {
			fun = unparen(ix.X)
		}
	}
	switch f := fun.(type) {
	case *ast.Ident:
		handled[f] = true
		switch obj := info.Uses[f].(type) {
		case *types.Func:
			x.funcTarget(from, obj, false, call.Pos())
		case *types.Var:
			x.calls["external:func_value"]++
		case *types.TypeName:
			x.calls["conversion(not counted)"]++
		case *types.Builtin:
			x.calls["external:builtin"]++
		case nil:
			if newBuiltins[f.Name] {
				x.calls["external:builtin(go1.21+)"]++
			} else {
				x.unresolved("undeclared", call)
			}
		default:
			x.unresolved(fmt.Sprintf("%T", obj), call)
		}
	case *ast.SelectorExpr:
		handled[f] = true
		handled[f.Sel] = true
		if sel, ok := info.Selections[f]; ok {
			switch sel.Kind() {
			case types.MethodVal, types.MethodExpr:
				if len(sel.Index()) > 1 {
					if _, local := x.defOf[sel.Obj().(*types.Func).Origin()]; local {
						x.calls["edge:via_embedding(promoted)"]++
						p := x.l.fset.Position(call.Pos())
						x.promoted = append(x.promoted, fmt.Sprintf("%s:%d: %s", x.l.rel(p.Filename), p.Line, x.srcText(call.Pos())))
					}
				}
				x.funcTarget(from, sel.Obj().(*types.Func), false, call.Pos())
			default:
				x.calls["external:func_value"]++ // func-typed struct field
			}
			return
		}
		switch obj := info.Uses[f.Sel].(type) {
		case *types.Func:
			x.funcTarget(from, obj, false, call.Pos())
		case *types.Var:
			x.calls["external:func_value"]++
		case *types.TypeName:
			x.calls["conversion(not counted)"]++
		case nil:
			if id, ok := unparen(f.X).(*ast.Ident); ok {
				if pn, ok := info.Uses[id].(*types.PkgName); ok {
					if _, failed := x.l.importFail[pn.Imported().Path()]; failed {
						// qualified call into a package whose import failed:
						// certainly not declared in these sources.
						x.calls["external:failed_import"]++
						return
					}
					x.unresolved("not in package", call)
					return
				}
			}
			if tv, ok := info.Types[f.X]; ok && !invalidish(tv.Type) {
				x.unresolved("no such member", call)
			} else {
				// typically a value of a type from a failed import
				x.unresolved("receiver type invalid", call)
			}
		default:
			x.unresolved(fmt.Sprintf("%T", obj), call)
		}
	case *ast.FuncLit:
		x.calls["external:func_value"]++
	default:
		if tv, ok := info.Types[fun]; ok && tv.Type != nil && tv.Type != types.Typ[types.Invalid] {
			x.calls["external:func_value"]++
		} else {
			x.unresolved("callee expression invalid", call)
		}
	}
}

// invalidish: nil, invalid, or pointer(s) to invalid.
func invalidish(t types.Type) bool {
	for {
		switch u := t.(type) {
		case nil:
			return true
		case *types.Pointer:
			t = u.Elem()
			continue
		case *types.Basic:
			return u.Kind() == types.Invalid
		}
		return false
	}
}

func isFuncName(info *types.Info, e ast.Expr) bool {
	switch t := unparen(e).(type) {
	case *ast.Ident:
		_, ok := info.Uses[t].(*types.Func)
		return ok
	case *ast.SelectorExpr:
		if sel, ok := info.Selections[t]; ok {
			return sel.Kind() != types.FieldVal
		}
		_, ok := info.Uses[t.Sel].(*types.Func)
		return ok
	}
	return false
}

func (x *extractor) collectCalls(p *lpkg) {
	info := p.info
	for _, f := range p.files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				from := -1
				if id, ok := x.defOf[info.Defs[d.Name]]; ok && info.Defs[d.Name] != nil {
					from = id
				}
				if d.Body != nil {
					x.walk(p, from, d.Body)
				}
			case *ast.GenDecl:
				if d.Tok != token.VAR && d.Tok != token.CONST {
					continue
				}
				for _, spec := range d.Specs {
					s := spec.(*ast.ValueSpec)
					for i, v := range s.Values {
						owner := -1
						if len(s.Values) == len(s.Names) {
							owner = x.defIDOf(info, s.Names[i])
						} else {
							for _, n := range s.Names { // v := f() with several results
								if owner = x.defIDOf(info, n); owner >= 0 {
									break
								}
							}
						}
						x.walk(p, owner, v)
					}
				}
			}
		}
	}
}

func (x *extractor) defIDOf(info *types.Info, n *ast.Ident) int {
	if n.Name == "_" {
		return -1
	}
	if obj := info.Defs[n]; obj != nil {
		if id, ok := x.defOf[obj]; ok {
			return id
		}
	}
	return -1
}

// localNamed returns the def id of the named type t (through one pointer if
// allowPtr), if declared in these sources.
func (x *extractor) localNamed(t types.Type, allowPtr bool) (int, bool, bool) {
	ptr := false
	if pt, ok := t.(*types.Pointer); ok && allowPtr {
		t, ptr = pt.Elem(), true
	}
	n, ok := t.(*types.Named)
	if !ok {
		return 0, false, false
	}
	id, ok := x.defOf[n.Origin().Obj()]
	return id, ptr, ok
}

func (x *extractor) collectTypeEdges() {
	type tdef struct {
		id  int
		obj *types.TypeName
	}
	var concrete, ifaces []tdef
	for _, p := range x.l.order {
		info := p.info
		for _, f := range p.files {
			for _, decl := range f.Decls {
				d, ok := decl.(*ast.GenDecl)
				if !ok || d.Tok != token.TYPE {
					continue
				}
				for _, spec := range d.Specs {
					s := spec.(*ast.TypeSpec)
					tn, ok := info.Defs[s.Name].(*types.TypeName)
					if !ok || tn.IsAlias() {
						continue
					}
					id := x.defOf[tn]
					named, ok := tn.Type().(*types.Named)
					if !ok || named.TypeParams().Len() > 0 {
						x.calls["generic type skipped for IMPLEMENTS"]++
						continue
					}
					switch t := s.Type.(type) {
					case *ast.InterfaceType:
						for _, m := range t.Methods.List {
							if len(m.Names) == 0 {
								if to, _, ok := x.localNamed(info.TypeOf(m.Type), false); ok {
									x.addEdge(Edge{Type: "EXTENDS", From: id, To: to})
								}
							}
						}
					case *ast.StructType:
						for _, fld := range t.Fields.List {
							if len(fld.Names) == 0 {
								if to, ptr, ok := x.localNamed(info.TypeOf(fld.Type), true); ok {
									x.addEdge(Edge{Type: "EXTENDS", From: id, To: to, Pointer: ptr})
								}
							}
						}
					}
					if it, ok := named.Underlying().(*types.Interface); ok {
						if it.NumMethods() > 0 && it.IsMethodSet() {
							ifaces = append(ifaces, tdef{id, tn})
						}
					} else if named.Underlying() != types.Typ[types.Invalid] {
						concrete = append(concrete, tdef{id, tn})
					}
				}
			}
		}
	}
	for _, t := range concrete {
		for _, i := range ifaces {
			it := i.obj.Type().Underlying().(*types.Interface)
			var recv types.Type = t.obj.Type()
			ptr := false
			if !types.Implements(recv, it) {
				recv = types.NewPointer(recv)
				if !types.Implements(recv, it) {
					continue
				}
				ptr = true
			}
			x.addEdge(Edge{Type: "IMPLEMENTS", From: t.id, To: i.id, Pointer: ptr})
			ms := types.NewMethodSet(recv)
			for k := 0; k < it.NumMethods(); k++ {
				im := it.Method(k)
				to, ok := x.defOf[im.Origin()]
				if !ok {
					x.calls["IMPLEMENTS_METHOD target external (skipped)"]++
					continue
				}
				sel := ms.Lookup(im.Pkg(), im.Name())
				if sel == nil {
					continue
				}
				from, ok := x.defOf[sel.Obj().(*types.Func).Origin()]
				if !ok {
					x.calls["IMPLEMENTS_METHOD source external (skipped)"]++
					continue
				}
				x.addEdge(Edge{Type: "IMPLEMENTS_METHOD", From: from, To: to, Promoted: len(sel.Index()) > 1})
			}
		}
	}
}

// ---------------------------------------------------------------- main

func main() {
	start := time.Now()
	gotool := flag.Bool("gotool", false, "only the packages of `go list ./...`: skip _dirs and nested modules")
	gopath := flag.Bool("gopath", false, "let the source importer find third-party packages in GOPATH (to measure the cost of missing them); default: they fail")
	details := flag.String("details", "", "write type errors, import failures, skipped files and unresolved calls to this file")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: truth [flags] REPO_ROOT OUT.json\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	root, err := filepath.Abs(flag.Arg(0))
	if err != nil {
		fatal(err)
	}
	out := flag.Arg(1)

	// cgo off: no gcc runs, pure-Go variants of net, os/user, ... are used;
	// srcimporter uses &build.Default, so this applies to it too.
	build.Default.CgoEnabled = false
	ctxt := build.Default

	fset := token.NewFileSet()
	l := &loader{
		root:        root,
		fset:        fset,
		pkgs:        map[string]*lpkg{},
		std:         importer.ForCompiler(fset, "source", nil).(types.ImporterFrom),
		allowGopath: *gopath,
		importFail:  map[string]string{},
		parsed:      map[string]*ast.File{},
		alias:       map[string]string{},
	}
	if err := l.discover(&ctxt, *gotool); err != nil {
		fatal(err)
	}
	for _, p := range l.pkgs {
		l.order = append(l.order, p)
	}
	sort.Slice(l.order, func(i, j int) bool { return l.order[i].path < l.order[j].path })
	for _, p := range l.order {
		l.check(p)
	}

	x := &extractor{
		l:       l,
		defOf:   map[types.Object]int{},
		edges:   map[[3]interface{}]*Edge{},
		calls:   map[string]int{},
		srcLine: map[string][]string{},
	}
	for _, p := range l.order {
		x.collectDefs(p)
	}
	for _, p := range l.order {
		x.collectCalls(p)
	}
	x.collectTypeEdges()

	unresolvedN, externalN := 0, 0
	for k, v := range x.calls {
		if strings.HasPrefix(k, "unresolved:") {
			unresolvedN += v
		} else if strings.HasPrefix(k, "external:") {
			externalN += v
		}
	}
	var files []string
	for _, p := range l.order {
		for _, fn := range p.names {
			files = append(files, l.rel(fn))
		}
	}
	sort.Strings(files)
	failPaths := make([]string, 0, len(l.importFail))
	for k := range l.importFail {
		failPaths = append(failPaths, k)
	}
	sort.Strings(failPaths)

	// ---- write JSON (one def / edge per line)
	var buf bytes.Buffer
	mj := func(v interface{}) string {
		b, err := json.Marshal(v)
		if err != nil {
			fatal(err)
		}
		return string(b)
	}
	fmt.Fprintf(&buf, "{\n\"tool\": %s, \"language\": \"go\", \"root\": %s,\n",
		mj("go/types ("+runtime.Version()+")"), mj(root))
	buf.WriteString("\"defs\": [\n")
	for i, d := range x.defs {
		sep := ",\n"
		if i == len(x.defs)-1 {
			sep = "\n"
		}
		buf.WriteString(mj(d) + sep)
	}
	buf.WriteString("],\n\"edges\": [\n")
	perType := map[string]int{}
	for i, k := range x.eorder {
		e := x.edges[k]
		perType[e.Type]++
		sep := ",\n"
		if i == len(x.eorder)-1 {
			sep = "\n"
		}
		buf.WriteString(mj(e) + sep)
	}
	buf.WriteString("],\n")
	fmt.Fprintf(&buf, "\"unresolved_calls\": %d,\n\"external_calls\": %d,\n", unresolvedN, externalN)
	fmt.Fprintf(&buf, "\"call_breakdown\": %s,\n", mj(x.calls))
	fmt.Fprintf(&buf, "\"build\": %s,\n", mj(map[string]interface{}{
		"goos": ctxt.GOOS, "goarch": ctxt.GOARCH, "cgo": false, "gotool_only": *gotool, "gopath_third_party": *gopath}))
	fmt.Fprintf(&buf, "\"type_errors\": %d,\n\"import_failures\": %s,\n", len(l.typeErrors), mj(l.importFail))
	fmt.Fprintf(&buf, "\"files\": %s\n}\n", mj(files))
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		fatal(err)
	}

	if *details != "" {
		fh, err := os.Create(*details)
		if err != nil {
			fatal(err)
		}
		w := bufio.NewWriter(fh)
		fmt.Fprintf(w, "# import failures (%d)\n", len(failPaths))
		for _, k := range failPaths {
			fmt.Fprintf(w, "%s\t%s\n", k, l.importFail[k])
		}
		fmt.Fprintf(w, "\n# skipped (%d)\n", len(l.skipped))
		for _, s := range l.skipped {
			fmt.Fprintln(w, s)
		}
		fmt.Fprintf(w, "\n# type errors (%d)\n", len(l.typeErrors))
		for _, s := range l.typeErrors {
			if strings.HasPrefix(s, root+"/") {
				s = s[len(root)+1:]
			}
			fmt.Fprintln(w, s)
		}
		fmt.Fprintf(w, "\n# unresolved calls (%d)\n", len(x.unres))
		for _, s := range x.unres {
			fmt.Fprintln(w, s)
		}
		fmt.Fprintf(w, "\n# calls of methods promoted through embedding (%d)\n", len(x.promoted))
		for _, s := range x.promoted {
			fmt.Fprintln(w, s)
		}
		keys := make([]string, 0, len(x.calls))
		for k := range x.calls {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(w, "\n# call breakdown\n")
		for _, k := range keys {
			fmt.Fprintf(w, "%s\t%d\n", k, x.calls[k])
		}
		w.Flush()
		fh.Close()
	}

	typeNames := make([]string, 0, len(perType))
	for k := range perType {
		typeNames = append(typeNames, k)
	}
	sort.Strings(typeNames)
	var es []string
	for _, k := range typeNames {
		es = append(es, fmt.Sprintf("%s=%d", k, perType[k]))
	}
	fmt.Printf("%s: pkgs=%d files=%d defs=%d edges=%d [%s] unresolved=%d external=%d type_errors=%d failed_imports=%d [%s] wall=%.2fs\n",
		filepath.Base(root), len(l.order), len(files), len(x.defs), len(x.eorder), strings.Join(es, " "),
		unresolvedN, externalN, len(l.typeErrors), len(failPaths), strings.Join(failPaths, " "),
		time.Since(start).Seconds())
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "truth:", err)
	os.Exit(1)
}
