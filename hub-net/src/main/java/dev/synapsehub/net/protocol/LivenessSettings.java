package dev.synapsehub.net.protocol;

import dev.synapsehub.net.HubConfig;

/**
 * The operator's consume-liveness settings (contract §8.6), read once from the configuration.
 *
 * @param tracked {@code --warn-stale-recipients}; false is socket-presence semantics
 * @param recipientWindow {@code --recipient-liveness-window}, seconds
 * @param waiterWindow {@code --waiter-liveness-window}, seconds
 */
record LivenessSettings(boolean tracked, double recipientWindow, double waiterWindow) {
    /** The settings {@code config} carries. */
    static LivenessSettings of(HubConfig config) {
        return new LivenessSettings(config.warnStaleRecipients(), config.recipientLivenessWindowSeconds(),
                config.waiterLivenessWindowSeconds());
    }
}
