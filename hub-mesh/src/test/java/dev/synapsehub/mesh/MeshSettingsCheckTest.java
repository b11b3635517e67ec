package dev.synapsehub.mesh;

import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/** The settings check's verdict comes only from the leader it asked while that one still leads. */
class MeshSettingsCheckTest {
    private static final MeshGovernanceSettings OWN = MeshGovernanceSettings.of(Map.of("namespace_owner", "proj=hub-m"));
    private static final MeshGovernanceSettings ODD = MeshGovernanceSettings.of(Map.of("namespace_owner", "lab=hub-a"));

    private final List<RaftClientRequest> asked = new CopyOnWriteArrayList<>();
    private final List<CompletableFuture<RaftClientReply>> pending = new CopyOnWriteArrayList<>();
    private final AtomicReference<RaftPeerId> leader = new AtomicReference<>(RaftPeerId.valueOf("n1"));

    @Test
    void aLateAnswerFromAFormerLeaderDoesNotOverwriteTheVerdict() {
        MeshSettingsCheck check = check();
        check.check(); // asks n1
        assertThat(asked).hasSize(1);
        leader.set(RaftPeerId.valueOf("n2")); // n1 lost the lead while its answer was on the way
        pending.get(0).complete(reply(asked.get(0), ODD, "n1"));
        assertThat(check.view().state()).isEqualTo(MeshSettingsCheck.State.UNKNOWN);
        assertThat(check.checkFailures()).isZero();

        check.check(); // asks n2, which agrees
        assertThat(asked).hasSize(2);
        pending.get(1).complete(reply(asked.get(1), OWN, "n2"));
        assertThat(check.view().state()).isEqualTo(MeshSettingsCheck.State.AGREE);
        assertThat(check.view().leader()).isEqualTo("n2");
    }

    @Test
    void theCurrentLeadersAnswerSetsTheVerdict() {
        MeshSettingsCheck check = check();
        check.check();
        pending.get(0).complete(reply(asked.get(0), ODD, "n1"));
        assertThat(check.view().state()).isEqualTo(MeshSettingsCheck.State.MISMATCH);
        assertThat(check.view().differing()).containsExactly("namespace_owner");
    }

    @Test
    void aStartWithAMapWaitsForTheFirstComparisonAndOneWithoutDoesNot() throws Exception {
        MeshSettingsCheck check = check();
        assertThat(check.awaitCompared(50)).isFalse(); // nobody answered: a bounded wait, then serving anyway
        check.check();
        CompletableFuture<Boolean> waited = CompletableFuture.supplyAsync(() -> {
            try {
                return check.awaitCompared(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        });
        pending.get(0).complete(reply(asked.get(0), OWN, "n1"));
        assertThat(waited.get()).isTrue();
        assertThat(check.view().state()).isEqualTo(MeshSettingsCheck.State.AGREE);

        MeshSettingsCheck noMap = check();
        noMap.settings(MeshGovernanceSettings.NONE);
        assertThat(noMap.awaitCompared(0)).isTrue(); // it refuses nothing while unknown
    }

    /** A failed ask's stream stays closed until its channel is reset: the check resets it, once, and the next ask works. */
    @Test
    void anAskThatFailedResetsItsChannelOnce() {
        MeshSettingsCheck check = check();
        check.check();
        pending.get(0).completeExceptionally(new org.apache.ratis.protocol.exceptions.AlreadyClosedException(
                "client-1->n1 is closed"));
        assertThat(check.checkFailures()).isEqualTo(1);
        assertThat(resetsOf).containsExactly(RaftPeerId.valueOf("n1"));
        check.check();
        pending.get(1).complete(reply(asked.get(1), OWN, "n1"));
        assertThat(check.view().state()).isEqualTo(MeshSettingsCheck.State.AGREE);
        assertThat(resetsOf).hasSize(1);
    }

    private final List<RaftPeerId> resetsOf = new CopyOnWriteArrayList<>();

    private MeshSettingsCheck check() {
        RaftClientRpc rpc = (RaftClientRpc) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {RaftClientRpc.class}, (proxy, method, args) -> {
                    if (method.getName().equals("sendRequestAsyncUnordered")) {
                        asked.add((RaftClientRequest) args[0]);
                        CompletableFuture<RaftClientReply> f = new CompletableFuture<>();
                        pending.add(f);
                        return f;
                    }
                    if (method.getName().equals("handleException")) {
                        resetsOf.add((RaftPeerId) args[0]);
                        return true;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        // asks are answered by hand below: bounds far beyond a starved test thread (a 500 ms bound
        // ran out between an ask and its answer on a loaded two-core host and counted a failure)
        MeshSettingsCheck check = new MeshSettingsCheck("n3", rpc, RaftGroupId.randomId(), leader::get, 60_000, 60_000);
        check.settings(OWN);
        return check;
    }

    private static RaftClientReply reply(RaftClientRequest request, MeshGovernanceSettings settings, String node) {
        MeshSettingsCheck answering = new MeshSettingsCheck(node, null, request.getRaftGroupId(), () -> null, 1);
        answering.settings(settings);
        return RaftClientReply.newBuilder().setRequest(request).setSuccess().setMessage(Message.valueOf(
                ByteString.copyFrom(MeshJson.bytes(answering.answer())))).build();
    }
}
