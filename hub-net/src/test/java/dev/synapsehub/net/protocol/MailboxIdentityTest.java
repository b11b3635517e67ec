package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** §3.6 {@code mailbox_for}: trimmed with Python's str.strip (U+00A0, U+2007, U+202F, U+0085 too). */
class MailboxIdentityTest {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    @Test
    void mailboxForIsTrimmedOfPythonWhitespace() {
        assertThat(MailboxVerbs.mailboxIdentity("p/a-rx", JSON.textNode("\u00A0p/a\u2007"))).isEqualTo("p/a");
        assertThat(MailboxVerbs.mailboxIdentity("p/a-pane-rx", JSON.textNode("\u202Fp/a\u0085"))).isEqualTo("p/a");
        assertThat(MailboxVerbs.mailboxIdentity("p/a-rx", JSON.textNode("\u00A0"))).isEqualTo("p/a-rx");
    }
}
