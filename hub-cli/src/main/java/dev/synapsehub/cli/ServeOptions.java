package dev.synapsehub.cli;

import dev.synapsehub.net.delivery.Delivery;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.board.BoardLimits;
import dev.synapsehub.core.messaging.MessagingLimits;
import dev.synapsehub.core.resource.ResourceLimits;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.SpecConstants;
import dev.synapsehub.journal.Retention;
import dev.synapsehub.journal.SnapshotPolicy;
import dev.synapsehub.mesh.MeshCompaction;
import dev.synapsehub.mesh.MeshConfig;
import dev.synapsehub.mesh.MeshPeer;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.identity.IdentityPinSettings;
import dev.synapsehub.net.identity.PinReclaimAcl;
import dev.synapsehub.net.MessageAuthKey;
import dev.synapsehub.net.auth.AuthThrottleSettings;
import dev.synapsehub.net.auth.MetricsAuth;
import dev.synapsehub.net.tls.TlsFiles;
import dev.synapsehub.client.NetTransport;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The options of {@code synapse-hub} when it runs the hub; turned into validated settings once. */
public final class ServeOptions {

    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Bind address (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", defaultValue = "8876", description = "Port for WebSocket and HTTP (default: ${DEFAULT-VALUE}; 0 picks a free one).")
    int port;

    @Option(names = "--db", paramLabel = "FILE", description = "Journal file (SQLite, WAL). Without it the hub runs in memory and forgets everything on exit.")
    Path db;

    @Option(names = "--snapshot-interval", paramLabel = "SECONDS", defaultValue = "300",
            description = "With --db: take a state snapshot when this long has passed since the last and the journal "
                    + "grew; a restart loads the newest snapshot and replays only the rows after it. 0 disables the "
                    + "timer (default: ${DEFAULT-VALUE}).")
    double snapshotInterval;

    @Option(names = "--snapshot-every-rows", paramLabel = "N", defaultValue = "1000000",
            description = "With --db: take a state snapshot every N journal rows; bounds the rows a restart after a "
                    + "crash replays. 0 disables the count (default: ${DEFAULT-VALUE}).")
    long snapshotEveryRows;

    @Option(names = "--snapshots-kept", paramLabel = "N", defaultValue = "2",
            description = "State snapshots kept in the journal file, newest first; an older one is the fallback when "
                    + "the newest is damaged (default: ${DEFAULT-VALUE}).")
    int snapshotsKept;

    @Option(names = "--no-shutdown-snapshot",
            description = "Do not take a state snapshot on a clean stop (the next start then replays the tail).")
    boolean noShutdownSnapshot;

    @Option(names = "--journal-keep-rows", paramLabel = "N|all", defaultValue = "all",
            description = "With --db: journal rows (audit history) always kept. After each snapshot, older rows the "
                    + "kept snapshots cover are deleted unless a pending directed chat (up to 7 days), a federation "
                    + "peer's log cursor or a backup still needs them; all keeps every row "
                    + "(default: ${DEFAULT-VALUE}).")
    String journalKeepRows;

    @Option(names = "--log-format", paramLabel = "text|json", defaultValue = "${SYNAPSE_LOG_FORMAT:-text}",
            description = "Log lines as text (default) or json, one object per line; SYNAPSE_LOG_FORMAT works too. "
                    + "Read from the command line, not from a --config file (logging starts before the file is read).")
    String logFormat;

    @Option(names = "--compact-hint-threshold", paramLabel = "ROWS", defaultValue = "100000",
            description = "With --db: a start on a journal holding more than ROWS rows logs one hint about retention "
                    + "(--journal-keep-rows); a hint only, nothing is deleted; 0: no hint (default: ${DEFAULT-VALUE}).")
    long compactHintThreshold;

    @Option(names = "--hub-id", description = "Stable hub identity (default: syn- plus 8 random hex characters).")
    String hubId;

    @Option(names = "--token", description = "Shared connect token agents must send in their first frame. Prefer --token-file or SYNAPSE_TOKEN.")
    String token;

    @Option(names = "--token-file", paramLabel = "FILE", description = "Read the connect token from this file (first line).")
    Path tokenFile;

    @Option(names = "--auth-timeout", defaultValue = "10.0", paramLabel = "SECONDS", description = "First-frame deadline (default: ${DEFAULT-VALUE}).")
    double authTimeoutSeconds;

    @Option(names = "--shutdown-close-timeout", defaultValue = "5.0", paramLabel = "SECONDS",
            description = "On SIGTERM/Ctrl-C each connection is sent close 1001 'going away'; those that have not "
                    + "answered within SECONDS are dropped (0: at once; default: ${DEFAULT-VALUE}).")
    double shutdownCloseTimeoutSeconds;

    @Option(names = "--lease-offline-ttl", defaultValue = "" + SpecConstants.DEFAULT_LEASE_OFFLINE_TTL, paramLabel = "SECONDS", description = "How long a name-ownership lease outlives its holder's disconnect; 0 ends it at disconnect (default: ${DEFAULT-VALUE}).")
    double leaseOfflineTtl;

    @Option(names = "--max-clients", defaultValue = "256", description = "Open sockets at most; beyond: close 4013 (default: ${DEFAULT-VALUE}).")
    int maxClients;

    @Option(names = "--max-unauth-clients", defaultValue = "0", description = "Sockets in the pre-auth window at most on a token hub; 0 = --max-clients.")
    int maxUnauthClients;

    @Option(names = "--max-connections-per-host", defaultValue = "32", description = "Sockets per remote address; 0 disables (default: ${DEFAULT-VALUE}).")
    int maxConnectionsPerHost;

    @Option(names = "--max-msg-kb", defaultValue = "1024", description = "Largest inbound frame in KiB; beyond: close 1009 (default: ${DEFAULT-VALUE}).")
    int maxMsgKb;
    /** The largest --max-msg-kb: 1 GiB frames (a frame is held whole in memory while it is read). */
    static final int MAX_MSG_KB = 1024 * 1024;
    /** The longest auth-throttle window or back-off: a week (a longer one is surely a typo). */
    static final double MAX_AUTH_SECONDS = 7 * 24 * 3600;

    @Option(names = "--max-claims-per-agent", defaultValue = "" + SpecConstants.MAX_CLAIMS_PER_AGENT, description = "Live claims per quota principal (default: ${DEFAULT-VALUE}).")
    int maxClaimsPerAgent;

    @Option(names = "--max-paths-per-claim", defaultValue = "" + SpecConstants.MAX_DECLARED_PATHS, description = "Declared paths before a claim widens to its whole worktree (default: ${DEFAULT-VALUE}).")
    int maxPathsPerClaim;

    @Option(names = "--message-auth-key", paramLabel = "KEY_ID:SECRET:SENDER[,SENDER...]", description = "Per-message HMAC key (repeatable).")
    List<String> messageAuthKeys = new ArrayList<>();

    @Option(names = "--message-auth-key-file", paramLabel = "FILE", description = "HMAC keys, one KEY_ID:SECRET:SENDERS per line; # starts a comment.")
    Path messageAuthKeyFile;

    @Option(names = "--require-message-auth", description = "Refuse unsigned claim-family frames.")
    boolean requireMessageAuth;

    @Option(names = "--message-auth-window-seconds", defaultValue = "" + SpecConstants.DEFAULT_MESSAGE_AUTH_WINDOW_SECONDS, description = "How old a signed frame may be (default: ${DEFAULT-VALUE}); the future skew is fixed at 1 s.")
    double messageAuthWindow;

    @Option(names = "--message-auth-replay-capacity", defaultValue = "262144", description = "Live nonces remembered for replay protection, shared evenly among the keys; a nonce is kept for the auth window, so size it for the signed rate x the window x the keys (default: ${DEFAULT-VALUE}, 10,000 signed frames/s with room).")
    int messageAuthReplayCapacity;

    @Option(names = "--metrics", description = "Serve GET /health and /metrics on the hub port.")
    boolean metrics;

    @Option(names = "--metrics-token", description = "Bearer token GET /health and /metrics ask for (401 without it). "
            + "Prefer --metrics-token-file. Needed with --metrics off loopback.")
    String metricsToken;

    @Option(names = "--metrics-token-file", paramLabel = "FILE", description = "Read the metrics token from this file (first line).")
    Path metricsTokenFile;

    @Option(names = "--metrics-query-token-ok", description = "Also accept the metrics token as ?token= (deprecated: "
            + "URLs end up in logs and proxies).")
    boolean metricsQueryTokenOk;

    @Option(names = "--ui", description = "Serve the read-only operator cockpit at GET /ui on the hub port (live "
            + "presence, claims, denials, board, mailboxes, federation peers or mesh nodes, and a live feed); on a "
            + "token hub it asks for the token. On a mesh node it shows that node's reads, labelled with their staleness.")
    boolean ui;

    @Option(names = "--identity-pinning", negatable = true, description = "Pin each agent name to the Ed25519 key of "
            + "its first valid registration proof (identity_public_key + signature) and refuse other keys with close "
            + "4013; an agent that sends no proof is admitted and never pinned. Pins are journaled with --db (in memory "
            + "without; replicated on a mesh). On by default, as on the reference hub (contract 15.15); "
            + "--no-identity-pinning turns it off (on a mesh: on every node alike).")
    Boolean identityPinning; // null: not given, so on

    @Option(names = "--acl-policy", paramLabel = "FILE", description = "ACL policy (JSON {\"rules\": [...]}); this hub "
            + "reads its identity-pin-reclaim rules: which operators may run identity_pin_reclaim on which names.")
    Path aclPolicy;

    @Option(names = "--require-identity-binding", description = "Operator-bundle posture (contract A2.4): every "
            + "registration must carry a signature proving the key --identity-trust names for its agent name, else "
            + "close 4013 'identity binding failed' (missing_signature, unknown_key, ...). Pins are then neither "
            + "checked nor made. Needs --identity-trust.")
    boolean requireIdentityBinding;

    @Option(names = "--identity-trust", paramLabel = "FILE", description = "The operator's identity bundle for "
            + "--require-identity-binding: JSON {\"identities\": {\"<name>\": {\"key_id\": ..., \"public_key\": "
            + "<base64 raw Ed25519 key>}}}.")
    Path identityTrust;

    @Option(names = "--rate", defaultValue = "0", description = "Per-connection frames per second for non-heartbeat frames; 0 disables (default: ${DEFAULT-VALUE}).")
    double rate;

    @Option(names = "--burst", defaultValue = "20", description = "Burst for --rate, at least 1 (default: ${DEFAULT-VALUE}).")
    int burst;

    @Option(names = "--host-rate", defaultValue = "0", description = "Per-remote-host frames per second, every frame of"
            + " every socket from the address, heartbeats included; reconnecting does not refill it; 0 disables"
            + " (default: ${DEFAULT-VALUE}).")
    double hostRate;

    @Option(names = "--host-burst", defaultValue = "40", description = "Burst for --host-rate (default: ${DEFAULT-VALUE}).")
    int hostBurst;

    @Option(names = "--auth-fail-limit", paramLabel = "N", defaultValue = "10", description = "Failed "
            + "authentication attempts (connect token, cockpit or metrics bearer token, per-message signature) from one "
            + "remote host within --auth-fail-window after which that host's attempts are refused unchecked, with the "
            + "usual refusal, until a back-off passes; 0 disables (default: ${DEFAULT-VALUE}).")
    int authFailLimit;

    @Option(names = "--auth-fail-window", paramLabel = "SECONDS", defaultValue = "60", description = "How far back "
            + "--auth-fail-limit counts failures (default: ${DEFAULT-VALUE}).")
    double authFailWindow;

    @Option(names = "--auth-backoff", paramLabel = "SECONDS", defaultValue = "30", description = "A host's first "
            + "back-off after --auth-fail-limit failures; each further one doubles it (default: ${DEFAULT-VALUE}).")
    double authBackoff;

    @Option(names = "--auth-backoff-max", paramLabel = "SECONDS", defaultValue = "900", description = "The longest "
            + "back-off; a host quiet this long after its back-off starts afresh (default: ${DEFAULT-VALUE}).")
    double authBackoffMax;

    @Option(names = "--auth-throttle-hosts", paramLabel = "N", defaultValue = "10000", description = "Hosts whose "
            + "failures are tracked at most; beyond, the oldest quiet one (else the oldest) is forgotten "
            + "(default: ${DEFAULT-VALUE}).")
    int authThrottleHosts;

    @Option(names = "--auth-throttle-loopback", description = "Throttle loopback clients too (off by default: local "
            + "tools connect from there, and behind a local proxy every client shares one address).")
    boolean authThrottleLoopback;

    @Option(names = "--queue-capacity", defaultValue = "65536", description = "Commands waiting for the state actor at most; beyond, the hub answers busy (default: ${DEFAULT-VALUE}).")
    int queueCapacity;

    @Option(names = "--max-batch", defaultValue = "1024", description = "Commands committed in one journal transaction at most (default: ${DEFAULT-VALUE}).")
    int maxBatch;

    @Option(names = "--takeover-cooldown", defaultValue = "2.0", paramLabel = "SECONDS",
            description = "Minimum spacing between takeovers of one name; closer ones close 4014 (default: ${DEFAULT-VALUE}).")
    double takeoverCooldown;

    @Option(names = "--presence-fanout-limit", paramLabel = "N", defaultValue = "0",
            description = "Above N open sockets, stop broadcasting presence_update on joins and leaves (each lists "
                    + "every online agent to every socket: quadratic); agents poll who_request. 0 = always broadcast "
                    + "(default, as the wire contract).")
    int presenceFanoutLimit;

    @Option(names = "--default-delivery", paramLabel = "broadcast|scoped", defaultValue = "broadcast",
            description = "Claim traffic (claim_granted, release_granted, handoffs, task updates) and presence for "
                    + "agents that declare no delivery of their own: broadcast sends every one to every socket, as "
                    + "the wire contract; scoped sends an agent only its own, its handoffs', and those touching its "
                    + "live claims (docs/protocol.md, Scoped delivery) (default: ${DEFAULT-VALUE}).")
    String defaultDelivery;

    @Option(names = "--broadcast-linger-ms", paramLabel = "MS", defaultValue = "5",
            description = "How long a broadcast waits before going to every socket but its requester's, so that "
                    + "broadcasts close together share one write per socket; the requester is answered at once. "
                    + "0..1000 (default: ${DEFAULT-VALUE}).")
    int broadcastLingerMs;

    @Option(names = "--max-fanout-backlog-mb", paramLabel = "MB", defaultValue = "64",
            description = "While more broadcast data than this waits for its sockets, requests that change state "
                    + "are answered busy until the hub catches up (default: ${DEFAULT-VALUE}).")
    int maxFanoutBacklogMb;

    @Option(names = "--max-fanout-delay-ms", paramLabel = "MS", defaultValue = "5000",
            description = "While a broadcast has waited longer than this for one of its sockets, requests are "
                    + "answered busy until the hub catches up: a broadcast is small in bytes but costs one write "
                    + "per socket, so the backlog bound alone lets a flat-out agent put everyone else's copy "
                    + "seconds behind. More than --broadcast-linger-ms (default: ${DEFAULT-VALUE}).")
    long maxFanoutDelayMs;

    @Option(names = "--max-fanout-writes", paramLabel = "N", defaultValue = "1000000",
            description = "While an I/O loop owes its sockets more writes than this for the broadcasts waiting there "
                    + "(each broadcast once per socket), requests are answered busy until it catches up: stops a "
                    + "flat-out agent before the work piles up, where --max-fanout-delay-ms trips only once a "
                    + "broadcast is late (default: ${DEFAULT-VALUE}).")
    long maxFanoutWrites;

    @Option(names = "--transport", paramLabel = "auto|nio", defaultValue = "auto",
            description = "Socket transport: auto uses Linux's native epoll where it loads, else Java NIO; nio forces "
                    + "Java NIO (default: ${DEFAULT-VALUE}).")
    String transport;

    @Option(names = "--private-directed-messages", description = "Deliver directed chats only to their recipients "
            + "(and the sender), not to every socket; history and resume are filtered the same way.")
    boolean privateDirectedMessages;

    @Option(names = "--max-findings-per-agent", paramLabel = "N", defaultValue = "512", description = "Admitted "
            + "'finding' records per agent name (participant memory); below 1 counts as 1 (default: ${DEFAULT-VALUE}).")
    int maxFindingsPerAgent;

    @Option(names = "--warn-stale-recipients", negatable = true,
            description = "Consume-liveness (contract 8.6): a directed chat whose every recipient is stale (no live "
                    + "-rx/-pane-rx waiter and no reaction within --recipient-liveness-window) gets a negative receipt "
                    + "and a dead letter, and its sender a recipient_liveness_warning; who_snapshot carries "
                    + "agent_liveness. On by default; --no-warn-stale-recipients restores socket-presence semantics "
                    + "(a bound recipient counts as delivered to, no warnings, no agent_liveness).")
    Boolean warnStaleRecipients; // null: not given, so on (as --identity-pinning)

    @Option(names = "--recipient-liveness-window", paramLabel = "SECONDS", defaultValue = "90",
            description = "A recipient whose last non-heartbeat frame (or registration) is older than this, and "
                    + "that has no live waiter, is stale (default: ${DEFAULT-VALUE} s).")
    double recipientLivenessWindow;

    @Option(names = "--waiter-liveness-window", paramLabel = "SECONDS", defaultValue = "20",
            description = "An X-rx or X-pane-rx waiter seen (any frame, keepalives included) within this keeps X "
                    + "live, for consume-liveness, agent_liveness.has_live_waiter and the dark-seat monitor "
                    + "(default: ${DEFAULT-VALUE} s).")
    double waiterLivenessWindow;

    @Option(names = "--relay-log", paramLabel = "FILE", description = "Mirror every frame the hub fans out "
            + "(broadcasts, private directed and channel chats; never private replies) into FILE as NDJSON, one line "
            + "per frame (contract A5.2). Created with mode 0600. Off by default.")
    Path relayLog;

    @Option(names = "--relay-max-lines", paramLabel = "N", defaultValue = "5000", description = "With --relay-log: after "
            + "every N appends the file is cut to its last N lines, so it holds at most about 2N (default: ${DEFAULT-VALUE}).")
    int relayMaxLines;

    @Option(names = "--max-history", defaultValue = "10000", description = "Chat messages kept in memory for history (default: ${DEFAULT-VALUE}).")
    int maxHistory;

    @Option(names = "--dead-letter-escalation", paramLabel = "N", defaultValue = "0",
            description = "Broadcast an escalation every N-th dead letter to one target; 0 disables (default: ${DEFAULT-VALUE}).")
    int deadLetterEscalation;

    @Option(names = "--max-progress", defaultValue = "5000", description = "Board progress notes kept (default: ${DEFAULT-VALUE}).")
    int maxProgress;

    @Option(names = "--max-progress-per-author", defaultValue = "1000", description = "Board progress notes kept per author (default: ${DEFAULT-VALUE}).")
    int maxProgressPerAuthor;

    @Option(names = "--max-progress-per-task", defaultValue = "1000", description = "Board progress notes kept per task (default: ${DEFAULT-VALUE}).")
    int maxProgressPerTask;

    @Option(names = "--max-offers-per-agent", defaultValue = "64", description = "Resource offers per agent (default: ${DEFAULT-VALUE}).")
    int maxOffersPerAgent;

    @Option(names = "--board-task-cap", paramLabel = "N", defaultValue = "0",
            description = "A board_snapshot lists at most N tasks (open ones and the most recently updated first) "
                    + "with total_tasks, truncated and task_cap; 0 lists all (default: ${DEFAULT-VALUE}).")
    int boardTaskCap;

    @Option(names = "--advertised-host", paramLabel = "HOST[:PORT]",
            description = "An extra Host header authority to admit (the name clients use to reach the hub).")
    String advertisedHost;

    @Option(names = "--allow-origin", paramLabel = "ORIGIN",
            description = "A browser origin (scheme://host[:port]) admitted at the WebSocket handshake and by the "
                    + "cockpit (repeatable); by default a handshake carrying an Origin header is refused, and the "
                    + "cockpit admits only its own origin.")
    List<String> allowOrigins = new ArrayList<>();

    @Option(names = "--tls-certfile", paramLabel = "PEM",
            description = "Serve native TLS (wss://) on the hub port with this certificate chain (PEM, leaf first); "
                    + "needs --tls-keyfile. Without both, the hub speaks plain ws://.")
    Path tlsCertFile;

    @Option(names = "--tls-keyfile", paramLabel = "PEM",
            description = "The private key of --tls-certfile: unencrypted PKCS#8 PEM (BEGIN PRIVATE KEY). Clients "
                    + "pin the certificate as sha256:<hex of the DER certificate>.")
    Path tlsKeyFile;

    @Option(names = "--insecure-off-loopback", description = "Allow binding off loopback without a connect token, TLS "
            + "and (with --metrics) a metrics token (not recommended).")
    boolean insecureOffLoopback;

    @Option(names = "--mesh-id", paramLabel = "ID",
            description = "Run as node ID of a mesh: a replicated cluster on Raft that agents may reach through any node "
                    + "(docs/mesh.md). Needs --mesh-peers and --db; the Raft log goes to <db>.raft.")
    String meshId;

    @Option(names = "--mesh-peers", paramLabel = "ID=HOST:PORT[,...]",
            description = "Every mesh voter's Raft address, this node's included, the same list on every node. "
                    + "The WebSocket port stays --port.")
    String meshPeers;

    @Option(names = "--mesh-commit-timeout", defaultValue = "5.0", paramLabel = "SECONDS",
            description = "How long a mesh write waits for a quorum before a strong write is queued (answered "
                    + "queued) and any other is answered commit_unknown (default: ${DEFAULT-VALUE}).")
    double meshCommitTimeout;

    @Option(names = "--mesh-snapshot-every", defaultValue = "10000", paramLabel = "ENTRIES",
            description = "A mesh node snapshots its state every ENTRIES Raft log entries and compacts the log behind "
                    + "it; a restart replays at most about that many (default: ${DEFAULT-VALUE}).")
    long meshSnapshotEvery;

    @Mixin
    MeshTlsOptions meshTls = new MeshTlsOptions();

    @Option(names = "--mesh-group", paramLabel = "UUID",
            description = "The Raft group of the mesh this node joins: needed only by a new node added to a mesh whose "
                    + "membership changed (mesh add-node; mesh status shows it). A node with a Raft log uses the "
                    + "group it holds.")
    String meshGroup;

    @Option(names = "--mesh-bootstrap",
            description = "This start may found a new mesh: on empty Raft storage, a node whose peers cannot confirm "
                    + "that the mesh holds no committed record (they are not running yet) starts as a founder. Give "
                    + "it to each node's first start of a new mesh and drop it once the mesh has formed: without it "
                    + "such a start is refused, because a voter that lost its storage looks the same to itself. A "
                    + "node with Raft state ignores it.")
    boolean meshBootstrap;

    /** The hub command these options were parsed for (null when made in code): where each value came from. */
    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    /** Options that take effect only with --db: a snapshot, retention or a journal to hint about. */
    private static final List<String> NEED_DB = List.of("--snapshot-interval", "--snapshot-every-rows",
            "--snapshots-kept", "--no-shutdown-snapshot", "--journal-keep-rows", "--compact-hint-threshold");
    /** Options that take effect only on a mesh node. */
    private static final List<String> NEED_MESH_ID = List.of("--mesh-group", "--mesh-commit-timeout",
            "--mesh-snapshot-every");

    /**
     * Refuses options given on the command line where they cannot take effect (--snapshot-* without
     * --db, --mesh-* without --mesh-id, retention that no snapshot ever runs), and returns one
     * warning for each such group a --config file sets: a file may be a copy of the shipped
     * example serving a hub it was not written for, so it starts, and says once what it ignores.
     */
    List<String> inertOptionWarnings() {
        GivenOptions given = new GivenOptions(command);
        List<String> warnings = new ArrayList<>();
        if (meshId == null) {
            needs(given, NEED_MESH_ID, "--mesh-id", "they configure a mesh node", warnings);
        }
        if (db == null) {
            needs(given, NEED_DB, "--db", "without it nothing is journaled, snapshotted or retained", warnings);
        } else if (meshId == null && !"all".equals(journalKeepRows) && snapshotInterval == 0 && snapshotEveryRows == 0
                && noShutdownSnapshot) {
            throw new IllegalArgumentException("--journal-keep-rows " + journalKeepRows + " needs a snapshot: retention "
                    + "deletes rows only after one, and --snapshot-interval 0, --snapshot-every-rows 0 and "
                    + "--no-shutdown-snapshot take none; give a snapshot trigger, or --journal-keep-rows all");
        } else if (meshId == null && !"all".equals(journalKeepRows) && snapshotsKept == 1) {
            warnings.add("--journal-keep-rows " + journalKeepRows + " with --snapshots-kept 1: retention deletes the rows"
                    + " the one snapshot covers, so nothing is left to fall back on; if that snapshot is damaged the hub"
                    + " cannot start from this journal (restore a backup). Keep 2 or more snapshots to have a fallback");
        }
        return warnings;
    }

    private static void needs(GivenOptions given, List<String> options, String needed, String why,
                              List<String> warnings) {
        List<String> onCommandLine = new ArrayList<>();
        List<String> inFile = new ArrayList<>();
        for (String option : options) {
            switch (given.source(option)) {
                case COMMAND_LINE -> onCommandLine.add(option);
                case CONFIG_FILE -> inFile.add(option.substring(2));
                case DEFAULT -> { }
            }
        }
        require(onCommandLine.isEmpty(), String.join(", ", onCommandLine) + (onCommandLine.size() == 1 ? " needs "
                : " need ") + needed + " (" + why + ")");
        if (!inFile.isEmpty()) {
            warnings.add("the --config file sets " + String.join(", ", inFile) + ", which take effect only with "
                    + needed + " (" + why + "); ignored");
        }
    }

    /** The validated hub settings; throws {@link IllegalArgumentException} with an operator-facing message. */
    HubConfig hubConfig() {
        String effectiveToken = resolveToken();
        String effectiveMetricsToken = resolveMetricsToken();
        require(effectiveMetricsToken == null || metrics, (metricsToken != null && !metricsToken.isEmpty()
                ? "--metrics-token" : "--metrics-token-file") + " is read only with --metrics");
        require(!metricsQueryTokenOk || effectiveMetricsToken != null,
                "--metrics-query-token-ok needs a metrics token (--metrics-token-file)");
        if (!isLoopback(host) && !insecureOffLoopback) {
            // contract §10 and its --host row: off loopback, agents' traffic is authenticated and encrypted,
            // and the HTTP endpoints ask for a token of their own
            require(effectiveToken != null, "refusing to bind " + host + " without a connect token: set --token-file "
                    + "(or --insecure-off-loopback to accept the risk)");
            require(tlsCertFile != null, "refusing to bind " + host + " without TLS: set --tls-certfile and "
                    + "--tls-keyfile (or --insecure-off-loopback to accept the risk)");
            require(!metrics || effectiveMetricsToken != null, "refusing to serve --metrics on " + host
                    + " without a metrics token: set --metrics-token-file (or --insecure-off-loopback to accept the risk)");
        }
        // an empty --db (db= in a file, or an unset variable) would name the working directory
        require(db == null || !db.toString().isBlank(), "--db must name a journal file; it is empty");
        require(port >= 0 && port <= 65_535, "--port must be within 0..65535");
        require(maxMsgKb >= 1 && maxMsgKb <= MAX_MSG_KB, "--max-msg-kb must be within 1.." + MAX_MSG_KB
                + " (1 GiB)");
        Duration authTimeout = SecondsOption.positive("--auth-timeout", authTimeoutSeconds);
        require(leaseOfflineTtl >= 0 && Double.isFinite(leaseOfflineTtl),
                "--lease-offline-ttl must be a finite number >= 0 (got " + leaseOfflineTtl + ")");
        Duration shutdownCloseTimeout = SecondsOption.zeroOrPositive("--shutdown-close-timeout",
                shutdownCloseTimeoutSeconds, 3600, "drop them at once");
        require(messageAuthWindow > 0 && Double.isFinite(messageAuthWindow), "--message-auth-window-seconds must be positive");
        require(rate >= 0 && Double.isFinite(rate), "--rate must be >= 0");
        require(hostRate >= 0 && Double.isFinite(hostRate), "--host-rate must be >= 0");
        atLeast("--burst", burst, 1); // 0 answered every frame rate_limited, for good, once --rate was set
        atLeast("--host-burst", hostBurst, 1);
        require(authFailLimit >= 0, "--auth-fail-limit must be >= 0 (0 disables)");
        Duration authWindow = SecondsOption.within("--auth-fail-window", authFailWindow, SecondsOption.SMALLEST,
                MAX_AUTH_SECONDS, null);
        Duration backoff = SecondsOption.within("--auth-backoff", authBackoff, SecondsOption.SMALLEST,
                MAX_AUTH_SECONDS, null);
        Duration longestBackoff = SecondsOption.within("--auth-backoff-max", authBackoffMax, SecondsOption.SMALLEST,
                MAX_AUTH_SECONDS, null);
        require(longestBackoff.compareTo(backoff) >= 0, "--auth-backoff-max must be at least --auth-backoff ("
                + authBackoff + ")");
        require(authThrottleHosts >= 1, "--auth-throttle-hosts must be at least 1");
        Duration cooldown = SecondsOption.zeroOrPositive("--takeover-cooldown", takeoverCooldown,
                Double.POSITIVE_INFINITY, "no cooldown");
        // refused, not raised to the nearest value that works: the operator meant something else
        atLeast("--max-clients", maxClients, 1);
        atLeast("--max-unauth-clients", maxUnauthClients, 0);
        atLeast("--max-connections-per-host", maxConnectionsPerHost, 0);
        atLeast("--presence-fanout-limit", presenceFanoutLimit, 0);
        atLeast("--message-auth-replay-capacity", messageAuthReplayCapacity, 1);
        require(recipientLivenessWindow > 0 && Double.isFinite(recipientLivenessWindow),
                "--recipient-liveness-window must be a positive number of seconds");
        require(waiterLivenessWindow > 0 && Double.isFinite(waiterLivenessWindow),
                "--waiter-liveness-window must be a positive number of seconds");
        require(broadcastLingerMs >= 0 && broadcastLingerMs <= 1000, "--broadcast-linger-ms must be within 0..1000");
        require(transport.equals("auto") || transport.equals("nio"), "--transport must be auto or nio");
        require(Delivery.ofDefault(defaultDelivery) != null, "--default-delivery must be broadcast or scoped");
        require(maxFanoutBacklogMb >= 1, "--max-fanout-backlog-mb must be at least 1");
        require(maxFanoutDelayMs > broadcastLingerMs && maxFanoutDelayMs <= 3_600_000,
                "--max-fanout-delay-ms must be more than --broadcast-linger-ms (" + broadcastLingerMs
                        + ") and at most 3600000");
        require(maxFanoutWrites >= 1, "--max-fanout-writes must be at least 1");
        List<MessageAuthKey> keys = messageAuthKeys();
        require(!requireMessageAuth || !keys.isEmpty(), "--require-message-auth needs at least one --message-auth-key");
        require(!requireIdentityBinding || identityTrust != null, "--require-identity-binding needs --identity-trust FILE");
        require(identityTrust == null || requireIdentityBinding,
                "--identity-trust is read only with --require-identity-binding (the operator-bundle posture)");
        return HubConfig.builder()
                .tls(tlsFiles())
                .host(host).port(port).token(effectiveToken).hubId(effectiveHubId())
                .authTimeout(authTimeout)
                .shutdownCloseTimeout(shutdownCloseTimeout)
                .leaseOfflineTtlSeconds(leaseOfflineTtl)
                .maxClients(maxClients).maxUnauthClients(maxUnauthClients)
                .maxConnectionsPerHost(maxConnectionsPerHost)
                .maxFrameBytes(Math.multiplyExact(maxMsgKb, 1024))
                .messageAuthKeys(keys).requireMessageAuth(requireMessageAuth)
                .messageAuthWindowSeconds(messageAuthWindow)
                .messageAuthFutureSkewSeconds(SpecConstants.DEFAULT_MESSAGE_AUTH_FUTURE_SKEW_SECONDS)
                .messageAuthReplayCapacity(messageAuthReplayCapacity)
                .metricsEnabled(metrics).metricsAuth(new MetricsAuth(effectiveMetricsToken, metricsQueryTokenOk)).ui(ui).ratePerSecond(rate).rateBurst(burst)
                .hostRatePerSecond(hostRate).hostRateBurst(hostBurst)
                .authThrottle(new AuthThrottleSettings(authFailLimit, authWindow, backoff, longestBackoff,
                        authThrottleHosts, authThrottleLoopback))
                .privateDirectedMessages(privateDirectedMessages)
                .maxFindingsPerAgent(maxFindingsPerAgent)
                .warnStaleRecipients(warnStaleRecipients == null || warnStaleRecipients)
                .recipientLivenessWindowSeconds(recipientLivenessWindow)
                .waiterLivenessWindowSeconds(waiterLivenessWindow)
                .takeoverCooldown(cooldown)
                .advertisedHost(advertisedHost).allowOrigins(allowOrigins)
                .presenceFanoutLimit(presenceFanoutLimit)
                .defaultDelivery(Delivery.ofDefault(defaultDelivery))
                .broadcastLinger(Duration.ofMillis(broadcastLingerMs))
                .nativeTransport(transport.equals("auto"))
                .maxFanoutBacklogBytes(maxFanoutBacklogMb * 1024L * 1024)
                .maxFanoutDelay(Duration.ofMillis(maxFanoutDelayMs))
                .maxFanoutWrites(maxFanoutWrites)
                .hubVersion("synapse-hub-java/" + VersionProvider.version())
                .identityPins(new IdentityPinSettings(identityPinning == null || identityPinning, db == null ? null : db.toString(),
                        aclPolicy == null ? PinReclaimAcl.NONE : PinReclaimAcl.load(aclPolicy),
                        identityTrust == null ? null : dev.synapsehub.net.identity.IdentityTrust.load(identityTrust)))
                .build();
    }

    /** Native TLS files, or null for plain ws://; both flags or neither (contract F3's last row). */
    TlsFiles tlsFiles() {
        if (tlsCertFile == null && tlsKeyFile == null) {
            return null;
        }
        return new TlsFiles(tlsCertFile, tlsKeyFile, null);
    }

    /** Whether a mesh flag asks for a mesh node (validated by {@link #meshConfig()}). */
    boolean meshRequested() {
        return meshId != null || meshPeers != null;
    }

    /**
     * The mesh node settings, or null for a single hub. A mesh node needs --db: its Raft log
     * lives beside it, in {@code <db>.raft}.
     */
    MeshConfig meshConfig() {
        if (meshId == null && meshPeers == null) {
            require(!meshTls.given(), "--mesh-tls-* are for a mesh node: they need --mesh-id and --mesh-peers");
            require(!meshBootstrap, "--mesh-bootstrap is for a mesh node: it needs --mesh-id and --mesh-peers");
            return null;
        }
        require(meshId != null && meshPeers != null, "--mesh-id and --mesh-peers go together");
        require(!(meshBootstrap && meshGroup != null), "--mesh-bootstrap founds a new mesh and --mesh-group joins a"
                + " running one: give one of them");
        require(db != null, "a mesh node needs --db (its Raft log goes beside it, in <db>.raft)");
        Duration commitTimeout = SecondsOption.positive("--mesh-commit-timeout", meshCommitTimeout);
        meshCompaction(); // validated with the other mesh flags
        return new MeshConfig(meshId, MeshPeer.parseList(meshPeers), meshStorage(),
                commitTimeout, MeshConfig.DEFAULT_ELECTION_MIN,
                MeshConfig.DEFAULT_ELECTION_MAX, meshGroupId()).withTls(meshTls.load()).withBootstrap(meshBootstrap);
    }

    /**
     * The Raft group the node runs: the one its storage holds (kept through membership changes,
     * so a restart with today's --mesh-peers does not start an empty group beside it), else
     * --mesh-group, else null (derived from the peers).
     */
    private java.util.UUID meshGroupId() {
        java.util.UUID given = null;
        if (meshGroup != null) {
            try {
                given = java.util.UUID.fromString(meshGroup.strip());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--mesh-group '" + meshGroup + "' is not a UUID");
            }
        }
        java.util.UUID stored;
        try {
            stored = dev.synapsehub.mesh.MeshGroup.inStorage(meshStorage());
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("cannot read the mesh storage " + meshStorage() + ": " + e.getMessage());
        }
        require(stored == null || given == null || stored.equals(given), "--mesh-group " + given
                + " differs from the group " + stored + " in " + meshStorage() + "; a node stays in its group");
        return stored != null ? stored : given;
    }

    /** The mesh node's log compaction (validated). */
    MeshCompaction meshCompaction() {
        require(meshSnapshotEvery >= 1 && meshSnapshotEvery <= 100_000_000,
                "--mesh-snapshot-every must be within 1..100000000 log entries");
        return MeshCompaction.every(meshSnapshotEvery);
    }

    /** Where a mesh node keeps its Raft log: beside the journal. */
    Path meshStorage() {
        return Path.of(db.toString() + ".raft");
    }

    /** --hub-id; for a mesh without one, the id derived from its membership (the same on every node). */
    private String effectiveHubId() {
        if (hubId != null || meshId == null) {
            return hubId;
        }
        MeshConfig mesh = meshConfig();
        return mesh.defaultHubId();
    }

    /** The claim registry's bounds. */
    RegistryLimits registryLimits() {
        require(maxClaimsPerAgent >= 1, "--max-claims-per-agent must be at least 1");
        require(maxPathsPerClaim >= 1, "--max-paths-per-claim must be at least 1");
        return RegistryLimits.DEFAULTS.withMaxClaimsPerPrincipal(maxClaimsPerAgent).withMaxDeclaredPaths(maxPathsPerClaim);
    }

    /** A fresh, empty coordination state with every configured bound. */
    CoordinationState newState() {
        require(maxHistory >= 1, "--max-history must be at least 1");
        require(deadLetterEscalation >= 0, "--dead-letter-escalation must be >= 0");
        atLeast("--max-progress", maxProgress, 1);
        atLeast("--max-progress-per-author", maxProgressPerAuthor, 1);
        atLeast("--max-progress-per-task", maxProgressPerTask, 1);
        require(maxOffersPerAgent >= 1, "--max-offers-per-agent must be at least 1");
        require(boardTaskCap >= 0, "--board-task-cap must be >= 0");
        return new CoordinationState(registryLimits(), CoordinationState.DEFAULT_IDEMPOTENCY_CAPACITY,
                new BoardLimits(maxProgress, maxProgressPerAuthor, maxProgressPerTask, boardTaskCap),
                new ResourceLimits(maxOffersPerAgent, ResourceLimits.DEFAULTS.ttlSeconds()),
                MessagingLimits.DEFAULTS.withMaxHistory(maxHistory).withEscalationThreshold(deadLetterEscalation));
    }

    /** When state snapshots are taken (used with {@code --db}). */
    SnapshotPolicy snapshotPolicy() {
        require(snapshotInterval >= 0 && Double.isFinite(snapshotInterval), "--snapshot-interval must be >= 0");
        require(snapshotEveryRows >= 0, "--snapshot-every-rows must be >= 0");
        require(snapshotsKept >= 1, "--snapshots-kept must be at least 1");
        return new SnapshotPolicy(snapshotInterval, snapshotEveryRows, snapshotsKept, !noShutdownSnapshot);
    }

    /** How many journal rows retention keeps (used with {@code --db}). */
    Retention retention() {
        if ("all".equals(journalKeepRows)) {
            return Retention.keepAll();
        }
        try {
            long n = Long.parseLong(journalKeepRows);
            require(n >= 0, "--journal-keep-rows must be a number >= 0 or all");
            return new Retention(n);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--journal-keep-rows must be a number >= 0 or all", e);
        }
    }

    /** The validated {@code --log-format}, lower case (LogSetup chose the encoder from the same value). */
    String logFormat() {
        String format = logFormat.toLowerCase(java.util.Locale.ROOT);
        require(format.equals("text") || format.equals("json"), "--log-format must be text or json, not '" + logFormat
                + "'" + (logFormat.equals(System.getenv("SYNAPSE_LOG_FORMAT")) ? " (from SYNAPSE_LOG_FORMAT)" : ""));
        return format;
    }

    /** The validated {@code --compact-hint-threshold}. */
    CompactHint compactHint() {
        return new CompactHint(compactHintThreshold);
    }

    /** The actor's bounds. */
    ActorSettings actorSettings() {
        require(queueCapacity >= 1, "--queue-capacity must be at least 1");
        require(maxBatch >= 1, "--max-batch must be at least 1");
        return new ActorSettings(queueCapacity, maxBatch, ActorSettings.DEFAULTS.slowCommitMillis());
    }

    /** One line per effective setting, secrets masked, for the start-up log. */
    Map<String, Object> effectiveSummary(HubConfig config, RegistryLimits limits, ActorSettings actor) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("bind", config.host() + ":" + config.port());
        m.put("hub_id", config.hubId());
        m.put("journal", db == null ? "in-memory (no --db: nothing survives a restart)" : db.toAbsolutePath());
        if (db != null && meshId != null) {
            // a node's Raft log compacts by --mesh-snapshot-every (below); these flags are the single hub's
            m.put("snapshots", "by the mesh (--snapshot-*, --journal-keep-rows and --compact-hint-threshold do not"
                    + " apply to a mesh node)");
        } else if (db != null) {
            m.put("snapshots", (snapshotInterval == 0 ? "no timer" : "every " + snapshotInterval + " s") + ", "
                    + (snapshotEveryRows == 0 ? "no row count" : "every " + snapshotEveryRows + " rows") + ", "
                    + snapshotsKept + " kept" + (noShutdownSnapshot ? "" : ", one at shutdown"));
            m.put("journal_keep_rows", journalKeepRows);
            m.put("compact_hint_threshold", compactHintThreshold == 0 ? "off" : compactHintThreshold);
        }
        m.put("tls", config.tls() == null ? "off (ws://)" : "wss:// with " + config.tls().certFile()
                + (config.tls().clientCaFile() == null ? "" : ", client certificates from " + config.tls().clientCaFile()));
        if (meshId != null) {
            m.put("mesh", "node " + meshId + " of " + meshPeers + ", group " + meshConfig().groupId()
                    + ", raft log " + meshStorage().toAbsolutePath()
                    + ", commit timeout " + meshCommitTimeout + " s, snapshot every " + meshSnapshotEvery
                    + " log entries" + (meshBootstrap ? ", may found a new mesh (--mesh-bootstrap)" : ""));
            m.put("mesh_tls", meshTls.given() ? meshTls.load().describe()
                    : "off: Raft traffic is plain gRPC, unauthenticated (seed 001 §15 wants --mesh-tls-*)");
        }
        m.put("log_format", LogSetup.activeFormat()); // what the lines are, whatever a --config file said
        m.put("token", config.secured() ? "set (" + tokenSource() + ")" : "none (open hub)");
        m.put("auth_timeout_s", config.authTimeout().toMillis() / 1000.0);
        m.put("shutdown_close_timeout_s", config.shutdownCloseTimeout().toMillis() / 1000.0);
        m.put("lease_offline_ttl_s", config.leaseOfflineTtlSeconds());
        m.put("max_clients", config.maxClients());
        m.put("max_unauth_clients", config.maxUnauthClients());
        m.put("max_connections_per_host", config.maxConnectionsPerHost());
        m.put("max_frame_bytes", config.maxFrameBytes());
        m.put("max_claims_per_principal", limits.maxClaimsPerPrincipal());
        m.put("max_declared_paths", limits.maxDeclaredPaths());
        m.put("default_lease_ttl_s", limits.defaultTtlSeconds());
        m.put("message_auth", config.messageAuthKeys().size() + " key(s), "
                + (config.requireMessageAuth() ? "required" : "not required") + ", window "
                + config.messageAuthWindowSeconds() + " s, replay capacity " + config.messageAuthReplayCapacity());
        m.put("metrics", config.metricsEnabled());
        m.put("metrics_token", !config.metricsAuth().secured() ? "none"
                : "set (" + (metricsToken != null && !metricsToken.isEmpty() ? "--metrics-token" : "--metrics-token-file")
                + (config.metricsAuth().queryTokenOk() ? "; ?token= accepted" : "") + ")");
        m.put("ui", config.ui() ? "cockpit at /ui" : "off");
        m.put("advertised_host", config.advertisedHost() == null ? "none" : config.advertisedHost());
        m.put("allow_origin", config.allowOrigins().isEmpty() ? "none (a handshake with an Origin header is refused)"
                : config.allowOrigins());
        m.put("identity_binding", config.identityPins().requiresBinding() ? "required, trust "
                + identityTrust.toAbsolutePath() : "off");
        m.put("acl_policy", aclPolicy == null ? "none" : aclPolicy.toAbsolutePath());
        m.put("identity_pinning", config.identityPins().enabled() ? "on (" + (meshId != null ? "pins replicated" : db == null ? "pins in memory" : "pins journaled")
                + ", " + config.identityPins().acl().grants().size() + " reclaim grant(s))" : "off");
        m.put("private_directed_messages", config.privateDirectedMessages());
        m.put("warn_stale_recipients", config.warnStaleRecipients() ? "on" : "off (socket presence)");
        m.put("recipient_liveness_window_s", config.recipientLivenessWindowSeconds());
        m.put("waiter_liveness_window_s", config.waiterLivenessWindowSeconds());
        m.put("max_findings_per_agent", config.maxFindingsPerAgent());
        m.put("relay_log", relayLog == null ? "off" : relayLog.toAbsolutePath() + ", cut to the last " + relayMaxLines
                + " lines every " + relayMaxLines + " appends");
        m.put("takeover_cooldown_s", config.takeoverCooldown().toMillis() / 1000.0);
        m.put("presence_fanout", config.presenceFanoutLimit() == 0 ? "always" : "up to " + config.presenceFanoutLimit() + " sockets");
        m.put("default_delivery", config.defaultDelivery().mode().wire());
        m.put("broadcast_linger_ms", config.broadcastLinger().toMillis());
        m.put("max_fanout_backlog_mb", config.maxFanoutBacklogBytes() >> 20);
        m.put("max_fanout_delay_ms", config.maxFanoutDelay().toMillis());
        m.put("max_fanout_writes", config.maxFanoutWrites());
        m.put("transport", NetTransport.choose(config.nativeTransport()).name().toLowerCase(java.util.Locale.ROOT));
        m.put("max_history", maxHistory);
        m.put("dead_letter_escalation", deadLetterEscalation == 0 ? "off" : "every " + deadLetterEscalation);
        m.put("board_notes", maxProgress + " total, " + maxProgressPerAuthor + " per author, " + maxProgressPerTask
                + " per task");
        m.put("max_offers_per_agent", maxOffersPerAgent);
        m.put("board_task_cap", boardTaskCap == 0 ? "off" : boardTaskCap);
        m.put("rate_per_s", config.ratePerSecond() == 0 ? "off" : config.ratePerSecond() + " burst " + config.rateBurst());
        m.put("host_rate_per_s", config.hostRatePerSecond() == 0 ? "off"
                : config.hostRatePerSecond() + " burst " + config.hostRateBurst());
        AuthThrottleSettings throttle = config.authThrottle();
        m.put("auth_throttle", !throttle.enabled() ? "off" : throttle.failures() + " failures in "
                + throttle.window().toMillis() / 1000.0 + " s, back-off " + throttle.backoff().toMillis() / 1000.0 + ".."
                + throttle.maxBackoff().toMillis() / 1000.0 + " s, " + throttle.hosts() + " hosts"
                + (throttle.loopback() ? ", loopback too" : ", loopback exempt"));
        m.put("actor", "queue " + actor.queueCapacity() + ", batch " + actor.maxBatch());
        return m;
    }

    Path db() {
        return db;
    }

    /** {@code --relay-log}, or null when off. */
    Path relayLog() {
        require(relayMaxLines >= 1, "--relay-max-lines must be at least 1");
        return relayLog;
    }

    int relayMaxLines() {
        return relayMaxLines;
    }

    private String tokenSource() {
        if (token != null && !token.isEmpty()) {
            return "--token";
        }
        return tokenFile != null ? "--token-file" : "SYNAPSE_TOKEN";
    }

    /**
     * What {@code --insecure-off-loopback} waives for this configuration (contract: the bind
     * refusals become warnings): empty on loopback or when nothing is waived.
     */
    /**
     * A warning when {@code --token} was given empty and no other source names a token: as in the
     * reference, an empty token counts as none and the hub is open, which a unit passing an unset
     * variable ({@code --token "$TOKEN"}) would not notice otherwise. Null when there is nothing to say.
     * Reads the token {@code config} resolved, so no token file is read twice.
     */
    String emptyTokenWarning(HubConfig config) {
        if (token == null || !token.isEmpty() || config.token() != null) {
            return null;
        }
        return "--token is empty and no --token-file or SYNAPSE_TOKEN names a token: the hub is open, any agent"
                + " connects without one";
    }

    /**
     * The start-up warning for identity pinning without a durable store, or null when pins are
     * journaled (--db), replicated (a mesh), not kept (off, or the operator-bundle posture). The
     * contract says pins survive restarts (A2.5); in memory they do not, and a name pinned before
     * a restart may then be pinned by any key.
     */
    String volatilePinsWarning(HubConfig config) {
        if (!config.identityPins().enabled() || config.identityPins().requiresBinding() || db != null
                || meshId != null) {
            return null;
        }
        return "identity pins are kept in memory only (no --db): every pin is lost when the hub stops, so after a "
                + "restart any key may pin a name again, though the contract says pins survive restarts; give --db FILE "
                + "to journal them (this hub has no --identity-pins file; `synapse-hub import --identity-pins FILE` "
                + "loads a reference pin file into a journal), or --no-identity-pinning to say pins are not wanted";
    }

    List<String> waivedOffLoopback(HubConfig config) {
        List<String> waived = new ArrayList<>();
        if (isLoopback(host) || !insecureOffLoopback) {
            return waived;
        }
        if (config.token() == null) {
            waived.add("a connect token");
        }
        if (config.tls() == null) {
            waived.add("TLS");
        }
        if (config.metricsEnabled() && !config.metricsAuth().secured()) {
            waived.add("a metrics token");
        }
        return waived;
    }

    private String resolveMetricsToken() {
        if (metricsToken != null && !metricsToken.isEmpty()) {
            return metricsToken;
        }
        return metricsTokenFile == null ? null : firstLine(metricsTokenFile, "--metrics-token-file");
    }

    /** The stripped first line of a secret's file; empty or unreadable is refused naming {@code option}. */
    private static String firstLine(Path file, String option) {
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            String first = lines.isEmpty() ? "" : lines.get(0).strip();
            require(!first.isEmpty(), option + " " + file + " is empty");
            return first;
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + option + " " + file + ": "
                    + dev.synapsehub.journal.WriterLock.reason(e), e);
        }
    }

    private String resolveToken() {
        if (token != null && !token.isEmpty()) {
            return token;
        }
        if (tokenFile != null) {
            return firstLine(tokenFile, "--token-file");
        }
        String env = System.getenv("SYNAPSE_TOKEN");
        return env == null || env.isBlank() ? null : env.strip();
    }

    private List<MessageAuthKey> messageAuthKeys() {
        List<String> specs = new ArrayList<>(messageAuthKeys);
        if (messageAuthKeyFile != null) {
            try {
                for (String line : Files.readAllLines(messageAuthKeyFile, StandardCharsets.UTF_8)) {
                    String s = line.strip();
                    if (!s.isEmpty() && !s.startsWith("#")) {
                        specs.add(s);
                    }
                }
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read --message-auth-key-file " + messageAuthKeyFile
                        + ": " + e.getMessage(), e);
            }
        }
        List<MessageAuthKey> keys = new ArrayList<>();
        for (String spec : specs) {
            try {
                keys.add(MessageAuthKey.parse(spec));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("bad message-auth key (" + e.getMessage() + ")", e);
            }
        }
        return keys;
    }

    private static boolean isLoopback(String host) {
        // an IPv4 literal in 127.0.0.0/8, not any name that starts with "127." (127.example.com is a host name)
        return host.equals("localhost") || isLoopbackV4Literal(host) || host.equals("::1") || host.equals("[::1]");
    }

    static boolean isLoopbackV4Literal(String host) {
        String[] parts = host.split("\\.", -1);
        if (parts.length != 4 || !parts[0].equals("127")) {
            return false;
        }
        for (String p : parts) {
            if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(c -> c >= '0' && c <= '9') || Integer.parseInt(p) > 255) {
                return false;
            }
        }
        return true;
    }

    /** Refuses {@code value} below {@code min}, naming the option, its range and the value. */
    private static void atLeast(String option, long value, long min) {
        require(value >= min, option + " must be at least " + min + " (got " + value + ")");
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
