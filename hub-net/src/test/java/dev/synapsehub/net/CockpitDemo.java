package dev.synapsehub.net;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;

import java.util.ArrayList;
import java.util.List;

import static dev.synapsehub.net.TestHub.WAIT;

/** A small, realistic fleet for the cockpit's browser test and its screenshots. */
final class CockpitDemo {
    private CockpitDemo() {
    }

    static void populate(TestHub hub) throws Exception {
        String[] names = {"api/alice", "api/bruno", "web/chen", "web/dara", "infra/eli", "infra/fatima", "docs/gus",
                "qa/hana", "qa/ivan", "data/jun"};
        List<HubClient> agents = new ArrayList<>();
        for (String n : names) {
            agents.add(hub.agent(n));
        }
        HubClient reviewer = hub.agent("review/bot");
        reviewer.close(); // offline: its directed messages wait in its mailbox

        String[][] claims = {
                {"api/parser", "backend", "src/parser"}, {"api/auth-tokens", "backend", "src/auth"},
                {"web/login-form", "frontend", "app/login"}, {"web/dashboard", "frontend", "app/dashboard"},
                {"infra/ci-cache", "infra", "ci/cache"}, {"infra/tls-rotation", "infra", "deploy/tls"},
                {"docs/cockpit", "docs", "docs/operations.md"}, {"qa/flaky-timeouts", "backend", "test/timeouts"},
                {"qa/load-profile", "bench", "profiles"}, {"data/migrations", "backend", "db/migrations"}};
        for (int i = 0; i < claims.length; i++) {
            HubClient a = agents.get(i);
            ObjectNode c = a.frame("claim");
            c.put("task_id", claims[i][0]).put("worktree", claims[i][1]).put("ttl_seconds", 300.0 + 240 * i)
                    .put("note", "working on " + claims[i][0]);
            c.putArray("paths").add(claims[i][2]);
            a.send(c);
            String task = claims[i][0];
            ObjectNode granted = a.await(f -> "claim_granted".equals(f.path("type").asText())
                    && task.equals(f.path("task_id").asText()), WAIT);
            if (i % 3 == 0) {
                ObjectNode u = a.frame("task_update");
                u.put("task_id", claims[i][0]).put("status", "working").put("epoch", granted.path("epoch").asLong());
                a.send(u);
                a.await(f -> task.equals(f.path("task_id").asText()) && "working".equals(f.path("status").asText()), WAIT);
            }
        }
        // two refusals: the scopes are taken
        for (int i = 0; i < 2; i++) {
            HubClient a = agents.get(9 - i);
            ObjectNode c = a.frame("claim");
            c.put("task_id", "conflict-" + i).put("worktree", "backend");
            c.putArray("paths").add(i == 0 ? "src/parser/lexer" : "src/auth");
            a.send(c);
            a.await(f -> "claim_denied".equals(f.path("type").asText()), WAIT);
        }

        HubClient lead = agents.get(0);
        String[][] tasks = {
                {"B-101", "Design the cockpit API", "", "done"}, {"B-102", "Serve /ui from the jar", "B-101", "done"},
                {"B-103", "Live feed over SSE", "B-102", "in_progress"}, {"B-104", "Browser test", "B-103", "open"},
                {"B-105", "Screenshots in docs", "B-104", "open"}, {"B-106", "Rotate TLS certificates", "", "open"},
                {"B-107", "Fix flaky timeout test", "", "blocked"}, {"B-108", "Drop the old dashboard", "", "cancelled"},
                {"B-109", "Load profile for 10k agents", "", "in_progress"}};
        for (String[] t : tasks) {
            ObjectNode f = lead.frame("ledger_task");
            f.put("task_id", t[0]).put("title", t[1]).put("project", "cockpit");
            if (!t[2].isEmpty()) {
                f.putArray("depends_on").add(t[2]);
            }
            lead.send(f);
            lead.awaitType("ledger_task_posted", WAIT);
            if (!t[3].equals("open")) {
                ObjectNode u = lead.frame("ledger_task_update");
                u.put("task_id", t[0]).put("status", t[3]);
                lead.send(u);
                lead.awaitType("ledger_task_updated", WAIT);
            }
        }

        for (int i = 0; i < 3; i++) {
            ObjectNode chat = agents.get(4).frame("chat");
            chat.put("target", "ops/pager");
            chat.put("payload", "disk almost full on runner " + i);
            agents.get(4).send(chat);
            agents.get(4).awaitType("chat", WAIT);
        }
        for (int i = 0; i < 4; i++) {
            ObjectNode chat = agents.get(1).frame("chat");
            chat.put("target", "review/bot");
            chat.put("payload", "please review change " + i);
            agents.get(1).send(chat);
            agents.get(1).awaitType("chat", WAIT);
        }
    }
}
