package dev.mcpd.it.fault;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every fault IT has: a directory of its own for the processes' homes and stores, and a bound on its run (a
 * scenario that hangs fails rather than holding the build).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
abstract class FaultScenario {

    @TempDir
    Path dir;

    /** Describes this IT's scenario ({@link FaultRig#scenario}) in its directory. */
    FaultRig.Builder scenario(String id, String title) {
        return FaultRig.scenario(id, title, dir);
    }
}
