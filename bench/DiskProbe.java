import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * Ceiling C — what the spool's file system can make durable, one thread, 1 KiB records:
 *
 * <ul>
 *   <li>{@code file}: one file per record: write, force, rename, force the directory (shape A of SPOOL-DESIGN.md);
 *   <li>{@code append-N}: append N records to one log, then one {@code fdatasync} (shape B, group commit of N).
 * </ul>
 *
 * Usage: {@code java bench/DiskProbe.java DIR SECONDS} — prints one JSON line per pattern (records/s).
 */
public final class DiskProbe {

    private static final int RECORD_BYTES = 1024;

    public static void main(String[] args) throws IOException {
        Path dir = Files.createDirectories(Path.of(args[0]));
        double seconds = Double.parseDouble(args[1]);
        print("file", fileRenamePerRecord(dir.resolve("file"), seconds));
        for (int group : new int[] {1, 8, 64}) {
            print("append-" + group, appendWithOneSyncPer(dir.resolve("append-" + group + ".log"), group, seconds));
        }
    }

    private static void print(String pattern, double recordsPerSecond) {
        System.out.printf("{\"pattern\":\"%s\",\"records_per_s\":%.1f}%n", pattern, recordsPerSecond);
    }

    private static ByteBuffer record() {
        byte[] bytes = new byte[RECORD_BYTES];
        Arrays.fill(bytes, (byte) 'x');
        return ByteBuffer.wrap(bytes);
    }

    private static double fileRenamePerRecord(Path dir, double seconds) throws IOException {
        Files.createDirectories(dir);
        ByteBuffer record = record();
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long started = System.nanoTime();
        long count = 0;
        try (FileChannel directory = FileChannel.open(dir, StandardOpenOption.READ)) {
            while (System.nanoTime() < end) {
                Path temporary = dir.resolve(count + ".tmp");
                try (FileChannel file = FileChannel.open(temporary, StandardOpenOption.CREATE_NEW,
                        StandardOpenOption.WRITE)) {
                    file.write(record.rewind());
                    file.force(true);
                }
                Files.move(temporary, dir.resolve(count + ".entry"), StandardCopyOption.ATOMIC_MOVE);
                directory.force(true);
                count++;
            }
        }
        double rate = count / ((System.nanoTime() - started) / 1e9);
        try (var files = Files.list(dir)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                Files.delete(file);
            }
        }
        Files.delete(dir);
        return rate;
    }

    private static double appendWithOneSyncPer(Path log, int group, double seconds) throws IOException {
        ByteBuffer record = record();
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long started = System.nanoTime();
        long count = 0;
        try (FileChannel file = FileChannel.open(log, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            while (System.nanoTime() < end) {
                for (int i = 0; i < group; i++) {
                    file.write(record.rewind());
                }
                file.force(false); // fdatasync
                count += group;
            }
        }
        double rate = count / ((System.nanoTime() - started) / 1e9);
        Files.delete(log);
        return rate;
    }
}
