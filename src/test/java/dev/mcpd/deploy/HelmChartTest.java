package dev.mcpd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.config.McpdConfig;
import dev.mcpd.testing.TestCertificates;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * The Helm chart deploy/helm/mcpd and its example values, checked without a helm binary: the files parse,
 * every value a template reads is defined, every MCPD_* variable it emits or its values name is one mcpd reads (that
 * their defaults are mcpd's, or differ with a reason, is HelmDefaultsTest's), the examples set only
 * defined keys and values the real CLI accepts, the relay is a StatefulSet with a spool claim per pod, and the
 * probes ask /healthz and /readyz. TLS (tls.*, relay.upstreamTls.*): its Secrets are mounted as volumes, the
 * variables name the mounted files, the probes ask over HTTPS — read from the templates, taken by the real CLI from
 * files laid out as the kubelet mounts them, and, where a Helm binary is at hand (MCPD_TEST_HELM, as
 * HelmTemplateTest uses), rendered by Helm with and without TLS.
 */
class HelmChartTest {

    static final String CHART = "deploy/helm/mcpd";
    static final List<String> EXAMPLES = List.of("region-core", "region-standby", "region-edge-relay");
    /** {@code .Values.a.b.c} (or {@code $.Values...}) in a template. */
    static final Pattern VALUES_PATH = Pattern.compile("\\.Values((?:\\.[A-Za-z_][A-Za-z0-9_]*)+)");

    private static Map<String, Object> values() {
        return DeployFiles.yamlMap(CHART + "/values.yaml");
    }

    private static Map<String, Object> example(String name) {
        return DeployFiles.yamlMap("deploy/helm/examples/" + name + ".yaml");
    }

    /** Every template file, by name, with its text. */
    private static Map<String, String> templates() {
        Path dir = DeployFiles.root().resolve(CHART + "/templates");
        try (Stream<Path> files = Files.list(dir)) {
            Map<String, String> templates = new TreeMap<>();
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                templates.put(file.getFileName().toString(), Files.readString(file));
            }
            return templates;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String template(String name) {
        String text = templates().get(name);
        assertTrue(text != null, "templates/" + name + " exists");
        return text;
    }

    /** The value at a dotted path, or the marker {@code MISSING}; a free-form map ({@code {}}) takes any key. */
    private static Object lookup(Map<String, Object> root, List<String> path) {
        Object node = root;
        for (String key : path) {
            if (!(node instanceof Map<?, ?> map)) {
                return MISSING;
            }
            if (!map.containsKey(key)) {
                return map.isEmpty() ? FREE_FORM : MISSING;
            }
            node = map.get(key);
        }
        return node;
    }

    private static final Object MISSING = new Object();
    private static final Object FREE_FORM = new Object();

    /** Every dotted path an example sets, down to its leaves (lists and free-form values are leaves). */
    private static void leafPaths(Map<String, Object> map, List<String> prefix, List<List<String>> out) {
        map.forEach((key, value) -> {
            List<String> path = new ArrayList<>(prefix);
            path.add(key);
            if (value instanceof Map<?, ?> nested && !nested.isEmpty()) {
                @SuppressWarnings("unchecked")
                Map<String, Object> child = (Map<String, Object>) nested;
                leafPaths(child, path, out);
            } else {
                out.add(path);
            }
        });
    }

    /** Values as Helm coalesces them: the example over values.yaml, maps merged key by key. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> merged(Map<String, Object> base, Map<String, Object> over) {
        Map<String, Object> result = new LinkedHashMap<>(base);
        over.forEach((key, value) -> {
            if (value instanceof Map<?, ?> map && result.get(key) instanceof Map<?, ?> under) {
                result.put(key, merged((Map<String, Object>) under, (Map<String, Object>) map));
            } else {
                result.put(key, value);
            }
        });
        return result;
    }

    private static Object at(Map<String, Object> values, String dotted) {
        Object value = lookup(values, List.of(dotted.split("\\.")));
        assertTrue(value != MISSING && value != FREE_FORM, dotted + " is set");
        return value;
    }

    @Test
    void chartValuesAndExamplesParse() {
        Map<String, Object> chart = DeployFiles.yamlMap(CHART + "/Chart.yaml");
        assertEquals("v2", chart.get("apiVersion"));
        assertEquals("mcpd", chart.get("name"));
        assertEquals("application", chart.get("type"));
        assertTrue(String.valueOf(chart.get("version")).matches("\\d+\\.\\d+\\.\\d+"), "semantic chart version");
        assertTrue(String.valueOf(chart.get("appVersion")).matches("\\d+\\.\\d+\\.\\d+"), "the mcpd version");
        assertEquals("relay", values().get("mode"), "a relay unless told otherwise");
        for (String example : EXAMPLES) {
            assertFalse(example(example).isEmpty(), example);
        }
    }

    @Test
    void valuesYamlHasTheSettingsOfBothRoles() {
        Map<String, Object> values = values();
        for (String path : List.of("image.repository", "image.tag", "relay.upstreams", "relay.ingestKey.secretName",
                "relay.upstreamKey.secretName", "relay.spoolMaxBytes", "relay.workers", "relay.maxInFlight",
                "relay.batchMaxEntries", "relay.batchMaxBytes", "relay.orderedPaths", "relay.forwardHeaders",
                "relay.health.probePath",
                "relay.health.probeIntervalSeconds", "relay.health.probeTimeoutSeconds", "relay.health.healthyThreshold",
                "relay.health.unhealthyThreshold", "relay.deadLetters.retryableStatus", "relay.deadLetters.spoolMaxAge",
                "relay.persistence.size",
                "relay.persistence.storageClass", "relay.resources", "collector.data.secretName",
                "collector.ingestKey.secretName", "collector.quotaPerMinute", "collector.leasePassSeconds",
                "collector.dedupWindow", "collector.retention", "podDisruptionBudget.enabled",
                "serviceMonitor.enabled", "tls.secretName", "tls.requireClientCertificates",
                "relay.upstreamTls.caSecretName", "relay.upstreamTls.caKey", "relay.upstreamTls.clientSecretName",
                "serviceMonitor.tlsConfig")) {
            Object value = lookup(values, List.of(path.split("\\.")));
            assertTrue(value != MISSING && value != FREE_FORM, path + " is in values.yaml");
        }
        assertTrue(Set.of("relay", "collector").contains(values.get("mode")));
    }

    @Test
    void everyValueTheTemplatesReadIsDefinedInValuesYaml() {
        Map<String, Object> values = values();
        Map<String, Set<String>> undefined = new TreeMap<>();
        int seen = 0;
        for (Map.Entry<String, String> template : templates().entrySet()) {
            Matcher matcher = VALUES_PATH.matcher(template.getValue());
            while (matcher.find()) {
                seen++;
                List<String> path = List.of(matcher.group(1).substring(1).split("\\."));
                if (lookup(values, path) == MISSING) {
                    undefined.computeIfAbsent(template.getKey(), k -> new TreeSet<>()).add(matcher.group());
                }
            }
        }
        assertTrue(seen > 50, "the templates read values (" + seen + " found)");
        assertEquals(Map.of(), undefined, "values the templates read but values.yaml does not define");
    }

    @Test
    void everyMcpdVariableTheTemplatesEmitIsOneMcpdReads() {
        Set<String> emitted = new TreeSet<>();
        templates().values().forEach(text -> emitted.addAll(DeployFiles.variablesIn(text)));
        Set<String> configMap = new TreeSet<>();
        Matcher key = Pattern.compile("(?m)^\\s+(MCPD_[A-Z0-9_]+):").matcher(template("configmap.yaml"));
        while (key.find()) {
            configMap.add(key.group(1));
        }
        assertTrue(configMap.containsAll(Set.of("MCPD_LISTEN", "MCPD_DATA", "MCPD_UPSTREAMS", "MCPD_SPOOL_MAX_BYTES",
                "MCPD_WORKERS", "MCPD_QUOTA_PER_MINUTE", "MCPD_LEASE_PASS_SECONDS", "MCPD_DEDUP_WINDOW",
                "MCPD_RETENTION")), "the ConfigMap holds the plain settings: " + configMap);
        assertTrue(emitted.containsAll(configMap));
        Set<String> unknown = new TreeSet<>(emitted);
        unknown.removeAll(DeployFiles.knownVariables());
        assertEquals(Set.of(), unknown, "the templates emit only variables mcpd reads: " + DeployFiles.knownVariables());
        // values.yaml's comments and the examples name variables too: a renamed or dropped option must not linger.
        Set<String> named = new TreeSet<>(DeployFiles.variablesIn(DeployFiles.read(CHART + "/values.yaml")));
        for (String example : EXAMPLES) {
            named.addAll(DeployFiles.variablesIn(DeployFiles.read("deploy/helm/examples/" + example + ".yaml")));
        }
        named.removeAll(DeployFiles.knownVariables());
        assertEquals(Set.of(), named, "values.yaml and the examples name only variables mcpd reads");
        assertFalse(configMap.contains("MCPD_INGEST_KEY") || configMap.contains("MCPD_UPSTREAM_KEY"),
                "keys never go into the ConfigMap");
        for (String secret : List.of("MCPD_INGEST_KEY", "MCPD_UPSTREAM_KEY", "MCPD_DATA")) {
            assertTrue(Pattern.compile("- name: " + secret + "\\s+valueFrom:\\s+secretKeyRef:")
                    .matcher(template("_helpers.tpl")).find(), secret + " can come from a Secret");
        }
    }

    @Test
    void everyExampleSetsOnlyKeysValuesYamlDefines() {
        Map<String, Object> values = values();
        for (String example : EXAMPLES) {
            List<List<String>> paths = new ArrayList<>();
            leafPaths(example(example), List.of(), paths);
            List<String> undefined = paths.stream().filter(path -> lookup(values, path) == MISSING)
                    .map(path -> String.join(".", path)).toList();
            assertEquals(List.of(), undefined, example + " sets keys values.yaml does not have");
        }
    }

    /** The ConfigMap line of each variable, and the value it is made of, as configmap.yaml writes them. */
    static final Map<String, String> RELAY_SETTINGS = Map.of(
            "MCPD_UPSTREAMS", "relay.upstreams",
            "MCPD_SPOOL_MAX_BYTES", "relay.spoolMaxBytes",
            "MCPD_WORKERS", "relay.workers",
            "MCPD_MAX_IN_FLIGHT", "relay.maxInFlight",
            "MCPD_BATCH_MAX_ENTRIES", "relay.batchMaxEntries",
            "MCPD_BATCH_MAX_BYTES", "relay.batchMaxBytes",
            "MCPD_MAX_BODY_BYTES", "maxBodyBytes",
            "MCPD_REQUEST_TIMEOUT_SECONDS", "requestTimeoutSeconds");
    static final Map<String, String> COLLECTOR_SETTINGS = Map.of(
            "MCPD_QUOTA_PER_MINUTE", "collector.quotaPerMinute",
            "MCPD_LEASE_PASS_SECONDS", "collector.leasePassSeconds",
            "MCPD_DEDUP_WINDOW", "collector.dedupWindow",
            "MCPD_MAX_BODY_BYTES", "maxBodyBytes",
            "MCPD_REQUEST_TIMEOUT_SECONDS", "requestTimeoutSeconds");

    /** The ConfigMap lines written only when their value is set (not empty), and the value each is made of. */
    static final Map<String, String> OPTIONAL_RELAY_SETTINGS = Map.of(
            "MCPD_RETRYABLE_STATUS", "relay.deadLetters.retryableStatus",
            "MCPD_SPOOL_MAX_AGE", "relay.deadLetters.spoolMaxAge",
            "MCPD_UPSTREAM_PROBES", "relay.health.upstreamProbes",
            "MCPD_ORDERED_PATHS", "relay.orderedPaths",
            "MCPD_FORWARD_HEADERS", "relay.forwardHeaders");
    static final Map<String, String> OPTIONAL_COLLECTOR_SETTINGS = Map.of(
            "MCPD_RETENTION", "collector.retention");

    /** The optional relay settings as configmap.yaml writes them: absent when empty, a list joined with commas. */
    private static Map<String, String> optionalRelayEnvironment(Map<String, Object> values) {
        return optionalEnvironment(values, OPTIONAL_RELAY_SETTINGS);
    }

    /** The optional collector settings as configmap.yaml writes them: absent when empty. */
    private static Map<String, String> optionalCollectorEnvironment(Map<String, Object> values) {
        return optionalEnvironment(values, OPTIONAL_COLLECTOR_SETTINGS);
    }

    private static Map<String, String> optionalEnvironment(Map<String, Object> values, Map<String, String> settings) {
        Map<String, String> environment = new TreeMap<>();
        settings.forEach((variable, path) -> {
            Object value = at(values, path);
            String text = value instanceof List<?> list
                    ? list.stream().map(String::valueOf).collect(Collectors.joining(",")) : String.valueOf(value);
            if (value != null && !text.isEmpty()) {
                environment.put(variable, text);
            }
        });
        return environment;
    }

    /** The environment a pod of the role gets from these values, as configmap.yaml and the Secrets make it. */
    private static Map<String, String> podEnvironment(Map<String, Object> values, Map<String, String> settings,
                                                      boolean relay) {
        Map<String, String> environment = new LinkedHashMap<>();
        settings.forEach((variable, path) -> {
            Object value = at(values, path);
            environment.put(variable, value instanceof List<?> list
                    ? list.stream().map(String::valueOf).collect(Collectors.joining(",")) : String.valueOf(value));
        });
        environment.put("MCPD_LISTEN", "0.0.0.0:" + at(values, "port"));
        environment.putAll(tlsEnvironment(values, relay));
        if (relay) {
            environment.put("MCPD_DATA", "/data/mcpd.db");
            environment.put("MCPD_SPOOL_DIR", "/data/mcpd.spool");
            environment.putAll(optionalRelayEnvironment(values));
            return environment;
        }
        environment.putAll(optionalCollectorEnvironment(values));
        if (!String.valueOf(at(values, "collector.data.secretName")).isEmpty()) {
            environment.put("MCPD_DATA", "postgres://mcpd:secret@postgres.example:5432/mcpd"); // the Secret's URL
        } else {
            environment.put("MCPD_DATA", "/data/mcpd.db");
        }
        return environment;
    }

    @Test
    void theSettingsThisTestMapsAreTheOnesTheConfigMapWrites() {
        String configMap = template("configmap.yaml");
        Map<String, String> all = new TreeMap<>(RELAY_SETTINGS);
        all.putAll(COLLECTOR_SETTINGS);
        all.forEach((variable, path) -> assertTrue(
                Pattern.compile("(?m)^\\s+" + variable + ": \\{\\{.*\\.Values\\." + Pattern.quote(path) + "\\b")
                        .matcher(configMap).find(), variable + " is written from .Values." + path));
        int collectorOnly = configMap.indexOf("{{- else }}");
        COLLECTOR_SETTINGS.forEach((variable, path) -> assertTrue(!path.startsWith("collector.")
                || configMap.indexOf(variable + ":") > collectorOnly, variable + " is written in collector mode only"));
        assertTrue(configMap.contains("MCPD_UPSTREAMS: {{ join \",\" .Values.relay.upstreams | quote }}"),
                "the upstreams are joined with commas, in order");
        assertTrue(configMap.contains("MCPD_LISTEN: {{ printf \"0.0.0.0:%d\" (int .Values.port) | quote }}"));
        assertTrue(configMap.contains("MCPD_DATA: \"/data/mcpd.db\"") && configMap.contains("MCPD_SPOOL_DIR: \"/data/mcpd.spool\""));
    }

    @Test
    void theDeadLetterSettingsAreWrittenOnlyWhenSet() {
        String configMap = template("configmap.yaml");
        assertTrue(configMap.contains("""
                  {{- with .Values.relay.deadLetters.retryableStatus }}
                  MCPD_RETRYABLE_STATUS: {{ if kindIs "slice" . }}{{ join "," . | quote }}{{ else }}{{ . | quote }}{{ end }}
                  {{- end }}
                  {{- with .Values.relay.deadLetters.spoolMaxAge }}
                  MCPD_SPOOL_MAX_AGE: {{ . | quote }}
                  {{- end }}
                """), "a list of codes is joined with commas, a string written as it is, neither when empty");
        assertTrue(configMap.indexOf("MCPD_SPOOL_MAX_AGE") < configMap.indexOf("{{- else }}"), "in relay mode only");
        assertEquals(List.of(), at(values(), "relay.deadLetters.retryableStatus"), "by default none: mcpd's default");
        assertEquals("", at(values(), "relay.deadLetters.spoolMaxAge"), "by default nothing expires");
        assertEquals(Map.of(), optionalRelayEnvironment(values()));
    }

    @Test
    void upstreamProbesAreWrittenOnlyWhenSetAndTheCliTakesThemAsWritten() {
        assertTrue(template("configmap.yaml").contains("""
                  {{- with .Values.relay.health.upstreamProbes }}
                  MCPD_UPSTREAM_PROBES: {{ join "," . | quote }}
                  {{- end }}
                """), "a list joined with commas, absent when empty");
        assertEquals(List.of(), at(values(), "relay.health.upstreamProbes"), "by default every upstream at probePath");
        Map<String, Object> health = new HashMap<>(Map.of("upstreamProbes",
                List.of("1=http://otel-gateway:13133/", "2=off")));
        Map<String, Object> set = merged(values(), Map.of("relay", Map.of("health", health)));
        Map<String, String> environment = new HashMap<>(optionalRelayEnvironment(set));
        assertEquals("1=http://otel-gateway:13133/,2=off", environment.get("MCPD_UPSTREAM_PROBES"));
        environment.put("MCPD_UPSTREAMS", "http://otel-gateway:4318,http://mcpd:4317");
        assertEquals(2, McpdConfig.fromEnvironment(environment).health().upstreamProbes().size());
    }

    @Test
    void theRealCliTakesTheDeadLetterSettingsAsTheChartWritesThem() {
        Map<String, Object> core = merged(values(), example("region-core"));
        DeployFiles.CliRun defaults = DeployFiles.mcpd(podEnvironment(core, RELAY_SETTINGS, true), "config");
        assertEquals(0, defaults.status(), defaults.err());
        assertTrue(defaults.section("dead letters").contains("(but 408, 429)")
                && defaults.section("dead letters").endsWith("nothing expires"), defaults.out());
        for (Object codes : List.of(List.of(409, 425), "409,425")) {
            Map<String, Object> deadLetters = new LinkedHashMap<>();
            deadLetters.put("retryableStatus", codes);
            deadLetters.put("spoolMaxAge", "7d");
            Map<String, Object> values = merged(core, Map.of("relay", Map.of("deadLetters", deadLetters)));
            Map<String, String> environment = podEnvironment(values, RELAY_SETTINGS, true);
            assertEquals("409,425", environment.get("MCPD_RETRYABLE_STATUS"), "from " + codes);
            assertEquals("7d", environment.get("MCPD_SPOOL_MAX_AGE"));
            DeployFiles.CliRun relay = DeployFiles.mcpd(environment, "config");
            assertEquals(0, relay.status(), codes + ": " + relay.err());
            assertTrue(relay.section("dead letters").contains("(but 408, 409, 425, 429)"), relay.out());
            assertTrue(relay.section("dead letters").contains("entries waiting over 7d expire into it"), relay.out());
        }
        Map<String, Object> refused = merged(core, Map.of("relay", Map.of("deadLetters",
                Map.of("retryableStatus", List.of(429), "spoolMaxAge", ""))));
        DeployFiles.CliRun run = DeployFiles.mcpd(podEnvironment(refused, RELAY_SETTINGS, true), "config");
        assertTrue(run.status() != 0 && run.err().contains("429"), "429 is always retried already: " + run.err());
    }

    @Test
    void theUpkeepSettingsAreWrittenInCollectorModeAndRetentionOnlyWhenSet() {
        String configMap = template("configmap.yaml");
        assertTrue(configMap.contains("""
                  MCPD_LEASE_PASS_SECONDS: {{ .Values.collector.leasePassSeconds | quote }}
                  MCPD_DEDUP_WINDOW: {{ .Values.collector.dedupWindow | quote }}
                """), "the lease pass and the dedup window are always written for a collector");
        assertTrue(configMap.contains("""
                  {{- with .Values.collector.retention }}
                  MCPD_RETENTION: {{ . | quote }}
                  {{- end }}
                """), "the retention is written as it is, and not at all when empty");
        assertTrue(configMap.indexOf("{{- else }}") < configMap.indexOf("MCPD_RETENTION"), "in collector mode only");
        assertEquals(10, at(values(), "collector.leasePassSeconds"), "mcpd's pass: a lease renewed every 10 s");
        assertEquals("7d", at(values(), "collector.dedupWindow"), "keys remembered for mcpd's 7 days");
        assertEquals("", at(values(), "collector.retention"), "by default every archived batch is kept");
        assertEquals(Map.of(), optionalCollectorEnvironment(values()));
    }

    @Test
    void theRealCliTakesTheUpkeepSettingsAsTheChartWritesThem() {
        DeployFiles.CliRun defaults = DeployFiles.mcpd(podEnvironment(values(), COLLECTOR_SETTINGS, false), "config");
        assertEquals(0, defaults.status(), defaults.err());
        assertTrue(defaults.section("upkeep").endsWith("lease renewed every 10 s (free 30 s after the holder's last"
                + " pass); keys kept 7d; batches kept for ever"), defaults.out());
        Map<String, Object> core = merged(values(), example("region-core"));
        DeployFiles.CliRun example = DeployFiles.mcpd(podEnvironment(core, COLLECTOR_SETTINGS, false), "config");
        assertEquals(0, example.status(), example.err());
        assertTrue(example.section("upkeep").endsWith("keys kept 7d; batches kept 90d"), example.out());
        Map<String, Object> upkeep = Map.of("leasePassSeconds", 5, "dedupWindow", "14d", "retention", "90d");
        Map<String, String> environment = podEnvironment(merged(core, Map.of("collector", upkeep)), COLLECTOR_SETTINGS,
                false);
        assertEquals("5", environment.get("MCPD_LEASE_PASS_SECONDS"));
        assertEquals("14d", environment.get("MCPD_DEDUP_WINDOW"));
        assertEquals("90d", environment.get("MCPD_RETENTION"));
        DeployFiles.CliRun set = DeployFiles.mcpd(environment, "config");
        assertEquals(0, set.status(), set.err());
        assertTrue(set.section("upkeep").endsWith("lease renewed every 5 s (free 15 s after the holder's last pass);"
                + " keys kept 14d; batches kept 90d"), set.out());
        for (Map<String, Object> refused : List.<Map<String, Object>>of(Map.of("leasePassSeconds", 0),
                Map.of("leasePassSeconds", 601), Map.of("dedupWindow", "30s"), Map.of("retention", "3661d"))) {
            DeployFiles.CliRun run = DeployFiles.mcpd(podEnvironment(merged(core, Map.of("collector", refused)),
                    COLLECTOR_SETTINGS, false), "config");
            assertTrue(run.status() != 0 && run.err().contains("out of range"), refused + ": " + run.err());
        }
    }

    @Test
    void everyExampleIsAcceptedByTheRealCliInEachRoleItRuns() {
        for (String name : EXAMPLES) {
            Map<String, Object> values = merged(values(), example(name));
            DeployFiles.CliRun relay = DeployFiles.mcpd(podEnvironment(values, RELAY_SETTINGS, true), "config");
            assertEquals(0, relay.status(), name + " as a relay: " + relay.err());
            assertTrue(relay.section("relay").contains("spool at /data/mcpd.spool/relay"), relay.out());
            assertFalse(((List<?>) at(values, "relay.upstreams")).isEmpty(), name + " names upstreams");
            if (example(name).containsKey("collector")) {
                DeployFiles.CliRun collector = DeployFiles.mcpd(podEnvironment(values, COLLECTOR_SETTINGS, false),
                        "config");
                assertEquals(0, collector.status(), name + " as a collector: " + collector.err());
                assertTrue(collector.section("store").endsWith("(PostgreSQL)"), name + " collectors use PostgreSQL");
                assertTrue(((Number) at(values, "collector.replicaCount")).intValue() > 1, name + " replicas");
            }
        }
    }

    /** The collectors of every region share one store, so whichever replica holds its lease sweeps alike. */
    @Test
    void theRegionsWhoseCollectorsShareTheStoreSetTheSameUpkeep() {
        List<String> collectors = EXAMPLES.stream().filter(name -> example(name).containsKey("collector")).toList();
        assertEquals(List.of("region-core", "region-standby"), collectors);
        Set<List<Object>> stores = new HashSet<>();
        Set<List<Object>> upkeeps = new HashSet<>();
        for (String name : collectors) {
            Map<String, Object> values = merged(values(), example(name));
            stores.add(List.of(at(values, "collector.data.secretName"), at(values, "collector.data.secretKey")));
            upkeeps.add(List.of(at(values, "collector.leasePassSeconds"), at(values, "collector.dedupWindow"),
                    at(values, "collector.retention")));
        }
        assertEquals(1, stores.size(), "one shared store: " + stores);
        assertEquals(1, upkeeps.size(), "the same lease pass, dedup window and retention: " + upkeeps);
    }

    private static List<URI> upstreams(String example) {
        return ((List<?>) at(merged(values(), example(example)), "relay.upstreams")).stream()
                .map(String::valueOf).map(URI::create).toList();
    }

    @Test
    void eachRegionsRelayNamesTheNearestCollectorFirstAndAnotherRegionSecond() {
        List<URI> core = upstreams("region-core");
        List<URI> standby = upstreams("region-standby");
        List<URI> edge = upstreams("region-edge-relay");
        String local = "mcpd-collector";
        assertEquals(local, core.get(0).getHost(), "core: its own collectors first");
        assertEquals(local, standby.get(0).getHost(), "standby: its own collectors first");
        assertTrue(core.get(1).getHost().contains("standby"), "core fails over to standby: " + core);
        assertTrue(standby.get(1).getHost().contains("core"), "standby fails over to core: " + standby);
        assertEquals(2, edge.size());
        assertTrue(edge.get(0).getHost().contains("core") && edge.get(1).getHost().contains("standby"),
                "the edge relay delivers to two other regions, core first: " + edge);
        assertEquals(Set.of("relay"), Set.of(String.valueOf(merged(values(), example("region-edge-relay")).get("mode"))));
        assertFalse(example("region-edge-relay").containsKey("collector"), "the edge region runs only a relay");
        for (String region : List.of("region-core", "region-standby")) {
            assertTrue(example(region).containsKey("relay") && example(region).containsKey("collector"),
                    region + " runs collectors and a relay");
        }
    }

    @Test
    void theRelayIsAStatefulSetWithASpoolClaimPerPodAndTheCollectorADeployment() {
        String statefulSet = template("statefulset.yaml");
        assertTrue(statefulSet.startsWith("{{- if eq .Values.mode \"relay\" }}"), "only in relay mode");
        assertTrue(statefulSet.contains("kind: StatefulSet"));
        Matcher claims = Pattern.compile("volumeClaimTemplates:\\s+- metadata:\\s+name: (\\S+)").matcher(statefulSet);
        assertTrue(claims.find(), "a volumeClaimTemplate");
        assertEquals("spool", claims.group(1));
        assertTrue(statefulSet.contains("storage: {{ .Values.relay.persistence.size | quote }}"));
        assertTrue(statefulSet.contains("storageClassName: {{ .Values.relay.persistence.storageClass | quote }}"));
        assertTrue(Pattern.compile("- name: \\{\\{ if eq \\.Values\\.mode \"relay\" }}spool\\{\\{ else }}data\\{\\{ end }}"
                        + "\\s+mountPath: /data").matcher(template("_helpers.tpl")).find(),
                "the relay mounts its claim on /data, where MCPD_DATA places the spool");
        String deployment = template("deployment.yaml");
        assertTrue(deployment.startsWith("{{- if eq .Values.mode \"collector\" }}"), "only in collector mode");
        assertTrue(deployment.contains("kind: Deployment"));
        for (String workload : List.of(statefulSet, deployment)) {
            assertTrue(workload.contains("{{- include \"mcpd.podTemplate\" . | nindent 4 }}"), "one pod template");
        }
        assertTrue(template("pdb.yaml").contains("kind: PodDisruptionBudget"));
        assertTrue(template("servicemonitor.yaml").startsWith("{{- if .Values.serviceMonitor.enabled }}"));
        assertTrue(template("service.yaml").contains("kind: Service"));
    }

    @Test
    void probesAskHealthzForLivenessAndReadyzForReadiness() {
        String pod = template("_helpers.tpl");
        for (String[] probe : new String[][] {{"livenessProbe", "/healthz"}, {"readinessProbe", "/readyz"},
                {"startupProbe", "/healthz"}}) {
            assertTrue(Pattern.compile(probe[0] + ":\\s+httpGet:\\s+path: " + probe[1] + "\\s+port: http")
                    .matcher(pod).find(), probe[0] + " asks " + probe[1]);
        }
    }

    @Test
    void podsRollWhenTheConfigMapChanges() {
        assertTrue(template("_helpers.tpl").contains(
                "checksum/config: {{ include (print $.Template.BasePath \"/configmap.yaml\") . | sha256sum }}"));
        assertTrue(Pattern.compile("envFrom:\\s+- configMapRef:\\s+name: \\{\\{ include \"mcpd.fullname\" \\. }}")
                .matcher(template("_helpers.tpl")).find(), "the pods read the ConfigMap");
    }

    @Test
    void everyTemplateBalancesItsActionsAndBlocks() {
        Pattern opens = Pattern.compile("\\{\\{-?\\s*(if|with|range|define)\\b");
        Pattern ends = Pattern.compile("\\{\\{-?\\s*end\\s*-?}}");
        templates().forEach((name, text) -> {
            String code = text.replaceAll("(?s)\\{\\{-?\\s*/\\*.*?\\*/\\s*-?}}", "");
            assertEquals(count(code, "{{"), count(code, "}}"), name + ": every {{ is closed");
            assertEquals(count(opens, code), count(ends, code), name + ": every if/with/range/define has its end");
        });
    }

    private static int count(String text, String what) {
        return (text.length() - text.replace(what, "").length()) / what.length();
    }

    private static int count(Pattern pattern, String text) {
        Matcher matcher = pattern.matcher(text);
        int n = 0;
        while (matcher.find()) {
            n++;
        }
        return n;
    }

    // ---- TLS

    /** Where the pod template mounts each TLS Secret. */
    static final String LISTENER_DIR = "/etc/mcpd/tls/listener";
    static final String UPSTREAM_CA_DIR = "/etc/mcpd/tls/upstream-ca";
    static final String UPSTREAM_CLIENT_DIR = "/etc/mcpd/tls/upstream-client";

    /** The TLS lines configmap.yaml writes: each variable and the mounted file it names. */
    private static Map<String, String> tlsPaths() {
        Map<String, String> paths = new TreeMap<>();
        Matcher line = Pattern.compile("(?m)^\\s+(MCPD_(?:TLS|UPSTREAM_CA|UPSTREAM_CLIENT)[A-Z_]*): \"([^\"]+)\"$")
                .matcher(template("configmap.yaml"));
        while (line.find()) {
            paths.put(line.group(1), line.group(2));
        }
        return paths;
    }

    /** The TLS variables a pod of the role gets from these values, as configmap.yaml's conditions write them. */
    private static Map<String, String> tlsEnvironment(Map<String, Object> values, boolean relay) {
        Map<String, String> paths = tlsPaths();
        Map<String, String> environment = new TreeMap<>();
        if (!String.valueOf(at(values, "tls.secretName")).isEmpty()) {
            environment.put("MCPD_TLS_CERT", paths.get("MCPD_TLS_CERT"));
            environment.put("MCPD_TLS_KEY", paths.get("MCPD_TLS_KEY"));
            if (Boolean.TRUE.equals(at(values, "tls.requireClientCertificates"))) {
                environment.put("MCPD_TLS_CLIENT_CA", paths.get("MCPD_TLS_CLIENT_CA"));
            }
        }
        if (relay && !String.valueOf(at(values, "relay.upstreamTls.caSecretName")).isEmpty()) {
            environment.put("MCPD_UPSTREAM_CA", paths.get("MCPD_UPSTREAM_CA"));
        }
        if (relay && !String.valueOf(at(values, "relay.upstreamTls.clientSecretName")).isEmpty()) {
            environment.put("MCPD_UPSTREAM_CLIENT_CERT", paths.get("MCPD_UPSTREAM_CLIENT_CERT"));
            environment.put("MCPD_UPSTREAM_CLIENT_KEY", paths.get("MCPD_UPSTREAM_CLIENT_KEY"));
        }
        return environment;
    }

    @Test
    void tlsIsOffByDefaultAndItsSecretsAreNamedNotHeld() {
        Map<String, Object> values = values();
        assertEquals("", at(values, "tls.secretName"), "plain HTTP unless a Secret is named");
        assertEquals(false, at(values, "tls.requireClientCertificates"));
        assertEquals("", at(values, "relay.upstreamTls.caSecretName"), "the JDK's trust store by default");
        assertEquals("ca.crt", at(values, "relay.upstreamTls.caKey"), "cert-manager's key for the authority");
        assertEquals("", at(values, "relay.upstreamTls.clientSecretName"));
        assertEquals(Map.of(), tlsEnvironment(values, true));
        assertEquals(Map.of(), tlsEnvironment(values, false));
        for (String example : EXAMPLES) {
            assertEquals(Map.of(), tlsEnvironment(merged(values, example(example)), true), example);
        }
    }

    @Test
    void theTlsVariablesAreWrittenOnlyWhenTheirSecretIsNamedAndNameFilesUnderItsMount() {
        String configMap = template("configmap.yaml");
        assertEquals(Map.of(
                "MCPD_TLS_CERT", LISTENER_DIR + "/tls.crt", "MCPD_TLS_KEY", LISTENER_DIR + "/tls.key",
                "MCPD_TLS_CLIENT_CA", LISTENER_DIR + "/ca.crt",
                "MCPD_UPSTREAM_CA", UPSTREAM_CA_DIR + "/ca.crt",
                "MCPD_UPSTREAM_CLIENT_CERT", UPSTREAM_CLIENT_DIR + "/tls.crt",
                "MCPD_UPSTREAM_CLIENT_KEY", UPSTREAM_CLIENT_DIR + "/tls.key"), tlsPaths(),
                "the kubernetes.io/tls Secret's keys (tls.crt, tls.key, ca.crt) where the pod template mounts them");
        // Each line sits inside the condition on its own value: nothing of TLS is written without it.
        Map<String, String> guards = Map.of(
                "MCPD_TLS_CERT", "{{- if .Values.tls.secretName }}",
                "MCPD_TLS_KEY", "{{- if .Values.tls.secretName }}",
                "MCPD_TLS_CLIENT_CA", "{{- if .Values.tls.requireClientCertificates }}",
                "MCPD_UPSTREAM_CA", "{{- if .Values.relay.upstreamTls.caSecretName }}",
                "MCPD_UPSTREAM_CLIENT_CERT", "{{- if .Values.relay.upstreamTls.clientSecretName }}",
                "MCPD_UPSTREAM_CLIENT_KEY", "{{- if .Values.relay.upstreamTls.clientSecretName }}");
        guards.forEach((variable, guard) -> assertEquals(guard, innermostIf(configMap, configMap.indexOf(variable + ":")),
                variable + " is written only when its value is set"));
        assertEquals("{{- if .Values.tls.secretName }}", innermostIf(configMap,
                configMap.indexOf("{{- if .Values.tls.requireClientCertificates }}")), "and the client CA needs the Secret");
        int relayOnly = configMap.indexOf("{{- else }}");
        assertTrue(configMap.indexOf("MCPD_UPSTREAM_CA:") < relayOnly && configMap.indexOf("MCPD_UPSTREAM_CLIENT_KEY:")
                < relayOnly && configMap.indexOf("{{- if eq .Values.mode \"relay\" }}") < configMap.indexOf(
                "MCPD_UPSTREAM_CA:"), "the upstreams' TLS in relay mode only");
        assertTrue(configMap.indexOf("MCPD_TLS_CERT:") < configMap.indexOf("{{- if eq .Values.mode \"relay\" }}"),
                "the listener's TLS in both roles");
        // Files, never variables: no TLS material through secretKeyRef or env.
        String pod = template("_helpers.tpl");
        for (String variable : guards.keySet()) {
            assertFalse(pod.contains(variable + "\n") || pod.contains("name: " + variable), variable + " is no env");
        }
        assertTrue(template("_helpers.tpl").contains(
                "{{- fail \"tls.requireClientCertificates needs tls.secretName"), "mutual TLS without a Secret is refused");
    }

    /** The {@code {{- if ...}}} open at that position of a template (the innermost one), or "" at the top level. */
    private static String innermostIf(String text, int position) {
        assertTrue(position >= 0, "found in the template");
        Matcher action = Pattern.compile("\\{\\{-?\\s*(if|with|range|define|end|else)\\b[^}]*}}").matcher(text);
        Deque<String> open = new ArrayDeque<>();
        while (action.find() && action.start() < position) {
            switch (action.group(1)) {
                case "end" -> open.pop();
                case "else" -> {
                    open.pop();
                    open.push("else of an if");
                }
                default -> open.push(action.group());
            }
        }
        return open.isEmpty() ? "" : open.peek();
    }

    /** The volume mounts of the pod template: name → the mount's lines. */
    private static Map<String, String> mounts() {
        Map<String, String> mounts = new TreeMap<>();
        Matcher mount = Pattern.compile("- name: (tls-[a-z-]+)\\n(\\s+mountPath: [^\\n]+\\n\\s+readOnly: true)")
                .matcher(template("_helpers.tpl"));
        while (mount.find()) {
            mounts.put(mount.group(1), mount.group(2).replaceAll("\\s+", " ").strip());
        }
        return mounts;
    }

    @Test
    void eachTlsSecretIsAWholeReadOnlyVolumeMountedWhereTheVariablesPoint() {
        String pod = template("_helpers.tpl");
        assertEquals(Map.of(
                "tls-listener", "mountPath: " + LISTENER_DIR + " readOnly: true",
                "tls-upstream-ca", "mountPath: " + UPSTREAM_CA_DIR + " readOnly: true",
                "tls-upstream-client", "mountPath: " + UPSTREAM_CLIENT_DIR + " readOnly: true"), mounts());
        assertFalse(pod.contains("subPath:"), "a subPath mount is never updated by the kubelet: renewals would not reach it");
        Map<String, String> secrets = Map.of("tls-listener", ".Values.tls.secretName",
                "tls-upstream-ca", ".Values.relay.upstreamTls.caSecretName",
                "tls-upstream-client", ".Values.relay.upstreamTls.clientSecretName");
        secrets.forEach((volume, value) -> {
            assertTrue(Pattern.compile("- name: " + volume + "\\n\\s+secret:\\n\\s+secretName: \\{\\{ "
                    + Pattern.quote(value) + " \\| quote }}").matcher(pod).find(), volume + " is Secret " + value);
            // The mount and the volume are both inside the condition on that value (in relay mode for upstreams).
            for (Matcher named = Pattern.compile("- name: " + volume + "\\n").matcher(pod); named.find(); ) {
                String guard = innermostIf(pod, named.start());
                assertTrue(guard.contains(value), volume + " only with " + value + ": " + guard);
                assertTrue(!value.contains("relay.") || guard.contains("(eq .Values.mode \"relay\")"), volume);
            }
        });
        assertTrue(Pattern.compile("items:\\n\\s+- key: \\{\\{ \\.Values\\.relay\\.upstreamTls\\.caKey \\| quote }}\\n"
                + "\\s+path: ca\\.crt").matcher(pod).find(), "the authority's key, whatever its name, as ca.crt");
        tlsPaths().values().forEach(path -> assertTrue(mounts().values().stream().anyMatch(
                mount -> path.startsWith(mount.replaceFirst("^mountPath: (\\S+).*", "$1") + "/")), path + " is mounted"));
    }

    @Test
    void withTlsTheProbesAskOverHttpsAndUnderMutualTlsRunTheImagesHealthCheck() {
        String pod = template("_helpers.tpl");
        for (String[] probe : new String[][] {{"livenessProbe", "/healthz"}, {"readinessProbe", "/readyz"},
                {"startupProbe", "/healthz"}}) {
            assertTrue(Pattern.compile(probe[0] + ":\\s+httpGet:\\s+path: " + probe[1] + "\\s+port: http\\s+"
                    + "\\{\\{- if \\.Values\\.tls\\.secretName }}\\s+scheme: HTTPS\\s+\\{\\{- end }}").matcher(pod).find(),
                    probe[0] + " asks over HTTPS with tls.secretName");
            assertTrue(Pattern.compile(probe[0] + ":\\s+exec:\\s+command: \\[\"/opt/mcpd/bin/healthcheck\", \""
                    + probe[1] + "\"]").matcher(pod).find(), probe[0] + " runs the health check under mutual TLS");
        }
        assertTrue(pod.contains("{{- if and .Values.tls.secretName .Values.tls.requireClientCertificates }}true"),
                "the health check runs only under mutual TLS: the kubelet's HTTP probes present no certificate");
        String monitor = template("servicemonitor.yaml");
        assertTrue(Pattern.compile("\\{\\{- if \\.Values\\.tls\\.secretName }}\\s+# [^\\n]+\\s+scheme: https")
                .matcher(monitor).find(), "Prometheus scrapes https with tls.secretName");
    }

    /**
     * A kubernetes.io/tls Secret's files, laid out as the kubelet mounts them (under a test folder standing for /),
     * are what the real CLI takes from the variables the chart writes.
     */
    @Test
    void theRealCliTakesTheTlsFilesWhereTheChartMountsThem() throws Exception {
        Assumptions.assumeTrue(TestCertificates.available(),
                "openssl makes the certificates (.ci/run installs it)");
        Path root = Files.createTempDirectory("mcpd-helm-tls");
        try {
            TestCertificates ca = TestCertificates.authority(root.resolve("pki"),
                    "internal");
            TestCertificates.Pair listener = ca.serverAndClient("listener", "mcpd-relay");
            TestCertificates.Pair client = ca.client("client", "relay-eu-1");
            Map<Path, Path> files = Map.of(
                    Path.of(LISTENER_DIR, "tls.crt"), listener.cert(), Path.of(LISTENER_DIR, "tls.key"), listener.key(),
                    Path.of(LISTENER_DIR, "ca.crt"), ca.caCert, Path.of(UPSTREAM_CA_DIR, "ca.crt"), ca.caCert,
                    Path.of(UPSTREAM_CLIENT_DIR, "tls.crt"), client.cert(),
                    Path.of(UPSTREAM_CLIENT_DIR, "tls.key"), client.key());
            for (Map.Entry<Path, Path> file : files.entrySet()) {
                Path mounted = root.resolve(file.getKey().toString().substring(1));
                Files.createDirectories(mounted.getParent());
                Files.copy(file.getValue(), mounted);
            }
            Map<String, Object> tls = Map.of("tls", Map.of("secretName", "mcpd-relay-tls",
                    "requireClientCertificates", true), "relay", Map.of("upstreamTls", Map.of(
                    "caSecretName", "internal-ca", "clientSecretName", "mcpd-relay-client")));
            Map<String, Object> values = merged(merged(values(), example("region-core")), tls);
            for (boolean relay : List.of(true, false)) {
                Map<String, String> environment = new LinkedHashMap<>(
                        podEnvironment(values, relay ? RELAY_SETTINGS : COLLECTOR_SETTINGS, relay));
                environment.replaceAll((variable, value) -> value.startsWith("/etc/mcpd/tls/")
                        ? root.resolve(value.substring(1)).toString() : value);
                DeployFiles.CliRun run = DeployFiles.mcpd(environment, "config");
                assertEquals(0, run.status(), (relay ? "relay: " : "collector: ") + run.err());
                String line = run.section("tls");
                assertTrue(line.contains("listener HTTPS with " + root.resolve(LISTENER_DIR.substring(1) + "/tls.crt"))
                        && line.contains("client certificates signed by "
                        + root.resolve(LISTENER_DIR.substring(1) + "/ca.crt") + " required"), line);
                assertEquals(relay, line.contains("trusted by " + root.resolve(UPSTREAM_CA_DIR.substring(1) + "/ca.crt")
                        + ", client certificate " + root.resolve(UPSTREAM_CLIENT_DIR.substring(1) + "/tls.crt")), line);
            }
        } finally {
            try (Stream<Path> walk = Files.walk(root)) {
                walk.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    // ---- TLS rendered by Helm itself, where a Helm binary is at hand

    private static String helm() {
        return DeployFiles.tool("MCPD_TEST_HELM", "helm").orElse(null);
    }

    /** {@code helm template} of the chart with region-core's values and these --set's: its exit status and output. */
    private static DeployFiles.CliRun helmTemplate(String... sets) throws Exception {
        String helm = helm();
        Assumptions.assumeTrue(helm != null,
                "no Helm here: set MCPD_TEST_HELM or put helm on the PATH (.ci/helm.sh fetches it)");
        List<String> command = new ArrayList<>(List.of(helm, "template", "mcpd",
                DeployFiles.root().resolve(CHART).toString(), "-f",
                DeployFiles.root().resolve("deploy/helm/examples/region-core.yaml").toString()));
        for (String set : sets) {
            command.addAll(List.of("--set", set));
        }
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "helm ended");
        return new DeployFiles.CliRun(process.exitValue(), output, "");
    }

    /** The rendered object of that kind (one), parsed. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> renderedObject(String kind, String... sets) throws Exception {
        DeployFiles.CliRun run = helmTemplate(sets);
        assertEquals(0, run.status(), String.join(" ", sets) + ":\n" + run.out());
        List<Map<String, Object>> found = new ArrayList<>();
        LoadSettings settings = LoadSettings.builder()
                .setAllowDuplicateKeys(false).build();
        for (Object document : new Load(settings).loadAllFromString(run.out())) {
            if (document instanceof Map<?, ?> object && kind.equals(object.get("kind"))) {
                found.add((Map<String, Object>) object);
            }
        }
        assertEquals(1, found.size(), "one " + kind);
        return found.get(0);
    }

    private static Object path(Object node, String... keys) {
        for (String key : keys) {
            node = key.matches("\\d+") ? DeployFiles.list(node, key).get(Integer.parseInt(key))
                    : DeployFiles.map(node, key).get(key);
        }
        return node;
    }

    /** name → the list item of that name (volumes, mounts). */
    private static Map<String, Map<String, Object>> byName(Object list) {
        Map<String, Map<String, Object>> named = new TreeMap<>();
        for (Object item : DeployFiles.list(list, "list")) {
            Map<String, Object> map = DeployFiles.map(item, "item");
            named.put(String.valueOf(map.get("name")), map);
        }
        return named;
    }

    @Test
    void helmRendersTheTlsSecretsAsVolumesTheVariablesAsTheirFilesAndHttpsProbesAndWithoutTlsNothingOfIt()
            throws Exception {
        String[] tls = {"tls.secretName=mcpd-relay-tls", "relay.upstreamTls.caSecretName=internal-ca",
                "relay.upstreamTls.caKey=root.pem", "relay.upstreamTls.clientSecretName=mcpd-relay-client",
                "serviceMonitor.enabled=true", "serviceMonitor.tlsConfig.serverName=mcpd-relay"};
        Map<String, Object> relay = renderedObject("StatefulSet", tls);
        Object pod = path(relay, "spec", "template", "spec");
        Object container = path(pod, "containers", "0");
        Map<String, Map<String, Object>> volumes = byName(path(pod, "volumes"));
        assertEquals(Map.of("secretName", "mcpd-relay-tls"), volumes.get("tls-listener").get("secret"));
        assertEquals(Map.of("secretName", "internal-ca", "items", List.of(Map.of("key", "root.pem", "path", "ca.crt"))),
                volumes.get("tls-upstream-ca").get("secret"));
        assertEquals(Map.of("secretName", "mcpd-relay-client"), volumes.get("tls-upstream-client").get("secret"));
        Map<String, Map<String, Object>> mounts = byName(path(container, "volumeMounts"));
        for (String[] mount : new String[][] {{"tls-listener", LISTENER_DIR}, {"tls-upstream-ca", UPSTREAM_CA_DIR},
                {"tls-upstream-client", UPSTREAM_CLIENT_DIR}}) {
            assertEquals(Map.of("name", mount[0], "mountPath", mount[1], "readOnly", true), mounts.get(mount[0]));
        }
        Map<String, Object> config = DeployFiles.map(renderedObject("ConfigMap", tls).get("data"), "data");
        Map<String, String> expected = new TreeMap<>(tlsPaths());
        expected.remove("MCPD_TLS_CLIENT_CA");
        expected.forEach((variable, file) -> assertEquals(file, config.get(variable), variable));
        assertFalse(config.containsKey("MCPD_TLS_CLIENT_CA"), "no client certificates required unless asked");
        for (String probe : List.of("startupProbe", "livenessProbe", "readinessProbe")) {
            assertEquals("HTTPS", path(container, probe, "httpGet", "scheme"), probe);
        }
        assertEquals("https", path(renderedObject("ServiceMonitor", tls), "spec", "endpoints", "0", "scheme"));
        assertEquals(Map.of("serverName", "mcpd-relay"),
                path(renderedObject("ServiceMonitor", tls), "spec", "endpoints", "0", "tlsConfig"));

        // Without TLS values: no volume, mount, variable or scheme of it.
        Map<String, Object> plain = renderedObject("StatefulSet", "serviceMonitor.enabled=true");
        Object plainPod = path(plain, "spec", "template", "spec");
        Object plainContainer = path(plainPod, "containers", "0");
        assertEquals(Set.of("tmp"), byName(path(plainPod, "volumes")).keySet());
        assertEquals(Set.of("spool", "tmp"), byName(path(plainContainer, "volumeMounts")).keySet());
        for (String probe : List.of("startupProbe", "livenessProbe", "readinessProbe")) {
            assertFalse(DeployFiles.map(path(plainContainer, probe, "httpGet"), probe).containsKey("scheme"), probe);
        }
        assertTrue(DeployFiles.map(renderedObject("ConfigMap").get("data"), "data").keySet().stream()
                .noneMatch(variable -> variable.startsWith("MCPD_TLS_") || variable.startsWith("MCPD_UPSTREAM_C")));
        assertFalse(DeployFiles.map(path(renderedObject("ServiceMonitor", "serviceMonitor.enabled=true"), "spec",
                "endpoints", "0"), "endpoint").containsKey("scheme"));

        // A collector: the listener's Secret only; the relay's upstream settings do not apply.
        Map<String, Object> collector = renderedObject("Deployment", "mode=collector", "tls.secretName=mcpd-tls",
                "relay.upstreamTls.caSecretName=internal-ca", "relay.upstreamTls.clientSecretName=mcpd-relay-client");
        Object collectorPod = path(collector, "spec", "template", "spec");
        assertEquals(Set.of("tmp", "data", "tls-listener"), byName(path(collectorPod, "volumes")).keySet());
        assertEquals("HTTPS", path(collectorPod, "containers", "0", "readinessProbe", "httpGet", "scheme"));
    }

    @Test
    void helmRendersMutualTlsWithTheSecretsAuthorityAndProbesThatRunTheHealthCheck() throws Exception {
        String[] mutual = {"tls.secretName=mcpd-relay-tls", "tls.requireClientCertificates=true"};
        Map<String, Object> config = DeployFiles.map(renderedObject("ConfigMap", mutual).get("data"), "data");
        assertEquals(LISTENER_DIR + "/ca.crt", config.get("MCPD_TLS_CLIENT_CA"));
        Object container = path(renderedObject("StatefulSet", mutual), "spec", "template", "spec", "containers", "0");
        for (String[] probe : new String[][] {{"startupProbe", "/healthz"}, {"livenessProbe", "/healthz"},
                {"readinessProbe", "/readyz"}}) {
            Map<String, Object> handler = DeployFiles.map(path(container, probe[0]), probe[0]);
            assertFalse(handler.containsKey("httpGet"), probe[0] + ": the kubelet's HTTP probes present no certificate");
            assertEquals(List.of("/opt/mcpd/bin/healthcheck", probe[1]), path(handler, "exec", "command"), probe[0]);
        }
        DeployFiles.CliRun refused = helmTemplate("tls.requireClientCertificates=true");
        assertTrue(refused.status() != 0 && refused.out().contains("tls.requireClientCertificates needs tls.secretName"),
                refused.out());
    }
}
