package dev.mcpd;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * What no formatter holds for us: every source file's imports in one order (static imports first, then the others,
 * each sorted by name), and types named by their import rather than by a fully qualified name in the code — unless
 * the simple name already means another type in that file. And no main source file over 400 lines.
 */
class SourceStyleTest {

    private static final List<Path> ROOTS = List.of(Path.of("src/main/java"), Path.of("src/test/java"));
    private static final Pattern QUALIFIED = Pattern.compile(
            "(?<![\\w.\"])((?:[a-z][a-z0-9_]*\\.){2,})([A-Z]\\w*)");
    private static final Pattern DECLARED = Pattern.compile("\\b(?:class|interface|record|enum)\\s+([A-Z]\\w*)");
    private static final Pattern STRING = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)'");

    static List<Path> sources() throws IOException {
        List<Path> sources = new ArrayList<>();
        for (Path root : ROOTS) {
            try (Stream<Path> files = Files.walk(root)) {
                files.filter(f -> f.toString().endsWith(".java")).sorted().forEach(sources::add);
            }
        }
        return sources;
    }

    /** The imports of a file as written, and as they would be sorted. */
    static List<String> unsortedImports(List<String> lines) {
        List<String> imports = lines.stream().filter(l -> l.startsWith("import ")).toList();
        Comparator<String> order = Comparator.comparing((String l) -> !l.startsWith("import static "))
                .thenComparing(l -> l.replaceFirst("^import (static )?", "").replace(";", ""));
        return imports.stream().sorted(order).toList().equals(imports) ? List.of() : imports;
    }

    /** Fully qualified type names in code: not in comments, strings or text blocks, nor where the import clashes. */
    static List<String> inlineQualifiedNames(List<String> lines) {
        Map<String, String> imported = new HashMap<>();
        Set<String> declared = new HashSet<>();
        for (String line : lines) {
            if (line.startsWith("import ") && !line.startsWith("import static ")) {
                String name = line.substring("import ".length()).replace(";", "").trim();
                imported.put(name.substring(name.lastIndexOf('.') + 1), name);
            }
            Matcher declaration = DECLARED.matcher(line);
            while (declaration.find()) {
                declared.add(declaration.group(1));
            }
        }
        List<String> found = new ArrayList<>();
        boolean inComment = false;
        boolean inTextBlock = false;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            String trimmed = line.strip();
            if (line.contains("\"\"\"")) {
                inTextBlock ^= (line.split("\"\"\"", -1).length - 1) % 2 == 1;
                continue;
            }
            if (inTextBlock || line.startsWith("import ") || line.startsWith("package ")) {
                continue;
            }
            if (inComment || trimmed.startsWith("/*")) {
                inComment = !line.contains("*/");
                continue;
            }
            if (trimmed.startsWith("*") || trimmed.startsWith("//")) {
                continue;
            }
            String code = STRING.matcher(line).replaceAll("\"\"");
            int comment = code.indexOf("//");
            Matcher qualified = QUALIFIED.matcher(comment < 0 ? code : code.substring(0, comment));
            while (qualified.find()) {
                String simple = qualified.group(2);
                String name = qualified.group(1) + simple;
                boolean clash = declared.contains(simple) || imported.containsKey(simple)
                        && !imported.get(simple).equals(name);
                if (!clash) {
                    found.add((i + 1) + ": " + name);
                }
            }
        }
        return found;
    }

    @Test
    void importsAreSortedStaticFirst() throws IOException {
        List<String> unsorted = new ArrayList<>();
        for (Path source : sources()) {
            if (!unsortedImports(Files.readAllLines(source)).isEmpty()) {
                unsorted.add(source.toString());
            }
        }
        assertEquals(List.of(), unsorted, "imports out of order (static first, then the others, each by name)");
    }

    @Test
    void typesAreNamedByTheirImport() throws IOException {
        List<String> qualified = new ArrayList<>();
        for (Path source : sources()) {
            inlineQualifiedNames(Files.readAllLines(source)).forEach(use -> qualified.add(source + ":" + use));
        }
        assertEquals(List.of(), qualified, "fully qualified names in code: import the type instead");
    }

    @Test
    void noMainFileOutgrowsFourHundredLines() throws IOException {
        List<String> tooLong = new ArrayList<>();
        for (Path source : sources()) {
            int lines = Files.readAllLines(source).size();
            if (source.startsWith(ROOTS.get(0)) && lines > 400) {
                tooLong.add(source + ": " + lines);
            }
        }
        assertEquals(List.of(), tooLong, "split these along their seams");
    }

    @Test
    void theChecksSeeWhatTheyLookFor() {
        assertEquals(2, unsortedImports(List.of("import java.util.Map;", "import java.util.List;")).size());
        assertEquals(List.of(), unsortedImports(List.of("import static org.junit.Assert.fail;", "import a.b.C;",
                "import a.b.C.Inner;")));
        assertEquals(2, unsortedImports(List.of("import a.b.C;", "import static org.junit.Assert.fail;")).size());
        assertEquals(List.of("2: java.util.List"), inlineQualifiedNames(List.of("class A {",
                "    java.util.List<String> names; // a java.util.Set in a comment is fine",
                "    String s = \"java.util.Map\";", "    org.slf4j.Logger other;", "}", "import x.y.Logger;")));
    }
}
