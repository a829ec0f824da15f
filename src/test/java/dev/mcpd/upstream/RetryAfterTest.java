package dev.mcpd.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class RetryAfterTest {

    private static final Instant NOW = Instant.parse("2025-03-01T12:00:00Z");

    private static String httpDate(Instant instant) {
        return DateTimeFormatter.RFC_1123_DATE_TIME.format(instant.atZone(ZoneOffset.UTC));
    }

    @Test
    void deltaSecondsAreReadAsThatManySeconds() {
        assertEquals(Optional.of(Duration.ofSeconds(120)), RetryAfter.parse("120", NOW));
    }

    @Test
    void zeroDeltaSecondsMeanNoWait() {
        assertEquals(Optional.of(Duration.ZERO), RetryAfter.parse("0", NOW));
    }

    @Test
    void surroundingWhitespaceIsIgnored() {
        assertEquals(Optional.of(Duration.ofSeconds(5)), RetryAfter.parse(" 5 ", NOW));
    }

    @Test
    void anHttpDateIsReadAsTheTimeFromNowUntilThatDate() {
        String header = httpDate(NOW.plusSeconds(90));
        assertEquals(Optional.of(Duration.ofSeconds(90)), RetryAfter.parse(header, NOW), header);
    }

    @Test
    void anImfFixdateWithTwoDigitDayIsRead() {
        assertEquals(Optional.of(Duration.ofSeconds(90)), RetryAfter.parse("Sat, 01 Mar 2025 12:01:30 GMT", NOW));
    }

    @Test
    void theObsoleteRfc850DateFormIsRead() {
        assertEquals(Optional.of(Duration.ofSeconds(90)), RetryAfter.parse("Saturday, 01-Mar-25 12:01:30 GMT", NOW));
    }

    @Test
    void theAsctimeDateFormIsRead() {
        assertEquals(Optional.of(Duration.ofSeconds(90)), RetryAfter.parse("Sat Mar  1 12:01:30 2025", NOW));
    }

    @Test
    void anHttpDateInThePastMeansNoWait() {
        assertEquals(Optional.of(Duration.ZERO), RetryAfter.parse(httpDate(NOW.minusSeconds(600)), NOW));
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {"   ", "soon", "12.5", "-5", "120s", "+120", "Sat, 99 Foo 2025 12:01:30 GMT"})
    void anAbsentBlankOrUnreadableHeaderNamesNoWait(String header) {
        assertEquals(Optional.empty(), RetryAfter.parse(header, NOW));
    }

    @Test
    void aWaitOfExactlyTheLongestIsKept() {
        assertEquals(Optional.of(RetryAfter.LONGEST),
                RetryAfter.parse(Long.toString(RetryAfter.LONGEST.toSeconds()), NOW));
    }

    @Test
    void aHugeDeltaIsCappedAtTheLongestWait() {
        assertEquals(Optional.of(RetryAfter.LONGEST), RetryAfter.parse("3601", NOW));
        assertEquals(Optional.of(RetryAfter.LONGEST), RetryAfter.parse("999999999999", NOW));
    }

    @Test
    void aDeltaTooLargeForALongIsCappedAtTheLongestWait() {
        assertEquals(Optional.of(RetryAfter.LONGEST), RetryAfter.parse("99999999999999999999999999", NOW));
    }

    @Test
    void anHttpDateYearsAheadIsCappedAtTheLongestWait() {
        assertEquals(Optional.of(RetryAfter.LONGEST),
                RetryAfter.parse(httpDate(NOW.plus(Duration.ofDays(3 * 365))), NOW));
    }
}
