package dev.mcpd.cli;

import dev.mcpd.config.ConfigException;
import dev.mcpd.config.Option;
import dev.mcpd.config.Options;
import dev.mcpd.config.Role;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParseResult;

/**
 * The options declared in {@link Options}, as picocli options: {@code mcpd} itself takes every one (an option may
 * stand before the command), each command those of its role. Values stay raw text here: {@link
 * dev.mcpd.config.McpdConfig#from} parses them, so that an error names the flag or variable a bad value came from.
 */
final class CommandOptions {

    private CommandOptions() {
    }

    /** Gives {@code command} these options, each with its help line. */
    static void addTo(CommandSpec command, List<Option<?>> options) {
        for (Option<?> option : options) {
            command.addOption(OptionSpec.builder(option.flag())
                    .paramLabel(option.label())
                    .description(option.help())
                    .type(option.repeatable() ? List.class : String.class)
                    .auxiliaryTypes(String.class)
                    .arity("1")
                    .build());
        }
    }

    /**
     * The flags given on the way from {@code mcpd} to {@code leaf}, in command-line order: a single-valued flag after
     * the command beats the same flag before it, and repeated flags ({@code --upstream}) add up in the order written.
     * With a role, an option written before the command that the role does not take is a usage error.
     */
    static Map<Option<?>, List<String>> given(CommandSpec leaf, Optional<Role> role) {
        List<CommandSpec> path = new ArrayList<>();
        for (CommandSpec spec = leaf; spec != null; spec = spec.parent()) {
            path.add(0, spec);
        }
        Map<Option<?>, List<String>> flags = new LinkedHashMap<>();
        for (CommandSpec spec : path) {
            ParseResult parsed = spec.commandLine().getParseResult();
            if (parsed == null) {
                continue;
            }
            for (Option<?> option : Options.ALL) {
                OptionSpec matched = parsed.matchedOption(option.flag());
                if (matched == null) {
                    continue;
                }
                if (role.isPresent() && !option.takenBy(role.get())) {
                    throw new ConfigException(option.flag() + " is not an option of " + leaf.qualifiedName()
                            + " (see '" + leaf.qualifiedName() + " --help')");
                }
                flags.computeIfAbsent(option, unused -> new ArrayList<>()).addAll(matched.originalStringValues());
            }
        }
        return flags;
    }
}
