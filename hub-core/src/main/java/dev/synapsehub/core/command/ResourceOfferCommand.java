package dev.synapsehub.core.command;

/**
 * {@code resource} (aliases {@code resource_offer}, {@code offer_resource}): offer or refresh a
 * resource (wire contract §5.10).
 *
 * @param capacity tolerant-coerced by the edge; null is 1, values below 1 are raised to 1
 * @param meta the {@code meta} object as compact JSON; null is {@code {}}
 */
public record ResourceOfferCommand(String agent, String kind, String name, Integer capacity, String meta)
        implements Command {
}
