package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.journal.InMemoryJournal;
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
 * The cockpit stays usable over a fleet of 10,000 agents and 100,000 live claims, in a real
 * headless Chromium: the page renders, filters run on the hub, paging moves through the fleet,
 * and the page never holds more than one page of rows whatever the state's size. (That a claim
 * arrives live is {@code CockpitBrowserTest}'s: here the 10,000 owners, none with a waiter, get
 * their dark-seat alerts broadcast 30 s after the load, and while that queue drains the hub
 * answers new requests 'busy', as its admission control should.)
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
    private static final Duration LIVE = Duration.ofSeconds(30);
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
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), new InMemoryJournal(), Clock.system(),
                ActorSettings.DEFAULTS);
        actor.start();
        EventLoopGroup group = new NioEventLoopGroup(2);
        List<HubClient> online = new ArrayList<>();
        try (TestHub hub = new TestHub(HubConfig.builder().ui(true).maxClients(AGENTS + 64).maxConnectionsPerHost(0),
                actor, Clock.system())) {
            registerFleet(hub, group, online);
            // the claims' owners have no waiters, so 30 s after the load every one of them is alerted
            // (dark seats, broadcast): loaded after the registrations, which that flood would slow
            double now = Clock.system().nowSeconds();
            actor.applyReplicated(state -> {
                for (int i = 0; i < CLAIMS; i++) {
                    String owner = String.format("crew/owner-%05d", i % OWNERS);
                    String task = String.format("task-%06d", i);
                    state.apply(new ClaimSnapshotEvent(now, ClaimSnapshotEvent.Kind.CLAIM, new Claim(task, owner, owner,
                            "", now, now + 3600, ClaimStatus.CLAIMED, null, "repo", List.of("src/" + task), i + 1L, 0,
                            "", null)));
                }
                return null;
            }).get(LIVE.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);

            driver.get("http://127.0.0.1:" + hub.port + "/ui/#claims");
            visible("#claims-rows tr[data-task='task-000000']");
            waitText("#live", "live");
            waitText("#stat-claims", "100000");
            waitText("#claims-page-info", "1–100 of 100000");
            assertThat(rows("#claims-rows tr[data-task]")).isEqualTo(100);
            assertThat(rowsInPage()).as("the page holds one page of rows, not the fleet").isLessThan(400);
            screenshot("cockpit-fleet.png");

            // the filter runs on the hub over all 100,000: one owner's ten claims
            filter("filter-claims", "crew/owner-04242");
            waitText("#claims-page-info", "1–10 of 10 matching (100000 in all)");
            assertThat(rows("#claims-rows tr[data-task]")).isEqualTo(10);
            // a filter matching 10,000 still sends one page
            filter("filter-claims", "src/task-05");
            waitText("#claims-page-info", "1–100 of 10000 matching");
            assertThat(rows("#claims-rows tr[data-task]")).isEqualTo(100);
            driver.findElement(By.cssSelector(".pager[data-for='claims'] button:last-child")).click();
            waitText("#claims-page-info", "101–200 of 10000 matching");
            visible("#claims-rows tr[data-task='task-050100']");
            assertThat(rows("#claims-rows tr[data-task]")).isEqualTo(100);

            // presence: 10,000 remembered agents, one page of them, filtered on the hub
            driver.findElement(By.cssSelector("#tabs a[data-view='presence']")).click();
            visible("#presence-rows tr[data-agent]");
            waitText("#presence-page-info", "1–100 of " + AGENTS);
            assertThat(rows("#presence-rows tr[data-agent]")).isEqualTo(100);
            filter("filter-presence", "agent-0999");
            waitText("#presence-page-info", "1–10 of 10 matching (" + AGENTS + " in all)");
            driver.findElement(By.id("presence-online")).click();
            filter("filter-presence", "fleet/");
            waitText("#presence-page-info", "1–" + STAY_ONLINE + " of " + STAY_ONLINE + " matching");
            assertThat(rowsInPage()).isLessThan(400);

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
        while (hub.server.context().registry().lastSeen().size() < AGENTS
                || hub.server.context().registry().online().size() < STAY_ONLINE) {
            assertThat(System.nanoTime()).as("the hub remembers every agent in time (remembered %d, online %d)",
                    hub.server.context().registry().lastSeen().size(), hub.server.context().registry().online().size())
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

    private static void visible(String css) {
        new WebDriverWait(driver, LIVE).until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(css)));
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
