package dev.mcpd.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The customising guide's table of shipped route files names every file there is, and only those. */
class RouteTableDocTest {

    @ParameterizedTest
    @ValueSource(strings = {"common", "relay", "serve"})
    void theGuidesTableNamesEveryShippedRouteFile(String folder) throws IOException {
        Set<String> shipped;
        try (Stream<Path> files = Files.list(Path.of("src/main/resources/routes", folder))) {
            shipped = files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".camel.yaml"))
                    .map(n -> n.substring(0, n.length() - ".camel.yaml".length()))
                    .collect(Collectors.toCollection(TreeSet::new));
        }
        String row = Files.readString(Path.of("docs/customising.md")).lines()
                .filter(line -> line.startsWith("| `routes/" + folder + "/` |")).findFirst().orElseThrow();
        String files = row.substring(row.indexOf('|', 2) + 1);
        Set<String> named = new TreeSet<>();
        // The file names are the backticked words that stand first in the cell or after a comma.
        Matcher matcher = Pattern.compile("(?:^ |\\), |, )`([a-z-]+)`").matcher(files);
        while (matcher.find()) {
            named.add(matcher.group(1));
        }
        assertEquals(shipped, named, row);
    }
}
