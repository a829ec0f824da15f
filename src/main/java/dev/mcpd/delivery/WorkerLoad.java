package dev.mcpd.delivery;

/** How many delivery workers run and how many are busy with an entry right now: what the relay's status shows. */
public interface WorkerLoad {

    int total();

    int busy();
}
