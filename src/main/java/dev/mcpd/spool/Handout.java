package dev.mcpd.spool;

/** An entry out for delivery: which segment, which index in it, and its stored size. */
record Handout(SegmentIndex segment, int index, long seq, int size) {

    Handout(SegmentIndex segment, int index) {
        this(segment, index, segment.seq(index), segment.size(index));
    }
}
