package dev.mcpd.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Without --spool-dir the spool sits beside the data file, named after it. */
class SpoolDirTest {

    @Test
    void spoolSitsBesideTheDataFileNamedAfterItsStem() {
        assertEquals(Path.of("/data/mcpd.spool"), McpdConfig.defaultSpoolDir("/data/mcpd.db"));
    }

    @Test
    void defaultDataGivesDefaultSpool() {
        assertEquals(Path.of("./data/mcpd.spool"), McpdConfig.defaultSpoolDir("./data/mcpd.db"));
    }

    @Test
    void onlyTheLastExtensionIsDropped() {
        assertEquals(Path.of("/srv/archive.2024.spool"), McpdConfig.defaultSpoolDir("/srv/archive.2024.db"));
    }

    @Test
    void dataWithoutExtensionKeepsItsWholeName() {
        assertEquals(Path.of("/srv/store.spool"), McpdConfig.defaultSpoolDir("/srv/store"));
    }

    @Test
    void hiddenFileNameIsNotAnExtension() {
        assertEquals(Path.of("/srv/.mcpd.spool"), McpdConfig.defaultSpoolDir("/srv/.mcpd"));
    }

    @Test
    void dataWithoutDirectoryGivesSpoolInTheCurrentDirectory() {
        assertEquals(Path.of("mcpd.spool"), McpdConfig.defaultSpoolDir("mcpd.db"));
    }

    @Test
    void postgresStoreHasNoFileSoTheSpoolTakesTheDefaultPlace() {
        assertEquals(Path.of("./data/mcpd.spool"), McpdConfig.defaultSpoolDir("postgres://mcpd:pw@db:5432/mcpd"));
        assertEquals(Path.of("./data/mcpd.spool"), McpdConfig.defaultSpoolDir("postgresql://db/mcpd"));
    }

    @Test
    void spoolDirGivenExplicitlyBeatsTheDerivedOne() {
        McpdConfig config = McpdConfig.fromEnvironment(Map.of("MCPD_DATA", "/data/mcpd.db", "MCPD_SPOOL_DIR", "/fast/spool"));
        assertEquals(Path.of("/fast/spool"), config.relay().spoolDir());
    }

    @Test
    void derivedSpoolFollowsTheDataGivenInTheEnvironment() {
        assertEquals(Path.of("/data/mcpd.spool"), McpdConfig.fromEnvironment(Map.of("MCPD_DATA",
                "/data/mcpd.db")).relay().spoolDir());
    }

    @Test
    void relaySpoolsInARelayDirectoryUnderTheSpoolDir() {
        assertEquals(Path.of("/data/mcpd.spool/relay"),
                McpdConfig.fromEnvironment(Map.of("MCPD_DATA", "/data/mcpd.db")).relay().relaySpoolDir());
    }
}
