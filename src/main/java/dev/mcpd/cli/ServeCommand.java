package dev.mcpd.cli;

import dev.mcpd.config.Role;
import java.util.Optional;
import picocli.CommandLine.Command;

/** {@code mcpd serve}: run the collector in the foreground. */
@Command(name = "serve", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class,
        description = "Run the collector in the foreground: archive every ingest request in the store"
                + " (--data: an embedded SQLite file or postgres://…), counting a re-sent batch once.")
public final class ServeCommand extends ConfiguredCommand {

    @Override
    public Integer call() {
        return mcpd().runServe(config(Optional.of(Role.SERVE)));
    }
}
