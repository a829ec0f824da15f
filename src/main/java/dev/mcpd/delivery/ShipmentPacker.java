package dev.mcpd.delivery;

import dev.mcpd.spool.ForwardedHeader;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.wire.RequestTarget;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.LongToIntFunction;

/**
 * Packs entries taken from the spool, oldest first, into shipments: for an upstream that takes relay batches, entries
 * that share a credential and forwarded headers travel together ({@link #pack}); for any other, OTLP export requests
 * of one signal, content type, credential and forwarded headers are merged into one, and so are Prometheus remote
 * writes to one path ({@link #merge}). Two senders'
 * keys, or two tenants' entries, never share a request; entries keep the
 * order taken; a shipment holds at most {@code --batch-max-entries} entries and {@code --batch-max-bytes} of bodies
 * (decoded, for a merge). An entry travels alone when it is larger than that, cannot be framed or merged, or may share
 * a request with few others or none ({@code atMost}: its batch or merge was refused as a whole).
 */
public final class ShipmentPacker {

    /** Bodies smaller than this are not sent as a batch of one for the sake of compression. */
    static final int WORTH_COMPRESSING = 1024;

    private final int maxEntries;
    private final long maxBytes;
    private final boolean relayPresentsOwnKey;

    public ShipmentPacker(int maxEntries, long maxBytes, boolean relayPresentsOwnKey) {
        this.maxEntries = maxEntries;
        this.maxBytes = maxBytes;
        this.relayPresentsOwnKey = relayPresentsOwnKey;
    }

    /** Whether entries share requests at all: {@code --batch-max-entries 1} turns batches and merges off. */
    boolean batching() {
        return maxEntries > 1;
    }

    int maxEntries() {
        return maxEntries;
    }

    long maxBytes() {
        return maxBytes;
    }

    /**
     * Shipments for an upstream that takes relay batches.
     *
     * @param atMost how many entries the request that carries an entry may hold, by its sequence number
     */
    List<Shipment> pack(List<SpoolEntry> taken, LongToIntFunction atMost) {
        Grouping grouping = new Grouping(ShipmentPacker::batchOf);
        for (SpoolEntry entry : taken) {
            long size = entry.request().body().length;
            int limit = limitOf(entry, atMost);
            if (limit <= 1 || size > maxBytes || !frameable(entry)) {
                grouping.alone(entry);
            } else {
                grouping.add(sharedHeadersOf(entry), entry, size, limit, null);
            }
        }
        return grouping.shipments();
    }

    /** Shipments for an upstream that takes no relay batches: OTLP entries merged, every other one alone. */
    List<Shipment> merge(List<SpoolEntry> taken, LongToIntFunction atMost) {
        Grouping grouping = new Grouping(ShipmentPacker::mergeOf);
        for (SpoolEntry entry : taken) {
            int limit = limitOf(entry, atMost);
            Optional<OtlpMerge.Part> part;
            Optional<RemoteWriteMerge.Part> write;
            try {
                part = limit > 1 ? OtlpMerge.partOf(entry.request(), maxBytes) : Optional.empty();
                write = limit > 1 && part.isEmpty() ? RemoteWriteMerge.partOf(entry.request(), maxBytes)
                        : Optional.empty();
            } catch (RuntimeException unreadable) {
                // A body no reader foresaw travels alone, as it came: never a fault that strands what was taken.
                grouping.alone(entry);
                continue;
            }
            if (part.isPresent()) {
                String key = part.get().signal() + "\n" + entry.request().contentType().toLowerCase(Locale.ROOT)
                        + "\n" + sharedHeadersOf(entry);
                grouping.add(key, entry, part.get().bytes().length, limit, part.get());
            } else if (write.isPresent()) {
                String key = "remote write " + entry.request().target() + "\n" + sharedHeadersOf(entry);
                grouping.add(key, entry, write.get().bytes().length, limit, write.get());
            } else {
                grouping.alone(entry);
            }
        }
        return grouping.shipments();
    }

    /** Whether {@code entry} is one {@link #merge} may put with others. */
    boolean mergeable(SpoolEntry entry) {
        return batching() && OtlpMerge.Signal.of(entry.request().target()).isPresent()
                && OtlpMerge.formatOf(entry.request().contentType()).isPresent();
    }

    private int limitOf(SpoolEntry entry, LongToIntFunction atMost) {
        return batching() ? Math.min(maxEntries, atMost.applyAsInt(entry.seq())) : 1;
    }

    /**
     * A lone entry of at least {@link #WORTH_COMPRESSING} bytes, not compressed by its sender, travels as a batch of
     * one: the framing is gzipped on the wire when that saves a tenth, and the collector keeps the bytes the sender
     * sent, with their own encoding. A smaller one saves less than the framing costs.
     */
    private static Shipment batchOf(Group group) {
        if (group.entries.size() > 1) {
            return Shipment.batchOf(group.entries);
        }
        SpoolEntry entry = group.entries.get(0);
        String encoding = entry.request().contentEncoding();
        boolean identity = encoding.isEmpty() || encoding.equalsIgnoreCase("identity");
        return identity && entry.request().body().length >= WORTH_COMPRESSING ? Shipment.batchOf(group.entries)
                : Shipment.single(entry);
    }

    /** A merge of two or more; one entry goes as it was received. */
    private static Shipment mergeOf(Group group) {
        if (group.entries.size() == 1) {
            return Shipment.single(group.entries.get(0));
        }
        if (group.parts.get(0) instanceof RemoteWriteMerge.Part) {
            return Shipment.remoteWriteMergeOf(group.entries, RemoteWriteMerge.merged(group.parts.stream()
                    .map(RemoteWriteMerge.Part.class::cast).toList()));
        }
        return Shipment.mergeOf(group.entries, OtlpMerge.merged(group.parts.stream().map(OtlpMerge.Part.class::cast)
                .toList()));
    }

    /**
     * What a request's headers say of the entries it carries, which they must share: the credential (unless every
     * request carries the relay's own key) and the forwarded headers — a tenant's entries never travel with another's.
     */
    private String sharedHeadersOf(SpoolEntry entry) {
        StringBuilder shared = new StringBuilder(relayPresentsOwnKey ? ""
                : entry.request().credential().map(c -> c.header() + "\n" + c.value()).orElse(""));
        for (ForwardedHeader header : entry.request().forwarded()) {
            shared.append('\n').append(header.name().toLowerCase(Locale.ROOT)).append(": ").append(header.value());
        }
        return shared.toString();
    }

    private static boolean frameable(SpoolEntry entry) {
        if (!entry.request().method().equals("POST")) {
            return false;
        }
        try {
            RequestTarget.parse(entry.request().target());
            return true;
        } catch (RequestTarget.InvalidTarget e) {
            return false;
        }
    }

    private static final class Group {
        final List<SpoolEntry> entries = new ArrayList<>();
        final List<MergePart> parts = new ArrayList<>();
        long bytes;
        int limit = Integer.MAX_VALUE;
    }

    /** Open groups by what their entries share; a group closes when the next entry would overfill it. */
    private final class Grouping {
        private final Function<Group, Shipment> shipmentOf;
        private final List<Shipment> shipments = new ArrayList<>();
        private final Map<String, Group> open = new LinkedHashMap<>();

        Grouping(Function<Group, Shipment> shipmentOf) {
            this.shipmentOf = shipmentOf;
        }

        void alone(SpoolEntry entry) {
            shipments.add(Shipment.single(entry));
        }

        void add(String key, SpoolEntry entry, long size, int limit, MergePart part) {
            Group group = open.get(key);
            if (group != null && (group.entries.size() >= Math.min(group.limit, limit)
                    || group.bytes + size > maxBytes)) {
                shipments.add(shipmentOf.apply(group));
                group = null;
            }
            if (group == null) {
                group = new Group();
                open.put(key, group);
            }
            group.entries.add(entry);
            if (part != null) {
                group.parts.add(part);
            }
            group.bytes += size;
            group.limit = Math.min(group.limit, limit);
        }

        List<Shipment> shipments() {
            open.values().forEach(group -> shipments.add(shipmentOf.apply(group)));
            open.clear();
            return shipments;
        }
    }
}
