package dev.mcpd.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.TreeMap;

/**
 * Turns the suites' own output into {@code RELIABILITY.md}: the fault scenarios (the Failsafe ITs in
 * {@code dev.mcpd.it.fault}) append their row to {@code target/reliability/rows.md}, the hostile-input tests (Surefire
 * and Failsafe) theirs to {@code target/reliability/hostile.md}, and after each row the report is written again from
 * those files — the newest row of each id, in id order — so it always reflects the last run of every case, whatever
 * order the classes run in.
 *
 * <p>The report goes to {@code target/reliability/RELIABILITY.md}, so that {@code mvn verify} changes no tracked file;
 * with {@code -Dmcpd.reliability.publish=true} it is written over the repository's {@code RELIABILITY.md}.
 */
public final class ReliabilityReport {

    /** One fault scenario's row. */
    public record Row(String id, String title, String done, int sent, int acked, long archived, long duplicatesStored,
               long lost, long duplicatesRecognised, String notes, String result) {

        String markdown() {
            return "| " + id + " | **" + title + "**. " + cell(done) + " | " + sent + " | " + acked + " | " + archived
                    + " | " + duplicatesStored + " | " + lost + " | " + duplicatesRecognised + " | " + cell(notes)
                    + " | " + cell(result) + " |";
        }

    }

    private static String cell(String text) {
        return text.replace("|", "\\|").replace("\n", " ");
    }

    /**
     * One power-cut case: what ran and how it was cut ({@code cuts} times), the requests acknowledged before the cuts,
     * those lost, those sent again after a cut and how long before it the oldest of them had been delivered.
     */
    public record PowerCutRow(String id, String title, String done, int cuts, long acknowledged, long lost,
                              long resent, String resentWindow, String result) {
        String markdown() {
            return "| " + id + " | **" + title + "**. " + cell(done) + " | " + cuts + " | " + acknowledged + " | "
                    + lost + " | " + resent + " | " + cell(resentWindow) + " | " + cell(result) + " |";
        }
    }

    /** One hostile input: what was sent, what the contract says must happen, what happened. */
    public record HostileRow(String id, String input, String expected, String observed, boolean pass) {
        String markdown() {
            return "| " + id + " | " + cell(input) + " | " + cell(expected) + " | " + cell(observed) + " | "
                    + (pass ? "pass" : "**FAIL**") + " |";
        }
    }

    private ReliabilityReport() {
    }

    static Path basedir() {
        return Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
    }

    static Path reliabilityDir() {
        return basedir().resolve("target").resolve("reliability");
    }

    static Path rows() {
        return reliabilityDir().resolve("rows.md");
    }

    static Path hostileRows() {
        return reliabilityDir().resolve("hostile.md");
    }

    static Path powerCutRows() {
        return reliabilityDir().resolve("powercut.md");
    }

    public static synchronized void record(Row row) {
        append(rows(), row.markdown());
    }

    /** Records a power-cut case; the caller asserts after. */
    public static synchronized void record(PowerCutRow row) {
        append(powerCutRows(), row.markdown());
    }

    /** Records a hostile-input case; the caller asserts {@code pass} after. */
    public static synchronized void record(HostileRow row) {
        append(hostileRows(), row.markdown());
    }

    /**
     * Records a hostile-input case in the report, then asserts it: {@code observed} is what the test saw, in words,
     * and {@code pass} whether that is what {@code expected} says.
     */
    public static void assertHostile(String id, String input, String expected, String observed, boolean pass) {
        record(new HostileRow(id, input, expected, observed, pass));
        if (!pass) {
            throw new AssertionError(input + ": expected " + expected + ", observed " + observed);
        }
    }

    private static void append(Path file, String line) {
        System.out.println("RELIABILITY " + line);
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
            write();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the reliability report", e);
        }
    }

    public static void main(String[] args) throws IOException {
        write();
    }

    private static Map<String, String> newestById(Path file) throws IOException {
        Map<String, String> newest = new TreeMap<>();
        if (Files.exists(file)) {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                if (line.startsWith("| ")) {
                    newest.put(line.substring(2, line.indexOf(" |", 2)), line);
                }
            }
        }
        return newest;
    }

    /** Writes the report from {@code target/reliability/rows.md} and {@code hostile.md} (see the class comment). */
    static void write() throws IOException {
        Map<String, String> newest = newestById(rows());
        Map<String, String> hostile = newestById(hostileRows());
        Map<String, String> powerCuts = newestById(powerCutRows());
        StringBuilder md = new StringBuilder();
        md.append("# Reliability\n\n")
                .append("What the relay promises (README: the 2xx promise, delivery, keys, the bound) checked under faults: the packaged jar (`target/mcpd.jar`)")
                .append(" runs as separate processes — a relay and real collectors (`mcpd serve`) — while the fault ")
                .append("suite (`src/test/java/dev/mcpd/it/fault/`, Failsafe ITs in `mvn -B verify`) posts distinct ")
                .append("one-event native batches from 32 concurrent senders and breaks things. Every sender retries ")
                .append("like an SDK: after a `503` it waits the `Retry-After` the relay named (at most 10 s), after a ")
                .append("dropped connection 100 ms, until it gets a 2xx (or gives up after 150 s, which would show as ")
                .append("sent but not acknowledged).\n\n")
                .append("**This file is generated** by the suite from its own output (`target/reliability/rows.md`, one ")
                .append("row appended per scenario run; `ReliabilityReport` keeps each scenario's newest row). Do not ")
                .append("edit the table by hand: run\n\n")
                .append("```sh\nmvn -B verify -Dmcpd.reliability.publish=true\n```\n\n")
                .append("(without the property the report goes to `target/reliability/RELIABILITY.md`, and `mvn verify` ")
                .append("changes no tracked file). ")
                .append("Scenario **a** sends 10 000 requests, the size the issue asks for, in CI too (about a minute; ")
                .append("`-Dfault.requests=N` chooses another). ")
                .append("Scenarios b and c need two collectors on one archive and run on the tests' ")
                .append("PostgreSQL (a real PostgreSQL 16 that Maven brings, or the server `MCPD_TEST_POSTGRES_URL` ")
                .append("names). ")
                .append("Scenarios **k1** and **k2** put a Kafka topic between the relay and the collectors: a real ")
                .append("broker (KRaft, in the test's JVM) that the relay delivers to and the collectors consume as ")
                .append("one group (`--source`); k2's two collectors share PostgreSQL.\n\n")
                .append("Columns: **sent** — distinct requests the senders posted; **acked** — of them, answered 2xx by ")
                .append("the relay (retries included); **archived** — events in the collectors' `GET /v1/stats` (one ")
                .append("event per request); **dup. stored** — rows minus distinct bodies in the archive, read with ")
                .append("JDBC (`SELECT count(*), count(DISTINCT body) FROM batches`); **lost** — acknowledged requests ")
                .append("whose event is not in the archive; **re-sends recognised** — the collectors' `duplicates`: ")
                .append("copies that arrived again (a relay re-send, or a sender's retry after a lost answer) and were ")
                .append("stored zero times. Every scenario also checks that the relay's spool drains with no dead ")
                .append("letter, and that the relay answered nothing but 2xx or 503 (any POST is accepted or ")
                .append("refused retryably; a 404 or 405 makes an OpenTelemetry exporter drop the batch). A 503 without ")
                .append("`Retry-After` is retried after 1 s and noted.\n\n")
                .append("| # | what was done | sent | acked | archived | dup. stored | lost | re-sends recognised | notes ")
                .append("| result |\n")
                .append("|---|---|---|---|---|---|---|---|---|---|\n");
        newest.values().forEach(line -> md.append(line).append('\n'));
        md.append("| g | **Disk full (ENOSPC)** — not in this suite: `src/test/java/dev/mcpd/relay/DiskFullTest.java` ")
                .append("(and `src/test/java/dev/mcpd/spool/DiskFullTest.java` for the spool alone) put the spool on a ")
                .append("512 KiB tmpfs: a request that does not fit is answered `503` + `Retry-After: 5`, nothing of ")
                .append("it is written, the relay keeps running and accepts again once there is room. | – | – | – | ")
                .append("– | – | – | runs in Surefire (`mvn -B verify`); needs root for the tmpfs | see that test |\n\n");
        md.append("## Power cuts\n\n")
                .append("`kill -9` leaves the kernel's page cache whole: only a power cut shows a missing `fsync` of a ")
                .append("file or of a directory. These cases run the spool on a file layer that keeps, beside the real ")
                .append("files, what a power cut would leave — each directory's names as of its last fsync, each ")
                .append("file's bytes as of its last fsync — and forgets the rest at the cut: everything not synced, ")
                .append("or a random part of it (directory changes kept or lost each whole, in any order; a torn ")
                .append("prefix of unsynced writes, or zeros). In-process the layer is a Java file system under the ")
                .append("spool (`SpoolPowerCutTest`: each commit point cut at every sync it makes, and a spool at ")
                .append("work cut at random syncs); under the packaged relay it is a FUSE file system served by the ")
                .append("test (`PowerCutIT`). **acknowledged** — entries (requests answered 2xx) before the cuts; ")
                .append("**lost** — of them, neither delivered, in the spool, nor in `dead/` (a replayed dead ")
                .append("letter: nor in `replay/`) after the restart; **re-sent** — deliveries the upstream received ")
                .append("again after a cut, and how long before the cut the oldest of them had first been delivered ")
                .append("(the record of deliveries is forced every 200 ms). [docs/spool.md]")
                .append("(docs/spool.md#the-order-of-syncs) gives the order of syncs each operation follows.\n\n")
                .append("| # | what was cut | cuts | acknowledged | lost | re-sent | re-sent, delivered before the cut ")
                .append("| result |\n")
                .append("|---|---|---|---|---|---|---|---|\n");
        powerCuts.values().forEach(line -> md.append(line).append('\n'));
        md.append('\n');
        md.append("## Hostile input\n\n")
                .append("What an attacker or a careless operator can send, each case a test of the real ")
                .append("relay or collector — in-process or the packaged jar — through raw sockets where no client ")
                .append("would send such bytes. **expected** is the contract, **observed** what the run saw.\n\n")
                .append("| # | input | expected | observed | result |\n")
                .append("|---|---|---|---|---|\n");
        hostile.values().forEach(line -> md.append(line).append('\n'));
        md.append('\n');
        md.append("Last generated ").append(Instant.now().truncatedTo(ChronoUnit.SECONDS))
                .append(" (rows carry their own run's counts).\n\n");
        md.append("## The durability guarantee\n\n")
                .append("A relay answers 2xx only after the request's record (method, target, content type and ")
                .append("encoding, idempotency key, body) is written to the current spool segment and the segment is ")
                .append("`fdatasync`ed — concurrent requests share one `fdatasync` (group commit), none is answered ")
                .append("before its own bytes are durable; a new segment or credential file is followed by an fsync of ")
                .append("the directory, every directory the relay makes (the spool on a first start, `dead/`, ")
                .append("`replay/`, `corrupt/`) is synced into its parent, and a new credential record is forced ")
                .append("before the entry that refers to it. So ")
                .append("after a 2xx, neither `kill -9`, a crash nor a power cut loses the request: it is delivered ")
                .append("after the restart (the power-cut table above is the evidence). What a power cut can lose is ")
                .append("only what was never acknowledged — the batch ")
                .append("being written, whose torn tail fails its length or CRC-32C check and is never read as an ")
                .append("entry; its senders got no 2xx and send again. Delivery is at least once: an entry leaves the ")
                .append("spool only after an upstream's 2xx (or once it is written, forced and renamed into `dead/`), ")
                .append("and the acknowledgement log of delivered entries is group-committed every 200 ms (its name ")
                .append("synced with its first commit), so a power cut can make the relay send the last interval's ")
                .append("deliveries again — with the same `Idempotency-Key`, which the collector ")
                .append("recognises (SQLite: WAL with `synchronous=FULL`, the batch and its key committed and fsynced ")
                .append("in one transaction before the answer; PostgreSQL: the unique index in the same transaction), ")
                .append("so the copy is counted as a duplicate and stored zero times. Not covered: a disk that lies ")
                .append("about `fdatasync` (a volatile write cache without power-loss protection), and later corruption ")
                .append("of whole acknowledged records by the medium (detected by CRC-32C, not repaired). Details: ")
                .append("[docs/spool.md](docs/spool.md) and [docs/delivery.md](docs/delivery.md).\n");
        Path out = Boolean.getBoolean("mcpd.reliability.publish") ? basedir().resolve("RELIABILITY.md")
                : reliabilityDir().resolve("RELIABILITY.md");
        Files.createDirectories(out.getParent());
        Files.writeString(out, md.toString(), StandardCharsets.UTF_8);
    }
}
