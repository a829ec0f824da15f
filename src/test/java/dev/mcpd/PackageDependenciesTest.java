package dev.mcpd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The layout shows the architecture: which package of {@code src/main/java/dev/mcpd} may import which. Read from the
 * sources' own {@code import} lines (and fully qualified uses), so the test sees what the compiler sees.
 */
class PackageDependenciesTest {

    private static final Path SOURCES = Path.of("src/main/java/dev/mcpd");
    private static final Pattern USE = Pattern.compile("\\bdev\\.mcpd\\.([a-z]+)\\.[A-Z]");

    /** What each package may import: the map a newcomer reads in docs/development.md. */
    private static final Map<String, Set<String>> ALLOWED = Map.ofEntries(
            Map.entry("config", Set.of()),
            Map.entry("disk", Set.of()),
            Map.entry("spool", Set.of("disk")),
            Map.entry("logs", Set.of()),
            Map.entry("routing", Set.of()),
            Map.entry("wire", Set.of("config")),
            Map.entry("tls", Set.of("config", "logs")),
            Map.entry("http", Set.of("config", "logs", "routing", "tls", "wire")),
            Map.entry("ingest", Set.of("http", "endpoint", "spool", "config", "logs", "routing", "wire")),
            Map.entry("upstream", Set.of("config", "wire")),
            Map.entry("delivery", Set.of("upstream", "spool", "config", "logs", "routing", "tls", "wire")),
            Map.entry("endpoint", Set.of("delivery", "spool", "config", "routing", "wire")),
            Map.entry("observability", Set.of("http", "delivery", "upstream", "spool", "config", "logs", "routing",
                    "wire")),
            Map.entry("store", Set.of("disk", "logs", "wire")),
            Map.entry("source", Set.of("store", "config", "logs", "wire")),
            Map.entry("collector", Set.of("http", "observability", "store", "source", "disk", "config", "logs",
                    "routing", "wire")),
            Map.entry("relay", Set.of("http", "ingest", "endpoint", "delivery", "upstream", "observability", "spool", "config", "routing")),
            Map.entry("cli", Set.of("relay", "collector", "spool", "config", "logs")));

    static Map<String, Set<String>> imports() throws IOException {
        Map<String, Set<String>> uses = new TreeMap<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                String from = SOURCES.relativize(file).getName(0).toString();
                Set<String> to = uses.computeIfAbsent(from, unused -> new TreeSet<>());
                Matcher use = USE.matcher(Files.readString(file));
                while (use.find()) {
                    if (!use.group(1).equals(from)) {
                        to.add(use.group(1));
                    }
                }
            }
        }
        return uses;
    }

    @Test
    void everyPackageImportsOnlyWhatItMay() throws IOException {
        Map<String, Set<String>> uses = imports();
        assertEquals(ALLOWED.keySet(), uses.keySet(), "every package is in the map, and the map names no other");
        List<String> wrong = new ArrayList<>();
        uses.forEach((from, to) -> to.stream().filter(t -> !ALLOWED.get(from).contains(t))
                .forEach(t -> wrong.add(from + " -> " + t)));
        assertEquals(List.of(), wrong);
    }

    @Test
    void noPackageDependsOnItselfThroughOthers() throws IOException {
        Map<String, Set<String>> uses = imports();
        for (String start : uses.keySet()) {
            Deque<String> todo = new ArrayDeque<>(uses.get(start));
            Set<String> seen = new TreeSet<>();
            while (!todo.isEmpty()) {
                String next = todo.pop();
                assertTrue(!next.equals(start), "a cycle through " + start + ": " + uses);
                if (seen.add(next)) {
                    todo.addAll(uses.getOrDefault(next, Set.of()));
                }
            }
        }
    }

    /**
     * The status, metrics and spool answers read delivery through its small interfaces ({@code WorkerLoad},
     * {@code FailedAttempts}, {@code RejectedCounts}), never a class that does the work: delivery may change how it
     * delivers without the pages that show it following.
     */
    @Test
    void observabilityReadsDeliveryOnlyThroughInterfaces() throws IOException, ClassNotFoundException {
        Pattern delivery = Pattern.compile("\\bdev\\.mcpd\\.delivery\\.([A-Z][A-Za-z0-9]*)");
        Set<String> read = new TreeSet<>();
        try (Stream<Path> files = Files.walk(SOURCES.resolve("observability"))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                Matcher use = delivery.matcher(Files.readString(file));
                while (use.find()) {
                    read.add(use.group(1));
                }
            }
        }
        assertTrue(!read.isEmpty(), "observability shows delivery's state");
        List<String> classes = new ArrayList<>();
        for (String name : read) {
            if (!Class.forName("dev.mcpd.delivery." + name).isInterface()) {
                classes.add(name);
            }
        }
        assertEquals(List.of(), classes, "delivery classes observability reads directly");
    }

    /**
     * The storage engines (the spool, the collector's store), the upstreams' state and the Kafka source (a loop on
     * kafka-clients' consumer) are plain Java.
     */
    @Test
    void theSpoolAndTheUpstreamsStateUseNoCamel() throws IOException {
        List<String> camel = new ArrayList<>();
        for (String plain : List.of("spool", "store", "upstream", "source")) {
            try (Stream<Path> files = Files.walk(SOURCES.resolve(plain))) {
                for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                    if (Files.readString(file).contains("org.apache.camel")) {
                        camel.add(SOURCES.relativize(file).toString());
                    }
                }
            }
        }
        assertEquals(List.of(), camel);
    }
}
