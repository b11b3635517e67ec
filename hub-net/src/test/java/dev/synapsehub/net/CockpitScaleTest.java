package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The cockpit over 100,000 live claims: a page carries at most its limit, however large the
 * state, and the filter and the counts are computed on the server over all of it.
 */
class CockpitScaleTest {
    private static final int CLAIMS = 100_000;
    private static final int OWNERS = 10_000;

    @Test
    void aHundredThousandClaimsArePagedAndFilteredOnTheServer() throws Exception {
        CoordinationState state = new CoordinationState();
        double now = Clock.system().nowSeconds();
        for (int i = 0; i < CLAIMS; i++) {
            String owner = "fleet/agent-" + (i % OWNERS);
            String task = String.format("task-%06d", i);
            state.apply(new ClaimSnapshotEvent(now, ClaimSnapshotEvent.Kind.CLAIM, new Claim(task, owner, owner, "",
                    now, now + 3600, ClaimStatus.CLAIMED, null, "repo", List.of("src/" + task), i + 1L, 0, "", null)));
        }
        CoordinationActor actor = new CoordinationActor(state, new InMemoryJournal(), Clock.system(), ActorSettings.DEFAULTS);
        actor.start();
        try (TestHub hub = new TestHub(HubConfig.builder().ui(true), actor, Clock.system());
             CockpitHttp http = new CockpitHttp(hub.port, null)) {
            JsonNode first = http.view("/ui/api/claims");
            assertThat(first.path("total").asInt()).isEqualTo(CLAIMS);
            assertThat(first.path("claims")).hasSize(100);
            assertThat(first.path("claims").get(0).path("task_id").asText()).isEqualTo("task-000000");

            JsonNode last = http.view("/ui/api/claims?offset=99900&limit=500");
            assertThat(last.path("claims")).hasSize(100);
            assertThat(last.path("claims").get(99).path("task_id").asText()).isEqualTo("task-099999");

            JsonNode owner = http.view("/ui/api/claims?q=fleet/agent-4242&limit=500");
            assertThat(owner.path("matched").asInt()).as("agent-4242 holds every 10,000th task").isEqualTo(10);
            assertThat(owner.path("claims").get(0).path("task_id").asText()).isEqualTo("task-004242");

            JsonNode path = http.view("/ui/api/claims?q=src/task-05");
            assertThat(path.path("matched").asInt()).isEqualTo(10_000);
            assertThat(path.path("claims")).hasSize(100);

            HttpResponse<String> page = http.get("/ui/api/claims?limit=500");
            assertThat(page.body().length()).as("a full page stays small").isLessThan(500 * 600);
            assertThat(http.view("/ui/api/overview").path("live_claims").asInt()).isEqualTo(CLAIMS);
        }
    }
}
