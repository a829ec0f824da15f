package dev.mcpd.logs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.logs.SenderText;
import org.junit.jupiter.api.Test;

/** Issue 12, defect 7: what a log line quotes of a request is bounded and cannot forge or colour a line. */
class SenderTextTest {

    @Test
    void printableTextIsQuotedAsIs() {
        assertEquals("/v1/ingest?tenant=a", SenderText.quote("/v1/ingest?tenant=a"));
    }

    @Test
    void controlAndNonAsciiCharactersAreEscaped() {
        assertEquals("/x\\x0d\\x0aForged: 1\\x1b[31m\\u20ac\\\"\\\\", SenderText.quote("/x\r\nForged: 1\u001b[31m€\"\\"));
    }

    @Test
    void longTextIsCutAndSaysHowMuchWasLeftOut() {
        String quoted = SenderText.quote("/" + "a".repeat(9999));
        assertTrue(quoted.startsWith("/aaa"));
        assertTrue(quoted.endsWith("…(9800 more)"), quoted);
        assertEquals(SenderText.MAX_CHARS + "…(9800 more)".length(), quoted.length());
    }

    @Test
    void nothingIsADash() {
        assertEquals("-", SenderText.quote(null));
    }
}
