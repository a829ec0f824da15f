package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.mcpd.delivery.Attempt.Kind;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class AttemptClassificationTest {

    @ParameterizedTest
    @ValueSource(ints = {200, 202, 204})
    void aSuccessStatusMeansDelivered(int status) {
        assertEquals(Kind.DELIVERED, Attempt.classify(status, false));
        assertEquals(Kind.DELIVERED, Attempt.classify(status, true));
    }

    @ParameterizedTest
    @ValueSource(ints = {408, 429, 500, 502, 503, 504})
    void timeoutTooManyRequestsAndServerErrorsAreRetryable(int status) {
        assertEquals(Kind.RETRYABLE, Attempt.classify(status, false));
        assertEquals(Kind.RETRYABLE, Attempt.classify(status, true));
    }

    @ParameterizedTest
    @ValueSource(ints = {400, 404, 409, 413, 422})
    void otherClientErrorsArePermanentWhateverKeyIsPresented(int status) {
        assertEquals(Kind.PERMANENT, Attempt.classify(status, false));
        assertEquals(Kind.PERMANENT, Attempt.classify(status, true));
    }

    @ParameterizedTest
    @ValueSource(ints = {401, 403})
    void anAuthRefusalOfTheSendersOwnKeyIsPermanent(int status) {
        assertEquals(Kind.PERMANENT, Attempt.classify(status, false));
    }

    @ParameterizedTest
    @ValueSource(ints = {401, 403})
    void anAuthRefusalOfTheRelaysOwnUpstreamKeyIsRetryable(int status) {
        assertEquals(Kind.RETRYABLE, Attempt.classify(status, true));
    }

    @ParameterizedTest
    @ValueSource(ints = {301, 302})
    void aRedirectIsRetryableBecauseTheUpstreamUrlIsWrongNotTheRequest(int status) {
        assertEquals(Kind.RETRYABLE, Attempt.classify(status, false));
    }

    private static Attempt attemptAnswering(byte[] answer) {
        return new Attempt(new Upstream(1, URI.create("http://eu:4317")), Kind.PERMANENT, OptionalInt.of(400), "400",
                Optional.empty(), Duration.ofMillis(5), answer);
    }

    @Test
    void theAnswerHeadIsCutToTheLimit() {
        byte[] answer = "0123456789".getBytes(StandardCharsets.US_ASCII);
        assertArrayEquals("0123".getBytes(StandardCharsets.US_ASCII), attemptAnswering(answer).answerHead(4));
    }

    @Test
    void anAnswerShorterThanTheLimitIsKeptWhole() {
        byte[] answer = "bad".getBytes(StandardCharsets.US_ASCII);
        assertArrayEquals(answer, attemptAnswering(answer).answerHead(100));
    }

    @Test
    void anAnswerOfExactlyTheLimitIsKeptWhole() {
        byte[] answer = "four".getBytes(StandardCharsets.US_ASCII);
        assertArrayEquals(answer, attemptAnswering(answer).answerHead(4));
    }

    @Test
    void anEmptyAnswerHasAnEmptyHead() {
        assertEquals(0, attemptAnswering(new byte[0]).answerHead(10).length);
    }
}
