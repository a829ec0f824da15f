package dev.mcpd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Helm chart deploy/helm/mcpd and its example values (SPEC §8), checked without a helm binary: the files parse,
 * every value a template reads is defined, every MCPD_* variable it emits is one mcpd reads, the examples set only
 * defined keys and values the real CLI accepts, the relay is a StatefulSet with a spool claim per pod, and the
 * probes ask /healthz and /readyz.
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
                "relay.batchMaxEntries", "relay.batchMaxBytes", "relay.health.probePath",
                "relay.health.probeIntervalSeconds", "relay.health.probeTimeoutSeconds", "relay.health.healthyThreshold",
                "relay.health.unhealthyThreshold", "relay.deadLetters.retryableStatus", "relay.deadLetters.spoolMaxAge",
                "relay.persistence.size",
                "relay.persistence.storageClass", "relay.resources", "collector.data.secretName",
                "collector.ingestKey.secretName", "collector.quotaPerMinute", "podDisruptionBudget.enabled",
                "serviceMonitor.enabled")) {
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
                "MCPD_WORKERS", "MCPD_QUOTA_PER_MINUTE")), "the ConfigMap holds the plain settings: " + configMap);
        assertTrue(emitted.containsAll(configMap));
        Set<String> unknown = new TreeSet<>(emitted);
        unknown.removeAll(DeployFiles.knownVariables());
        assertEquals(Set.of(), unknown, "the templates emit only variables mcpd reads: " + DeployFiles.knownVariables());
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
            "MCPD_MAX_BODY_BYTES", "maxBodyBytes",
            "MCPD_REQUEST_TIMEOUT_SECONDS", "requestTimeoutSeconds");

    /** The ConfigMap lines written only when their value is set (not empty), and the value each is made of. */
    static final Map<String, String> OPTIONAL_RELAY_SETTINGS = Map.of(
            "MCPD_RETRYABLE_STATUS", "relay.deadLetters.retryableStatus",
            "MCPD_SPOOL_MAX_AGE", "relay.deadLetters.spoolMaxAge");

    /** The optional relay settings as configmap.yaml writes them: absent when empty, a list joined with commas. */
    private static Map<String, String> optionalRelayEnvironment(Map<String, Object> values) {
        Map<String, String> environment = new TreeMap<>();
        OPTIONAL_RELAY_SETTINGS.forEach((variable, path) -> {
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
        if (relay) {
            environment.put("MCPD_DATA", "/data/mcpd.db");
            environment.put("MCPD_SPOOL_DIR", "/data/mcpd.spool");
            environment.putAll(optionalRelayEnvironment(values));
        } else if (!String.valueOf(at(values, "collector.data.secretName")).isEmpty()) {
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
}
