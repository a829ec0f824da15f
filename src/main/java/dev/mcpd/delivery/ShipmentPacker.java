package dev.mcpd.delivery;

import dev.mcpd.http.RequestTarget;
import dev.mcpd.spool.SpoolEntry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongPredicate;

/**
 * Packs entries taken from the spool, oldest first, into shipments for an upstream that takes relay batches: entries
 * that share a credential travel together (two senders' keys never share a request), in the order taken, up to
 * {@code --batch-max-entries} and {@code --batch-max-bytes} per batch. An entry travels alone when it is larger than
 * a batch may be, cannot be framed (a method other than POST, a target that does not parse), or was marked to go
 * alone ({@code alone}: its batch was refused as a whole, or was sent where batches are not taken).
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

    boolean batching() {
        return maxEntries > 1;
    }

    int maxEntries() {
        return maxEntries;
    }

    long maxBytes() {
        return maxBytes;
    }

    List<Shipment> pack(List<SpoolEntry> taken, LongPredicate alone) {
        List<Shipment> shipments = new ArrayList<>();
        Map<String, List<SpoolEntry>> open = new LinkedHashMap<>();
        Map<String, Long> openBytes = new LinkedHashMap<>();
        for (SpoolEntry entry : taken) {
            long size = entry.request().body().length;
            if (!batching() || size > maxBytes || alone.test(entry.seq()) || !frameable(entry)) {
                shipments.add(Shipment.single(entry));
                continue;
            }
            String credential = credentialOf(entry);
            List<SpoolEntry> group = open.computeIfAbsent(credential, unused -> new ArrayList<>());
            if (!group.isEmpty() && (group.size() == maxEntries || openBytes.get(credential) + size > maxBytes)) {
                shipments.add(shipmentOf(group));
                group = new ArrayList<>();
                open.put(credential, group);
                openBytes.put(credential, 0L);
            }
            group.add(entry);
            openBytes.merge(credential, size, Long::sum);
        }
        open.values().stream().filter(group -> !group.isEmpty()).forEach(group -> shipments.add(shipmentOf(group)));
        return shipments;
    }

    /**
     * A lone entry of at least {@link #WORTH_COMPRESSING} bytes, not compressed by its sender, travels as a batch of
     * one: the framing is gzipped on the wire when that saves a tenth, and the collector keeps the bytes the sender
     * sent, with their own encoding. A smaller one saves less than the framing costs.
     */
    private static Shipment shipmentOf(List<SpoolEntry> group) {
        if (group.size() > 1) {
            return Shipment.batchOf(group);
        }
        SpoolEntry entry = group.get(0);
        String encoding = entry.request().contentEncoding();
        boolean identity = encoding.isEmpty() || encoding.equalsIgnoreCase("identity");
        return identity && entry.request().body().length >= WORTH_COMPRESSING ? Shipment.batchOf(group)
                : Shipment.single(entry);
    }

    private String credentialOf(SpoolEntry entry) {
        if (relayPresentsOwnKey) {
            return ""; // every request carries the relay's own key
        }
        return entry.request().credential().map(c -> c.header() + "\n" + c.value()).orElse("");
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
}
