package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.synapsehub.core.reply.ChannelReply;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link VerbSupport.GrantRenderer#typed}: the verb's renderer sees only its own reply type, never a cast. */
class GrantRendererTest {
    private final List<String> rendered = new ArrayList<>();
    private final VerbSupport.GrantRenderer renderer = VerbSupport.GrantRenderer.typed(ChannelReply.class,
            (reply, at) -> {
                rendered.add(reply.channel() + " at " + at);
                return JsonNodeFactory.instance.objectNode().put("channel", reply.channel());
            });

    @Test
    void theVerbsOwnReplyIsRenderedTyped() {
        assertThat(renderer.render(new ChannelReply("c1", true, "joined", List.of("alice")), 5).path("channel")
                .asText()).isEqualTo("c1");
        assertThat(rendered).containsExactly("c1 at 5.0");
    }

    @Test
    void anyOtherReplyIsAFaultAndIsNotRendered() {
        assertThatThrownBy(() -> renderer.render(new Reply.Denied("", Refusal.NOT_A_MEMBER, "no"), 6))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("ChannelReply")
                .hasMessageContaining("Denied");
        assertThatThrownBy(() -> renderer.render(new Reply.Granted(null, null, "granted"), 7))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("Granted");
        assertThat(rendered).isEmpty();
    }
}
