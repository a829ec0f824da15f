package dev.mcpd.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** An example of the docs, run by a test as an operator would copy it. */
public final class DocExample {

    private DocExample() {
    }

    /** The text of the fenced block that follows {@code <!-- example: name -->} in the page. */
    public static String block(Path page, String name) throws IOException {
        String text = Files.readString(page);
        int marker = text.indexOf("<!-- example: " + name + " -->");
        assertTrue(marker >= 0, page + " has the example " + name);
        int open = text.indexOf('\n', text.indexOf("```", marker)) + 1;
        return text.substring(open, text.indexOf("```", open));
    }

    /** The Markdown table of the page that starts with {@code header}, through its last row (and line break). */
    public static String table(Path page, String header) throws IOException {
        String text = Files.readString(page);
        int start = text.indexOf(header);
        assertTrue(start >= 0, page + " has the table " + header);
        int end = text.indexOf("\n\n", start);
        return text.substring(start, end < 0 ? text.length() : end + 1);
    }

    /** What the page shows {@code command} printing: the lines after {@code $ command}, up to the fence. */
    public static String output(Path page, String command) throws IOException {
        String text = Files.readString(page);
        String prompt = "$ " + command + "\n";
        int start = text.indexOf(prompt);
        assertTrue(start >= 0, page + " shows the command " + command);
        return text.substring(start + prompt.length(), text.indexOf("```", start));
    }

    /** The first fenced block of {@code language} in the page's section {@code heading} (its whole line). */
    public static String blockUnder(Path page, String heading, String language) throws IOException {
        String text = Files.readString(page);
        int at = text.indexOf("\n" + heading + "\n");
        assertTrue(at >= 0, page + " has the section " + heading);
        String fence = "```" + language + "\n";
        int start = text.indexOf(fence, at) + fence.length();
        return text.substring(start, text.indexOf("\n```", start) + 1);
    }
}
