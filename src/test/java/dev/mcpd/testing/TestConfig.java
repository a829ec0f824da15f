package dev.mcpd.testing;

import dev.mcpd.config.McpdConfig;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The configuration a test's server runs with: port 0 of 127.0.0.1 (the server says which port it bound), its data
 * file, then the test's variables.
 */
public final class TestConfig {

    private TestConfig() {
    }

    /**
     * {@code MCPD_LISTEN} on port 0 of 127.0.0.1, {@code MCPD_DATA} at {@code dataFile}, then {@code defaults},
     * then {@code extra} (which wins).
     */
    public static McpdConfig on(Path dataFile, Map<String, String> defaults, Map<String, String> extra) {
        Map<String, String> environment = new HashMap<>();
        environment.put("MCPD_LISTEN", "127.0.0.1:0"); // the kernel chooses: no race for a free port
        environment.put("MCPD_DATA", dataFile.toString());
        environment.putAll(defaults);
        environment.putAll(extra);
        return McpdConfig.fromEnvironment(environment);
    }
}
