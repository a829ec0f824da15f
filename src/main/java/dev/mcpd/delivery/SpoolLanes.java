package dev.mcpd.delivery;

import dev.mcpd.upstream.UpstreamBoard;

/**
 * What the spool consumer's delivery lanes share.
 *
 * @param workers counts the busy ones, and how many lanes run: the endpoint's {@code workers} option, by default
 *                {@code --workers}
 * @param budget  the body bytes entries out for delivery may hold at once
 * @param board   the upstreams: whether the first ready one takes batches
 * @param packer  how entries are packed into batches
 * @param records what delivery remembers of each entry out, forgotten when it leaves the spool
 * @param streams what waits for its ordered stream's turn
 * @param expiry  {@code --spool-max-age}: an entry that waited for an upstream past it goes to dead/
 */
public record SpoolLanes(DeliveryWorkers workers, DeliveryBudget budget, UpstreamBoard board,
                         ShipmentPacker packer, EntryRecords records, OrderedStreams streams, SpoolExpiry expiry) {
}
