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

/** {@link DecisionPublisher#typed}: each reply reaches the one handler of its kind, and only it. */
class DecisionPublisherTest {
    private static final Request REQUEST = new Request(null, "alice", "channel_join", "all",
            JsonNodeFactory.instance.objectNode());

    private final List<String> seen = new ArrayList<>();
    private final DecisionPublisher publisher = DecisionPublisher.typed(ChannelReply.class,
            (d, reply) -> seen.add("success " + reply.channel() + " at " + d.at()),
            (d, refusal) -> seen.add("refusal " + refusal.message() + " at " + d.at()));

    @Test
    void theVerbsOwnReplyGoesToTheSuccessHandlerTyped() {
        publisher.publish(decision(new ChannelReply("c1", true, "joined", List.of("alice")), 5));
        assertThat(seen).containsExactly("success c1 at 5.0");
    }

    @Test
    void aRefusalGoesToTheRefusalHandler() {
        publisher.publish(decision(new Reply.Denied("", Refusal.NOT_A_MEMBER, "not a member"), 6));
        assertThat(seen).containsExactly("refusal not a member at 6.0");
    }

    @Test
    void anyOtherReplyIsAFaultAndReachesNoHandler() {
        CommittedDecision other = decision(new Reply.Granted(null, null, "granted"), 7);
        assertThatThrownBy(() -> publisher.publish(other)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("channel_join").hasMessageContaining("Granted");
        assertThat(seen).isEmpty();
    }

    private static CommittedDecision decision(Reply reply, double at) {
        return new CommittedDecision(REQUEST, reply, null, List.of(), at);
    }
}
