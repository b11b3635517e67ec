package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.synapsehub.client.tls.TestCertificates;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The cockpit's Cluster view in a real headless Chromium against real hubs started from the
 * command line in this JVM, on 127.0.0.1: a federated pair (hub-a watches hub-b's log over
 * mutual TLS) and a three-node mesh. Every change the test makes reaches the open page through
 * the live stream, never a reload (a marker set in the page survives).
 */
class CockpitClusterBrowserTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static Chromium browser;
    private final List<LoopbackHub> hubs = new ArrayList<>();

    @TempDir
    Path dir;

    @BeforeAll
    static void open() {
        browser = new Chromium();
    }

    @AfterAll
    static void quit() {
        if (browser != null) {
            browser.close();
        }
    }

    @AfterEach
    void stop() throws Exception {
        // the browser is shared: leave this test's page before its hubs stop, or its event stream's
        // reconnects to a closed port land in the next test's console log
        browser.driver.get("about:blank");
        for (LoopbackHub h : hubs) {
            h.close();
        }
    }

    private LoopbackHub hub() {
        LoopbackHub h = new LoopbackHub();
        hubs.add(h);
        return h;
    }

    @Test
    void aFederatedHubShowsItsPeerLiveWithObservedClaimsPartitionsAndAnOutage() throws Exception {
        // hub-b serves its log to hub-a (mutual TLS, a serving policy granting the proj and lab namespaces)
        TestCertificates.Identity server = TestCertificates.selfSigned("hub-b");
        TestCertificates.Authority ca = TestCertificates.authority("fed-client-ca");
        TestCertificates.Identity client = ca.issue("hub-a");
        ca.writeCertificate(dir, "client-ca");
        server.write(dir, "server");
        client.write(dir, "client");
        TestCertificates.writePrivate(dir.resolve("federation.json"), "{\"version\":1,\"records\":[{\"domain_id\":"
                + "\"a.example\",\"namespaces\":[\"proj\",\"lab\"],\"certificate_pins\":[\"" + client.pin().text()
                + "\"],\"signing_key_ids\":[\"hub-a:2026\"],\"scope_grants\":[],\"expires_at\":null,\"revoked\":false,"
                + "\"provenance\":{\"source\":\"t\",\"imported_at\":1.0,\"confirmed_by\":\"alice\"}}]}");
        TestCertificates.writePrivate(dir.resolve("serving-policy.json"), "{\"version\":1,\"federation_store\":"
                + "\"federation.json\",\"client_ca_file\":\"client-ca.pem\",\"grants\":["
                + ""
                + "{\"sender\":\"hub-a\",\"domain_id\":\"a.example\",\"namespace\":\"proj\",\"signing_key_id\":\"hub-a:2026\"}]}");
        LoopbackHub b = hub();
        int portB = b.start("--port", "0", "--db", dir.resolve("b.db").toString(), "--hub-id", "hub-b",
                "--tls-certfile", dir.resolve("server.pem").toString(), "--tls-keyfile", dir.resolve("server.key").toString(),
                "--multihub-serving-policy", dir.resolve("serving-policy.json").toString()).port();
        String urlB = "wss://127.0.0.1:" + portB;
        String pin = server.pin().text();
        claimOn(urlB, pin, "proj/b1", "T-first");

        // hub-a owns lab, hub-b owns proj; hub-a follows hub-b's log every second and serves the cockpit
        LoopbackHub a = hub();
        int portA = a.start("--port", "0", "--hub-id", "hub-a", "--ui",
                "--namespace-owner", "proj=hub-b", "--namespace-owner", "lab=hub-a",
                "--multihub-watch", "hub-b=" + urlB, "--multihub-watch-pin", "hub-b=" + pin,
                "--multihub-client-certfile", dir.resolve("client.pem").toString(),
                "--multihub-client-keyfile", dir.resolve("client.key").toString(),
                "--multihub-watch-interval", "1").port();

        browser.consoleErrors(); // start from a clean log
        browser.driver.get("http://127.0.0.1:" + portA + "/ui/#cluster");
        browser.visible("#tab-cluster");
        browser.visible("#peer-rows tr[data-peer='hub-b']");
        browser.waitText("#peer-rows tr[data-peer='hub-b'] td.reachable", "yes");
        browser.visible("#observed-rows tr[data-task='T-first']");
        browser.waitText("#live", "live");
        assertThat(browser.text("#observed-rows tr[data-task='T-first']")).contains("hub-b").contains("proj/b1");
        assertThat(browser.text("#partitions")).contains("No partition");
        browser.script("window.cockpitMarker = 'same page';");

        // a new claim on hub-b arrives through the stream: the cursor moves and the row appears
        claimOn(urlB, pin, "proj/b2", "T-live");
        browser.visible("#observed-rows tr[data-task='T-live']");
        // hub-b asserting a claim in lab, which hub-a owns, is a partition
        claimOn(urlB, pin, "lab/intruder", "T-contested");
        browser.waitText("#peer-rows tr[data-peer='hub-b']", "contests lab");
        browser.waitText("#partitions", "lab (contested by hub-b)");
        browser.screenshot("cockpit-federation.png");

        // the filter runs on the hub: one row, the page's count says so
        browser.driver.findElement(By.id("filter-cluster")).sendKeys("intruder");
        new WebDriverWait(browser.driver, Chromium.LIVE).until(d ->
                d.findElements(By.cssSelector("#observed-rows tr[data-task]")).size() == 1);
        browser.waitText("#observed-page-info", "1–1 of 1 matching (3 in all)");

        // hub-b goes away: the next poll fails and the page says so, without a reload
        b.close();
        browser.waitText("#peer-rows tr[data-peer='hub-b'] td.reachable", "no");
        assertThat(browser.text("#peer-rows tr[data-peer='hub-b'] td.error")).isNotBlank().isNotEqualTo("–");
        assertThat(browser.script("return window.cockpitMarker;")).as("live updates, not a reload").isEqualTo("same page");
        assertThat(browser.consoleErrors()).as("console errors").isEmpty();
    }

    @Test
    void aMeshNodeServesTheCockpitWithLeaderTermLagAndStalenessAndStreamsOtherNodesDecisions() throws Exception {
        String peers = "n1=127.0.0.1:" + freePort() + ",n2=127.0.0.1:" + freePort() + ",n3=127.0.0.1:" + freePort();
        List<Thread> starts = new ArrayList<>();
        List<Exception> failures = new CopyOnWriteArrayList<>();
        List<LoopbackHub> nodes = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            LoopbackHub node = hub();
            nodes.add(node);
            String id = "n" + i;
            // each node waits to catch up with a leader before it serves: start them together
            Thread t = new Thread(() -> {
                try {
                    node.start("--port", "0", "--db", dir.resolve(id + ".db").toString(), "--mesh-id", id,
                            "--mesh-peers", peers, "--mesh-bootstrap", "--ui");
                } catch (Exception e) {
                    failures.add(e);
                }
            });
            t.start();
            starts.add(t);
        }
        for (Thread t : starts) {
            t.join();
        }
        assertThat(failures).isEmpty();
        // a follower that knows its leader: what it shows of claims it did not decide came by replication
        int follower = -1;
        int other = -1;
        long deadline = System.nanoTime() + Chromium.LIVE.toNanos();
        while (follower < 0 && System.nanoTime() < deadline) {
            for (int i = 0; i < 3; i++) {
                JsonNode mesh = cluster(nodes.get(i).url()).path("panels").get(0);
                if ("FOLLOWER".equals(mesh.path("role").asText()) && !mesh.path("leader").isNull()) {
                    follower = i;
                    other = (i + 1) % 3;
                    break;
                }
            }
            Thread.sleep(100); // polling the nodes' roles only, until the election has settled
        }
        assertThat(follower).as("a follower with a known leader").isNotNegative();
        String page = nodes.get(follower).url().replace("ws://", "http://") + "/ui/";

        browser.consoleErrors();
        browser.driver.get(page + "#cluster");
        browser.visible("#mesh-panel");
        browser.waitText("#mesh-node", "n" + (follower + 1) + " (follower)");
        assertThat(browser.text("#mesh-leader")).matches("n[123]");
        assertThat(Long.parseLong(browser.text("#mesh-term"))).isPositive();
        assertThat(browser.driver.findElements(By.cssSelector("#mesh-rows tr[data-node]"))).hasSize(3);
        assertThat(browser.text("#mesh-rows tr[data-node='n" + (follower + 1) + "'] td.lag")).matches("\\d+");
        assertThat(browser.text("#mesh-queue")).isEqualTo("0");
        browser.visible("#staleness");
        browser.waitText("#staleness", "node-local replica");
        browser.waitText("#live", "live");
        browser.script("window.cockpitMarker = 'same page';");

        long commitBefore = Long.parseLong(browser.text("#mesh-commit"));
        // a claim made through another node is decided by the leader and reaches this follower's page live
        CliTest.Run granted = CliTest.run("claim", "T-mesh", "--url", nodes.get(other).url(), "--name", "team/ana",
                "--path", "src/mesh", "--timeout", "20");
        assertThat(granted.code()).as(granted.err()).isEqualTo(ExitCodes.OK);
        browser.driver.findElement(By.cssSelector("#tabs a[data-view='claims']")).click();
        browser.visible("#claims-rows tr[data-task='T-mesh']");
        assertThat(browser.text("#claims-rows tr[data-task='T-mesh']")).contains("team/ana");
        browser.driver.findElement(By.cssSelector("#tabs a[data-view='feed']")).click();
        browser.visible("#feed-rows li[data-kind='claim']");
        browser.driver.findElement(By.cssSelector("#tabs a[data-view='cluster']")).click();
        new WebDriverWait(browser.driver, Chromium.LIVE).until(d -> Long.parseLong(browser.text("#mesh-commit"))
                > commitBefore);
        browser.screenshot("cockpit-mesh.png");
        assertThat(browser.script("return window.cockpitMarker;")).as("live updates, not a reload").isEqualTo("same page");
        assertThat(browser.consoleErrors()).as("console errors").isEmpty();
    }

    private static void claimOn(String url, String pin, String name, String task) {
        CliTest.Run run = CliTest.run("claim", task, "--url", url, "--pin", pin, "--name", name, "--path", "src/" + task,
                "--timeout", "20");
        assertThat(run.code()).as(run.out() + run.err()).isEqualTo(ExitCodes.OK);
    }

    private static JsonNode cluster(String wsUrl) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create(wsUrl.replace("ws://", "http://") + "/ui/api/cluster"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    private static int freePort() throws IOException {
        return HubProcess.freePort(); // below the ephemeral range: no outgoing socket takes it meanwhile
    }
}
