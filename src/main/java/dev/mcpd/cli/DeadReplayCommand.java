package dev.mcpd.cli;

import dev.mcpd.config.ByteSize;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.spool.ReplayInbox;
import dev.mcpd.spool.SpoolLock;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

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
final class DeadReplayCommand implements Callable<Integer> {

    /** Which dead letters a replay or purge takes: all, or those named. */
    static final class Selection {
        @Option(names = "--all", required = true, description = "every dead letter") boolean all;
        @Parameters(paramLabel = "SEQ", arity = "1..*", description = "sequence numbers (see 'mcpd relay dead list')")
        List<String> seqs;
    }

    @Spec
    private CommandSpec spec;

    @ArgGroup(multiplicity = "1")
    private Selection selection;

    @Override
    public Integer call() throws IOException, InterruptedException {
        List<Long> named = selection.all ? List.of() : DeadCommand.seqs(selection.seqs);
        McpdConfig config = DeadCommand.configToWrite(spec);
        Path relayDir = config.relay().relaySpoolDir();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        ReplayInbox inbox = new ReplayInbox(relayDir);
        ReplayInbox.Replay replay = inbox.replay(DeadCommand.deadLetters(config),
                selection.all ? Optional.empty() : Optional.of(named), config.relay().spoolMaxBytes());
        for (ReplayInbox.Left left : replay.left()) {
            if (left.damage().isPresent()) {
                err.println("mcpd: " + left.seq() + " is damaged and stays in dead/: "
                        + DeadCommand.printable(left.damage().get()));
            } else {
                DeadCommand.notFound(err, left.seq());
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
        long deadline = System.nanoTime() + DeadCommand.TAKE_WAIT.toNanos();
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
