package dev.mcpd.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.http.EventLoopEngine;
import java.nio.file.Path;
import java.util.List;
import org.apache.camel.CamelContext;
import org.apache.camel.Route;
import org.apache.camel.component.platform.http.DefaultPlatformHttpConsumer;
import org.apache.camel.component.platform.http.PlatformHttpComponent;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpRouter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the relay's port relies on in platform-http and Vert.x beyond what their documentation promises, checked on a
 * running relay. Each check names what it pins, for whoever upgrades Camel or Vert.x (docs/development.md, "Upgrading
 * Camel or Vert.x"): the compiler catches a method that is gone, these catch a hook that is still there but no
 * longer called.
 */
class FrameworkPinsTest {

    private static final String SEE = " — see docs/development.md, \"Upgrading Camel or Vert.x\"";

    @TempDir
    static Path dir;

    private static RunningRelay relay;
    private static CamelContext camel;

    @BeforeAll
    static void start() {
        relay = RunningRelay.start(dir);
        camel = relay.application().camel();
    }

    @AfterAll
    static void stop() {
        relay.close();
    }

    @Test
    void platformHttpRegistersItsRouterUnderTheNameItsPortGivesAndServesOnTheVertxMcpdBinds() {
        // ServingGate looks the router up by camel.server.port (0 here) to add the port's first and last routes.
        VertxPlatformHttpRouter router = VertxPlatformHttpRouter.lookup(camel,
                VertxPlatformHttpRouter.getRouterNameFromPort(0));
        assertNotNull(router, "VertxPlatformHttpRouter.lookup(context, getRouterNameFromPort(camel.server.port)) found"
                + " no router: ServingGate cannot add the port's first and last routes" + SEE);
        assertEquals("ListenerVertx", router.vertx().getClass().getSimpleName(), "platform-http no longer serves on"
                + " the Vert.x bound as \"vertx\" in the registry: the front door, the idle timeout, the extra"
                + " listening loops and the \"starting\" answer are gone" + SEE);
    }

    @Test
    void everyPlatformHttpConsumerComesFromTheEngineMcpdBinds() {
        assertInstanceOf(EventLoopEngine.class, camel.getComponent("platform-http", PlatformHttpComponent.class)
                .getEngine(), "platform-http no longer takes the engine bound as \"platform-http-engine\"" + SEE);
        List<String> consumers = camel.getRoutes().stream().map(Route::getConsumer)
                .filter(DefaultPlatformHttpConsumer.class::isInstance)
                .map(consumer -> ((DefaultPlatformHttpConsumer) consumer).getPlatformHttpConsumer().getClass()
                        .getSimpleName()).toList();
        assertFalse(consumers.isEmpty(), "the relay's routes are platform-http routes");
        assertTrue(consumers.stream().allMatch("EventLoopConsumer"::equals), "platform-http made consumers other than"
                + " EventLoopEngine's (it no longer calls VertxPlatformHttpEngine.createConsumer), so the role's"
                + " routes run on worker threads and EventLoopConsumer.handleRequest is never called: " + consumers
                + SEE);
    }

    @Test
    void theListenerBindsThroughMcpdsVertxWhichKnowsThePortTheKernelChose() {
        assertTrue(relay.port() > 0, "platform-http no longer listens through HttpServer.listen(SocketAddress) of"
                + " the server ListenerVertx made, so the port it bound is unknown: " + relay.port() + SEE);
    }
}
