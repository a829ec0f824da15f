package dev.mcpd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.config.Option;
import dev.mcpd.config.Options;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * The Helm chart does not quietly repeat mcpd's defaults: every MCPD_* variable its ConfigMap writes from values.yaml
 * (or as a fixed text) has, by default, either the value of the option's own default ({@link Option#defaultValue()},
 * compared as parsed values, so 1024MiB is 1GiB) or a different one with a comment right above it that names
 * mcpd's default ({@code mcpd's default: TEXT}, TEXT as {@link Option#defaultText()} says it) and says why. When a
 * default changes, a value that only repeated the old one fails here, and so does a comment naming the old default.
 */
class HelmDefaultsTest {

    static final String CHART = "deploy/helm/mcpd";
    /** {@code   MCPD_X: {{ .Values.a.b | quote }}}, or {@code printf "...%d" (int .Values.port)}, in configmap.yaml. */
    static final Pattern FROM_VALUES = Pattern.compile(
            "(?m)^\\s+(MCPD_[A-Z0-9_]+): \\{\\{ (?:printf \"([^\"]*)%d\" \\(int )?\\.Values\\.([A-Za-z0-9_.]+)\\)?"
                    + " \\| quote }}$");
    /** {@code {{- with .Values.a.b }}} and the {@code MCPD_X:} line right inside it, in configmap.yaml. */
    static final Pattern ONLY_WHEN_SET = Pattern.compile(
            "(?m)^\\s+\\{\\{- with \\.Values\\.([A-Za-z0-9_.]+) }}\\n\\s+(MCPD_[A-Z0-9_]+):");
    /** {@code   MCPD_X: "text"} in configmap.yaml. */
    static final Pattern FIXED_TEXT = Pattern.compile("(?m)^\\s+(MCPD_[A-Z0-9_]+): \"([^\"{}]*)\"$");

    /** One variable the chart sets by default: its text, and the comment right above where that text is written. */
    record ChartDefault(String variable, String text, String comment, String where) {
    }

    @Test
    void theChartsDefaultsAreMcpdsOrDifferWithAReason() {
        List<ChartDefault> defaults = chartDefaults(DeployFiles.read(CHART + "/templates/configmap.yaml"),
                DeployFiles.read(CHART + "/values.yaml"));
        assertTrue(defaults.stream().map(ChartDefault::variable).toList().containsAll(List.of("MCPD_LISTEN",
                "MCPD_MAX_BODY_BYTES", "MCPD_REQUEST_TIMEOUT_SECONDS", "MCPD_SPOOL_MAX_BYTES", "MCPD_WORKERS",
                "MCPD_MAX_IN_FLIGHT", "MCPD_BATCH_MAX_ENTRIES", "MCPD_BATCH_MAX_BYTES", "MCPD_PROBE_PATH",
                "MCPD_PROBE_INTERVAL_SECONDS", "MCPD_PROBE_TIMEOUT_SECONDS", "MCPD_HEALTHY_THRESHOLD",
                "MCPD_UNHEALTHY_THRESHOLD", "MCPD_QUOTA_PER_MINUTE", "MCPD_LEASE_PASS_SECONDS", "MCPD_DEDUP_WINDOW",
                "MCPD_DATA")), "found: " + defaults);
        assertEquals(List.of(), problems(defaults));
    }

    /**
     * A variable the ConfigMap writes only when its value is set is left out by default, which gives mcpd's own
     * default only if that option has no default value ("none: kept for ever"): its value must then be empty.
     */
    @Test
    void aValueWrittenOnlyWhenSetIsEmptyByDefaultAndItsOptionHasNoDefaultValue() {
        Map<String, Object> values = DeployFiles.yamlMap(CHART + "/values.yaml");
        Matcher onlyWhenSet = ONLY_WHEN_SET.matcher(DeployFiles.read(CHART + "/templates/configmap.yaml"));
        List<String> found = new ArrayList<>();
        while (onlyWhenSet.find()) {
            String path = onlyWhenSet.group(1);
            String variable = onlyWhenSet.group(2);
            found.add(variable);
            Object value = values;
            for (String key : path.split("\\.")) {
                value = DeployFiles.map(value, path).get(key);
            }
            assertTrue(value == null || "".equals(value) || List.of().equals(value) || Map.of().equals(value),
                    "values.yaml " + path + " is empty by default, so " + variable + " is not written: " + value);
            Option<?> option = Options.ALL.stream().filter(candidate -> candidate.environmentVariable().equals(variable))
                    .findFirst().orElseThrow(() -> new AssertionError(variable + " is no option of mcpd's"));
            assertEquals(Optional.empty(), option.defaultValue(), variable + " left out is mcpd's default ("
                    + option.defaultText().orElse("none") + ") only if the option has no default value");
        }
        assertTrue(found.containsAll(List.of("MCPD_RETRYABLE_STATUS", "MCPD_SPOOL_MAX_AGE", "MCPD_UPSTREAM_PROBES",
                "MCPD_RETENTION")), "found: " + found);
    }

    @Test
    void aValueThatDiffersFromTheDefaultWithoutAReasonIsFound() {
        String configMap = "  MCPD_SPOOL_MAX_BYTES: {{ .Values.relay.spoolMaxBytes | quote }}\n";
        String silent = "relay:\n  # Spool bound.\n  spoolMaxBytes: 2GiB\n";
        assertEquals(1, problems(chartDefaults(configMap, silent)).size(), "a silent departure from 1GiB");
        String stale = "relay:\n  # Larger for the volume (mcpd's default: 512MiB).\n  spoolMaxBytes: 2GiB\n";
        assertEquals(1, problems(chartDefaults(configMap, stale)).size(), "a comment naming a default that is not");
        String reasoned = "relay:\n  # Larger: the volume holds it (mcpd's default: 1GiB).\n  spoolMaxBytes: 2GiB\n";
        assertEquals(List.of(), problems(chartDefaults(configMap, reasoned)));
        String same = "relay:\n  spoolMaxBytes: 1024MiB\n";
        assertEquals(List.of(), problems(chartDefaults(configMap, same)), "the same size, written otherwise");
    }

    /** What is wrong with each default the chart sets: an unknown option, or a departure with no comment naming it. */
    static List<String> problems(List<ChartDefault> defaults) {
        List<String> problems = new ArrayList<>();
        for (ChartDefault chart : defaults) {
            Optional<Option<?>> option = Options.ALL.stream()
                    .filter(candidate -> candidate.environmentVariable().equals(chart.variable())).findFirst();
            if (option.isEmpty()) {
                continue; // the launcher's (MCPD_LOG_LEVEL, MCPD_JAVA_OPTS): HelmChartTest checks mcpd reads them
            }
            Optional<?> registryDefault = option.get().defaultValue();
            if (registryDefault.isEmpty()) {
                continue; // no default value ("none", or derived): any value is a choice of the operator's
            }
            Object given;
            try {
                given = option.get().parse(chart.text());
            } catch (IllegalArgumentException e) {
                problems.add(chart.where() + ": " + chart.variable() + "=" + chart.text() + " is refused: "
                        + e.getMessage());
                continue;
            }
            if (Objects.equals(given, registryDefault.get())) {
                continue;
            }
            String named = "mcpd's default: " + option.get().defaultText().orElseThrow();
            if (!chart.comment().contains(named)) {
                problems.add(chart.where() + ": " + chart.variable() + "=" + chart.text() + " is not mcpd's default ("
                        + option.get().defaultText().orElseThrow() + "): say why in a comment right above it, with \""
                        + named + "\"");
            }
        }
        return problems;
    }

    /** The variables configmap.yaml writes, each with its text as the chart's values give it by default. */
    static List<ChartDefault> chartDefaults(String configMap, String valuesText) {
        Map<String, Object> values = DeployFiles.map(new Load(LoadSettings.builder().build()).loadFromString(valuesText), "values");
        List<ChartDefault> defaults = new ArrayList<>();
        Matcher fromValues = FROM_VALUES.matcher(configMap);
        while (fromValues.find()) {
            String path = fromValues.group(3);
            Object value = values;
            for (String key : path.split("\\.")) {
                value = DeployFiles.map(value, path).get(key);
            }
            assertTrue(value != null, path + " is set in values.yaml");
            String prefix = fromValues.group(2) == null ? "" : fromValues.group(2);
            defaults.add(new ChartDefault(fromValues.group(1), prefix + value, commentAbove(valuesText, path),
                    "values.yaml " + path));
        }
        Matcher fixed = FIXED_TEXT.matcher(configMap);
        while (fixed.find()) {
            defaults.add(new ChartDefault(fixed.group(1), fixed.group(2), commentAbove(configMap, fixed.start()),
                    "configmap.yaml " + fixed.group(1)));
        }
        return defaults;
    }

    /** The comment lines right above the key at a dotted path of a YAML text (nested by indentation). */
    static String commentAbove(String yaml, String dotted) {
        String[] keys = dotted.split("\\.");
        int at = 0;
        int indent = -1;
        for (String key : keys) {
            Matcher line = Pattern.compile("(?m)^( *)" + Pattern.quote(key) + ":").matcher(yaml);
            boolean found = false;
            while (line.find(at)) {
                if (line.group(1).length() > indent) {
                    indent = line.group(1).length();
                    at = line.start();
                    found = true;
                    break;
                }
                at = line.end();
            }
            assertTrue(found, dotted + " in the YAML text");
        }
        return commentAbove(yaml, at);
    }

    /** The {@code #} lines right above the line that starts at {@code offset}, joined. */
    static String commentAbove(String text, int offset) {
        String[] before = text.substring(0, text.lastIndexOf('\n', Math.max(0, offset - 1)) + 1).split("\n");
        List<String> comment = new ArrayList<>();
        for (int i = before.length - 1; i >= 0 && before[i].strip().startsWith("#"); i--) {
            comment.add(0, before[i].strip().substring(1).strip());
        }
        return String.join(" ", comment);
    }
}
