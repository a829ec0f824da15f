package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.net.URI;
import org.junit.jupiter.api.Test;

class UpstreamTest {

    private static Upstream upstream(String url) {
        return new Upstream(1, URI.create(url));
    }

    @Test
    void theTargetIsAppendedToABaseWithoutTrailingSlash() {
        assertEquals("http://mcpd.eu.internal:4317/v1/traces",
                upstream("http://mcpd.eu.internal:4317").urlFor("/v1/traces"));
    }

    @Test
    void aTrailingSlashOfTheBaseIsNotDoubled() {
        assertEquals("http://mcpd.eu.internal:4317/v1/traces",
                upstream("http://mcpd.eu.internal:4317/").urlFor("/v1/traces"));
    }

    @Test
    void aPathPrefixOfTheBaseIsKeptBeforeTheTarget() {
        assertEquals("https://gw.example.com/mcpd/v1/ingest", upstream("https://gw.example.com/mcpd").urlFor("/v1/ingest"));
        assertEquals("https://gw.example.com/mcpd/v1/ingest", upstream("https://gw.example.com/mcpd/").urlFor("/v1/ingest"));
    }

    @Test
    void theQueryOfTheTargetIsPassedOnUnchanged() {
        assertEquals("http://eu:4317/v1/ingest?source=edge&tag=a%20b",
                upstream("http://eu:4317").urlFor("/v1/ingest?source=edge&tag=a%20b"));
    }

    @Test
    void theLabelOfAUrlWithoutUserinfoIsTheUrl() {
        assertEquals("http://mcpd.eu.internal:4317", upstream("http://mcpd.eu.internal:4317").label());
        assertEquals("https://gw.example.com/mcpd", upstream("https://gw.example.com/mcpd").label());
    }

    @Test
    void theLabelLeavesOutTheUserinfo() {
        String label = upstream("http://relay:s3cret@mcpd.eu.internal:4317/mcpd").label();
        assertEquals("http://mcpd.eu.internal:4317/mcpd", label);
        assertFalse(label.contains("s3cret"));
        assertFalse(label.contains("relay"));
    }

    @Test
    void theLabelWithoutUserinfoAndWithoutPortHasNoPort() {
        assertEquals("https://gw.example.com", upstream("https://user:pw@gw.example.com").label());
    }

    @Test
    void theLabelOfAnIpv6UpstreamKeepsTheBrackets() {
        assertEquals("http://[::1]:4317", upstream("http://user:pw@[::1]:4317").label());
    }
}
