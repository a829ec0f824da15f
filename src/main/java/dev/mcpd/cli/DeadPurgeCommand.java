package dev.mcpd.cli;

import dev.mcpd.config.ConfigException;
import dev.mcpd.config.DurationText;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.spool.DeadLetter;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.SpoolLock;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code mcpd relay dead purge (--all | --older-than DURATION | SEQ…)}. */
@Command(name = "purge", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class,
        description = "Deletes dead letters for good, and says how many.",
        exitCodeListHeading = "Exit status:%n",
        exitCodeList = {"0:every dead letter named was deleted",
            "1:a SEQ was not in dead/ (named on stderr; the others were deleted)", "2:the command line is wrong"})
final class DeadPurgeCommand implements Callable<Integer> {

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
        List<Long> named = which.seqs == null ? List.of() : DeadCommand.seqs(which.seqs);
        McpdConfig config = DeadCommand.configToWrite(spec);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        int status = Mcpd.EXIT_OK;
        int purged = 0;
        try (SpoolLock turn = SpoolLock.operators(config.relay().relaySpoolDir())) {
            DeadLetters dead = DeadCommand.deadLetters(config);
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
                    DeadCommand.notFound(err, seq);
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
