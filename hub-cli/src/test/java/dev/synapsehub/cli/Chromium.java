package dev.synapsehub.cli;

import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Debian's headless {@code chromium} driven by {@code chromedriver} through Selenium, for the
 * cockpit's browser tests here (the same set-up as hub-net's {@code CockpitBrowserTest}; never
 * skipped: a machine without the browser fails saying what to install). Screenshots go to
 * {@code target/cockpit-screenshots/} and to {@code -Dcockpit.screenshots=DIR} when given.
 */
final class Chromium implements AutoCloseable {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    /** How long a page may take to show what the hub changed (a slow, loaded 2-core machine). */
    static final Duration LIVE = Duration.ofSeconds(30);

    final WebDriver driver;

    Chromium() {
        assertThat(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER))
                .as("the cockpit's browser tests need Debian's chromium and chromium-driver (" + CHROMIUM + ", "
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

    WebElement visible(String css) {
        return new WebDriverWait(driver, LIVE).until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(css)));
    }

    void waitText(String css, String part) {
        new WebDriverWait(driver, LIVE).until(ExpectedConditions.textToBePresentInElementLocated(By.cssSelector(css), part));
    }

    /** The element's text, read in one step in the page (a live view redraws its elements between two driver calls). */
    String text(String css) {
        Object t = ((org.openqa.selenium.JavascriptExecutor) driver).executeScript(
                "const e = document.querySelector(arguments[0]); return e === null ? null : e.innerText;", css);
        assertThat(t).as("an element matching " + css).isNotNull();
        return String.valueOf(t);
    }

    Object script(String js) {
        return ((org.openqa.selenium.JavascriptExecutor) driver).executeScript(js);
    }

    /** SEVERE browser log entries since the last call (reading drains the log). */
    List<String> consoleErrors() {
        return driver.manage().logs().get(LogType.BROWSER).getAll().stream()
                .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue())
                .map(LogEntry::toString)
                .toList();
    }

    void screenshot(String name) throws Exception {
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

    @Override
    public void close() {
        driver.quit();
    }
}
