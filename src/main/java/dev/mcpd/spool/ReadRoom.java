package dev.mcpd.spool;

/**
 * Room in memory for the entries a caller reads out of the spool, taken for each entry as it is handed out — for its
 * stored size, known from the spool's index, which is never less than its body — so that a caller bounding what it
 * holds need not set aside room for the largest body an entry could have while it waits for one.
 *
 * <p>Room is taken under the spool's lock, in the same step that hands the entry out: an entry there is no room for
 * stays the oldest waiting, and the next entry handed out — to this caller or any other — is still that one. (Taking
 * room after the hand-out, and giving the entry back when none came, let a newer entry of an ordered stream go first.)
 */
public interface ReadRoom {

    /** Room for nothing: every entry is read. */
    ReadRoom UNBOUNDED = new ReadRoom() {
        @Override
        public boolean tryTake(long bytes) {
            return true;
        }

        @Override
        public boolean awaitRoom(long bytes, long deadlineNanos) {
            return true;
        }

        @Override
        public void giveBack(long bytes) {
        }
    };

    /**
     * Takes room for an entry stored in {@code bytes} if there is room now; false (nothing taken) if not. It is asked
     * under the spool's lock: it must neither wait nor call the spool.
     */
    boolean tryTake(long bytes);

    /**
     * Waits, outside the spool's lock, until room for {@code bytes} may have come; false when {@code deadlineNanos}
     * (on {@link System#nanoTime()}'s clock) passed first. It takes nothing: the spool asks {@link #tryTake} again.
     */
    boolean awaitRoom(long bytes, long deadlineNanos) throws InterruptedException;

    /** Gives back the room taken for an entry that was not handed over after all (damaged, or its file gone). */
    void giveBack(long bytes);
}
