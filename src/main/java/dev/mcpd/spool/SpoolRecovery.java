package dev.mcpd.spool;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a start makes of a spool directory, once: the segments that need it scanned ({@link SegmentScan}) — those a
 * crash left open, those delivery had begun (their acknowledgements must be matched to entries), those without a
 * summary that can be trusted — damage in them copied to {@code corrupt/} ({@link Quarantine}), segments whose entries
 * are all done deleted, and a new segment created for appends, named by the sequence high-water mark — so sequence
 * numbers only grow. Every other segment is taken from its {@link SegmentSummary} without reading it: the start does
 * not grow with the backlog. See {@link Spool} ("Damage found when a segment is read") for the rules.
 */
final class SpoolRecovery {

    private static final Logger LOG = LoggerFactory.getLogger(Spool.class);

    /**
     * What the spool starts from.
     *
     * @param segments  the segments that still hold waiting entries, and the new one, by first sequence number
     * @param active    the new segment's index, taking appends
     * @param writer    the new segment's writer
     * @param nextSeq   the sequence number the next entry gets
     * @param entries   entries waiting
     * @param bytes     bytes they occupy as stored
     * @param corrupted damaged regions found (and copied, or left in place) at this start
     */
    record Recovered(TreeMap<Long, SegmentIndex> segments, SegmentIndex active, SegmentWriter writer, long nextSeq,
                     long entries, long bytes, long corrupted) {
    }

    private SpoolRecovery() {
    }

    static Recovered recover(Path dir, WriteChannels channels) throws IOException {
        TreeMap<Long, SegmentIndex> segments = new TreeMap<>();
        AtomicLong corrupted = new AtomicLong();
        long entries = 0;
        long bytes = 0;
        SpoolFiles.createDirectory(dir);
        long highWater = 0;
        List<Path> emptySegments = new ArrayList<>();
        List<SegmentIndex> finished = new ArrayList<>();
        List<Path> all = SegmentScan.segmentsIn(dir);
        List<Path> toScan = new ArrayList<>();
        for (Path segment : all) {
            long firstSeq = SpoolFiles.firstSeqOf(segment);
            SegmentSummary summary = Files.exists(new AckLog(dir, firstSeq).file()) ? null
                    : SegmentSummary.read(dir, firstSeq);
            if (summary == null) {
                toScan.add(segment);
                continue;
            }
            SegmentIndex index = SegmentIndex.summarized(dir, firstSeq, summary);
            segments.put(firstSeq, index);
            highWater = Math.max(highWater, summary.lastSeq());
            entries += summary.count();
            bytes += summary.bytes();
        }
        for (SegmentScan scan : SegmentScan.scan(all, toScan)) {
            Path segment = scan.segment();
            highWater = Math.max(highWater, scan.seqBound());
            for (SegmentScan.Region torn : scan.tornTails()) {
                LOG.info("spool segment {}: torn tail of {} bytes at offset {} ({}): a batch a crash interrupted"
                        + " before it was acknowledged; never read as entries", segment.getFileName(),
                        torn.length(), torn.offset(), torn.reason());
            }
            boolean damageKept = keepDamage(dir, scan, corrupted);
            if (scan.entries().isEmpty()) {
                if (damageKept) {
                    emptySegments.add(segment);
                    if (!scan.damaged().isEmpty()) {
                        LOG.info("spool segment {} holds no whole entry: removed, its damaged bytes are kept in {}/",
                                segment.getFileName(), Quarantine.DIRECTORY);
                    }
                }
                continue;
            }
            SegmentIndex index = SegmentIndex.recovered(dir, scan);
            if (!damageKept) {
                index.retain();
            }
            if (index.finished()) {
                finished.add(index);
                continue;
            }
            segments.put(index.firstSeq, index);
            entries += index.waiting();
            bytes += index.waitingBytes();
        }
        long nextSeq = highWater + 1;
        // The new segment's name records the high-water mark before the empty ones that held it go.
        SegmentWriter writer = SegmentWriter.createOrReuseEmpty(dir, nextSeq, channels);
        SegmentIndex active = new SegmentIndex(dir, nextSeq);
        segments.put(active.firstSeq, active);
        emptySegments.remove(SpoolFiles.segment(dir, nextSeq));
        for (Path empty : emptySegments) {
            new SegmentIndex(dir, SpoolFiles.firstSeqOf(empty)).delete();
        }
        for (SegmentIndex done : finished) {
            done.delete();
        }
        removeOrphanedCompanions(dir);
        LOG.info("spool at {}: {} entries, {} bytes waiting; next sequence number {} ({} of {} segments read, the"
                + " others are read when delivery reaches them)", dir, entries, bytes, nextSeq, toScan.size(),
                all.size());
        return new Recovered(segments, active, writer, nextSeq, entries, bytes, corrupted.get());
    }

    /**
     * Removes the acknowledgements, summaries and credentials whose segment is gone: what a power cut left between the
     * steps of a segment's removal ({@link SegmentIndex#delete}).
     */
    private static void removeOrphanedCompanions(Path dir) throws IOException {
        List<Path> files;
        try (Stream<Path> listing = Files.list(dir)) {
            files = listing.toList();
        }
        for (Path file : files) {
            for (String suffix : List.of(AckLog.SUFFIX, SegmentSummary.SUFFIX, SpoolFiles.CREDENTIAL_SUFFIX)) {
                long firstSeq = SpoolFiles.firstSeqOf(file, suffix);
                if (firstSeq >= 0 && !Files.exists(SpoolFiles.segment(dir, firstSeq))) {
                    Files.deleteIfExists(file);
                }
            }
        }
    }

    /**
     * Copies each damaged region of a segment to {@code corrupt/} (once: a region kept at an earlier start is not
     * copied again), one log line each. Never throws: a copy that fails is logged, and the segment is then kept as it
     * is (never deleted) so the next start tries again. Returns whether every damaged region is safely kept.
     */
    static boolean keepDamage(Path dir, SegmentScan scan, AtomicLong corrupted) {
        List<SegmentScan.Region> damaged = scan.damaged();
        if (damaged.isEmpty()) {
            return true;
        }
        Path segment = scan.segment();
        boolean allKept = true;
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.READ)) {
            for (SegmentScan.Region region : damaged) {
                String name = Quarantine.name(scan.firstSeq(), region.offset());
                try {
                    Quarantine.Kept kept = Quarantine.keep(dir, scan.firstSeq(), channel, region.offset(),
                            region.length());
                    name = kept.name();
                    if (kept.now()) {
                        corrupted.incrementAndGet();
                        LOG.warn("spool segment {}: {} damaged bytes at offset {} ({}); kept in {}/{}, the whole"
                                + " entries before and after them are delivered", segment.getFileName(),
                                region.length(), region.offset(), region.reason(), Quarantine.DIRECTORY, name);
                    } else {
                        LOG.info("spool segment {}: {} damaged bytes at offset {} were kept in {}/{} at an earlier"
                                + " start", segment.getFileName(), region.length(), region.offset(),
                                Quarantine.DIRECTORY, name);
                    }
                } catch (IOException e) {
                    allKept = false;
                    corrupted.incrementAndGet();
                    LOG.error("spool segment {}: {} damaged bytes at offset {} ({}) could not be kept in {}/{} ({});"
                            + " the segment is left as it is and the next start tries again",
                            segment.getFileName(), region.length(), region.offset(), region.reason(),
                            Quarantine.DIRECTORY, name, e.toString());
                }
            }
        } catch (IOException e) {
            LOG.error("spool segment {}: {} damaged region(s) could not be read to keep them ({}); the segment is"
                    + " left as it is", segment.getFileName(), damaged.size(), e.toString());
            corrupted.addAndGet(damaged.size());
            return false;
        }
        return allKept;
    }
}
