package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.spool.Credential;
import dev.mcpd.spool.ForwardedHeader;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.LongToIntFunction;
import org.junit.jupiter.api.Test;

/**
 * How entries taken from the spool are packed, oldest first: relay batches of entries that share a credential and
 * forwarded headers for a collector that takes them; merged OTLP requests of one signal, content type and tenant for
 * any other; bounded by entries and bytes; an entry that cannot share a request, or may not, alone.
 */
class ShipmentPackerTest {

    private static final LongToIntFunction AS_PACKED = seq -> ShipmentOutcome.AS_PACKED;
    private static final Optional<Credential> ALICE = Optional.of(new Credential("Authorization", "Bearer alice"));
    private static final Optional<Credential> BOB = Optional.of(new Credential("Authorization", "Bearer bob"));

    private final ShipmentPacker packer = new ShipmentPacker(3, 10_000, false);

    private static SpoolEntry entry(long seq, Optional<Credential> credential, int bytes) {
        byte[] body = new byte[bytes];
        Arrays.fill(body, (byte) 'x');
        return new SpoolEntry(seq, new SpoolRequest("POST", "/v1/ingest", "application/json", "", "k" + seq,
                credential, 0, body));
    }

    private static SpoolEntry traces(long seq, String tenant) {
        byte[] body = OtlpMergeTest.traces("svc-" + seq, "span-" + seq).toByteArray();
        return new SpoolEntry(seq, new SpoolRequest("POST", "/v1/traces", "application/x-protobuf", "", "k" + seq,
                ALICE, 0, body, List.of(new ForwardedHeader("X-Scope-OrgID", tenant)), false));
    }

    private static List<List<Long>> seqs(List<Shipment> shipments) {
        return shipments.stream().map(s -> s.entries().stream().map(SpoolEntry::seq).toList()).toList();
    }

    @Test
    void entriesThatShareACredentialTravelTogetherInOrderAndTwoSendersNever() {
        List<Shipment> shipments = packer.pack(List.of(entry(1, ALICE, 10), entry(2, BOB, 10), entry(3, ALICE, 10),
                entry(4, BOB, 10)), AS_PACKED);
        assertEquals(List.of(List.of(1L, 3L), List.of(2L, 4L)), seqs(shipments));
        assertTrue(shipments.stream().allMatch(Shipment::batch));
    }

    @Test
    void aBatchHoldsAtMostItsEntriesAndBytesAndALargerEntryGoesAlone() {
        List<Shipment> byCount = packer.pack(List.of(entry(1, ALICE, 10), entry(2, ALICE, 10), entry(3, ALICE, 10),
                entry(4, ALICE, 10)), AS_PACKED);
        assertEquals(List.of(List.of(1L, 2L, 3L), List.of(4L)), seqs(byCount));

        List<Shipment> byBytes = packer.pack(List.of(entry(1, ALICE, 6_000), entry(2, ALICE, 6_000),
                entry(3, ALICE, 20_000)), AS_PACKED);
        // 1 and 2 together pass the bytes: a batch closes at 1; 3 alone passes them by itself.
        assertEquals(List.of(List.of(1L), List.of(3L), List.of(2L)), seqs(byBytes));
        assertFalse(byBytes.stream().filter(s -> s.first().seq() == 3).findFirst().orElseThrow().batch(),
                "larger than a batch may be: it travels as it came");
    }

    @Test
    void anEntryWhoseBatchWasRefusedAsAWholeTravelsAsItsLimitSays() {
        List<Shipment> shipments = packer.pack(List.of(entry(1, ALICE, 10), entry(2, ALICE, 10), entry(3, ALICE, 10)),
                seq -> seq == 2 ? 1 : ShipmentOutcome.AS_PACKED);
        assertEquals(List.of(List.of(2L), List.of(1L, 3L)), seqs(shipments));
    }

    @Test
    void aSmallLoneEntryGoesAsItCameAndALargerOneAsABatchOfOneTheWireMayCompress() {
        assertFalse(packer.pack(List.of(entry(1, ALICE, 100)), AS_PACKED).get(0).batch());
        assertTrue(packer.pack(List.of(entry(1, ALICE, ShipmentPacker.WORTH_COMPRESSING)), AS_PACKED).get(0).batch());
    }

    @Test
    void otlpExportsOfOneTenantMergeIntoOneRequestAndTwoTenantsNever() throws Exception {
        List<Shipment> shipments = packer.merge(List.of(traces(1, "a"), traces(2, "b"), traces(3, "a")), AS_PACKED);
        assertEquals(List.of(List.of(1L, 3L), List.of(2L)), seqs(shipments));
        Shipment merged = shipments.get(0);
        assertTrue(merged.merge());
        ExportTraceServiceRequest read = ExportTraceServiceRequest.parseFrom(merged.mergedBody());
        assertEquals(List.of("span-1", "span-3"), read.getResourceSpansList().stream()
                .map(r -> r.getScopeSpans(0).getSpans(0).getName()).toList());
        assertFalse(shipments.get(1).merge(), "one entry goes as it was received");
    }

    @Test
    void whatNoMergeCanReadTravelsAloneAndNothingIsLost() {
        SpoolEntry garbage = new SpoolEntry(2, new SpoolRequest("POST", "/v1/traces", "application/x-protobuf", "",
                "k2", ALICE, 0, "not protobuf at all \u0000\u00ff".getBytes(StandardCharsets.ISO_8859_1)));
        List<Shipment> shipments = packer.merge(List.of(traces(1, "a"), garbage, entry(3, ALICE, 10)), AS_PACKED);
        assertEquals(List.of(1L, 2L, 3L), seqs(shipments).stream().flatMap(List::stream).sorted().toList());
        assertTrue(shipments.stream().noneMatch(Shipment::merge));
    }

    @Test
    void withOneEntryPerBatchNothingIsPackedTogether() {
        ShipmentPacker one = new ShipmentPacker(1, 10_000, false);
        assertFalse(one.batching());
        assertEquals(List.of(List.of(1L), List.of(2L)), seqs(one.pack(List.of(entry(1, ALICE, 10),
                entry(2, ALICE, 10)), AS_PACKED)));
        assertFalse(one.mergeable(traces(1, "a")));
        assertTrue(packer.mergeable(traces(1, "a")));
    }
}
