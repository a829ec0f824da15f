package dev.mcpd.http;

import dev.mcpd.logs.SenderText;
import dev.mcpd.routing.Resume;
import io.netty.buffer.Unpooled;
import io.vertx.core.Context;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.camel.Exchange;
import org.apache.camel.ExchangePattern;
import org.apache.camel.Message;
import org.apache.camel.Processor;
import org.apache.camel.component.platform.http.PlatformHttpEndpoint;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpConsumer;
import org.apache.camel.spi.HeaderFilterStrategy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A platform-http consumer whose exchange is processed on the event loop that took the request, asynchronously: the
 * route runs until a step has to wait (for the body, the disk, an entry's fate), the event loop serves other
 * connections meanwhile, and the route resumes there when the wait is over ({@link Resume}); the answer is written
 * when the exchange completes. platform-http's own consumer hands every exchange to a worker thread and blocks that
 * thread until the route is done (bench/profile.sh: the hand-offs, not the work, were most of the relay's cost per
 * request), and a stalled sender held one of those threads for as long as it stalled.
 *
 * <p>A consumer not marked {@code onEventLoop} behaves exactly as platform-http's.
 */
final class EventLoopConsumer extends VertxPlatformHttpConsumer {

    private static final Logger LOG = LoggerFactory.getLogger(EventLoopConsumer.class);

    private final boolean onEventLoop;
    private final HeaderFilterStrategy answerHeaders;
    private final Consumer<HttpServerRequest> answered;

    EventLoopConsumer(PlatformHttpEndpoint endpoint, Processor processor, List<Handler<RoutingContext>> handlers,
                      String routerName, boolean onEventLoop,
                      Consumer<HttpServerRequest> answered) {
        super(endpoint, processor, handlers, routerName);
        this.onEventLoop = onEventLoop;
        this.answerHeaders = endpoint.getHeaderFilterStrategy();
        this.answered = answered;
    }

    @Override
    protected void handleRequest(RoutingContext ctx) {
        if (!onEventLoop) {
            super.handleRequest(ctx);
            return;
        }
        if (isSuspended()) {
            ctx.response().setStatusCode(503).end();
            return;
        }
        Context loop = ctx.vertx().getOrCreateContext();
        Exchange exchange = createExchange(false);
        exchange.setPattern(ExchangePattern.InOut);
        processHttpRequest(exchange, ctx).onComplete(read -> {
            if (read.failed()) {
                fail(ctx, exchange, read.cause());
                return;
            }
            try {
                createUoW(exchange);
            } catch (Exception e) {
                fail(ctx, exchange, e);
                return;
            }
            getAsyncProcessor().process(exchange, doneSync -> {
                if (Context.isOnEventLoopThread() && Vertx.currentContext() == loop) {
                    answer(ctx, exchange);
                } else {
                    loop.runOnContext(unused -> answer(ctx, exchange));
                }
            });
        });
    }

    private void answer(RoutingContext ctx, Exchange exchange) {
        try {
            write(ctx.response(), exchange);
            answered.accept(ctx.request());
        } catch (RuntimeException e) {
            LOG.error("could not write the answer to {} {}", ctx.request().method(), SenderText.quote(ctx.request()
                    .path()), e);
            if (!ctx.response().ended()) {
                ctx.response().reset();
            }
        } finally {
            doneUoW(exchange);
            releaseExchange(exchange, false);
        }
    }

    private void fail(RoutingContext ctx, Exchange exchange, Throwable failure) {
        getExceptionHandler().handleException("Failed handling platform-http endpoint " + getEndpoint().getPath(),
                failure);
        ctx.fail(failure);
        releaseExchange(exchange, false);
    }

    /**
     * The message as the answer: its status ({@code CamelHttpResponseCode}, else 200), the headers the endpoint's
     * header filter lets out, and its body — what platform-http writes, for the body types mcpd's steps set. A failure
     * no step handled is a 500 without its story ({@code muteException}).
     */
    private void write(HttpServerResponse response, Exchange exchange) {
        if (response.ended() || response.closed()) {
            return; // answered already (a refusal at the front door), or the sender is gone
        }
        Message message = exchange.getMessage();
        if (exchange.getException() != null) {
            response.setStatusCode(500).putHeader("Content-Type", Answers.TEXT).end();
            return;
        }
        Integer status = message.getHeader(Exchange.HTTP_RESPONSE_CODE, Integer.class);
        response.setStatusCode(status == null ? 200 : status);
        for (Map.Entry<String, Object> header : message.getHeaders().entrySet()) {
            Object value = header.getValue();
            if (value != null && (answerHeaders == null
                    || !answerHeaders.applyFilterToCamelHeaders(header.getKey(), value, exchange))) {
                response.putHeader(header.getKey(), value.toString());
            }
        }
        Object body = message.getBody();
        if (body == null) {
            response.end();
        } else if (body instanceof ByteBuffer bytes) {
            response.end(Buffer.buffer(Unpooled.wrappedBuffer(bytes)));
        } else if (body instanceof byte[] bytes) {
            response.end(Buffer.buffer(bytes));
        } else if (body instanceof Buffer buffer) {
            response.end(buffer);
        } else {
            response.end(message.getBody(String.class));
        }
    }
}
