package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

/** Operator subcommands that talk to a running hub: who, state, claim, release, handoff. */
final class OperatorCommands {
    private OperatorCommands() {
    }

    /** Shared plumbing: connect, register, send one request, wait for its reply. */
    abstract static class Base implements Callable<Integer> {
        @Mixin
        ClientOptions client;

        @Spec
        CommandSpec spec;

        /** Builds the request frame. */
        abstract ObjectNode request(HubClient hub);

        /** Recognises the reply to the request. */
        abstract Predicate<ObjectNode> isReply();

        /** Prints a reply for a person; {@code --json} prints the frame instead. */
        abstract void report(ObjectNode reply, PrintWriter out);

        /**
         * The exit code a reply means, the same with {@code --json} as without: 1 for a refusal
         * (an {@code error} or {@code *_denied} frame), else 0.
         */
        int exitCode(ObjectNode reply) {
            String type = type(reply);
            return type.equals("error") || type.endsWith("_denied") ? ExitCodes.REFUSED : ExitCodes.OK;
        }

        /** Whether the request is one a hub may require signed (claim, release, handoff): only these read a key. */
        boolean signs() {
            return false;
        }

        @Override
        public Integer call() {
            PrintWriter err = spec.commandLine().getErr();
            String usage = client.usageProblem();
            if (usage != null) {
                err.println("synapse-hub: " + usage);
                return ExitCodes.USAGE;
            }
            FrameSigner signer;
            try {
                signer = signs() ? client.signer() : null;
            } catch (IOException | IllegalArgumentException e) {
                err.println("synapse-hub: " + e.getMessage());
                return ExitCodes.USAGE;
            }
            try (HubClient hub = client.connect()) {
                ObjectNode reply;
                try {
                    HubRefusal.register(hub, client, null);
                    ObjectNode request = request(hub);
                    if (signer != null) {
                        signer.sign(request, System.currentTimeMillis() / 1000.0);
                    }
                    hub.send(request);
                    reply = hub.awaitWhileOpen(f -> isReply().test(f) || isFatal(f), client.timeout());
                } catch (IOException | TimeoutException e) { // a send to, or a wait on, a connection the hub closed
                    HubRefusal closed = HubRefusal.closed(hub, client);
                    if (closed != null) {
                        throw closed;
                    }
                    throw e;
                }
                if ("auth_denied".equals(type(reply)) || "name_conflict".equals(type(reply))) {
                    HubRefusal closed = HubRefusal.closed(hub, client); // it closes the connection after this frame
                    err.println("synapse-hub: " + (closed != null ? closed.getMessage()
                            : type(reply) + ": " + reply.path("payload").asText()));
                    return closed != null ? closed.exitCode() : ExitCodes.REFUSED;
                }
                if (client.json) {
                    spec.commandLine().getOut().println(FrameText.of(reply));
                } else if ("error".equals(type(reply))) {
                    denied(reply, spec.commandLine().getOut());
                } else {
                    report(reply, spec.commandLine().getOut());
                }
                return exitCode(reply);
            } catch (HubRefusal e) {
                err.println("synapse-hub: " + e.getMessage());
                return e.exitCode();
            } catch (IOException e) {
                err.println("synapse-hub: cannot reach " + client.url + ": " + e.getMessage());
                return ExitCodes.UNAVAILABLE;
            } catch (TimeoutException e) {
                err.println("synapse-hub: no answer from " + client.url + " within " + client.timeoutSeconds + " s");
                return ExitCodes.UNAVAILABLE;
            }
        }

        static String type(JsonNode frame) {
            return frame.path("type").asText();
        }

        private static boolean isFatal(ObjectNode f) {
            String t = type(f);
            return t.equals("auth_denied") || t.equals("name_conflict");
        }

        static void denied(ObjectNode reply, PrintWriter out) {
            // a denial carries reason_code, an error frame error_code (busy, queued, commit_unknown on a mesh)
            String code = reply.path("reason_code").asText(reply.path("error_code").asText(""));
            out.println("refused" + (code.isEmpty() ? "" : " (" + code + ")") + ": " + reply.path("payload").asText());
        }
    }

    /** Commands answered from one {@code state_snapshot}. */
    abstract static class StateQuery extends Base {
        @Override
        ObjectNode request(HubClient hub) {
            return hub.frame("state_request");
        }

        @Override
        Predicate<ObjectNode> isReply() {
            // a mesh node refuses a linearizable read (busy) with an error instead of a snapshot
            return f -> type(f).equals("state_snapshot") || type(f).equals("error");
        }
    }

    /** {@code synapse-hub who}. */
    @Command(name = "who", description = "List the agents online on a hub.", mixinStandardHelpOptions = true,
            footer = ExitCodes.HELP_FOOTER)
    static final class Who extends Base {
        @Override
        ObjectNode request(HubClient hub) {
            return hub.frame("who_request");
        }

        @Override
        Predicate<ObjectNode> isReply() {
            return f -> type(f).equals("who_snapshot");
        }

        @Override
        void report(ObjectNode reply, PrintWriter out) {
            // The hub counts this command's own connection and name; an operator asks about the others.
            List<String> names = new ArrayList<>();
            reply.path("online_agents").forEach(n -> {
                if (!n.asText().equals(client.name)) {
                    names.add(n.asText());
                }
            });
            int connections = Math.max(0, reply.path("connected_clients").asInt() - 1);
            out.printf("%d agent(s) online, %d connection(s), not counting this command's own; hub %s%n", names.size(),
                    connections, reply.path("hub_version").asText());
            JsonNode roles = reply.path("agent_roles");
            for (String name : names) {
                JsonNode r = roles.path(name);
                out.println("  " + name + (r.isArray() && r.size() > 0 ? "  roles " + r : ""));
            }
        }
    }

    /** {@code synapse-hub state}. */
    @Command(name = "state", description = "Show a hub's live claims.", mixinStandardHelpOptions = true,
            footer = ExitCodes.HELP_FOOTER)
    static final class State extends StateQuery {
        @Option(names = "--linearizable", description = "On a mesh node: read only after catching up to the leader's "
                + "read index, so every write acknowledged before is shown (refused busy without a quorum).")
        boolean linearizable;

        @Override
        ObjectNode request(HubClient hub) {
            ObjectNode f = super.request(hub);
            if (linearizable) {
                f.put("consistency", "linearizable"); // docs/protocol.md, mesh mode extensions
            }
            return f;
        }

        @Override
        void report(ObjectNode reply, PrintWriter out) {
            JsonNode claims = reply.path("snapshot").path("active_claims");
            double now = reply.path("snapshot").path("generated_at").asDouble();
            JsonNode staleness = reply.path("staleness"); // a mesh node's label (docs/protocol.md)
            String read = staleness.path("consistency").asText("");
            String label = !read.isEmpty() ? " (" + read + " read)"
                    // last-known state of a node that knows no leader or lags: say so, as the reply does
                    : staleness.path("isStale").asBoolean(false) ? String.format(Locale.ROOT,
                            " (STALE read from %s: no leader known or %d ms behind; %d write(s) queued here)",
                            staleness.path("source").asText("?"), staleness.path("replicationLagMs").asLong(),
                            staleness.path("queueDepth").asLong()) : "";
            out.printf("%d live claim(s)%s%n", claims.size(), label);
            for (JsonNode c : claims) {
                out.printf("  %-24s %-20s %-14s epoch %-6d v%-4d %6.0fs left  %s:%s%n", c.path("task_id").asText(),
                        c.path("owner").asText(), c.path("status").asText(), c.path("epoch").asLong(),
                        c.path("version").asLong(), c.path("lease_expires_at").asDouble() - now,
                        c.path("worktree").asText(), c.path("paths"));
            }
        }
    }

    /** {@code synapse-hub claim TASK}. */
    @Command(name = "claim", description = "Claim a task (owned by --name until released or its lease lapses).",
            mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER)
    static final class Claim extends Base {
        @Override
        boolean signs() {
            return true;
        }

        @Parameters(paramLabel = "TASK", description = "Task id.")
        String taskId;

        @Option(names = "--worktree", defaultValue = "", description = "Worktree label (default: the root worktree \"\").")
        String worktree;

        @Option(names = "--path", paramLabel = "PATH", description = "Declared file or directory (repeatable); none = whole worktree.")
        List<String> paths = new ArrayList<>();

        @Option(names = "--ttl", paramLabel = "SECONDS", description = "Lease length, clamped to [30 s, 30 days] (default 3600).")
        Double ttl;

        @Option(names = "--note", description = "Note stored on the claim.")
        String note;

        @Override
        ObjectNode request(HubClient hub) {
            ObjectNode f = hub.frame("claim");
            f.put("task_id", taskId);
            f.put("worktree", worktree);
            f.putArray("paths").addAll(paths.stream().map(p -> f.textNode(p)).toList());
            if (ttl != null) {
                f.put("ttl_seconds", ttl);
            }
            if (note != null) {
                f.put("note", note);
            }
            return f;
        }

        @Override
        Predicate<ObjectNode> isReply() {
            return f -> (type(f).equals("claim_granted") && taskId.strip().equals(f.path("task_id").asText())
                    && client.name.equals(f.path("owner").asText()))
                    || (type(f).equals("claim_denied") && taskId.strip().equals(f.path("task_id").asText()))
                    || (type(f).equals("claim_denied") && taskId.isBlank())
                    || type(f).equals("error");
        }

        @Override
        void report(ObjectNode reply, PrintWriter out) {
            if (!type(reply).equals("claim_granted")) {
                denied(reply, out);
                return;
            }
            double until = reply.path("lease_expires_at").asDouble();
            // an instant a person reads (scripts take --json): UTC, to the millisecond
            out.printf("granted %s to %s: epoch %d, lease until %s%n", reply.path("task_id").asText(),
                    reply.path("owner").asText(), reply.path("epoch").asLong(),
                    java.time.Instant.ofEpochMilli(Math.round(until * 1000)));
        }
    }

    /** {@code synapse-hub release TASK}. */
    @Command(name = "release", description = "Release a task held by --name.", mixinStandardHelpOptions = true,
            footer = ExitCodes.HELP_FOOTER)
    static final class Release extends Base {
        @Override
        boolean signs() {
            return true;
        }

        @Parameters(paramLabel = "TASK", description = "Task id.")
        String taskId;

        @Option(names = "--epoch", description = "Fence: refuse unless the claim still has this epoch.")
        Long epoch;

        @Override
        ObjectNode request(HubClient hub) {
            ObjectNode f = hub.frame("release");
            f.put("task_id", taskId);
            if (epoch != null) {
                f.put("epoch", epoch);
            }
            return f;
        }

        @Override
        Predicate<ObjectNode> isReply() {
            return f -> ((type(f).equals("release_granted") || type(f).equals("release_denied"))
                    && taskId.strip().equals(f.path("task_id").asText())) || type(f).equals("error");
        }

        @Override
        void report(ObjectNode reply, PrintWriter out) {
            if (!type(reply).equals("release_granted")) {
                denied(reply, out);
                return;
            }
            out.println("released " + reply.path("task_id").asText());
        }
    }

    /** {@code synapse-hub handoff TASK --to AGENT}. */
    @Command(name = "handoff", description = "Hand a task held by --name to another online agent, atomically.",
            mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER)
    static final class Handoff extends Base {
        @Override
        boolean signs() {
            return true;
        }

        @Parameters(paramLabel = "TASK", description = "Task id.")
        String taskId;

        @Option(names = "--to", required = true, paramLabel = "AGENT", description = "Recipient (must be online).")
        String to;

        @Option(names = "--note", description = "Replacement note for the recipient.")
        String note;

        @Option(names = "--epoch", description = "Fence: refuse unless the claim still has this epoch.")
        Long epoch;

        @Override
        ObjectNode request(HubClient hub) {
            ObjectNode f = hub.frame("handoff");
            f.put("task_id", taskId);
            f.put("to_agent", to);
            if (note != null) {
                f.put("note", note);
            }
            if (epoch != null) {
                f.put("epoch", epoch);
            }
            return f;
        }

        @Override
        Predicate<ObjectNode> isReply() {
            return f -> ((type(f).equals("handoff_granted") || type(f).equals("handoff_denied"))
                    && taskId.strip().equals(f.path("task_id").asText())) || type(f).equals("error");
        }

        @Override
        void report(ObjectNode reply, PrintWriter out) {
            if (!type(reply).equals("handoff_granted")) {
                denied(reply, out);
                return;
            }
            out.printf("handed %s from %s to %s: epoch %d%n", reply.path("task_id").asText(),
                    reply.path("previous_owner").asText(), reply.path("owner").asText(), reply.path("epoch").asLong());
        }
    }
}
