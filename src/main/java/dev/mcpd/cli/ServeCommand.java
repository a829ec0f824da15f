package dev.mcpd.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.ParentCommand;

/** {@code mcpd serve}: run the collector in the foreground (SPEC §8, §9). */
@Command(name = "serve", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class,
        description = "Run the collector in the foreground: archive every ingest request in the store"
                + " (--data: an embedded SQLite file or postgres://…), counting a re-sent batch once.")
public final class ServeCommand implements Callable<Integer> {

    @ParentCommand
    private Mcpd mcpd;

    @Mixin
    private CommonOptions options;

    @Override
    public Integer call() {
        return mcpd.runServe(mcpd.config(options));
    }
}
