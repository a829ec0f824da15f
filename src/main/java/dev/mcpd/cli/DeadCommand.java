package dev.mcpd.cli;

import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpd.config.ConfigException;
import dev.mcpd.config.InternalTuning;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.config.Role;
import dev.mcpd.spool.DeadLetter;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.ReplayInbox;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code mcpd relay dead}: what an upstream refused for good, or what expired — see it, send it again
 * once the cause is fixed, or delete it. Works on a stopped relay's spool and beside a running relay: a replay hands
 * the entries over in {@code replay/}, and the relay takes them into its spool ({@link ReplayInbox}).
 */
@Command(name = "dead", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class,
        subcommands = {DeadListCommand.class, DeadShowCommand.class, DeadReplayCommand.class,
            DeadPurgeCommand.class},
        description = "See, replay or purge the dead letters in <spool-dir>/relay/dead/ (see docs/dead-letters.md).")
final class DeadCommand implements Callable<Integer> {

    /**
     * Every character outside ASCII escaped, as {@code spool list --json} writes it: sender text is read in terminals
     * too, where a bidirectional override or a C1 control would make a line read other than it is.
     */
    static final ObjectMapper JSON = JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();
    /** How long a replay beside a running relay waits for it to take the entries, before it says they still wait. */
    static final Duration TAKE_WAIT = InternalTuning.DEFAULT.replayWait();
    static final int ANSWER_COLUMN = 60;

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
    static McpdConfig config(CommandSpec spec) {
        Mcpd mcpd = (Mcpd) spec.root().userObject();
        McpdConfig config = mcpd.config(spec, Optional.of(Role.RELAY));
        if (!Files.isDirectory(config.relay().relaySpoolDir())) {
            throw new ConfigException("no spool at " + config.relay().relaySpoolDir()
                    + ": name it with --data or --spool-dir, as for relay");
        }
        return config;
    }

    /** As {@link #config}, for a command that writes the spool: one another user could write is refused. */
    static McpdConfig configToWrite(CommandSpec spec) {
        McpdConfig config = config(spec);
        SpoolPermissions.require(config.relay().relaySpoolDir());
        return config;
    }

    static DeadLetters deadLetters(McpdConfig config) throws IOException {
        return DeadLetters.beside(config.relay().relaySpoolDir()).orElseThrow(() -> new ConfigException("no dead/ in "
                + config.relay().relaySpoolDir() + ": this spool never kept a dead letter"));
    }

    private static final Pattern SEQ = Pattern.compile("0*([0-9]{1,18})(?:\\.entry)?");

    static List<Long> seqs(List<String> given) {
        List<Long> seqs = new ArrayList<>();
        for (String text : given) {
            // As listed (3), or as its file in dead/ is named (00000000000000000003, …003.entry).
            Matcher seq = SEQ.matcher(text);
            if (!seq.matches()) {
                throw new ConfigException("\"" + text + "\" is not a sequence number (see 'mcpd relay dead list')");
            }
            seqs.add(Long.parseLong(seq.group(1)));
        }
        return seqs;
    }

    static void notFound(PrintWriter err, long seq) {
        err.println("mcpd: " + seq + " is not in dead/");
    }

    /**
     * Sender text on a terminal: control characters shown escaped, never interpreted — and so are the invisible
     * format characters (bidirectional overrides such as U+202E, zero-width ones) and line separators, which would
     * make a line read other than it is.
     */
    static String printable(String text) {
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

    static ObjectNode json(DeadLetter letter) {
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
}
