package dev.synapsehub.journal;

import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.claim.GitContext;
import dev.synapsehub.core.command.AckCommand;
import dev.synapsehub.core.command.AgentActivityCommand;
import dev.synapsehub.core.command.ChatCommand;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.LedgerProgressCommand;
import dev.synapsehub.core.command.LedgerTaskCommand;
import dev.synapsehub.core.command.LedgerTaskUpdateCommand;
import dev.synapsehub.core.command.MailboxCursorCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.command.ResourceOfferCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.messaging.OnlineAgent;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Random mutations over every registry: claims (scopes, TTLs, git, renewals), releases with and
 * without assessment, updates, checkpoints, handoffs, keyed claims and their retries, board
 * tasks and notes, resource offers, broadcast and directed chats with receipts to online and
 * offline agents, acks, mailbox cursors and activity. Small name spaces make them collide, so
 * refusals, conflicts, evictions and dead letters happen too. Deterministic for a seed.
 */
final class RandomHistory {
    static final List<String> AGENTS = List.of("a/one", "a/two", "b/three", "b/four", "c/five");
    private final Random rnd;
    /** Draws for identity pins only, so adding them left every other draw of a seed as it was. */
    private final Random pins;
    private long step;

    RandomHistory(long seed) {
        this.rnd = new Random(seed);
        this.pins = new Random(~seed);
    }

    private <T> T pick(List<T> values) {
        return values.get(rnd.nextInt(values.size()));
    }

    private String agent() {
        return pick(AGENTS);
    }

    private String task() {
        return "T" + rnd.nextInt(40);
    }

    private Long maybeEpoch() {
        return rnd.nextInt(4) == 0 ? (long) rnd.nextInt(30) : null;
    }

    /** Agents online now: a random subset, some of them not live (stale). */
    private List<OnlineAgent> online() {
        List<OnlineAgent> out = new ArrayList<>();
        for (String a : AGENTS) {
            if (rnd.nextInt(3) != 0) {
                out.add(new OnlineAgent(a, rnd.nextBoolean() ? List.of("reviewer") : List.of(), rnd.nextInt(5) != 0,
                        "push"));
            }
        }
        return out;
    }

    /** The next mutation. */
    Mutation next() {
        step++;
        int r = rnd.nextInt(100);
        String agent = agent();
        String task = task();
        if (r < 24) {
            List<String> paths = rnd.nextInt(3) == 0 ? List.of() : List.of("src/" + rnd.nextInt(6), "doc/x" + rnd.nextInt(3));
            Double ttl = rnd.nextInt(3) == 0 ? 5.0 + rnd.nextInt(300) : null;
            GitContext git = rnd.nextInt(5) == 0 ? new GitContext("feat/" + task, "main", "merge") : null;
            String principal = rnd.nextInt(4) == 0 ? "shared" : null;
            return Mutation.of(new ClaimCommand(agent, principal, task, "n" + step, ttl, "wt" + rnd.nextInt(3), paths, git));
        } else if (r < 32) {
            return Mutation.of(new ReleaseCommand(agent, task, maybeEpoch(), rnd.nextInt(3) == 0 ? "done " + step : null));
        } else if (r < 40) {
            String status = pick(List.of("working", "input_required", "done", "claimed", "bogus", ""));
            return Mutation.of(new TaskUpdateCommand(agent, task, status, "u" + step, rnd.nextBoolean() ? "ref" + step : null,
                    maybeEpoch(), rnd.nextInt(4) == 0 ? (long) rnd.nextInt(4) : null));
        } else if (r < 47) {
            return Mutation.of(new CheckpointCommand(agent, task, "ck-" + step + "-\u00e9", maybeEpoch()));
        } else if (r < 52) {
            String to = agent();
            return Mutation.of(new HandoffCommand(agent, task, to, rnd.nextInt(5) != 0, null, "h" + step, maybeEpoch()));
        } else if (r < 58) {
            String raw = "k" + rnd.nextInt(60);
            String digest = rnd.nextInt(6) == 0 ? "other" : "d-" + task;
            return new Mutation(new ClaimCommand(agent, null, task, "", null, "wk", List.of(), null),
                    new Idempotency(Idempotency.key(agent, "claim", raw), digest, Fixtures.RENDERER));
        } else if (r < 64) {
            List<String> deps = rnd.nextBoolean() ? List.of("B" + rnd.nextInt(10)) : List.of();
            return Mutation.of(new LedgerTaskCommand(agent, "B" + rnd.nextInt(10), "title " + step, "d", deps,
                    rnd.nextBoolean() ? agent() : null, rnd.nextInt(4) == 0 ? "proj" : null, null, null));
        } else if (r < 67) {
            return Mutation.of(new LedgerTaskUpdateCommand(agent, "B" + rnd.nextInt(10),
                    pick(List.of("open", "in_progress", "done", "blocked", "nonsense")), null, null, null, null));
        } else if (r < 73) {
            return Mutation.of(new LedgerProgressCommand(agent, rnd.nextBoolean() ? "B" + rnd.nextInt(10) : "",
                    pick(List.of("note", "blocked", "assessment", "usage")), "progress " + step));
        } else if (r < 77) {
            return Mutation.of(new ResourceOfferCommand(agent, pick(List.of("gpu", "cpu")), "r" + rnd.nextInt(4),
                    rnd.nextInt(4), rnd.nextBoolean() ? "{\"mem\":" + rnd.nextInt(64) + "}" : null));
        } else if (r < 90) {
            String target = pick(List.of("all", agent(), agent() + "," + agent(), "b/*", "x/offline", "reviewer"));
            String channel = rnd.nextInt(8) == 0 ? "room" : null;
            boolean receipt = rnd.nextBoolean();
            long n = step;
            return Mutation.of(new ChatCommand(agent, target, channel, null, rnd.nextBoolean() ? "c" + n : null, receipt,
                    online(), stamp -> String.format(Locale.ROOT, // as the edge renders it: channel is a frame member
                            "{\"type\":\"chat\",\"sender\":\"%s\",\"target\":\"%s\",\"payload\":\"m%d \\u00fc\",\"msg_id\":%d,"
                                    + "\"timestamp\":%s%s}", agent, target, n, stamp.msgId(), stamp.hubTimestamp(),
                            channel == null ? "" : ",\"channel\":\"" + channel + "\"")));
        } else if (r < 95) {
            return Mutation.of(new AckCommand(agent, rnd.nextInt(4) == 0 ? "x/offline" : null, List.of("reviewer"),
                    1 + rnd.nextInt((int) Math.max(1, Math.min(Integer.MAX_VALUE, step * 3))), null));
        } else if (r < 98) {
            return Mutation.of(new MailboxCursorCommand(agent, null, rnd.nextInt((int) Math.max(1, step * 3))));
        }
        if (r == 99 && pins.nextBoolean()) { // identity pins (contract A2): pins, re-pins, mismatches, reclaims
            int k = pins.nextInt(2);
            String key = java.util.Base64.getEncoder().encodeToString(new byte[] {
                (byte) k, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
                26, 27, 28, 29, 30, 31});
            return pins.nextInt(3) == 0
                    ? Mutation.of(new dev.synapsehub.core.command.IdentityPinCommand.Reclaim(agent,
                            AGENTS.get(pins.nextInt(AGENTS.size())), "k" + k, "r" + step, pins.nextBoolean(), false,
                            false, false))
                    : Mutation.of(new dev.synapsehub.core.command.IdentityPinCommand.Pin(agent, "k" + k, key));
        }
        return Mutation.of(new AgentActivityCommand(agent));
    }

    /** How far the clock moves before the next burst: mostly seconds, sometimes past every lease. */
    double advance() {
        int r = rnd.nextInt(50);
        return r == 0 ? 4000 : r < 5 ? 200 : rnd.nextDouble() * 3;
    }
}
