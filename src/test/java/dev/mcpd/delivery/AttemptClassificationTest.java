package dev.mcpd.delivery;

import dev.mcpd.upstream.Upstream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
        assertEquals(Kind.DELIVERED, StatusPolicy.standard(false).classify(status));
        assertEquals(Kind.DELIVERED, StatusPolicy.standard(true).classify(status));
    }

    @ParameterizedTest
    @ValueSource(ints = {408, 429, 500, 502, 503, 504})
    void timeoutTooManyRequestsAndServerErrorsAreRetryable(int status) {
        assertEquals(Kind.RETRYABLE, StatusPolicy.standard(false).classify(status));
        assertEquals(Kind.RETRYABLE, StatusPolicy.standard(true).classify(status));
    }

    @ParameterizedTest
    @ValueSource(ints = {400, 404, 409, 413, 422})
    void otherClientErrorsArePermanentWhateverKeyIsPresented(int status) {
        assertEquals(Kind.PERMANENT, StatusPolicy.standard(false).classify(status));
        assertEquals(Kind.PERMANENT, StatusPolicy.standard(true).classify(status));
    }

    @ParameterizedTest
    @ValueSource(ints = {401, 403})
    void anAuthRefusalOfTheSendersOwnKeyIsPermanent(int status) {
        assertEquals(Kind.PERMANENT, StatusPolicy.standard(false).classify(status));
    }

    @ParameterizedTest
    @ValueSource(ints = {401, 403})
    void anAuthRefusalOfTheRelaysOwnUpstreamKeyIsRetryable(int status) {
        assertEquals(Kind.RETRYABLE, StatusPolicy.standard(true).classify(status));
    }

    @ParameterizedTest
    @ValueSource(ints = {301, 302})
    void aRedirectIsRetryableBecauseTheUpstreamUrlIsWrongNotTheRequest(int status) {
        assertEquals(Kind.RETRYABLE, StatusPolicy.standard(false).classify(status));
    }

    @ParameterizedTest
    @ValueSource(ints = {409, 425})
    void anOperatorsRetryableStatusIsRetriedAndTheOtherClientErrorsStayPermanent(int status) {
        StatusPolicy passing = new StatusPolicy(false, java.util.Set.of(409, 425));
        assertEquals(Kind.RETRYABLE, passing.classify(status));
        assertEquals(Kind.PERMANENT, passing.classify(400));
        assertEquals(Kind.PERMANENT, passing.classify(422));
        assertEquals(Kind.DELIVERED, passing.classify(200));
    }

    private static Attempt answered(int status) {
        return new Attempt(new Upstream(1, URI.create("http://eu:4317")), StatusPolicy.standard(false).classify(status),
                OptionalInt.of(status), Integer.toString(status), Optional.empty(), Duration.ofMillis(5), new byte[0]);
    }

    @ParameterizedTest
    @ValueSource(ints = {408, 429, 503, 504})
    void anUpstreamSayingItIsOverloadedShrinksTheWindow(int status) {
        assertTrue(answered(status).saysOverloaded(), status + " says: too much");
    }

    @ParameterizedTest
    @ValueSource(ints = {200, 400, 401, 404, 413, 500, 501, 502})
    void otherAnswersSayNothingOfTheUpstreamsLoad(int status) {
        assertFalse(answered(status).saysOverloaded(), status + " is not overload");
    }

    @Test
    void noAnswerInTimeShrinksTheWindowAndARefusedConnectionDoesNot() {
        Upstream eu = new Upstream(1, URI.create("http://eu:4317"));
        assertTrue(new Attempt(eu, Kind.RETRYABLE, OptionalInt.empty(), "timeout", Optional.empty(),
                Duration.ofSeconds(30), new byte[0], true).saysOverloaded());
        assertFalse(new Attempt(eu, Kind.RETRYABLE, OptionalInt.empty(), "connection refused", Optional.empty(),
                Duration.ofMillis(1), new byte[0]).saysOverloaded());
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
