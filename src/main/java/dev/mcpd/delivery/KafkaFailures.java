package dev.mcpd.delivery;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * What a Kafka producer's failure means for the entry: the broker refused the record for good — too large, a topic
 * that cannot exist or is unknown, authorisation refused — so the same record would be refused again and the entry
 * goes to dead/; or anything else (unreachable brokers, timeouts, not enough in-sync replicas, a leader moving), which
 * is retried: the upstream waits and the entry moves on.
 */
final class KafkaFailures {

    private static final Set<Class<? extends Throwable>> FOR_GOOD = Set.of(RecordTooLargeException.class,
            RecordBatchTooLargeException.class, InvalidTopicException.class, UnknownTopicOrPartitionException.class,
            TopicAuthorizationException.class, ClusterAuthorizationException.class, InvalidRecordException.class);

    private KafkaFailures() {
    }

    /** The broker's (or the producer's) reason when {@code failure}, or one of its causes, refuses the record for good. */
    static Optional<String> refusedForGood(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            for (Class<? extends Throwable> type : FOR_GOOD) {
                if (type.isInstance(cause)) {
                    return Optional.of(describe(cause));
                }
            }
        }
        return Optional.empty();
    }

    /** Whether the producer gave up waiting for the topic's metadata: an unknown topic and unreachable brokers alike. */
    static boolean metadataMissing(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof TimeoutException
                    && String.valueOf(cause.getMessage()).contains("not present in metadata")) {
                return true;
            }
        }
        return false;
    }

    /** A record the broker refused for good, as the answer to its attempt: the entry goes to dead/ with the reason. */
    static final class Refused extends Exception {
        Refused(String reason) {
            super(reason, null, false, false);
        }
    }

    /** One line: the exception's type and the client's or broker's message. */
    static String describe(Throwable failure) {
        Throwable cause = failure;
        while ((cause instanceof ExecutionException
                || cause instanceof CompletionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        String message = cause.getMessage();
        return cause.getClass().getSimpleName() + (message == null ? "" : ": " + message.strip().replace('\n', ' '));
    }
}
