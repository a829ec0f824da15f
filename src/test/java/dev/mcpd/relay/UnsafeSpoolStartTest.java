package dev.mcpd.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.mcpd.config.ConfigException;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.testing.TestConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The relay itself (not only its command line) refuses a spool another user could write: the spool checks when it
 * opens, and the relay makes that the one-line start-up error of exit status 2. The fsGroup layout starts.
 */
class UnsafeSpoolStartTest {

    @TempDir
    Path tmp;

    private McpdConfig config() {
        return TestConfig.on(tmp.resolve("mcpd.db"), Map.of("MCPD_UPSTREAMS", "http://127.0.0.1:9"), Map.of());
    }

    @Test
    void aWorldWritableSpoolDirectoryIsAConfigurationErrorNamingTheFix() throws Exception {
        McpdConfig config = config();
        Path relay = Files.createDirectories(config.relay().relaySpoolDir());
        Files.setAttribute(relay, "unix:mode", 0777);
        ConfigException refused = assertThrows(ConfigException.class, () -> RelayApplication.start(config));
        assertEquals("spool directory " + relay + " is writable by every user (mode 0777): another user could add"
                + " entries for the relay to deliver, or remove spooled data; fix it with: chmod 700 " + relay,
                refused.getMessage());
    }

    @Test
    void theFsGroupLayoutStarts() throws Exception {
        McpdConfig config = config();
        Path relay = Files.createDirectories(config.relay().relaySpoolDir());
        Files.setAttribute(relay, "unix:mode", 02770);
        try (RelayApplication started = RelayApplication.start(config)) {
            assertEquals(relay, started.spool().directory());
        }
    }
}
