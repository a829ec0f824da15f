package dev.mcpd.cli;

import dev.mcpd.config.ConfigException;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.config.Role;
import dev.mcpd.spool.ReplayInbox;
import dev.mcpd.spool.SpoolReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code mcpd relay spool}: look at the relay's spool; {@code mcpd relay spool check} is its fsck, {@code mcpd relay
 * spool list} shows what waits in it ({@link SpoolListCommand}).
 */
@Command(name = "spool", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class,
        subcommands = {SpoolCommand.Check.class, SpoolListCommand.class},
        description = "Look at the relay's spool (<spool-dir>/relay) without changing it.")
final class SpoolCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        err.println("mcpd: name a spool command: check or list (see 'mcpd relay spool --help')");
        err.flush();
        return Mcpd.EXIT_USAGE;
    }

    /**
     * {@code mcpd relay spool check}: reads every record and checksum of the spool and prints one line per fact. It
     * never creates, truncates or deletes a file, so it may run beside a running relay or on a copy.
     */
    @Command(name = "check", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class,
            sortOptions = false,
            description = {
                "Check the relay's spool (<spool-dir>/relay) the way fsck checks a file system, and print one line"
                        + " per fact: entries waiting, their bytes, segments, torn tails, damaged regions (and where),"
                        + " dead letters in dead/, and copies of damaged bytes already in corrupt/.",
                "Read-only: it never creates, truncates or deletes a file, so it can run while the relay runs, or on"
                        + " a copy of the spool. --data and --spool-dir name the spool as for 'mcpd relay'.",
                "A torn tail (the last batch a crash interrupted, never acknowledged) is reported but is not damage."},
            exitCodeListHeading = "Exit status:%n",
            exitCodeList = {
                "0:nothing is damaged",
                "1:something is damaged: a damaged region in a segment, or a file in corrupt/ (remove it once"
                        + " looked at), or the spool could not be read",
                "2:the command line is wrong, or there is no spool at the directory named"})
    static final class Check implements Callable<Integer> {

        @Spec
        private CommandSpec spec;

        @Override
        public Integer call() throws IOException {
            Mcpd mcpd = (Mcpd) spec.root().userObject();
            McpdConfig config = mcpd.config(spec, Optional.of(Role.RELAY));
            Path dir = config.relay().relaySpoolDir();
            if (!Files.isDirectory(dir)) {
                throw new ConfigException("no spool at " + dir + ": name it with --data or --spool-dir, as for relay");
            }
            SpoolReader.Check check = SpoolReader.check(dir);
            PrintWriter out = spec.commandLine().getOut();
            line(out, "spool", dir.toString());
            line(out, "entries", check.entries() + " waiting");
            line(out, "bytes", Long.toString(check.bytes()));
            line(out, "segments", Integer.toString(check.segments()));
            line(out, "torn tails", Integer.toString(check.tornTails().size()));
            check.tornTails().forEach(torn -> line(out, "torn tail", torn));
            line(out, "damaged regions", Integer.toString(check.damagedRegions().size()));
            check.damagedRegions().forEach(damaged -> line(out, "damaged region", damaged));
            line(out, "dead letters", check.deadLetters() + " in dead/");
            line(out, "replayed", new ReplayInbox(dir).waiting().entries() + " in replay/, for the relay to take");
            line(out, "corrupt files", check.corruptFiles() + " in corrupt/");
            line(out, "result", check.damaged()
                    ? "damaged: " + check.damagedRegions().size() + " damaged region(s), " + check.corruptFiles()
                            + " file(s) in corrupt/"
                    : "ok: nothing damaged");
            out.flush();
            return check.damaged() ? Mcpd.EXIT_FAILURE : Mcpd.EXIT_OK;
        }

        private static void line(PrintWriter out, String fact, String value) {
            out.println(String.format(Locale.ROOT, "%-16s%s", fact, value));
        }
    }
}
