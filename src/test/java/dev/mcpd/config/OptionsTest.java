package dev.mcpd.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The registry is the one place an option is declared: nothing declared there is left out of what it makes. */
class OptionsTest {

    @Test
    void everyDeclaredOptionIsListedSoHelpConfigAndTheReadmeShowIt() throws IllegalAccessException {
        List<Option<?>> declared = new ArrayList<>();
        for (Field field : Options.class.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == Option.class) {
                declared.add((Option<?>) field.get(null));
            }
        }
        assertEquals(declared, Options.ALL);
    }

    @Test
    void aDefaultIsParsedLikeAGivenValueSoItsTextAndValueAgree() {
        McpdConfig nothingGiven = McpdConfig.from(Map.of(), Map.of());
        assertEquals(ListenAddress.parse("0.0.0.0:4317"), nothingGiven.listener().address());
        assertEquals(ByteSize.GIB, nothingGiven.relay().spoolMaxBytes());
        assertEquals(16 * ByteSize.MIB, nothingGiven.listener().maxBodyBytes());
        assertEquals(Duration.ofSeconds(30), nothingGiven.listener().requestTimeout());
        assertEquals(4, nothingGiven.delivery().workers());
        assertEquals(0, nothingGiven.ingest().quotaPerMinute());
    }
}
