package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import dev.mcpd.spool.ForwardedHeader;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Prometheus remote write 1.0 requests merged: decoded, their {@code WriteRequest}s concatenated in order, encoded
 * again — every series and sample of every entry arrives, once, in order; two tenants' never share a request; what is
 * not a well-formed remote write 1.0 request travels alone.
 */
class RemoteWriteMergeTest {

    private static final long MAX = 1 << 20;

    /** One sample of one series: {@code name{job}} = value at time. */
    private record Sample(String name, String job, double value, long timestamp) {
    }

    /** A WriteRequest of one time series per sample (field 1: TimeSeries{1: Label*, 2: Sample*}). */
    private static byte[] writeRequest(List<Sample> samples) throws IOException {
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(request);
        for (Sample sample : samples) {
            ByteArrayOutputStream series = new ByteArrayOutputStream();
            CodedOutputStream s = CodedOutputStream.newInstance(series);
            s.writeByteArray(1, label("__name__", sample.name()));
            s.writeByteArray(1, label("job", sample.job()));
            ByteArrayOutputStream point = new ByteArrayOutputStream();
            CodedOutputStream p = CodedOutputStream.newInstance(point);
            p.writeDouble(1, sample.value());
            p.writeInt64(2, sample.timestamp());
            p.flush();
            s.writeByteArray(2, point.toByteArray());
            s.flush();
            out.writeByteArray(1, series.toByteArray());
        }
        out.flush();
        return request.toByteArray();
    }

    private static byte[] label(String name, String value) throws IOException {
        ByteArrayOutputStream label = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(label);
        out.writeString(1, name);
        out.writeString(2, value);
        out.flush();
        return label.toByteArray();
    }

    /** The samples of a WriteRequest, in order. */
    private static List<Sample> samplesOf(byte[] request) throws IOException {
        List<Sample> samples = new ArrayList<>();
        CodedInputStream in = CodedInputStream.newInstance(request);
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
            CodedInputStream series = CodedInputStream.newInstance(in.readByteArray());
            String name = null;
            String job = null;
            for (int t = series.readTag(); t != 0; t = series.readTag()) {
                CodedInputStream field = CodedInputStream.newInstance(series.readByteArray());
                if (t >>> 3 == 1) {
                    field.readTag();
                    String labelName = field.readString();
                    field.readTag();
                    String labelValue = field.readString();
                    if (labelName.equals("__name__")) {
                        name = labelValue;
                    } else {
                        job = labelValue;
                    }
                } else {
                    field.readTag();
                    double value = field.readDouble();
                    field.readTag();
                    samples.add(new Sample(name, job, value, field.readInt64()));
                }
            }
        }
        return samples;
    }

    private static SpoolEntry entry(long seq, byte[] body, String tenant, String version) {
        List<ForwardedHeader> headers = new ArrayList<>(List.of(new ForwardedHeader("X-Scope-OrgID", tenant)));
        if (version != null) {
            headers.add(new ForwardedHeader("X-Prometheus-Remote-Write-Version", version));
        }
        return new SpoolEntry(seq, new SpoolRequest("POST", "/api/v1/write", "application/x-protobuf", "snappy",
                "k" + seq, Optional.empty(), 0, body, headers, true));
    }

    @Test
    void mergedRequestsCarryEverySampleOfEveryEntryInOrder() throws IOException {
        List<SpoolEntry> entries = new ArrayList<>();
        List<Sample> all = new ArrayList<>();
        for (int i = 0; i < 40; i++) { // merged, well over the 64 KiB of a snappy block's window
            List<Sample> samples = new ArrayList<>();
            for (int series = 0; series < 60; series++) {
                samples.add(new Sample("metric_" + series, "a", series * i, 1000L * i));
            }
            all.addAll(samples);
            entries.add(entry(i, RemoteWriteMerge.encoded(writeRequest(samples)), "tenant-a", "0.1.0"));
        }
        List<Shipment> shipments = new ShipmentPacker(256, MAX, false).merge(entries, seq -> Integer.MAX_VALUE);
        assertEquals(1, shipments.size());
        Shipment merged = shipments.get(0);
        assertTrue(merged.merge());
        assertEquals("snappy", merged.mergedEncoding());
        byte[] request = RemoteWriteMerge.decoded(merged.mergedBody(), MAX).orElseThrow();
        assertTrue(request.length > 64 * 1024, "a large merge: " + request.length);
        assertEquals(all, samplesOf(request), "every series and sample, in the order received");
    }

    @Test
    void twoTenantsAreNeverMergedAndVersionTwoOrNoVersionTravelsAlone() throws IOException {
        byte[] body = RemoteWriteMerge.encoded(writeRequest(List.of(new Sample("up", "a", 1, 1))));
        List<SpoolEntry> entries = List.of(entry(1, body, "tenant-a", "0.1.0"), entry(2, body, "tenant-b", "0.1.0"),
                entry(3, body, "tenant-a", "0.1.0"), entry(4, body, "tenant-b", "2.0.0"),
                entry(5, body, "tenant-b", null));
        List<Shipment> shipments = new ShipmentPacker(256, MAX, false).merge(entries, seq -> Integer.MAX_VALUE);
        List<List<Long>> seqs = shipments.stream().map(s -> s.entries().stream().map(SpoolEntry::seq).toList())
                .toList();
        assertTrue(seqs.contains(List.of(1L, 3L)), seqs.toString());
        assertTrue(seqs.contains(List.of(2L)) && seqs.contains(List.of(4L)) && seqs.contains(List.of(5L)),
                seqs.toString());
    }

    @Test
    void whatIsNotAWellFormedWriteRequestIsNeverMerged() throws IOException {
        byte[] good = writeRequest(List.of(new Sample("up", "a", 1, 1)));
        // A group (wire type 3) could swallow the entries after it once concatenated; field 2 is no WriteRequest's.
        byte[] group = new byte[] {(1 << 3) | 3};
        byte[] otherField = new byte[] {(2 << 3) | 2, 0};
        byte[] truncated = Arrays.copyOf(good, good.length - 1);
        for (byte[] message : List.of(group, otherField, truncated)) {
            assertEquals(Optional.empty(), RemoteWriteMerge.partOf(entry(1, RemoteWriteMerge.encoded(message),
                    "t", "0.1.0").request(), MAX));
        }
        assertTrue(RemoteWriteMerge.partOf(entry(1, RemoteWriteMerge.encoded(good), "t", "0.1.0").request(), MAX)
                .isPresent());
        assertEquals(Optional.empty(), RemoteWriteMerge.decoded("not snappy at all".getBytes(), MAX));
        // A block of five bytes that claims two gigabytes: refused before anything is allocated.
        assertEquals(Optional.empty(), RemoteWriteMerge.decoded(new byte[] {(byte) 0x80, (byte) 0x80, (byte) 0x80,
                (byte) 0x80, 0x07}, MAX));
        assertArrayEquals(good, RemoteWriteMerge.decoded(RemoteWriteMerge.encoded(good), MAX).orElseThrow());
    }
}
