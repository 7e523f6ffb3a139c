/*
 * Truth.java: the code graph of a Java source tree as javac itself sees it,
 * to measure Signpost's tree-sitter indexer against.
 *
 * It parses and attributes every .java file under SOURCE_DIR (except
 * module-info.java: the sources are compiled as plain class-path sources)
 * with the JDK's own compiler (JavacTask from
 * ToolProvider.getSystemJavaCompiler(), parse() + analyze()), then walks the
 * attributed trees with the com.sun.source API (TreePathScanner,
 * Trees.getElement, SourcePositions, LineMap) and writes one JSON file:
 *
 *   defs:  classes, interfaces (annotation types too), enums (records are
 *          "class"), methods, constructors and fields (enum constants too)
 *          written in the sources, each at the line of its name identifier;
 *   edges: CALLS (method invocations, `new`, explicit this(...)/super(...),
 *          method references marked "ref"), EXTENDS, IMPLEMENTS, OVERRIDES,
 *          between those defs only, deduplicated on (from, to, type);
 *   unresolved_calls: call sites javac could not resolve (missing
 *          dependencies); external_calls: call sites resolving to anything
 *          not declared in the sources (JDK, dependencies, implicit members).
 *
 * Missing third-party dependencies do not stop it: diagnostics are collected,
 * never fatal, and javac is told to attribute despite errors
 * (-XDshould-stop.ifError=FLOW). The conventions are in README.md here.
 *
 * Run it through run.sh (which compiles this file into a temporary directory):
 *   bench/truth/java/run.sh REPO_ROOT SOURCE_DIR OUT.json
 * or by hand:
 *   javac -d /tmp/x Truth.java && java -cp /tmp/x Truth REPO_ROOT SOURCE_DIR OUT.json
 * It prints a one-line summary on stdout and diagnostics figures on stderr.
 */

import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.ExpressionStatementTree;
import com.sun.source.tree.LineMap;
import com.sun.source.tree.MemberReferenceTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.ModifiersTree;
import com.sun.source.tree.NewClassTree;
import com.sun.source.tree.StatementTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.TypeParameterTree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreePath;
import com.sun.source.util.TreePathScanner;
import com.sun.source.util.Trees;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import javax.lang.model.element.Element;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.ExecutableElement;
import javax.lang.model.element.Modifier;
import javax.lang.model.element.NestingKind;
import javax.lang.model.element.PackageElement;
import javax.lang.model.element.TypeElement;
import javax.lang.model.type.DeclaredType;
import javax.lang.model.type.TypeKind;
import javax.lang.model.type.TypeMirror;
import javax.lang.model.util.ElementFilter;
import javax.lang.model.util.Elements;
import javax.lang.model.util.Types;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

public final class Truth {

    /** One definition. */
    static final class Def {
        final int id;
        final String kind, name, container, file;
        final long line;

        Def(int id, String kind, String name, String container, String file, long line) {
            this.id = id;
            this.kind = kind;
            this.name = name;
            this.container = container;
            this.file = file;
            this.line = line;
        }
    }

    /** One deduplicated edge; ref is true only if every occurrence was a method reference. */
    static final class Edge {
        final String type;
        final int from, to;
        boolean implicit, ref;

        Edge(String type, int from, int to) {
            this.type = type;
            this.from = from;
            this.to = to;
        }
    }

    private final Path root;
    private final Trees trees;
    private final Elements elements;
    private final Types types;
    private final SourcePositions positions;

    private final List<Def> defs = new ArrayList<>();
    private final Map<Element, Integer> ids = new IdentityHashMap<>();
    private final Map<String, Edge> edges = new LinkedHashMap<>();
    private long unresolvedCalls, externalCalls;
    /** Of externalCalls: calls to members of source types javac made up (values(), implicit record members...). */
    private long implicitMemberCalls;
    /** Call sites whose callee is an implicit constructor of a source class (edge to the class). */
    private long implicitCtorCalls;
    /** Enum constants written without arguments whose constructor is implicit (not counted anywhere). */
    private long skippedEnumCreations;
    private long defsWithoutSymbol, callsWithoutSymbol, anonFallbacks;
    private final Map<String, Long> unresolvedSamples = new TreeMap<>();

    Truth(Path root, JavacTask task) {
        this.root = root;
        this.trees = Trees.instance(task);
        this.elements = task.getElements();
        this.types = task.getTypes();
        this.positions = trees.getSourcePositions();
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 3) {
            System.err.println("usage: java Truth REPO_ROOT SOURCE_DIR OUT.json");
            System.exit(2);
        }
        long t0 = System.nanoTime();
        Path root = Paths.get(args[0]).toAbsolutePath().normalize();
        Path srcDir = Paths.get(args[1]);
        if (!srcDir.isAbsolute()) srcDir = root.resolve(srcDir);
        srcDir = srcDir.normalize();
        Path out = Paths.get(args[2]);

        List<Path> files;
        try (Stream<Path> s = Files.walk(srcDir)) {
            files = s.filter(p -> Files.isRegularFile(p) && p.toString().endsWith(".java"))
                    .filter(p -> !p.getFileName().toString().equals("module-info.java"))
                    .sorted(Comparator.comparing(p -> root.relativize(p).toString().replace('\\', '/')))
                    .collect(Collectors.toList());
        }
        if (files.isEmpty()) {
            System.err.println("no .java files under " + srcDir);
            System.exit(1);
        }

        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        if (compiler == null) {
            System.err.println("no system Java compiler: run this with a JDK (jdk.compiler module), not a JRE");
            System.exit(1);
        }
        DiagnosticCollector<JavaFileObject> diags = new DiagnosticCollector<>();
        StandardJavaFileManager fm = compiler.getStandardFileManager(diags, null, StandardCharsets.UTF_8);
        // An empty directory as class path and source path: nothing but the
        // given files and the JDK is seen (no module-info.java from a source
        // path turning this into a module compilation, nothing from the cwd).
        Path empty = Files.createTempDirectory("truth-empty");
        List<String> options = List.of(
                "-proc:none", "-implicit:none", "-encoding", "UTF-8", "-nowarn", "-Xlint:none",
                "-Xmaxerrs", "1000000", "-Xmaxwarns", "0",
                "-classpath", empty.toString(), "-sourcepath", empty.toString(),
                // Keep attributing despite errors (missing dependencies):
                // javac's default is to stop before ATTR once there is an error.
                "-XDshould-stop.ifError=FLOW", "-XDshould-stop.ifNoError=FLOW");
        Iterable<? extends JavaFileObject> units = fm.getJavaFileObjectsFromPaths(files);
        JavacTask task = (JavacTask) compiler.getTask(null, fm, diags, options, null, units);
        List<CompilationUnitTree> cus = new ArrayList<>();
        for (CompilationUnitTree cu : task.parse()) cus.add(cu);
        task.analyze();
        Files.deleteIfExists(empty);
        cus.sort(Comparator.comparing(cu -> Paths.get(cu.getSourceFile().toUri()).toString()));

        Truth t = new Truth(root, task);
        for (CompilationUnitTree cu : cus) t.collectDefs(cu);
        for (CompilationUnitTree cu : cus) t.collectEdges(cu);

        String version = System.getProperty("java.version");
        if (out.getParent() != null) Files.createDirectories(out.getParent());
        try (Writer w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            t.write(w, "javac " + version + " (com.sun.source)", root.toString());
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;

        // Diagnostics figures (stderr).
        Map<String, Long> byCode = new TreeMap<>();
        Set<String> errFiles = new HashSet<>();
        long errors = 0;
        for (Diagnostic<? extends JavaFileObject> d : diags.getDiagnostics()) {
            if (d.getKind() != Diagnostic.Kind.ERROR) continue;
            errors++;
            byCode.merge(d.getCode(), 1L, Long::sum);
            if (d.getSource() != null) errFiles.add(d.getSource().toUri().toString());
        }
        System.err.printf("%s: javac errors %d in %d of %d files; by code: %s%n",
                root.getFileName(), errors, errFiles.size(), files.size(), byCode);
        int shown = 0;
        for (Diagnostic<? extends JavaFileObject> d : diags.getDiagnostics()) {
            if (d.getKind() != Diagnostic.Kind.ERROR || shown++ >= 8) continue;
            String f = d.getSource() == null ? "?" : root.relativize(Paths.get(d.getSource().toUri())).toString();
            System.err.printf("  %s:%d: %s%n", f, d.getLineNumber(), d.getMessage(null).split("\n")[0]);
        }
        if (!t.unresolvedSamples.isEmpty()) System.err.println("  unresolved call sites (first): " + t.unresolvedSamples.keySet());
        System.err.printf("  implicit-member calls (in external_calls) %d, implicit-constructor call sites %d, "
                        + "enum constants with a body but no constructor %d, defs without symbol %d, calls without symbol %d, anonymous classes without super(...) %d%n",
                t.implicitMemberCalls, t.implicitCtorCalls, t.skippedEnumCreations, t.defsWithoutSymbol, t.callsWithoutSymbol,
                t.anonFallbacks);

        System.out.println(t.summary(root.getFileName().toString(), files.size(), ms));
    }

    // ------------------------------------------------------------------
    // Definitions.

    private void collectDefs(CompilationUnitTree cu) {
        String file = root.relativize(Paths.get(cu.getSourceFile().toUri())).toString().replace('\\', '/');
        CharSequence text = source(cu);
        LineMap lines = cu.getLineMap();
        new TreePathScanner<Void, Void>() {
            @Override
            public Void visitClass(ClassTree ct, Void v) {
                if (!written(cu, ct)) return null;
                Element e = trees.getElement(getCurrentPath());
                if (e instanceof TypeElement) {
                    TypeElement te = (TypeElement) e;
                    if (!ct.getSimpleName().toString().isEmpty()) { // not an anonymous class (its members are defs)
                        long pos = nameOfType(cu, text, ct);
                        add(te, typeKind(te.getKind()), te.getSimpleName().toString(), typeContainer(te), file, lines, pos);
                    }
                    // Fields, in source order, so that `int a, b;` finds b after a.
                    long prevStart = -2, prevEnd = -1;
                    for (Tree m : ct.getMembers()) {
                        if (m instanceof VariableTree && written(cu, m)) {
                            long start = positions.getStartPosition(cu, m);
                            long after = start == prevStart ? prevEnd : -1;
                            fieldDef(cu, text, lines, file, (VariableTree) m, after);
                            prevStart = start;
                            prevEnd = positions.getEndPosition(cu, m);
                        }
                    }
                } else if (e == null) {
                    defsWithoutSymbol++;
                }
                return super.visitClass(ct, v);
            }

            @Override
            public Void visitMethod(MethodTree mt, Void v) {
                if (!written(cu, mt)) return null; // default constructors, implicit record members
                Element e = trees.getElement(getCurrentPath());
                if (e instanceof ExecutableElement && elements.getOrigin(e) == Elements.Origin.EXPLICIT) {
                    ExecutableElement me = (ExecutableElement) e;
                    TypeElement owner = (TypeElement) me.getEnclosingElement();
                    boolean ctor = me.getKind() == ElementKind.CONSTRUCTOR;
                    String name = ctor ? owner.getSimpleName().toString() : me.getSimpleName().toString();
                    long pos = nameOfMethod(cu, text, mt, name);
                    add(me, ctor ? "constructor" : "method", name, typeName(owner), file, lines, pos);
                } else if (e == null) {
                    defsWithoutSymbol++;
                }
                return super.visitMethod(mt, v);
            }
        }.scan(cu, null);
    }

    private void fieldDef(CompilationUnitTree cu, CharSequence text, LineMap lines, String file, VariableTree vt, long after) {
        Element e = trees.getElement(TreePath.getPath(cu, vt));
        if (e == null) {
            defsWithoutSymbol++;
            return;
        }
        if (e.getKind() != ElementKind.FIELD && e.getKind() != ElementKind.ENUM_CONSTANT) return;
        String name = vt.getName().toString();
        long declStart = positions.getStartPosition(cu, vt), declEnd = positions.getEndPosition(cu, vt);
        long from = Math.max(declStart, endOf(cu, vt.getModifiers()));
        long typeEnd = vt.getType() == null ? -1 : positions.getEndPosition(cu, vt.getType());
        long pos = -1;
        if (after > 0) pos = findIdent(text, after, declEnd, name);
        if (pos < 0 && typeEnd > 0) pos = findIdent(text, typeEnd, declEnd, name);
        if (pos < 0) pos = findIdent(text, from, declEnd, name); // `int a[]`, enum constants
        if (pos < 0) pos = declStart;
        add(e, "field", name, typeName((TypeElement) e.getEnclosingElement()), file, lines, pos);
    }

    private void add(Element e, String kind, String name, String container, String file, LineMap lines, long pos) {
        if (ids.containsKey(e)) return;
        int id = defs.size();
        defs.add(new Def(id, kind, name, container, file, lines.getLineNumber(pos)));
        ids.put(e, id);
    }

    private static String typeKind(ElementKind k) {
        switch (k) {
            case INTERFACE:
            case ANNOTATION_TYPE:
                return "interface";
            case ENUM:
                return "enum";
            default:
                return "class"; // CLASS, RECORD
        }
    }

    /** The qualified name of a type; for a local or anonymous one (no canonical name), its binary name. */
    private String typeName(TypeElement te) {
        String q = te.getQualifiedName().toString();
        if (te.getNestingKind() == NestingKind.LOCAL || te.getNestingKind() == NestingKind.ANONYMOUS || q.isEmpty()) {
            return elements.getBinaryName(te).toString();
        }
        return q;
    }

    /** A type's container: its package, or the type enclosing it (a local type: the type of its method). */
    private String typeContainer(TypeElement te) {
        Element up = te.getEnclosingElement();
        while (up != null && !(up instanceof TypeElement) && !(up instanceof PackageElement)) up = up.getEnclosingElement();
        if (up instanceof TypeElement) return typeName((TypeElement) up);
        if (up instanceof PackageElement) return ((PackageElement) up).getQualifiedName().toString();
        return "";
    }

    // ------------------------------------------------------------------
    // Where names are written: the name token, found by scanning the source
    // text from the end of what precedes it (modifiers, type parameters,
    // return type), skipping comments, literals and other tokens.

    private long nameOfType(CompilationUnitTree cu, CharSequence text, ClassTree ct) {
        long start = positions.getStartPosition(cu, ct);
        long from = Math.max(start, endOf(cu, ct.getModifiers()));
        long p = findIdent(text, from, positions.getEndPosition(cu, ct), ct.getSimpleName().toString());
        return p >= 0 ? p : start;
    }

    private long nameOfMethod(CompilationUnitTree cu, CharSequence text, MethodTree mt, String name) {
        long start = positions.getStartPosition(cu, mt);
        long from = Math.max(start, endOf(cu, mt.getModifiers()));
        for (TypeParameterTree tp : mt.getTypeParameters()) from = Math.max(from, positions.getEndPosition(cu, tp));
        if (mt.getReturnType() != null) from = Math.max(from, positions.getEndPosition(cu, mt.getReturnType()));
        long p = findIdent(text, from, positions.getEndPosition(cu, mt), name);
        return p >= 0 ? p : start;
    }

    private long endOf(CompilationUnitTree cu, ModifiersTree mods) {
        if (mods == null) return -1;
        long s = positions.getStartPosition(cu, mods), e = positions.getEndPosition(cu, mods);
        return s >= 0 && e > s ? e : -1;
    }

    /** The offset of the first identifier token equal to name in [from, limit), or -1. */
    static long findIdent(CharSequence s, long from, long limit, String name) {
        int n = s.length();
        int end = limit > 0 ? (int) Math.min(limit, n) : n;
        int i = (int) Math.max(0, from);
        while (i < end) {
            char c = s.charAt(i);
            if (c == '/' && i + 1 < n && s.charAt(i + 1) == '/') {
                while (i < n && s.charAt(i) != '\n') i++;
            } else if (c == '/' && i + 1 < n && s.charAt(i + 1) == '*') {
                int j = indexOf(s, "*/", i + 2);
                i = j < 0 ? n : j + 2;
            } else if (c == '"' && i + 2 < n && s.charAt(i + 1) == '"' && s.charAt(i + 2) == '"') {
                int j = indexOf(s, "\"\"\"", i + 3);
                i = j < 0 ? n : j + 3;
            } else if (c == '"' || c == '\'') {
                i++;
                while (i < n && s.charAt(i) != c && s.charAt(i) != '\n') i += s.charAt(i) == '\\' ? 2 : 1;
                i++;
            } else if (Character.isJavaIdentifierStart(c)) {
                int j = i;
                while (j < n && Character.isJavaIdentifierPart(s.charAt(j))) j++;
                if (j - i == name.length() && s.subSequence(i, j).toString().equals(name)) return i;
                i = j;
            } else if (Character.isDigit(c)) {
                while (i < n && (Character.isJavaIdentifierPart(s.charAt(i)) || s.charAt(i) == '.')) i++;
            } else {
                i++;
            }
        }
        return -1;
    }

    private static int indexOf(CharSequence s, String what, int from) {
        return s.toString().indexOf(what, from);
    }

    private final Map<CompilationUnitTree, String> texts = new IdentityHashMap<>();

    private CharSequence source(CompilationUnitTree cu) {
        return texts.computeIfAbsent(cu, c -> {
            try {
                return c.getSourceFile().getCharContent(true).toString();
            } catch (IOException ex) {
                throw new RuntimeException(ex);
            }
        });
    }

    /** Whether a tree is written in the source: javac's own additions (default constructors, implicit super()) have no extent. */
    private boolean written(CompilationUnitTree cu, Tree t) {
        long s = positions.getStartPosition(cu, t), e = positions.getEndPosition(cu, t);
        return s >= 0 && e > s;
    }

    // ------------------------------------------------------------------
    // Edges.

    private void collectEdges(CompilationUnitTree cu) {
        new TreePathScanner<Void, Void>() {
            /** The innermost enclosing def a call is from: a method, a constructor, or a class. */
            final Deque<Integer> owners = new ArrayDeque<>();

            @Override
            public Void visitClass(ClassTree ct, Void v) {
                if (!written(cu, ct)) return null;
                Element e = trees.getElement(getCurrentPath());
                Integer id = e == null ? null : ids.get(e);
                if (e instanceof TypeElement) {
                    TypeElement te = (TypeElement) e;
                    if (id != null) hierarchy(te, id);
                }
                if (id != null) owners.push(id);
                try {
                    return super.visitClass(ct, v);
                } finally {
                    if (id != null) owners.pop();
                }
            }

            @Override
            public Void visitMethod(MethodTree mt, Void v) {
                if (!written(cu, mt)) return null;
                Element e = trees.getElement(getCurrentPath());
                Integer id = e == null ? null : ids.get(e);
                if (id != null && e instanceof ExecutableElement) overrides((ExecutableElement) e, id);
                if (id != null) owners.push(id);
                try {
                    return super.visitMethod(mt, v);
                } finally {
                    if (id != null) owners.pop();
                }
            }

            @Override
            public Void visitMethodInvocation(MethodInvocationTree mit, Void v) {
                if (written(cu, mit)) call(trees.getElement(getCurrentPath()), false, mit);
                return super.visitMethodInvocation(mit, v);
            }

            @Override
            public Void visitNewClass(NewClassTree nct, Void v) {
                if (written(cu, nct)) {
                    Element ctor = trees.getElement(getCurrentPath());
                    Tree parent = getCurrentPath().getParentPath().getLeaf();
                    boolean enumConstant = parent instanceof VariableTree
                            && trees.getElement(getCurrentPath().getParentPath()) != null
                            && trees.getElement(getCurrentPath().getParentPath()).getKind() == ElementKind.ENUM_CONSTANT;
                    if (nct.getClassBody() != null) ctor = anonymousSuper(getCurrentPath(), ctor);
                    if (enumConstant && ctor instanceof ExecutableElement && !ids.containsKey(ctor)) {
                        skippedEnumCreations++; // `A { ... }` of an enum without constructors
                    } else {
                        call(ctor, false, nct);
                    }
                }
                return super.visitNewClass(nct, v);
            }

            @Override
            public Void visitMemberReference(MemberReferenceTree mrt, Void v) {
                if (written(cu, mrt)) call(trees.getElement(getCurrentPath()), true, mrt);
                return super.visitMemberReference(mrt, v);
            }

            private void call(Element callee, boolean ref, Tree site) {
                if (owners.isEmpty()) return; // not inside any def (cannot happen for written code)
                int from = owners.peek();
                if (callee == null) {
                    callsWithoutSymbol++;
                    unresolved(site);
                    return;
                }
                if (callee instanceof TypeElement && callee.asType().getKind() != TypeKind.ERROR) {
                    // `new I() { ... }` of an interface I: no constructor of I runs.
                    Integer to = ids.get(callee);
                    if (to != null) {
                        edge("CALLS", from, to, true, ref);
                        implicitCtorCalls++;
                    } else {
                        externalCalls++;
                    }
                    return;
                }
                if (!(callee instanceof ExecutableElement) || callee.asType() == null
                        || callee.asType().getKind() == TypeKind.ERROR) {
                    unresolved(site);
                    return;
                }
                Integer to = ids.get(callee);
                if (to != null) {
                    edge("CALLS", from, to, false, ref);
                    return;
                }
                Integer owner = ids.get(callee.getEnclosingElement());
                if (owner != null && callee.getKind() == ElementKind.CONSTRUCTOR) {
                    edge("CALLS", from, owner, true, ref); // implicit constructor of a source class
                    implicitCtorCalls++;
                    return;
                }
                if (owner != null) implicitMemberCalls++; // values(), valueOf(), implicit record accessors
                externalCalls++;
            }

            private void unresolved(Tree site) {
                unresolvedCalls++;
                if (unresolvedSamples.size() < 6) {
                    long line = cu.getLineMap().getLineNumber(positions.getStartPosition(cu, site));
                    String f = root.relativize(Paths.get(cu.getSourceFile().toUri())).toString();
                    String s = site.toString().replaceAll("\\s+", " ");
                    unresolvedSamples.put(f + ":" + line + " " + (s.length() > 60 ? s.substring(0, 60) + "..." : s), 1L);
                }
            }
        }.scan(cu, null);
    }

    /**
     * The constructor that `new T(args) { ... }` runs: the anonymous class's
     * own constructor is javac's, whose body is `super(args)`; that call's
     * symbol is the constructor of T chosen by overload resolution. For an
     * interface T (no constructor of T runs), the interface itself.
     */
    private Element anonymousSuper(TreePath newPath, Element anonCtor) {
        NewClassTree nct = (NewClassTree) newPath.getLeaf();
        TreePath bodyPath = new TreePath(newPath, nct.getClassBody());
        Element anon = trees.getElement(bodyPath);
        if (anon instanceof TypeElement && !((TypeElement) anon).getInterfaces().isEmpty()) {
            Element i = types.asElement(((TypeElement) anon).getInterfaces().get(0));
            if (i != null) return i;
        }
        for (Tree m : nct.getClassBody().getMembers()) {
            if (!(m instanceof MethodTree)) continue;
            MethodTree mt = (MethodTree) m;
            if (!mt.getName().contentEquals("<init>") || mt.getBody() == null) continue;
            TreePath blockPath = new TreePath(new TreePath(bodyPath, mt), mt.getBody());
            for (StatementTree st : mt.getBody().getStatements()) {
                if (st instanceof ExpressionStatementTree
                        && ((ExpressionStatementTree) st).getExpression() instanceof MethodInvocationTree) {
                    MethodInvocationTree sup = (MethodInvocationTree) ((ExpressionStatementTree) st).getExpression();
                    if (sup.getMethodSelect().toString().equals("super")) {
                        Element e = trees.getElement(new TreePath(new TreePath(blockPath, st), sup));
                        if (e != null) return e;
                    }
                }
            }
        }
        anonFallbacks++;
        // No super(...) found: the superclass's only constructor, else the class.
        if (anon instanceof TypeElement) {
            Element s = types.asElement(((TypeElement) anon).getSuperclass());
            if (s instanceof TypeElement) {
                List<ExecutableElement> cs = ElementFilter.constructorsIn(s.getEnclosedElements());
                return cs.size() == 1 ? cs.get(0) : s;
            }
        }
        return anonCtor;
    }

    private void hierarchy(TypeElement te, int id) {
        boolean iface = te.getKind().isInterface();
        if (!iface) {
            Integer sup = target(te.getSuperclass());
            if (sup != null) edge("EXTENDS", id, sup, false, false);
        }
        for (TypeMirror i : te.getInterfaces()) {
            Integer to = target(i);
            if (to != null) edge(iface ? "EXTENDS" : "IMPLEMENTS", id, to, false, false);
        }
    }

    private Integer target(TypeMirror t) {
        if (t == null || t.getKind() != TypeKind.DECLARED) return null;
        return ids.get(((DeclaredType) t).asElement());
    }

    /**
     * OVERRIDES: for each direct supertype path, the nearest type declaring a
     * method m overrides (Elements.overrides, in the context of m's class);
     * an edge when that method is declared in the sources. A path stops at
     * the first declaration found, in the sources or not.
     */
    private void overrides(ExecutableElement m, int id) {
        if (m.getKind() != ElementKind.METHOD || m.getModifiers().contains(Modifier.STATIC)
                || m.getModifiers().contains(Modifier.PRIVATE)) return;
        TypeElement owner = (TypeElement) m.getEnclosingElement();
        Deque<TypeMirror> queue = new ArrayDeque<>(types.directSupertypes(owner.asType()));
        Set<Element> seen = new HashSet<>();
        while (!queue.isEmpty()) {
            TypeMirror st = queue.poll();
            if (st.getKind() != TypeKind.DECLARED) continue;
            TypeElement se = (TypeElement) ((DeclaredType) st).asElement();
            if (!seen.add(se)) continue;
            ExecutableElement found = null;
            for (ExecutableElement c : ElementFilter.methodsIn(se.getEnclosedElements())) {
                if (c.getSimpleName().equals(m.getSimpleName()) && elements.overrides(m, c, owner)) {
                    found = c;
                    break;
                }
            }
            if (found != null) {
                Integer to = ids.get(found);
                if (to != null) edge("OVERRIDES", id, to, false, false);
            } else {
                queue.addAll(types.directSupertypes(st));
            }
        }
    }

    private void edge(String type, int from, int to, boolean implicit, boolean ref) {
        String key = from + " " + to + " " + type;
        Edge e = edges.get(key);
        if (e == null) {
            e = new Edge(type, from, to);
            e.implicit = implicit;
            e.ref = ref;
            edges.put(key, e);
        } else {
            e.ref &= ref;
        }
    }

    // ------------------------------------------------------------------
    // Output.

    private void write(Writer w, String tool, String rootName) throws IOException {
        w.write("{\n  \"tool\": " + q(tool) + ", \"language\": \"java\", \"root\": " + q(rootName) + ",\n");
        w.write("  \"defs\": [");
        for (int i = 0; i < defs.size(); i++) {
            Def d = defs.get(i);
            w.write(i == 0 ? "\n    " : ",\n    ");
            w.write("{\"id\": " + d.id + ", \"kind\": " + q(d.kind) + ", \"name\": " + q(d.name)
                    + ", \"container\": " + q(d.container) + ", \"file\": " + q(d.file) + ", \"line\": " + d.line + "}");
        }
        w.write("\n  ],\n  \"edges\": [");
        List<Edge> sorted = new ArrayList<>(edges.values());
        sorted.sort(Comparator.comparing((Edge e) -> e.type).thenComparingInt(e -> e.from).thenComparingInt(e -> e.to));
        for (int i = 0; i < sorted.size(); i++) {
            Edge e = sorted.get(i);
            w.write(i == 0 ? "\n    " : ",\n    ");
            w.write("{\"type\": " + q(e.type) + ", \"from\": " + e.from + ", \"to\": " + e.to
                    + (e.implicit ? ", \"implicit\": true" : "") + (e.ref ? ", \"ref\": true" : "") + "}");
        }
        w.write("\n  ],\n  \"unresolved_calls\": " + unresolvedCalls + ",\n  \"external_calls\": " + externalCalls + "\n}\n");
    }

    private String summary(String name, int files, long ms) {
        Map<String, Long> kinds = new TreeMap<>();
        for (Def d : defs) kinds.merge(d.kind, 1L, Long::sum);
        Map<String, Long> types = new TreeMap<>();
        for (String t : List.of("CALLS", "EXTENDS", "IMPLEMENTS", "OVERRIDES")) types.put(t, 0L);
        for (Edge e : edges.values()) types.merge(e.type, 1L, Long::sum);
        StringBuilder sb = new StringBuilder();
        sb.append(name).append(": files ").append(files).append(", defs ").append(defs.size()).append(' ').append(kinds)
                .append(", edges");
        types.forEach((t, n) -> sb.append(' ').append(t).append(' ').append(n));
        sb.append(", unresolved calls ").append(unresolvedCalls).append(", external calls ").append(externalCalls)
                .append(String.format(", wall %.1f s", ms / 1000.0));
        return sb.toString();
    }

    private static String q(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
                    else sb.append(c);
            }
        }
        return sb.append('"').toString();
    }
}
