package dev.synapsehub.journal;

import dev.synapsehub.core.channel.Channel;
import dev.synapsehub.core.command.ChannelCommand;
import dev.synapsehub.core.event.ChannelEvent;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Channel events round-trip through the journal codec, strictly; snapshots carry channels. */
class ChannelCodecTest {
    private final EventCodec codec = new EventCodec();

    @Test
    void everyChannelEventRoundTrips() throws Exception {
        for (ChannelEvent e : List.of(
                new ChannelEvent(1.5, ChannelCommand.Op.CREATE, "ops", "ann", null, "Ops \u00e9"),
                new ChannelEvent(2.0, ChannelCommand.Op.CREATE, "bare", "ann", null, null),
                new ChannelEvent(2.5, ChannelCommand.Op.INVITE, "ops", "ann", "bob", null),
                new ChannelEvent(3.0, ChannelCommand.Op.JOIN, "ops", "bob", null, null),
                new ChannelEvent(3.5, ChannelCommand.Op.LEAVE, "ops", "bob", null, null))) {
            assertThat(codec.decode("channel", e.ts(), codec.encode(e))).contains(e);
            assertThat(codec.decode("channel", e.ts(), codec.encode(e).getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                    .contains(e);
        }
    }

    @Test
    void payloadsTheHubCouldNotHaveWrittenAreCorrupt() {
        for (String bad : List.of(
                "{\"op\":\"destroy\",\"channel\":\"ops\",\"agent\":\"ann\"}",
                "{\"op\":\"join\",\"channel\":\" ops\",\"agent\":\"ann\"}",
                "{\"op\":\"join\",\"channel\":\"\",\"agent\":\"ann\"}",
                "{\"op\":\"join\",\"channel\":\"" + "x".repeat(201) + "\",\"agent\":\"ann\"}",
                "{\"op\":\"join\",\"channel\":\"ops\",\"agent\":\" \"}",
                "{\"op\":\"invite\",\"channel\":\"ops\",\"agent\":\"ann\"}",
                "{\"op\":\"join\",\"channel\":\"ops\",\"agent\":\"ann\",\"invitee\":\"bob\"}",
                "{\"op\":\"leave\",\"channel\":\"ops\",\"agent\":\"ann\",\"label\":\"x\"}",
                "{\"op\":1,\"channel\":\"ops\",\"agent\":\"ann\"}",
                "[]")) {
            assertThatThrownBy(() -> codec.decode("channel", 1.0, bad)).as(bad)
                    .isInstanceOf(EventCodec.CorruptPayloadException.class);
        }
    }

    @Test
    void aSnapshotCarriesChannelsInvitesAndHistory() throws Exception {
        CoordinationState state = new CoordinationState();
        state.apply(new ChannelEvent(1.0, ChannelCommand.Op.CREATE, "ops", "ann", null, "label"));
        state.apply(new ChannelEvent(1.1, ChannelCommand.Op.INVITE, "ops", "ann", "bob", null));
        state.apply(new ChannelEvent(1.2, ChannelCommand.Op.INVITE, "ops", "ann", "carol", null));
        state.apply(new ChannelEvent(1.3, ChannelCommand.Op.JOIN, "ops", "bob", null, null));
        state.apply(new ChatEvent(1.4, 1, "ann", null, "ops", false, List.of(), "{\"payload\":\"hi\"}"));
        StateImage image = state.image();
        assertThat(image.channels()).hasSize(1);
        StateSnapshot back = SnapshotCodec.decode(SnapshotCodec.encode(new StateSnapshot(2.0, 0, 0, image)));
        Channel ch = back.image().channels().get(0);
        assertThat(ch.id()).isEqualTo("ops");
        assertThat(ch.owner()).isEqualTo("ann");
        assertThat(ch.label()).isEqualTo("label");
        assertThat(ch.members()).containsExactly("ann", "bob");
        assertThat(ch.invites()).containsExactly("carol");
        assertThat(ch.history()).containsExactly("{\"payload\":\"hi\"}");
        assertThat(back.image()).isEqualTo(image);
        CoordinationState restored = new CoordinationState();
        restored.restore(back.image());
        assertThat(restored.channels().isMember("ops", "bob")).isTrue();
        assertThat(restored.channels().channelsOf("carol")).isEmpty();
    }
}
