package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.mcpd.testing.PowerCutFileSystem;
import dev.mcpd.testing.ReliabilityReport;
import dev.mcpd.testing.VolatileLayer;
import dev.mcpd.testing.VolatileLayer.CutPlan;
import dev.mcpd.testing.VolatileLayer.Survivors;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A 2xx survives a power cut. The spool runs on a file layer that forgets every write and directory change that was
 * not synced ({@link PowerCutFileSystem}); each commit point — accept (group commit), segment roll-over, delivery
 * acknowledgements, dead letters (refused and expired), replay, quarantine, the first start on an empty directory —
 * is cut at every sync it makes, each time once with nothing unsynced surviving and once with a random part of it
 * (reordered directory changes, torn tails), and the spool is opened again on what survived, as a restart would.
 * What must hold: every acknowledged entry is in the spool, delivered, or in dead/ (a replayed one: in dead/, in
 * replay/ or in the spool), never in none; what was delivered and whose acknowledgements were forced is not sent
 * again; the spool keeps its identity and its sequence numbers only grow.
 */
class SpoolPowerCutTest {

    private static final long SMALL_SEGMENTS = 1_500; // a roll-over every few entries
    private static final int ROUNDS_AT_WORK = 25;

    @TempDir
    Path temp;

    private int layers;
    /** Of the current commit point's runs: cuts made, entries acknowledged before them, runs that lost any. */
    private int cuts;
    private long acknowledgedBeforeCuts;
    private int lostInCuts;

    /** What a scenario did before the power went: the keys acknowledged, delivered, and so on. */
    private static final class Record {
        final VolatileLayer layer;
        final Set<String> acknowledged = Collections.synchronizedSet(new HashSet<>());
        final Set<String> delivered = Collections.synchronizedSet(new HashSet<>());
        /** Delivered, and their acknowledgements forced afterwards: never to be sent again. */
        final Set<String> deliveredForGood = Collections.synchronizedSet(new HashSet<>());
        volatile String spoolId;
        volatile long newestSeq;

        Record(VolatileLayer layer) {
            this.layer = layer;
        }
    }

    /** A commit point's work, on the spool directory it is given (through the power-cut file system). */
    @FunctionalInterface
    private interface Scenario {
        void run(Path spoolDir, Record record) throws Exception;
    }

    /** What a restart finds: everything the spool, dead/ and replay/ hold, each entry taken out once. */
    private record Restart(List<String> inSpool, List<String> dead, String spoolId, long firstNewSeq, long corrupt) {
        Set<String> everywhere() {
            Set<String> all = new HashSet<>(inSpool);
            all.addAll(dead);
            return all;
        }
    }

    private static SpoolRequest request(String key, boolean credential) {
        return new SpoolRequest("POST", "/v1/ingest", "application/json", "", key,
                credential ? Optional.of(new Credential("x-mcpd-key", "secret-of-" + key)) : Optional.empty(),
                System.currentTimeMillis(), ("{\"events\":[{\"key\":\"" + key + "\"}]}").getBytes(
                        StandardCharsets.UTF_8));
    }

    /** Appends {@code count} entries one after another, each acknowledged before the next (a credential every third). */
    private static void appendAll(Spool spool, String prefix, int count, Record record) throws Exception {
        record.spoolId = spool.id();
        for (int i = 0; i < count; i++) {
            String key = prefix + i;
            spool.append(request(key, i % 3 == 0)).get(10, TimeUnit.SECONDS);
            record.acknowledged.add(key);
            record.newestSeq = spool.newestSeq();
        }
    }

    /** What a delivery lane does with an entry refused for good (or expired): kept in dead/, then done. */
    private static void deadLetter(Spool spool, DeadLetters dead, SpoolEntry entry, int status, String why)
            throws IOException {
        dead.keep(entry, new DeadLetters.Refusal(status == 0 ? "" : "http://upstream", status, Instant.now(), why,
                new byte[0]));
        spool.done(entry.seq());
    }

    /** Every one of {@code acknowledged} is among {@code found}. */
    private static void assertNoneLost(Set<String> acknowledged, Set<String> found, String where) {
        Set<String> lost = new HashSet<>(acknowledged);
        lost.removeAll(found);
        assertEquals(Set.of(), lost, "acknowledged, and " + where);
    }

    // --- the commit points -------------------------------------------------------------------------------------

    @Test
    void theFirstStartOnAnEmptyDirectoryKeepsWhatItAcknowledged() throws Exception {
        Scenario firstStart = (dir, record) -> {
            try (Spool spool = Spool.open(dir)) {
                appendAll(spool, "first-", 5, record);
            }
        };
        atEverySync("s1", "Spool: the first start on an empty directory", "data/relay", null, firstStart, (record, restart) -> {
            assertTrue(restart.inSpool().containsAll(record.acknowledged), "every acknowledged entry is there: "
                    + record.acknowledged + " vs " + restart.inSpool());
            if (!record.acknowledged.isEmpty()) {
                assertEquals(record.spoolId, restart.spoolId(), "the spool keeps its identity");
            }
        });
    }

    @Test
    void groupCommitsAndRollOversKeepEveryAcknowledgedEntry() throws Exception {
        Scenario concurrent = (dir, record) -> {
            ExecutorService senders = Executors.newFixedThreadPool(4);
            try (Spool spool = Spool.open(dir, SMALL_SEGMENTS)) {
                List<CompletableFuture<Void>> all = new ArrayList<>();
                for (int sender = 0; sender < 4; sender++) {
                    String prefix = "s" + sender + "-";
                    all.add(CompletableFuture.runAsync(() -> {
                        try {
                            appendAll(spool, prefix, 8, record);
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    }, senders));
                }
                for (CompletableFuture<Void> sender : all) {
                    try {
                        sender.get(30, TimeUnit.SECONDS);
                    } catch (Exception e) {
                        // the power went: what was acknowledged before is recorded
                    }
                }
                record.spoolId = spool.id();
            } finally {
                senders.shutdownNow();
            }
        };
        atEverySync("s2", "Spool: group commits from 4 senders, a segment roll-over every few entries", "relay", null,
                concurrent, (record, restart) -> {
            Set<String> missing = new HashSet<>(record.acknowledged);
            missing.removeAll(restart.inSpool());
            assertEquals(Set.of(), missing, "acknowledged, and not in the spool after the cut");
            assertTrue(restart.firstNewSeq() > record.newestSeq, "sequence numbers only grow");
        });
    }

    @Test
    void deliveriesWhoseAcknowledgementsWereForcedAreNotSentAgain() throws Exception {
        Path before = prepared("relay", dir -> {
            try (Spool spool = Spool.open(dir, SMALL_SEGMENTS)) {
                appendAll(spool, "d-", 30, new Record(null));
            }
        });
        Scenario deliver = (dir, record) -> {
            try (Spool spool = Spool.open(dir, SMALL_SEGMENTS)) {
                Set<String> sinceFlush = new HashSet<>();
                Optional<SpoolEntry> next;
                while ((next = spool.next(Duration.ZERO)).isPresent()) {
                    String key = next.get().request().idempotencyKey();
                    record.acknowledged.add(key);
                    record.delivered.add(key); // the upstream has it: what follows only records that
                    spool.done(next.get().seq());
                    sinceFlush.add(key);
                    if (sinceFlush.size() == 7) {
                        spool.flushAcks(); // its failure is only logged: the power still on after it says it held
                        if (record.layer.isOff()) {
                            return;
                        }
                        record.deliveredForGood.addAll(sinceFlush);
                        sinceFlush.clear();
                    }
                }
            }
        };
        atEverySync("s3", "Spool: deliveries and their acknowledgements, finished segments removed", "relay",
                before, deliver, (record, restart) -> {
            Set<String> lost = new HashSet<>(record.acknowledged);
            lost.removeAll(restart.inSpool());
            lost.removeAll(record.delivered);
            assertEquals(Set.of(), lost, "neither delivered nor in the spool");
            Set<String> again = new HashSet<>(record.deliveredForGood);
            again.retainAll(restart.inSpool());
            assertEquals(Set.of(), again, "delivered, acknowledgements forced, and yet handed out again");
            assertEquals(0, restart.corrupt(), "nothing delivered comes back as damage");
        });
    }

    @Test
    void anEntryDoneDurablyIsNeverHandedOutAgainAfterACut() throws Exception {
        Path before = prepared("relay", dir -> {
            try (Spool spool = Spool.open(dir, SMALL_SEGMENTS)) {
                appendAll(spool, "o-", 12, new Record(null));
            }
        });
        Scenario orderedStream = (dir, record) -> {
            try (Spool spool = Spool.open(dir, SMALL_SEGMENTS)) {
                Optional<SpoolEntry> next;
                while ((next = spool.next(Duration.ZERO)).isPresent()) {
                    String key = next.get().request().idempotencyKey();
                    record.acknowledged.add(key);
                    record.delivered.add(key);
                    spool.done(next.get().seq());
                    spool.doneDurably().get(10, TimeUnit.SECONDS); // what an ordered stream waits for
                    record.deliveredForGood.add(key);
                }
            }
        };
        atEverySync("s8", "Spool: an ordered stream's deliveries, each made durable before the next", "relay", before,
                orderedStream, (record, restart) -> {
            Set<String> again = new HashSet<>(record.deliveredForGood);
            again.retainAll(restart.inSpool());
            assertEquals(Set.of(), again, "done durably, and handed out again after the cut");
            Set<String> found = new HashSet<>(restart.inSpool());
            found.addAll(record.delivered);
            assertNoneLost(record.acknowledged, found, "neither delivered nor in the spool");
        });
    }

    @Test
    void refusedAndExpiredEntriesAreInDeadOrInTheSpoolNeverInNeither() throws Exception {
        Path before = prepared("relay", dir -> {
            try (Spool spool = Spool.open(dir)) {
                appendAll(spool, "refused-", 8, new Record(null));
            }
        });
        Scenario deadLetter = (dir, record) -> {
            try (Spool spool = Spool.open(dir)) {
                DeadLetters dead = new DeadLetters(dir); // dead/ is made now, during the run
                for (int i = 0; i < 4; i++) {
                    SpoolEntry refused = spool.next(Duration.ZERO).orElseThrow();
                    record.acknowledged.add(refused.request().idempotencyKey());
                    deadLetter(spool, dead, refused, 400, "refused with 400");
                }
                // What --spool-max-age does with entries that waited too long.
                for (SpoolEntry expired : spool.takeReceivedBefore(System.currentTimeMillis() + 60_000, 100)) {
                    record.acknowledged.add(expired.request().idempotencyKey());
                    deadLetter(spool, dead, expired, 0, "waited too long");
                }
                spool.flushAcks();
            }
        };
        atEverySync("s4", "Spool: dead letters, refused and expired, dead/ made during the run", "relay",
                before, deadLetter, (record, restart) -> assertNoneLost(record.acknowledged, restart.everywhere(),
                        "neither in dead/ nor in the spool"));
    }

    @Test
    void replayedDeadLettersAreInDeadInReplayOrInTheSpoolNeverInNone() throws Exception {
        Path before = prepared("relay", dir -> {
            try (Spool spool = Spool.open(dir)) {
                appendAll(spool, "replayed-", 5, new Record(null));
                DeadLetters dead = new DeadLetters(dir);
                for (int i = 0; i < 5; i++) {
                    deadLetter(spool, dead, spool.next(Duration.ZERO).orElseThrow(), 400, "no");
                }
            }
        });
        Scenario replay = (dir, record) -> {
            for (int i = 0; i < 5; i++) {
                record.acknowledged.add("replayed-" + i);
            }
            ReplayInbox inbox = new ReplayInbox(dir); // replay/ is made by the first hand-over
            inbox.replay(DeadLetters.beside(dir).orElseThrow(), Optional.empty(), Long.MAX_VALUE);
            try (Spool spool = Spool.open(dir)) {
                inbox.adoptInto(DirectAppend.to(spool), System.currentTimeMillis());
            }
        };
        atEverySync("s5", "Spool: `dead replay` hands dead letters over, the relay takes them", "relay",
                before, replay, (record, restart) -> assertNoneLost(record.acknowledged, restart.everywhere(),
                        "in none of dead/, replay/ and the spool"));
    }

    @Test
    void damageIsKeptInCorruptOrStaysInItsSegment() throws Exception {
        Path before = prepared("relay", dir -> {
            try (Spool spool = Spool.open(dir, 1)) { // a segment per entry
                appendAll(spool, "q-", 4, new Record(null));
            }
            Path second = SegmentScan.segmentsIn(dir).get(1);
            // Without its summary the start reads it: the path that copies damage and removes a segment left empty.
            Files.delete(SegmentSummary.file(dir, SpoolFiles.firstSeqOf(second)));
            try (FileChannel segment = FileChannel.open(second, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                long middle = segment.size() / 2;
                ByteBuffer one = ByteBuffer.allocate(1);
                segment.read(one, middle);
                segment.write(ByteBuffer.wrap(new byte[] {(byte) ~one.get(0)}), middle);
            }
        });
        Scenario quarantine = (dir, record) -> {
            record.acknowledged.addAll(List.of("q-0", "q-2", "q-3"));
            // Opening finds the damage, keeps it in corrupt/ and removes the segment it left empty.
            try (Spool spool = Spool.open(dir, 1)) {
                Optional<SpoolEntry> next;
                while ((next = spool.next(Duration.ZERO)).isPresent()) {
                    record.delivered.add(next.get().request().idempotencyKey());
                    spool.done(next.get().seq());
                }
            }
        };
        atEverySync("s6", "Spool: damage found at a start, copied to corrupt/, its segment removed",
                "relay", before, quarantine, (record, restart) -> {
            Set<String> whole = new HashSet<>(restart.inSpool());
            whole.addAll(record.delivered);
            assertEquals(Set.of("q-0", "q-2", "q-3"), whole, "the whole entries, delivered or still in the spool");
            assertEquals(1, restart.corrupt(), "the damaged bytes are in corrupt/, copied before or at the restart");
        });
    }

    @Test
    void aSpoolAtWorkLosesNothingAcknowledgedToCutsAtRandomMoments() throws Exception {
        Random random = new Random(20261206);
        Path disk = temp.resolve("at-work-0");
        Files.createDirectories(disk);
        Set<String> acknowledged = Collections.synchronizedSet(new HashSet<>());
        Set<String> delivered = Collections.synchronizedSet(new HashSet<>());
        for (int round = 1; round <= ROUNDS_AT_WORK; round++) {
            PowerCutFileSystem fs = PowerCutFileSystem.over(disk);
            VolatileLayer layer = fs.layer();
            CutPlan plan = CutPlan.random(random.nextLong());
            int cutAt = 1 + random.nextInt(120);
            layer.cutAt(sync -> sync.number() == cutAt, plan);
            Path dir = fs.root().resolve("relay");
            ExecutorService work = Executors.newFixedThreadPool(4);
            try (Spool spool = Spool.open(dir, SMALL_SEGMENTS * 4)) {
                DeadLetters dead = new DeadLetters(dir);
                String roundName = "r" + round + "-";
                for (int sender = 0; sender < 3; sender++) {
                    String prefix = roundName + sender + "-";
                    work.submit(() -> {
                        for (int i = 0; !layer.isOff(); i++) {
                            String key = prefix + i;
                            spool.append(request(key, i % 3 == 0)).get(10, TimeUnit.SECONDS);
                            acknowledged.add(key);
                        }
                        return null;
                    });
                }
                work.submit(() -> {
                    for (int i = 0; !layer.isOff(); i++) {
                        Optional<SpoolEntry> next = spool.next(Duration.ofMillis(50));
                        if (next.isEmpty()) {
                            continue;
                        }
                        if (i % 5 == 0) {
                            deadLetter(spool, dead, next.get(), 400, "refused"); // must be in dead/ or the spool
                        } else {
                            delivered.add(next.get().request().idempotencyKey()); // the upstream has it
                            spool.done(next.get().seq());
                        }
                    }
                    return null;
                });
                Awaitility.await().atMost(Duration.ofSeconds(30)).until(layer::isOff);
            } catch (IOException e) {
                assertTrue(layer.isOff(), "the spool failed with the power on: " + e);
            } finally {
                work.shutdownNow();
                assertTrue(work.awaitTermination(10, TimeUnit.SECONDS));
            }
            Path next = temp.resolve("at-work-" + round);
            layer.survivors().writeTo(next);
            disk = next;
            Path copy = temp.resolve("checked-" + round);
            copyTree(next, copy); // a restart takes every entry out: the next round goes on from the uncounted image
            Restart restart = restart(copy.resolve("relay"), false);
            Set<String> lost = new HashSet<>(acknowledged);
            lost.removeAll(delivered);
            lost.removeAll(restart.everywhere());
            if (!lost.isEmpty()) {
                recordAtWork(round, acknowledged.size(), lost.size());
            }
            assertEquals(Set.of(), lost, "round " + round + ", cut at sync " + cutAt + " with " + plan
                    + ": acknowledged, and neither delivered, in dead/ nor in the spool");
        }
        recordAtWork(ROUNDS_AT_WORK, acknowledged.size(), 0);
    }

    private static void recordAtWork(int rounds, long acknowledged, long lost) {
        ReliabilityReport.record(new ReliabilityReport.PowerCutRow("s7", "Spool: at work, cut at random syncs",
                "3 senders and a deliverer (every fifth entry to dead/) on one spool, the power cut at a random sync"
                        + " among its first 120, with a random plan; each round goes on from what the last one left.",
                rounds, acknowledged, lost, 0, "–", lost == 0 ? "pass" : "**FAIL**"));
    }

    // --- the rig -----------------------------------------------------------------------------------------------

    @FunctionalInterface
    private interface Check {
        void holds(Record record, Restart restart) throws Exception;
    }

    @FunctionalInterface
    private interface SetUp {
        void run(Path spoolDir) throws Exception;
    }

    /** What {@code setUp} leaves on the plain file system, as a directory the runs start from. */
    private Path prepared(String spoolPath, SetUp setUp) throws Exception {
        Path base = temp.resolve("prepared");
        setUp.run(base.resolve(spoolPath));
        return base;
    }

    /**
     * Runs {@code scenario} once to count its syncs, then once with the power cut at each of them — with nothing
     * unsynced kept, and with a random part of it — and once cut after it ended; each time opens the spool again on
     * what survived and checks {@code check}.
     */
    private void atEverySync(String id, String title, String spoolPath, Path before, Scenario scenario, Check check)
            throws Exception {
        cuts = 0;
        acknowledgedBeforeCuts = 0;
        int syncs = 0;
        try {
            syncs = run(spoolPath, before, scenario, 0, CutPlan.dropAll(), check);
            assertTrue(syncs > 0, "the scenario syncs nothing");
            for (int at = 1; at <= syncs; at++) {
                run(spoolPath, before, scenario, at, CutPlan.dropAll(), check);
                run(spoolPath, before, scenario, at, CutPlan.random(at), check);
            }
        } finally {
            ReliabilityReport.record(new ReliabilityReport.PowerCutRow(id, title, "Cut at each of its " + syncs
                    + " syncs, once keeping nothing unsynced and once a random part of it, and after it ended.",
                    cuts, acknowledgedBeforeCuts, lostInCuts, 0, "–", lostInCuts == 0 && cuts == 2 * syncs + 1
                            ? "pass" : "**FAIL**"));
        }
    }

    /** One run, cut at sync {@code cutAt} (0: after the scenario); returns the syncs it made. */
    private int run(String spoolPath, Path before, Scenario scenario, int cutAt, CutPlan plan, Check check)
            throws Exception {
        Path backing = temp.resolve("disk-" + (++layers));
        if (before != null) {
            copyTree(before, backing);
        }
        PowerCutFileSystem fs = PowerCutFileSystem.over(backing);
        VolatileLayer layer = fs.layer();
        layer.cutAt(sync -> sync.number() == cutAt, plan);
        Record record = new Record(layer);
        try {
            scenario.run(fs.root().resolve(spoolPath), record);
        } catch (Exception e) {
            if (!layer.isOff()) {
                throw e;
            }
        }
        int syncs = layer.syncs();
        Survivors survivors = layer.cut(plan);
        cuts++;
        acknowledgedBeforeCuts += record.acknowledged.size();
        Path image = temp.resolve("image-" + layers);
        survivors.writeTo(image);
        try {
            check.holds(record, restart(image.resolve(spoolPath), true));
        } catch (AssertionError e) {
            lostInCuts++;
            fail("power cut " + (cutAt == 0 ? "after the scenario" : "at sync " + cutAt + " of " + syncs)
                    + " with " + plan + "; survived: " + survivors.files() + ": " + e.getMessage(), e);
        }
        return syncs;
    }

    /** What a restart on {@code spoolDir} finds: every entry the spool, dead/ and replay/ hold, each taken once. */
    private static Restart restart(Path spoolDir, boolean appendOne) throws Exception {
        try (Spool spool = Spool.open(spoolDir)) {
            List<String> dead = new ArrayList<>();
            for (SpoolEntry letter : new DeadLetters(spoolDir).entries()) {
                dead.add(letter.request().idempotencyKey());
            }
            new ReplayInbox(spoolDir).adoptInto(DirectAppend.to(spool), System.currentTimeMillis());
            List<String> inSpool = new ArrayList<>();
            Optional<SpoolEntry> next;
            while ((next = spool.next(Duration.ZERO)).isPresent()) {
                inSpool.add(next.get().request().idempotencyKey());
                spool.done(next.get().seq());
            }
            long firstNewSeq = appendOne ? spool.append(request("after-restart", false)).get(10, TimeUnit.SECONDS)
                    .seq() : 0;
            return new Restart(inSpool, dead, spool.id(), firstNewSeq, Quarantine.count(spoolDir));
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (var paths = Files.walk(from)) {
            for (Path path : paths.toList()) {
                Path target = to.resolve(from.relativize(path).toString());
                Files.copy(path, target, StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
    }
}
