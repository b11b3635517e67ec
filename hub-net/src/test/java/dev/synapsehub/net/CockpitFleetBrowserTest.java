package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.board.BoardStatus;
import dev.synapsehub.core.board.BoardTask;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.event.LedgerTaskEvent;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.messaging.MessagingLimits;
import dev.synapsehub.core.state.CoordinationState;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.logging.Level;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The cockpit stays usable over a fleet of 10,000 agents, 100,000 live claims, 10,000 board
 * tasks and 10,000 chats to absent seats (as many dead letters and mailbox backlogs as the core
 * keeps of them), in a real headless Chromium: the lists are virtualised (the page holds only the rows in
 * view plus a small overscan, {@link #MAX_DRAWN} at most, whatever the state's size), scrolling
 * to the middle or the end fetches and draws the rows there, filters run on the hub, and the
 * browser logs no console error. (That a claim arrives live is {@code CockpitBrowserTest}'s. The
 * hub's clock stops once the fleet is loaded, so the 10,000 owners, none with a waiter, never
 * reach the 30 s after which each would get a dark-seat alert broadcast to every agent online.)
 *
 * <p>How the fleet is loaded, honestly: the 10,000 agents register through the real
 * registration verb on the real port, each on a socket of its own that closes afterwards, with
 * at most {@link #PARALLEL} sockets open at once (a 2-core CI machine does not hold 10,000 open
 * sockets and a browser well), so the hub remembers them all with their last-seen times and
 * {@link #STAY_ONLINE} stay online; then the 100,000 claims (held by 10,000 owners) are applied
 * to the state in process through the writer, as a replica applies committed changes (not
 * journaled, not fed to the page: it loads them afterwards). Nothing here measures time.
 */
class CockpitFleetBrowserTest {
    private static final int CLAIMS = 100_000;
    private static final int OWNERS = 10_000;
    private static final int AGENTS = 10_000;
    private static final int PARALLEL = 8;
    private static final int STAY_ONLINE = 40;
    private static final int TASKS = 10_000;
    private static final Duration LIVE = Duration.ofSeconds(30);
    /** Rows a virtualised list draws at most: a 900-pixel window's worth and the overscan, with room to spare. */
    private static final int MAX_DRAWN = 80;
    /** Rows (table rows and list items) in the whole page at most, every view together. */
    private static final int MAX_IN_PAGE = 400;
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static WebDriver driver;

    @BeforeAll
    static void browser() {
        assertThat(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER))
                .as("the cockpit's browser tests need Debian's chromium and chromium-driver: apt-get install -y "
                        + "chromium chromium-driver (.ci/run does this)")
                .isTrue();
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1440,900", "--no-first-run", "--disable-extensions", "--disable-background-networking",
                "--disable-sync", "--disable-component-update", "--disable-default-apps");
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability("goog:loggingPrefs", logs);
        driver = new ChromeDriver(new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort().build(), options);
        driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(60));
    }

    @AfterAll
    static void quit() {
        if (driver != null) {
            driver.quit();
        }
    }

    @Test
    void tenThousandAgentsAndAHundredThousandClaimsStayPagedAndFilteredOnTheHub() throws Exception {
        // the hub's time stops once the fleet is loaded: the 10,000 claims' owners have no waiters,
        // and 30 s of hub time later every one of them would be alerted (broadcast to the 40
        // agents online), a flood that is DarkSeatWireTest's business, not this test's
        Clock system = Clock.system();
        java.util.concurrent.atomic.AtomicReference<Double> stopped = new java.util.concurrent.atomic.AtomicReference<>();
        Clock clock = () -> {
            Double at = stopped.get();
            return at != null ? at : system.nowSeconds();
        };
        InMemoryJournal journal = new InMemoryJournal();
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), journal, clock, ActorSettings.DEFAULTS);
        actor.start();
        EventLoopGroup group = new NioEventLoopGroup(2);
        List<HubClient> online = new ArrayList<>();
        // the edge gets the journal too: a hub without one has no mailboxes, so no backlogs to list
        try (TestHub hub = new TestHub(HubConfig.builder().ui(true).maxClients(AGENTS + 64).maxConnectionsPerHost(0),
                actor, clock, journal)) {
            registerFleet(hub, group, online);
            double now = clock.nowSeconds();
            stopped.set(now);
            actor.applyReplicated(state -> {
                for (int i = 0; i < CLAIMS; i++) {
                    String owner = String.format("crew/owner-%05d", i % OWNERS);
                    String task = String.format("task-%06d", i);
                    state.apply(new ClaimSnapshotEvent(now, ClaimSnapshotEvent.Kind.CLAIM, new Claim(task, owner, owner,
                            "", now, now + 3600, ClaimStatus.CLAIMED, null, "repo", List.of("src/" + task), i + 1L, 0,
                            "", null)));
                }
                // 10,000 chats to seats that never came: dead letters and mailbox backlogs (bounded by the core)
                for (int i = 0; i < TASKS; i++) {
                    String seat = String.format("gone/seat-%05d", i);
                    state.apply(new ChatEvent(now, i + 1L, "crew/lead", seat, null, true, List.of(seat), "{}"));
                }
                for (int i = 0; i < TASKS; i++) {
                    state.apply(new LedgerTaskEvent(now, new BoardTask(String.format("board-%05d", i), "task " + i, "",
                            List.of(), BoardStatus.OPEN, "", "fleet", 1, "crew/lead", now, now), null));
                }
                return null;
            }).get(LIVE.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);

            driver.get("http://127.0.0.1:" + hub.port + "/ui/#claims");
            visible("#claims-rows tr[data-task='task-000000']");
            waitText("#live", "live");
            waitText("#stat-claims", "100000");
            waitText("#claims-page-info", " of 100000");
            assertThat(text("#claims-page-info")).startsWith("1–");
            bounded("#claims-rows tr[data-task]");
            assertThat(rowsInPage()).as("the page holds the rows in view, not the fleet").isLessThan(MAX_IN_PAGE);
            screenshot("cockpit-fleet.png");

            // scrolled to the middle and to the end: the rows there are fetched and drawn, no more
            scrollTo("claims-scroll", 0.5);
            visible("#claims-rows tr[data-task='task-050000']");
            bounded("#claims-rows tr[data-task]");
            scrollTo("claims-scroll", 1.0);
            visible("#claims-rows tr[data-task='task-099999']");
            waitText("#claims-page-info", "100000 of 100000");
            assertThat(rows("#claims-rows tr[data-task='task-000000']")).as("the first rows left the page").isZero();
            bounded("#claims-rows tr[data-task]");
            assertThat(rowsInPage()).isLessThan(MAX_IN_PAGE);

            // the filter runs on the hub over all 100,000: one owner's ten claims, the list back at the top
            filter("filter-claims", "crew/owner-04242");
            waitText("#claims-page-info", "1–10 of 10 matching (100000 in all)");
            assertThat(rows("#claims-rows tr[data-task]")).isEqualTo(10);
            // a filter matching 10,000 still draws only the rows in view, down to its last one
            filter("filter-claims", "src/task-05");
            waitText("#claims-page-info", " of 10000 matching");
            visible("#claims-rows tr[data-task='task-050000']");
            bounded("#claims-rows tr[data-task]");
            scrollTo("claims-scroll", 1.0);
            visible("#claims-rows tr[data-task='task-059999']");
            waitText("#claims-page-info", "10000 of 10000 matching");
            bounded("#claims-rows tr[data-task]");

            // presence: 10,000 remembered agents, the rows in view of them, filtered on the hub
            driver.findElement(By.cssSelector("#tabs a[data-view='presence']")).click();
            visible("#presence-rows tr[data-agent]");
            waitText("#presence-page-info", " of " + AGENTS);
            bounded("#presence-rows tr[data-agent]");
            scrollTo("presence-scroll", 1.0);
            visible("#presence-rows tr[data-agent='fleet/agent-09999']");
            waitText("#presence-page-info", AGENTS + " of " + AGENTS);
            bounded("#presence-rows tr[data-agent]");
            filter("filter-presence", "agent-0999");
            waitText("#presence-page-info", "1–10 of 10 matching (" + AGENTS + " in all)");
            driver.findElement(By.id("presence-online")).click();
            filter("filter-presence", "fleet/");
            waitText("#presence-page-info", " of " + STAY_ONLINE + " matching");
            bounded("#presence-rows tr[data-agent]");
            scrollTo("presence-scroll", 1.0);
            visible("#presence-rows tr[data-agent='fleet/agent-09999']");
            waitText("#presence-page-info", STAY_ONLINE + " of " + STAY_ONLINE + " matching");
            assertThat(text("#presence-rows tr[data-agent='fleet/agent-09999']")).contains("online");

            // the board: 10,000 open tasks in one column, drawn as the rows in view, down to the last
            driver.findElement(By.cssSelector("#tabs a[data-view='board']")).click();
            visible("#board-open-cards .card[data-task='board-00000']");
            waitText("#board-open-count", String.valueOf(TASKS));
            bounded("#board-open-cards .card");
            scrollTo("board-open-scroll", 1.0);
            visible("#board-open-cards .card[data-task='board-09999']");
            bounded("#board-open-cards .card");
            filter("filter-board", "board-0424");
            waitText("#board-open-count", "10");
            new WebDriverWait(driver, LIVE).until(d -> rows("#board-open-cards .card") == 10);
            assertThat(rowsInPage()).isLessThan(MAX_IN_PAGE);

            // dead letters and mailbox backlogs: the core keeps the newest 200 dead-letter targets and
            // 512 mailboxes of the 10,000 (MessagingLimits); each list draws the rows in view of them
            int dead = MessagingLimits.DEFAULTS.deadLetterTargets();
            int mailboxes = MessagingLimits.DEFAULTS.mailboxIdentities();
            driver.findElement(By.cssSelector("#tabs a[data-view='messaging']")).click();
            String firstKept = String.format("gone/seat-%05d", TASKS - mailboxes);
            visible("#backlog-rows tr[data-identity='" + firstKept + "']");
            waitText("#dead-page-info", " of " + dead);
            waitText("#backlogs-page-info", " of " + mailboxes);
            bounded("#dead-rows tr[data-target]");
            bounded("#backlog-rows tr[data-identity]");
            scrollTo("backlog-scroll", 1.0);
            visible("#backlog-rows tr[data-identity='gone/seat-09999']");
            waitText("#backlogs-page-info", mailboxes + " of " + mailboxes);
            assertThat(rows("#backlog-rows tr[data-identity='" + firstKept + "']")).as("the first rows left").isZero();
            scrollTo("dead-scroll", 1.0);
            waitText("#dead-page-info", dead + " of " + dead);
            bounded("#dead-rows tr[data-target]");
            bounded("#backlog-rows tr[data-identity]");
            filter("filter-messaging", "seat-0999");
            // (ten rows match: all drawn, though a half-height list has only eight in view)
            waitText("#dead-page-info", " of 10 matching (" + dead + " in all)");
            waitText("#backlogs-page-info", " of 10 matching (" + mailboxes + " in all)");
            new WebDriverWait(driver, LIVE).until(d -> rows("#dead-rows tr[data-target]") == 10
                    && rows("#backlog-rows tr[data-identity]") == 10);
            assertThat(rowsInPage()).isLessThan(MAX_IN_PAGE);

            assertThat(driver.manage().logs().get(LogType.BROWSER).getAll().stream()
                    .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue()).toList())
                    .as("console errors").isEmpty();
        } finally {
            group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /**
     * Registers {@link #AGENTS} names through the registration verb, {@link #PARALLEL} sockets at
     * a time; the last {@link #STAY_ONLINE} stay connected (returned in {@code online}).
     */
    private static void registerFleet(TestHub hub, EventLoopGroup group, List<HubClient> online) throws Exception {
        URI uri = URI.create("ws://127.0.0.1:" + hub.port);
        ExecutorService pool = Executors.newFixedThreadPool(PARALLEL);
        try {
            List<Future<?>> work = new ArrayList<>();
            for (int w = 0; w < PARALLEL; w++) {
                int worker = w;
                work.add(pool.submit(() -> {
                    for (int i = worker; i < AGENTS - STAY_ONLINE; i += PARALLEL) {
                        try (HubClient c = HubClient.connect(uri, LIVE, group)) {
                            register(c, String.format("fleet/agent-%05d", i));
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : work) {
                f.get(10, java.util.concurrent.TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
        for (int i = AGENTS - STAY_ONLINE; i < AGENTS; i++) {
            HubClient c = HubClient.connect(uri, LIVE, group);
            register(c, String.format("fleet/agent-%05d", i));
            online.add(c);
        }
        long deadline = System.nanoTime() + LIVE.toNanos();
        while (hub.server.services().registry().lastSeen().size() < AGENTS
                || hub.server.services().registry().online().size() < STAY_ONLINE) {
            assertThat(System.nanoTime()).as("the hub remembers every agent in time (remembered %d, online %d)",
                    hub.server.services().registry().lastSeen().size(), hub.server.services().registry().online().size())
                    .isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    /** Registers {@code name} and waits until the hub bound it (its own join; welcome comes at connect). */
    private static void register(HubClient c, String name) throws Exception {
        c.register(name, null, LIVE);
        c.await(f -> "presence_update".equals(f.path("type").asText()) && name.equals(f.path("agent").asText())
                && "joined".equals(f.path("event").asText()), LIVE);
    }

    private static String text(String css) {
        return String.valueOf(((JavascriptExecutor) driver).executeScript(
                "return document.querySelector(arguments[0]).innerText;", css));
    }

    private static void filter(String id, String text) {
        var input = driver.findElement(By.id(id));
        input.clear();
        input.sendKeys(text);
    }

    private static int rows(String css) {
        return ((Number) ((JavascriptExecutor) driver).executeScript(
                "return document.querySelectorAll(arguments[0]).length;", css)).intValue();
    }

    /** Every table row and list item in the page, all views together. */
    private static int rowsInPage() {
        return rows("tr, li");
    }

    /** The list's rows in the page: some, and no more than a window's worth (it is virtualised). */
    private static void bounded(String css) {
        assertThat(rows(css)).as("rows of %s in the page", css).isPositive().isLessThanOrEqualTo(MAX_DRAWN);
    }

    /** Scrolls list box {@code id} to {@code fraction} of its height (1.0: the end). */
    private static void scrollTo(String id, double fraction) {
        ((JavascriptExecutor) driver).executeScript("const s = document.getElementById(arguments[0]);"
                + " s.scrollTop = Math.round((s.scrollHeight - s.clientHeight) * arguments[1]);", id, fraction);
    }

    private static void visible(String css) {
        try {
            new WebDriverWait(driver, LIVE).until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(css)));
        } catch (org.openqa.selenium.TimeoutException e) {
            throw new AssertionError(css + " never showed; the page's status line: '" + text("#status") + "'", e);
        }
    }

    private static void waitText(String css, String part) {
        new WebDriverWait(driver, LIVE).until(ExpectedConditions.textToBePresentInElementLocated(By.cssSelector(css), part));
    }

    private static void screenshot(String name) throws Exception {
        File shot = ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE);
        Path dir = Path.of("target", "cockpit-screenshots");
        Files.createDirectories(dir);
        Files.copy(shot.toPath(), dir.resolve(name), StandardCopyOption.REPLACE_EXISTING);
        String docs = System.getProperty("cockpit.screenshots");
        if (docs != null && !docs.isBlank()) {
            Files.createDirectories(Path.of(docs));
            Files.copy(shot.toPath(), Path.of(docs).resolve(name), StandardCopyOption.REPLACE_EXISTING);
        }
    }
}
