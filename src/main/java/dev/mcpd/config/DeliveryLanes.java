package dev.mcpd.config;

/**
 * How the relay delivers: {@code mcpd config}'s {@code delivery} line.
 *
 * @param workers         delivery lanes ({@code --workers})
 * @param maxInFlight     the most requests in flight to one upstream at once ({@code --max-in-flight})
 * @param batchMaxEntries the most entries in one relay batch or merged OTLP request; 1 sends every entry alone
 *                        ({@code --batch-max-entries})
 * @param batchMaxBytes   the most body bytes in one relay batch ({@code --batch-max-bytes})
 */
public record DeliveryLanes(int workers, int maxInFlight, int batchMaxEntries, long batchMaxBytes) {

    /** More workers than this buys nothing over one network link and only hides a wrong value. */
    public static final int MAX_WORKERS = 1024;
    /** A window past this would hold more connections (HTTP/1.1) than a process should open to one upstream. */
    public static final int MAX_IN_FLIGHT = 65_536;
    /** The most entries the relay-batch framing carries. */
    public static final int MAX_BATCH_ENTRIES = 65_536;

    public DeliveryLanes {
        int lanes = workers;
        int window = maxInFlight;
        int entries = batchMaxEntries;
        long bytes = batchMaxBytes;
        OptionValues.check(Options.WORKERS, () -> checkWorkers(lanes));
        OptionValues.check(Options.MAX_IN_FLIGHT, () -> checkMaxInFlight(window));
        OptionValues.check(Options.BATCH_MAX_ENTRIES, () -> checkBatchMaxEntries(entries));
        OptionValues.check(Options.BATCH_MAX_BYTES, () -> OptionValues.atLeastOneByte(bytes));
    }

    static int checkWorkers(long workers) {
        if (workers < 1 || workers > MAX_WORKERS) {
            throw new IllegalArgumentException(workers + " workers is out of range: use 1 to " + MAX_WORKERS);
        }
        return (int) workers;
    }

    static int checkMaxInFlight(long maxInFlight) {
        if (maxInFlight < 1 || maxInFlight > MAX_IN_FLIGHT) {
            throw new IllegalArgumentException(maxInFlight + " is out of range: use 1 to " + MAX_IN_FLIGHT);
        }
        return (int) maxInFlight;
    }

    static int checkBatchMaxEntries(long entries) {
        if (entries < 1 || entries > MAX_BATCH_ENTRIES) {
            throw new IllegalArgumentException(entries + " is out of range: use 1 (no batches) to "
                    + MAX_BATCH_ENTRIES);
        }
        return (int) entries;
    }

    /** What {@code mcpd config} says of it. */
    String describe() {
        return workers + (workers == 1 ? " worker" : " workers") + "; up to " + maxInFlight
                + " in flight per upstream; " + (batchMaxEntries == 1 ? "no batches or merges"
                : "batches and OTLP merges of up to " + batchMaxEntries + " entries, "
                + ByteSize.format(batchMaxBytes));
    }
}
