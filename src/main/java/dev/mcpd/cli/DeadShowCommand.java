package dev.mcpd.cli;

import dev.mcpd.config.McpdConfig;
import dev.mcpd.spool.DeadLetter;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.SpoolEntry;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code mcpd relay dead show SEQ [--body]}. */
@Command(name = "show", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class,
        description = {"Everything kept about one dead letter, one line per field (the credential is never"
                + " shown, only whether there is one).", "--body writes its stored body to stdout, byte for byte"
                + " (still compressed if it was sent compressed)."},
        exitCodeListHeading = "Exit status:%n",
        exitCodeList = {"0:shown", "1:SEQ is not in dead/", "2:the command line is wrong"})
final class DeadShowCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Parameters(paramLabel = "SEQ", description = "its sequence number (see 'mcpd relay dead list')")
    private String seq;

    @Option(names = "--body", description = "write the stored body bytes, unchanged, to stdout")
    private boolean body;

    @Override
    public Integer call() throws IOException {
        long wanted = DeadCommand.seqs(List.of(seq)).get(0);
        McpdConfig config = DeadCommand.config(spec);
        DeadLetters dead = DeadCommand.deadLetters(config);
        PrintWriter out = spec.commandLine().getOut();
        if (body) {
            Optional<SpoolEntry> entry = dead.entry(wanted);
            if (entry.isEmpty()) {
                DeadCommand.notFound(spec.commandLine().getErr(), wanted);
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
            DeadCommand.notFound(spec.commandLine().getErr(), wanted);
            return Mcpd.EXIT_FAILURE;
        }
        DeadLetter d = letter.get();
        field(out, "seq", Long.toString(d.seq()));
        d.damaged().ifPresent(why -> field(out, "DAMAGED", DeadCommand.printable(why) + " (it cannot be replayed; its"
                + " files are in " + dead.directory() + ")"));
        field(out, "refused at", d.refusedAt().toString());
        field(out, "upstream", d.upstream().isEmpty() ? "- (none was asked)" : d.upstream());
        field(out, "status", d.status() == 0 ? "- (never sent)" : Integer.toString(d.status()));
        field(out, "reason", DeadCommand.printable(d.reason()));
        field(out, "answer", DeadCommand.printable(d.answer()));
        field(out, "request", DeadCommand.printable(d.method() + " " + d.target()));
        field(out, "content type", d.contentType().isEmpty() ? "-" : DeadCommand.printable(d.contentType()));
        field(out, "encoding", d.contentEncoding().isEmpty() ? "-" : DeadCommand.printable(d.contentEncoding()));
        field(out, "idempotency key", DeadCommand.printable(d.idempotencyKey()));
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
