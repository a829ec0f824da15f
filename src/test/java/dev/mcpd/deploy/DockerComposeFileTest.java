package dev.mcpd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * deploy/docker/docker-compose.multi-region.yml, read without Docker: PostgreSQL, two collectors on it and a
 * relay delivering to collector-1 then collector-2; every mcpd service's environment is checked against the
 * variables mcpd reads and run through the real {@code mcpd config}.
 */
class DockerComposeFileTest {

    static final String COMPOSE = "deploy/docker/docker-compose.multi-region.yml";

    private static Map<String, Object> services() {
        return DeployFiles.map(DeployFiles.yamlMap(COMPOSE).get("services"), "services");
    }

    private static Map<String, Object> service(String name) {
        return DeployFiles.map(services().get(name), "service " + name);
    }

    /** The services that run mcpd: every one but PostgreSQL. */
    private static Map<String, Map<String, Object>> mcpdServices() {
        Map<String, Map<String, Object>> mcpd = new LinkedHashMap<>();
        services().forEach((name, definition) -> {
            Map<String, Object> service = DeployFiles.map(definition, name);
            if (!String.valueOf(service.get("image")).startsWith("postgres")) {
                mcpd.put(name, service);
            }
        });
        return mcpd;
    }

    /** A service's environment, in either Compose form (a mapping, or a list of NAME=value). */
    static Map<String, String> environment(Map<String, Object> service) {
        Object environment = service.get("environment");
        Map<String, String> variables = new LinkedHashMap<>();
        if (environment instanceof Map<?, ?> map) {
            map.forEach((name, value) -> variables.put(String.valueOf(name), value == null ? "" : String.valueOf(value)));
        } else if (environment instanceof List<?> list) {
            for (Object entry : list) {
                String[] pair = String.valueOf(entry).split("=", 2);
                variables.put(pair[0], pair.length > 1 ? pair[1] : "");
            }
        }
        return variables;
    }

    private static String command(Map<String, Object> service) {
        Object command = service.get("command");
        if (command instanceof List<?> list) {
            assertEquals(1, list.size(), "one word of command: " + list);
            return String.valueOf(list.get(0));
        }
        return String.valueOf(command).strip();
    }

    @Test
    void theFileParsesAndHoldsPostgresTwoCollectorsAndARelay() {
        assertEquals(Set.of("postgres", "collector-1", "collector-2", "relay"), services().keySet());
        assertEquals("postgres:16", service("postgres").get("image"));
        assertEquals(Set.of("collector-1", "collector-2", "relay"), mcpdServices().keySet());
    }

    @Test
    void everyMcpdServiceSetsOnlyMcpdVariablesThatMcpdReads() {
        Set<String> known = DeployFiles.knownVariables();
        mcpdServices().forEach((name, service) -> {
            Set<String> names = environment(service).keySet();
            assertFalse(names.isEmpty(), name + " is configured by its environment");
            Set<String> unknown = names.stream().filter(variable -> !known.contains(variable))
                    .collect(Collectors.toCollection(TreeSet::new));
            assertEquals(Set.of(), unknown, name + " sets only MCPD_* variables mcpd reads: " + known);
        });
    }

    @Test
    void everyMcpdServiceRunsRelayOrServe() {
        assertEquals("serve", command(service("collector-1")));
        assertEquals("serve", command(service("collector-2")));
        assertEquals("relay", command(service("relay")));
        mcpdServices().forEach((name, service) ->
                assertTrue(Set.of("relay", "serve").contains(command(service)), name + " runs relay or serve"));
    }

    @Test
    void theRelayDeliversToCollectorOneFirstAndCollectorTwoSecond() {
        List<URI> upstreams = Arrays.stream(environment(service("relay")).get("MCPD_UPSTREAMS").split(","))
                .map(String::strip).map(URI::create).toList();
        assertEquals(2, upstreams.size(), "two upstreams: " + upstreams);
        assertEquals("collector-1", upstreams.get(0).getHost(), "primary");
        assertEquals("collector-2", upstreams.get(1).getHost(), "secondary");
        for (URI upstream : upstreams) {
            String listen = environment(service(upstream.getHost())).getOrDefault("MCPD_LISTEN", "0.0.0.0:4317");
            assertEquals(Integer.parseInt(listen.substring(listen.lastIndexOf(':') + 1)), upstream.getPort(),
                    upstream + " names the port " + upstream.getHost() + " listens on");
        }
    }

    @Test
    void bothCollectorsStoreInTheComposePostgres() {
        Map<String, String> postgres = environment(service("postgres"));
        for (String collector : List.of("collector-1", "collector-2")) {
            URI data = URI.create(environment(service(collector)).get("MCPD_DATA"));
            assertEquals("postgres", data.getScheme(), collector);
            assertEquals("postgres", data.getHost(), collector + " reaches the postgres service");
            assertEquals(postgres.get("POSTGRES_USER") + ":" + postgres.get("POSTGRES_PASSWORD"), data.getUserInfo());
            assertEquals("/" + postgres.get("POSTGRES_DB"), data.getPath());
            Map<String, Object> dependsOn = DeployFiles.map(service(collector).get("depends_on"), "depends_on");
            assertEquals("service_healthy", DeployFiles.map(dependsOn.get("postgres"), "postgres").get("condition"),
                    collector + " starts once PostgreSQL is healthy");
        }
    }

    @Test
    void everyMcpdServiceConfigurationIsAcceptedByTheRealCli() {
        // What the container sees: the image's ENV, then the service's environment over it.
        Map<String, String> image = DeployFiles.dockerfileEnvironment(DeployFiles.dockerfile(DockerfileTest.DOCKERFILE));
        mcpdServices().forEach((name, service) -> {
            Map<String, String> environment = new HashMap<>(image);
            environment.putAll(environment(service));
            DeployFiles.CliRun run = DeployFiles.mcpd(environment, "config");
            assertEquals(0, run.status(), name + ": " + run.err());
            assertEquals("", run.err(), name);
            assertFalse(run.out().contains("mcpd-demo-password"), name + ": config prints no password");
        });
        Map<String, String> relay = new HashMap<>(image);
        relay.putAll(environment(service("relay")));
        assertTrue(DeployFiles.mcpd(relay, "config").section("relay").startsWith(
                "relay           2 upstream(s) in order, http://collector-1:4317, http://collector-2:4317;"));
        Map<String, String> collector = new HashMap<>(image);
        collector.putAll(environment(service("collector-1")));
        assertTrue(DeployFiles.mcpd(collector, "config").section("store").endsWith("(PostgreSQL)"));
    }

    @Test
    void everyServiceHasAHealthCheckAndMcpdOnesAskTheirProbes() {
        services().forEach((name, definition) -> {
            Map<String, Object> healthcheck = DeployFiles.map(DeployFiles.map(definition, name).get("healthcheck"),
                    name + " healthcheck");
            assertFalse(DeployFiles.list(healthcheck.get("test"), name + " test").isEmpty(), name);
        });
        assertEquals(List.of("CMD", "/opt/mcpd/bin/healthcheck", "/healthz"),
                DeployFiles.map(service("relay").get("healthcheck"), "relay").get("test"));
        for (String collector : List.of("collector-1", "collector-2")) {
            assertEquals(List.of("CMD", "/opt/mcpd/bin/healthcheck", "/readyz"),
                    DeployFiles.map(service(collector).get("healthcheck"), collector).get("test"),
                    collector + " is healthy while its store answers");
        }
    }

    @Test
    void theRelaySpoolsOnANamedVolumeAndEveryMcpdPortIsPublished() {
        List<Object> volumes = DeployFiles.list(service("relay").get("volumes"), "relay volumes");
        String spool = volumes.stream().map(String::valueOf).filter(v -> v.endsWith(":/data")).findFirst()
                .orElseThrow(() -> new AssertionError("the relay mounts a volume on /data: " + volumes));
        String volume = spool.substring(0, spool.indexOf(':'));
        assertTrue(DeployFiles.map(DeployFiles.yamlMap(COMPOSE).get("volumes"), "volumes").containsKey(volume),
                volume + " is a named volume, kept across container restarts");
        assertEquals("/data/mcpd.db", environment(service("relay")).getOrDefault("MCPD_DATA", "/data/mcpd.db"),
                "the spool (beside MCPD_DATA) is on that volume");
        Set<String> published = new TreeSet<>();
        mcpdServices().forEach((name, service) -> {
            List<Object> ports = DeployFiles.list(service.get("ports"), name + " ports");
            assertEquals(1, ports.size(), name);
            String port = String.valueOf(ports.get(0));
            assertTrue(port.endsWith(":4317"), name + " publishes its port 4317: " + port);
            published.add(port.substring(0, port.lastIndexOf(':')));
        });
        assertEquals(3, published.size(), "three different host ports: " + published);
        assertEquals("4317:4317", String.valueOf(DeployFiles.list(service("relay").get("ports"), "ports").get(0)),
                "senders reach the relay on 4317");
    }
}
