package dev.mcpd.cli;

import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpd.config.ByteSize;
import dev.mcpd.config.ConfigException;
import dev.mcpd.config.DurationText;
import dev.mcpd.config.InternalTuning;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.config.Role;
import dev.mcpd.spool.DeadLetter;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.ReplayInbox;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolLock;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code mcpd relay dead}: what an upstream refused for good, or what expired — see it, send it again
 * once the cause is fixed, or delete it. Works on a stopped relay's spool and beside a running relay: a replay hands
 * the entries over in {@code replay/}, and the relay takes them into its spool ({@link ReplayInbox}).
 */
@Command(name = "dead", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class,
        subcommands = {DeadCommand.ListLetters.class, DeadCommand.Show.class, DeadCommand.Replay.class,
            DeadCommand.Purge.class},
        description = "See, replay or purge the dead letters in <spool-dir>/relay/dead/ (see docs/dead-letters.md).")
final class DeadCommand implements Callable<Integer> {

    /**
     * Every character outside ASCII escaped, as {@code spool list --json} writes it: sender text is read in terminals
     * too, where a bidirectional override or a C1 control would make a line read other than it is.
     */
    private static final ObjectMapper JSON = JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();
    /** How long a replay beside a running relay waits for it to take the entries, before it says they still wait. */
    static final Duration TAKE_WAIT = InternalTuning.DEFAULT.replayWait();
    private static final int ANSWER_COLUMN = 60;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        err.println("mcpd: name a dead-letter command: list, show, replay or purge (see 'mcpd relay dead --help')");
        err.flush();
        return Mcpd.EXIT_USAGE;
    }

    /** The relay's spool directory, as {@code --data}/{@code --spool-dir} name it; it must exist. */
    private static McpdConfig config(CommandSpec spec) {
        Mcpd mcpd = (Mcpd) spec.root().userObject();
        McpdConfig config = mcpd.config(spec, Optional.of(Role.RELAY));
        if (!Files.isDirectory(config.relay().relaySpoolDir())) {
            throw new ConfigException("no spool at " + config.relay().relaySpoolDir()
                    + ": name it with --data or --spool-dir, as for relay");
        }
        return config;
    }

    /** As {@link #config}, for a command that writes the spool: one another user could write is refused. */
    private static McpdConfig configToWrite(CommandSpec spec) {
        McpdConfig config = config(spec);
        SpoolPermissions.require(config.relay().relaySpoolDir());
        return config;
    }

    private static DeadLetters deadLetters(McpdConfig config) throws IOException {
        return DeadLetters.beside(config.relay().relaySpoolDir()).orElseThrow(() -> new ConfigException("no dead/ in "
                + config.relay().relaySpoolDir() + ": this spool never kept a dead letter"));
    }

    private static final java.util.regex.Pattern SEQ = java.util.regex.Pattern.compile("0*([0-9]{1,18})(?:\\.entry)?");

    private static List<Long> seqs(List<String> given) {
        List<Long> seqs = new ArrayList<>();
        for (String text : given) {
            // As listed (3), or as its file in dead/ is named (00000000000000000003, …003.entry).
            java.util.regex.Matcher seq = SEQ.matcher(text);
            if (!seq.matches()) {
                throw new ConfigException("\"" + text + "\" is not a sequence number (see 'mcpd relay dead list')");
            }
            seqs.add(Long.parseLong(seq.group(1)));
        }
        return seqs;
    }

    private static void notFound(PrintWriter err, long seq) {
        err.println("mcpd: " + seq + " is not in dead/");
    }

    /**
     * Sender text on a terminal: control characters shown escaped, never interpreted — and so are the invisible
     * format characters (bidirectional overrides such as U+202E, zero-width ones) and line separators, which would
     * make a line read other than it is.
     */
    private static String printable(String text) {
        StringBuilder out = new StringBuilder(text.length());
        text.codePoints().forEach(c -> {
            if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0)) {
                out.append(String.format(Locale.ROOT, "\\x%02x", c));
            } else if (Character.getType(c) == Character.FORMAT || Character.getType(c) == Character.LINE_SEPARATOR
                    || Character.getType(c) == Character.PARAGRAPH_SEPARATOR) {
                out.append(String.format(Locale.ROOT, "\\u%04x", c));
            } else {
                out.appendCodePoint(c);
            }
        });
        return out.toString();
    }

    private static ObjectNode json(DeadLetter letter) {
        ObjectNode node = JSON.createObjectNode();
        node.put("seq", letter.seq());
        node.put("refusedAt", letter.refusedAt().toString());
        node.put("upstream", letter.upstream());
        node.put("status", letter.status());
        node.put("reason", letter.reason());
        node.put("answer", letter.answer());
        node.put("method", letter.method());
        node.put("target", letter.target());
        node.put("contentType", letter.contentType());
        node.put("contentEncoding", letter.contentEncoding());
        node.put("idempotencyKey", letter.idempotencyKey());
        node.put("receivedAt", letter.receivedAt().toString());
        node.put("bytes", letter.bytes());
        node.put("credential", letter.credential());
        letter.damaged().ifPresent(why -> node.put("damaged", why));
        return node;
    }

    /** {@code mcpd relay dead list [--json]}. */
    @Command(name = "list", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class,
            description = {"One line per dead letter, by sequence number: sequence number, when it was refused, the"
                    + " upstream, its status, the first line of its answer (or why), method and path, body bytes.",
                "Read-only: it may run beside a running relay."})
    static final class ListLetters implements Callable<Integer> {

        @Spec
        private CommandSpec spec;

        @Option(names = "--json", description = "one JSON object per line, with every field in full")
        private boolean json;

        @Override
        public Integer call() throws IOException {
            McpdConfig config = config(spec);
            List<DeadLetter> letters = DeadLetters.beside(config.relay().relaySpoolDir()).isPresent()
                    ? deadLetters(config).list() : List.of();
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                for (DeadLetter letter : letters) {
                    out.println(JSON.writeValueAsString(json(letter)));
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
                String answer = letter.damaged().map(why -> "DAMAGED: " + printable(why))
                        .orElseGet(() -> printable(letter.answerFirstLine()));
                if (answer.length() > ANSWER_COLUMN) {
                    answer = answer.substring(0, ANSWER_COLUMN - 1) + "…";
                }
                rows.add(new String[] {Long.toString(letter.seq()),
                    letter.refusedAt().truncatedTo(java.time.temporal.ChronoUnit.MILLIS).toString(),
                    letter.upstream().isEmpty() ? "-" : letter.upstream(),
                    letter.status() == 0 ? "-" : Integer.toString(letter.status()), answer.isEmpty() ? "-" : answer,
                    letter.damaged().isPresent() ? "-" : printable(letter.method() + " " + letter.target()),
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

    /** {@code mcpd relay dead show SEQ [--body]}. */
    @Command(name = "show", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class,
            description = {"Everything kept about one dead letter, one line per field (the credential is never"
                    + " shown, only whether there is one).", "--body writes its stored body to stdout, byte for byte"
                    + " (still compressed if it was sent compressed)."},
            exitCodeListHeading = "Exit status:%n",
            exitCodeList = {"0:shown", "1:SEQ is not in dead/", "2:the command line is wrong"})
    static final class Show implements Callable<Integer> {

        @Spec
        private CommandSpec spec;

        @Parameters(paramLabel = "SEQ", description = "its sequence number (see 'mcpd relay dead list')")
        private String seq;

        @Option(names = "--body", description = "write the stored body bytes, unchanged, to stdout")
        private boolean body;

        @Override
        public Integer call() throws IOException {
            long wanted = seqs(List.of(seq)).get(0);
            McpdConfig config = config(spec);
            DeadLetters dead = deadLetters(config);
            PrintWriter out = spec.commandLine().getOut();
            if (body) {
                Optional<SpoolEntry> entry = dead.entry(wanted);
                if (entry.isEmpty()) {
                    notFound(spec.commandLine().getErr(), wanted);
                    return Mcpd.EXIT_FAILURE;
                }
                out.flush();
                OutputStream raw = ((Mcpd) spec.root().userObject()).bodyOut();
                raw.write(entry.get().request().body());
                raw.flush();
                return Mcpd.EXIT_OK;
            }
            Optional<DeadLetter> letter = dead.find(wanted);
            if (letter.isEmpty()) {
                notFound(spec.commandLine().getErr(), wanted);
                return Mcpd.EXIT_FAILURE;
            }
            DeadLetter d = letter.get();
            field(out, "seq", Long.toString(d.seq()));
            d.damaged().ifPresent(why -> field(out, "DAMAGED", printable(why) + " (it cannot be replayed; its"
                    + " files are in " + dead.directory() + ")"));
            field(out, "refused at", d.refusedAt().toString());
            field(out, "upstream", d.upstream().isEmpty() ? "- (none was asked)" : d.upstream());
            field(out, "status", d.status() == 0 ? "- (never sent)" : Integer.toString(d.status()));
            field(out, "reason", printable(d.reason()));
            field(out, "answer", printable(d.answer()));
            field(out, "request", printable(d.method() + " " + d.target()));
            field(out, "content type", d.contentType().isEmpty() ? "-" : printable(d.contentType()));
            field(out, "encoding", d.contentEncoding().isEmpty() ? "-" : printable(d.contentEncoding()));
            field(out, "idempotency key", printable(d.idempotencyKey()));
            field(out, "received at", d.receivedAt().toString());
            field(out, "body", d.bytes() + " bytes (mcpd relay dead show " + d.seq() + " --body)");
            field(out, "credential", d.credential() ? "kept (replayed with the entry; not shown)" : "none");
            out.flush();
            return Mcpd.EXIT_OK;
        }

        private static void field(PrintWriter out, String name, String value) {
            out.println(String.format(Locale.ROOT, "%-17s%s", name, value));
        }
    }

    /** Which dead letters a replay or purge takes: all, or those named. */
    static final class Selection {
        @Option(names = "--all", required = true, description = "every dead letter") boolean all;
        @Parameters(paramLabel = "SEQ", arity = "1..*", description = "sequence numbers (see 'mcpd relay dead list')")
        List<String> seqs;
    }

    /** {@code mcpd relay dead replay (--all | SEQ…)}. */
    @Command(name = "replay", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class,
            description = {"Puts dead letters back in the spool, by sequence number, with their original idempotency"
                    + " key"
                    + " and credential (an upstream that stored a copy before counts it once) and new sequence"
                    + " numbers.",
                "Beside a running relay it hands them over in <spool-dir>/relay/replay/ and waits (up to 30 s) for the"
                        + " relay to take them, then prints their new sequence numbers; on a stopped relay's spool"
                        + " the relay takes them when it starts.",
                "A replay that does not fit --spool-max-bytes stops at the first entry that does not fit; the rest"
                        + " stay in dead/. Two replays at once take turns. A crash at any moment leaves every entry in"
                        + " dead/, in replay/ or the spool, or in two of them: never in none."},
            exitCodeListHeading = "Exit status:%n",
            exitCodeList = {"0:every dead letter named was replayed",
                "1:a SEQ was not in dead/ or is damaged (named on stderr; the others were replayed), or the spool had no"
                        + " room",
                "2:the command line is wrong"})
    static final class Replay implements Callable<Integer> {

        @Spec
        private CommandSpec spec;

        @ArgGroup(multiplicity = "1")
        private Selection selection;

        @Override
        public Integer call() throws IOException, InterruptedException {
            List<Long> named = selection.all ? List.of() : seqs(selection.seqs);
            McpdConfig config = configToWrite(spec);
            Path relayDir = config.relay().relaySpoolDir();
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            ReplayInbox inbox = new ReplayInbox(relayDir);
            ReplayInbox.Replay replay = inbox.replay(deadLetters(config),
                    selection.all ? Optional.empty() : Optional.of(named), config.relay().spoolMaxBytes());
            for (ReplayInbox.Left left : replay.left()) {
                if (left.damage().isPresent()) {
                    err.println("mcpd: " + left.seq() + " is damaged and stays in dead/: "
                            + printable(left.damage().get()));
                } else {
                    notFound(err, left.seq());
                }
            }
            replay.stoppedForRoom().ifPresent(stop -> err.println("mcpd: replay stopped at " + stop.seq()
                    + ": it needs " + stop.needs() + " bytes and the spool has room for " + stop.room()
                    + " (--spool-max-bytes " + ByteSize.format(config.relay().spoolMaxBytes()) + "); "
                    + replay.handedOver().size() + " replayed, " + stop.left() + " left in dead/"));
            List<Long> handed = replay.handedOver();
            int status = replay.left().isEmpty() && replay.stoppedForRoom().isEmpty() ? Mcpd.EXIT_OK
                    : Mcpd.EXIT_FAILURE;
            report(out, relayDir, inbox, handed);
            out.flush();
            err.flush();
            return status;
        }

        private static void report(PrintWriter out, Path relayDir, ReplayInbox inbox, List<Long> handed)
                throws IOException, InterruptedException {
            if (handed.isEmpty()) {
                out.println("replayed 0 dead letters");
                return;
            }
            if (!SpoolLock.heldByARelay(relayDir)) {
                out.println("replayed " + handed.size() + " dead letter(s) into " + inbox.directory()
                        + ": no relay runs on this spool; it takes them into its spool when it starts");
                return;
            }
            List<String> taken = new ArrayList<>();
            List<Long> waiting = new ArrayList<>(handed);
            long deadline = System.nanoTime() + TAKE_WAIT.toNanos();
            while (!waiting.isEmpty() && System.nanoTime() < deadline) {
                for (var it = waiting.iterator(); it.hasNext(); ) {
                    long seq = it.next();
                    if (!inbox.waits(seq)) {
                        OptionalLong as = inbox.takenAs(seq);
                        taken.add(seq + " as " + (as.isPresent() ? Long.toString(as.getAsLong()) : "?"));
                        it.remove();
                    }
                }
                if (!waiting.isEmpty()) {
                    Thread.sleep(100); // polling a directory the relay empties; there is nothing to wait on
                }
            }
            out.println("replayed " + handed.size() + " dead letter(s); the running relay took " + taken.size()
                    + " into its spool" + (taken.isEmpty() ? "" : " (dead seq as new seq: "
                    + String.join(", ", taken) + ")")
                    + (waiting.isEmpty() ? "" : "; " + waiting.size() + " still wait in " + inbox.directory()
                    + " (the relay takes them as the spool has room)"));
        }
    }

    /** {@code mcpd relay dead purge (--all | --older-than DURATION | SEQ…)}. */
    @Command(name = "purge", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class,
            description = "Deletes dead letters for good, and says how many.",
            exitCodeListHeading = "Exit status:%n",
            exitCodeList = {"0:every dead letter named was deleted",
                "1:a SEQ was not in dead/ (named on stderr; the others were deleted)", "2:the command line is wrong"})
    static final class Purge implements Callable<Integer> {

        @Spec
        private CommandSpec spec;

        @ArgGroup(multiplicity = "1")
        private Which which;

        static final class Which {
            @Option(names = "--all", required = true, description = "every dead letter") boolean all;
            @Option(names = "--older-than", required = true, paramLabel = "DURATION",
                    description = "those refused longer ago than this (90s, 15m, 24h, 7d)") String olderThan;
            @Parameters(paramLabel = "SEQ", arity = "1..*", description = "sequence numbers") List<String> seqs;
        }

        @Override
        public Integer call() throws IOException {
            Optional<Duration> age = Optional.ofNullable(which.olderThan).map(text -> {
                try {
                    return DurationText.parse(text);
                } catch (IllegalArgumentException e) {
                    throw new ConfigException("invalid value for --older-than: " + e.getMessage());
                }
            });
            List<Long> named = which.seqs == null ? List.of() : seqs(which.seqs);
            McpdConfig config = configToWrite(spec);
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            int status = Mcpd.EXIT_OK;
            int purged = 0;
            try (SpoolLock turn = SpoolLock.operators(config.relay().relaySpoolDir())) {
                DeadLetters dead = deadLetters(config);
                List<Long> seqs;
                if (which.all) {
                    seqs = dead.seqsOnDisk();
                } else if (age.isPresent()) {
                    Instant cutoff = Instant.now().minus(age.get());
                    seqs = dead.list().stream().filter(letter -> letter.refusedAt().isBefore(cutoff))
                            .map(DeadLetter::seq).collect(Collectors.toList());
                } else {
                    seqs = named;
                }
                for (long seq : seqs) {
                    if (dead.purge(seq)) {
                        purged++;
                    } else {
                        notFound(err, seq);
                        status = Mcpd.EXIT_FAILURE;
                    }
                }
            }
            out.println("purged " + purged + " dead letter(s)");
            out.flush();
            err.flush();
            return status;
        }
    }
}
