package dev.mcpd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.collector.CollectorApplication;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.config.Option;
import dev.mcpd.config.Options;
import dev.mcpd.relay.RelayApplication;
import dev.mcpd.testing.TestCertificates;
import dev.mcpd.testing.TestConfig;
import dev.mcpd.tls.TlsMaterial;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * deploy/grafana/mcpd-relay.json and deploy/prometheus/alerts.yaml query only metrics a real relay exports: a relay
 * is started in this JVM, its GET /metrics read, and every mcpd_* name in the dashboard's queries and the rules'
 * expressions looked up among the families it served. The relay runs with TLS — HTTPS on its listener and a client
 * certificate for its upstreams, certificates made by openssl — because mcpd_tls_certificate_expiry_seconds exists
 * only where TLS is configured; its /metrics is read over HTTPS.
 */
class DashboardAndAlertsTest {

    static final String DASHBOARD = "deploy/grafana/mcpd-relay.json";
    static final String ALERTS = "deploy/prometheus/alerts.yaml";

    private static Path dir;
    private static RelayApplication relay;
    /** The metric names the relay serves: every sample's name, and every family named by # TYPE. */
    private static Set<String> exported;
    /** The use labels of the relay's mcpd_tls_certificate_expiry_seconds samples. */
    private static Set<String> tlsUses;
    private static TestCertificates ca;

    @BeforeAll
    static void scrapeARealRelay() throws Exception {
        dir = Files.createTempDirectory("mcpd-deploy-metrics");
        assertTrue(TestCertificates.available(), "openssl makes the certificates of the relay scraped here, whose TLS"
                + " metric the rules read (.ci/run installs it)");
        ca = TestCertificates.authority(dir.resolve("pki"), "internal");
        TestCertificates.Pair listener = ca.server("relay", "relay.internal");
        TestCertificates.Pair upstreamClient = ca.client("relay-client", "relay-0");
        relay = RelayApplication.start(McpdConfig.fromEnvironment(Map.of(
                "MCPD_LISTEN", "127.0.0.1:0",
                "MCPD_DATA", dir.resolve("mcpd.db").toString(),
                "MCPD_UPSTREAMS", "http://127.0.0.1:9",
                "MCPD_TLS_CERT", listener.cert().toString(), "MCPD_TLS_KEY", listener.key().toString(),
                "MCPD_UPSTREAM_CLIENT_CERT", upstreamClient.cert().toString(),
                "MCPD_UPSTREAM_CLIENT_KEY", upstreamClient.key().toString())));
        String body = scrape(relay.address().port());
        exported = new TreeSet<>();
        tlsUses = new TreeSet<>();
        for (String line : body.split("\n")) {
            if (line.startsWith("# TYPE ")) {
                exported.add(line.split(" ")[2]);
            } else if (!line.isBlank() && !line.startsWith("#")) {
                exported.add(line.split("[{ ]", 2)[0]);
                tlsUses.addAll(useLabels(line));
            }
        }
    }

    /** GET /metrics over HTTPS, trusting the test's authority. */
    private static String scrape(int port) throws Exception {
        HttpClient https = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .sslContext(TlsMaterial.sslContext(Optional.empty(),
                        Optional.of(TlsMaterial.Authorities.read("test", ca.caCert))))
                .connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<String> metrics = https.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port
                + "/metrics")).timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, metrics.statusCode());
        return metrics.body();
    }

    /** The use label of a mcpd_tls_certificate_expiry_seconds sample line; none for another line. */
    private static Set<String> useLabels(String line) {
        Matcher use = Pattern.compile("^mcpd_tls_certificate_expiry_seconds\\{(?:.*,)?use=\"([a-z]+)\"").matcher(line);
        return use.find() ? Set.of(use.group(1)) : Set.of();
    }

    @AfterAll
    static void stopTheRelay() throws Exception {
        if (relay != null) {
            relay.close();
        }
        if (dir != null) {
            try (var files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    /** Names not exported, allowing a histogram's or summary's series suffixes. */
    private static Set<String> notExported(Set<String> names) {
        return names.stream().filter(name -> !exported.contains(name)
                        && !exported.contains(name.replaceFirst("_(bucket|sum|count)$", "")))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    // ---- the dashboard

    private static JsonNode dashboard() throws Exception {
        return new ObjectMapper().readTree(DeployFiles.read(DASHBOARD));
    }

    /** Every query text of the dashboard: panels' target expressions and the template variables' queries. */
    private static List<String> dashboardQueries(JsonNode dashboard) {
        List<String> queries = new ArrayList<>();
        collect(dashboard, queries);
        return queries;
    }

    private static void collect(JsonNode node, List<String> queries) {
        if (node.isObject()) {
            node.fields().forEachRemaining(field -> {
                if (Set.of("expr", "query", "definition").contains(field.getKey()) && field.getValue().isTextual()) {
                    queries.add(field.getValue().asText());
                }
                collect(field.getValue(), queries);
            });
        } else if (node.isArray()) {
            node.forEach(child -> collect(child, queries));
        }
    }

    private static Set<String> metricsIn(List<String> texts) {
        Set<String> names = new TreeSet<>();
        texts.forEach(text -> names.addAll(DeployFiles.matches(DeployFiles.MCPD_METRIC, text)));
        return names;
    }

    /** The metrics table an operator reads. */
    private static final String METRICS_PAGE = "docs/monitoring.md";

    @Test
    void theRelayExportsEveryMetricTheDocsName() {
        String docs = Stream.concat(Stream.of("README.md"), docsPages().stream()).map(DeployFiles::read)
                .collect(Collectors.joining("\n"));
        Set<String> named = DeployFiles.matches(Pattern.compile("`(mcpd_relay_[a-z_]+|mcpd_uptime_seconds)"),
                docs).stream().map(name -> name.substring(1))
                .collect(Collectors.toCollection(TreeSet::new));
        assertTrue(named.size() >= 11, "the metrics the docs name: " + named);
        assertEquals(Set.of(), notExported(named), "exported: " + exported);
    }

    private static List<String> docsPages() {
        try (Stream<Path> pages = Files.list(DeployFiles.root().resolve("docs"))) {
            return pages.map(page -> "docs/" + page.getFileName()).filter(name -> name.endsWith(".md")).sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void everyMetricOfTheRelaysOwnIsInTheMetricsTable() {
        Set<String> table = DeployFiles.matches(Pattern.compile("\\| `(mcpd_[a-z_]+)"),
                DeployFiles.read(METRICS_PAGE)).stream().map(row -> row.substring(row.indexOf('`') + 1))
                .collect(Collectors.toCollection(TreeSet::new));
        Set<String> own = exported.stream().filter(name -> name.startsWith("mcpd_"))
                .map(name -> name.replaceFirst("_(bucket|sum|count|max)$", ""))
                .filter(name -> !table.contains(name) && !exported.contains(name + "_total"))
                .collect(Collectors.toCollection(TreeSet::new));
        own.removeIf(name -> table.contains(name + "_total") || table.contains(name.replaceFirst("_total$", "")));
        assertEquals(Set.of(), own, "a row in " + METRICS_PAGE + "'s metrics table for each: " + table);
    }

    @Test
    void everyMetricTheDashboardQueriesIsOneTheRelayExports() throws Exception {
        Set<String> used = metricsIn(dashboardQueries(dashboard()));
        assertTrue(used.size() >= 8, "the dashboard queries mcpd metrics: " + used);
        assertEquals(Set.of(), notExported(used), "exported: " + exported);
    }

    @Test
    void theDashboardShowsTheSpoolIngestDeliveryFailoverUpstreamsWindowsAndDeadLetters() throws Exception {
        JsonNode dashboard = dashboard();
        assertEquals("mcpd relay", dashboard.path("title").asText());
        assertFalse(dashboard.path("uid").asText().isEmpty());
        assertTrue(metricsIn(dashboardQueries(dashboard)).containsAll(Set.of(
                "mcpd_relay_spool_entries", "mcpd_relay_spool_bytes", "mcpd_relay_spool_oldest_seconds",
                "mcpd_relay_accepted_total", "mcpd_relay_refused_full_total", "mcpd_relay_delivered_total",
                "mcpd_relay_failovers_total", "mcpd_relay_upstream_up", "mcpd_relay_dead_letter_total",
                "mcpd_relay_upstream_window", "mcpd_relay_upstream_in_flight", "mcpd_relay_upstream_requests_total",
                "mcpd_relay_spool_out_for_delivery", "mcpd_relay_dead_letters", "mcpd_relay_dead_letter_bytes",
                "mcpd_relay_expired_total")));
        Set<Integer> ids = new HashSet<>();
        for (JsonNode panel : dashboard.path("panels")) {
            assertTrue(ids.add(panel.path("id").asInt()), "panel ids are unique");
            JsonNode grid = panel.path("gridPos");
            assertTrue(grid.path("x").asInt() + grid.path("w").asInt() <= 24, panel.path("title") + " fits the grid");
            if (!panel.path("type").asText().equals("row")) {
                assertFalse(panel.path("targets").isEmpty(), panel.path("title") + " has queries");
                for (JsonNode target : panel.path("targets")) {
                    assertFalse(target.path("expr").asText().isBlank(), panel.path("title") + " query");
                    assertEquals("${datasource}", target.path("datasource").path("uid").asText(),
                            "the data source is the dashboard's variable");
                }
            }
        }
        assertTrue(ids.size() >= 10, "panels: " + ids.size());
    }

    /** The panel of that title (rows too); the test fails when there is none, or more than one. */
    private static JsonNode panel(JsonNode dashboard, String title) {
        List<JsonNode> found = new ArrayList<>();
        dashboard.path("panels").forEach(panel -> {
            if (panel.path("title").asText().equals(title)) {
                found.add(panel);
            }
        });
        assertEquals(1, found.size(), "one panel titled " + title);
        return found.get(0);
    }

    @Test
    void aRowShowsWhatDeadHoldsItsBytesAndTheExpiries() throws Exception {
        JsonNode dashboard = dashboard();
        JsonNode row = panel(dashboard, "Dead letters and expiry");
        assertEquals("row", row.path("type").asText());
        String selector = "{job=~\"$job\", instance=~\"$instance\"}";
        Map<String, String> expected = Map.of(
                "Dead letters held", "mcpd_relay_dead_letters" + selector,
                "Dead letter bytes", "mcpd_relay_dead_letter_bytes" + selector,
                "Expired to dead/", "sum by (instance) (increase(mcpd_relay_expired_total" + selector
                        + "[$__rate_interval]))");
        expected.forEach((title, expr) -> {
            JsonNode panel = panel(dashboard, title);
            assertEquals("timeseries", panel.path("type").asText(), title);
            assertEquals(expr, panel.path("targets").path(0).path("expr").asText(), title + " query");
            assertEquals(row.path("gridPos").path("y").asInt() + 1, panel.path("gridPos").path("y").asInt(),
                    title + " sits under the row");
        });
        assertEquals("bytes", panel(dashboard, "Dead letter bytes").path("fieldConfig").path("defaults")
                .path("unit").asText());
        int right = 0;
        for (String title : List.of("Dead letters held", "Dead letter bytes", "Expired to dead/")) {
            JsonNode grid = panel(dashboard, title).path("gridPos");
            assertEquals(right, grid.path("x").asInt(), title + " follows the panel on its left");
            right += grid.path("w").asInt();
        }
        assertEquals(24, right, "the row's panels fill its width");
        for (JsonNode panel : dashboard.path("panels")) {
            JsonNode grid = panel.path("gridPos");
            assertTrue(grid.path("y").asInt() + grid.path("h").asInt() <= row.path("gridPos").path("y").asInt()
                    || grid.path("y").asInt() >= row.path("gridPos").path("y").asInt(),
                    panel.path("title") + " does not overlap the row");
        }
    }

    // ---- the alert rules

    /** Every rule of every group, by alert name. */
    private static Map<String, Map<String, Object>> rules() {
        Map<String, Map<String, Object>> rules = new LinkedHashMap<>();
        Set<String> groups = new HashSet<>();
        for (Object group : DeployFiles.list(DeployFiles.yamlMap(ALERTS).get("groups"), "groups")) {
            Map<String, Object> g = DeployFiles.map(group, "group");
            assertTrue(groups.add(String.valueOf(g.get("name"))), "group names are unique");
            for (Object rule : DeployFiles.list(g.get("rules"), g.get("name") + " rules")) {
                Map<String, Object> r = DeployFiles.map(rule, "rule");
                String name = String.valueOf(r.get("alert"));
                assertTrue(rules.put(name, r) == null, "alert names are unique: " + name);
            }
        }
        return rules;
    }

    private static String expr(String alert) {
        Map<String, Object> rule = rules().get(alert);
        assertTrue(rule != null, "an alert " + alert + " in " + rules().keySet());
        return String.valueOf(rule.get("expr")).replaceAll("\\s+", " ").strip();
    }

    @Test
    void everyMetricTheAlertRulesQueryIsOneTheRelayExports() {
        Set<String> used = new TreeSet<>();
        rules().values().forEach(rule -> {
            used.addAll(DeployFiles.matches(DeployFiles.MCPD_METRIC, String.valueOf(rule.get("expr"))));
            used.addAll(DeployFiles.matches(DeployFiles.MCPD_METRIC, String.valueOf(rule.get("annotations"))));
        });
        assertTrue(used.size() >= 6, "the rules query mcpd metrics: " + used);
        assertEquals(Set.of(), notExported(used), "exported: " + exported);
    }

    private static String description(String alert) {
        Map<String, Object> rule = rules().get(alert);
        assertTrue(rule != null, "an alert " + alert + " in " + rules().keySet());
        return String.valueOf(DeployFiles.map(rule.get("annotations"), alert).get("description"));
    }

    @Test
    void theDeadLetterRulesTellHowToSeeReplayAndPurgeWhatDeadHolds() {
        String deadLetters = description("McpdRelayDeadLetters");
        for (String text : List.of("dead/", "`mcpd relay dead list`", "`mcpd relay dead show SEQ`",
                "docs/dead-letters.md", "`mcpd relay dead replay`", "--retryable-status")) {
            assertTrue(deadLetters.contains(text), "McpdRelayDeadLetters names " + text + ": " + deadLetters);
        }
        String growing = description("McpdRelayDeadLettersGrowing");
        for (String text : List.of("`mcpd relay dead list`", "docs/dead-letters.md", "`mcpd relay dead replay",
                "`mcpd relay dead purge`")) {
            assertTrue(growing.contains(text), "McpdRelayDeadLettersGrowing names " + text + ": " + growing);
        }
        String expired = description("McpdRelayExpired");
        for (String text : List.of("--spool-max-age", "dead/", "expired", "`mcpd relay dead replay --all`")) {
            assertTrue(expired.contains(text), "McpdRelayExpired names " + text + ": " + expired);
        }
        // What the rules name is real: the options mcpd takes, the dead commands it has.
        Set<String> flags = Options.ALL.stream().map(Option::flag).collect(Collectors.toSet());
        Set<String> commands = new TreeSet<>();
        for (String alert : rules().keySet()) {
            String text = description(alert);
            DeployFiles.matches(Pattern.compile("(?<![\\w-])--[a-z][a-z-]+"), text).stream()
                    .filter(flag -> !flag.equals("--all"))
                    .forEach(flag -> assertTrue(flags.contains(flag), alert + " names an option mcpd has: " + flag));
            Matcher command = Pattern.compile("`mcpd relay dead ([a-z]+)").matcher(text);
            while (command.find()) {
                commands.add(command.group(1));
            }
        }
        assertEquals(Set.of("list", "show", "replay", "purge"), commands);
        for (String command : commands) {
            DeployFiles.CliRun help = DeployFiles.mcpd(Map.of(), "relay", "dead", command, "--help");
            assertEquals(0, help.status(), "mcpd relay dead " + command + " --help: " + help.err());
        }
    }

    /** alerts_test.yaml, the promtool unit tests: the alert names each case expects, firing or not. */
    @Test
    void thePromtoolTestsHaveAFiringCaseForEveryAlertAndAQuietOneForTheDeadLetterRules() {
        Map<String, Object> tests = DeployFiles.yamlMap("deploy/prometheus/alerts_test.yaml");
        assertEquals(List.of("alerts.yaml"), tests.get("rule_files"));
        Set<String> firing = new TreeSet<>();
        Set<String> quiet = new TreeSet<>();
        for (Object test : DeployFiles.list(tests.get("tests"), "tests")) {
            for (Object check : DeployFiles.list(DeployFiles.map(test, "test").get("alert_rule_test"), "checks")) {
                Map<String, Object> c = DeployFiles.map(check, "alert_rule_test");
                String name = String.valueOf(c.get("alertname"));
                assertTrue(rules().containsKey(name), "alerts_test.yaml checks an alert of alerts.yaml: " + name);
                List<Object> expected = DeployFiles.list(c.get("exp_alerts"), name + " exp_alerts");
                (expected.isEmpty() ? quiet : firing).add(name);
                for (Object alert : expected) {
                    Map<String, Object> labels = DeployFiles.map(DeployFiles.map(alert, name).get("exp_labels"), name);
                    assertEquals(DeployFiles.map(rules().get(name).get("labels"), name).get("severity"),
                            labels.get("severity"), name + " severity");
                }
            }
        }
        assertEquals(rules().keySet().stream().collect(Collectors.toCollection(TreeSet::new)), firing,
                "every alert has a case where it fires");
        assertTrue(quiet.containsAll(Set.of("McpdRelayDeadLetters", "McpdRelayDeadLettersGrowing", "McpdRelayExpired",
                "McpdTlsCertificateExpiresSoon", "McpdTlsCertificateExpiring")), "and a case where it does not: " + quiet);
    }

    @Test
    void everyRuleIsAnAlertWithASeverityAndASummary() {
        rules().forEach((name, rule) -> {
            assertTrue(name.matches("Mcpd(Relay|Tls)[A-Za-z0-9]+"), name);
            assertFalse(String.valueOf(rule.get("expr")).isBlank(), name + " expr");
            assertTrue(Set.of("critical", "warning", "info").contains(
                    DeployFiles.map(rule.get("labels"), name + " labels").get("severity")), name + " severity");
            assertFalse(String.valueOf(DeployFiles.map(rule.get("annotations"), name).get("summary")).isBlank());
            Object forDuration = rule.get("for");
            assertTrue(forDuration == null || String.valueOf(forDuration).matches("\\d+[smh]"), name + " for");
        });
    }

    @Test
    void theRulesCoverDeliveryBehindPrimaryFailingDeadLettersTheSpoolAndReadiness() {
        assertTrue(expr("McpdRelayDeliveryBehind").matches(".*mcpd_relay_spool_oldest_seconds.*> \\d+"));
        assertTrue(expr("McpdRelayPrimaryFailing").contains("rate(mcpd_relay_failovers_total[5m])")
                && expr("McpdRelayPrimaryFailing").endsWith("> 0"));
        assertTrue(expr("McpdRelayDeadLetters").contains("mcpd_relay_dead_letter_total")
                && expr("McpdRelayDeadLetters").endsWith("> 0"));
        // Each relay's fill (its dead letters included) against its own bound, 80% of it as /readyz does.
        String fill = "max by (job, instance) ((mcpd_relay_spool_bytes + mcpd_relay_dead_letter_bytes)"
                + " / mcpd_relay_spool_max_bytes)";
        assertEquals(fill + " > 0.8", expr("McpdRelaySpoolOver80Percent"));
        assertTrue(expr("McpdRelaySpoolFull").contains("mcpd_relay_refused_full_total"));
        assertEquals("up{job=\"mcpd-relay\"} == 0", expr("McpdRelayDown"));
        assertTrue(expr("McpdRelayNoUpstreamReachable").contains("(mcpd_relay_upstream_up) == 0"));
        assertTrue(expr("McpdRelayNotReady").contains("(mcpd_relay_upstream_up) == 0")
                && expr("McpdRelayNotReady").contains("(" + fill + " >= 0.8)"));
        assertTrue(expr("McpdRelayDeadLettersGrowing").contains("delta(mcpd_relay_dead_letters[1h])")
                && expr("McpdRelayDeadLettersGrowing").endsWith("> 0"));
        assertEquals("1h", String.valueOf(rules().get("McpdRelayDeadLettersGrowing").get("for")),
                "dead/ has grown for an hour");
        assertEquals("sum by (job, instance) (increase(mcpd_relay_expired_total[15m])) > 0", expr("McpdRelayExpired"));
        assertTrue(exported.contains("mcpd_relay_spool_max_bytes"), "the bound is a metric: " + exported);
    }

    // ---- TLS

    @Test
    void theRelayWithTlsExportsTheCertificateExpiryOfBothUses() {
        assertTrue(exported.contains("mcpd_tls_certificate_expiry_seconds"), "exported: " + exported);
        assertEquals(Set.of("listener", "upstream"), tlsUses,
                "use=\"listener\" with --tls-cert, use=\"upstream\" with --upstream-client-cert");
    }

    /** The McpdTls* rules name no job: a collector (mcpd serve, job mcpd-collector) exports the metric too. */
    @Test
    void theTlsRulesWatchEveryCertificateOfBothRolesByInstanceAndUse() throws Exception {
        String by = "min by (job, instance, use) (mcpd_tls_certificate_expiry_seconds)";
        assertEquals(by + " < 14 * 86400", expr("McpdTlsCertificateExpiresSoon"));
        assertEquals(by + " < 2 * 86400", expr("McpdTlsCertificateExpiring"));
        Map<String, List<String>> expected = Map.of("McpdTlsCertificateExpiresSoon", List.of("10m", "warning"),
                "McpdTlsCertificateExpiring", List.of("5m", "critical"));
        expected.forEach((alert, forAndSeverity) -> {
            Map<String, Object> rule = rules().get(alert);
            assertEquals(forAndSeverity.get(0), String.valueOf(rule.get("for")), alert + " for");
            assertEquals(forAndSeverity.get(1), DeployFiles.map(rule.get("labels"), alert).get("severity"), alert);
            assertFalse(expr(alert).contains("job="), alert + " applies to relays and collectors alike");
            String description = description(alert);
            for (String text : List.of("{{ $labels.use }}", "{{ $value | humanizeDuration }}", "--tls-cert",
                    "--upstream-client-cert", "cert-manager", "within 10 s", "without a restart")) {
                assertTrue(description.contains(text) || String.valueOf(rule.get("annotations")).contains(text),
                        alert + " says " + text + ": " + description);
            }
        });
        // The collector's listener exports it as the relay's does, under the same name and label.
        TestCertificates.Pair collectorCert = ca.server("collector", "collector.internal");
        try (CollectorApplication collector = CollectorApplication.start(TestConfig.on(dir.resolve("collector.db"),
                Map.of(), Map.of("MCPD_TLS_CERT", collectorCert.cert().toString(),
                        "MCPD_TLS_KEY", collectorCert.key().toString())))) {
            Set<String> uses = new TreeSet<>();
            scrape(collector.address().port()).lines().forEach(line -> uses.addAll(useLabels(line)));
            assertEquals(Set.of("listener"), uses, "mcpd serve with --tls-cert");
        }
    }

    @Test
    void aTlsRowShowsHowLongEachCertificateHasLeft() throws Exception {
        JsonNode dashboard = dashboard();
        JsonNode row = panel(dashboard, "TLS");
        assertEquals("row", row.path("type").asText());
        String selector = "{job=~\"$job\", instance=~\"$instance\"}";
        JsonNode perCertificate = panel(dashboard, "TLS certificate expiry");
        assertEquals("timeseries", perCertificate.path("type").asText());
        assertEquals("min by (instance, use) (mcpd_tls_certificate_expiry_seconds" + selector + ")",
                perCertificate.path("targets").path(0).path("expr").asText());
        JsonNode soonest = panel(dashboard, "Soonest certificate expiry");
        assertEquals("stat", soonest.path("type").asText());
        assertEquals("min(mcpd_tls_certificate_expiry_seconds" + selector + ")",
                soonest.path("targets").path(0).path("expr").asText());
        assertEquals("s", perCertificate.path("fieldConfig").path("defaults").path("unit").asText());
        assertEquals("dtdurations", soonest.path("fieldConfig").path("defaults").path("unit").asText());
        int right = 0;
        for (JsonNode panel : List.of(soonest, perCertificate)) {
            JsonNode grid = panel.path("gridPos");
            assertEquals(row.path("gridPos").path("y").asInt() + 1, grid.path("y").asInt(), "under the row");
            assertEquals(right, grid.path("x").asInt(), panel.path("title") + " follows the panel on its left");
            right += grid.path("w").asInt();
        }
        assertEquals(24, right, "the row's panels fill its width");
        // The thresholds are the alerts': orange under 14 days, red under 2.
        List<Integer> steps = new ArrayList<>();
        soonest.path("fieldConfig").path("defaults").path("thresholds").path("steps")
                .forEach(step -> steps.add(step.path("value").isNull() ? null : step.path("value").asInt()));
        assertEquals(Arrays.asList(null, 2 * 86400, 14 * 86400), steps);
        for (JsonNode panel : dashboard.path("panels")) {
            JsonNode grid = panel.path("gridPos");
            assertTrue(grid.path("y").asInt() + grid.path("h").asInt() <= row.path("gridPos").path("y").asInt()
                            || grid.path("y").asInt() >= row.path("gridPos").path("y").asInt(),
                    panel.path("title") + " does not overlap the row");
        }
    }
}
