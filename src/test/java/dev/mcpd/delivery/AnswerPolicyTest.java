package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.delivery.Attempt.Kind;
import dev.mcpd.upstream.Upstream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What an upstream's answer means: the one reading of statuses and failures. */
class AnswerPolicyTest {

    @ParameterizedTest
    @ValueSource(ints = {200, 202, 204})
    void aSuccessStatusMeansDelivered(int status) {
        assertEquals(Kind.DELIVERED, AnswerPolicy.standard(false).classify(status));
        assertEquals(Kind.DELIVERED, AnswerPolicy.standard(true).classify(status));
    }

    @ParameterizedTest
    @ValueSource(ints = {408, 429, 500, 502, 503, 504})
    void timeoutTooManyRequestsAndServerErrorsAreRetryable(int status) {
        assertEquals(Kind.RETRYABLE, AnswerPolicy.standard(false).classify(status));
        assertEquals(Kind.RETRYABLE, AnswerPolicy.standard(true).classify(status));
    }

    @ParameterizedTest
    @ValueSource(ints = {400, 404, 409, 413, 422})
    void otherClientErrorsArePermanentWhateverKeyIsPresented(int status) {
        assertEquals(Kind.PERMANENT, AnswerPolicy.standard(false).classify(status));
        assertEquals(Kind.PERMANENT, AnswerPolicy.standard(true).classify(status));
    }

    @ParameterizedTest
    @ValueSource(ints = {401, 403})
    void anAuthRefusalOfTheSendersOwnKeyIsPermanent(int status) {
        assertEquals(Kind.PERMANENT, AnswerPolicy.standard(false).classify(status));
    }

    @ParameterizedTest
    @ValueSource(ints = {401, 403})
    void anAuthRefusalOfTheRelaysOwnUpstreamKeyIsRetryable(int status) {
        assertEquals(Kind.RETRYABLE, AnswerPolicy.standard(true).classify(status));
    }

    @ParameterizedTest
    @ValueSource(ints = {301, 302})
    void aRedirectIsRetryableBecauseTheUpstreamUrlIsWrongNotTheRequest(int status) {
        assertEquals(Kind.RETRYABLE, AnswerPolicy.standard(false).classify(status));
    }

    @ParameterizedTest
    @ValueSource(ints = {409, 425})
    void anOperatorsRetryableStatusIsRetriedAndTheOtherClientErrorsStayPermanent(int status) {
        AnswerPolicy passing = new AnswerPolicy(false, Set.of(409, 425));
        assertEquals(Kind.RETRYABLE, passing.classify(status));
        assertEquals(Kind.PERMANENT, passing.classify(400));
        assertEquals(Kind.PERMANENT, passing.classify(422));
        assertEquals(Kind.DELIVERED, passing.classify(200));
    }

    private static final Upstream EU = new Upstream(1, URI.create("http://eu:4317"));
    private static final Instant NOW = Instant.parse("2026-12-04T10:00:00Z");

    private static Attempt answered(int status) {
        return AnswerPolicy.standard(false).judge(EU, new UpstreamAnswer(status, null, null, new byte[0], null),
                Duration.ofMillis(5), NOW);
    }

    private static Attempt failedWith(Throwable failure) {
        return AnswerPolicy.standard(false).judge(EU, UpstreamAnswer.failed(failure), Duration.ofMillis(5), NOW);
    }

    @ParameterizedTest
    @ValueSource(ints = {408, 429, 503, 504})
    void anUpstreamSayingItIsOverloadedShrinksTheWindow(int status) {
        assertTrue(answered(status).overloaded(), status + " says: too much");
    }

    @ParameterizedTest
    @ValueSource(ints = {200, 400, 401, 404, 413, 500, 501, 502})
    void otherAnswersSayNothingOfTheUpstreamsLoad(int status) {
        assertFalse(answered(status).overloaded(), status + " is not overload");
    }

    @Test
    void noAnswerInTimeIsRetriedAndShrinksTheWindowAndARefusedConnectionDoesNot() {
        Attempt late = failedWith(new TimeoutException("no answer in 30000 ms"));
        assertEquals(Kind.RETRYABLE, late.kind());
        assertTrue(late.overloaded());
        assertEquals("timeout: no answer in 30000 ms", late.cause());
        Attempt refused = failedWith(new ConnectException("Connection refused"));
        assertEquals(Kind.RETRYABLE, refused.kind());
        assertFalse(refused.overloaded());
        assertEquals("ConnectException: Connection refused", refused.cause());
        assertEquals(OptionalInt.empty(), refused.status());
    }

    @Test
    void aRequestTheClientCouldNotMakeIsTheEntrysFaultNotTheUpstreams() {
        Attempt unbuilt = failedWith(new IllegalArgumentException("bad header value"));
        assertEquals(Kind.UNSENDABLE, unbuilt.kind());
        assertTrue(unbuilt.cause().contains("could not make a request of it"), unbuilt.cause());
        // An I/O failure wrapping the same is the connection's, and retried.
        assertEquals(Kind.RETRYABLE, failedWith(new IOException("reset", new IllegalArgumentException())).kind());
    }

    @Test
    void aBrokersRefusalOfTheRecordIsPermanentWithTheBrokersWords() {
        Attempt refused = failedWith(new KafkaFailures.Refused("topic t: RecordTooLargeException: too large"));
        assertEquals(Kind.PERMANENT, refused.kind());
        assertEquals("topic t: RecordTooLargeException: too large", refused.cause());
        assertEquals(OptionalInt.empty(), refused.status());
    }

    @Test
    void theWaitAnUpstreamNamesIsReadWithItsAnswer() {
        Attempt busy = AnswerPolicy.standard(false).judge(EU, new UpstreamAnswer(503, "text/plain", "7", new byte[0],
                null), Duration.ofMillis(5), NOW);
        assertEquals(Optional.of(Duration.ofSeconds(7)), busy.retryAfter());
        assertEquals("text/plain", busy.contentType());
    }

    private static Attempt attemptAnswering(byte[] answer) {
        return new Attempt(EU, Kind.PERMANENT, OptionalInt.of(400), "400", Optional.empty(), Duration.ofMillis(5),
                answer, null, false);
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
