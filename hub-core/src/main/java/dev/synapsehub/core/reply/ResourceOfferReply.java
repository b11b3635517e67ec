package dev.synapsehub.core.reply;

import dev.synapsehub.core.resource.ResourceOffer;

/**
 * An offer was made or refreshed: render {@code resource_offered} ({@code agent}, {@code kind},
 * {@code name}, {@code key}).
 *
 * @param refreshed true when an offer under the same key was live
 */
public record ResourceOfferReply(ResourceOffer offer, boolean refreshed) implements Reply {
}
