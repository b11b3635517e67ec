package dev.synapsehub.net;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.logging.Level;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The cockpit in a real headless Chromium (Debian's {@code chromium} and {@code chromium-driver},
 * driven by Selenium) against a real hub on 127.0.0.1: the views render, a claim made by an agent
 * appears without a reload, a filter narrows the page on the server, a token hub shows nothing
 * without its token, and the browser logs no console error. Screenshots of the views go to
 * {@code target/cockpit-screenshots/}, and to the directory named by
 * {@code -Dcockpit.screenshots=DIR} (how {@code docs/img/} is refreshed).
 */
class CockpitBrowserTest {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final Duration LIVE = Duration.ofSeconds(20);
    private static WebDriver driver;

    @BeforeAll
    static void browser() {
        // never skipped: a machine without the browser fails here, saying what to install
        assertThat(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER))
                .as("the cockpit's browser test needs Debian's chromium and chromium-driver (" + CHROMIUM + ", "
                        + CHROMEDRIVER + "): apt-get install -y chromium chromium-driver (.ci/run does this)")
                .isTrue();
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1440,900", "--no-first-run", "--disable-extensions", "--disable-background-networking",
                "--disable-sync", "--disable-component-update", "--disable-default-apps");
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability("goog:loggingPrefs", logs);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort()
                .build();
        driver = new ChromeDriver(service, options);
        driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
    }

    /**
     * Each test starts on a blank page with an empty log. The driver is shared, and the page a test
     * left open keeps reconnecting to that test's hub, closed by now, logging every refused load
     * ({@code net::ERR_CONNECTION_REFUSED}) until it is unloaded; a later test's navigation only
     * unloads it once the new page commits, which on a loaded machine can be after its next retry.
     */
    @BeforeEach
    void blankPage() {
        driver.get("about:blank");
        consoleErrors(true); // what the unloaded page logged before it went
    }

    @AfterAll
    static void quit() {
        if (driver != null) {
            driver.quit();
        }
    }

    /** A hub with a journal (so mailboxes keep their backlog) and the cockpit on. */
    private static TestHub hub(HubConfig.Builder config) throws InterruptedException {
        InMemoryJournal journal = new InMemoryJournal();
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), journal, Clock.system(),
                ActorSettings.DEFAULTS);
        actor.start();
        return new TestHub(config.ui(true), actor, Clock.system(), journal);
    }

    @Test
    void theViewsRenderUpdateLiveAndFilterWithoutConsoleErrors() throws Exception {
        try (TestHub hub = hub(HubConfig.builder())) {
            CockpitDemo.populate(hub);
            driver.get("http://127.0.0.1:" + hub.port + "/ui/#claims");
            row("#claims-rows tr[data-task='api/parser']");
            assertThat(text("#stat-claims")).isNotEqualTo("–");
            waitText("#live", "live");
            ((JavascriptExecutor) driver).executeScript("window.cockpitMarker = 'same page';");

            HubClient late = hub.agent("fleet/late-comer");
            claim(late, "zz/live-claim", "repo", "src/live");
            String live = "#claims-rows tr[data-task='zz/live-claim']";
            assertThat(rowText(live)).contains("fleet/late-comer").contains("repo: src/live");
            assertThat(rowText(live + " td.lease")).matches("\\d+m \\d{2}s|\\d+s");
            assertThat(rowText(live + " td.epoch")).matches("\\d+");
            assertThat(((JavascriptExecutor) driver).executeScript("return window.cockpitMarker;"))
                    .as("the claim arrived through the live feed, not a reload").isEqualTo("same page");
            waitText("#claims-page-info", "of 11"); // the page's counts follow
            waitText("#stat-claims", "11");
            screenshot("cockpit-claims.png");

            WebElement filter = driver.findElement(By.id("filter-claims"));
            filter.sendKeys("late-comer");
            new WebDriverWait(driver, LIVE).until(d -> d.findElements(By.cssSelector("#claims-rows tr[data-task]")).size() == 1);
            waitText("#claims-page-info", "1–1 of 1 matching");
            assertThat(driver.findElements(By.cssSelector("#claims-rows tr[data-task]"))).hasSize(1);
            filter.clear();
            filter.sendKeys(" ");
            new WebDriverWait(driver, LIVE).until(d -> d.findElements(By.cssSelector("#claims-rows tr[data-task]")).size() > 1);

            driver.get("http://127.0.0.1:" + hub.port + "/ui/#presence");
            row("#presence-rows tr[data-agent='fleet/late-comer']");
            screenshot("cockpit-presence.png");
            tab("board");
            row("#board-columns .column[data-status='in_progress'] .card");
            screenshot("cockpit-board.png");
            tab("denials");
            row("#denials-rows tr");
            assertThat(text("#denials-rows")).contains("SCOPE_CONFLICT");
            screenshot("cockpit-denials.png");
            tab("messaging");
            row("#dead-rows tr[data-target]");
            screenshot("cockpit-messaging.png");
            tab("feed");
            row("#feed-rows li[data-kind='claim']");
            screenshot("cockpit-feed.png");

            // a persistent capability card appears live, and its removal drops it from the open page
            tab("cards");
            HubClient seat = hub.agent("review/seat");
            ObjectNode ad = seat.frame("advertise");
            ad.put("description", "reviews parser changes").put("model", "review-model").put("persist", true);
            ad.putArray("skills").add("review").add("parsers");
            seat.send(ad);
            seat.awaitType("capability_advertised", WAIT);
            assertThat(rowText("#cards-rows tr[data-agent='review/seat']")).contains("reviews parser changes")
                    .contains("review, parsers");
            screenshot("cockpit-cards.png");
            seat.send(seat.frame("card_remove"));
            assertThat(seat.awaitType("card_removed", WAIT).path("removed_persistent").asBoolean()).isTrue();
            new WebDriverWait(driver, LIVE).until(ExpectedConditions.invisibilityOfElementLocated(
                    By.cssSelector("#cards-rows tr[data-agent='review/seat']")));
            assertThat(((JavascriptExecutor) driver).executeScript("return window.cockpitMarker;"))
                    .as("the removal came through the live feed, not a reload").isEqualTo("same page");

            assertThat(consoleErrors(false)).as("console errors").isEmpty();
        }
    }

    @Test
    void aTokenHubShowsNothingWithoutItsToken() throws Exception {
        try (TestHub hub = hub(HubConfig.builder().token("cockpit-sekrit"))) {
            HubClient agent = hub.connect();
            agent.register("team/secure", "cockpit-sekrit", WAIT);
            claim(agent, "secret/task", "repo", "src");
            driver.get("http://127.0.0.1:" + hub.port + "/ui/#claims");
            new WebDriverWait(driver, LIVE).until(ExpectedConditions.visibilityOfElementLocated(By.id("auth-form")));
            assertThat(driver.findElements(By.cssSelector("#claims-rows tr[data-task]"))).isEmpty();
            assertThat(driver.getPageSource()).doesNotContain("secret/task");
            screenshot("cockpit-token.png");

            driver.findElement(By.id("auth-token")).sendKeys("wrong");
            driver.findElement(By.id("auth-submit")).click();
            waitText("#auth-message", "refused");
            assertThat(driver.getPageSource()).doesNotContain("secret/task");

            WebElement input = driver.findElement(By.id("auth-token"));
            input.clear();
            input.sendKeys("cockpit-sekrit");
            driver.findElement(By.id("auth-submit")).click();
            row("#claims-rows tr[data-task='secret/task']");
            assertThat(driver.getCurrentUrl()).doesNotContain("sekrit");
            waitText("#live", "live");
            claim(agent, "secret/second", "repo", "docs");
            row("#claims-rows tr[data-task='secret/second']");
            // the refusals themselves are logged by the browser as failed loads; nothing else may be
            // the browser logs each refused load (so the log is being read); nothing else may be there
            assertThat(consoleErrors(false)).as("console errors other than the expected 401s")
                    .isNotEmpty().allMatch(e -> e.contains("401"));
            ((JavascriptExecutor) driver).executeScript("sessionStorage.clear();");
        }
    }

    private static void claim(HubClient agent, String task, String worktree, String path) throws Exception {
        ObjectNode claim = agent.frame("claim");
        claim.put("task_id", task).put("worktree", worktree).put("ttl_seconds", 900.0);
        claim.putArray("paths").add(path);
        agent.send(claim);
        agent.await(f -> "claim_granted".equals(f.path("type").asText()) && task.equals(f.path("task_id").asText()), WAIT);
    }

    private static void tab(String view) {
        driver.findElement(By.cssSelector("#tabs a[data-view='" + view + "']")).click();
        new WebDriverWait(driver, LIVE).until(ExpectedConditions.visibilityOfElementLocated(By.id("view-" + view)));
    }

    private static WebElement row(String css) {
        return new WebDriverWait(driver, LIVE).until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(css)));
    }

    /**
     * The text of a visible element, read afresh: a virtualised list redraws its rows as live
     * updates arrive, so an element found a moment ago may be gone (stale) by the time it is read.
     */
    private static String rowText(String css) {
        return new WebDriverWait(driver, LIVE).ignoring(StaleElementReferenceException.class).until(d -> {
            WebElement e = d.findElement(By.cssSelector(css));
            return e.isDisplayed() ? e.getText() : null;
        });
    }

    private static String text(String css) {
        return driver.findElement(By.cssSelector(css)).getText();
    }

    private static void waitText(String css, String part) {
        new WebDriverWait(driver, LIVE).until(ExpectedConditions.textToBePresentInElementLocated(By.cssSelector(css), part));
    }

    /** SEVERE browser log entries since the last call (the log is drained by reading it). */
    private static List<String> consoleErrors(boolean discard) {
        List<String> severe = driver.manage().logs().get(LogType.BROWSER).getAll().stream()
                .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue())
                .map(LogEntry::toString)
                .toList();
        return discard ? List.of() : severe;
    }

    private static void screenshot(String name) throws Exception {
        File shot = ((org.openqa.selenium.TakesScreenshot) driver).getScreenshotAs(OutputType.FILE);
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
