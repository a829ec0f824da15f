package dev.mcpd.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

class ListenAddressTest {

    @Test
    void hostAndPortAreSplitAtTheColon() {
        assertEquals(new ListenAddress("0.0.0.0", 4317), ListenAddress.parse("0.0.0.0:4317"));
        assertEquals(new ListenAddress("localhost", 8080), ListenAddress.parse("localhost:8080"));
        assertEquals(new ListenAddress("mcpd-relay.eu.internal", 443), ListenAddress.parse("mcpd-relay.eu.internal:443"));
    }

    @Test
    void ipv6HostIsWrittenInBrackets() {
        assertEquals(new ListenAddress("::1", 4317), ListenAddress.parse("[::1]:4317"));
        assertEquals(new ListenAddress("::", 4317), ListenAddress.parse("[::]:4317"));
        assertEquals("[::1]:4317", ListenAddress.parse("[::1]:4317").toString());
    }

    @Test
    void portZeroAsksForAFreePort() {
        assertEquals(0, ListenAddress.parse("127.0.0.1:0").port());
    }

    @Test
    void toStringReadsBackAsTheSameAddress() {
        assertEquals("0.0.0.0:4317", ListenAddress.parse("0.0.0.0:4317").toString());
        assertEquals(65535, ListenAddress.parse("h:65535").port());
    }

    @TestFactory
    Stream<DynamicTest> malformedAddressesAreRefusedWithTheReason() {
        return Map.of(
                        "4317", "\"4317\" is not HOST:PORT: the port is missing (e.g. 0.0.0.0:4317)",
                        ":4317", "\":4317\" is not HOST:PORT: the host is missing (0.0.0.0 listens on every interface)",
                        "localhost:65536", "\"localhost:65536\" is not HOST:PORT: the port must be a number from 0 to 65535",
                        "localhost:-1", "\"localhost:-1\" is not HOST:PORT: the port must be a number from 0 to 65535",
                        "localhost:http", "\"localhost:http\" is not HOST:PORT: the port must be a number from 0 to 65535",
                        "localhost:", "\"localhost:\" is not HOST:PORT: the port must be a number from 0 to 65535",
                        "::1:4317", "\"::1:4317\" is not HOST:PORT: an IPv6 address goes in brackets, e.g. [::1]:4317",
                        "[::1]", "\"[::1]\" is not HOST:PORT: an IPv6 address is written [ADDRESS]:PORT, e.g. [::1]:4317",
                        "bad host:80", "\"bad host:80\" is not HOST:PORT: \"bad host\" is not a host name or IP address",
                        "", "\"\" is not HOST:PORT: the port is missing (e.g. 0.0.0.0:4317)")
                .entrySet().stream()
                .map(bad -> dynamicTest("\"" + bad.getKey() + "\"", () -> assertEquals(bad.getValue(),
                        assertThrows(IllegalArgumentException.class, () -> ListenAddress.parse(bad.getKey()))
                                .getMessage())));
    }
}
