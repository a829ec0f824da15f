package dev.mcpd.delivery;

import dev.mcpd.config.Streams;
import dev.mcpd.spool.ForwardedHeader;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Ordered streams: the entries of one stream — the same path, credential and forwarded headers, received on an
 * {@code --ordered-path} or with {@code X-Prometheus-Remote-Write-Version} — leave one shipment at a time, oldest
 * first: the next goes only once the last is settled (delivered, or kept in dead/) and that is on disk. What the lanes
 * take of a stream while a shipment of it is out waits here, in order, and leaves with the next shipment — as many as
 * may travel together (a batch, a merge), so that one stream keeps its pace across a long round trip. A shipment given
 * back after a retryable failure is the stream's next again, before anything newer. Different streams go side by side.
 *
 * <p>Lanes take entries side by side, so the entry a lane brings may be newer than one another lane was handed a moment
 * earlier and has not brought yet: each lane's entry is known from the instant the spool hands it out
 * ({@link #handingOut}), and a stream's next entry goes only when no lane still holds an older one — the lane that
 * brings that one lets it go ({@link #took}, {@link #broughtNone}).
 *
 * <p>Only bookkeeping, under one lock; whoever calls starts what it returns. The entries held here are out of the
 * spool (handed out) and hold their share of the delivery budget until they leave.
 */
public final class OrderedStreams {

    private static final class Stream {
        /** A shipment of the stream is out, or its delivery is being made durable. */
        boolean out;
        final TreeMap<Long, SpoolEntry> waiting = new TreeMap<>();
    }

    private static final long NONE = Long.MAX_VALUE;

    private final Map<String, Stream> streams = new HashMap<>();
    /** Per lane: the sequence number the spool handed it that it has not brought here (or said is not ordered). */
    private volatile AtomicLongArray lanes = new AtomicLongArray(0);
    private final Streams config;
    private final int maxEntries;
    private final long maxBytes;

    /**
     * @param config     which paths are ordered ({@code --ordered-path})
     * @param maxEntries the most entries one shipment of a stream carries ({@code --batch-max-entries})
     * @param maxBytes   and the most body bytes ({@code --batch-max-bytes})
     */
    public OrderedStreams(Streams config, int maxEntries, long maxBytes) {
        this.config = config;
        this.maxEntries = maxEntries;
        this.maxBytes = maxBytes;
    }

    /** Whether an entry belongs to an ordered stream, as this run's {@code --ordered-path} says. */
    boolean ordered(SpoolRequest request) {
        String target = request.target();
        int query = target.indexOf('?');
        return config.ordered(query < 0 ? target : target.substring(0, query), request.remoteWrite());
    }

    /** Whether a shipment's entries belong to an ordered stream (all of them then: one stream's). */
    boolean ordered(Shipment shipment) {
        return ordered(shipment.first().request());
    }

    /** The stream an ordered entry belongs to. */
    static String streamOf(SpoolRequest request) {
        String target = request.target();
        int query = target.indexOf('?');
        StringBuilder key = new StringBuilder(query < 0 ? target : target.substring(0, query));
        key.append('\n').append(request.credential().map(c -> c.header() + ": " + c.value()).orElse(""));
        for (ForwardedHeader header : request.forwarded()) {
            key.append('\n').append(header.name().toLowerCase(Locale.ROOT)).append(": ").append(header.value());
        }
        return key.toString();
    }

    /** {@code count} lanes take entries from now on, numbered from 0. */
    void lanes(int count) {
        AtomicLongArray slots = new AtomicLongArray(count);
        for (int i = 0; i < count; i++) {
            slots.set(i, NONE);
        }
        lanes = slots;
    }

    /** The spool hands lane {@code lane} the entry {@code seq} (called under the spool's lock, in hand-out order). */
    void handingOut(int lane, long seq) {
        lanes.set(lane, seq);
    }

    /** The oldest entry some lane was handed and has not brought: no stream's newer entry may go before it. */
    private long oldestInTransit() {
        AtomicLongArray slots = lanes;
        long oldest = NONE;
        for (int i = 0; i < slots.length(); i++) {
            oldest = Math.min(oldest, slots.get(i));
        }
        return oldest;
    }

    /**
     * Lane {@code lane} brings {@code entry} of an ordered stream, which waits here for its turn: the turns that can
     * start now — each stream's oldest waiting entry and those behind it that may travel with it, for every stream
     * with no shipment out and no older entry still in another lane's hands (the lane's own entry was one).
     */
    synchronized List<List<SpoolEntry>> took(int lane, SpoolEntry entry) {
        streams.computeIfAbsent(streamOf(entry.request()), unused -> new Stream()).waiting.put(entry.seq(), entry);
        lanes.set(lane, NONE);
        return turns();
    }

    /**
     * Lane {@code lane} brought nothing ordered (its entry belongs to no ordered stream, or could not be read): the
     * streams that waited only for it, their turns.
     */
    synchronized List<List<SpoolEntry>> broughtNone(int lane) {
        if (lanes.get(lane) == NONE) {
            return List.of();
        }
        lanes.set(lane, NONE);
        return turns();
    }

    private List<List<SpoolEntry>> turns() {
        List<List<SpoolEntry>> turns = new ArrayList<>();
        for (Stream stream : streams.values()) {
            List<SpoolEntry> turn = turnOf(stream);
            if (!turn.isEmpty()) {
                turns.add(turn);
            }
        }
        return turns;
    }

    /** The stream's next entries, if it has none out and no lane may still bring an older one; else none. */
    private List<SpoolEntry> turnOf(Stream stream) {
        if (stream.out || stream.waiting.isEmpty() || stream.waiting.firstKey() > oldestInTransit()) {
            return List.of();
        }
        return next(stream);
    }

    /**
     * Of the entries {@link #took} or {@link #settled} gave, those that could not travel in the first shipment: they
     * wait first in line for the next.
     */
    synchronized void notSent(List<SpoolEntry> entries) {
        for (SpoolEntry entry : entries) {
            streams.computeIfAbsent(streamOf(entry.request()), unused -> new Stream()).waiting.put(entry.seq(),
                    entry);
        }
    }

    /**
     * A shipment of stream {@code key} is settled and that is on disk — its entries delivered or in dead/, except
     * {@code givenBack}, which failed retryably and go first in line again: the entries to send next, or none.
     */
    synchronized List<SpoolEntry> settled(String key, List<SpoolEntry> givenBack) {
        Stream stream = streams.computeIfAbsent(key, unused -> new Stream());
        givenBack.forEach(entry -> stream.waiting.put(entry.seq(), entry));
        stream.out = false;
        if (stream.waiting.isEmpty()) {
            streams.remove(key);
            return List.of();
        }
        return turnOf(stream);
    }

    private List<SpoolEntry> next(Stream stream) {
        List<SpoolEntry> shipment = new ArrayList<>();
        long bytes = 0;
        while (!stream.waiting.isEmpty() && shipment.size() < maxEntries) {
            SpoolEntry entry = stream.waiting.firstEntry().getValue();
            if (!shipment.isEmpty() && bytes + entry.request().body().length > maxBytes) {
                break;
            }
            stream.waiting.pollFirstEntry();
            shipment.add(entry);
            bytes += entry.request().body().length;
        }
        stream.out = !shipment.isEmpty();
        return shipment;
    }

    /** Every entry held here, taken out (the relay stops: they go back to the spool). */
    synchronized List<SpoolEntry> drain() {
        List<SpoolEntry> held = new ArrayList<>();
        streams.values().forEach(stream -> held.addAll(stream.waiting.values()));
        streams.clear();
        return held;
    }

    /** Entries waiting here for their stream's turn. */
    synchronized int waiting() {
        return streams.values().stream().mapToInt(stream -> stream.waiting.size()).sum();
    }
}
