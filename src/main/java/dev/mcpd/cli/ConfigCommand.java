package dev.mcpd.cli;

import java.io.PrintWriter;
import java.util.Optional;
import picocli.CommandLine.Command;

/**
 * {@code mcpd config}: print the effective configuration, one line per section, and exit. It describes
 * without judging what a role needs, so it works without upstreams; it never prints a secret.
 */
@Command(name = "config", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class,
        description = "Print the effective configuration, one line per section, and exit.")
public final class ConfigCommand extends ConfiguredCommand {
    @Override
    public Integer call() {
        PrintWriter out = spec().commandLine().getOut();
        config(Optional.empty()).describe().forEach(out::println);
        out.flush();
        return Mcpd.EXIT_OK;
    }
}
