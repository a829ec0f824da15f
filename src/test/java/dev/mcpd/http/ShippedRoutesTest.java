package dev.mcpd.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class ShippedRoutesTest {

    @Test
    void theListNamesEveryRouteFileOfEachFolderAndNoOther() throws IOException {
        for (String folder : List.of("common", "relay", "serve")) {
            try (Stream<Path> files = Files.list(Path.of("src/main/resources/routes", folder))) {
                List<String> found = files.map(f -> f.getFileName().toString())
                        .filter(name -> name.endsWith(".camel.yaml"))
                        .map(name -> name.substring(0, name.length() - ".camel.yaml".length())).sorted().toList();
                assertEquals(found, ShippedRoutes.FILES.get(folder).stream().sorted().toList(), folder);
            }
        }
    }

    @Test
    void aRoleGetsTheCommonRoutesAndItsOwn() {
        String relay = ShippedRoutes.locations("relay");
        assertEquals(true, relay.startsWith("classpath:routes/common/ingest-refusals.camel.yaml,"));
        assertEquals(true, relay.contains("classpath:routes/relay/deliver.camel.yaml"));
        assertEquals(false, relay.contains("routes/serve/"));
    }
}
