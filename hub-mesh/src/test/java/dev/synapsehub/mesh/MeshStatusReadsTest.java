package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link MeshStatusReads#combine}: one settings round answers mesh status' queue depths too. */
class MeshStatusReadsTest {
    private static final List<MeshPeer> PEERS = List.of(new MeshPeer("n1", "127.0.0.1", 1),
            new MeshPeer("n2", "127.0.0.1", 2), new MeshPeer("n3", "127.0.0.1", 3));
    private final List<List<String>> queueRounds = new ArrayList<>();

    @Test
    void votersWhoseSettingsAnswerCarriesTheirQueueDepthAreAskedOnce() {
        Map<String, JsonNode> answers = new HashMap<>();
        answers.put("n1", settingsAnswer(0));
        answers.put("n2", settingsAnswer(4));
        answers.put("n3", settingsAnswer(0));

        MeshStatusReads.Answers read = MeshStatusReads.combine(PEERS, answers, this::askQueues);

        assertThat(queueRounds).as("no second round").isEmpty();
        assertThat(read.queued()).containsExactly(Map.entry("n1", 0), Map.entry("n2", 4), Map.entry("n3", 0));
        assertThat(read.settings().get("n2").fingerprint())
                .isEqualTo(MeshGovernanceSettings.of(Map.of("a", "1")).fingerprint());
    }

    @Test
    void onlyAVoterThatAnsweredWithoutAQueueDepthIsAskedForItAgain() {
        List<MeshPeer> four = new ArrayList<>(PEERS);
        four.add(new MeshPeer("n4", "127.0.0.1", 4));
        Map<String, JsonNode> answers = new HashMap<>();
        answers.put("n1", settingsAnswer(2));
        answers.put("n2", settingsAnswer(2).without("queue_depth")); // a version whose settings answer lacks it
        answers.put("n3", null); // did not answer within the timeout
        // a version without the settings query answers it as the queue probe answers an unknown query
        answers.put("n4", MeshQueueProbe.answer(MeshSettingsCheck.query(), 5));

        MeshStatusReads.Answers read = MeshStatusReads.combine(four, answers, this::askQueues);

        assertThat(queueRounds).as("one more round, for those two only").containsExactly(List.of("n2", "n4"));
        assertThat(read.queued().keySet()).containsExactly("n1", "n2", "n3", "n4");
        assertThat(read.queued()).containsEntry("n1", 2).containsEntry("n2", 7).containsEntry("n3", null)
                .containsEntry("n4", 7);
        assertThat(read.settings().get("n1")).isNotNull();
        assertThat(read.settings().get("n2")).isNotNull();
        assertThat(read.settings()).containsEntry("n3", null).containsEntry("n4", null);
    }

    private Map<String, Integer> askQueues(List<MeshPeer> peers) {
        queueRounds.add(peers.stream().map(MeshPeer::id).toList());
        Map<String, Integer> out = new HashMap<>();
        peers.forEach(p -> out.put(p.id(), 7));
        return out;
    }

    /** A current node's answer to the settings query, carrying its queue depth as MeshNode adds it. */
    private static ObjectNode settingsAnswer(int depth) {
        MeshGovernanceSettings s = MeshGovernanceSettings.of(Map.of("a", "1"));
        ObjectNode o = MeshJson.MAPPER.createObjectNode();
        o.put("fingerprint", s.fingerprint());
        s.settings().forEach(o.putObject("settings")::put);
        o.put("state", "agree");
        return MeshQueueProbe.withDepth(o, depth);
    }
}
