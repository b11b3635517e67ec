package dev.synapsehub.spec.invariants;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimRegistry;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.undo.UndoLog;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/** Shared helpers for the invariant tests: command factories and a "decide then apply" harness. */
final class Registries {
    private Registries() {
    }

    // ---- limits ---------------------------------------------------------------------------

    static RegistryLimits ttl(double defaultTtl) {
        return RegistryLimits.DEFAULTS.withDefaultTtlSeconds(defaultTtl);
    }

    static RegistryLimits cap(int maxClaims) {
        return RegistryLimits.DEFAULTS.withMaxClaimsPerPrincipal(maxClaims);
    }

    // ---- commands -------------------------------------------------------------------------

    /** A plain claim: principal = agent, default worktree, whole worktree, default TTL. */
    static ClaimCommand claim(String agent, String task) {
        return ClaimCommand.of(agent, task);
    }

    /** A scoped claim charged to the agent's own name. */
    static ClaimCommand claimIn(String agent, String task, String worktree, String... paths) {
        return new ClaimCommand(agent, agent, task, null, null, worktree, Arrays.asList(paths), null);
    }

    /** A claim in its own worktree (named after the task) so several can coexist. */
    static ClaimCommand claimOwn(String agent, String principal, String task) {
        return new ClaimCommand(agent, principal, task, null, null, "wt-" + task, List.of(), null);
    }

    static ClaimCommand claimTtl(String agent, String task, Double ttl) {
        return new ClaimCommand(agent, agent, task, null, ttl, "wt-" + task, List.of(), null);
    }

    static ReleaseCommand release(String agent, String task) {
        return new ReleaseCommand(agent, task, null);
    }

    static ReleaseCommand release(String agent, String task, long epoch) {
        return new ReleaseCommand(agent, task, epoch);
    }

    static TaskUpdateCommand update(String agent, String task, String status) {
        return new TaskUpdateCommand(agent, task, status, null, null, null, null);
    }

    static HandoffCommand handoff(String agent, String task, String to) {
        return new HandoffCommand(agent, task, to, true, null, null, null);
    }

    static HandoffCommand handoff(String agent, String task, String to, long epoch) {
        return new HandoffCommand(agent, task, to, true, null, null, epoch);
    }

    static CheckpointCommand checkpoint(String agent, String task, String token) {
        return new CheckpointCommand(agent, task, token, null);
    }

    static CheckpointCommand checkpoint(String agent, String task, String token, long epoch) {
        return new CheckpointCommand(agent, task, token, epoch);
    }

    // ---- harness --------------------------------------------------------------------------

    static Harness fresh() {
        return new Harness(RegistryLimits.DEFAULTS);
    }

    static Harness with(RegistryLimits limits) {
        return new Harness(limits);
    }

    /** A registry plus the journal of every event applied to it through {@link #run}. */
    static final class Harness {
        /** The batch the registry records into, as the state's one undo log would be. */
        final UndoLog undo = new UndoLog();
        final ClaimRegistry registry;
        final List<CoordinationEvent> journal = new ArrayList<>();

        Harness(RegistryLimits limits) {
            this.registry = new ClaimRegistry(limits, undo);
        }

        /** Decides {@code command} at {@code t} and applies its events (grant or denial evidence). */
        Decision run(Command command, double t) {
            Decision decision = registry.decide(command, t);
            for (CoordinationEvent event : decision.events()) {
                registry.apply(event);
                journal.add(event);
            }
            return decision;
        }

        /** Runs and asserts a grant; returns the resulting claim. */
        Claim grant(Command command, double t) {
            Reply reply = run(command, t).reply();
            assertThat(reply).as("expected a grant for %s", command).isInstanceOf(Reply.Granted.class);
            return ((Reply.Granted) reply).claim();
        }

        /** Runs and asserts a refusal with {@code expected}; returns it. */
        Reply.Denied deny(Command command, double t, Refusal expected) {
            Reply reply = run(command, t).reply();
            assertThat(reply).as("expected a refusal for %s", command).isInstanceOf(Reply.Denied.class);
            Reply.Denied denied = (Reply.Denied) reply;
            assertThat(denied.refusal()).as(denied.message()).isEqualTo(expected);
            return denied;
        }

        Optional<Claim> live(String task, double t) {
            return registry.liveClaim(task, t);
        }

        Claim owned(String task, double t) {
            return registry.liveClaim(task, t).orElseThrow(() -> new AssertionError(task + " is not live"));
        }

        /** A fresh registry with the same limits, fed this harness's journal. */
        ClaimRegistry replay() {
            ClaimRegistry copy = new ClaimRegistry(registry.limits());
            journal.forEach(copy::apply);
            return copy;
        }

        State state(double t, String... tasks) {
            return State.of(registry, t, tasks);
        }
    }

    /**
     * Everything observable about a registry at {@code t}: live claims (full records, so
     * versions and epochs), the epoch counter, charges per principal, retained checkpoints.
     */
    /** Principals whose charge is always part of a {@link State}, held or not (catches leaks). */
    static final List<String> WATCHED_PRINCIPALS = List.of("A", "B", "C", "D", "pA", "pB", "host");

    record State(List<Claim> claims, long epochCounter, Map<String, Integer> charged,
                 Map<String, Optional<String>> retained) {
        static State of(ClaimRegistry registry, double t, String... tasks) {
            List<Claim> claims = registry.snapshot(t);
            TreeSet<String> principals = new TreeSet<>(WATCHED_PRINCIPALS);
            for (Claim c : claims) {
                principals.add(c.principal());
            }
            Map<String, Integer> charged = new LinkedHashMap<>();
            for (String p : principals) {
                charged.put(p, registry.charged(p));
            }
            Map<String, Optional<String>> retained = new LinkedHashMap<>();
            for (String task : tasks) {
                retained.put(task, registry.retainedCheckpoint(task));
            }
            return new State(claims, registry.epochCounter(), charged, retained);
        }
    }
}
