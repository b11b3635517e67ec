package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

/**
 * What {@code synapse-hub mesh status} reads from each voter besides its Raft view: its governance
 * settings and its queue depth. A node answers both in its one answer to the settings query, so
 * each voter is asked once; only a voter that answered without a queue depth (a node of an older
 * version) is asked the queue query on its own.
 */
public final class MeshStatusReads {
    private MeshStatusReads() {
    }

    /**
     * Each voter's answers, by id, in the order given.
     *
     * @param settings a voter's settings, or null when it did not answer them within the timeout
     * @param queued a voter's queue depth, or null when it did not answer it within the timeout
     */
    public record Answers(Map<String, MeshSettingsProbe.NodeSettings> settings, Map<String, Integer> queued) {
        public Answers {
            settings = Collections.unmodifiableMap(new LinkedHashMap<>(settings));
            queued = Collections.unmodifiableMap(new LinkedHashMap<>(queued));
        }
    }

    /** Asks each of {@code peers} in {@code group} (from {@link MeshGroup#discover}), each within {@code timeout}. */
    public static Answers ask(UUID group, List<MeshPeer> peers, Duration timeout, MeshTls tls) {
        Map<String, JsonNode> answers = MeshGroup.askEachVoter(group, peers, timeout, tls,
                MeshJson.bytes(MeshSettingsCheck.query()), answer -> answer);
        return combine(peers, answers, older -> MeshQueueProbe.queueDepths(group, older, timeout, tls));
    }

    /**
     * The answers of one settings round; {@code askQueues} is asked only for the voters that
     * answered without a queue depth (a voter that did not answer at all is not asked again).
     */
    static Answers combine(List<MeshPeer> peers, Map<String, JsonNode> answers,
                           Function<List<MeshPeer>, Map<String, Integer>> askQueues) {
        Map<String, MeshSettingsProbe.NodeSettings> settings = new LinkedHashMap<>();
        Map<String, Integer> queued = new LinkedHashMap<>();
        for (MeshPeer p : peers) {
            JsonNode answer = answers.get(p.id());
            settings.put(p.id(), MeshSettingsProbe.read(answer));
            queued.put(p.id(), MeshQueueProbe.depth(answer));
        }
        List<MeshPeer> older = peers.stream()
                .filter(p -> answers.get(p.id()) != null && queued.get(p.id()) == null).toList();
        if (!older.isEmpty()) {
            askQueues.apply(older).forEach(queued::put);
        }
        return new Answers(settings, queued);
    }
}
