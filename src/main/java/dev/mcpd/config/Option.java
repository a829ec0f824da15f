package dev.mcpd.config;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * One command-line option, declared once (in {@link Options}) with everything about it: its flag and environment
 * variable, the label of its value, what it means, its default (a value, parsed like any given one, so its text and
 * value cannot disagree; or a description, when it is "none" or derived from another option), how its text is parsed
 * and checked, and which roles take it. The command line's options and help, the option table of docs/command-line.md and the errors
 * that name a bad value are all made from these declarations.
 *
 * @param <T> the type its value is parsed to
 */
public final class Option<T> {

    private final String flag;
    private final String environmentVariable;
    private final String label;
    private final String meaning;
    private final Optional<String> defaultText;
    private final Optional<T> defaultValue;
    private final Function<String, T> parser;
    private final Set<Role> roles;
    private final boolean repeatable;

    private Option(String flag, String environmentVariable, String label, String meaning,
                   Optional<String> defaultText, boolean defaultIsValue, Function<String, T> parser, Set<Role> roles,
                   boolean repeatable) {
        this.flag = flag;
        this.environmentVariable = environmentVariable;
        this.label = label;
        this.meaning = meaning;
        this.defaultText = defaultText;
        this.parser = parser;
        this.defaultValue = defaultIsValue ? defaultText.map(parser) : Optional.empty();
        this.roles = Set.copyOf(roles);
        this.repeatable = repeatable;
    }

    /**
     * An option taken once ({@code MCPD_<NAME>}, upper case, {@code -} → {@code _}) with a default value.
     *
     * @param defaultValue its default, written as an operator would write it; parsed here, so a bad one fails at once
     * @param parser       text to value; throws {@link IllegalArgumentException} saying what is wrong
     */
    static <T> Option<T> of(String flag, String label, String meaning, String defaultValue,
                            Function<String, T> parser, Role first, Role... more) {
        return new Option<>(flag, variableOf(flag), label, meaning, Optional.of(defaultValue), true, parser,
                EnumSet.of(first, more), false);
    }

    /** An option taken once whose absence is not a value: {@code description} says what happens without it. */
    static <T> Option<T> withoutDefault(String flag, String label, String meaning, String description,
                                        Function<String, T> parser, Role first, Role... more) {
        return new Option<>(flag, variableOf(flag), label, meaning, Optional.of(description), false, parser,
                EnumSet.of(first, more), false);
    }

    /** An option that may be given several times, in order; its variable holds the whole list, comma-separated. */
    static <T> Option<T> repeatable(String flag, String environmentVariable, String label, String meaning,
                                    Function<String, T> parser, Role first, Role... more) {
        return new Option<>(flag, environmentVariable, label, meaning, Optional.empty(), false, parser,
                EnumSet.of(first, more), true);
    }

    /**
     * A repeatable option whose absence is a list: {@code defaultList}, comma-separated as its variable would hold it
     * (each value parsed here, so a bad one fails at once).
     */
    static <T> Option<T> repeatable(String flag, String environmentVariable, String label, String meaning,
                                    String defaultList, Function<String, T> parser, Role first, Role... more) {
        Option<T> option = new Option<>(flag, environmentVariable, label, meaning, Optional.of(defaultList), false,
                parser, EnumSet.of(first, more), true);
        option.defaultList().forEach(parser::apply);
        return option;
    }

    /** The values of a repeatable option given neither as flags nor by its variable: none, unless it has a default. */
    List<String> defaultList() {
        return repeatable && defaultText.isPresent() ? splitList(defaultText.get()) : List.of();
    }

    private static String variableOf(String flag) {
        return "MCPD_" + flag.substring(2).toUpperCase(Locale.ROOT).replace('-', '_');
    }

    public String flag() {
        return flag;
    }

    public String environmentVariable() {
        return environmentVariable;
    }

    /** What its value looks like in help: {@code HOST:PORT}, {@code SIZE}, {@code N}. */
    public String label() {
        return label;
    }

    /** What it means, in a few words (no trailing full stop). */
    public String meaning() {
        return meaning;
    }

    /** Its default as help and docs/command-line.md say it. */
    public Optional<String> defaultText() {
        return defaultText;
    }

    /** Its default value, when it has one (not for "none" or a default derived from another option). */
    public Optional<T> defaultValue() {
        return defaultValue;
    }

    public boolean takenBy(Role role) {
        return roles.contains(role);
    }

    public Set<Role> roles() {
        return roles;
    }

    public boolean repeatable() {
        return repeatable;
    }

    /**
     * The values of a repeatable option's variable: split at commas, except those between the brokers of a Kafka
     * address ({@code kafka://HOST:PORT,HOST:PORT/TOPIC}), which belong to it. Blank pieces are kept (the caller
     * passes over them).
     */
    List<String> splitList(String text) {
        List<String> values = new ArrayList<>();
        for (String piece : text.split(",", -1)) {
            int last = values.size() - 1;
            if (last >= 0 && brokersContinue(values.get(last))) {
                values.set(last, values.get(last) + "," + piece);
            } else {
                values.add(piece);
            }
        }
        return values;
    }

    /** A Kafka address whose topic has not come yet: the next piece is one more of its brokers. */
    private static boolean brokersContinue(String value) {
        String lower = value.strip().toLowerCase(Locale.ROOT);
        String rest = lower.startsWith("kafka://") ? lower.substring(8)
                : lower.startsWith("kafkas://") ? lower.substring(9) : null;
        return rest != null && rest.indexOf('/') < 0;
    }

    /**
     * Parses and checks a value; {@link IllegalArgumentException} says what is wrong with it. Public for the checks
     * that deployment files set values equal to the defaults (or differ on purpose).
     */
    public T parse(String text) {
        return parser.apply(text);
    }

    /** The line {@code --help} shows: what it means, its variable, its default. */
    public String help() {
        String meaningFirstUpper = Character.toUpperCase(meaning.charAt(0)) + meaning.substring(1);
        return meaningFirstUpper + ". Env " + environmentVariable + (repeatable ? " (comma-separated)" : "")
                + defaultText.map(text -> "; default " + text).orElse("") + ".";
    }

    @Override
    public String toString() {
        return flag;
    }
}
