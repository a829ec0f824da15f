package dev.mcpd.spool;

/**
 * Room in memory for the entries a caller reads out of the spool, taken for each entry before it is read — for its
 * stored size, known from the spool's index, which is never less than its body — so that a caller bounding what it
 * holds need not set aside room for the largest body an entry could have while it waits for one.
 */
public interface ReadRoom {

    /** Room for nothing: every entry is read. */
    ReadRoom UNBOUNDED = new ReadRoom() {
        @Override
        public boolean take(long bytes) {
            return true;
        }

        @Override
        public void giveBack(long bytes) {
        }
    };

    /**
     * Takes room for an entry stored in {@code bytes}, waiting for it if need be; false when none came in time: the
     * entry is not read and goes out again, before newer ones.
     */
    boolean take(long bytes) throws InterruptedException;

    /** Gives back the room taken for an entry that was not handed over after all (damaged, or its file gone). */
    void giveBack(long bytes);
}
