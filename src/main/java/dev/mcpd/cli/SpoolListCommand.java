package dev.mcpd.cli;

import dev.mcpd.config.ConfigException;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.config.Role;
import dev.mcpd.spool.SpoolReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code mcpd relay spool list [--limit N] [--json]}: what is stuck in the spool, oldest first. The entries come from
 * the spool's files (read-only, as {@code spool check} reads them); their attempts and last failures from the relay
 * running on the spool, which alone knows them ({@link RelayAttempts}).
 */
@Command(name = "list", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class, sortOptions = false,
        description = {
            "The oldest entries waiting in the relay's spool (<spool-dir>/relay), one line each: sequence number, age,"
                    + " method, target, body bytes, failed delivery attempts and the last failure; then how many more"
                    + " wait.",
            "Attempts are asked of the relay at --listen (GET /relay/spool): when none answers there they are shown"
                    + " as - and a line says so.",
            "Read-only: it may run beside a running relay, or on a copy of the spool."},
        exitCodeListHeading = "Exit status:%n",
        exitCodeList = {"0:listed (also when attempts are unknown, and for an empty spool)",
            "1:the spool could not be read",
            "2:the command line is wrong, or there is no spool at the directory named"})
final class SpoolListCommand implements Callable<Integer> {

    static final int DEFAULT_LIMIT = 20;

    @Spec
    private CommandSpec spec;

    @Option(names = "--limit", paramLabel = "N", description = "how many entries to list, oldest first (default: "
            + DEFAULT_LIMIT + ")")
    private String limit;

    @Option(names = "--json", description = "one JSON document, for scripts")
    private boolean json;

    @Override
    public Integer call() throws IOException {
        int max = limit();
        Mcpd mcpd = (Mcpd) spec.root().userObject();
        McpdConfig config = mcpd.config(spec, Optional.of(Role.RELAY));
        Path dir = config.relay().relaySpoolDir();
        if (!Files.isDirectory(dir)) {
            throw new ConfigException("no spool at " + dir + ": name it with --data or --spool-dir, as for relay");
        }
        SpoolReader.Oldest oldest = SpoolReader.oldest(dir, max);
        // Nothing waits: there is nothing to ask the relay about.
        RelayAttempts attempts = oldest.oldest().isEmpty() ? new RelayAttempts(Map.of(), Optional.empty())
                : RelayAttempts.ask(config, SpoolReader.id(dir), max);
        SpoolListing listing = new SpoolListing(dir, oldest, max, attempts, System.currentTimeMillis());
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            listing.printJson(out);
        } else {
            listing.printTable(out);
        }
        out.flush();
        return Mcpd.EXIT_OK;
    }

    private int limit() {
        if (limit == null) {
            return DEFAULT_LIMIT;
        }
        if (!limit.matches("[0-9]{1,9}") || Integer.parseInt(limit) < 1) {
            throw new ConfigException("invalid value for --limit: \"" + limit + "\" is not a whole number of at least 1"
                    + " (see 'mcpd relay spool list --help')");
        }
        return Integer.parseInt(limit);
    }
}
