package dev.synapsehub.core.messaging;

import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.command.AckCommand;
import dev.synapsehub.core.command.MailboxCursorCommand;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Identities and keys from the wire trimmed as the reference trims them, with Python's
 * {@code str.strip()}: U+00A0, U+2007, U+202F and U+0085 are whitespace (§4.6, §5.1, §5.3, §8.3).
 */
class WireIdentityTrimTest {

    @Test
    void mailboxIdentitiesAreTrimmedOfPythonWhitespace() {
        assertThat(new AckCommand("p/a-rx", "\u00A0p/a\u2007", List.of(), 1, null).effectiveIdentity())
                .isEqualTo("p/a");
        assertThat(new AckCommand("p/a-rx", "\u202F\u0085", List.of(), 1, null).effectiveIdentity())
                .as("blank to Python: the connection name").isEqualTo("p/a-rx");
        assertThat(new MailboxCursorCommand("p/a-rx", "\u0085p/a\u202F", 3).effectiveIdentity()).isEqualTo("p/a");
        assertThat(new MailboxCursorCommand("p/a-rx", "\u00A0", 3).effectiveIdentity()).isEqualTo("p/a-rx");
    }

    @Test
    void clientMsgIdsAreTrimmedOfPythonWhitespace() {
        assertThat(ClientFields.clientMsgId("\u00A0m-1\u2007")).isEqualTo("m-1");
        assertThat(ClientFields.clientMsgId("\u202F")).as("blank after trimming: removed").isNull();
    }

    @Test
    void idempotencyKeysTrimTheVerbOfPythonWhitespace() {
        assertThat(Idempotency.key("p/a", "\u00A0Claim\u202F", "k1")).isEqualTo(Idempotency.key("p/a", "claim", "k1"));
    }
}
