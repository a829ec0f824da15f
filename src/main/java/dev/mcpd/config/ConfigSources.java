package dev.mcpd.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The raw text of each option, with the command line's precedence applied, parsed so that an error names the
 * flag or the environment variable the text came from.
 */
final class ConfigSources {

    private final Map<Option<?>, List<String>> flags;
    private final Map<String, String> environment;

    ConfigSources(Map<Option<?>, List<String>> flags, Map<String, String> environment) {
        this.flags = flags;
        this.environment = environment;
    }

    /** What was given, or the option's default value. */
    <T> T value(Option<T> option) {
        return single(option).orElseGet(() -> option.defaultValue().orElseThrow());
    }

    <T> Optional<T> single(Option<T> option) {
        List<String> values = flags.getOrDefault(option, List.of());
        if (!values.isEmpty()) {
            String last = values.get(values.size() - 1);
            return Optional.of(fromFlag(option, () -> option.parse(last)));
        }
        return variable(option).map(text -> fromVariable(option, () -> option.parse(text)));
    }

    <T> List<T> list(Option<T> option) {
        List<String> values = flags.getOrDefault(option, List.of());
        List<T> parsed = new ArrayList<>();
        if (!values.isEmpty()) {
            for (String text : values) {
                parsed.add(fromFlag(option, () -> option.parse(text)));
            }
            return parsed;
        }
        Optional<String> variable = variable(option);
        if (variable.isEmpty()) {
            option.defaultList().forEach(text -> parsed.add(option.parse(text)));
            return parsed;
        }
        for (String text : option.splitList(variable.get())) {
            // Blank entries (a trailing comma, "a,,b") are slips, not values.
            if (!text.isBlank()) {
                parsed.add(fromVariable(option, () -> option.parse(text)));
            }
        }
        return parsed;
    }

    private Optional<String> variable(Option<?> option) {
        String text = environment.get(option.environmentVariable());
        return text == null || text.isBlank() ? Optional.empty() : Optional.of(text);
    }

    private static <T> T fromFlag(Option<?> option, Supplier<T> value) {
        return OptionValues.check(option.flag(), value);
    }

    private static <T> T fromVariable(Option<?> option, Supplier<T> value) {
        return OptionValues.check(option.flag() + " (environment variable " + option.environmentVariable() + ")",
                value);
    }
}
