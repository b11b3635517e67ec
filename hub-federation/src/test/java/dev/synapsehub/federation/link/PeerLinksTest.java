package dev.synapsehub.federation.link;

import dev.synapsehub.client.tls.CertificatePin;
import dev.synapsehub.client.tls.ClientTls;
import org.junit.jupiter.api.Test;

import java.net.URI;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Routes to one peer URI share one link, so they must agree on how it is made. */
class PeerLinksTest {
    private static final URI B = URI.create("wss://127.0.0.1:9002");
    private static final ClientTls PINNED = ClientTls.pinned(CertificatePin.parse("sha256:" + "ab".repeat(32)));

    @Test
    void routesToOneUriWithTheSameSettingsShareItAndOtherUrisAreIndependent() {
        try (PeerLinks links = new PeerLinks("hub-a")) {
            links.expect("--multihub-watch hub-b", B, PINNED, "t");
            assertThatCode(() -> links.expect("--claim-peer hub-b", B, PINNED, "t")).doesNotThrowAnyException();
            assertThatCode(() -> links.expect("--claim-peer hub-c", URI.create("wss://127.0.0.1:9003"), ClientTls.NONE,
                    null)).doesNotThrowAnyException();
        }
    }

    @Test
    void aSecondRouteToTheSameUriWithAnotherPinOrTokenIsRefusedNamingBoth() {
        try (PeerLinks links = new PeerLinks("hub-a")) {
            links.expect("--claim-peer hub-b", B, ClientTls.NONE, null);
            assertThatThrownBy(() -> links.expect("--relay-peer hub-b", B, PINNED, null))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("--relay-peer hub-b and --claim-peer hub-b both reach " + B);
            assertThatThrownBy(() -> links.expect("--multihub-watch hub-b", B, ClientTls.NONE, "other-token"))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }
}
