package dev.mcpd.spool;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Reads a spool directory without changing it: the whole entries still waiting (delivered and dead-lettered ones,
 * which its acknowledgement logs name, are left out), and what is torn or damaged. Reading resynchronises after a bad
 * record exactly as the spool does at start ({@link SegmentScan}), so it sees the entries the relay will deliver.
 * For inspection (tests, {@code mcpd relay spool check}); it never creates, truncates or deletes a file, and it may
 * run beside a running relay or on a copy of its directory.
 */
public final class SpoolReader {

    /**
     * Everything a spool directory holds.
     *
     * @param entries the whole entries still waiting, oldest first
     * @param damage  one line per torn tail or damaged region, {@code <segment>: <reason>; …}
     */
    public record Contents(List<SpoolEntry> entries, List<String> damage) {
    }

    /**
     * What {@code spool check} reports: counts, and one line per torn tail and per damaged region.
     *
     * @param entries        entries waiting (not yet delivered nor dead-lettered)
     * @param bytes          bytes those entries occupy as stored (what the spool bound counts)
     * @param segments       segment files
     * @param tornTails      {@code <segment>: …} per torn tail: a batch a crash interrupted, never acknowledged
     * @param damagedRegions {@code <segment>: …} per damaged region (acknowledged bytes lost or changed), each saying
     *                       whether a copy is in {@code corrupt/} already
     * @param deadLetters    entries held in {@code dead/}
     * @param corruptFiles   copies of damaged bytes held in {@code corrupt/}
     */
    public record Check(long entries, long bytes, int segments, List<String> tornTails, List<String> damagedRegions,
                        long deadLetters, long corruptFiles) {

        /** Something is damaged: a damaged region in a segment, or a copy of one in corrupt/ nobody removed yet. */
        public boolean damaged() {
            return !damagedRegions.isEmpty() || corruptFiles > 0;
        }
    }

    /**
     * The oldest entries waiting, and how many wait in all.
     *
     * @param oldest  at most the number asked for, oldest first
     * @param waiting every entry waiting (not yet delivered nor dead-lettered), those listed among them
     */
    public record Oldest(List<WaitingEntry> oldest, long waiting) {
    }

    private SpoolReader() {
    }

    /**
     * The {@code limit} oldest entries waiting in a spool directory, without their bodies, and how many wait in all.
     * Every segment is scanned (as {@link #check} does) to count them; only the entries listed are decoded. An entry
     * whose record fails its checksum when read is left out, as the relay would take it out of delivery.
     *
     * @throws NoSuchFileException when {@code dir} is not a directory
     */
    public static Oldest oldest(Path dir, int limit) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new NoSuchFileException(dir.toString(), null, "no spool directory");
        }
        List<WaitingEntry> oldest = new ArrayList<>();
        long waiting = 0;
        for (SegmentScan scan : SegmentScan.scanAll(dir)) {
            try {
                BitSet done = acknowledged(dir, scan);
                try (FileChannel channel = FileChannel.open(scan.segment(), StandardOpenOption.READ)) {
                    for (int i = 0; i < scan.entries().size(); i++) {
                        if (done.get(i)) {
                            continue;
                        }
                        waiting++;
                        if (oldest.size() < limit) {
                            readWaiting(channel, scan.entries().get(i)).ifPresent(oldest::add);
                        }
                    }
                }
            } catch (NoSuchFileException e) {
                // Delivered and deleted while it was being read (a running relay).
            }
        }
        return new Oldest(oldest, waiting);
    }

    private static Optional<WaitingEntry> readWaiting(FileChannel channel, EntryLocation location)
            throws IOException {
        try {
            RecordCodec.DecodedEntry entry = RecordCodec.decodeEntry(RecordScanner.readPayload(channel,
                    location.offset(), location.size(), RecordCodec.ENTRY_MAGIC));
            return Optional.of(new WaitingEntry(entry.seq(), entry.receivedAtMillis(), entry.method(), entry.target(),
                    entry.body().length));
        } catch (CorruptRecordException e) {
            return Optional.empty();
        }
    }

    /** The spool's identity ({@code mcpd-relay-id}) as its {@code id} file holds it; empty when it has none yet. */
    public static Optional<String> id(Path dir) throws IOException {
        return SpoolIdentity.read(dir);
    }

    public static Contents read(Path dir) throws IOException {
        List<SpoolEntry> entries = new ArrayList<>();
        List<String> damage = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return new Contents(entries, damage);
        }
        for (SegmentScan scan : SegmentScan.scanAll(dir)) {
            Path segment = scan.segment();
            scan.regions().forEach(region -> damage.add(describe(segment, scan, region)));
            try {
                Map<Integer, Credential> credentials = SegmentScan.credentialsOf(dir, scan.firstSeq());
                BitSet done = acknowledged(dir, scan);
                try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.READ)) {
                    for (int i = 0; i < scan.entries().size(); i++) {
                        if (!done.get(i)) {
                            try {
                                entries.add(readEntry(channel, scan.entries().get(i), credentials::get));
                            } catch (CorruptRecordException e) {
                                damage.add(segment.getFileName() + ": " + e.getMessage());
                            }
                        }
                    }
                }
            } catch (NoSuchFileException e) {
                // Delivered and deleted while it was being read (a running relay).
            }
        }
        return new Contents(entries, damage);
    }

    /**
     * Checks a spool directory ({@code <spool-dir>/relay}) the way {@code fsck} checks a file system: reads every
     * record and checksum, changes nothing.
     *
     * @throws NoSuchFileException when {@code dir} is not a directory
     */
    public static Check check(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new NoSuchFileException(dir.toString(), null, "no spool directory");
        }
        long entries = 0;
        long bytes = 0;
        int segments = 0;
        List<String> torn = new ArrayList<>();
        List<String> damaged = new ArrayList<>();
        for (SegmentScan scan : SegmentScan.scanAll(dir)) {
            BitSet done;
            try {
                done = acknowledged(dir, scan);
            } catch (NoSuchFileException e) {
                continue;
            }
            segments++;
            for (int i = 0; i < scan.entries().size(); i++) {
                if (!done.get(i)) {
                    entries++;
                    bytes += scan.entries().get(i).size();
                }
            }
            checkCredentials(dir, scan, done, torn, damaged);
            for (SegmentScan.Region region : scan.regions()) {
                String line = describe(scan.segment(), scan, region);
                if (region.torn()) {
                    torn.add(line);
                } else {
                    String kept = Quarantine.existing(dir, scan.firstSeq(), region.offset(), region.length());
                    damaged.add(line + (kept != null ? "; kept in " + Quarantine.DIRECTORY + "/" + kept
                            : "; not yet in " + Quarantine.DIRECTORY + "/ (the relay keeps it there at its next start)"));
                }
            }
        }
        return new Check(entries, bytes, segments, torn, damaged, countDeadLetters(dir), Quarantine.count(dir));
    }

    /** How many sequence numbers a line about entries lost with a credential names before "…". */
    private static final int SEQS_SHOWN = 10;

    /**
     * The segment's credential file: its torn tail or damaged regions, and the waiting entries that refer to a
     * credential it lacks — those can never be delivered with their sender's key (the relay keeps them in
     * {@code corrupt/} when it reads them).
     */
    private static void checkCredentials(Path dir, SegmentScan scan, BitSet done, List<String> torn,
                                         List<String> damaged) throws IOException {
        SegmentScan.Credentials credentials = SegmentScan.scanCredentials(dir, scan.firstSeq());
        Map<Integer, List<Long>> lost = new TreeMap<>();
        try (FileChannel channel = FileChannel.open(scan.segment(), StandardOpenOption.READ)) {
            for (int i = 0; i < scan.entries().size(); i++) {
                if (done.get(i)) {
                    continue;
                }
                EntryLocation entry = scan.entries().get(i);
                int ref = RecordCodec.credentialRefAt(channel, entry.offset());
                if (ref != 0 && !credentials.credentials().containsKey(ref)) {
                    lost.computeIfAbsent(ref, unused -> new ArrayList<>()).add(entry.seq());
                }
            }
        } catch (NoSuchFileException e) {
            return;
        }
        String file = SpoolFiles.credentials(dir, scan.firstSeq()).getFileName().toString();
        for (SegmentScan.Region region : credentials.regions()) {
            String line = file + ": " + region.reason() + "; " + region.length() + " bytes from offset "
                    + region.offset();
            if (region.torn() && lost.isEmpty()) {
                torn.add(line + " are a torn tail (never acknowledged)");
            } else {
                damaged.add(line + " are damaged");
            }
        }
        for (Map.Entry<Integer, List<Long>> missing : lost.entrySet()) {
            List<Long> seqs = missing.getValue();
            damaged.add(file + ": credential " + missing.getKey() + " is missing or damaged; " + seqs.size()
                    + " waiting entr" + (seqs.size() == 1 ? "y refers" : "ies refer") + " to it and cannot be"
                    + " delivered with it (seq " + seqs.stream().limit(SEQS_SHOWN).map(String::valueOf)
                            .collect(Collectors.joining(", "))
                    + (seqs.size() > SEQS_SHOWN ? ", …" : "") + ")");
        }
    }

    private static String describe(Path segment, SegmentScan scan, SegmentScan.Region region) {
        return segment.getFileName() + ": " + region.reason() + "; " + region.length() + " bytes from offset "
                + region.offset() + (region.torn() ? " are a torn tail (never acknowledged)" : " are damaged");
    }

    private static BitSet acknowledged(Path dir, SegmentScan scan) throws IOException {
        BitSet done = new BitSet();
        new AckLog(dir, scan.firstSeq()).readInto(done, seq -> indexOf(scan.entries(), seq));
        return done;
    }

    private static long countDeadLetters(Path dir) throws IOException {
        Path dead = dir.resolve(DeadLetters.DIRECTORY);
        if (!Files.isDirectory(dead)) {
            return 0;
        }
        try (Stream<Path> files = Files.list(dead)) {
            return files.map(f -> f.getFileName().toString())
                    .filter(name -> name.endsWith(".entry") && !name.startsWith("."))
                    .count();
        }
    }

    /** Entries of a segment are in ascending seq order: a binary search finds one. */
    private static int indexOf(List<EntryLocation> entries, long seq) {
        int low = 0;
        int high = entries.size() - 1;
        while (low <= high) {
            int middle = (low + high) >>> 1;
            long found = entries.get(middle).seq();
            if (found == seq) {
                return middle;
            }
            if (found < seq) {
                low = middle + 1;
            } else {
                high = middle - 1;
            }
        }
        return -1;
    }

    /** Finds a credential by its reference in a segment's credential file; null when there is none. */
    @FunctionalInterface
    interface CredentialLookup {
        Credential find(int ref) throws IOException;
    }

    static SpoolEntry readEntry(FileChannel channel, EntryLocation location, CredentialLookup credentials)
            throws IOException, CorruptRecordException {
        return readEntry(channel, location.offset(), location.size(), credentials);
    }

    static SpoolEntry readEntry(FileChannel channel, long offset, int size, CredentialLookup credentials)
            throws IOException, CorruptRecordException {
        ByteBuffer payload = RecordScanner.readPayload(channel, offset, size, RecordCodec.ENTRY_MAGIC);
        RecordCodec.DecodedEntry decoded = RecordCodec.decodeEntry(payload);
        Optional<Credential> credential = Optional.empty();
        if (decoded.credentialRef() != 0) {
            Credential found = credentials.find(decoded.credentialRef());
            if (found == null) {
                throw new CorruptRecordException("entry " + decoded.seq() + " refers to credential "
                        + decoded.credentialRef() + ", which its segment's credential file lacks");
            }
            credential = Optional.of(found);
        }
        return decoded.toEntry(credential);
    }
}
