package dev.mcpd.cli;

import dev.mcpd.config.McpdConfig;
import dev.mcpd.config.Role;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * A command of {@code mcpd} that runs with the configuration made of its options, the environment and {@code mcpd}'s
 * own: {@code config}, {@code relay}, {@code serve}.
 */
abstract class ConfiguredCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    /** The configuration, checked for what {@code role} needs (empty: described without judging a role). */
    final McpdConfig config(Optional<Role> role) {
        return mcpd().config(spec, role);
    }

    final Mcpd mcpd() {
        return (Mcpd) spec.root().userObject();
    }

    final CommandSpec spec() {
        return spec;
    }
}
