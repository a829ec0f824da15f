package dev.mcpd.http;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The route files in the jar, folder by folder ({@code routes/common/} for every role, then the role's own): named
 * here rather than found with a pattern, because Camel finds {@code classpath:routes/*.camel.yaml} by reading and
 * inflating every entry of the jar — twice — which was half of the relay's start-up. A test holds this list to what
 * the folders contain.
 */
public final class ShippedRoutes {

    static final Map<String, List<String>> FILES = Map.of(
            "common", List.of("ingest-refusals", "mcpd-extension", "metrics", "probes", "tls-reload"),
            "relay", List.of("deliver", "delivery-faults", "ingest", "probe-upstreams", "relay-spool",
                    "relay-status", "relay-sync", "replay-intake", "spool-expiry"),
            "serve", List.of("collect", "collector-status", "stats", "upkeep"));

    private ShippedRoutes() {
    }

    /** The shipped routes of a role, as Camel's comma-separated routes-include locations. */
    public static String locations(String role) {
        return Stream.of("common", role).flatMap(folder -> FILES.get(folder).stream()
                        .map(name -> "classpath:routes/" + folder + "/" + name + ".camel.yaml"))
                .collect(Collectors.joining(","));
    }
}
