package dev.mcpd.cli;

import dev.mcpd.config.Role;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code mcpd serve}: run the collector in the foreground. */
@Command(name = "serve", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class,
        description = "Run the collector in the foreground: archive every ingest request in the store"
                + " (--data: an embedded SQLite file or postgres://…), counting a re-sent batch once.")
public final class ServeCommand implements Callable<Integer> {

    @ParentCommand
    private Mcpd mcpd;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        return mcpd.runServe(mcpd.config(spec, Optional.of(Role.SERVE)));
    }
}
