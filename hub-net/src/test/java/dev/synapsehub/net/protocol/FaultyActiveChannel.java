package dev.synapsehub.net.protocol;

import io.netty.channel.embedded.EmbeddedChannel;

/** A test connection whose next {@code isActive()} throws once armed: the outbox asks it before a catch-up or a write. */
final class FaultyActiveChannel extends EmbeddedChannel {
    /** A plain field: the superclass constructor asks {@code isActive()} before any initialiser runs. */
    volatile boolean failNext;

    @Override
    public boolean isActive() {
        if (failNext) {
            failNext = false;
            throw new IllegalStateException("injected fault");
        }
        return super.isActive();
    }
}
