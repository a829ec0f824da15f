package dev.mcpd.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpd.logs.SenderText;
import dev.mcpd.spool.SpoolReader;
import dev.mcpd.spool.WaitingEntry;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What {@code mcpd relay spool list} prints: the oldest waiting entries with the relay's attempts filled in, as a
 * table (a header, one line per entry, how many more wait, and why attempts are unknown if they are) or as one JSON
 * document. Sender text (the target) and upstream text (the last failure) are escaped with {@link SenderText}, so
 * neither a line break nor a bidirectional override reaches the terminal as itself.
 *
 * @param spool    the spool directory listed
 * @param oldest   the oldest entries, and how many wait in all
 * @param limit    the {@code --limit} they were read with
 * @param attempts what the relay said of their attempts
 * @param nowMillis the time ages are counted to
 */
record SpoolListing(Path spool, SpoolReader.Oldest oldest, int limit, RelayAttempts attempts, long nowMillis) {

    /** Wide enough for every age {@link #age} writes ("12d03h"), so the columns after it stay put as time passes. */
    static final int AGE_WIDTH = 7;
    private static final String[] HEADER = {"SEQ", "AGE", "METHOD", "TARGET", "BYTES", "ATTEMPTS", "LAST FAILURE"};
    /** Escaping every character outside ASCII: a target is sender text, and the document is read in terminals too. */
    private static final ObjectMapper JSON = JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

    long more() {
        return Math.max(0, oldest.waiting() - oldest.oldest().size());
    }

    void printTable(PrintWriter out) {
        if (oldest.oldest().isEmpty()) {
            out.println("no entries wait in " + spool);
            return;
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(HEADER);
        for (WaitingEntry entry : oldest.oldest()) {
            RelayAttempts.Failed failed = failed(entry);
            rows.add(new String[] {Long.toString(entry.seq()), age(entry), SenderText.quote(entry.method()),
                SenderText.quote(entry.target()), Long.toString(entry.bodyBytes()),
                failed == null ? "-" : Integer.toString(failed.attempts()),
                failed == null || failed.lastFailure().isEmpty() ? "-" : SenderText.quote(failed.lastFailure())});
        }
        int[] widths = new int[HEADER.length];
        widths[1] = AGE_WIDTH;
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.length - 1; i++) {
                line.append(String.format(Locale.ROOT, "%-" + widths[i] + "s  ", row[i]));
            }
            out.println(line.append(row[row.length - 1]).toString().stripTrailing());
        }
        out.println(more() + " more " + (more() == 1 ? "waits" : "wait") + " beyond --limit " + limit + " ("
                + oldest.waiting() + " waiting in all)");
        attempts.unknownBecause().ifPresent(out::println);
    }

    void printJson(PrintWriter out) throws JsonProcessingException {
        ObjectNode root = JSON.createObjectNode();
        root.put("spool", spool.toString());
        root.put("waiting", oldest.waiting());
        root.put("limit", limit);
        root.put("more", more());
        root.put("attemptsKnown", attempts.unknownBecause().isEmpty());
        attempts.unknownBecause().ifPresent(why -> root.put("attemptsUnknownBecause", why));
        ArrayNode entries = root.putArray("entries");
        for (WaitingEntry entry : oldest.oldest()) {
            RelayAttempts.Failed failed = failed(entry);
            ObjectNode node = entries.addObject();
            node.put("seq", entry.seq());
            node.put("receivedAt", Instant.ofEpochMilli(entry.receivedAtMillis()).toString());
            node.put("ageSeconds", ageMillis(entry) / 1000);
            node.put("method", entry.method());
            node.put("target", entry.target());
            node.put("bytes", entry.bodyBytes());
            if (failed == null) {
                node.putNull("attempts");
            } else {
                node.put("attempts", failed.attempts());
            }
            if (failed == null || failed.lastFailure().isEmpty()) {
                node.putNull("lastFailure");
            } else {
                node.put("lastFailure", failed.lastFailure());
            }
        }
        out.println(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root));
    }

    /** The relay's record of the entry: none when attempts are unknown, no failure yet when it has none. */
    private RelayAttempts.Failed failed(WaitingEntry entry) {
        if (attempts.unknownBecause().isPresent()) {
            return null;
        }
        return attempts.bySeq().getOrDefault(entry.seq(), new RelayAttempts.Failed(0, ""));
    }

    private long ageMillis(WaitingEntry entry) {
        return Math.max(0, nowMillis - entry.receivedAtMillis());
    }

    /** Two units at most, the larger first: 42s, 3m05s, 2h07m, 12d03h. */
    private String age(WaitingEntry entry) {
        long seconds = ageMillis(entry) / 1000;
        if (seconds < 60) {
            return seconds + "s";
        }
        if (seconds < 3_600) {
            return String.format(Locale.ROOT, "%dm%02ds", seconds / 60, seconds % 60);
        }
        if (seconds < 86_400) {
            return String.format(Locale.ROOT, "%dh%02dm", seconds / 3_600, seconds % 3_600 / 60);
        }
        return String.format(Locale.ROOT, "%dd%02dh", seconds / 86_400, seconds % 86_400 / 3_600);
    }
}
