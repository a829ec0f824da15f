package dev.mcpd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * The chart linted ({@code helm lint --strict}) and rendered ({@code helm template}) by Helm itself, for every values
 * file in deploy/helm/examples/ and both modes, and the rendered objects checked: {@code MCPD_TEST_HELM}
 * (.ci/helm.sh sets it) or {@code helm} on the PATH. Skipped, saying so, where neither is.
 */
class HelmTemplateTest {

    private static final Path CHART = DeployFiles.root().resolve("deploy/helm/mcpd");
    private static String helm;

    record Run(int status, String output) {
    }

    @BeforeAll
    static void findHelm() {
        helm = DeployFiles.tool("MCPD_TEST_HELM", "helm").orElse(null);
    }

    private static Run helm(String... args) throws IOException, InterruptedException {
        assumeTrue(helm != null, "no Helm here: set MCPD_TEST_HELM or put helm on the PATH (.ci/helm.sh fetches it)");
        List<String> command = new ArrayList<>(List.of(helm));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "helm ended");
        return new Run(process.exitValue(), output);
    }

    static List<Path> examples() throws IOException {
        try (Stream<Path> files = Files.list(DeployFiles.root().resolve("deploy/helm/examples"))) {
            return files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
        }
    }

    /** The documents {@code helm template} renders, each a Kubernetes object. */
    private static List<Map<String, Object>> rendered(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("template", "mcpd", CHART.toString()));
        all.addAll(List.of(args));
        Run run = helm(all.toArray(String[]::new));
        assertEquals(0, run.status(), "helm template " + String.join(" ", args) + ":\n" + run.output());
        List<Map<String, Object>> objects = new ArrayList<>();
        LoadSettings settings = LoadSettings.builder().setAllowDuplicateKeys(false).build();
        for (Object document : new Load(settings).loadAllFromString(run.output())) {
            if (document != null) {
                Map<String, Object> object = DeployFiles.map(document, "a rendered document");
                assertTrue(object.containsKey("kind") && object.containsKey("apiVersion"), "a Kubernetes object: "
                        + object);
                objects.add(object);
            }
        }
        return objects;
    }

    private static Map<String, Object> only(List<Map<String, Object>> objects, String kind) {
        List<Map<String, Object>> found = objects.stream().filter(o -> kind.equals(o.get("kind"))).toList();
        assertEquals(1, found.size(), "one " + kind + " among " + objects.stream().map(o -> o.get("kind")).toList());
        return found.get(0);
    }

    private static Map<String, Object> at(Map<String, Object> object, String... path) {
        Map<String, Object> here = object;
        for (String key : path) {
            here = DeployFiles.map(here.get(key), String.join(".", path));
        }
        return here;
    }

    private static Map<String, Object> container(Map<String, Object> workload) {
        return DeployFiles.map(DeployFiles.list(at(workload, "spec", "template", "spec").get("containers"),
                "containers").get(0), "the mcpd container");
    }

    @Test
    void lintPassesStrictlyForEveryExampleAndForTheDefaultValues() throws Exception {
        for (Path example : examples()) {
            Run lint = helm("lint", "--strict", CHART.toString(), "-f", example.toString());
            assertEquals(0, lint.status(), example + ":\n" + lint.output());
            assertTrue(lint.output().contains("1 chart(s) linted, 0 chart(s) failed"), lint.output());
        }
        // The default values name no upstream: lint turns the chart's `fail` into an INFO line and passes; it is
        // `helm template` (and install) that refuses them.
        assertEquals(0, helm("lint", "--strict", CHART.toString()).status());
        Run template = helm("template", "mcpd", CHART.toString());
        assertNotEquals(0, template.status());
        assertTrue(template.output().contains("mode relay needs relay.upstreams"), template.output());
    }

    @Test
    void everyExampleRendersTheRelayAsAStatefulSetWithItsSpoolClaimProbesAndKnownVariables() throws Exception {
        Set<String> known = DeployFiles.knownVariables();
        for (Path example : examples()) {
            List<Map<String, Object>> objects = rendered("-f", example.toString());
            Map<String, Object> relay = only(objects, "StatefulSet");
            List<Object> claims = DeployFiles.list(at(relay, "spec").get("volumeClaimTemplates"), "claims");
            assertFalse(claims.isEmpty(), example + ": the spool's volume claim");
            Map<String, Object> container = container(relay);
            assertEquals("/healthz", at(container, "livenessProbe", "httpGet").get("path"), example.toString());
            assertEquals("/readyz", at(container, "readinessProbe", "httpGet").get("path"), example.toString());
            String text = objects.toString();
            for (String variable : DeployFiles.variablesIn(text)) {
                assertTrue(known.contains(variable), example + " renders " + variable + ", which mcpd does not read");
            }
            Map<String, Object> config = at(only(objects, "ConfigMap"), "data");
            assertTrue(config.containsKey("MCPD_UPSTREAMS") && config.containsKey("MCPD_SPOOL_MAX_BYTES"),
                    example + ": " + config.keySet());
        }
    }

    @Test
    void theCollectorModeRendersADeploymentOnPostgres() throws Exception {
        List<Map<String, Object>> objects = rendered("--set", "mode=collector",
                "--set", "collector.data.secretName=db", "--set", "collector.data.secretKey=url");
        Map<String, Object> collector = only(objects, "Deployment");
        assertEquals("/readyz", at(container(collector), "readinessProbe", "httpGet").get("path"));
        assertTrue(objects.stream().noneMatch(o -> "StatefulSet".equals(o.get("kind"))));
    }

    @Test
    void theOptionsOfDeadLettersAndHealthChecksPassThroughAsVariables() throws Exception {
        Path example = examples().get(0);
        Map<String, Object> config = at(only(rendered("-f", example.toString(),
                "--set", "relay.deadLetters.spoolMaxAge=7d", "--set", "relay.deadLetters.retryableStatus=409",
                "--set", "relay.orderedPaths={/api/v1/write,/otlp/*}", "--set", "relay.forwardHeaders={none}"),
                "ConfigMap"), "data");
        assertEquals("7d", config.get("MCPD_SPOOL_MAX_AGE"));
        assertEquals("409", config.get("MCPD_RETRYABLE_STATUS"));
        assertEquals("/api/v1/write,/otlp/*", config.get("MCPD_ORDERED_PATHS"));
        assertEquals("none", config.get("MCPD_FORWARD_HEADERS"));
        assertTrue(config.containsKey("MCPD_PROBE_INTERVAL_SECONDS"), config.toString());
    }

    /**
     * {@code mcpd config} of a collector pod: its environment is the rendered ConfigMap's {@code data} and the store's
     * URL from its Secret; the run must succeed.
     */
    private static DeployFiles.CliRun collectorConfig(Map<String, Object> configMap) {
        Map<String, String> environment = new TreeMap<>();
        configMap.forEach((variable, value) -> environment.put(variable, String.valueOf(value)));
        environment.put("MCPD_DATA", "postgres://mcpd:secret@postgres.example:5432/mcpd");
        DeployFiles.CliRun run = DeployFiles.mcpd(environment, "config");
        assertEquals(0, run.status(), run.err());
        return run;
    }

    @Test
    void aKafkaTopicBetweenRelaysAndCollectorsPassesThroughAsVariablesTheRealCliTakes() throws Exception {
        String topic = "kafka://kafka-0.kafka:9092,kafka-1.kafka:9092/telemetry";
        Map<String, Object> relay = at(only(rendered("-f", examples().get(0).toString(), "--set-json",
                "relay.upstreams=[\"" + topic + "\",\"http://collector.other-region:4317\"]"), "ConfigMap"), "data");
        Map<String, String> relayEnvironment = new TreeMap<>();
        relay.forEach((variable, value) -> relayEnvironment.put(variable, String.valueOf(value)));
        DeployFiles.CliRun relayRun = DeployFiles.mcpd(relayEnvironment, "config");
        assertEquals(0, relayRun.status(), relayRun.err());
        assertTrue(relayRun.section("relay").startsWith("relay           2 upstream(s) in order, " + topic
                + ", http://collector.other-region:4317;"), relayRun.out());

        String[] collector = {"--set", "mode=collector", "--set", "collector.data.secretName=db"};
        assertFalse(at(only(rendered(collector), "ConfigMap"), "data").containsKey("MCPD_SOURCE"),
                "no source by default");
        List<String> set = new ArrayList<>(List.of(collector));
        set.addAll(List.of("--set", "collector.source.url=kafka://kafka-0.kafka:9092/telemetry",
                "--set", "collector.source.group=archivers"));
        DeployFiles.CliRun run = collectorConfig(at(only(rendered(set.toArray(String[]::new)), "ConfigMap"),
                "data"));
        assertTrue(run.section("source").startsWith("source          consumes kafka://kafka-0.kafka:9092/telemetry"
                + " as group archivers"), run.out());
    }

    @Test
    void theCollectorsUpkeepSettingsPassThroughAsVariablesTheRealCliTakes() throws Exception {
        String[] collector = {"--set", "mode=collector", "--set", "collector.data.secretName=db"};
        Map<String, Object> defaults = at(only(rendered(collector), "ConfigMap"), "data");
        assertEquals("10", defaults.get("MCPD_LEASE_PASS_SECONDS"));
        assertEquals("7d", defaults.get("MCPD_DEDUP_WINDOW"));
        assertFalse(defaults.containsKey("MCPD_RETENTION"), "by default every archived batch is kept: " + defaults);

        List<String> set = new ArrayList<>(List.of(collector));
        set.addAll(List.of("--set", "collector.leasePassSeconds=5", "--set", "collector.dedupWindow=14d",
                "--set", "collector.retention=90d"));
        Map<String, Object> config = at(only(rendered(set.toArray(String[]::new)), "ConfigMap"), "data");
        assertEquals("5", config.get("MCPD_LEASE_PASS_SECONDS"));
        assertEquals("14d", config.get("MCPD_DEDUP_WINDOW"));
        assertEquals("90d", config.get("MCPD_RETENTION"));
        DeployFiles.CliRun run = collectorConfig(config);
        assertTrue(run.section("upkeep").endsWith("lease renewed every 5 s (free 15 s after the holder's last pass);"
                + " keys kept 14d; batches kept 90d"), run.out());

        // A relay takes none of them.
        Map<String, Object> relay = at(only(rendered("-f", examples().get(0).toString(), "--set", "mode=relay",
                "--set", "collector.retention=90d"), "ConfigMap"), "data");
        for (String variable : List.of("MCPD_LEASE_PASS_SECONDS", "MCPD_DEDUP_WINDOW", "MCPD_RETENTION")) {
            assertFalse(relay.containsKey(variable), variable + " in a relay's ConfigMap");
        }
    }
}
