package dev.synapsehub.core.actor;

/**
 * What the edge attaches to a mutation about the request it came from (its verb, sender and
 * frame), opaque to the core. A single hub ignores it; a replicated hub forwards it with the
 * mutation so the deciding node can render the same frames the edge would have.
 */
public interface MutationContext {
}
