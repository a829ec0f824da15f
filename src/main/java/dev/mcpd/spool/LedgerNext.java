package dev.mcpd.spool;

/**
 * What the ledger found when asked for the oldest waiting entry: the entry (handed out, room taken for it), a segment
 * that must be read first, or the stored size of the oldest waiting entry there was no room for (left waiting).
 */
record LedgerNext(Handout handout, SegmentIndex toLoad, long noRoomFor) {

    static LedgerNext entry(Handout handout) {
        return new LedgerNext(handout, null, 0);
    }

    static LedgerNext load(SegmentIndex segment) {
        return new LedgerNext(null, segment, 0);
    }

    static LedgerNext noRoom(long bytes) {
        return new LedgerNext(null, null, bytes);
    }
}
