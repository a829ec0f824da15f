package dev.mcpd.spool;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/**
 * What dead/ holds, as the relay reports it: read again from the directory at most once a second (the CLI changes
 * dead/ while a relay runs, so a count of the relay's own would drift), and corrected in place between readings for
 * what the relay itself keeps or purges.
 */
final class DeadLetterCensus {

    private static final long MAX_AGE_NANOS = 1_000_000_000L;

    private final Path dir;
    /** The sequence numbers of the entries held, for the barrier's {@code deadLettered} count. */
    private volatile ConcurrentSkipListSet<Long> seqs = new ConcurrentSkipListSet<>();
    private volatile DeadLetters.Census census = new DeadLetters.Census(0, 0, Optional.empty());
    private volatile long readNanos;
    private final AtomicBoolean rereading = new AtomicBoolean();

    DeadLetterCensus(Path dir) throws IOException {
        this.dir = dir;
        reread();
    }

    /** What dead/ holds now (at most a second old); the last census when the directory cannot be read just now. */
    DeadLetters.Census now() {
        if (old()) {
            try {
                reread();
            } catch (IOException e) {
                return census;
            }
        }
        return census;
    }

    /**
     * The last census without waiting for the directory, and — when it is over a second old — a new one started on a
     * thread of its own, for the next look. For callers that must not block (an event loop answering
     * {@code /metrics}): listing a dead/ of 150 000 files takes seconds.
     */
    DeadLetters.Census recent() {
        DeadLetters.Census current = census;
        rereadInBackgroundIfOld();
        return current;
    }

    /** Dead letters numbered {@code from} through {@code seq}, at most a second old. */
    long between(long from, long seq) {
        now();
        return seqs.subSet(from, true, seq, true).size();
    }

    /** {@link #between}, without waiting for the directory, as {@link #recent()}. */
    long recentBetween(long from, long seq) {
        ConcurrentSkipListSet<Long> current = seqs;
        rereadInBackgroundIfOld();
        return current.subSet(from, true, seq, true).size();
    }

    /**
     * Counts a dead letter the relay has just kept, in place: a burst of refusals must not cost a listing each. The
     * next reading corrects what this cannot see (a dead letter written again, a purge by the CLI).
     */
    void kept(long seq, long bytes) {
        if (seqs.add(seq)) {
            DeadLetters.Census was = census;
            census = new DeadLetters.Census(was.count() + 1, was.bytes() + bytes,
                    was.oldest().or(() -> Optional.of(Instant.now())));
        }
    }

    /** A dead letter purged: gone from the counts at once, and the next look reads dead/ again. */
    void purged(long seq) {
        seqs.remove(seq);
        readNanos = 0;
    }

    private boolean old() {
        return System.nanoTime() - readNanos > MAX_AGE_NANOS;
    }

    private void rereadInBackgroundIfOld() {
        if (old() && rereading.compareAndSet(false, true)) {
            Thread counter = new Thread(() -> {
                try {
                    reread();
                } catch (IOException e) {
                    // the directory could not be read just now: the last census stands until the next look
                } finally {
                    rereading.set(false);
                }
            }, "mcpd-dead-letter-census");
            counter.setDaemon(true);
            counter.start();
        }
    }

    private synchronized void reread() throws IOException {
        long started = System.nanoTime();
        ConcurrentSkipListSet<Long> found = new ConcurrentSkipListSet<>();
        long bytes = 0;
        Instant oldest = null;
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.toList()) {
                String name = file.getFileName().toString();
                if (name.startsWith(".")) {
                    continue;
                }
                BasicFileAttributes attributes;
                try {
                    attributes = Files.readAttributes(file, BasicFileAttributes.class);
                } catch (NoSuchFileException e) {
                    continue; // replayed or purged while we looked
                }
                bytes += attributes.size();
                OptionalLong seq = DeadLetters.seqOf(name);
                if (seq.isPresent()) {
                    found.add(seq.getAsLong());
                    Instant kept = attributes.lastModifiedTime().toInstant();
                    oldest = oldest == null || kept.isBefore(oldest) ? kept : oldest;
                }
            }
        }
        seqs = found;
        census = new DeadLetters.Census(found.size(), bytes, Optional.ofNullable(oldest));
        readNanos = started;
    }
}
