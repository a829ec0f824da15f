package dev.mcpd.cli;

import dev.mcpd.config.McpdConfig;
import dev.mcpd.spool.DeadLetter;
import dev.mcpd.spool.DeadLetters;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code mcpd relay dead list [--json]}. */
@Command(name = "list", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class,
        description = {"One line per dead letter, by sequence number: sequence number, when it was refused, the"
                + " upstream, its status, the first line of its answer (or why), method and path, body bytes.",
            "Read-only: it may run beside a running relay."})
final class DeadListCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Option(names = "--json", description = "one JSON object per line, with every field in full")
    private boolean json;

    @Override
    public Integer call() throws IOException {
        McpdConfig config = DeadCommand.config(spec);
        List<DeadLetter> letters = DeadLetters.beside(config.relay().relaySpoolDir()).isPresent()
                ? DeadCommand.deadLetters(config).list() : List.of();
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            for (DeadLetter letter : letters) {
                out.println(DeadCommand.JSON.writeValueAsString(DeadCommand.json(letter)));
            }
        } else if (letters.isEmpty()) {
            out.println("no dead letters in " + config.relay().relaySpoolDir().resolve(DeadLetters.DIRECTORY));
        } else {
            printTable(out, letters);
        }
        out.flush();
        return Mcpd.EXIT_OK;
    }

    private static void printTable(PrintWriter out, List<DeadLetter> letters) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"SEQ", "REFUSED AT", "UPSTREAM", "STATUS", "ANSWER", "REQUEST", "BYTES"});
        for (DeadLetter letter : letters) {
            String answer = letter.damaged().map(why -> "DAMAGED: " + DeadCommand.printable(why))
                    .orElseGet(() -> DeadCommand.printable(letter.answerFirstLine()));
            if (answer.length() > DeadCommand.ANSWER_COLUMN) {
                answer = answer.substring(0, DeadCommand.ANSWER_COLUMN - 1) + "…";
            }
            rows.add(new String[] {Long.toString(letter.seq()),
                letter.refusedAt().truncatedTo(ChronoUnit.MILLIS).toString(),
                letter.upstream().isEmpty() ? "-" : letter.upstream(),
                letter.status() == 0 ? "-" : Integer.toString(letter.status()), answer.isEmpty() ? "-" : answer,
                letter.damaged().isPresent() ? "-" : DeadCommand.printable(letter.method() + " " + letter.target()),
                Long.toString(letter.bytes())});
        }
        int[] widths = new int[rows.get(0).length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                line.append(i == row.length - 1 ? row[i] : String.format(Locale.ROOT, "%-" + widths[i] + "s  ",
                        row[i]));
            }
            out.println(line.toString().stripTrailing());
        }
    }
}
