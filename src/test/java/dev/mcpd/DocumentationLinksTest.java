package dev.mcpd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The README and the pages of docs/ link to files and sections that exist, and the README stays a short guide. */
class DocumentationLinksTest {

    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Pattern FENCED = Pattern.compile("```.*?```", Pattern.DOTALL);

    private static List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>(List.of(Path.of("README.md")));
        try (Stream<Path> docs = Files.list(Path.of("docs"))) {
            docs.filter(page -> page.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        return pages;
    }

    @Test
    void everyRelativeLinkNamesAFileAndASectionThatExist() throws IOException {
        List<String> broken = new ArrayList<>();
        for (Path page : pages()) {
            String text = FENCED.matcher(Files.readString(page)).replaceAll("");
            Matcher link = LINK.matcher(text);
            while (link.find()) {
                String target = link.group(1);
                if (target.matches("[a-z]+:.*")) {
                    continue; // https:, mailto:
                }
                int hash = target.indexOf('#');
                String file = hash < 0 ? target : target.substring(0, hash);
                Path resolved = file.isEmpty() ? page : page.resolveSibling(file).normalize();
                if (!Files.exists(resolved)) {
                    broken.add(page + " -> " + target + ": no such file");
                } else if (hash >= 0 && resolved.toString().endsWith(".md")
                        && !anchors(resolved).contains(target.substring(hash + 1))) {
                    broken.add(page + " -> " + target + ": no such section");
                }
            }
        }
        assertEquals(List.of(), broken);
    }

    /** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens. */
    private static List<String> anchors(Path page) throws IOException {
        return FENCED.matcher(Files.readString(page)).replaceAll("").lines().filter(line -> line.startsWith("#"))
                .map(line -> line.replaceFirst("^#+\\s*", "").toLowerCase(Locale.ROOT)
                        .replaceAll("[^\\p{L}\\p{N}_\\- ]", "").replace(' ', '-'))
                .toList();
    }

    @Test
    void theReadmeIsAGuideThatPointsAtTheReference() throws IOException {
        List<String> readme = Files.readAllLines(Path.of("README.md"));
        assertTrue(readme.size() <= 250, "the README is read top to bottom in a few minutes; it has " + readme.size()
                + " lines: move reference material into docs/");
        String text = String.join("\n", readme);
        try (Stream<Path> docs = Files.list(Path.of("docs"))) {
            List<String> unlisted = docs.map(page -> "docs/" + page.getFileName())
                    .filter(name -> name.endsWith(".md") && !text.contains("](" + name + ")")).sorted().toList();
            assertEquals(List.of(), unlisted, "every page of docs/ is in the README's contents");
        }
    }
}
