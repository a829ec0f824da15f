package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Room for an entry is taken for its stored size as it is handed out: a caller bounding the bodies it holds is handed
 * an entry only with room for it, the oldest entry stays the oldest while there is none, and the room of an entry it
 * was not handed after all comes back.
 */
class SpoolReadRoomTest {

    private static final Duration SHORT = Duration.ofMillis(50);

    @TempDir
    Path dir;

    /** Takes room while {@code refusing} is false, and remembers what it was asked for, waited for and given back. */
    private static final class CountingRoom implements ReadRoom {
        final List<Long> taken = new ArrayList<>();
        final List<Long> awaited = new ArrayList<>();
        final List<Long> givenBack = new ArrayList<>();
        boolean refusing;

        @Override
        public boolean tryTake(long bytes) {
            if (refusing) {
                return false;
            }
            taken.add(bytes);
            return true;
        }

        @Override
        public boolean awaitRoom(long bytes, long deadlineNanos) {
            awaited.add(bytes);
            return !refusing;
        }

        @Override
        public void giveBack(long bytes) {
            givenBack.add(bytes);
        }
    }

    private static SpoolRequest request(String target, int bodyBytes) {
        byte[] body = new byte[bodyBytes];
        byte[] name = target.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(name, 0, body, 0, name.length);
        return new SpoolRequest("POST", target, "application/json", "", "key" + target, Optional.empty(),
                1_700_000_000_000L, body);
    }

    /** A spool holding an entry of {@code bytes} for each target, in order. */
    private Spool spoolHolding(int bytes, String... targets) throws Exception {
        Spool spool = Spool.open(dir);
        for (String target : targets) {
            spool.append(request(target, bytes)).get(10, TimeUnit.SECONDS);
        }
        return spool;
    }

    private static Optional<SpoolEntry> next(Spool spool, ReadRoom room) throws Exception {
        return spool.next(SHORT, seq -> { }, room);
    }

    @Test
    void roomIsTakenForTheStoredSizeWhichHoldsTheBody() throws Exception {
        try (Spool spool = spoolHolding(100, "/small")) {
            spool.append(request("/large", 50_000)).get(10, TimeUnit.SECONDS);
            CountingRoom room = new CountingRoom();
            SpoolEntry small = next(spool, room).orElseThrow();
            SpoolEntry large = next(spool, room).orElseThrow();
            assertEquals("/large", large.request().target());
            assertEquals(2, room.taken.size());
            assertTrue(room.taken.get(0) >= small.request().body().length, room.taken.toString());
            assertTrue(room.taken.get(1) >= large.request().body().length, room.taken.toString());
            assertTrue(room.taken.get(1) < large.request().body().length + 4096,
                    "room for the entry's own size, not for the largest body there could be: " + room.taken);
            assertEquals(List.of(), room.givenBack);
        }
    }

    @Test
    void anEntryThereIsNoRoomForIsNotHandedOut() throws Exception {
        try (Spool spool = spoolHolding(100, "/first", "/second")) {
            CountingRoom room = new CountingRoom();
            room.refusing = true;
            List<Long> handedOut = new ArrayList<>();
            assertEquals(Optional.empty(), spool.next(SHORT, handedOut::add, room));
            assertEquals(List.of(), handedOut, "not handed out, not even for a moment");
            assertEquals(0, spool.outForDelivery(), "not out for delivery: it waits in the spool");
            assertEquals(1, room.awaited.size(), "the taker waited for room for it: " + room.awaited);
            assertTrue(room.awaited.get(0) >= 100, room.awaited.toString());
            room.refusing = false;
            assertEquals("/first", next(spool, room).orElseThrow().request().target());
            assertEquals("/second", next(spool, room).orElseThrow().request().target());
        }
    }

    @Test
    void noTakerPassesTheOldestEntryWhileAnotherWaitsForRoomForIt() throws Exception {
        try (Spool spool = spoolHolding(100, "/first", "/second")) {
            CountDownLatch waiting = new CountDownLatch(1);
            CountDownLatch roomCame = new CountDownLatch(1);
            ReadRoom scarce = new ReadRoom() {
                @Override
                public boolean tryTake(long bytes) {
                    return roomCame.getCount() == 0;
                }

                @Override
                public boolean awaitRoom(long bytes, long deadlineNanos) throws InterruptedException {
                    waiting.countDown();
                    return roomCame.await(30, TimeUnit.SECONDS);
                }

                @Override
                public void giveBack(long bytes) {
                }
            };
            CompletableFuture<Optional<SpoolEntry>> waiter = CompletableFuture.supplyAsync(() -> {
                try {
                    return spool.next(Duration.ofSeconds(30), seq -> { }, scarce);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertTrue(waiting.await(30, TimeUnit.SECONDS));
            assertEquals("/first", next(spool, ReadRoom.UNBOUNDED).orElseThrow().request().target(),
                    "the oldest entry was left waiting, not given back behind a newer one");
            roomCame.countDown();
            assertEquals("/second", waiter.get(30, TimeUnit.SECONDS).orElseThrow().request().target());
        }
    }

    @Test
    void aTakerStoppedWhileWaitingForRoomLeavesTheEntryInTheSpool() throws Exception {
        try (Spool spool = spoolHolding(100, "/first")) {
            ReadRoom stopped = new ReadRoom() {
                @Override
                public boolean tryTake(long bytes) {
                    return false;
                }

                @Override
                public boolean awaitRoom(long bytes, long deadlineNanos) throws InterruptedException {
                    throw new InterruptedException("stopping");
                }

                @Override
                public void giveBack(long bytes) {
                    throw new AssertionError("no room was taken");
                }
            };
            assertThrows(InterruptedException.class, () -> next(spool, stopped));
            assertEquals(0, spool.outForDelivery(), "not left out for delivery by a taker that is gone");
            assertEquals("/first", spool.next(SHORT).orElseThrow().request().target());
        }
    }

    @Test
    void roomTakenForADamagedEntryIsGivenBack() throws Exception {
        try (Spool spool = spoolHolding(300, "/damaged", "/whole")) {
            List<Path> segments = SegmentScan.segmentsIn(dir);
            Path segment = segments.get(segments.size() - 1);
            EntryLocation damaged = SegmentScan.of(segment).entries().get(0);
            flipByte(segment, damaged.offset() + damaged.size() - 3);

            CountingRoom room = new CountingRoom();
            assertEquals("/whole", next(spool, room).orElseThrow().request().target());
            assertEquals(1, spool.corrupted());
            assertEquals(2, room.taken.size(), room.taken.toString());
            assertEquals(List.of(room.taken.get(0)), room.givenBack,
                    "the damaged entry's room comes back; the whole one's is the caller's");
        }
    }

    private static void flipByte(Path file, long at) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            channel.read(one, at);
            channel.write(ByteBuffer.wrap(new byte[] {(byte) (one.get(0) ^ 0x40)}), at);
        }
    }
}
