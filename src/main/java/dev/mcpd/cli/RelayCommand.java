package dev.mcpd.cli;

import dev.mcpd.config.ConfigException;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.config.Role;
import java.util.Optional;
import picocli.CommandLine.Command;

/** {@code mcpd relay}: run the relay in the foreground. */
@Command(name = "relay", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class,
        subcommands = {SpoolCommand.class, DeadCommand.class},
        description = "Run the relay in the foreground: spool every ingest request on disk, answer the sender,"
                + " then deliver it to the upstreams in order, with failover and retries.")
public final class RelayCommand extends ConfiguredCommand {
    static final String NO_UPSTREAM =
            "relay needs at least one upstream: name it with --upstream URL or MCPD_UPSTREAMS=URL[,URL…]";

    @Override
    public Integer call() {
        McpdConfig config = config(Optional.of(Role.RELAY));
        // A relay with nowhere to deliver would fill its spool and then refuse everything: refuse to start.
        if (config.relay().upstreams().isEmpty()) {
            throw new ConfigException(NO_UPSTREAM);
        }
        // Before the listener binds: a spool another user can write is refused in one line (the spool checks again).
        SpoolPermissions.require(config.relay().relaySpoolDir());
        return mcpd().runRelay(config);
    }
}
