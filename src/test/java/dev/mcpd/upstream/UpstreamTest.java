package dev.mcpd.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.wire.RequestTarget;
import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class UpstreamTest {

    private static Upstream upstream(String url) {
        return new Upstream(1, URI.create(url));
    }

    @Test
    void theTargetIsAppendedToABaseWithoutTrailingSlash() throws Exception {
        assertEquals("http://mcpd.eu.internal:4317/v1/traces",
                upstream("http://mcpd.eu.internal:4317").urlFor("/v1/traces"));
    }

    @Test
    void aTrailingSlashOfTheBaseIsNotDoubled() throws Exception {
        assertEquals("http://mcpd.eu.internal:4317/v1/traces",
                upstream("http://mcpd.eu.internal:4317/").urlFor("/v1/traces"));
    }

    @Test
    void aPathPrefixOfTheBaseIsKeptBeforeTheTarget() throws Exception {
        assertEquals("https://gw.example.com/mcpd/v1/ingest", upstream("https://gw.example.com/mcpd").urlFor("/v1/ingest"));
        assertEquals("https://gw.example.com/mcpd/v1/ingest", upstream("https://gw.example.com/mcpd/").urlFor("/v1/ingest"));
    }

    @Test
    void theQueryOfTheTargetIsPassedOnUnchanged() throws Exception {
        assertEquals("http://eu:4317/v1/ingest?source=edge&tag=a%20b",
                upstream("http://eu:4317").urlFor("/v1/ingest?source=edge&tag=a%20b"));
    }

    /** Issue 12, defect 1: what senders wrote that once steered delivery elsewhere, by textual concatenation. */
    private static final List<String> HOSTILE_TARGETS = List.of(
            "0/a://b/x", ":9999/a://b/x", ".evil.net/x", "@evil.net/x", "//evil.net:9999/x", "/x/../../../y",
            "/%2e%2e/%2e%2e/admin", "http://evil.net:9999/x", "https://evil.net/x", "*", "?x=1", "#frag",
            "\\evil.net\\x", "/x\u0000y", "/x y", "/{{env:HOME}}", "/a%2", "/x#y");

    @ParameterizedTest
    @ValueSource(strings = {"http://127.0.0.1:5318", "http://127.0.0.1", "https://host", "https://host:8443/base",
            "http://[::1]:4317/"})
    void noTargetChangesTheSchemeHostPortOrLeavesThePathOfTheUpstream(String base) {
        Upstream upstream = upstream(base);
        URI url = upstream.url();
        String basePath = url.getRawPath().endsWith("/") ? url.getRawPath().substring(0, url.getRawPath().length() - 1)
                : url.getRawPath();
        for (String target : HOSTILE_TARGETS) {
            String built;
            try {
                built = upstream.urlFor(target);
            } catch (RequestTarget.InvalidTarget refused) {
                continue; // never sent anywhere: also right
            }
            URI sent = URI.create(built);
            assertEquals(url.getScheme(), sent.getScheme(), target + " → " + built);
            assertEquals(url.getHost(), sent.getHost(), target + " → " + built);
            assertEquals(url.getPort(), sent.getPort(), target + " → " + built);
            assertTrue(sent.getRawPath().startsWith(basePath + "/"), target + " → " + built);
        }
    }

    @Test
    void theTargetsOfTheAttacksFoundAreRefusedOrReducedToAPath() throws Exception {
        assertThrows(RequestTarget.InvalidTarget.class, () -> upstream("http://127.0.0.1:5318").urlFor("0/a://b/x"));
        assertThrows(RequestTarget.InvalidTarget.class, () -> upstream("http://127.0.0.1").urlFor(":9999/a://b/x"));
        assertThrows(RequestTarget.InvalidTarget.class, () -> upstream("https://host").urlFor(".evil.net/x"));
        assertEquals("http://127.0.0.1:5318/x", upstream("http://127.0.0.1:5318").urlFor("http://127.0.0.1:9999/x"));
        assertEquals("https://gw/base/admin", upstream("https://gw/base").urlFor("/../admin"));
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
